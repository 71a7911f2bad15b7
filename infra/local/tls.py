"""A local certificate authority and a server certificate, so the local server can speak HTTPS.

Some Iceberg REST clients (DuckDB's iceberg extension, Java clients with TLS-only settings) take
only ``https://`` endpoints. On AWS, API Gateway terminates TLS; locally, ``GLUE_TLS=1 make run``
serves the same port over TLS with the files made here, kept under the data directory
(``.data/tls``): a CA of this machine's own (``ca.pem``, the bundle to give clients) and a
certificate it signed for ``localhost``, ``127.0.0.1`` and ``::1``. Generated once and reused:
made again only when a file is missing, unreadable or mismatched, expires within RENEW_BEFORE, or
names other hosts; a server certificate is re-issued by the same CA when the CA is still good, so
clients that trust ``ca.pem`` keep trusting the server. Keys are written owner-only (0600).

This is the only module that imports ``cryptography``; the server itself needs just ``ssl``.

Usage: ``python -m infra.local.tls [--dir DIR] [--name HOST ...]`` makes (or checks) the files and
prints their paths.
"""

from __future__ import annotations

import argparse
import datetime
import fcntl
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional, Sequence

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

DEFAULT_NAMES = ("localhost", "127.0.0.1", "::1")
# A server certificate lives 397 days, the most browsers and macOS accept for one; the CA ten
# years, so the bundle given to clients rarely changes.
SERVER_DAYS = 397
CA_DAYS = 3650
# Made again this long before expiry, so a long-running server does not expire mid-session.
RENEW_BEFORE = datetime.timedelta(days=7)
# Certificates are dated this far back: a client whose clock runs a little behind still accepts them.
BACKDATE = datetime.timedelta(minutes=5)
ORGANIZATION = "Glue catalog local"


@dataclass(frozen=True)
class TlsFiles:
    """Where the local CA and the server's certificate and key are."""

    directory: Path

    @property
    def ca_cert(self) -> Path:
        """The CA bundle to give clients (REQUESTS_CA_BUNDLE, AWS_CA_BUNDLE, SSL_CERT_FILE...)."""
        return self.directory / "ca.pem"

    @property
    def ca_key(self) -> Path:
        return self.directory / "ca-key.pem"

    @property
    def cert(self) -> Path:
        """The server certificate (``--tls-cert`` of infra.local.server)."""
        return self.directory / "server.pem"

    @property
    def key(self) -> Path:
        """The server's private key (``--tls-key``)."""
        return self.directory / "server-key.pem"


def default_directory() -> Path:
    """``$GLUE_LOCAL_DATA_DIR/tls``, by default ``.data/tls`` in the repository, as ``make run`` keeps it."""
    data = os.environ.get("GLUE_LOCAL_DATA_DIR") or Path(__file__).resolve().parents[2] / ".data"
    return Path(data).resolve() / "tls"


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


def _san_entries(names: Iterable[str]) -> list[x509.GeneralName]:
    """An IP address becomes an IPAddress entry (clients match an IP host only against those), a
    name a DNSName entry."""
    entries: list[x509.GeneralName] = []
    for name in names:
        try:
            entries.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            entries.append(x509.DNSName(name))
    return entries


def _san_set(names: Iterable[str]) -> set[object]:
    return {entry.value for entry in _san_entries(names)}


def _write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a 0600 temporary file renamed into place, so the key is
    never readable by others, not even for a moment, and never seen half-written."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.unlink(missing_ok=True)
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)
    os.replace(temporary, path)


def _write_public(path: Path, data: bytes) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_bytes(data)
    temporary.chmod(0o644)
    os.replace(temporary, path)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _new_key() -> ec.EllipticCurvePrivateKey:
    # P-256: every TLS client supports it, and it is made in a millisecond (RSA takes a while).
    return ec.generate_private_key(ec.SECP256R1())


def _make_ca(files: TlsFiles, now: datetime.datetime) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = _new_key()
    subject = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, ORGANIZATION),
                         x509.NameAttribute(NameOID.COMMON_NAME, f"{ORGANIZATION} CA")])
    public = key.public_key()
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject).issuer_name(subject).public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE).not_valid_after(now + datetime.timedelta(days=CA_DAYS))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                     data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                     crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .sign(key, hashes.SHA256())
    )
    _write_private(files.ca_key, _key_pem(key))
    _write_public(files.ca_cert, cert.public_bytes(serialization.Encoding.PEM))
    return cert, key


def _make_server(files: TlsFiles, names: Sequence[str], ca: x509.Certificate, ca_key: ec.EllipticCurvePrivateKey,
                 now: datetime.datetime) -> None:
    key = _new_key()
    public = key.public_key()
    ca_ski = ca.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, ORGANIZATION),
                                 x509.NameAttribute(NameOID.COMMON_NAME, names[0])]))
        .issuer_name(ca.subject).public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE).not_valid_after(now + datetime.timedelta(days=SERVER_DAYS))
        .add_extension(x509.SubjectAlternativeName(_san_entries(names)), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                     data_encipherment=False, key_agreement=False, key_cert_sign=False,
                                     crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        # Python 3.13's default client context (VERIFY_X509_STRICT) refuses a leaf without it.
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    _write_private(files.key, _key_pem(key))
    _write_public(files.cert, cert.public_bytes(serialization.Encoding.PEM))


def _load(cert_path: Path, key_path: Path) -> Optional[tuple[x509.Certificate, ec.EllipticCurvePrivateKey]]:
    """The certificate and its key, or None when either is missing, unreadable, or they do not match."""
    try:
        cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
        key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError):
        return None
    if not isinstance(key, ec.EllipticCurvePrivateKey) or key.public_key() != cert.public_key():
        return None
    return cert, key


def _current(cert: x509.Certificate, now: datetime.datetime) -> bool:
    return cert.not_valid_before_utc <= now and now + RENEW_BEFORE < cert.not_valid_after_utc


def _names_of(cert: x509.Certificate) -> set[object]:
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return set()
    return {*san.get_values_for_type(x509.DNSName), *san.get_values_for_type(x509.IPAddress)}


def _issued_by(cert: x509.Certificate, ca: x509.Certificate) -> bool:
    try:
        cert.verify_directly_issued_by(ca)
    except (ValueError, TypeError, InvalidSignature):
        return False
    return True


class _Lock:
    """An exclusive lock on the directory's ``.lock`` file: two servers starting at once make one
    set of files, not a CA of one with a certificate of the other."""

    def __init__(self, directory: Path) -> None:
        self._path = directory / ".lock"

    def __enter__(self) -> None:
        self._descriptor = os.open(self._path, os.O_WRONLY | os.O_CREAT, 0o600)
        fcntl.flock(self._descriptor, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self._descriptor, fcntl.LOCK_UN)
        os.close(self._descriptor)


def ensure(directory: Optional[Path] = None, names: Sequence[str] = DEFAULT_NAMES,
           now: Optional[datetime.datetime] = None) -> TlsFiles:
    """The CA and server files under ``directory`` (default :func:`default_directory`), made or
    re-made as needed so that the server certificate is current, names exactly ``names`` (the
    first is also its common name) and is issued by the CA. ``now`` dates what is made (tests)."""
    if not names:
        raise ValueError("a server certificate needs at least one name")
    files = TlsFiles(Path(directory) if directory is not None else default_directory())
    files.directory.mkdir(parents=True, exist_ok=True)
    files.directory.chmod(0o700)
    moment = now or _now()
    with _Lock(files.directory):
        ca = _load(files.ca_cert, files.ca_key)
        if ca is None or not _current(ca[0], moment):
            ca = _make_ca(files, moment)
        server = _load(files.cert, files.key)
        if (server is None or not _current(server[0], moment) or _names_of(server[0]) != _san_set(names)
                or not _issued_by(server[0], ca[0])):
            _make_server(files, names, ca[0], ca[1], moment)
        for key_path in (files.ca_key, files.key):
            key_path.chmod(0o600)  # a key kept from before, copied in with looser permissions
    return files


def main(argv: Optional[list[str]] = None) -> None:
    """Make (or check) the files and print where they are."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, default=None,
                        help="where the files live (default $GLUE_LOCAL_DATA_DIR/tls, i.e. .data/tls)")
    parser.add_argument("--name", action="append", default=[],
                        help="one more host name or address for the server certificate (repeatable)")
    args = parser.parse_args(argv)
    names = list(DEFAULT_NAMES) + [name for name in args.name if name not in DEFAULT_NAMES]
    files = ensure(args.dir, names)
    print(f"CA bundle (give it to clients): {files.ca_cert}")
    print(f"server certificate (--tls-cert): {files.cert}")
    print(f"server key (--tls-key):          {files.key}")


if __name__ == "__main__":
    main()
