"""The README's commands, run as written against a server of the test's own (issue #17: "the
README's commands run verbatim from a fresh clone").

What runs: every fenced ```sh / ```bash block and every ```python block of README.md (fences with
no language, such as the diagram and the layout, are not commands). A shell block runs as one
``bash -e`` script, a Python block as ``python -`` (the venv's interpreter), both with the
repository as working directory and no AWS settings from the caller's environment (no ``AWS_*``
variables, no ``~/.aws`` files): what a block needs, it must say itself.

What stands in for what, and nothing else is changed:

- ``make run`` is this module's server: ``python -m infra.local.run`` (what the target runs once
  installed) started by ``MakeRun`` of tests/integration/test_make_run.py, on free ports with a
  data directory under the test's tmp path. The URL ``http://127.0.0.1:8000`` in a block becomes
  that server's URL, and ``/tmp/...`` a folder under the tmp path.
- ``make`` in a block is a shell function: ``make run`` and every target that installs or runs
  something long (test, lint, bench, package, clean...) is only checked with ``make -n`` (the
  target exists and its recipe expands); ``make identities`` and ``make pipelines``, which run one
  command, run for real with their install prerequisites taken as up to date (``make -o install
  -o .venv/.installed ...``), so nothing is ever installed. ``DDB_PORT`` and
  ``GLUE_LOCAL_DATA_DIR`` are the server's, as in the shell that ran ``make run``.

Markers: an HTML comment on the line right before a block's fence.

- ``<!-- readme-test: skip: REASON -->``: never run (deploying to AWS; DataHub, a manual check).
- ``<!-- readme-test: slow -->``: run by ``test_readme_slow_blocks`` (marked slow: it starts Spark),
  in the README's order, one after the other (the Spark snippet reads what the pipeline block
  registered).

Quoted output is checked too: in a shell block, a comment line starting with ``#   `` (three
spaces) is what the command before it prints; in a Python block, a comment after a ``print(``
call, on its line or alone on the next. ``...`` in it stands for anything.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

from infra.local.stack import REPO
from tests.integration.test_make_run import _CALLERS_SETTINGS, MakeRun

README = REPO / "README.md"
README_URL = "http://127.0.0.1:8000"
_FENCE = re.compile(r"^```(\w*)\s*$")
_MARKER = re.compile(r"^<!--\s*readme-test:\s*(skip|slow)\b:?\s*(.*?)\s*-->\s*$")
# The make targets that only run one command: run for real, their installs taken as done.
_RUN_TARGETS = ("identities", "pipelines")
_UP_TO_DATE = ("install", ".venv/.installed", ".venv/.pipelines-installed", "infra/local/node_modules/.installed")


@dataclass(frozen=True)
class Block:
    line: int        # the line of the opening fence (1-based)
    language: str    # sh, bash or python
    marker: str      # "", "skip" or "slow"
    text: str

    @property
    def id(self) -> str:
        return f"README.md:{self.line}:{self.language}"


def readme_blocks(text: str) -> list[Block]:
    """Every ```sh, ```bash and ```python block, with the marker on the line before its fence."""
    blocks: list[Block] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        language, start = opening.group(1), index
        end = start + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        marker = _MARKER.match(lines[start - 1]) if start else None
        if language in ("sh", "bash", "python"):
            blocks.append(Block(start + 1, language, marker.group(1) if marker else "",
                                "\n".join(lines[start + 1:end]) + "\n"))
        index = end + 1
    return blocks


def expected_output(block: Block) -> list[str]:
    """The output the block quotes (see the module docstring)."""
    if block.language != "python":
        return [line[1:].strip() for line in block.text.splitlines() if line.startswith("#   ")]
    found: list[str] = []
    lines = block.text.splitlines()
    for token in tokenize.generate_tokens(io.StringIO(block.text).readline):
        if token.type != tokenize.COMMENT:
            continue
        row = token.start[0] - 1
        this, previous = lines[row], lines[row - 1] if row else ""
        alone = this.lstrip().startswith("#")
        if this.lstrip().startswith("print(") or (alone and previous.lstrip().startswith("print(")):
            found.append(token.string[1:].strip())
    return found


def assert_printed(output: str, expected: str, block: Block) -> None:
    """Each ``...``-separated piece of ``expected`` appears in ``output``, in that order."""
    position = 0
    for piece in (p.strip() for p in expected.split("...")):
        if not piece:
            continue
        found = output.find(piece, position)
        assert found >= 0, f"{block.id}: the README quotes {expected!r}; the output has no {piece!r}:\n{output}"
        position = found + len(piece)


BLOCKS = readme_blocks(README.read_text())
FAST = [b for b in BLOCKS if not b.marker]
SLOW = [b for b in BLOCKS if b.marker == "slow"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MakeRun]:
    """``make run`` (see the module docstring), for every block of the module."""
    run = MakeRun(tmp_path_factory.mktemp("readme-make-run") / "data")
    try:
        run.wait_ready()
        yield run
    finally:
        run.stop()


def block_env(server: MakeRun, home: Path) -> dict[str, str]:
    """The caller's environment without AWS or catalog settings, as a newcomer's shell is."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("AWS_", "GLUE_", "PAIMON_")) and k not in _CALLERS_SETTINGS}
    env.update(PYTHONUNBUFFERED="1", DDB_PORT=str(server.ddb_port), GLUE_LOCAL_DATA_DIR=str(server.data_dir),
               AWS_CONFIG_FILE=str(home / "no-aws-config"), AWS_SHARED_CREDENTIALS_FILE=str(home / "no-aws-credentials"))
    return env


def _make_function() -> str:
    """The shell function ``make`` the blocks call (see the module docstring)."""
    keep = " ".join(f"-o {target}" for target in _UP_TO_DATE)
    return "\n".join([
        "make() {",
        '  case "$1" in',
        f'    {"|".join(_RUN_TARGETS)}) command make --no-print-directory {keep} "$@" ;;',
        '    *) command make -n "$@" > /dev/null ;;',
        "  esac",
        "}",
    ]) + "\n"


def run_block(block: Block, server: MakeRun, workdir: Path) -> str:
    """Run one block as the module docstring says; its stdout and stderr, merged."""
    text = block.text.replace(README_URL, f"http://127.0.0.1:{server.port}").replace("/tmp/", f"{workdir}/")
    env = block_env(server, workdir)
    if block.language == "python":
        command, stdin = [sys.executable, "-"], text
    else:
        if re.search(r"^\s*aws\s", text, re.M) and shutil.which("aws") is None:
            pytest.skip(f"{block.id} uses the AWS CLI, a prerequisite the README names, and there is none on PATH")
        command, stdin = ["bash", "-e", "-o", "pipefail", "-s"], "set -e\n" + _make_function() + text
    result = subprocess.run(command, input=stdin, cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"{block.id} failed (exit {result.returncode}):\n{block.text}\n--- output:\n{output}"
    for expected in expected_output(block):
        assert_printed(output, expected, block)
    return output


def test_the_readme_has_blocks_of_each_kind() -> None:
    """The extraction itself: shell and Python blocks are found, the deploy block is skipped."""
    languages = {b.language for b in FAST}
    assert {"sh", "python"} <= languages
    assert any("chalice deploy" in b.text for b in BLOCKS if b.marker == "skip")
    assert SLOW and any("python -m pipelines" in b.text for b in SLOW)
    assert all(expected_output(b) for b in BLOCKS if b.language == "python" and not b.marker)


def test_the_readme_starts_with_the_point() -> None:
    """Issue #53: what it is, the two commands and a short boto3 example come first: the first
    Python example opens within the README's first 60 lines and is at most a dozen lines long."""
    first = next(b for b in BLOCKS if b.language == "python")
    assert first.line <= 60, f"the README's first example opens at line {first.line}"
    assert len(first.text.splitlines()) <= 12 and "boto3.client(" in first.text
    commands = next(b for b in BLOCKS if b.language == "sh")
    assert commands.line < first.line and "make run" in commands.text and "make test" in commands.text


def test_the_engine_lines_that_install_here_are_run() -> None:
    """The engine section's blocks for clients the dev venv has (the AWS CLI with a profile, Daft)
    are ordinary blocks, so test_readme_block runs them; DataHub's is a documented manual check."""
    engines = README.read_text().split("## Point your engine at it\n", 1)[1].split("\n## ", 1)[0]
    runs = [b for b in FAST if b.text in engines]
    assert any("--profile catalog" in b.text for b in runs)
    assert any("Catalog.from_glue" in b.text for b in runs)
    assert any("datahub ingest" in b.text for b in BLOCKS if b.marker == "skip")


@pytest.mark.parametrize("block", FAST, ids=[b.id for b in FAST])
def test_readme_block(block: Block, server: MakeRun, tmp_path: Path) -> None:
    run_block(block, server, tmp_path)


@pytest.mark.slow
def test_readme_slow_blocks(server: MakeRun, tmp_path: Path) -> None:
    """The pipeline commands (Spark starts for stats and read), then the Spark snippet."""
    for block in SLOW:
        run_block(block, server, tmp_path)
