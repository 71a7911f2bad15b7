"""SearchTables matching: Glue's token rules for SearchText and PropertyPredicate filters.

Text is split into lowercase tokens on anything that is not a letter or digit (``-``, ``:``,
``#``, ``_``, ``.``, spaces...). An unquoted SearchText matches a table when every one of its
tokens occurs in the table's text or its database's text; a quoted one matches when some
searchable field equals it exactly (ignoring case). String filters match the same way per field
(``Key=Name, Value=link`` finds ``customer-link`` but not ``xxlinkyy``); time fields compare.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any, Iterable, Optional

_SPLIT = re.compile(r"[\W_]+", re.UNICODE)
MAX_TOKEN_CHARS = 64
MAX_PARAMETER_VALUE_CHARS = 1024  # longer parameter values (e.g. schemas) are not searched
TIME_FIELDS = {"createtime": "CreateTime", "updatetime": "UpdateTime",
               "lastaccesstime": "LastAccessTime", "lastanalyzedtime": "LastAnalyzedTime"}
SORTABLE = {"name": "Name", "databasename": "DatabaseName", **TIME_FIELDS,
            "tabletype": "TableType", "owner": "Owner"}


def tokens(text: str) -> set[str]:
    """The search tokens of a text."""
    return {t[:MAX_TOKEN_CHARS] for t in _SPLIT.split(text.lower()) if t}


def _columns(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return list((doc.get("StorageDescriptor") or {}).get("Columns") or []) + list(doc.get("PartitionKeys") or [])


def table_fields(doc: dict[str, Any]) -> list[str]:
    """The searchable texts of a table: name, description, column names and comments,
    parameter keys and (not too long) values."""
    fields = [doc.get("Name", ""), doc.get("Description", "")]
    for column in _columns(doc):
        fields += [column.get("Name", ""), column.get("Comment", "")]
    for key, value in (doc.get("Parameters") or {}).items():
        fields.append(key)
        if len(value) <= MAX_PARAMETER_VALUE_CHARS:
            fields.append(value)
    return [f for f in fields if f]


def database_fields(doc: dict[str, Any]) -> list[str]:
    """The searchable texts a database lends its tables: name and description."""
    return [f for f in (doc.get("Name", ""), doc.get("Description", "")) if f]


def field_tokens(fields: Iterable[str]) -> set[str]:
    """Every token of a list of texts."""
    found: set[str] = set()
    for text in fields:
        found |= tokens(text)
    return found


def parse_search_text(text: Optional[str]) -> tuple[set[str], Optional[str]]:
    """(tokens every hit must contain, exact phrase or None). Empty tokens = match all."""
    if not text:
        return set(), None
    stripped = text.strip()
    if len(stripped) >= 2 and stripped[0] == stripped[-1] == '"':
        phrase = stripped[1:-1]
        return tokens(phrase), phrase.lower()
    return tokens(stripped), None


def text_matches(wanted: set[str], phrase: Optional[str], table_doc: dict[str, Any],
                 db_doc: dict[str, Any]) -> bool:
    """Whether a table (with its database) matches a parsed SearchText."""
    fields = table_fields(table_doc) + database_fields(db_doc)
    if phrase is not None:
        return any(f.lower() == phrase for f in fields)
    return wanted <= field_tokens(fields)


def _parse_time(value: str) -> Optional[float]:
    try:
        number = float(value)
        return number / 1000 if number > 1e11 else number  # epoch milliseconds or seconds
    except ValueError:
        pass
    try:
        moment = _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=_dt.timezone.utc)
    return moment.timestamp()


def filter_problem(predicate: dict[str, Any]) -> Optional[str]:
    """Why a PropertyPredicate cannot be applied, or None."""
    key = (predicate.get("Key") or "").lower()
    if not key:
        return "Filters: every PropertyPredicate needs a Key"
    if key in TIME_FIELDS and _parse_time(predicate.get("Value") or "") is None:
        return (f"Filters: Value '{predicate.get('Value')}' for {TIME_FIELDS[key]} must be a time "
                "(epoch seconds or milliseconds, or ISO 8601)")
    if key not in TIME_FIELDS and predicate.get("Comparator") not in (None, "EQUALS"):
        return f"Filters: Comparator {predicate['Comparator']} applies only to time fields ({', '.join(TIME_FIELDS.values())})"
    return None


def _string_field(key: str, table_doc: dict[str, Any], db_doc: dict[str, Any]) -> Optional[str]:
    if key == "name":
        return table_doc.get("Name")
    if key == "databasename":
        return db_doc.get("Name")
    if key in ("description", "owner", "tabletype"):
        return table_doc.get({"description": "Description", "owner": "Owner", "tabletype": "TableType"}[key])
    if key == "location":
        return (table_doc.get("StorageDescriptor") or {}).get("Location")
    for name, value in (table_doc.get("Parameters") or {}).items():
        if name.lower() == key:
            return value
    return None


_COMPARE = {
    None: lambda a, b: a == b, "EQUALS": lambda a, b: a == b,
    "GREATER_THAN": lambda a, b: a > b, "LESS_THAN": lambda a, b: a < b,
    "GREATER_THAN_EQUALS": lambda a, b: a >= b, "LESS_THAN_EQUALS": lambda a, b: a <= b,
}


def filter_matches(predicate: dict[str, Any], table_doc: dict[str, Any], db_doc: dict[str, Any]) -> bool:
    """Whether a table passes one (already checked) PropertyPredicate."""
    key = predicate["Key"].lower()
    value = predicate.get("Value") or ""
    if key in TIME_FIELDS:
        stored = table_doc.get(TIME_FIELDS[key])
        return stored is not None and _COMPARE[predicate.get("Comparator")](stored, _parse_time(value))
    text = _string_field(key, table_doc, db_doc)
    if text is None:
        return False
    wanted = tokens(value)
    if not wanted:  # a value of punctuation only: compare it whole
        return text == value
    return wanted <= tokens(text)


def sort_value(field: str, table_doc: dict[str, Any]) -> Any:
    """The value a table sorts by for SortCriteria FieldName ``field`` (canonical name)."""
    value = table_doc.get(field)
    if field in TIME_FIELDS.values():
        return value if value is not None else float("-inf")
    return (value or "").lower() if isinstance(value, str) or value is None else value
