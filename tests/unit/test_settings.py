"""The service's settings (chalicelib/settings.py): read as the modules read them before they had
one home, documented in docs/settings.md exactly as declared, and the only reader of the environment
in chalicelib."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from chalicelib import settings
from infra import settings_table

REPO = Path(__file__).resolve().parents[2]


def test_the_readme_tables_are_the_declared_settings() -> None:
    """Every setting documented, every documented setting declared, defaults as declared (the
    docs/settings.md's block is the rendering: `python -m infra.settings_table --write` updates it)."""
    block = settings_table.current((REPO / "docs" / "settings.md").read_text())
    assert block, "docs/settings.md lacks the generated settings block"
    documented = set(re.findall(r"^\| `([A-Za-z_]+)`", block, re.M))
    declared = {spec.names[0] for spec in settings.specs().values()}
    assert documented == declared
    assert block == settings_table.render(), "run .venv/bin/python -m infra.settings_table --write"


def test_only_the_settings_module_reads_the_environment() -> None:
    readers = sorted(str(path.relative_to(REPO)) for path in (REPO / "chalicelib").rglob("*.py")
                     if re.search(r"os\.environ|getenv\(", path.read_text()))
    assert readers == ["chalicelib/settings.py"]


def test_a_newcomer_has_few_settings_to_know() -> None:
    users = [name for name, spec in settings.specs().items() if spec.category == settings.USERS]
    assert len(users) <= 8, users
    assert {spec.category for spec in settings.specs().values()} == set(settings.CATEGORIES)


def test_unset_is_the_declared_default() -> None:
    assert settings.from_environ({}) == settings.Settings()
    defaults = settings.Settings()
    assert (defaults.region, defaults.auth, defaults.default_account_id, defaults.table_prefix) == (
        "us-east-1", "open", "123456789012", "glue_catalog_")
    assert (defaults.ddb_endpoint, defaults.paimon_warehouse, defaults.allowed_locations, defaults.proxy) == (
        None, None, "", None)
    assert defaults.partition_digest and defaults.ddb_direct_transport and not defaults.allow_cross_account
    assert (defaults.cleanup_chunk_items, defaults.work_budget_seconds, defaults.lf_idle_seconds) == (1000, 5.0, 900.0)
    assert not defaults.on_lambda


def test_empty_means_unset_where_the_code_read_x_or_default() -> None:
    empty = settings.from_environ({name: "" for spec in settings.specs().values() for name in spec.names
                                   if spec.empty_is_unset})
    assert empty == settings.Settings()
    # Elsewhere an empty value is taken as it is, as os.environ.get(X, default) took it.
    literal = settings.from_environ({"GLUE_TABLE_PREFIX": "", "GLUE_DEFAULT_ACCOUNT_ID": "", "GLUE_PARTITION_DIGEST": "",
                                     "GLUE_DDB_TRANSPORT": "", "GLUE_ALLOW_CROSS_ACCOUNT": ""})
    assert (literal.table_prefix, literal.default_account_id) == ("", "")
    assert literal.partition_digest and literal.ddb_direct_transport and not literal.allow_cross_account
    with pytest.raises(ValueError, match="GLUE_CLEANUP_CHUNK_ITEMS=''"):
        settings.from_environ({"GLUE_CLEANUP_CHUNK_ITEMS": ""})


def test_values_are_parsed_as_the_modules_parsed_them() -> None:
    read = settings.from_environ({
        "AWS_REGION": "", "AWS_DEFAULT_REGION": "eu-west-1", "GLUE_PARTITION_DIGEST": "0",
        "GLUE_DDB_TRANSPORT": "botocore", "GLUE_ALLOW_CROSS_ACCOUNT": "1", "GLUE_CLEANUP_CHUNK_ITEMS": "7",
        "GLUE_WORK_BUDGET_SECONDS": "0.5", "AWS_LAMBDA_FUNCTION_NAME": "glue-catalog", "http_proxy": "http://p:3128",
        "PAIMON_WAREHOUSE": "s3://b/wh/"})
    assert (read.region, read.partition_digest, read.ddb_direct_transport, read.allow_cross_account) == (
        "eu-west-1", False, False, True)
    assert (read.cleanup_chunk_items, read.work_budget_seconds, read.on_lambda, read.proxy) == (
        7, 0.5, True, "http://p:3128")
    assert read.paimon_warehouse == "s3://b/wh/"  # the warehouse strips the slash, as before
    assert settings.from_environ({"AWS_REGION": "us-west-2", "AWS_DEFAULT_REGION": "eu-west-1"}).region == "us-west-2"
    with pytest.raises(ValueError, match="GLUE_LF_IDLE_SECONDS='soon'"):
        settings.from_environ({"GLUE_LF_IDLE_SECONDS": "soon"})


def test_replace_changes_the_settings_inside_the_block_only() -> None:
    before = settings.current()
    with settings.replace(work_budget_seconds=0.0, auth="sigv4") as inside:
        assert settings.current() is inside and inside.work_budget_seconds == 0.0 and inside.auth == "sigv4"
        with settings.replace(auth="open"):
            assert settings.current().auth == "open" and settings.current().work_budget_seconds == 0.0
        assert settings.current() is inside
    assert settings.current() is before
    with pytest.raises(TypeError):
        with settings.replace(no_such_setting=1):
            pass
    assert settings.current() is before
    with pytest.raises(AttributeError, match="frozen"):
        before.auth = "sigv4"


def test_the_configure_fixture_undoes_its_changes(configure) -> None:  # type: ignore[no-untyped-def]
    from chalicelib import work_budget

    configure(work_budget_seconds=0.25)
    assert work_budget.seconds() == 0.25
