"""Column statistics rules: which statistics type describes which column type, and sanity
checks on the numbers. Values are kept exactly as given (decimals stay unscaled bytes + scale)."""

from __future__ import annotations

import base64
import binascii
from decimal import Decimal
from typing import Any, Optional

from chalicelib.domain.keycodec import base_type

# Statistics type -> the Glue column base types it can describe.
COMPATIBLE_TYPES = {
    "BOOLEAN": {"boolean"},
    "DATE": {"date"},
    "DECIMAL": {"decimal", "numeric"},
    "DOUBLE": {"double", "float", "real"},
    "LONG": {"int", "integer", "bigint", "long", "smallint", "tinyint"},
    "STRING": {"string", "varchar", "char"},
    "BINARY": {"binary"},
}
DATA_MEMBER = {
    "BOOLEAN": "BooleanColumnStatisticsData",
    "DATE": "DateColumnStatisticsData",
    "DECIMAL": "DecimalColumnStatisticsData",
    "DOUBLE": "DoubleColumnStatisticsData",
    "LONG": "LongColumnStatisticsData",
    "STRING": "StringColumnStatisticsData",
    "BINARY": "BinaryColumnStatisticsData",
}


def decimal_value(number: dict[str, Any]) -> Decimal:
    """A DecimalNumber (big-endian two's-complement unscaled bytes, base64, and a scale) exactly."""
    unscaled = int.from_bytes(base64.b64decode(number["UnscaledValue"], validate=True), "big", signed=True)
    return Decimal(unscaled).scaleb(-number["Scale"])


def problem_with(statistics: dict[str, Any], declared_type: Optional[str]) -> Optional[str]:
    """Why a ColumnStatistics entry cannot be stored for a column of ``declared_type`` (None =
    no such column), or None when it is fine."""
    name = statistics["ColumnName"]
    if declared_type is None:
        return f"Column '{name}' is not a column of the table"
    data = statistics["StatisticsData"]
    kind = data["Type"]
    column_base = base_type(declared_type)
    if column_base not in COMPATIBLE_TYPES[kind]:
        return f"Statistics of type {kind} cannot describe column '{name}' of type {declared_type}"
    if base_type(statistics["ColumnType"]) != column_base:
        return (f"ColumnType '{statistics['ColumnType']}' does not match the type of column "
                f"'{name}' in the table ({declared_type})")
    present = [member for member in DATA_MEMBER.values() if data.get(member) is not None]
    if present != [DATA_MEMBER[kind]]:
        return f"StatisticsData of Type {kind} must hold exactly {DATA_MEMBER[kind]} (it holds: {', '.join(present) or 'nothing'})"
    return _range_problem(kind, data[DATA_MEMBER[kind]], name)


def _range_problem(kind: str, data: dict[str, Any], name: str) -> Optional[str]:
    low, high = data.get("MinimumValue"), data.get("MaximumValue")
    if kind == "DECIMAL":
        try:
            low = decimal_value(low) if low is not None else None
            high = decimal_value(high) if high is not None else None
        except (binascii.Error, ValueError):
            return f"Decimal statistics of column '{name}': UnscaledValue is not valid base64"
    if low is not None and high is not None and low > high:
        return f"Statistics of column '{name}': MinimumValue is greater than MaximumValue"
    return None
