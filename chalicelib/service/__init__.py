"""The catalog core: protocol-free catalog rules (databases, tables and versions, partitions and
their indexes, column statistics, table search, transactions and their commit protocol, snapshot
views, governed tables' objects, and the Paimon catalog's schemas and snapshots).

Protocol adapters (``chalicelib.protocol``: one package per protocol, ``glue``,
``lakeformation``, ``paimon``) decode and validate a request, call this layer with plain Python
values and shape its answer for the wire. This layer imports only ``chalicelib.domain`` and
``chalicelib.store`` (plus the shared modules: ``errors``, ``context``, ``clock``, ``settings``...),
never ``protocol``; it
returns plain values and raises the catalog's error classes from ``chalicelib.errors``.
"""
