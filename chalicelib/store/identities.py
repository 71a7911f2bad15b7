"""Principals and their access keys (the IdentityItem table), for the admin command and SigV4.

A principal is an IAM-shaped ARN (``arn:aws:iam::<account>:user/<name>`` or ``:role/<name>``);
an access key is an AWS-shaped key id (``AKIA`` + 16 characters) with a 40-character secret,
stored only sealed (store/secret_box.py), bound to its key id and principal. ``lookup_key`` is
what every verified request calls: one GetItem, re-done every ``CACHE_SECONDS`` per process, so a
disabled or deleted key stops working within that many seconds on every server; the opened
secret is kept (it changes only when ``migrate_keys`` re-seals it, which a new entry follows).
"""

from __future__ import annotations

import logging
import re
import secrets
import string
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from chalicelib import clock
from chalicelib.errors import InternalServiceException
from chalicelib.store.dynamo.models import IdentityItem
from chalicelib.store.dynamo.retry import conditional
from chalicelib.store.secret_box import SecretBoxError, is_legacy, open_sealed, seal

log = logging.getLogger(__name__)

PRINCIPAL, KEY = "principal", "key"
ACTIVE, INACTIVE = "Active", "Inactive"
CACHE_SECONDS = 5.0
# IAM's own shapes: a 12-digit account, user/ or role/, then a name of IAM's characters.
_ARN = re.compile(r"arn:aws:iam::(\d{12}):(user|role)/([\w+=,.@-]{1,64})")
_KEY_ID = re.compile(r"AKIA[A-Z2-7]{16}")
_KEY_ID_ALPHABET = string.ascii_uppercase + "234567"
_SECRET_ALPHABET = string.ascii_letters + string.digits + "+/"


class IdentityError(Exception):
    """A refused admin operation (bad ARN, unknown principal or key, already exists)."""


@dataclass(frozen=True)
class Principal:
    """A principal: its ARN, account, whether it is an administrator, when it was created."""

    arn: str
    admin: bool
    created: float

    @property
    def account_id(self) -> str:
        """The 12-digit account of the ARN."""
        return self.arn.split(":")[4]


@dataclass(frozen=True)
class AccessKey:
    """An access key's public part (never its secret)."""

    key_id: str
    principal: str
    status: str
    created: float


@dataclass(frozen=True)
class VerifiedKey:
    """What SigV4 verification needs of an active key: its secret and its principal."""

    key_id: str
    principal: str
    secret: str

    @property
    def account_id(self) -> str:
        """The principal's account: the caller's account."""
        return self.principal.split(":")[4]


def check_arn(arn: str) -> str:
    """``arn`` if it is a user or role ARN of IAM's shape (IdentityError otherwise)."""
    if not _ARN.fullmatch(arn):
        raise IdentityError(f"principal must be arn:aws:iam::<12-digit account>:user/<name> or :role/<name>, "
                            f"not {arn[:200]!r}")
    return arn


def is_key_id(text: str) -> bool:
    """Whether ``text`` has the shape of an access key id this service issues."""
    return bool(_KEY_ID.fullmatch(text))


def create_principal(arn: str, admin: bool = False) -> Principal:
    """Create a principal (IdentityError if it exists)."""
    item = IdentityItem(PRINCIPAL, check_arn(arn), admin=1 if admin else None, created=clock.now())
    if not conditional(lambda: item.save(condition=IdentityItem.name.does_not_exist())):
        raise IdentityError(f"principal {arn} already exists")
    return Principal(arn, admin, item.created)


def list_principals() -> list[Principal]:
    """Every principal, by ARN."""
    return [Principal(item.name, bool(item.admin), item.created)
            for item in IdentityItem.query(PRINCIPAL, consistent_read=True)]


def get_principal(arn: str) -> Principal | None:
    """The principal with this ARN, or None."""
    try:
        item = IdentityItem.get(PRINCIPAL, arn, consistent_read=True)
    except IdentityItem.DoesNotExist:
        return None
    return Principal(item.name, bool(item.admin), item.created)


def list_keys(principal: str | None = None) -> list[AccessKey]:
    """Every access key (of one principal when ``principal`` is given), by key id."""
    keys = [AccessKey(item.name, item.principal or "", item.status or INACTIVE, item.created)
            for item in IdentityItem.query(KEY, consistent_read=True)]
    return [key for key in keys if principal is None or key.principal == principal]


def delete_principal(arn: str) -> int:
    """Delete a principal and every key it has; answers how many keys went with it."""
    if get_principal(arn) is None:
        raise IdentityError(f"principal {arn} does not exist")
    keys = list_keys(arn)
    for key in keys:  # keys first: a key must never outlive its principal
        IdentityItem(KEY, key.key_id).delete()
    IdentityItem(PRINCIPAL, arn).delete()
    return len(keys)


def create_key(principal: str) -> tuple[AccessKey, str]:
    """A new active key for ``principal``: (the key, its secret). The secret is shown only here."""
    if get_principal(principal) is None:
        raise IdentityError(f"principal {principal} does not exist (create it first)")
    while True:
        key_id = "AKIA" + "".join(secrets.choice(_KEY_ID_ALPHABET) for _ in range(16))
        secret = "".join(secrets.choice(_SECRET_ALPHABET) for _ in range(40))
        item = IdentityItem(KEY, key_id, principal=principal, status=ACTIVE,
                            secret=seal(secret, key_id, principal), created=clock.now())
        if conditional(lambda: item.save(condition=IdentityItem.name.does_not_exist())):
            return AccessKey(key_id, principal, ACTIVE, item.created), secret


def set_key_status(key_id: str, status: str) -> None:
    """Enable (Active) or disable (Inactive) a key."""
    if status not in (ACTIVE, INACTIVE):
        raise IdentityError(f"status must be {ACTIVE} or {INACTIVE}")
    item = IdentityItem(KEY, key_id)
    if not conditional(lambda: item.update(actions=[IdentityItem.status.set(status)],
                                           condition=IdentityItem.name.exists())):
        raise IdentityError(f"access key {key_id} does not exist")
    _forget(key_id)


def delete_key(key_id: str) -> None:
    """Delete a key."""
    if not conditional(lambda: IdentityItem(KEY, key_id).delete(condition=IdentityItem.name.exists())):
        raise IdentityError(f"access key {key_id} does not exist")
    _forget(key_id)


def has_admin() -> bool:
    """Whether any administrator principal exists."""
    return any(principal.admin for principal in list_principals())


@dataclass(frozen=True)
class Migration:
    """What ``migrate_keys`` did: key ids re-sealed, already current, changed meanwhile (left for a
    re-run), and those whose secret did not open (with why)."""

    migrated: list[str]
    current: list[str]
    changed: list[str]
    failed: dict[str, str]


def migrate_keys() -> Migration:
    """Re-seal every key whose secret is still in the legacy format 1 as format 2 (bound to its
    principal too), with the key encryption key this process is configured with. Each write is
    conditional on the item still holding the sealed bytes and principal that were read, so a key
    deleted, re-sealed or changed meanwhile is never overwritten (it is reported as changed);
    running it again is harmless."""
    migration = Migration([], [], [], {})
    for item in IdentityItem.query(KEY, consistent_read=True):
        old = bytes(item.secret) if item.secret is not None else b""
        if not is_legacy(old):
            migration.current.append(item.name)
            continue
        if not item.principal:
            migration.failed[item.name] = "the key names no principal"
            continue
        principal = item.principal
        try:
            new = seal(open_sealed(old, item.name, principal), item.name, principal)
        except SecretBoxError as error:
            migration.failed[item.name] = str(error)
            continue
        written = conditional(lambda: item.update(
            actions=[IdentityItem.secret.set(new)],
            condition=(IdentityItem.secret == old) & (IdentityItem.principal == principal)))
        (migration.migrated if written else migration.changed).append(item.name)
        _forget(item.name)
    return migration


# -- verification -------------------------------------------------------------------------------
# Three caches, so the per-request cost is a dict lookup and an unknown key id costs nothing lasting:
# - _known: active keys, re-read (one GetItem) every CACHE_SECONDS, so disabling, deleting or a
#   deleted principal takes effect within that time; bounded by the keys that exist;
# - _unknown: key ids that are not usable, also for CACHE_SECONDS; bounded on its own, evicting its
#   oldest, so a flood of random key ids cannot push real keys out of _known;
# - _opened: opened secrets by (key id, principal, sealed bytes), without expiry: a key's sealed
#   secret changes only when `keys migrate` re-seals it, so KMS Decrypt runs once per key and
#   process, not once per CACHE_SECONDS. The principal is part of the entry because the box is
#   bound to it: an item pointed at another principal must be opened (and refused) again.
_known: dict[str, tuple[float, VerifiedKey]] = {}
_unknown: OrderedDict[str, float] = OrderedDict()
_opened: dict[tuple[str, str, bytes], str] = {}
_cache_lock = threading.Lock()
_UNKNOWN_LIMIT = 10_000


def _forget(key_id: str) -> None:
    with _cache_lock:
        _known.pop(key_id, None)
        _unknown.pop(key_id, None)
        for entry in [entry for entry in _opened if entry[0] == key_id]:
            del _opened[entry]


def _open_secret(key_id: str, principal: str, sealed: bytes) -> str:
    """The key's secret; a secret this deployment cannot open (a key file's on Lambda, KMS
    refusing, bytes altered or moved to another item) is the operator's problem: logged with its
    cause, answered as a 500 naming authentication, and nothing is cached, so fixing the setup
    takes effect at once."""
    try:
        secret = open_sealed(sealed, key_id, principal)
        if is_legacy(sealed):  # once per key and process: the opened secret is cached
            log.warning("the secret of %s is sealed in the legacy format 1: re-seal it with "
                        "`python -m infra.identities keys migrate`", key_id)
        return secret
    except SecretBoxError as error:
        log.error("authentication is misconfigured: the secret of %s does not open: %s", key_id, error)
        raise InternalServiceException(
            "Authentication is misconfigured on this service: the access key's secret cannot be opened. "
            "The service log names the cause.") from None


def lookup_key(key_id: str) -> VerifiedKey | None:
    """The active key ``key_id`` with its opened secret, or None (unknown, disabled, or its
    principal deleted). One consistent GetItem per key and CACHE_SECONDS per process."""
    now = time.monotonic()
    with _cache_lock:
        known = _known.get(key_id)
        if known is not None and now - known[0] < CACHE_SECONDS:
            return known[1]
        refused_at = _unknown.get(key_id)
        if refused_at is not None and now - refused_at < CACHE_SECONDS:
            return None
    found: VerifiedKey | None = None
    sealed = b""
    if is_key_id(key_id):
        try:
            item = IdentityItem.get(KEY, key_id, consistent_read=True)
        except IdentityItem.DoesNotExist:
            item = None
        if item is not None and item.status == ACTIVE and item.secret is not None and item.principal:
            sealed = bytes(item.secret)
            with _cache_lock:
                secret = _opened.get((key_id, item.principal, sealed))
            if secret is None:
                secret = _open_secret(key_id, item.principal, sealed)  # raises (caching nothing) if it cannot open
            found = VerifiedKey(key_id, item.principal, secret)
    if found is None:
        with _cache_lock:
            if _known.pop(key_id, None) is not None:  # disabled or deleted since: drop its opened secret too
                for entry in [entry for entry in _opened if entry[0] == key_id]:
                    del _opened[entry]
            _unknown[key_id] = now
            while len(_unknown) > _UNKNOWN_LIMIT:
                _unknown.popitem(last=False)
    else:
        with _cache_lock:
            _unknown.pop(key_id, None)
            _opened[(key_id, found.principal, sealed)] = found.secret
            _known[key_id] = (now, found)
    return found
