"""Governed-table objects through boto3: UpdateTableObjects validation, own writes, isolation,
snapshot stability, time travel at every commit, PartitionPredicate, paging, a transaction far
above DynamoDB's 100-item limit, DeleteTable."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from tests.integration.conftest import table_input
from tests.integration.lf_helpers import Governed, State, add, apply, delete, governed_input, unvalidated

US21 = ["2021", "us"]
ONE_MICROSECOND = timedelta(microseconds=1)


@pytest.fixture
def gov(endpoint) -> Governed:
    """A catalog of its own with one governed table ``objects`` (year int, region string)."""
    return Governed.create(endpoint)


def uri(name: str) -> str:
    return f"s3://lake/objects/{name}"


# ------------------------------------------------------------------------------- validation
def test_update_table_objects_validation(gov):
    lf = gov.lf
    raw = unvalidated(gov.endpoint, "lakeformation", gov.account)
    tx = lf.start_transaction()["TransactionId"]
    invalid = lf.exceptions.InvalidInputException

    def update(ops, table="objects", client=raw):
        client.update_table_objects(DatabaseName=gov.db, TableName=table, TransactionId=tx, WriteOperations=ops)

    with pytest.raises(invalid):
        update([])
    with pytest.raises(invalid):
        update([add(uri(f"many{i}"), US21) for i in range(101)])
    both = {**add(uri("both"), US21), **delete(uri("both"))}
    for op in (both, {}):
        with pytest.raises(invalid, match="exactly one"):
            update([op])
    for values in (["2021"], ["2021", "us", "extra"], [], ["twenty", "us"], ["2021.5", "us"]):
        with pytest.raises(invalid, match="(?i)PartitionValues|not a valid"):
            update([add(uri("bad"), values)])
    with pytest.raises(invalid, match="more than once"):
        update([add(uri("twice"), US21), add(uri("twice"), US21)])
    with pytest.raises(invalid, match="more than once"):
        update([add(uri("twice"), US21), delete(uri("twice"))])
    with pytest.raises(lf.exceptions.EntityNotFoundException):
        update([delete(uri("missing"), US21)])
    # A call that fails writes nothing, even the operations before the bad one.
    with pytest.raises(invalid):
        update([add(uri(f"ok{i}"), US21) for i in range(50)] + [add(uri("bad"), ["x", "us"])])
    assert gov.objects(TransactionId=tx) == {}
    # Adding an object twice is an error, in the same transaction or after it committed.
    update([add(uri("once"), US21, size=0)])
    with pytest.raises(invalid, match="already exists"):
        update([add(uri("once"), US21)])
    lf.commit_transaction(TransactionId=tx)
    tx = lf.start_transaction()["TransactionId"]
    with pytest.raises(invalid, match="already exists"):
        update([add(uri("once"), ["2022", "eu"])])
    update([delete(uri("once"))])
    with pytest.raises(lf.exceptions.EntityNotFoundException):
        update([delete(uri("once"))])
    lf.cancel_transaction(TransactionId=tx)
    # Only governed tables hold objects; unknown tables and databases are not found. (The
    # table exists before the transaction starts: one created later is not in its snapshot.)
    gov.glue.create_table(DatabaseName=gov.db, TableInput=table_input("plain"))
    tx = lf.start_transaction()["TransactionId"]
    with pytest.raises(invalid, match="GOVERNED"):
        update([add(uri("p"), ["2021"])], table="plain")
    with pytest.raises(invalid, match="GOVERNED"):
        lf.get_table_objects(DatabaseName=gov.db, TableName="plain")
    with pytest.raises(lf.exceptions.EntityNotFoundException):
        update([add(uri("p"), US21)], table="nope")
    with pytest.raises(lf.exceptions.EntityNotFoundException):
        lf.get_table_objects(DatabaseName="nope_db", TableName="objects")


def test_partition_value_types_are_checked(gov):
    keys = (("n", "bigint"), ("d", "date"), ("s", "string"))
    gov.glue.create_table(DatabaseName=gov.db, TableInput=governed_input("typed", keys))
    tx = gov.lf.start_transaction()["TransactionId"]
    good = ["-12", "2024-02-29", "anything"]
    gov.write(tx, [add(uri("typed/good"), good)], table="typed")
    for bad in (["1.5", "2024-02-29", "x"], ["1", "2023-02-29", "x"], ["1", "20240101", "x"]):
        with pytest.raises(gov.lf.exceptions.InvalidInputException):
            gov.write(tx, [add(uri("typed/bad"), bad)], table="typed")
    gov.lf.commit_transaction(TransactionId=tx)
    assert gov.objects(table="typed") == {uri("typed/good"): (tuple(good), "etag", 1)}


def test_unpartitioned_governed_table(gov):
    """Objects of a table without partition keys carry no PartitionValues and belong to no
    partition (their partition summary key would be empty, which DynamoDB refuses)."""
    gov.glue.create_table(DatabaseName=gov.db, TableInput=governed_input("flat", keys=()))
    plain_add = {"AddObject": {"Uri": uri("flat/a"), "ETag": "e1", "Size": 5}}
    gov.lf.update_table_objects(DatabaseName=gov.db, TableName="flat", WriteOperations=[plain_add])
    tx = gov.lf.start_transaction()["TransactionId"]
    gov.write(tx, [delete(uri("flat/a")), {"AddObject": {"Uri": uri("flat/b"), "ETag": "e2", "Size": 7}}], table="flat")
    assert gov.lf.commit_transaction(TransactionId=tx)["TransactionStatus"] == "COMMITTED"
    assert gov.objects(table="flat") == {uri("flat/b"): ((), "e2", 7)}
    assert gov.glue.get_partitions(DatabaseName=gov.db, TableName="flat")["Partitions"] == []


def test_object_keys_over_dynamodb_limit_are_refused_before_writing(gov):
    """Uri and PartitionValues within the model's limits can still make a key DynamoDB refuses;
    refused up front, the table stays writable (applying such a write after the commit point
    failed every roll-forward, and every later write to the table, with a 500)."""
    invalid = gov.lf.exceptions.InvalidInputException
    tx = gov.lf.start_transaction()["TransactionId"]

    def autocommit(ops):
        gov.lf.update_table_objects(DatabaseName=gov.db, TableName="objects", WriteOperations=ops)

    for call in (autocommit, lambda ops: gov.write(tx, ops)):
        with pytest.raises(invalid, match="1024 bytes"):
            call([add(uri("long-value"), ["2021", "r" * 1000])])
        with pytest.raises(invalid, match="1024 bytes"):
            call([add("s3://lake/" + "u" * 1000, US21)])
        with pytest.raises(invalid, match="1024 bytes"):
            call([delete("s3://lake/" + "数" * 400)])
    long_but_fitting = add(uri("a" * 300), ["2021", "r" * 500])
    gov.write(tx, [long_but_fitting])
    assert gov.lf.commit_transaction(TransactionId=tx)["TransactionStatus"] == "COMMITTED"
    autocommit([add(uri("after"), US21)])
    assert set(gov.objects()) == {uri("a" * 300), uri("after")}


# ----------------------------------------------------------- own writes, isolation, snapshots
def test_own_writes_isolation_and_commit(gov):
    lf = gov.lf
    base = [add(uri(f"base{i}"), US21, etag=f"b{i}") for i in range(3)]
    gov.commit_ops(base)
    state = apply({}, base)
    writer = lf.start_transaction()["TransactionId"]
    concurrent = lf.start_transaction(TransactionType="READ_ONLY")["TransactionId"]
    ops = [add(uri("new1"), ["2022", "eu"], etag="n1", size=10), add(uri("new2"), US21, etag="n2"),
           delete(uri("base0"))]
    gov.write(writer, ops)
    # Delete then add again in the same transaction: a replacement with the new ETag and values.
    gov.write(writer, [delete(uri("base1"))])
    gov.write(writer, [add(uri("base1"), ["2020", "eu"], etag="b1-v2", size=7)])
    # Add then delete in the same transaction: nothing at all.
    gov.write(writer, [add(uri("temp"), US21)])
    gov.write(writer, [delete(uri("temp"))])
    expected = apply(state, ops + [delete(uri("base1")), add(uri("base1"), ["2020", "eu"], etag="b1-v2", size=7)])
    assert gov.objects(TransactionId=writer) == expected
    assert gov.objects() == state
    assert gov.objects(TransactionId=concurrent) == state
    assert lf.commit_transaction(TransactionId=writer)["TransactionStatus"] == "COMMITTED"
    assert gov.objects() == expected
    assert gov.objects(TransactionId=concurrent) == state  # its snapshot predates the commit
    later = lf.start_transaction(TransactionType="READ_ONLY")["TransactionId"]
    assert gov.objects(TransactionId=later) == expected


def test_reader_snapshot_never_changes(gov):
    lf = gov.lf
    state: State = {}
    ops = [add(uri(f"s{i}"), [str(2018 + i % 4), "us"], etag=f"e{i}") for i in range(20)]
    gov.commit_ops(ops)
    state = apply(state, ops)
    reader = lf.start_transaction(TransactionType="READ_ONLY")["TransactionId"]
    seen = gov.objects(TransactionId=reader)
    assert seen == state
    for round_number in range(5):
        ops = [add(uri(f"r{round_number}-{i}"), US21) for i in range(10)]
        ops += [delete(uri(f"s{round_number * 4 + i}")) for i in range(4)]
        gov.commit_ops(ops)
        assert gov.objects(TransactionId=reader) == seen
        assert gov.objects(TransactionId=reader, PartitionPredicate="year = 2021") == \
            {k: v for k, v in seen.items() if v[0][0] == "2021"}
        assert gov.objects(TransactionId=reader, PartitionPredicate="year = 2021 AND region = 'us'",
                           page_size=2) == {k: v for k, v in seen.items() if v[0] == ("2021", "us")}
        assert gov.objects(TransactionId=reader, page_size=3) == seen
    assert len(gov.objects()) == 20 + 50 - 20


def test_update_conflicting_with_a_later_commit_fails(gov):
    lf = gov.lf
    gov.commit_ops([add(uri("shared"), US21)])
    first = lf.start_transaction()["TransactionId"]
    second = lf.start_transaction()["TransactionId"]
    gov.write(first, [delete(uri("shared")), add(uri("first-only"), US21)])
    gov.write(second, [add(uri("second-only"), US21)])
    gov.write(second, [delete(uri("shared"))])
    assert lf.commit_transaction(TransactionId=first)["TransactionStatus"] == "COMMITTED"
    with pytest.raises(lf.exceptions.ConcurrentModificationException):
        lf.commit_transaction(TransactionId=second)
    assert lf.describe_transaction(TransactionId=second)["TransactionDescription"]["TransactionStatus"] == "ABORTED"
    assert set(gov.objects()) == {uri("first-only")}
    # Writing an object another transaction changed after this one started fails at once.
    third = lf.start_transaction()["TransactionId"]
    gov.commit_ops([add(uri("shared"), US21, etag="again")])
    with pytest.raises(lf.exceptions.ConcurrentModificationException):
        gov.write(third, [delete(uri("shared"))])


# -------------------------------------------------------------------------------- time travel
def test_time_travel_at_every_commit(gov):
    lf = gov.lf
    start = datetime.now(timezone.utc) - timedelta(seconds=1)
    steps: list[list[dict]] = [
        [add(uri(f"a{i}"), [str(2019 + i % 3), ("us", "eu")[i % 2]], etag=f"a{i}", size=i) for i in range(12)],
        [delete(uri("a0")), delete(uri("a5")), add(uri("b0"), ["2022", "us"], etag="b0")],
        [delete(uri("a1")), add(uri("a1"), ["2030", "ap"], etag="a1-v2", size=99)],
        [add(uri(f"c{i}"), US21, etag=f"c{i}") for i in range(30)] + [add(uri("lead0"), ["02021", "us"])],
        [delete(uri(f"c{i}")) for i in range(0, 30, 2)],
        [add(uri("a0"), ["2019", "us"], etag="a0-back")],
        [delete(uri(f"a{i}")) for i in (1, 2, 3, 4, 6, 7, 8, 9, 10, 11)],
        [delete(uri("b0")), add(uri("d0"), ["2021", "eu"], etag="d0")],
    ]
    states: list[State] = [{}]
    ends = []
    for number, ops in enumerate(steps):
        tx = lf.start_transaction()["TransactionId"]
        for op in ops:  # one call per operation: every step is a multi-call transaction
            gov.write(tx, [op])
        if number % 3 == 1:  # and some interleave with an unrelated transaction that aborts
            other = lf.start_transaction()["TransactionId"]
            gov.write(other, [add(uri(f"aborted{number}"), US21)])
            lf.cancel_transaction(TransactionId=other)
        lf.commit_transaction(TransactionId=tx)
        ends.append(lf.describe_transaction(TransactionId=tx)["TransactionDescription"]["TransactionEndTime"])
        states.append(apply(states[-1], ops))
    assert ends == sorted(ends) and len(set(ends)) == len(ends)
    assert gov.objects(QueryAsOfTime=start) == {}
    assert gov.objects(QueryAsOfTime=ends[0] - ONE_MICROSECOND) == {}
    for number, end in enumerate(ends):
        assert gov.objects(QueryAsOfTime=end) == states[number + 1], f"right after commit {number}"
        assert gov.objects(QueryAsOfTime=end - ONE_MICROSECOND) == states[number], f"right before commit {number}"
        assert gov.objects(QueryAsOfTime=end, page_size=4) == states[number + 1]
        # Both partitions ("2021" and "02021" are distinct partitions with equal years), every page.
        pinned = "year = 2021 AND region = 'us'"
        for state, when in ((states[number + 1], end), (states[number], end - ONE_MICROSECOND)):
            expected = {k: v for k, v in state.items() if int(v[0][0]) == 2021 and v[0][1] == "us"}
            assert gov.objects(QueryAsOfTime=when, PartitionPredicate=pinned) == expected
            assert gov.objects(QueryAsOfTime=when, PartitionPredicate=pinned, page_size=3) == expected
    assert gov.objects() == states[-1]
    assert gov.objects(QueryAsOfTime=datetime.now(timezone.utc) + timedelta(days=1)) == states[-1]


def test_transaction_id_and_query_as_of_time_are_exclusive(gov):
    lf = gov.lf
    tx = lf.start_transaction(TransactionType="READ_ONLY")["TransactionId"]
    with pytest.raises(lf.exceptions.InvalidInputException):
        lf.get_table_objects(DatabaseName=gov.db, TableName="objects", TransactionId=tx,
                             QueryAsOfTime=datetime.now(timezone.utc))


# ------------------------------------------------------------------------ predicate and paging
def test_partition_predicate(gov):
    lf = gov.lf
    values = [(y, r) for y in ("999", "2019", "2020", "2021", "10000") for r in ("eu", "us", "ap")]
    ops = [add(uri(f"p{y}-{r}-{i}"), [y, r]) for y, r in values for i in range(2)]
    gov.commit_ops(ops)
    state = apply({}, ops)
    tx = lf.start_transaction()["TransactionId"]
    mine = [add(uri("own-2021-us"), US21), delete(uri("p2021-eu-0"))]
    gov.write(tx, mine)
    own_state = apply(state, mine)
    cases = {
        "year = 2021": lambda y, r: y == 2021,
        "year > 2020": lambda y, r: y > 2020,  # numeric: 10000 > 2020, 999 is not
        "year < 2020": lambda y, r: y < 2020,
        "year >= 2020 AND year <= 2021": lambda y, r: 2020 <= y <= 2021,
        "year >= 2020 AND region = 'us'": lambda y, r: y >= 2020 and r == "us",
        "region = 'eu'": lambda y, r: r == "eu",
        "region > 'eu' AND region <= 'us'": lambda y, r: "eu" < r <= "us",
        "year = 2021 AND region = 'us'": lambda y, r: (y, r) == (2021, "us"),
        "year = 1": lambda y, r: False,
        "": lambda y, r: True,
        # the GetPartitions grammar: parenthesised operands and exponent literals (issue #14)
        "(year) = (2021)": lambda y, r: y == 2021,
        "year = 2.021E3": lambda y, r: y == 2021,
        "((year)) >= 2.02e3 AND (region) = ('us')": lambda y, r: y >= 2020 and r == "us",
    }
    for predicate, keep in cases.items():
        for current, reads in ((state, {}), (own_state, {"TransactionId": tx})):
            expected = {k: v for k, v in current.items() if keep(int(v[0][0]), v[0][1])}
            assert gov.objects(PartitionPredicate=predicate, **reads) == expected, predicate
            assert gov.objects(PartitionPredicate=predicate, page_size=2, **reads) == expected, predicate
    for bad in ("year = 2021 OR year = 2020", "region LIKE 'u%'", "year <> 2021", "nokey = 1",
                "year = 'abc'", "year IN (2020, 2021)", "NOT year = 2021", "year BETWEEN 1 AND 3",
                "year = 2.5e-3"):
        with pytest.raises(lf.exceptions.InvalidInputException):
            lf.get_table_objects(DatabaseName=gov.db, TableName="objects", PartitionPredicate=bad)


def test_paging_is_complete_without_duplicates(gov):
    lf = gov.lf
    ops = [add(uri(f"pg{i:03d}"), [str(2015 + i % 7), ("us", "eu")[i % 2]], etag=f"e{i}") for i in range(230)]
    gov.commit_ops(ops)
    state = apply({}, ops)
    tx = lf.start_transaction()["TransactionId"]
    mine = [add(uri(f"own{i}"), [str(2015 + i % 9), "us"]) for i in range(25)] + \
           [delete(uri(f"pg{i:03d}")) for i in range(0, 230, 10)]
    gov.write(tx, mine)
    for size in (7, 1000):
        assert gov.objects(page_size=size) == state
        assert gov.objects(page_size=size, TransactionId=tx) == apply(state, mine)
    for reads in ({}, {"TransactionId": tx}):
        expected = {k: v for k, v in apply(state, mine if reads else []).items() if v[0][0] == "2016"}
        assert gov.objects(page_size=1, PartitionPredicate="year = 2016", **reads) == expected
    # Groups: each page lists partitions in order, objects grouped under their values.
    response = lf.get_table_objects(DatabaseName=gov.db, TableName="objects", MaxResults=1000)
    groups = [tuple(g["PartitionValues"]) for g in response["Objects"]]
    assert len(groups) == len(set(groups)) == 14
    assert sum(len(g["Objects"]) for g in response["Objects"]) == 230
    assert "NextToken" not in response
    # A token belongs to its query.
    first = lf.get_table_objects(DatabaseName=gov.db, TableName="objects", MaxResults=5)
    with pytest.raises(lf.exceptions.InvalidInputException):
        lf.get_table_objects(DatabaseName=gov.db, TableName="objects", MaxResults=5,
                             PartitionPredicate="year = 2016", NextToken=first["NextToken"])


# --------------------------------------------------------------------------- big transactions
def test_large_transaction_commits_atomically(gov):
    lf = gov.lf
    gov.commit_ops([add(uri(f"old{i}"), US21) for i in range(150)])
    tx = lf.start_transaction()["TransactionId"]
    ops = [add(uri(f"big/{i:04d}"), [str(2000 + i % 20), "us"], etag=f"e{i}", size=i) for i in range(2950)]
    ops += [delete(uri(f"old{i}")) for i in range(0, 100, 2)]
    for start in range(0, len(ops), 100):
        gov.write(tx, ops[start:start + 100])
        if start % 1000 == 0:
            assert len(gov.objects()) == 150
    assert len(ops) == 3000
    expected = apply(apply({}, [add(uri(f"old{i}"), US21) for i in range(150)]), ops)
    in_2021 = {k: v for k, v in expected.items() if v[0][0] == "2021"}
    assert gov.objects(TransactionId=tx, PartitionPredicate="year = 2021") == in_2021
    assert len(gov.objects()) == 150
    assert lf.commit_transaction(TransactionId=tx)["TransactionStatus"] == "COMMITTED"
    assert gov.objects() == expected
    end = lf.describe_transaction(TransactionId=tx)["TransactionDescription"]["TransactionEndTime"]
    assert len(gov.objects(QueryAsOfTime=end - ONE_MICROSECOND)) == 150
    assert gov.objects(PartitionPredicate="year = 2007") == \
        {k: v for k, v in expected.items() if v[0][0] == "2007"}


def test_delete_table_removes_its_objects(gov):
    gov.commit_ops([add(uri(f"gone{i}"), US21) for i in range(40)])
    assert len(gov.objects()) == 40
    gov.glue.delete_table(DatabaseName=gov.db, Name="objects")
    with pytest.raises(gov.lf.exceptions.EntityNotFoundException):
        gov.lf.get_table_objects(DatabaseName=gov.db, TableName="objects")
    gov.glue.create_table(DatabaseName=gov.db, TableInput=governed_input("objects"))
    assert gov.objects() == {}
    gov.commit_ops([add(uri("gone0"), ["2020", "eu"])])  # the same uri is new in the new table
    assert gov.objects() == {uri("gone0"): (("2020", "eu"), "etag", 1)}
