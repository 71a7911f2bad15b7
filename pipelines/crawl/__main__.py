"""``python -m pipelines.crawl``: run one crawl with the engine StartCrawler runs, from a shell or as
a Spark driver program (spark-submit) for a crawl too large for a function; the same code either way.

The crawler definition comes from the catalog (``--name``: GetCrawler and GetClassifier) or from a
JSON file in GetCrawler's shape (``--definition``). Endpoints come from ``--endpoint-url`` /
``AWS_ENDPOINT_URL_GLUE`` and ``AWS_ENDPOINT_URL_S3`` (e.g. moto's S3 server locally),
credentials from the environment. Prints the run's result as JSON; exit code 1 when the crawl
failed (the message AWS would put in LastCrawl.ErrorMessage on stderr, one line).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Optional, Sequence

import boto3

from pipelines.crawl import CrawlFailed, run_crawl


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pipelines.crawl", description=__doc__.split("\n\n")[0])
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--name", help="crawler to run, read with GetCrawler from the catalog")
    which.add_argument("--definition", metavar="FILE", help="JSON file: a Crawler structure (GetCrawler's shape)")
    parser.add_argument("--endpoint-url", help="the catalog (default: AWS_ENDPOINT_URL_GLUE, else AWS)")
    parser.add_argument("--region", default=os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
                        or "us-east-1", help="region (default: AWS_REGION, else us-east-1)")
    args = parser.parse_args(argv)
    glue = boto3.client("glue", region_name=args.region,
                        endpoint_url=args.endpoint_url or os.environ.get("AWS_ENDPOINT_URL_GLUE") or None)
    s3 = boto3.client("s3", region_name=args.region, endpoint_url=os.environ.get("AWS_ENDPOINT_URL_S3") or None)
    try:
        if args.name:
            crawler: dict[str, Any] = glue.get_crawler(Name=args.name)["Crawler"]
        else:
            with open(args.definition) as handle:
                crawler = json.load(handle)
        classifiers = [glue.get_classifier(Name=name)["Classifier"] for name in crawler.get("Classifiers") or []]
        result = run_crawl(crawler, classifiers=classifiers, glue=glue, s3=s3, should_stop=lambda: False,
                           progress=lambda _: None)
    except CrawlFailed as error:
        print(f"python -m pipelines.crawl: failed: {error}", file=sys.stderr)
        return 1
    except Exception as error:  # noqa: BLE001  one line, not a traceback
        print(f"python -m pipelines.crawl: failed: {type(error).__name__}: {str(error).splitlines()[0]}",
              file=sys.stderr)
        return 1
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
