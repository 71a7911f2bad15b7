"""Build the deployment: chalice's package of the prod stage (the Lambda zip and its SAM template),
the zip slimmed of botocore's models of services the function never calls (botocore arrives as a
dependency of pynamodb, and its models of 400 services are most of the package), and the template
finished by ``infra.cloudformation`` (tables, key, warehouse, policies, logs, stage settings);
and the crawl worker's own zip, crawl-worker.zip: the API's package plus the modules of
``pipelines/`` the crawl needs (``WORKER_MODULES``; pyarrow is the layer the template's
``PyarrowLayerArn`` names, so the API's package never holds the engine or pyarrow; and the
botocore model of EMR Serverless, for large crawls handed to Spark), and ``out/crawl-spark``, the
Spark driver and the engine's zip to copy where the template's ``CrawlSparkCode`` names.

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

# The worker's own clients beyond the API's: EMR Serverless (large crawls on Spark, when set up).
WORKER_SERVICES = ("emr-serverless",)
# The folder of the Spark driver and the engine's zip (the template's CrawlSparkCode, on S3).
SPARK_FOLDER = "crawl-spark"


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
    """Write the crawl worker's zip next to ``api_zip``: its files, ``WORKER_MODULES``, and (when
    the API zip holds botocore) the botocore models of ``WORKER_SERVICES``, which the API slims away."""
    target = api_zip.with_name(WORKER_ZIP)
    with zipfile.ZipFile(api_zip) as source, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as worker:
        has_botocore = False
        for info in source.infolist():
            has_botocore = has_botocore or info.filename.startswith("botocore/data/")
            worker.writestr(info, source.read(info.filename))
        for name in WORKER_MODULES:
            worker.write(REPO / name, name)
        if has_botocore:
            import botocore

            data = Path(botocore.__file__).parent / "data"
            for service in WORKER_SERVICES:
                for path in sorted((data / service).rglob("*")):
                    if path.is_file():
                        worker.write(path, f"botocore/data/{path.relative_to(data).as_posix()}")
    return target


def crawl_spark_folder(out: Path) -> Path:
    """``out/crawl-spark``: what ``CrawlSparkCode`` names on S3 (copy it there): the driver
    (``spark_driver.py``) and the engine it imports (``pipelines.zip``, for --py-files)."""
    folder = out / SPARK_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "pipelines" / "crawl" / "spark_driver.py", folder / "spark_driver.py")
    with zipfile.ZipFile(folder / "pipelines.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted((REPO / "pipelines").rglob("*.py")):
            if "__pycache__" not in path.parts:
                archive.write(path, path.relative_to(REPO).as_posix())
    return folder


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
    spark = crawl_spark_folder(out)
    template = out / "sam.json"
    built = json.loads(template.read_text())
    # The one template: what the tests lint is what gets deployed.
    assert built == chalice_template(), "chalice package's template differs from infra.package.chalice_template()"
    template.write_text(json.dumps(sam_template(), indent=2) + "\n")
    print(f"{out / 'deployment.zip'}: {before / 1e6:.1f} MB -> {after / 1e6:.1f} MB "
          f"(kept botocore models: {', '.join(sorted(KEEP_SERVICES))}); {worker}: "
          f"{worker.stat().st_size / 1e6:.1f} MB; {spark} (for CrawlSparkCode); {template}")


if __name__ == "__main__":
    main()
