"""Envelope encryption of the secret access keys the identities table holds.

Every secret is sealed with a fresh random data key; the data key is stored wrapped by a key
encryption key that never enters DynamoDB:

- deployed (``GLUE_AUTH_KMS_KEY_ID`` set): KMS wraps and unwraps the data key
  (GenerateDataKey / Decrypt through botocore), so reading the table alone reveals nothing;
- locally: a 32-byte key file readable only by its owner (``GLUE_AUTH_KEY_FILE``, default
  ``.data/auth.key`` under the working directory, where ``make run`` keeps DynamoDB Local's data),
  created on first use with mode 0600.

The cipher is built from the standard library only (the Lambda package carries no native
dependency): HMAC-SHA256 in counter mode as the key stream, and an HMAC-SHA256 tag over the whole
sealed box (encrypt-then-MAC, separate derived keys). Secrets are 40 characters, so the cost is a
few HMACs per seal or open.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
import threading
from base64 import b64decode, b64encode
from typing import Any, Callable

_VERSION = 1
_KEY_BYTES = 32


class SecretBoxError(Exception):
    """A sealed secret that cannot be opened (wrong key file or KMS key, or altered bytes)."""


def key_file_path() -> str:
    """Where the local key encryption key lives (GLUE_AUTH_KEY_FILE, else .data/auth.key)."""
    return os.environ.get("GLUE_AUTH_KEY_FILE") or os.path.join(".data", "auth.key")


def kms_key_id() -> str | None:
    """The KMS key that wraps data keys when deployed (GLUE_AUTH_KMS_KEY_ID), else None."""
    return os.environ.get("GLUE_AUTH_KMS_KEY_ID") or None


def _local_kek() -> bytes:
    """The local key encryption key, created (0600, exclusively) on first use."""
    if os.environ.get("AWS_LAMBDA_FUNCTION_NAME"):
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


def _derive(key: bytes, label: bytes) -> bytes:
    return hmac.new(key, label, hashlib.sha256).digest()


def _stream(key: bytes, nonce: bytes, length: int) -> bytes:
    blocks = (hmac.new(key, nonce + i.to_bytes(4, "big"), hashlib.sha256).digest()
              for i in range((length + 31) // 32))
    return b"".join(blocks)[:length]


def _xor(data: bytes, stream: bytes) -> bytes:
    return bytes(a ^ b for a, b in zip(data, stream))


def _encrypt(key: bytes, plaintext: bytes, context: bytes) -> dict[str, str]:
    nonce = secrets.token_bytes(16)
    ciphertext = _xor(plaintext, _stream(_derive(key, b"enc"), nonce, len(plaintext)))
    tag = hmac.new(_derive(key, b"mac"), context + b"\0" + nonce + ciphertext, hashlib.sha256).digest()
    return {"n": b64encode(nonce).decode(), "c": b64encode(ciphertext).decode(), "t": b64encode(tag).decode()}


def _decrypt(key: bytes, box: dict[str, str], context: bytes) -> bytes:
    nonce, ciphertext, tag = (b64decode(box[name]) for name in ("n", "c", "t"))
    expected = hmac.new(_derive(key, b"mac"), context + b"\0" + nonce + ciphertext, hashlib.sha256).digest()
    if not hmac.compare_digest(tag, expected):
        raise SecretBoxError("the sealed secret does not open with this key (wrong key or altered bytes)")
    return _xor(ciphertext, _stream(_derive(key, b"enc"), nonce, len(ciphertext)))


def seal(plaintext: str, context: str) -> bytes:
    """Encrypt ``plaintext`` under a fresh data key; ``context`` (the access key id) is bound to
    it, so a sealed secret copied onto another key item does not open there."""
    bound = context.encode()
    kms_key = kms_key_id()
    if kms_key:
        answer = _kms_call("GenerateDataKey", lambda kms: kms.generate_data_key(
            KeyId=kms_key, KeySpec="AES_256", EncryptionContext={"access_key_id": context}))
        data_key, wrapped, kek = answer["Plaintext"], {"kms": b64encode(answer["CiphertextBlob"]).decode()}, "kms"
    else:
        data_key = secrets.token_bytes(_KEY_BYTES)
        wrapped, kek = _encrypt(_local_kek(), data_key, bound), "file"
    box = {"v": _VERSION, "kek": kek, "dk": wrapped, "secret": _encrypt(data_key, plaintext.encode(), bound)}
    return json.dumps(box, separators=(",", ":")).encode()


def open_sealed(sealed: bytes, context: str) -> str:
    """The plaintext ``seal`` sealed with the same ``context`` (SecretBoxError otherwise)."""
    bound = context.encode()
    try:
        box = json.loads(sealed)
        if box["kek"] == "kms":
            wrapped_key = b64decode(box["dk"]["kms"])
            answer = _kms_call("Decrypt", lambda kms: kms.decrypt(
                CiphertextBlob=wrapped_key, EncryptionContext={"access_key_id": context}))
            data_key = answer["Plaintext"]
        else:
            data_key = _decrypt(_local_kek(), box["dk"], bound)
        return _decrypt(data_key, box["secret"], bound).decode()
    except (ValueError, KeyError, TypeError) as error:
        raise SecretBoxError(f"the sealed secret is malformed ({type(error).__name__})") from None
