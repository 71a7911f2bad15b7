"""What every protocol's wire hands app.py: a status, a JSON text body and headers."""

from __future__ import annotations

from dataclasses import dataclass, field

# Response headers: a value is one header line or several with the same name (Chalice's shape).
Headers = dict[str, str | list[str]]
MAX_BODY_BYTES = 10 * 1024 * 1024  # API Gateway's payload limit, on every protocol


@dataclass
class WireResponse:
    """What the HTTP layer sends back."""

    status: int
    body: str
    headers: Headers = field(default_factory=dict)
