"""Manage the service's identities: principals, access keys, Paimon bearer tokens.

Works against whatever store the server uses, through the same environment variables
(GLUE_DDB_ENDPOINT for DynamoDB Local, GLUE_TABLE_PREFIX, AWS_REGION; without GLUE_DDB_ENDPOINT, real
DynamoDB with your AWS credentials) and the same key encryption key (GLUE_AUTH_KEY_FILE locally,
GLUE_AUTH_KMS_KEY_ID deployed). A secret access key is printed once, when it is created.

    python -m infra.identities principals create arn:aws:iam::111122223333:user/alice [--admin]
    python -m infra.identities principals list | delete ARN
    python -m infra.identities keys create ARN          # prints the key id and its secret, once
    python -m infra.identities keys list [--principal ARN]
    python -m infra.identities keys disable|enable|delete AKID
    python -m infra.identities keys migrate             # re-seal secrets still in the legacy format 1
    python -m infra.identities tokens create --key AKID [--region us-east-1] [--days 30]
    python -m infra.identities admin bootstrap [--arn ARN]   # the first administrator, if none exists
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time

from chalicelib.errors import ServiceError
from chalicelib.protocol.sigv4 import make_token
from chalicelib.store import identities, secret_box
from chalicelib.store.dynamo import config
from chalicelib.store.dynamo.config import REGION

DEFAULT_ADMIN = "arn:aws:iam::123456789012:user/admin"


def _print_key(key: identities.AccessKey, secret: str) -> None:
    print(json.dumps({"AccessKeyId": key.key_id, "SecretAccessKey": secret, "Principal": key.principal,
                      "Status": key.status}, indent=2))
    print("The secret access key is shown only now: store it safely.", file=sys.stderr)


def _bootstrap(arn: str) -> int:
    if identities.has_admin():
        print("an administrator exists already; nothing created", file=sys.stderr)
        return 0
    if identities.get_principal(arn) is None:
        identities.create_principal(arn, admin=True)
    else:
        print(f"{arn} exists but is no administrator; choose another --arn", file=sys.stderr)
        return 1
    key, secret = identities.create_key(arn)
    _print_key(key, secret)
    return 0


# The commands that seal a secret.
_SEALING = {("keys", "create"), ("admin", "bootstrap"), ("keys", "migrate")}


def _check_sealing_key() -> None:
    """Against real DynamoDB a new secret must be sealed with KMS: the Lambda opens secrets only
    with KMS, so one sealed with a local key file would be stored yet never work."""
    if config.ENDPOINT is None and secret_box.kms_key_id() is None:
        raise identities.IdentityError(
            "GLUE_AUTH_KMS_KEY_ID is not set: against real DynamoDB (no GLUE_DDB_ENDPOINT) secrets are sealed "
            "with the deployment's KMS key; set GLUE_AUTH_KMS_KEY_ID=alias/glue-catalog-identities")


def _migrate() -> int:
    """Re-seal legacy secrets; one line per key touched, then a summary. Exit status 1 if a
    secret did not open or a key changed meanwhile (run it again after fixing the cause)."""
    migration = identities.migrate_keys()
    for key_id in migration.migrated:
        print(json.dumps({"AccessKeyId": key_id, "Migrated": True}))
    for key_id in migration.changed:
        print(json.dumps({"AccessKeyId": key_id, "Migrated": False, "Reason": "changed meanwhile: run it again"}))
    for key_id, reason in migration.failed.items():
        print(json.dumps({"AccessKeyId": key_id, "Migrated": False, "Reason": reason}))
    print(f"{len(migration.migrated)} re-sealed, {len(migration.current)} already current, "
          f"{len(migration.changed) + len(migration.failed)} left", file=sys.stderr)
    return 1 if migration.changed or migration.failed else 0


def run(args: argparse.Namespace) -> int:
    """Carry out one parsed command; the exit status."""
    command = (args.group, args.action)
    if command in _SEALING:
        _check_sealing_key()
    if command == ("principals", "create"):
        principal = identities.create_principal(args.arn, admin=args.admin)
        print(json.dumps({"Arn": principal.arn, "Admin": principal.admin}))
    elif command == ("principals", "list"):
        for principal in identities.list_principals():
            print(json.dumps({"Arn": principal.arn, "Admin": principal.admin, "Created": iso_time(principal.created)}))
    elif command == ("principals", "delete"):
        print(f"deleted {args.arn} and {identities.delete_principal(args.arn)} access key(s)")
    elif command == ("keys", "create"):
        _print_key(*identities.create_key(args.arn))
    elif command == ("keys", "list"):
        for key in identities.list_keys(args.principal):
            print(json.dumps({"AccessKeyId": key.key_id, "Principal": key.principal, "Status": key.status,
                              "Created": iso_time(key.created)}))
    elif command in (("keys", "disable"), ("keys", "enable")):
        identities.set_key_status(args.key_id, identities.ACTIVE if args.action == "enable" else identities.INACTIVE)
        print(f"{args.key_id}: {'Active' if args.action == 'enable' else 'Inactive'}")
    elif command == ("keys", "delete"):
        identities.delete_key(args.key_id)
        print(f"deleted {args.key_id}")
    elif command == ("keys", "migrate"):
        return _migrate()
    elif command == ("tokens", "create"):
        verified = identities.lookup_key(args.key)
        if verified is None:
            raise identities.IdentityError(f"access key {args.key} does not exist or is not Active")
        print(make_token(verified.key_id, verified.secret, args.region, int(time.time() + args.days * 86400)))
    elif command == ("admin", "bootstrap"):
        return _bootstrap(args.arn)
    return 0


def iso_time(epoch: float) -> str:
    """An epoch second as ISO 8601 UTC, as AWS prints CreateDate (``2026-01-02T03:04:05Z``)."""
    return datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parser() -> argparse.ArgumentParser:
    """The command line."""
    top = argparse.ArgumentParser(prog="python -m infra.identities", description=__doc__,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    groups = top.add_subparsers(dest="group", required=True)
    principals = groups.add_parser("principals").add_subparsers(dest="action", required=True)
    create = principals.add_parser("create")
    create.add_argument("arn")
    create.add_argument("--admin", action="store_true")
    principals.add_parser("list")
    principals.add_parser("delete").add_argument("arn")
    keys = groups.add_parser("keys").add_subparsers(dest="action", required=True)
    keys.add_parser("create").add_argument("arn")
    keys.add_parser("list").add_argument("--principal")
    for action in ("disable", "enable", "delete"):
        keys.add_parser(action).add_argument("key_id")
    keys.add_parser("migrate", help="re-seal every secret still in the legacy format 1 as format 2")
    tokens = groups.add_parser("tokens").add_subparsers(dest="action", required=True)
    token = tokens.add_parser("create", formatter_class=argparse.ArgumentDefaultsHelpFormatter,
                              help="a Paimon bearer token for an Active access key")
    token.add_argument("--key", required=True, help="the access key id the token signs for")
    token.add_argument("--region", default=REGION, help="the catalog region the token is for")
    token.add_argument("--days", type=float, default=30.0, help="days until the token expires")
    admin = groups.add_parser("admin").add_subparsers(dest="action", required=True)
    admin.add_parser("bootstrap").add_argument("--arn", default=DEFAULT_ADMIN)
    return top


def main(argv: list[str] | None = None) -> int:
    """Entry point: parse, run, and turn a refused operation, a secret that does not open and a
    store or KMS that cannot be reached into one line and exit status 1."""
    from botocore.exceptions import BotoCoreError, ClientError
    from pynamodb.exceptions import PynamoDBException

    args = parser().parse_args(argv)
    try:
        return run(args)
    except (identities.IdentityError, secret_box.SecretBoxError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
    except ServiceError as error:
        print(f"error: {error.code}: {error.message}", file=sys.stderr)
    except (PynamoDBException, BotoCoreError, ClientError) as error:
        cause = getattr(error, "cause", None) or error
        message = " ".join(str(cause).split())  # one line, whatever the library wrapped
        print(f"error: the identities store ({config.ENDPOINT or 'DynamoDB'}) refused or cannot be reached: "
              f"{message}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
