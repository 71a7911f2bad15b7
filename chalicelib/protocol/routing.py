"""Route tables as data, with handlers that load on their first call.

Every protocol's ``routes.py`` is one table from what a request names (Glue's operation, Lake
Formation's operation, Paimon's method and path template) to a handler, written as
``family.function`` over :func:`families`. app.py reads the tables at import (Chalice's routes, the
operations served), and a Lambda cold start must not pay for loading every handler module and
the service and store layers below them: a handler's module is imported on the handler's first
call, and looked up again on every call (an entry in ``sys.modules``), so a test that replaces a
handler function in its module is obeyed.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable


class Family:
    """A handler module named, not imported: ``family.name`` is a handler that imports the
    module and calls its ``name`` when it is first called."""

    def __init__(self, module: str) -> None:
        self.module = module

    def __getattr__(self, name: str) -> Callable[..., Any]:
        module = self.module

        def target() -> Callable[..., Any]:
            function: Callable[..., Any] = getattr(importlib.import_module(module), name)
            return function

        def handler(*args: Any) -> Any:
            return target()(*args)
        handler.__name__ = handler.__qualname__ = f"{module.rsplit('.', 1)[-1]}.{name}"
        handler.target = target  # type: ignore[attr-defined]
        return handler


def families(package: str, *names: str) -> tuple[Family, ...]:
    """One :class:`Family` per module ``package.<name>``, in the order named."""
    return tuple(Family(f"{package}.{name}") for name in names)


def resolve(handler: Callable[..., Any]) -> Callable[..., Any]:
    """The function a route's handler runs (importing its module)."""
    target: Any = getattr(handler, "target", None)
    return target() if target is not None else handler  # type: ignore[no-any-return]
