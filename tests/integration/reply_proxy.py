"""A small HTTP proxy between the API server and DynamoDB Local that loses answers of writes
that landed: the fault tests' stand-in for a reset, a timeout or a truncated body on the way
back from DynamoDB (tests/integration/test_lost_replies.py).

Each request is forwarded whole and its answer read whole from DynamoDB Local, so the write
has been applied; then, for a chosen fraction of the write calls (by ``X-Amz-Target``), the
answer is lost on its way back to the server: the connection reset, closed after half the
body, or closed after a pause. A chosen request loses the answers of its first ``per_body``
sends (a request is known by its JSON, whoever serialized it: the direct transport and
botocore write the same parameters differently), and then gets its answers: every fault is
followed by a retry meeting its own write. The choices are drawn from a seeded generator.
"""

from __future__ import annotations

import hashlib
import json
import random
import socket
import struct
import threading
import time
from collections import Counter
from typing import Optional
from urllib.parse import urlsplit

WRITES = frozenset({"PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems"})
FAULTS = ("reset", "truncate", "delay")


class LostReplyProxy:
    """Listens on 127.0.0.1 (``endpoint``); forwards to ``upstream``; loses the answers of a
    ``rate`` of the write calls (each distinct body at most ``per_body`` times)."""

    def __init__(self, upstream: str, rate: float, seed: int, per_body: int = 1,
                 delay: float = 0.2) -> None:
        url = urlsplit(upstream)
        self._upstream = (url.hostname or "127.0.0.1", url.port or 80)
        self.rate, self.per_body, self.delay = rate, per_body, delay
        self._random = random.Random(seed)
        self._lock = threading.Lock()
        self._left: dict[bytes, int] = {}  # request -> answers still to lose
        self.faults: Counter[tuple[str, str]] = Counter()  # (operation, fault) -> count
        self.calls: Counter[str] = Counter()
        self.enabled = True
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.endpoint = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    def stop(self) -> None:
        """Stop accepting (open connections end with their peers)."""
        self._stopped = True
        self._listener.close()

    def _accept(self) -> None:
        while not self._stopped:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        upstream: Optional[socket.socket] = None
        reader = client.makefile("rb")
        try:
            while True:
                request = _read_message(reader)
                if request is None:
                    return
                head, body = request
                if upstream is None:
                    upstream = socket.create_connection(self._upstream)
                    upstream_reader = upstream.makefile("rb")
                upstream.sendall(head + body)
                answer = _read_message(upstream_reader)
                if answer is None:
                    return
                fault = self._choose(_target(head), body)
                if fault is None:
                    client.sendall(answer[0] + answer[1])
                    continue
                if fault == "truncate":
                    client.sendall(answer[0] + answer[1][: len(answer[1]) // 2])
                elif fault == "delay":
                    time.sleep(self.delay)
                else:  # reset: RST instead of FIN
                    client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                return
        except OSError:
            return
        finally:
            client.close()
            if upstream is not None:
                upstream.close()

    def _choose(self, operation: str, body: bytes) -> Optional[str]:
        with self._lock:
            self.calls[operation] += 1
            if not self.enabled or operation not in WRITES:
                return None
            digest = hashlib.sha256(json.dumps(json.loads(body), sort_keys=True).encode()).digest()
            if digest not in self._left:
                self._left[digest] = self.per_body if self._random.random() < self.rate else 0
            if not self._left[digest]:
                return None
            self._left[digest] -= 1
            fault = self._random.choice(FAULTS)
            self.faults[(operation, fault)] += 1
            return fault


def _target(head: bytes) -> str:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"x-amz-target":
            return value.strip().decode("latin-1").rsplit(".", 1)[-1]
    return ""


def _read_message(reader) -> Optional[tuple[bytes, bytes]]:  # noqa: ANN001 - a buffered socket file
    """One HTTP/1.1 message (head, body) framed by Content-Length (what botocore, the store's
    client and DynamoDB Local send); None at the end of the connection."""
    lines = []
    while True:
        line = reader.readline(65536)
        if not line:
            return None
        lines.append(line)
        if line in (b"\r\n", b"\n"):
            break
    head = b"".join(lines)
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    body = reader.read(length) if length else b""
    if len(body) < length:
        return None
    return head, body
