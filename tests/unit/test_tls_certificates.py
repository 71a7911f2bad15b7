"""infra/local/tls.py: the local CA and server certificate are made once, kept while they are good
(re-made when expiring, for other names, or damaged), keys owner-only, and a strict TLS client
(Python's default context, hostname checked) accepts the server for each of its names only."""

from __future__ import annotations

import datetime
import ssl
from pathlib import Path

import pytest
from cryptography import x509

from infra.local import tls


def _handshake(files: tls.TlsFiles, server_hostname: str) -> None:
    """A TLS 1.2+ handshake in memory: the server with the files' certificate, the client with
    the default context trusting only the CA bundle. Raises ssl.SSLError when the client refuses."""
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(files.cert, files.key)
    client_context = ssl.create_default_context(cafile=str(files.ca_cert))
    client_context.minimum_version = ssl.TLSVersion.TLSv1_2
    to_client, to_server = ssl.MemoryBIO(), ssl.MemoryBIO()
    client = client_context.wrap_bio(to_client, to_server, server_hostname=server_hostname)
    server = server_context.wrap_bio(to_server, to_client, server_side=True)
    done = {"client": False, "server": False}
    for _ in range(10):
        for name, side in (("client", client), ("server", server)):
            if not done[name]:
                try:
                    side.do_handshake()
                    done[name] = True
                except ssl.SSLWantReadError:
                    pass
        if all(done.values()):
            return
    raise AssertionError("the handshake did not finish")


def _cert(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def _contents(files: tls.TlsFiles) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in (files.ca_cert, files.ca_key, files.cert, files.key)}


def test_the_certificate_names_localhost_and_both_loopback_addresses(tmp_path: Path) -> None:
    files = tls.ensure(tmp_path / "tls")
    san = _cert(files.cert).extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["localhost"]
    assert [str(ip) for ip in san.get_values_for_type(x509.IPAddress)] == ["127.0.0.1", "::1"]
    for name in tls.DEFAULT_NAMES:
        _handshake(files, name)
    with pytest.raises(ssl.SSLCertVerificationError):
        _handshake(files, "example.com")


def test_keys_are_owner_only_and_the_directory_private(tmp_path: Path) -> None:
    files = tls.ensure(tmp_path / "tls")
    assert files.directory.stat().st_mode & 0o777 == 0o700
    assert files.key.stat().st_mode & 0o777 == 0o600
    assert files.ca_key.stat().st_mode & 0o777 == 0o600
    assert files.ca_cert.stat().st_mode & 0o777 == 0o644
    files.key.chmod(0o644)  # e.g. copied in by hand
    tls.ensure(files.directory)
    assert files.key.stat().st_mode & 0o777 == 0o600
    assert not list(files.directory.glob(".*.tmp"))


def test_good_files_are_reused(tmp_path: Path) -> None:
    first = _contents(tls.ensure(tmp_path / "tls"))
    assert _contents(tls.ensure(tmp_path / "tls")) == first


def test_an_expiring_server_certificate_is_reissued_by_the_same_ca(tmp_path: Path) -> None:
    now = datetime.datetime.now(datetime.timezone.utc)
    made_long_ago = now - datetime.timedelta(days=tls.SERVER_DAYS) + tls.RENEW_BEFORE / 2
    files = tls.ensure(tmp_path / "tls", now=made_long_ago)
    before = _contents(files)
    tls.ensure(files.directory)
    after = _contents(files)
    assert after["ca.pem"] == before["ca.pem"] and after["ca-key.pem"] == before["ca-key.pem"]
    assert after["server.pem"] != before["server.pem"] and after["server-key.pem"] != before["server-key.pem"]
    assert _cert(files.cert).not_valid_after_utc > now + datetime.timedelta(days=tls.SERVER_DAYS - 1)
    _handshake(files, "localhost")


def test_an_expired_ca_is_made_again_with_its_certificate(tmp_path: Path) -> None:
    long_ago = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=tls.CA_DAYS + 1)
    files = tls.ensure(tmp_path / "tls", now=long_ago)
    before = _contents(files)
    tls.ensure(files.directory)
    after = _contents(files)
    assert all(after[name] != before[name] for name in before)
    _handshake(files, "127.0.0.1")


def test_other_names_reissue_the_certificate_under_the_same_ca(tmp_path: Path) -> None:
    files = tls.ensure(tmp_path / "tls")
    before = _contents(files)
    tls.ensure(files.directory, names=(*tls.DEFAULT_NAMES, "catalog.test", "10.0.0.5"))
    after = _contents(files)
    assert after["ca.pem"] == before["ca.pem"] and after["server.pem"] != before["server.pem"]
    _handshake(files, "catalog.test")
    _handshake(files, "10.0.0.5")
    tls.ensure(files.directory)  # back to the default names
    with pytest.raises(ssl.SSLCertVerificationError):
        _handshake(files, "catalog.test")


def test_damaged_or_mismatched_files_are_made_again(tmp_path: Path) -> None:
    files = tls.ensure(tmp_path / "tls")
    files.cert.write_text("not a certificate")
    tls.ensure(files.directory)
    _handshake(files, "localhost")

    other = tls.ensure(tmp_path / "other")
    files.key.write_bytes(other.key.read_bytes())  # a key that is not the certificate's
    tls.ensure(files.directory)
    _handshake(files, "localhost")

    files.ca_cert.write_bytes(other.ca_cert.read_bytes())  # a CA that did not issue the certificate
    files.ca_key.write_bytes(other.ca_key.read_bytes())
    tls.ensure(files.directory)
    assert _contents(files)["ca.pem"] == other.ca_cert.read_bytes()
    _handshake(files, "localhost")


def test_the_cli_prints_the_paths(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tls.main(["--dir", str(tmp_path / "tls"), "--name", "catalog.test"])
    out = capsys.readouterr().out
    assert f"CA bundle (give it to clients): {tmp_path / 'tls' / 'ca.pem'}" in out
    assert str(tmp_path / "tls" / "server-key.pem") in out
    _handshake(tls.TlsFiles(tmp_path / "tls"), "catalog.test")
