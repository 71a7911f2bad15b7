"""pyiceberg's own catalog suite (vendored test_catalog.py) against this service's Iceberg REST endpoint.

Upstream runs ``tests/integration/test_catalog.py`` against any REST catalog: its
``rest_test_catalog`` fixture calls ``load_catalog(os.environ["PYICEBERG_TEST_CATALOG"])`` and the
tests read capability flags from the catalog's properties (``does_support_*`` in fixtures.py).
This conftest is the entry: it starts the session's service (tests/conftest.py ``endpoint``),
writes a ``.pyiceberg.yaml`` for a catalog configured as for AWS Glue's Iceberg endpoint (SigV4 for
``glue``, ``warehouse`` = an account of the suite's own) with Glue's capabilities, points
``PYICEBERG_HOME`` and ``PYICEBERG_TEST_CATALOG`` at it, and marks what cannot pass against Glue's
shape (``GLUE_SHAPE``), each with its reason.

The flags go in a file, not in ``PYICEBERG_CATALOG__<NAME>__<PROP>`` variables: pyiceberg turns
every ``_`` of a variable's name into ``-``, so ``supports_nested_namespaces`` cannot be spelled
as one.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

import pytest

from infra.local.stack import REGION
from tests.integration.conftest import random_account
from tests.upstream.pyiceberg.fixtures import (  # noqa: F401 - fixtures the vendored tests request
    database_list,
    database_name,
    table_list,
    table_name,
    table_schema_nested,
    table_schema_simple,
    test_partition_spec,
    test_schema,
    test_sort_order,
)

CATALOG_NAME = "glue_rest"

# The catalog's capabilities, as the vendored does_support_* read them (strings: pyiceberg's
# property_as_bool). Glue's namespaces are single-level databases; the rest this catalog serves.
CAPABILITIES = {
    "supports_nested_namespaces": "false",
    "supports_purge_table": "true",
    "supports_atomic_concurrent_updates": "true",
    "supports_schema_evolution": "true",
    "supports_slash_in_identifier": "true",
    "supports_dot_in_identifier": "true",
}

# Tests that cannot pass against Glue's shape: name -> why (strict xfail: one that starts passing
# fails the run, so the list stays true).
GLUE_SHAPE: dict[str, str] = {}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "integration: pyiceberg's mark for tests that need a running catalog")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).parent != here:
            continue
        reason = GLUE_SHAPE.get(getattr(item, "originalname", item.name))
        if reason:
            item.add_marker(pytest.mark.xfail(reason=reason, strict=True))


def _yaml(properties: dict[str, str]) -> str:
    """A .pyiceberg.yaml of one catalog (pyiceberg reads it with strictyaml: block style, quoted)."""
    lines = ["catalog:", f"  {CATALOG_NAME}:"]
    lines += [f'    {key}: "{value}"' for key, value in properties.items()]
    return "\n".join(lines) + "\n"


# Module scope: the vendored suite is one module, and the environment is put back right after it.
@pytest.fixture(scope="module", autouse=True)
def pyiceberg_test_catalog(endpoint: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """PYICEBERG_TEST_CATALOG: a RestCatalog on this service, in an account of the suite's own (the
    upstream clean_up drops every namespace its tests made there)."""
    import pyiceberg.catalog as catalog_module
    from pyiceberg.utils.config import Config

    account = random_account()
    home = tmp_path_factory.mktemp("pyiceberg-home")
    (home / ".pyiceberg.yaml").write_text(_yaml({
        "uri": f"{endpoint}/iceberg", "warehouse": account, "rest.sigv4-enabled": "true",
        "rest.signing-name": "glue", "rest.signing-region": REGION, "client.access-key-id": account,
        "client.secret-access-key": "testing", "client.region": REGION, **CAPABILITIES}))
    saved = {name: os.environ.get(name) for name in ("PYICEBERG_HOME", "PYICEBERG_TEST_CATALOG")}
    os.environ.update(PYICEBERG_HOME=str(home), PYICEBERG_TEST_CATALOG=CATALOG_NAME)
    before = catalog_module._ENV_CONFIG
    catalog_module._ENV_CONFIG = Config()  # read once at import: again, now that the file is there
    try:
        yield CATALOG_NAME
    finally:
        catalog_module._ENV_CONFIG = before
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
