"""docs/compatibility.md's compatibility table is generated (infra/compatibility.py) and kept current."""

from __future__ import annotations

import re

import botocore.session
import pytest

from chalicelib.protocol.served import implemented
from infra import compatibility


def test_the_compatibility_page_is_current() -> None:
    readme = compatibility.PAGE.read_text(encoding="utf-8")
    assert compatibility.rewrite(readme, compatibility.render()) == readme, (
        f"docs/compatibility.md's compatibility table is out of date: run {compatibility.COMMAND}")


def test_every_model_operation_appears_once_with_its_status() -> None:
    section = compatibility.render()
    served = set(implemented())
    session = botocore.session.get_session()
    for service, title in compatibility.SERVICES.items():
        part = section.split(f"| {title} operation |")[1].split("</details>")[0]
        rows = dict(re.findall(r"^\| (\w+) \| (served|partly served) \|", part, re.MULTILINE))
        listed = part.split("</summary>")[1].strip().split(", ")
        names = session.get_service_model(service).operation_names
        assert sorted(list(rows) + listed) == sorted(names)
        assert set(rows) == {op for svc, op in served if svc == service}


def test_notes_mark_operations_partly_served() -> None:
    ops = compatibility.operations({("glue", "GetDatabase"): "a  difference\n here"})
    [get_database] = [op for op in ops if op.name == "GetDatabase"]
    assert get_database.status == "partly served"
    assert "| GetDatabase | partly served | a difference here |" in compatibility.render(ops)


@pytest.mark.parametrize("notes, message", [
    ({("glue", "CreateJob"): "x"}, "not served"),
    ({("glue", "NoSuchOperation"): "x"}, "not an operation"),
])
def test_stale_notes_are_refused(notes: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        compatibility.operations(notes)


def test_the_notes_file_names_only_served_operations() -> None:
    compatibility.operations(compatibility.load_notes())  # raises on a stale note


def test_check_mode_reports_a_stale_readme(tmp_path, monkeypatch, capsys) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{compatibility.BEGIN}\nold table\n{compatibility.END}\nrest\n", encoding="utf-8")
    monkeypatch.setattr(compatibility, "PAGE", readme)
    assert compatibility.main(["--check"]) == 1
    assert compatibility.COMMAND in capsys.readouterr().err
    assert compatibility.main([]) == 0
    text = readme.read_text(encoding="utf-8")
    assert text.startswith("intro\n") and text.endswith(f"{compatibility.END}\nrest\n")
    assert "old table" not in text and compatibility.main(["--check"]) == 0
