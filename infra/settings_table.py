"""docs/settings.md's tables of the service's settings, rendered from chalicelib/settings.py.

    .venv/bin/python -m infra.settings_table          # print the tables
    .venv/bin/python -m infra.settings_table --write  # rewrite them in docs/settings.md

tests/unit/test_settings.py fails when docs/settings.md holds anything else between the markers.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from chalicelib import settings

SETTINGS_DOC = Path(__file__).resolve().parents[1] / "docs" / "settings.md"
BEGIN = "<!-- the service's settings: generated from chalicelib/settings.py by python -m infra.settings_table -->"
END = "<!-- end of the generated settings -->"
_HEADINGS = {
    settings.USERS: "**For users**: what a newcomer sets.",
    settings.TUNING: "**For tuning**: a deployment's further choices, and the limits of background work.",
    settings.TESTS: "**For tests** only: hooks the tests set on the servers they start.",
    settings.PLATFORM: "**Set by the platform**: read by the service, not set for it.",
}


def _names(spec: settings.Setting) -> str:
    return " / ".join(f"`{name}`" for name in spec.names)


def _default(spec: settings.Setting) -> str:
    shown = "unset" if not spec.default else f"`{spec.default}`"
    return shown + spec.note


def render() -> str:
    """The generated block, markers included."""
    specs = settings.specs().values()
    lines = [BEGIN]
    for category in settings.CATEGORIES:
        lines += ["", _HEADINGS[category], "", "| setting | default | what it does |", "|---|---|---|"]
        lines += [f"| {_names(spec)} | {_default(spec)} | {spec.description} |"
                  for spec in specs if spec.category == category]
    lines += ["", END]
    return "\n".join(lines)


def current(readme: str) -> str:
    """The generated block as docs/settings.md holds it ("" when the markers are missing)."""
    start, end = readme.find(BEGIN), readme.find(END)
    return readme[start:end + len(END)] if 0 <= start < end else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite the tables in docs/settings.md")
    args = parser.parse_args(argv)
    table = render()
    if not args.write:
        print(table)
        return 0
    readme = SETTINGS_DOC.read_text()
    found = current(readme)
    if not found:
        print(f"docs/settings.md has no block between {BEGIN!r} and {END!r}", file=sys.stderr)
        return 1
    SETTINGS_DOC.write_text(readme.replace(found, table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
