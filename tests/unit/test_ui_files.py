"""The catalog browser's files (chalicelib/protocol/web): a fixed allow-list, every file the page
names is on it, and no caller path becomes a file path."""

from __future__ import annotations

import re

import pytest

from chalicelib.protocol.web import wire


def test_every_allowed_file_exists_and_nothing_else_is_served() -> None:
    assert sorted(p.name for p in wire.STATIC.iterdir()) == sorted(wire.FILES)


def test_the_page_names_only_allowed_files() -> None:
    html = (wire.STATIC / "index.html").read_text()
    named = set(re.findall(r'(?:src|href)="ui/([^"]+)"', html))
    assert named and named <= set(wire.FILES)


@pytest.mark.parametrize("name", ["../app.py", "..%2Fapp.py", "/etc/passwd", "wire.py", "", "INDEX.HTML", "app.js/"])
def test_a_name_off_the_list_is_404(name: str) -> None:
    answer = wire.page(name)
    assert answer.status == 404 and "NotFoundException" in answer.body


def test_the_page_runs_only_its_own_script() -> None:
    answer = wire.page()
    policy = answer.headers["Content-Security-Policy"]
    assert "script-src 'self'" in str(policy) and "connect-src 'self'" in str(policy)
    assert "<script>" not in answer.body  # no inline script: the policy would refuse it


def test_the_secret_is_never_kept() -> None:
    # The sign-in form's secret is read once, cleared, and only what was derived from it is stored.
    script = (wire.STATIC / "app.js").read_text()
    assert re.findall(r"sessionStorage\.setItem\([^)]*\)", script) == ["sessionStorage.setItem(SESSION_KEY, JSON.stringify(session)"]
    # (tests/integration/test_ui_browser.py reads sessionStorage after a real sign-in.)
