"""The import contracts in pyproject.toml hold today, and a deliberate violation breaks them.

`make lint` runs `lint-imports` over the same contracts; these tests prove the contracts have teeth:
each adds one forbidden import to the real import graph (or to a copy of the source, for the CLI)
and expects the contract to fail.
"""

from __future__ import annotations

import copy
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import grimp
import pytest
from importlinter import api  # noqa: F401  (configures import-linter's adapters on import)
from importlinter.application import use_cases
from importlinter.contracts.forbidden import ForbiddenContract
from importlinter.contracts.layers import LayersContract

ROOT = Path(__file__).resolve().parents[2]
CONTRACT_TYPES = {"layers": LayersContract, "forbidden": ForbiddenContract}


@pytest.fixture(scope="module")
def options() -> Any:
    """The user options (session + contracts) read from the repository's pyproject.toml."""
    return use_cases.read_user_options(str(ROOT / "pyproject.toml"))


@pytest.fixture(scope="module")
def graph(options: Any) -> grimp.ImportGraph:
    """chalicelib's import graph, built once for the module (no cache directory written)."""
    return grimp.build_graph(*options.session_options["root_packages"],
                             include_external_packages=options.session_options["include_external_packages"],
                             cache_dir=None)


def check(options: Any, graph: grimp.ImportGraph, contract_id: str,
          extra: tuple[str, str] | None = None) -> bool:
    """Whether the contract ``contract_id`` is kept on ``graph`` plus the ``extra`` import, if any."""
    (contract_options,) = [c for c in options.contracts_options if c["id"] == contract_id]
    contract = CONTRACT_TYPES[contract_options["type"]](
        name=contract_options["name"], session_options=options.session_options,
        contract_options=contract_options)
    graph = copy.deepcopy(graph)
    if extra is not None:
        # A package the change would create (chalicelib/service/ before it lands) gets its node too.
        for module in extra:
            parts = module.split(".")
            for depth in range(1, len(parts) + 1):
                if ".".join(parts[:depth]) not in graph.modules:
                    graph.add_module(".".join(parts[:depth]))
        graph.add_import(importer=extra[0], imported=extra[1], line_number=1, line_contents="import x")
    return contract.check(graph, verbose=False).kept


@pytest.mark.parametrize("contract_id", ["layers", "protocol-shape", "store-only-pynamodb", "adapters-through-service"])
def test_contracts_hold_today(options: Any, graph: grimp.ImportGraph, contract_id: str) -> None:
    assert check(options, graph, contract_id)


@pytest.mark.parametrize("importer, imported", [
    ("chalicelib.domain.planner", "chalicelib.store.partitions"),       # domain knows no store
    ("chalicelib.store.catalog", "chalicelib.protocol.glue.tables"),    # store never reaches up
    ("chalicelib.store.catalog", "chalicelib.protocol.glue.wire"),
    ("chalicelib.service.tables", "chalicelib.protocol.glue.tables"),   # handlers sit above the service
    ("chalicelib.protocol.paimon.wire", "chalicelib.composition"),      # the composition root is the top
    ("chalicelib.store.catalog", "chalicelib.service.transactions"),    # the service sits above the store
    ("chalicelib.errors", "chalicelib.domain.keycodec"),                # shared modules are the bottom
    ("chalicelib.clock", "chalicelib.store.dynamo.retry"),
])
def test_an_upward_import_breaks_the_layers(options: Any, graph: grimp.ImportGraph,
                                            importer: str, imported: str) -> None:
    assert not check(options, graph, "layers", (importer, imported))


@pytest.mark.parametrize("importer, imported", [
    ("chalicelib.protocol.glue.tables", "chalicelib.protocol.paimon.paging"),        # protocols stand apart
    ("chalicelib.protocol.aws_json.wire", "chalicelib.protocol.glue.routes"),        # shared machinery sits below
    ("chalicelib.protocol.sigv4", "chalicelib.protocol.aws_json.wire"),
])
def test_one_protocol_reaching_into_another_breaks_the_protocol_shape(options: Any, graph: grimp.ImportGraph,
                                                                     importer: str, imported: str) -> None:
    assert not check(options, graph, "protocol-shape", (importer, imported))


def test_pynamodb_outside_the_store_breaks_its_contract(options: Any, graph: grimp.ImportGraph) -> None:
    assert not check(options, graph, "store-only-pynamodb", ("chalicelib.protocol.glue.tables", "pynamodb"))
    assert not check(options, graph, "store-only-pynamodb", ("chalicelib.domain.planner", "pynamodb"))


def test_an_adapter_to_store_import_breaks_its_contract(options: Any, graph: grimp.ImportGraph) -> None:
    for adapter in ("chalicelib.protocol.glue.tables", "chalicelib.protocol.lakeformation.transactions",
                    "chalicelib.protocol.paimon.snapshots", "chalicelib.protocol.aws_json.wire"):
        assert not check(options, graph, "adapters-through-service", (adapter, "chalicelib.store.dynamo.fence"))


def test_lint_imports_fails_on_a_violating_source_file(tmp_path: Path) -> None:
    """End to end, as `make lint` runs it: the CLI on a copy of the source with one bad import added."""
    shutil.copytree(ROOT / "chalicelib", tmp_path / "chalicelib",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    # The console script installed beside this interpreter, the one `make lint` calls.
    lint_imports = [str(Path(sys.executable).parent / "lint-imports"), "--no-cache"]

    kept = subprocess.run(lint_imports, cwd=tmp_path, capture_output=True, text=True)
    assert kept.returncode == 0, kept.stdout + kept.stderr

    planner = tmp_path / "chalicelib" / "domain" / "planner.py"
    planner.write_text(planner.read_text() + "\nfrom chalicelib.store import partitions  # noqa: E402,F401\n")
    broken = subprocess.run(lint_imports, cwd=tmp_path, capture_output=True, text=True)
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert "chalicelib.domain.planner -> chalicelib.store.partitions" in broken.stdout
