"""Build the Lambda deployment package: ``chalice package --stage prod``, then drop botocore's models of
services the function never calls (botocore arrives as a dependency of pynamodb, and its
models of 400 services are most of the package).

Run: ``.venv/bin/python -m infra.package out/`` (or ``make package``); prints the sizes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# Services the function talks to (dynamodb through pynamodb) or validates against.
# s3: the Paimon warehouse; kms: the identities' secrets (GLUE_AUTH_KMS_KEY_ID).
KEEP_SERVICES = {"dynamodb", "glue", "kms", "lakeformation", "s3", "sts"}
# The deployed stage (.chalice/config.json): SigV4 verification on, the KMS key by its alias.
STAGE = "prod"


def _keep(name: str) -> bool:
    parts = name.split("/")
    if len(parts) >= 4 and parts[0] == "botocore" and parts[1] == "data":
        return parts[2] in KEEP_SERVICES
    return True


def slim(zip_path: Path) -> tuple[int, int]:
    """Rewrite the zip without unused botocore models; (bytes before, bytes after)."""
    before = zip_path.stat().st_size
    slimmed = zip_path.with_suffix(".slim.zip")
    with zipfile.ZipFile(zip_path) as source, zipfile.ZipFile(slimmed, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            if _keep(info.filename):
                target.writestr(info, source.read(info.filename))
    slimmed.replace(zip_path)
    return before, zip_path.stat().st_size


def main() -> None:
    """chalice package into the given directory, then slim its deployment.zip."""
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "out").resolve()
    shutil.rmtree(out, ignore_errors=True)
    env = {**os.environ, "AWS_DEFAULT_REGION": os.environ.get("AWS_DEFAULT_REGION", "us-east-1")}
    subprocess.run([str(Path(sys.executable).parent / "chalice"), "package", "--stage", STAGE,
                    "--merge-template", "infra/dynamodb-tables.json", str(out)], cwd=REPO, env=env, check=True)
    before, after = slim(out / "deployment.zip")
    print(f"{out / 'deployment.zip'}: {before / 1e6:.1f} MB -> {after / 1e6:.1f} MB "
          f"(kept botocore models: {', '.join(sorted(KEEP_SERVICES))})")


if __name__ == "__main__":
    main()
