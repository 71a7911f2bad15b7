"""S3 as the crawler sees it: listing an include path (exclusions applied) and reading objects by
ranges, never whole: a Parquet/ORC footer through a seekable file whose reads are ranged GETs,
the first KBs of a text file, the head of an Avro file."""

from __future__ import annotations

import fnmatch
import io
import re
from dataclasses import dataclass
from typing import Any, Iterator, Optional
from urllib.parse import urlparse

from botocore.exceptions import ClientError

from pipelines.layout import hidden

HEAD_BYTES = 64 * 1024      # what text classifiers read of a file
TAIL_BYTES = 64 * 1024      # the first ranged read of a footer


@dataclass(frozen=True)
class S3Object:
    key: str
    size: int
    etag: str = ""


def split_uri(path: str) -> tuple[str, str]:
    """``s3://bucket/a/b`` -> (bucket, ``a/b``) (no leading or trailing slash on the prefix)."""
    parsed = urlparse(path)
    if parsed.scheme not in ("s3", "s3a", "s3n") or not parsed.netloc:
        raise ValueError(f"not an S3 path: {path}")
    return parsed.netloc, parsed.path.strip("/")


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """AWS's exclude patterns: glob with ``**`` crossing folders, ``*`` and ``?`` not, ``{a,b}``
    alternatives and ``[...]`` classes; matched against the key relative to the include path."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "{":
            end = pattern.find("}", i)
            if end < 0:
                out.append(re.escape(c))
            else:
                out.append("(?:" + "|".join(re.escape(a) for a in pattern[i + 1:end].split(",")) + ")")
                i = end
        elif c == "[":
            end = pattern.find("]", i)
            if end < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1:end]
                out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out) + r"\Z")


class Exclusions:
    """Matches keys (relative to an include path) against the target's exclude globs; a folder
    pattern (``logs/**``) excludes everything below it."""

    def __init__(self, patterns: Optional[list[str]]):
        self.patterns = [_glob_regex(p.lstrip("/")) for p in (patterns or []) if p]

    def __call__(self, relative: str) -> bool:
        return any(p.match(relative) for p in self.patterns)


def list_objects(s3: Any, bucket: str, prefix: str) -> Iterator[S3Object]:
    """Every object under ``prefix/`` (or the whole bucket), in key order."""
    paginator = s3.get_paginator("list_objects_v2")
    kwargs = {"Bucket": bucket}
    if prefix:
        kwargs["Prefix"] = prefix + "/"
    for page in paginator.paginate(**kwargs):
        for item in page.get("Contents", []):
            yield S3Object(item["Key"], int(item.get("Size", 0)), item.get("ETag", ""))


def visible(relative: str) -> bool:
    """Hadoop's rule on every path segment: ``_SUCCESS``, ``.crc``, ``_temporary/`` are not data;
    folder markers (keys ending in ``/``) neither."""
    if not relative or relative.endswith("/"):
        return False
    return not any(hidden(part) for part in relative.split("/"))


def read_range(s3: Any, bucket: str, key: str, start: int, end: int) -> bytes:
    """Bytes ``start``..``end`` (inclusive) of an object."""
    return s3.get_object(Bucket=bucket, Key=key, Range=f"bytes={start}-{end}")["Body"].read()


def read_head(s3: Any, bucket: str, key: str, size: int, limit: int = HEAD_BYTES) -> bytes:
    if size <= 0:
        return b""
    return read_range(s3, bucket, key, 0, min(size, limit) - 1)


class RangedFile(io.RawIOBase):
    """A read-only seekable view of an S3 object for pyarrow: each read is a ranged GET, and the
    last ``TAIL_BYTES`` are fetched once (where Parquet and ORC keep their footers)."""

    def __init__(self, s3: Any, bucket: str, key: str, size: int, head: bytes = b""):
        super().__init__()
        self.s3, self.bucket, self.key, self.size = s3, bucket, key, size
        self.pos = 0
        self.tail_start = max(0, size - TAIL_BYTES)
        self.tail: Optional[bytes] = None
        if len(head) >= size:  # a small file: the head already read is the whole file
            self.tail_start, self.tail = 0, head[:size]
        self.requests = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.pos, io.SEEK_END: self.size}[whence]
        self.pos = max(0, base + offset)
        return self.pos

    def readinto(self, buffer: Any) -> int:
        want = min(len(buffer), self.size - self.pos)
        if want <= 0:
            return 0
        start, end = self.pos, self.pos + want
        if start >= self.tail_start:
            if self.tail is None:
                self.tail = read_range(self.s3, self.bucket, self.key, self.tail_start, self.size - 1)
                self.requests += 1
            data = self.tail[start - self.tail_start:end - self.tail_start]
        else:
            data = read_range(self.s3, self.bucket, self.key, start, end - 1)
            self.requests += 1
        buffer[:len(data)] = data
        self.pos += len(data)
        return len(data)


def unreadable(error: ClientError) -> bool:
    """Whether an S3 error means the crawler cannot read the path at all (AWS fails the crawl)."""
    code = error.response.get("Error", {}).get("Code", "")
    return code in ("AccessDenied", "NoSuchBucket", "AllAccessDisabled", "InvalidAccessKeyId", "403", "404")


def matches_any(name: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)
