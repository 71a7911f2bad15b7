"""The docs agree with the code (issue #17): every make target is documented, every setting the
code reads is in docs/settings.md (and the few a newcomer sets in the README's short table), every repository path the docs name exists, and
every benchmark row says whether its target was met, in a short cell that links to the row's history,
and every #anchor a doc links to is a heading there. (The README's commands themselves run in
tests/integration/test_readme_commands.py.)
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from chalicelib import settings

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text()
DOCS = {path.name: path.read_text() for path in sorted((REPO / "docs").glob("*.md"))}
MAKEFILE = (REPO / "Makefile").read_text()

# Read from the environment but not settings of this service: AWS's own (credentials, set by Lambda).
_NOT_SETTINGS = {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_LAMBDA_FUNCTION_NAME"}
_ENV_READ = re.compile(r"""(?:environ\.get|environ\.setdefault|getenv)\(\s*["']([A-Z][A-Z0-9_]+)["']"""
                       r"""|environ\[\s*["']([A-Z][A-Z0-9_]+)["']\s*\]""")


def section(text: str, heading: str) -> str:
    """The text under ``heading`` (a markdown heading line) up to the next heading of any level."""
    start = text.index(heading + "\n") + len(heading) + 1
    following = re.search(r"^#{1,6} ", text[start:], re.M)
    return text[start:start + following.start()] if following else text[start:]


def table_rows(text: str) -> list[list[str]]:
    """The cells of every markdown table row in ``text`` (each table's header and separator left out)."""
    lines = text.splitlines()
    rows: list[list[str]] = []
    for index, line in enumerate(lines):
        if not line.startswith("|"):
            continue
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", line.strip()) or re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", following.strip()):
            continue  # a separator, or the header above one
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def phony_targets() -> list[str]:
    line = next(line for line in MAKEFILE.splitlines() if line.startswith(".PHONY:"))
    return line.split(":", 1)[1].split()


@pytest.mark.parametrize("target", phony_targets())
def test_every_make_target_is_documented(target: str) -> None:
    readme_targets = {re.match(r"`make ([a-z-]+)", row[0]).group(1)  # type: ignore[union-attr]
                      for row in table_rows(section(README, "## Run it")) if row[0].startswith("`make ")}
    assert target in readme_targets, f"make {target} is missing from the README's table of make targets"
    assert re.search(rf"^#\s+make {re.escape(target)}\b", MAKEFILE, re.M), \
        f"make {target} is missing from the Makefile's opening comment"


def settings_read_by_the_code() -> set[str]:
    """The service's settings (chalicelib/settings.py declares them), and the variables the tools
    read themselves."""
    found = {name for spec in settings.specs().values() for name in spec.names}
    for root in ("app.py", "infra", "pipelines"):
        paths = [REPO / root] if root.endswith(".py") else sorted((REPO / root).rglob("*.py"))
        for path in paths:
            for match in _ENV_READ.finditer(path.read_text()):
                found.add(match.group(1) or match.group(2))
    return found - _NOT_SETTINGS


def test_every_setting_is_in_the_settings_table() -> None:
    documented = {name for row in table_rows(DOCS["settings.md"])
                  for name in re.findall(r"`([A-Za-z][A-Za-z0-9_]+)`", row[0])}
    read = settings_read_by_the_code()
    assert {"GLUE_DEFAULT_ACCOUNT_ID", "GLUE_TABLE_PREFIX", "PORT"} <= read  # the scan finds them
    missing = sorted(read - documented)
    assert not missing, f"settings the code reads that docs/settings.md does not list: {missing}"


def test_the_readme_lists_a_newcomer_s_settings_only() -> None:
    """About six, each one documented in docs/settings.md too; the README links there."""
    short = {name for row in table_rows(section(README, "## Quick start"))
             for name in re.findall(r"`([A-Za-z][A-Za-z0-9_]+)`", row[0])}
    full = {name for row in table_rows(DOCS["settings.md"]) for name in re.findall(r"`([A-Za-z][A-Za-z0-9_]+)`", row[0])}
    assert 4 <= len(short) <= 10 and short <= full, short
    assert "](docs/settings.md)" in section(README, "## Quick start")
    assert "<!-- the service's settings" not in README


# Backticked repository paths: under a top-level folder of the repository or a chalicelib package
# (design.md names modules relative to chalicelib/: `service/tables.py`), or a top-level file.
_PATH = re.compile(r"`((?:\.chalice|bench|chalicelib|docs|infra|pipelines|tests|service|store|domain|protocol|actions)"
                   r"/[A-Za-z0-9_./-]*|[A-Za-z0-9_-]+\.(?:py|md|toml|txt)|Makefile)`")
_BASES = ("", "chalicelib/", "chalicelib/domain/", "tests/integration/", "tests/unit/", "pipelines/", "bench/")
_SOURCE_FILES = {path.name for root in ("chalicelib", "infra", "pipelines", "tests", "bench")
                 for path in (REPO / root).rglob("*") if "node_modules" not in path.parts}
# Paths of other projects the docs cite.
_ELSEWHERE = {"tests/test_glue/test_partition_filter.py"}  # moto's


@pytest.mark.parametrize("name", ["README.md", *sorted(DOCS)])
def test_every_path_the_docs_name_exists(name: str) -> None:
    text = README if name == "README.md" else DOCS[name]
    text += "\n" + "\n".join(f"`{target}`" for target in re.findall(r"\]\(([^)#:]+)\)", text))
    base = REPO if name == "README.md" else REPO / "docs"
    missing = []
    for path in sorted(set(_PATH.findall(text))):
        path = path.rstrip(".")
        if "..." in path or "*" in path or "<" in path or path in _ELSEWHERE:
            continue
        if "/" not in path and path in _SOURCE_FILES:
            continue  # a bare file name: somewhere in the sources
        if not any((REPO / prefix / path).exists() or (base / path).exists() for prefix in _BASES):
            missing.append(path)
    assert not missing, f"{name} names paths that do not exist: {missing}"


def test_every_benchmark_row_says_whether_its_target_was_met() -> None:
    rows = table_rows(DOCS["benchmarks.md"])
    assert len(rows) >= 20
    for row in rows:
        assert len(row) == 5, row  # measure, command, figure, target, met?
        measure, _command, figure, target, met = row
        if target == "report":
            assert met == "–", row
        else:
            assert met.startswith(("✓", "✗ missed")), row
        # Readable (issue #53): one figure per cell, a few words of caveat at most; earlier runs,
        # breakdowns and reasons go to docs/benchmark-history.md, which every row links to.
        assert len(figure) <= 24 and len(met) <= 100, row
        assert "](benchmark-history.md#" in measure, f"no link to the row's history: {row}"
    headline = table_rows(section(README, "## Performance"))
    assert headline and all(len(row) == 4 and row[3].startswith(("✓", "✗")) for row in headline)
    missed = [row[0] for row in rows if "✗" in row[4]]
    assert missed, "docs/benchmarks.md flags no missed target; the README's headline table does"
    assert sum("✗" in row[3] for row in headline) >= 1


def github_anchor(heading: str) -> str:
    """The id GitHub gives a heading: lower case, punctuation but ``-`` and ``_`` dropped, spaces as ``-``."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """The ids of every heading in a markdown text (fenced code left out; a repeated heading's ids
    get GitHub's ``-1``, ``-2`` ...)."""
    found: set[str] = set()
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6} ", line):
            base = github_anchor(line.lstrip("#"))
            name, count = base, 0
            while name in found:
                count += 1
                name = f"{base}-{count}"
            found.add(name)
    return found


@pytest.mark.parametrize("name", ["README.md", *sorted(DOCS)])
def test_every_anchor_the_docs_link_to_exists(name: str) -> None:
    """A link to ``#heading`` or ``file.md#heading`` (the README's Performance table into
    docs/benchmarks.md, each benchmark row into docs/benchmark-history.md) names a heading there."""
    text = README if name == "README.md" else DOCS[name]
    base = REPO if name == "README.md" else REPO / "docs"
    missing = []
    for target, anchor in re.findall(r"\]\(([^)#:\s]*)#([^)\s]+)\)", text):
        path = (base / target) if target else None
        if path is not None and (path.suffix != ".md" or not path.exists()):
            continue  # not a markdown file of this repository (the path test names missing ones)
        if anchor not in anchors(path.read_text() if path else text):
            missing.append(f"{target}#{anchor}")
    assert not missing, f"{name} links to headings that do not exist: {missing}"
