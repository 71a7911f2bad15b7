"""Partition summaries of governed tables: applied twice (a roll-forward after a crash) they
count once, and a stale apply after the commit's lock is gone changes nothing — the store
functions run in a separate process on the session's DynamoDB Local (the store reads its
settings at import), with a table uid of their own —, and a table whose objects predate them is
counted from its objects."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap


from infra.local.stack import REGION, REPO
from tests.integration.lf_helpers import Governed, add, listed_partitions

SCRIPT = textwrap.dedent('''
    import json, uuid
    from chalicelib.store import manifest_partitions as mp
    from chalicelib.store import transactions as store
    from chalicelib.store.dynamo.fence import Fenced
    from chalicelib.store.dynamo.models import ManifestPartitionVersionItem, ObjectItem, PendingWriteItem

    uid = uuid.uuid4().hex
    fence = store.fence_of(uid, "tx")  # both commits' applies run as "tx", holding the table's lock
    assert store.acquire_lock(uid, "tx", 0)
    A, B = "2020\\x01a\\x01", "2021\\x01b\\x01"

    def write(op, uri, key, values, size):
        return PendingWriteItem("tx", uri, op=op, uri=uri, values=values, partition_key=key, size=size)

    def state():
        now = {i.key: (i.files, i.size, i.changed_seq) for i in mp.partitions_in(uid, None, None)}
        versions = {i.key: (i.files, i.size, i.removed_seq) for i in ManifestPartitionVersionItem.query(uid)}
        return {"now": now, "versions": versions,
                "at": {str(s): [(p, v.files, v.size) for p in (A, B) for v in [mp.partition_at(uid, p, s)] if v]
                       for s in (5, 10, 15, 20, 25)}}

    first = [write("add", "u1", A, ["2020", "a"], 3), write("add", "u2", A, ["2020", "a"], 4),
             write("add", "u3", B, ["2021", "b"], 5)]
    for _ in range(2):  # the second run is the roll-forward of a crashed apply
        mp.apply_partition_changes(fence, uid, first, 10, {})
    after_first = {w.uri: ObjectItem(uid, w.uri, live=1, changed_seq=10, version_key=f"{w.partition_key}\\x01x\\x01{w.uri}",
                                     size=w.size, values=w.values) for w in first}
    second = [PendingWriteItem("tx", "u3", op="delete", uri="u3", values=["2021", "b"], partition_key=B),
              write("replace", "u1", B, ["2021", "b"], 7)]
    for _ in range(2):
        mp.apply_partition_changes(fence, uid, second, 20, after_first)
    applied = state()
    # A stalled applier of the first commit, resuming after the lock was released: fenced.
    store.release_lock(uid, "tx")
    try:
        mp.apply_partition_changes(fence, uid, first, 10, {})
        raise AssertionError("a stale apply was not fenced")
    except Fenced:
        pass
    assert state() == applied
    print(json.dumps(applied))
''')


def test_applying_a_commit_twice_counts_it_once(stack):
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=REPO, env=stack.env, check=True,
                         capture_output=True, text=True).stdout
    state = json.loads(out)
    a, b = "2020\x01a\x01", "2021\x01b\x01"
    # After commit 10: A holds u1, u2 (7 bytes), B holds u3 (5). After commit 20: u3 deleted,
    # u1 moved from A to B with 7 bytes: A holds u2 (4), B holds u1 (7).
    assert state["now"] == {a: [1, 4, 20], b: [1, 7, 20]}
    assert state["versions"] == {
        f"{a}\x01{10:020d}": [2, 7, 20], f"{a}\x01{20:020d}": [1, 4, None],
        f"{b}\x01{10:020d}": [1, 5, 20], f"{b}\x01{20:020d}": [1, 7, None],
    }
    assert state["at"] == {"5": [], "10": [[a, 2, 7], [b, 1, 5]], "15": [[a, 2, 7], [b, 1, 5]],
                           "20": [[a, 1, 4], [b, 1, 7]], "25": [[a, 1, 4], [b, 1, 7]]}


def test_a_table_without_complete_summaries_is_counted_from_its_objects(stack):
    """A governed table whose objects were committed before summaries existed has no marker:
    its partitions come from the objects, and later commits do not start partial summaries."""
    gov = Governed.create(stack.endpoint)
    gov.commit_ops([add("s3://lake/objects/a", ["2024", "us"], size=2), add("s3://lake/objects/b", ["2024", "us"], size=3)])
    ddb = stack.ddb_client()
    prefix = stack.table_prefix
    db_uid = ddb.get_item(TableName=f"{prefix}databases", ConsistentRead=True,
                          Key={"catalog": {"S": f"{REGION}\x01{gov.account}"}, "name": {"S": gov.db}})["Item"]["uid"]["S"]
    uid = ddb.get_item(TableName=f"{prefix}tables", ConsistentRead=True,
                       Key={"db_uid": {"S": db_uid}, "name": {"S": "objects"}})["Item"]["uid"]["S"]
    # As if the objects predated summaries: no marker, and summaries that would be wrong.
    ddb.delete_item(TableName=f"{prefix}lf_commit_state", Key={"name": {"S": f"summaries\x01{uid}"}})
    summary = ddb.query(TableName=f"{prefix}lf_partitions", KeyConditionExpression="table_uid = :u",
                        ExpressionAttributeValues={":u": {"S": uid}})["Items"]
    assert len(summary) == 1
    ddb.update_item(TableName=f"{prefix}lf_partitions", Key={"table_uid": {"S": uid}, "key": summary[0]["key"]},
                    UpdateExpression="SET files = :n", ExpressionAttributeValues={":n": {"N": "999"}})
    gov.commit_ops([add("s3://lake/objects/c", ["2025", "eu"], size=4)])
    expected = {("2024", "us"): (2, 5), ("2025", "eu"): (1, 4)}
    assert listed_partitions(gov.glue, gov.db, "objects") == expected
    one = gov.glue.get_partition(DatabaseName=gov.db, TableName="objects", PartitionValues=["2024", "us"])["Partition"]
    assert one["Parameters"] == {"numFiles": "2", "totalSize": "5"}
    assert len(ddb.query(TableName=f"{prefix}lf_partitions", KeyConditionExpression="table_uid = :u",
                         ExpressionAttributeValues={":u": {"S": uid}})["Items"]) == 1  # none started
