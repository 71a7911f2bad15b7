"""Glue Data Catalog resource ARNs (docs: "Specifying AWS Glue resource ARNs").

    arn:<partition>:glue:<region>:<account>:catalog
    arn:<partition>:glue:<region>:<account>:database/<database>
    arn:<partition>:glue:<region>:<account>:table/<database>/<table>
    arn:<partition>:glue:<region>:<account>:connection/<connection>
    arn:<partition>:glue:<region>:<account>:userDefinedFunction/<database>/<function>
    arn:<partition>:glue:<region>:<account>:crawler/<crawler>

Database names cannot contain ``/`` in practice (Hive), so a table ARN's first ``/`` after the
database name ends it; the rest is the table (or function) name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from chalicelib.errors import InvalidInputException

# The partitions botocore's GlueResourceArn pattern admits.
_ARN = re.compile(r"arn:(aws(?:-(?:cn|us-gov|iso(?:-[bef])?))?):glue:([^:]*):([^:]*):(.*)", re.DOTALL)
_ACCOUNT = re.compile(r"\d{12}")
# The number of names after the resource type, per catalog resource type.
NAME_COUNTS = {"catalog": 0, "database": 1, "table": 2, "connection": 1, "userDefinedFunction": 2, "crawler": 1}


@dataclass(frozen=True)
class GlueArn:
    """A parsed catalog resource ARN: ``kind`` is the resource type as the ARN spells it
    (``database``, ``table``...), ``names`` the names after it (none for the catalog)."""

    partition: str
    region: str
    account: str
    kind: str
    names: tuple[str, ...]


def parse(arn: str, member: str = "ResourceArn") -> GlueArn:
    """The parts of a Glue Data Catalog resource ARN; InvalidInputException naming ``member``
    and the rule when it is not one."""
    match = _ARN.fullmatch(arn)
    if match is None:
        raise InvalidInputException(
            f"{member} '{arn[:200]}' is not a valid Glue resource ARN: expected "
            "arn:aws:glue:<region>:<account-id>:<resource-type>/<name>")
    partition, region, account, resource = match.groups()
    if not region:
        raise InvalidInputException(f"{member} '{arn[:200]}' names no region")
    if not _ACCOUNT.fullmatch(account):
        raise InvalidInputException(f"{member} '{arn[:200]}': the account id must be 12 digits")
    kind, _, rest = resource.partition("/")
    if kind not in NAME_COUNTS:
        raise InvalidInputException(
            f"{member} '{arn[:200]}': resource type '{kind[:100]}' is not a Data Catalog resource type "
            f"({', '.join(NAME_COUNTS)})")
    count = NAME_COUNTS[kind]
    names: tuple[str, ...] = ()
    if count == 1:
        names = (rest,)
    elif count == 2:
        first, _, second = rest.partition("/")
        names = (first, second)
    if (count == 0 and rest) or (count and (not rest or not all(names))):
        shape = "/".join([kind] + [f"<{part}>" for part in ("name", "name")[:count]])
        raise InvalidInputException(f"{member} '{arn[:200]}': a {kind} ARN ends in '{shape}'")
    return GlueArn(partition, region, account, kind, names)


def format_arn(region: str, account: str, kind: str, *names: str, partition: str = "aws") -> str:
    """The ARN of a catalog resource (``kind`` as in :data:`NAME_COUNTS`)."""
    resource = "/".join((kind, *names))
    return f"arn:{partition}:glue:{region}:{account}:{resource}"
