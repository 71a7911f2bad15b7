"""Build the deployment: chalice's package of the prod stage (the Lambda zip and its SAM template),
the zip slimmed of botocore's models of services the function never calls (botocore arrives as a
dependency of pynamodb, and its models of 400 services are most of the package), and the template
finished by ``infra.cloudformation`` (tables, key, warehouse, policies, logs, stage settings);
and the crawl worker's own zip, crawl-worker.zip: the API's package plus the modules of
``pipelines/`` the crawl needs (``WORKER_MODULES``; pyarrow is the layer the template's
``PyarrowLayerArn`` names, so the API's package never holds the engine or pyarrow).

Run: ``.venv/bin/python -m infra.package out/`` (or ``make package``); prints the sizes.
``sam_template()`` gives the same template without building the zip (the tests lint it).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import zipfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
# Services the function talks to (dynamodb through pynamodb) or validates against.
# s3: the Paimon warehouse; kms: the identities' secrets (GLUE_AUTH_KMS_KEY_ID).
KEEP_SERVICES = {"dynamodb", "glue", "kms", "lakeformation", "s3", "sts"}
# The deployed stage (.chalice/config.json): SigV4 verification on, the KMS key by its alias.
STAGE = "prod"
CODE_URI = "./deployment.zip"
# The crawl worker's zip: deployment.zip plus these files of the repository (the engine and what
# it imports of pipelines/; nothing of Spark).
WORKER_ZIP = "crawl-worker.zip"
WORKER_MODULES = ("pipelines/__init__.py", "pipelines/formats.py", "pipelines/layout.py",
                  "pipelines/crawl_worker.py", "pipelines/crawl/__init__.py", "pipelines/crawl/classify.py",
                  "pipelines/crawl/discover.py", "pipelines/crawl/s3files.py", "pipelines/crawl/spark_driver.py")


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


def crawl_worker_zip(api_zip: Path) -> Path:
    """Write the crawl worker's zip next to ``api_zip``: its files and ``WORKER_MODULES``."""
    target = api_zip.with_name(WORKER_ZIP)
    with zipfile.ZipFile(api_zip) as source, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as worker:
        for info in source.infolist():
            worker.writestr(info, source.read(info.filename))
        for name in WORKER_MODULES:
            worker.write(REPO / name, name)
    return target


def _chalice() -> tuple[Any, Any, Any]:
    """chalice's CLI factory, the prod stage's config and the package options, as ``chalice
    package`` makes them. The roles' policies are infra.policy's (the template replaces them),
    so chalice's own policy file is not read: it is the ``chalice deploy`` path's."""
    from chalice.cli.factory import CLIFactory

    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")  # chalice asks botocore for service principals
    factory = CLIFactory(project_dir=str(REPO))
    config = factory.create_config_obj(STAGE, user_provided_params={"autogen_policy": True})
    return factory, config, factory.create_package_options()


def chalice_template() -> dict[str, Any]:
    """The SAM template ``chalice package --stage prod`` writes, without building the zip."""
    from chalice.deploy import models
    from chalice.deploy.appgraph import ApplicationGraphBuilder, DependencyBuilder
    from chalice.deploy.deployer import BaseDeployStep, DeploymentPackager, create_build_stage
    from chalice.deploy.swagger import CFNSwaggerGenerator
    from chalice.package import ResourceBuilder, SAMTemplateGenerator
    from chalice.utils import UI, OSUtils

    class NoZip(BaseDeployStep):
        def handle_deploymentpackage(self, config: Any, resource: models.DeploymentPackage) -> None:
            resource.filename = CODE_URI

    _, config, options = _chalice()
    build = create_build_stage(OSUtils(), UI(), CFNSwaggerGenerator(), config)
    build._steps = [NoZip() if isinstance(step, DeploymentPackager) else step for step in build._steps]
    resources = ResourceBuilder(ApplicationGraphBuilder(), DependencyBuilder(), build).construct_resources(
        config, STAGE)
    template: dict[str, Any] = SAMTemplateGenerator(config, options).generate(resources)
    for resource in template["Resources"].values():
        if resource["Type"] == "AWS::Serverless::Function":
            resource["Properties"]["CodeUri"] = CODE_URI  # where chalice package puts the zip
    return template


def sam_template() -> dict[str, Any]:
    """The deployed template (out/sam.json), built without the zip."""
    from infra.cloudformation import finish

    return finish(chalice_template())


def main() -> None:
    """chalice package into the given directory, slim its deployment.zip, finish its template."""
    from chalice.package import create_app_packager

    out = Path(sys.argv[1] if len(sys.argv) > 1 else "out").resolve()
    shutil.rmtree(out, ignore_errors=True)
    _, config, options = _chalice()
    create_app_packager(config, options).package_app(config, str(out), STAGE)
    before, after = slim(out / "deployment.zip")
    worker = crawl_worker_zip(out / "deployment.zip")
    template = out / "sam.json"
    built = json.loads(template.read_text())
    # The one template: what the tests lint is what gets deployed.
    assert built == chalice_template(), "chalice package's template differs from infra.package.chalice_template()"
    template.write_text(json.dumps(sam_template(), indent=2) + "\n")
    print(f"{out / 'deployment.zip'}: {before / 1e6:.1f} MB -> {after / 1e6:.1f} MB "
          f"(kept botocore models: {', '.join(sorted(KEEP_SERVICES))}); {worker}: "
          f"{worker.stat().st_size / 1e6:.1f} MB; {template}")


if __name__ == "__main__":
    main()
