"""The sealed secrets of access keys (chalicelib/store/secret_box.py): format 2 (AES-256-GCM under a
fresh data key, wrapped by the key file or by KMS, bound to the key id and principal) round-trips
and refuses every altered byte and every swapped binding; the legacy format 1 that earlier
releases stored still opens (fixtures frozen from that code, issue #45) and is never written."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

import pytest
from botocore.exceptions import ClientError

from chalicelib.store import identities, secret_box
from tests.legacy_secrets import FIXTURE_KEK, KEY_ID, SECRET, V1_FILE, V1_KMS, V1_KMS_BLOB, V1_KMS_DATA_KEY

OTHER_KEY_ID = "AKIAOTHEROTHEROTHERX"
PRINCIPAL, OTHER_PRINCIPAL = "arn:aws:iam::111122223333:user/alice", "arn:aws:iam::111122223333:user/admin"
KMS_KEY = "alias/glue-catalog-identities"

class FakeKms:
    """KMS as far as envelope encryption sees it: a data key unwraps only with the KMS key and the
    exact EncryptionContext it was generated under (InvalidCiphertextException otherwise)."""

    def __init__(self) -> None:
        self.keys: dict[bytes, tuple[str, dict[str, str], bytes]] = {}
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def generate_data_key(self, **call: Any) -> dict[str, Any]:
        self.calls.append(("GenerateDataKey", call))
        assert call["KeySpec"] == "AES_256"
        plaintext, blob = os.urandom(32), b"blob-" + os.urandom(16)
        self.keys[blob] = (call["KeyId"], dict(call["EncryptionContext"]), plaintext)
        return {"Plaintext": plaintext, "CiphertextBlob": blob, "KeyId": call["KeyId"]}

    def decrypt(self, **call: Any) -> dict[str, Any]:
        self.calls.append(("Decrypt", call))
        found = self.keys.get(call["CiphertextBlob"])
        if found is None or found[1] != call.get("EncryptionContext", {}) or call.get("KeyId", found[0]) != found[0]:
            raise ClientError({"Error": {"Code": "InvalidCiphertextException", "Message": ""}}, "Decrypt")
        return {"Plaintext": found[2], "KeyId": found[0]}


@pytest.fixture
def key_file(tmp_path: Path, configure: Callable[..., Any]) -> Path:
    """A key file holding FIXTURE_KEK, and no KMS."""
    path = tmp_path / "auth.key"
    path.write_bytes(FIXTURE_KEK)
    path.chmod(0o600)
    configure(auth_kms_key_id=None, lambda_function_name=None, auth_key_file=str(path))
    return path


@pytest.fixture
def kms(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, configure: Callable[..., Any]) -> FakeKms:
    fake = FakeKms()
    fake.keys[V1_KMS_BLOB] = (KMS_KEY, {"access_key_id": KEY_ID}, V1_KMS_DATA_KEY)
    monkeypatch.setattr(secret_box, "_kms", lambda: fake)
    configure(auth_kms_key_id=KMS_KEY)
    configure(auth_key_file=str(tmp_path / "never.key"))  # KMS only: no key file made
    return fake


def _refused(sealed: bytes, key_id: str = KEY_ID, principal: str = PRINCIPAL) -> None:
    with pytest.raises(secret_box.SecretBoxError):
        secret_box.open_sealed(sealed, key_id, principal)


def _flipped(sealed: bytes, index: int) -> bytes:
    return sealed[:index] + bytes([sealed[index] ^ 0x01]) + sealed[index + 1:]


def _parts(sealed: bytes) -> dict[str, slice]:
    """Where each part of a format-2 box lies (the layout the module docstring draws)."""
    end = 4 + int.from_bytes(sealed[2:4], "big")
    return {"header": slice(0, 4), "wrapped key": slice(4, end), "nonce": slice(end, end + 12),
            "ciphertext": slice(end + 12, len(sealed) - 16), "tag": slice(len(sealed) - 16, len(sealed))}


# -- the legacy format 1 ------------------------------------------------------------------------

def test_a_format_1_box_from_the_key_file_still_opens(key_file: Path) -> None:
    assert secret_box.is_legacy(V1_FILE)
    # Format 1 was bound to the key id only: any principal opens it (migration then binds one).
    assert secret_box.open_sealed(V1_FILE, KEY_ID, PRINCIPAL) == SECRET
    _refused(V1_FILE, key_id=OTHER_KEY_ID)
    _refused(V1_FILE.replace(b'"c":"R4k2', b'"c":"R4k3'))
    _refused(V1_FILE.replace(b'"t":"RtvI', b'"t":"RtvJ'))
    _refused(V1_FILE.replace(b'"v":1', b'"v":3'))
    _refused(V1_FILE[:-2])
    for malformed in (b"{}", b'{"v":1,"kek":"file","dk":[]}', b'{"v":1,"kek":"tpm"}', b'{"v":' + b"[" * 100_000,
                      V1_FILE.replace(b'"n":"H6BL', b'"n":"H6B!')):
        _refused(malformed)


def test_a_format_1_box_does_not_open_with_another_key_file(key_file: Path) -> None:
    key_file.write_bytes(bytes(32))
    _refused(V1_FILE)


def test_a_format_1_box_from_kms_still_opens(kms: FakeKms) -> None:
    assert secret_box.open_sealed(V1_KMS, KEY_ID, PRINCIPAL) == SECRET
    assert kms.calls == [("Decrypt", {"CiphertextBlob": V1_KMS_BLOB, "EncryptionContext": {"access_key_id": KEY_ID},
                                      "KeyId": KMS_KEY})]
    _refused(V1_KMS, key_id=OTHER_KEY_ID)  # KMS refuses the other encryption context


def test_a_legacy_secret_verifies_with_a_warning_to_migrate(key_file: Path, monkeypatch: pytest.MonkeyPatch,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    item = SimpleNamespace(status=identities.ACTIVE, secret=V1_FILE, principal=PRINCIPAL)
    monkeypatch.setattr(identities.IdentityItem, "get", lambda *_, **__: item)
    identities._forget(KEY_ID)
    with caplog.at_level("WARNING", logger=identities.log.name):
        assert identities.lookup_key(KEY_ID) == identities.VerifiedKey(KEY_ID, PRINCIPAL, SECRET)
    assert "legacy format 1" in caplog.text and "keys migrate" in caplog.text
    identities._forget(KEY_ID)


def test_format_1_is_never_written(key_file: Path, kms: FakeKms, configure: Callable[..., Any]) -> None:
    assert secret_box.seal(SECRET, KEY_ID, PRINCIPAL)[0] == secret_box.VERSION == 2
    configure(auth_kms_key_id=None, auth_key_file=str(key_file))
    assert secret_box.seal(SECRET, KEY_ID, PRINCIPAL)[0] == 2


# -- format 2 with the key file -----------------------------------------------------------------

def test_format_2_round_trips_with_the_key_file(key_file: Path) -> None:
    sealed = secret_box.seal(SECRET, KEY_ID, PRINCIPAL)
    assert not secret_box.is_legacy(sealed) and SECRET.encode() not in sealed
    assert sealed[:4] == bytes([2, 1, 0, 60])  # version, key file, a 60-byte wrapped key
    assert len(sealed) == 4 + 60 + 12 + len(SECRET) + 16
    assert secret_box.open_sealed(sealed, KEY_ID, PRINCIPAL) == SECRET
    assert secret_box.seal(SECRET, KEY_ID, PRINCIPAL) != sealed  # a fresh data key and nonces each time


def test_a_key_file_is_created_private_on_first_use(tmp_path: Path, configure: Callable[..., Any]) -> None:
    configure(auth_kms_key_id=None, lambda_function_name=None)
    path = tmp_path / "data" / "auth.key"
    configure(auth_key_file=str(path))
    sealed = secret_box.seal(SECRET, KEY_ID, PRINCIPAL)
    assert os.stat(path).st_mode & 0o777 == 0o600 and len(path.read_bytes()) == 32
    assert secret_box.open_sealed(sealed, KEY_ID, PRINCIPAL) == SECRET


def test_every_altered_byte_of_a_format_2_box_is_detected(key_file: Path) -> None:
    sealed = secret_box.seal(SECRET, KEY_ID, PRINCIPAL)
    assert set(_parts(sealed)) == {"header", "wrapped key", "nonce", "ciphertext", "tag"}
    for index in range(len(sealed)):
        _refused(_flipped(sealed, index))
    for cut in (0, 1, 3, 4, 63, 64, 75, len(sealed) - 1):
        _refused(sealed[:cut])
    _refused(sealed + b"\0")


@pytest.mark.parametrize("part", ["wrapped key", "nonce", "ciphertext", "tag"])
def test_each_part_is_authenticated(key_file: Path, part: str) -> None:
    sealed = secret_box.seal(SECRET, KEY_ID, PRINCIPAL)
    where = _parts(sealed)[part]
    altered = sealed[:where.start] + bytes(b ^ 0xFF for b in sealed[where]) + sealed[where.stop:]
    with pytest.raises(secret_box.SecretBoxError, match="does not open"):
        secret_box.open_sealed(altered, KEY_ID, PRINCIPAL)


def test_a_format_2_box_is_bound_to_its_key_id_and_principal(key_file: Path) -> None:
    sealed = secret_box.seal(SECRET, KEY_ID, PRINCIPAL)
    _refused(sealed, key_id=OTHER_KEY_ID)
    _refused(sealed, principal=OTHER_PRINCIPAL)  # a key item pointed at the administrator does not open
    _refused(sealed, key_id=PRINCIPAL, principal=KEY_ID)


def test_a_wrapped_data_key_cannot_be_moved_between_boxes(key_file: Path) -> None:
    mine = secret_box.seal(SECRET, KEY_ID, PRINCIPAL)
    theirs = secret_box.seal("t" * 40, OTHER_KEY_ID, PRINCIPAL)
    mine_parts, their_parts = _parts(mine), _parts(theirs)
    swapped = mine[:4] + theirs[their_parts["wrapped key"]] + mine[mine_parts["nonce"].start:]
    _refused(swapped)
    _refused(swapped, key_id=OTHER_KEY_ID)


def test_a_format_2_box_does_not_open_with_another_key_file(key_file: Path) -> None:
    sealed = secret_box.seal(SECRET, KEY_ID, PRINCIPAL)
    key_file.write_bytes(bytes(32))
    with pytest.raises(secret_box.SecretBoxError, match="does not open"):
        secret_box.open_sealed(sealed, KEY_ID, PRINCIPAL)
    key_file.write_bytes(FIXTURE_KEK[:16])
    with pytest.raises(secret_box.SecretBoxError, match="32-byte key"):
        secret_box.open_sealed(sealed, KEY_ID, PRINCIPAL)
    key_file.write_bytes(FIXTURE_KEK)
    key_file.chmod(0o644)
    with pytest.raises(secret_box.SecretBoxError, match="owner only"):
        secret_box.open_sealed(sealed, KEY_ID, PRINCIPAL)


def test_unknown_formats_are_refused(key_file: Path) -> None:
    sealed = secret_box.seal(SECRET, KEY_ID, PRINCIPAL)
    for version in (0, 1, 3, 255):
        _refused(bytes([version]) + sealed[1:])
    for wrapping in (0, 3):
        _refused(sealed[:1] + bytes([wrapping]) + sealed[2:])
    for length in (0, 4, 59, 61):  # a wrapped key's length the key file never writes (4: a too-short nonce)
        _refused(sealed[:2] + length.to_bytes(2, "big") + sealed[4:])
    _refused(b"")


# -- format 2 with KMS --------------------------------------------------------------------------

def test_format_2_round_trips_with_kms_and_an_encryption_context(kms: FakeKms, tmp_path: Path) -> None:
    sealed = secret_box.seal(SECRET, KEY_ID, PRINCIPAL)
    context = {"purpose": secret_box.PURPOSE, "access_key_id": KEY_ID, "principal": PRINCIPAL}
    assert kms.calls == [("GenerateDataKey", {"KeyId": KMS_KEY, "KeySpec": "AES_256", "EncryptionContext": context})]
    assert sealed[:2] == bytes([2, 2])
    assert secret_box.open_sealed(sealed, KEY_ID, PRINCIPAL) == SECRET
    name, call = kms.calls[-1]
    assert name == "Decrypt" and call["EncryptionContext"] == context and call["KeyId"] == KMS_KEY
    assert not (tmp_path / "never.key").exists()


def test_every_altered_byte_of_a_kms_box_is_detected(kms: FakeKms) -> None:
    sealed = secret_box.seal(SECRET, KEY_ID, PRINCIPAL)
    for index in range(len(sealed)):
        _refused(_flipped(sealed, index))


def test_kms_refuses_a_data_key_moved_to_another_identity(kms: FakeKms) -> None:
    sealed = secret_box.seal(SECRET, KEY_ID, PRINCIPAL)
    _refused(sealed, key_id=OTHER_KEY_ID)
    _refused(sealed, principal=OTHER_PRINCIPAL)
    refusals = [call for name, call in kms.calls if name == "Decrypt"]
    assert [call["EncryptionContext"]["access_key_id"] for call in refusals] == [OTHER_KEY_ID, KEY_ID]
    theirs = secret_box.seal("t" * 40, OTHER_KEY_ID, PRINCIPAL)
    mine_parts, their_parts = _parts(sealed), _parts(theirs)
    _refused(theirs[:their_parts["wrapped key"].stop] + sealed[mine_parts["nonce"].start:])


def test_a_data_key_wrapped_by_another_kms_key_is_refused(kms: FakeKms) -> None:
    sealed = secret_box.seal(SECRET, KEY_ID, PRINCIPAL)
    blob = sealed[_parts(sealed)["wrapped key"]]
    kms.keys[blob] = ("arn:aws:kms:us-east-1:999999999999:key/elsewhere", *kms.keys[blob][1:])
    with pytest.raises(secret_box.SecretBoxError, match="KMS Decrypt was refused.*InvalidCiphertext"):
        secret_box.open_sealed(sealed, KEY_ID, PRINCIPAL)


def test_cryptography_is_imported_on_first_use_only() -> None:
    import subprocess

    code = ("import sys, chalicelib.store.secret_box, chalicelib.store.identities; "
            "print(any(m.startswith('cryptography') for m in sys.modules))")
    answer = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            cwd=Path(__file__).resolve().parents[2])
    assert answer.stdout.strip() == "False"


# -- migration (identities.migrate_keys; against DynamoDB Local: tests/integration/test_auth.py) ---

def _key_item(key_id: str, secret: bytes | None, principal: str | None = PRINCIPAL) -> identities.IdentityItem:
    return identities.IdentityItem(identities.KEY, key_id, principal=principal, status=identities.ACTIVE,
                                   secret=secret, created=0.0)


def test_migration_reseals_legacy_boxes_conditionally(key_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pynamodb.exceptions import UpdateError

    current = secret_box.seal("c" * 40, OTHER_KEY_ID, PRINCIPAL)
    items = [_key_item(KEY_ID, V1_FILE), _key_item(OTHER_KEY_ID, current),
             _key_item("AKIAQQQQQQQQQQQQQQQQ", V1_FILE),  # made for KEY_ID: does not open as this one
             _key_item("AKIARRRRRRRRRRRRRRRR", V1_FILE, principal=None),
             _key_item("AKIASSSSSSSSSSSSSSSS", V1_FILE)]
    items[-1].name = KEY_ID  # a second copy, whose write will find the item changed
    monkeypatch.setattr(identities.IdentityItem, "query", lambda *_, **__: iter(items))
    writes: list[tuple[str, bytes, str]] = []

    def update(item: identities.IdentityItem, actions: list[Any], condition: Any) -> None:
        names: dict[str, str] = {}
        values: dict[str, Any] = {}
        expression = condition.serialize(names, values)
        assert sorted(names) == ["principal", "secret"] and " AND " in expression
        assert {"B": V1_FILE} in values.values() and {"S": PRINCIPAL} in values.values()
        (action,) = actions
        if writes:  # the second write of KEY_ID: someone re-sealed or deleted it meanwhile
            error = ClientError({"Error": {"Code": "ConditionalCheckFailedException", "Message": ""}}, "UpdateItem")
            raise UpdateError("Failed to update item", cause=error)
        sealed = action.values[1].value["B"]
        writes.append((item.name, sealed, PRINCIPAL))

    monkeypatch.setattr(identities.IdentityItem, "update", update)
    migration = identities.migrate_keys()
    assert migration.migrated == [KEY_ID] and migration.current == [OTHER_KEY_ID] and migration.changed == [KEY_ID]
    assert set(migration.failed) == {"AKIAQQQQQQQQQQQQQQQQ", "AKIARRRRRRRRRRRRRRRR"}
    ((key_id, sealed, principal),) = writes
    assert sealed[:2] == bytes([2, 1]) and secret_box.open_sealed(sealed, key_id, principal) == SECRET
