"""The committed CloudFormation template (tables from the PynamoDB models, the identities KMS key)
agrees with what infra.cloudformation generates."""

import json
import pathlib

from infra.cloudformation import template

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_committed_template_matches_models():
    committed = json.loads((ROOT / "infra" / "dynamodb-tables.json").read_text())
    assert committed == template(), "regenerate: python -m infra.cloudformation > infra/dynamodb-tables.json"
