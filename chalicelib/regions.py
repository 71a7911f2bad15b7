"""Which names are AWS regions, as botocore's partitions data lists them.

AWS refuses a SigV4 credential scoped to a region it does not have ("Credential should be scoped
to a valid region"); the catalog does too, instead of serving an empty catalog under any name.
The known regions are those of every partition in botocore's ``partitions.json`` (aws, aws-cn,
aws-us-gov, the iso partitions, aws-eusc, ...) plus any name matching a partition's
``regionRegex``, so a region newer than the installed botocore is not refused. The partitions'
pseudo-regions (``aws-global``, ``aws-cn-global``, ...) name global endpoints, not regions a
Glue catalog lives in; AWS refuses them in a Glue scope too.

The data is read on first use, not at import (Lambda cold start), through the same botocore
loader as the service models (protocol/aws_json/model.py).
"""

from __future__ import annotations

import functools
import re

# The shape every storage key relies on (the region is part of each catalog's key): 1 to 32
# lowercase letters, digits and hyphens. Checked first: the partitions' patterns use \w, which
# also matches capitals, underscores and non-ASCII letters.
_SHAPE = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?")


@functools.cache
def _partitions() -> tuple[frozenset[str], tuple[re.Pattern[str], ...]]:
    from botocore.loaders import create_loader

    listed: set[str] = set()
    patterns: list[re.Pattern[str]] = []
    for partition in create_loader().load_data("partitions")["partitions"]:
        listed.update(name for name in partition.get("regions", {}) if not name.endswith("-global"))
        if partition.get("regionRegex"):
            patterns.append(re.compile(partition["regionRegex"]))
    return frozenset(listed), tuple(patterns)


def known_regions() -> frozenset[str]:
    """Every region botocore's partitions list (pseudo-regions such as ``aws-global`` left out)."""
    return _partitions()[0]


def is_region(name: str) -> bool:
    """Whether ``name`` is an AWS region: plain in shape, and listed or matching a partition's
    ``regionRegex``."""
    if not _SHAPE.fullmatch(name):
        return False
    listed, patterns = _partitions()
    return name in listed or any(pattern.match(name) for pattern in patterns)
