"""The catalog core: protocol-free catalog rules (transactions and their commit protocol,
snapshot views, transactional table definitions, partition reads and writes).

Protocol adapters (``chalicelib.protocol``, ``chalicelib.actions``) decode and validate a
request, call this layer with plain Python values and shape its answer for the wire. This layer
imports only ``chalicelib.domain`` and ``chalicelib.store`` (plus the shared ``errors``,
``context``, ``clock`` and ``faults`` modules), never ``protocol`` or ``actions`` (two helpers
still imported from actions/ are listed in pyproject.toml's layers contract, TODO #12); it
returns plain values and raises the catalog's error classes from ``chalicelib.errors``.
"""
