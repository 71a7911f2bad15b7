"""The Paimon REST catalog's partition calls beyond list and create (issue #50): list by filter,
list by names, drop, mark done, and statistics reported with create (protocol-free).

A Paimon partition *is* the Glue partition item (docs/design.md, "The Paimon catalog"), for
Paimon tables and for Glue tables served as Paimon format tables alike, so each call here is an
ordinary Glue partition read or write on the table, under the Paimon action's Lake Formation
check (``access.require`` first, then the Glue calls inside ``access.checked``).

* ``list_by_filter``: Paimon's predicate JSON is translated (``domain.paimon.predicates``) into
  the bound expression tree GetPartitions' Expression binds to, and listed by the very same
  ``StoredListing`` (the planner's key ranges on the partitions table or an ACTIVE index, the
  partition digest for what no range serves, the exact re-check, the work budget), rendered as
  Paimon's Partition JSON with the statistics the partition items hold. An index entry holds no
  statistics: the page's partitions are then fetched by key, one BatchGetItem per page.
* ``mark_done``: the partition's Glue Parameters get ``paimon.done`` = ``true`` and
  ``paimon.done-time`` (epoch ms), so Glue clients see it, and Paimon's listings answer
  ``done`` from it. A partition that does not exist is skipped, as Paimon's HiveCatalog does.
* ``drop``: unregisters the partitions (Glue deletes with their index entries); the data files
  stay, as Paimon's servers do (RESTApi.dropPartitions: "the server never deletes data files").
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional, Sequence

from chalicelib import clock
from chalicelib.domain.paimon.predicates import translate
from chalicelib.domain.paimon.snapshots import partition_json
from chalicelib.errors import AlreadyExistsException, EntityNotFoundException, InvalidInputException
from chalicelib.service import access
from chalicelib.service import governed_partitions as governed
from chalicelib.service import partitions as glue_partitions
from chalicelib.service.paimon_tables import format_schema, is_paimon, split_branch
from chalicelib.service.partition_digest import DigestSource
from chalicelib.service.table_ref import TableRef
from chalicelib.store import paimon_partition_stats as reported_stats
from chalicelib.store import partitions as partition_store
from chalicelib.store.documents import decode_document, document_text

TABLE = "TABLE"
PARTITION = "PARTITION"
MAIN = "main"
DONE = "paimon.done"
DONE_TIME = "paimon.done-time"
# Every segment bucket (service.partitions.segment_buckets of one segment).
_ALL_BUCKETS = (0, 2519)


# ------------------------------------------------------------------------------ the table
@dataclass(frozen=True)
class PartitionedTable:
    """A Paimon table or a Glue table served as a format table, as the partition calls need it."""

    ref: TableRef  # without the branch
    view: glue_partitions.PartitionTableView
    paimon: bool  # a Paimon table (else a format table)
    path: str
    branch: str

    @property
    def keys(self) -> list[str]:
        """The partition key names, in Glue PartitionKeys order."""
        return [name for name, _ in self.view.keys]


def open_partitioned(action: str, ref: TableRef, writes: bool = False) -> PartitionedTable:
    """The table ``ref`` names once the caller may do ``action`` on it: 404 TABLE when it is
    neither a Paimon table nor a Glue table Paimon's clients read as a format table. Partitions
    belong to the main branch: a write naming another is 400, a read lists main's. A Paimon
    table's pending statistics are rolled forward first, as its GET listing does."""
    name, branch = split_branch(ref.table)
    access.require(action, ref.catalog_key, ref.database, name)
    ref = replace(ref, table=name)
    try:
        view = glue_partitions.read_partition_table(ref)
    except EntityNotFoundException as error:
        error.resource_type, error.resource_name = error.resource_type or TABLE, error.resource_name or name
        raise
    location = (view.doc.get("StorageDescriptor") or {}).get("Location")
    paimon = is_paimon(view.doc) and bool(location)
    if not paimon and (view.governed or format_schema(view.doc) is None):
        raise EntityNotFoundException(f"Table {view.item.name} is not a Paimon table.", TABLE, name)
    if writes and branch != MAIN:
        raise InvalidInputException("partitions belong to the main branch")
    table = PartitionedTable(ref, view, paimon, str(location or ""), branch)
    if paimon:
        _settle(table)
    return table


def _settle(table: PartitionedTable) -> None:
    from chalicelib.service import paimon_snapshots  # the commit protocol's module, loaded when needed
    branch = paimon_snapshots.TableBranch(table.ref, table.view.item.uid, table.view.item, table.path,
                                          table.keys, list(table.view.key_types), MAIN)
    paimon_snapshots.settle(branch)


def check_specs(table: PartitionedTable, specs: Sequence[Any], where: str) -> list[list[str]]:
    """The values of each spec; InvalidInputException unless each names exactly the partition keys."""
    wanted = set(table.keys)
    out = []
    for n, spec in enumerate(specs):
        if not isinstance(spec, dict) or set(spec) != wanted:
            shown = sorted(spec) if isinstance(spec, dict) else type(spec).__name__
            raise InvalidInputException(
                f"{where}[{n}] must name exactly the partition keys ({', '.join(table.keys) or 'none'}), not {shown}")
        for key, value in spec.items():
            if not isinstance(value, str) or not value:
                raise InvalidInputException(f"{where}[{n}].{key} must be a non-empty string")
        out.append([spec[k] for k in table.keys])
    return out


def partition_name(keys: Sequence[str], values: Sequence[str]) -> str:
    """Paimon's partition name: ``k1=v1/k2=v2``."""
    return "/".join(f"{k}={v}" for k, v in zip(keys, values))


def _spec(keys: Sequence[str], values: Sequence[str]) -> dict[str, str]:
    return dict(zip(keys, values))


def is_done(doc: Optional[bytes]) -> bool:
    """Whether a stored partition document is marked done (its Parameters' ``paimon.done``);
    decoded only when its text names the parameter at all."""
    if not doc:
        return False
    if DONE not in document_text(doc):
        return False
    parameters = decode_document(doc).get("Parameters") or {}
    return isinstance(parameters, dict) and parameters.get(DONE) == "true"


def render(keys: Sequence[str], values: Sequence[str], stats: Any, doc: Optional[bytes]) -> dict[str, Any]:
    """Paimon's Partition JSON: the statistics of a partition item (``stats``: None for none)."""
    def number(name: str) -> int:
        value = getattr(stats, name, None) if stats is not None else None
        return int(value or 0)
    return partition_json(_spec(keys, values), number("p_records"), number("p_bytes"), number("p_files"),
                          number("p_last"), done=is_done(doc))


# ------------------------------------------------------------------------------ list by filter
@dataclass
class FilterPage:
    """A page of a filtered listing: the partitions, the position after (None: the last page)
    and the scope that position is valid for (a token must be bound to it)."""

    partitions: list[dict[str, Any]]
    position: Any
    scope: tuple


class _FilterListing(glue_partitions.StoredListing):
    """GetPartitions' listing of the table with Paimon's rendering (and a partition name
    pattern on top, conjunctive with the predicate)."""

    caches_renders = False  # its rendering reads the item's statistics, which change without a digest item

    def __init__(self, view: glue_partitions.PartitionTableView, wanted: governed.Listing,
                 matches_name: Callable[[str], bool]) -> None:
        super().__init__(view, {}, wanted)
        self._matches_name = matches_name
        self._names = [name for name, _ in view.keys]
        self._fill: list[tuple[dict[str, Any], str]] = []  # rendered from an index entry: (object, partition key)

    def page(self, position: Any) -> tuple[list[Any], Any]:
        self._fill = []
        page, last = super().page(position)
        if self._fill:
            # An index entry holds the partition's document, not its statistics: one BatchGetItem.
            found = partition_store.get_partitions(self.view.item.uid, [key for _, key in self._fill])
            gone = set()
            for obj, key in self._fill:
                item = found.get(key)
                if item is None:
                    gone.add(id(obj))  # deleted since its entry was read
                    continue
                obj.update(render(self._names, obj["spec"].values(), item, item.doc))
            page = [obj for obj in page if id(obj) not in gone]
        return page, last

    def _render(self, pair: tuple[int, Any], digest: Optional[DigestSource] = None) -> tuple[Any, int] | None:
        item = pair[1]
        values = list(item.values)
        if not (digest is not None and digest.evaluated(item.values)) and not self._matches(item.values):
            return None
        if not self._matches_name(partition_name(self._names, values)):
            return None
        if self.plan.index is not None:
            obj = render(self._names, values, None, item.doc)
            self._fill.append((obj, item.partition_key))
        else:
            obj = render(self._names, values, item, item.doc)
        return obj, 320 + sum(2 * (len(k) + len(v)) for k, v in zip(self._names, values))


def list_by_filter(ref: TableRef, filter_text: Any, limit: int, matches_name: Callable[[str], bool],
                   read_position: Callable[[tuple], Any], pattern_scope: Any = None) -> FilterPage:
    """A page of the partitions matching Paimon's predicate JSON (a superset where the
    predicate cannot be expressed exactly; see domain.paimon.predicates) and ``matches_name``,
    in the plan's key order. ``read_position(scope)``: the position the request resumes from,
    for a listing of that scope; ``pattern_scope``: what else the position is bound to (the
    name pattern)."""
    table = open_partitioned("PaimonListPartitions", ref)
    view = table.view
    bound = translate(filter_text, view.keys)
    if bound is None or not view.keys:
        return FilterPage([], None, (view.item.uid, "false"))
    # The bound tree's text names the plan cache's entry and binds page tokens to the filter.
    expression = "paimon:" + repr(bound)
    wanted = governed.Listing(expression, bound, view.keys, _ALL_BUCKETS, None, False, limit)
    lister = _FilterListing(view, wanted, matches_name)
    scope = (*lister.scope, pattern_scope)
    position = read_position(scope)
    with access.checked():
        page, last = lister.page(position)
    return FilterPage(page, last, scope)


def plan_of(ref: TableRef, filter_text: str) -> tuple[Optional[str], int]:
    """(the index the listing would read, None for the partitions table; its number of key
    ranges): for tests and benchmarks of how a filter is planned."""
    table = open_partitioned("PaimonListPartitions", ref)
    bound = translate(filter_text, table.view.keys)
    if bound is None:
        return None, 0
    wanted = governed.Listing("paimon:" + repr(bound), bound, table.view.keys, _ALL_BUCKETS, None, False, 1)
    lister = _FilterListing(table.view, wanted, lambda name: True)
    return (lister.plan.index.name if lister.plan.index else None), len(lister.plan.bounds)


# ------------------------------------------------------------------------------ list by names
MAX_NAMES = 1000  # RESTApi.listPartitionsByNames refuses more


def list_by_names(ref: TableRef, specs: Sequence[Any]) -> list[dict[str, Any]]:
    """The partitions of ``specs`` that exist, with their statistics, in the order asked (each once)."""
    table = open_partitioned("PaimonListPartitions", ref)
    if len(specs) > MAX_NAMES:
        raise InvalidInputException(f"The number of partition specs must not exceed {MAX_NAMES}, but got {len(specs)}")
    if not specs:
        return []
    values = check_specs(table, specs, "specs")
    keys = [glue_partitions.partition_key(table.view, v) for v in values]
    found = partition_store.get_partitions(table.view.item.uid, list(dict.fromkeys(keys)))
    out, seen = [], set()
    for key in keys:
        item = found.get(key)
        if item is None or key in seen:
            continue
        seen.add(key)
        out.append(render(table.keys, list(item.values), item, item.doc))
    return out


# ------------------------------------------------------------------------------ drop
def drop(ref: TableRef, specs: Sequence[Any], ignore_if_not_exists: bool
         ) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """Unregister partitions: (dropped, missing). With ``ignore_if_not_exists`` false and any
    missing, EntityNotFoundException (PARTITION) and nothing is dropped."""
    table = open_partitioned("PaimonDropPartitions", ref, writes=True)
    values = check_specs(table, specs, "partitionSpecs")
    keys = [glue_partitions.partition_key(table.view, v) for v in values]
    found = partition_store.get_partitions(table.view.item.uid, list(dict.fromkeys(keys)))
    missing = [specs[n] for n, key in enumerate(keys) if key not in found]
    if missing and not ignore_if_not_exists:
        names = [partition_name(table.keys, check_specs(table, [s], "partitionSpecs")[0]) for s in missing]
        raise EntityNotFoundException(f"Partitions {names} do not exist.", PARTITION, names[0])
    todo, seen = [], set()
    for n, key in enumerate(keys):
        if key in found and key not in seen:
            seen.add(key)
            todo.append(n)
    with access.checked():  # PaimonDropPartitions covers the Glue delete
        errors = glue_partitions.delete_partitions(table.ref, [values[n] for n in todo])
    dropped = []
    for position, n in enumerate(todo):
        error = errors.get(position)
        if error is None:
            dropped.append(_spec(table.keys, values[n]))
        elif isinstance(error, EntityNotFoundException):
            missing.append(specs[n])  # deleted by someone else meanwhile
        else:
            raise error
    return dropped, [dict(s) for s in missing]


# ------------------------------------------------------------------------------ mark done
def mark_done(ref: TableRef, specs: Sequence[Any]) -> None:
    """Mark partitions done: Parameters ``paimon.done`` = ``true`` and ``paimon.done-time`` =
    now (epoch ms) on each existing one (each an atomic rewrite of its document and index
    entries); missing ones are skipped, as Paimon's HiveCatalog skips them."""
    table = open_partitioned("PaimonMarkDonePartitions", ref, writes=True)
    values = check_specs(table, specs, "specs")
    now = str(int(clock.now() * 1000))

    def change(doc: dict[str, Any]) -> dict[str, Any]:
        parameters = dict(doc.get("Parameters") or {})
        parameters[DONE], parameters[DONE_TIME] = "true", now
        return {**doc, "Parameters": parameters}

    for partition_values in {tuple(v): None for v in values}:
        try:
            with access.checked():
                glue_partitions.rewrite_partition_document(table.ref, list(partition_values), change)
        except EntityNotFoundException:
            continue


# ------------------------------------------------------------------------------ create with statistics
@dataclass(frozen=True)
class CreateResult:
    """What a CreatePartitions did: the specs created and those that existed."""

    created: list[dict[str, str]] = field(default_factory=list)
    existed: list[dict[str, str]] = field(default_factory=list)


def parse_statistics(statistics: Any) -> list[tuple[dict[str, str], reported_stats.Reported]]:
    """``partitionStatistics`` (PartitionStatistics objects: spec, recordCount, fileSizeInBytes,
    fileCount, lastFileCreationTime; a negative or absent field is unknown) as (spec, Reported)."""
    if not isinstance(statistics, list):
        raise InvalidInputException("partitionStatistics must be a list")
    out = []
    for n, entry in enumerate(statistics):
        if not isinstance(entry, dict) or not isinstance(entry.get("spec"), dict):
            raise InvalidInputException(f"partitionStatistics[{n}] must be an object with a spec")
        counts = []
        for name in ("recordCount", "fileSizeInBytes", "fileCount", "lastFileCreationTime"):
            value = entry.get(name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or not -(1 << 63) <= value < 1 << 63):
                raise InvalidInputException(f"partitionStatistics[{n}].{name} must be a long")
            counts.append(None if value is None or value < 0 else value)
        out.append((entry["spec"], reported_stats.Reported(*counts)))
    return out


def create(ref: TableRef, specs: Sequence[Any], ignore_if_exists: bool, statistics: Optional[Any],
           replace_statistics: Optional[bool]) -> CreateResult:
    """Register partitions (no data), then fold the reported statistics into the partitions the
    table holds (created or existing): all or none of the report (none when one names a
    partition the table does not hold, as Paimon's reference server does). With
    ``ignore_if_exists`` false and any existing, AlreadyExistsException and nothing is created."""
    table = open_partitioned("PaimonCreatePartitions", ref, writes=True)
    values = check_specs(table, specs, "partitionSpecs")
    reports = parse_statistics(statistics) if statistics is not None else []
    if statistics is not None and replace_statistics is None:
        raise InvalidInputException("replaceStatistics is required when partitionStatistics is present")
    report_values = check_specs(table, [spec for spec, _ in reports], "partitionStatistics.spec")
    keys = [glue_partitions.partition_key(table.view, v) for v in values]
    present = set(partition_store.get_partitions(table.view.item.uid, list(dict.fromkeys(keys))))
    existed = [specs[n] for n, key in enumerate(keys) if key in present]
    if existed and not ignore_if_exists:
        first = partition_name(table.keys, values[next(n for n, key in enumerate(keys) if key in present)])
        raise AlreadyExistsException(f"Partition {first} already exists.", PARTITION, first)
    todo, seen = [], set()
    for n, key in enumerate(keys):
        if key in present or key in seen:
            continue
        seen.add(key)
        todo.append(n)
    path = table.path.rstrip("/") if table.paimon else str(
        (table.view.doc.get("StorageDescriptor") or {}).get("Location") or "").rstrip("/")
    inputs = [{"Values": values[n], "StorageDescriptor": {"Location": path + "/" + partition_name(table.keys,
                                                                                               values[n])}}
              for n in todo]
    with access.checked():  # PaimonCreatePartitions covers the Glue writes
        errors = glue_partitions.create_partitions(table.ref, inputs) if inputs else {}
    created = []
    for position, n in enumerate(todo):
        error = errors.get(position)
        if error is None:
            created.append(_spec(table.keys, values[n]))
        elif isinstance(error, AlreadyExistsException):
            existed.append(specs[n])
        else:
            raise error
    if reports:
        by_key = {glue_partitions.partition_key(table.view, v): r for v, (_, r) in zip(report_values, reports)}
        reported_stats.report(table.view.item.uid, list(by_key.items()), bool(replace_statistics))
    return CreateResult(created, [dict(s) for s in existed])
