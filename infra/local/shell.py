"""``make shell``: a Python with clients for ``make run``'s endpoint; ``make reset``: empty it.

The shell's names: ``glue`` and ``lakeformation`` (boto3 clients), ``iceberg`` (pyiceberg's
RestCatalog on ``/iceberg``) and ``paimon`` (pypaimon's REST catalog) when those are installed
(``make install`` / ``make test`` install them, ``make run`` does not), and ``endpoint``. The
endpoint is make run's: ``HOST`` / ``PORT`` / ``GLUE_TLS`` as make run reads them (HTTPS verified
against ``$GLUE_LOCAL_DATA_DIR/tls/ca.pem``). The caller is ``AWS_ACCESS_KEY_ID`` /
``AWS_SECRET_ACCESS_KEY`` when set (a key the service issued, under ``GLUE_AUTH=sigv4``), else the open
mode's default account.

``python -m infra.local.shell -c "print(glue.get_databases())"`` runs code with the same names;
``--reset`` posts ``/_local/reset`` (open mode only; infra/local/server.py); ``--reset --account ID`` empties
that account's catalog only.
"""

from __future__ import annotations

import argparse
import code
import json
import os
import ssl
import sys
import urllib.error
import urllib.request
from typing import Any, Optional

from infra.local.run import DATA_DIR, DEFAULT_HOST, client_url, tls_requested

DEFAULT_ACCOUNT = "123456789012"


def endpoint_url(env: Optional[dict[str, str]] = None) -> str:
    """make run's URL for a client on this machine."""
    env = dict(os.environ) if env is None else env
    scheme = "https" if tls_requested(env) else "http"
    return client_url(env.get("HOST") or DEFAULT_HOST, int(env.get("PORT") or 8000), scheme)


def _ca_bundle(url: str) -> Optional[str]:
    return str(DATA_DIR / "tls" / "ca.pem") if url.startswith("https:") else None


def names(url: str) -> dict[str, Any]:
    """The shell's namespace: the clients for ``url`` (pyiceberg / pypaimon only when installed)."""
    import boto3

    key = os.environ.get("AWS_ACCESS_KEY_ID") or DEFAULT_ACCOUNT
    secret = os.environ.get("AWS_SECRET_ACCESS_KEY") or "test"
    region = os.environ.get("AWS_REGION") or "us-east-1"
    account = key if key.isdigit() and len(key) == 12 else os.environ.get("GLUE_DEFAULT_ACCOUNT_ID", DEFAULT_ACCOUNT)
    ca = _ca_bundle(url)
    found: dict[str, Any] = {"endpoint": url, "boto3": boto3}
    for service in ("glue", "lakeformation"):
        found[service] = boto3.client(service, endpoint_url=url, region_name=region, aws_access_key_id=key,
                                      aws_secret_access_key=secret, verify=ca)
    try:
        from pyiceberg.catalog.rest import RestCatalog
    except ImportError:
        pass
    else:
        properties = {"uri": f"{url}/iceberg", "warehouse": account, "rest.sigv4-enabled": "true",
                      "rest.signing-name": "glue", "rest.signing-region": region, "client.access-key-id": key,
                      "client.secret-access-key": secret, "client.region": region}
        if ca:
            properties["ssl"] = {"cabundle": ca}  # type: ignore[assignment]
        try:
            found["iceberg"] = RestCatalog("local", **properties)
        except Exception as exc:  # the server not running: the shell opens all the same
            print(f"  iceberg: not connected ({type(exc).__name__}: {exc})", file=sys.stderr)
    try:
        from pypaimon.catalog.catalog_factory import CatalogFactory
    except ImportError:
        pass
    else:
        try:
            found["paimon"] = CatalogFactory.create({"metastore": "rest", "uri": url, "warehouse": "lake",
                                                     "token.provider": "bear", "token": account})
        except Exception as exc:
            print(f"  paimon: not connected ({type(exc).__name__}: {exc})", file=sys.stderr)
    return found


def reset(url: str, account: Optional[str] = None) -> int:
    """POST /_local/reset (of one account's catalog when ``account`` is given); prints the
    answer, returns the exit status."""
    context = ssl.create_default_context(cafile=_ca_bundle(url)) if url.startswith("https:") else None
    body = json.dumps({"AccountId": account}).encode() if account is not None else b""
    request = urllib.request.Request(f"{url}/_local/reset", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=120, context=context) as response:
            deleted = json.loads(response.read())["ItemsDeleted"]
    except urllib.error.HTTPError as error:
        print(f"reset refused ({error.code}): {json.loads(error.read() or b'{}').get('Message')}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"no catalog answers on {url} ({exc}): start make run first", file=sys.stderr)
        return 1
    whose = f"account {account}'s catalog" if account is not None else "the catalog"
    print(f"reset: {whose} of {url} is empty ({deleted} items deleted; table files are left)")
    return 0


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-c", dest="command", help="run this code with the shell's names, then exit")
    parser.add_argument("--reset", action="store_true", help="empty the running catalog (open mode only)")
    parser.add_argument("--account", help="with --reset: empty only this account's catalog (12 digits; "
                                          "default: every account's)")
    args = parser.parse_args(argv)
    try:
        url = endpoint_url()
    except ValueError as exc:
        parser.error(str(exc))
    if args.account is not None and not args.reset:
        parser.error("--account goes with --reset")
    if args.reset:
        return reset(url, args.account)
    namespace = names(url)
    if args.command is not None:
        exec(compile(args.command, "<-c>", "exec"), namespace)
        return 0
    shown = ", ".join(name for name in ("glue", "lakeformation", "iceberg", "paimon") if name in namespace)
    code.interact(banner=f"catalog at {url}: {shown} ready (Ctrl-D leaves)", local=namespace, exitmsg="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
