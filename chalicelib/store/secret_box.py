"""Envelope encryption of the secret access keys the identities table holds.

Every secret is sealed with a fresh random data key; the data key is stored wrapped by a key
encryption key that never enters DynamoDB:

- deployed (``GLUE_AUTH_KMS_KEY_ID`` set): KMS wraps and unwraps the data key
  (GenerateDataKey / Decrypt through botocore, with an EncryptionContext naming the purpose, the
  access key id and its principal), so reading the table alone reveals nothing and a wrapped data
  key moved onto another item does not unwrap there;
- locally: a 32-byte key file readable only by its owner (``GLUE_AUTH_KEY_FILE``, default
  ``.data/auth.key`` under the working directory, where ``make run`` keeps DynamoDB Local's data),
  created on first use with mode 0600, which wraps the data key with AES-256-GCM.

The secret is sealed with AES-256-GCM (``cryptography``'s AESGCM, imported on the first seal or
open, not at import: Lambda cold starts) under the data key, its associated data binding it to
the access key id, the principal ARN and the box's own header. Format 2, the one written::

    byte 0      2 (the format version)
    byte 1      how the data key is wrapped: 1 = the key file, 2 = KMS
    bytes 2-3   n, the length of the wrapped data key (big-endian)
    n bytes     the wrapped data key: key file = 12-byte nonce + AES-GCM(32-byte key) + 16-byte tag;
                KMS = GenerateDataKey's CiphertextBlob
    12 bytes    the secret's nonce
    the rest    AES-GCM ciphertext of the secret (UTF-8) + its 16-byte tag

Format 1 (legacy, JSON starting with ``{``: an HMAC-SHA256 counter-mode stream and an HMAC tag,
bound to the access key id only) is still opened, never written; ``python -m infra.identities
keys migrate`` re-seals the stored ones as format 2 (see docs/design.md, "Authentication").
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
import threading
from base64 import b64decode
from typing import TYPE_CHECKING, Any, Callable

from chalicelib import settings

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

VERSION = 2
_KEY_BYTES = 32
_NONCE_BYTES = 12  # AES-GCM's standard nonce: random per seal, and each data key seals once
_TAG_BYTES = 16
_BY_FILE, _BY_KMS = 1, 2
# Names what a box is for, in its associated data and its KMS EncryptionContext: a data key or
# ciphertext made for anything else under the same key does not open as an identity's secret.
PURPOSE = "glue-catalog/identity-secret"


class SecretBoxError(Exception):
    """A sealed secret that cannot be opened (wrong key file or KMS key, or altered bytes)."""


def key_file_path() -> str:
    """Where the local key encryption key lives (GLUE_AUTH_KEY_FILE, else .data/auth.key)."""
    return settings.current().auth_key_file


def kms_key_id() -> str | None:
    """The KMS key that wraps data keys when deployed (GLUE_AUTH_KMS_KEY_ID), else None."""
    return settings.current().auth_kms_key_id


def _local_kek() -> bytes:
    """The local key encryption key, created (0600, exclusively) on first use."""
    if settings.current().on_lambda:
        # A key file inside a Lambda package would ship the key with the code: KMS only there.
        raise SecretBoxError("GLUE_AUTH_KMS_KEY_ID must be set on Lambda (secrets are unwrapped with KMS there)")
    path = key_file_path()
    try:
        with open(path, "rb") as file:
            mode = os.fstat(file.fileno()).st_mode
            key = file.read()
    except FileNotFoundError:
        directory = os.path.dirname(path)
        if directory:
            os.makedirs(directory, exist_ok=True)
        key = secrets.token_bytes(_KEY_BYTES)
        try:
            # O_EXCL: two processes creating it at once must not each keep a different key.
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            return _local_kek()
        with os.fdopen(fd, "wb") as file:
            file.write(key)
        return key
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise SecretBoxError(f"{path} must be readable by its owner only (chmod 600 {path})")
    if len(key) != _KEY_BYTES:
        raise SecretBoxError(f"{path} does not hold a {_KEY_BYTES}-byte key")
    return key


_kms_client: Any = None
_kms_lock = threading.Lock()


def _kms() -> Any:
    """The process's one KMS client, made on first use (botocore clients are thread-safe)."""
    global _kms_client
    with _kms_lock:
        if _kms_client is None:
            import botocore.session  # only when deployed with KMS: keeps local runs and imports light

            _kms_client = botocore.session.get_session().create_client("kms")
        return _kms_client


def _kms_call(operation: str, call: Callable[[Any], Any]) -> Any:
    """``call(kms client)``; a refusal or an unreachable KMS is a SecretBoxError naming ``operation``."""
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        return call(_kms())
    except ClientError as error:
        raise SecretBoxError(f"KMS {operation} was refused: {error}") from None
    except BotoCoreError as error:
        raise SecretBoxError(f"KMS {operation} failed: {error}") from None


def _kms_decrypt(wrapped: bytes, context: dict[str, str]) -> bytes:
    """Unwrap a data key. With GLUE_AUTH_KMS_KEY_ID set, KMS must find it wrapped by that very key:
    a blob made under some other key (another account's, whose policy lets this role decrypt) is
    refused, not trusted."""
    kms_key = kms_key_id()
    named = {"KeyId": kms_key} if kms_key else {}
    answer = _kms_call("Decrypt", lambda kms: kms.decrypt(CiphertextBlob=wrapped, EncryptionContext=context,
                                                          **named))
    return bytes(answer["Plaintext"])


def _aesgcm(key: bytes) -> AESGCM:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # first seal/open only: cold starts

    if len(key) != _KEY_BYTES:
        raise SecretBoxError(f"a data key must be {_KEY_BYTES} bytes, not {len(key)}")
    return AESGCM(key)


def _gcm_open(key: bytes, nonce: bytes, sealed: bytes, associated: bytes) -> bytes:
    from cryptography.exceptions import InvalidTag

    try:
        return _aesgcm(key).decrypt(nonce, sealed, associated)
    except InvalidTag:
        raise SecretBoxError("the sealed secret does not open with this key (wrong key, altered bytes, "
                             "or sealed for another access key or principal)") from None


def _field(text: str) -> bytes:
    data = text.encode()
    return len(data).to_bytes(2, "big") + data


def _associated(part: str, header: bytes, key_id: str, principal: str) -> bytes:
    """The associated data of one AES-GCM seal: what it is (``part``), the box's header, and
    the identity, each length-prefixed so no two different tuples give the same bytes."""
    return _field(PURPOSE) + _field(part) + _field(key_id) + _field(principal) + header


def _encryption_context(key_id: str, principal: str) -> dict[str, str]:
    return {"purpose": PURPOSE, "access_key_id": key_id, "principal": principal}


def seal(plaintext: str, key_id: str, principal: str) -> bytes:
    """Encrypt ``plaintext`` (format 2) under a fresh data key, bound to ``key_id`` and
    ``principal``: a sealed secret copied onto another key item, or a key item pointed at another
    principal, does not open."""
    kms_key = kms_key_id()
    if kms_key:
        answer = _kms_call("GenerateDataKey", lambda kms: kms.generate_data_key(
            KeyId=kms_key, KeySpec="AES_256", EncryptionContext=_encryption_context(key_id, principal)))
        data_key, wrapped, kind = answer["Plaintext"], answer["CiphertextBlob"], _BY_KMS
    else:
        data_key, kind = secrets.token_bytes(_KEY_BYTES), _BY_FILE
        nonce = secrets.token_bytes(_NONCE_BYTES)
        wrapped = nonce + _aesgcm(_local_kek()).encrypt(
            nonce, data_key, _associated("data key", bytes([VERSION, kind]), key_id, principal))
    head = bytes([VERSION, kind]) + len(wrapped).to_bytes(2, "big") + wrapped
    nonce = secrets.token_bytes(_NONCE_BYTES)
    return head + nonce + _aesgcm(data_key).encrypt(
        nonce, plaintext.encode(), _associated("secret", head, key_id, principal))


def is_legacy(sealed: bytes) -> bool:
    """Whether ``sealed`` is in the legacy format 1 (to be re-sealed by ``keys migrate``)."""
    return sealed[:1] == b"{"


def open_sealed(sealed: bytes, key_id: str, principal: str) -> str:
    """The plaintext ``seal`` sealed for the same ``key_id`` and ``principal`` (SecretBoxError
    otherwise). A legacy format-1 box opens too; it was bound to the key id only."""
    if is_legacy(sealed):
        return _open_legacy(sealed, key_id)
    if len(sealed) < 4 or sealed[0] != VERSION or sealed[1] not in (_BY_FILE, _BY_KMS):
        raise SecretBoxError("the sealed secret is malformed (unknown format or key wrapping)")
    kind, length = sealed[1], int.from_bytes(sealed[2:4], "big")
    wrapped, rest = sealed[4:4 + length], sealed[4 + length:]
    if not wrapped or len(wrapped) != length or len(rest) < _NONCE_BYTES + _TAG_BYTES:
        raise SecretBoxError("the sealed secret is malformed (truncated)")
    if kind == _BY_FILE and length != _NONCE_BYTES + _KEY_BYTES + _TAG_BYTES:
        raise SecretBoxError("the sealed secret is malformed (a key file's wrapped key has another length)")
    if kind == _BY_KMS:
        data_key = _kms_decrypt(wrapped, _encryption_context(key_id, principal))
    else:
        data_key = _gcm_open(_local_kek(), wrapped[:_NONCE_BYTES], wrapped[_NONCE_BYTES:],
                             _associated("data key", sealed[:2], key_id, principal))
    head = sealed[:4 + length]
    plaintext = _gcm_open(data_key, rest[:_NONCE_BYTES], rest[_NONCE_BYTES:],
                          _associated("secret", head, key_id, principal))
    try:
        return plaintext.decode()
    except UnicodeDecodeError:
        raise SecretBoxError("the sealed secret is malformed (not UTF-8)") from None


# -- legacy: format 1, read only --------------------------------------------------------------
# Written until format 2 (issue #45): a hand-made cipher from the standard library, HMAC-SHA256 in
# counter mode as the key stream and an HMAC-SHA256 tag (encrypt-then-MAC, derived keys), JSON
# {"v":1,"kek":"file"|"kms","dk":...,"secret":{"n","c","t"}}, bound to the access key id only
# (KMS EncryptionContext {"access_key_id": key id}). Kept so stored secrets keep working until
# `python -m infra.identities keys migrate` re-seals them; never written again.

def _legacy_derive(key: bytes, label: bytes) -> bytes:
    return hmac.new(key, label, hashlib.sha256).digest()


def _legacy_stream(key: bytes, nonce: bytes, length: int) -> bytes:
    blocks = (hmac.new(key, nonce + i.to_bytes(4, "big"), hashlib.sha256).digest()
              for i in range((length + 31) // 32))
    return b"".join(blocks)[:length]


def _legacy_decrypt(key: bytes, box: dict[str, str], context: bytes) -> bytes:
    nonce, ciphertext, tag = (b64decode(box[name], validate=True) for name in ("n", "c", "t"))
    expected = hmac.new(_legacy_derive(key, b"mac"), context + b"\0" + nonce + ciphertext, hashlib.sha256).digest()
    if not hmac.compare_digest(tag, expected):
        raise SecretBoxError("the sealed secret does not open with this key (wrong key or altered bytes)")
    stream = _legacy_stream(_legacy_derive(key, b"enc"), nonce, len(ciphertext))
    return bytes(a ^ b for a, b in zip(ciphertext, stream))


def _open_legacy(sealed: bytes, key_id: str) -> str:
    bound = key_id.encode()
    try:
        box = json.loads(sealed)
        if box["v"] != 1:
            raise ValueError("version")
        if box["kek"] == "kms":
            wrapped_key = b64decode(box["dk"]["kms"], validate=True)
            data_key = _kms_decrypt(wrapped_key, {"access_key_id": key_id})
        elif box["kek"] == "file":
            data_key = _legacy_decrypt(_local_kek(), box["dk"], bound)
        else:
            raise ValueError("kek")
        return _legacy_decrypt(data_key, box["secret"], bound).decode()
    # UnicodeDecodeError and binascii.Error are ValueErrors; RecursionError: JSON nested too deep.
    except (ValueError, KeyError, TypeError, RecursionError) as error:
        raise SecretBoxError(f"the sealed secret is malformed ({type(error).__name__})") from None
