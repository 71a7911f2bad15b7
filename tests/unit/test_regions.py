"""The caller's region must be an AWS region (chalicelib/regions.py, context.require_region), in
every mode and protocol: the SigV4 scope, open or verified, and a Paimon bearer token's region."""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Any

import pytest

from chalicelib import errors, regions
from chalicelib.context import context_from_bearer, context_from_request, require_region
from chalicelib.protocol import sigv4
from tests.unit.test_sigv4 import KEY_ID, SECRET, _signed, known_key  # noqa: F401 - the fixture

# One region of every partition botocore 1.44 lists, and names a partition's regionRegex accepts
# though no botocore lists them yet (a region newer than the installed botocore).
REAL = ["us-east-1", "eu-west-1", "ap-southeast-7", "mx-central-1", "cn-north-1", "cn-northwest-1",
        "us-gov-west-1", "us-iso-east-1", "us-isob-east-1", "eu-isoe-west-1", "us-isof-south-1", "eusc-de-east-1"]
NEWER = ["eu-south-9", "ap-northeast-9", "us-gov-central-3", "cn-southwest-7"]
FAKE = ["xx-nowhere-9", "local", "aws-global", "aws-cn-global", "fips-us-east-1", "us-east", "US-EAST-1",
        "us_east_1", "us-east-1 ", "us-east-1\n", "eu-wést-1", "", "r" * 33, "us-\u0661-1"]


@pytest.mark.parametrize("name", REAL + NEWER)
def test_aws_regions_are_regions(name: str) -> None:
    assert regions.is_region(name)
    assert require_region(name) == name


@pytest.mark.parametrize("name", FAKE)
def test_other_names_are_not(name: str) -> None:
    assert not regions.is_region(name)
    with pytest.raises(errors.SignatureDoesNotMatchException, match="should be scoped to a valid region, not '"):
        require_region(name)


def test_every_partition_is_known() -> None:
    from botocore.loaders import create_loader

    known = regions.known_regions()
    for partition in create_loader().load_data("partitions")["partitions"]:
        listed = {name for name in partition["regions"] if not name.endswith("-global")}
        assert listed and listed <= known, partition["id"]
    assert not any(name.endswith("-global") for name in known)


def test_the_partitions_are_read_at_first_use_not_at_import() -> None:
    code = ("import app, chalicelib.regions as r; print(r._partitions.cache_info().currsize); "
            "r.is_region('us-east-1'); print(r._partitions.cache_info().currsize)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["0", "1"]


def _open_sigv4(region: str) -> dict[str, str]:
    return {"authorization": f"AWS4-HMAC-SHA256 Credential=111122223333/20260101/{region}/glue/aws4_request, "
                             "SignedHeaders=host, Signature=0"}


def test_the_open_mode_refuses_an_unknown_region() -> None:
    assert context_from_request(_open_sigv4("cn-north-1"), None).region == "cn-north-1"
    with pytest.raises(errors.SignatureDoesNotMatchException, match="not 'xx-nowhere-9'"):
        context_from_request(_open_sigv4("xx-nowhere-9"), None)
    assert context_from_bearer({"authorization": "Bearer 111122223333/us-gov-east-1"}, None).region == "us-gov-east-1"
    with pytest.raises(errors.SignatureDoesNotMatchException, match="bearer token should be scoped"):
        context_from_bearer({"authorization": "Bearer 111122223333/xx-nowhere-9"}, None)


def test_verification_refuses_an_unknown_region(known_key: Any) -> None:  # noqa: F811
    assert sigv4.authenticate("glue", "POST", "/prod/", _signed(region="us-isob-east-1"), b'{"a":1}').region == (
        "us-isob-east-1")
    with pytest.raises(errors.SignatureDoesNotMatchException, match="valid region, not 'xx-nowhere-9'"):
        sigv4.authenticate("glue", "POST", "/prod/", _signed(region="xx-nowhere-9"), b'{"a":1}')


def test_bearer_tokens_need_a_known_region(known_key: Any) -> None:  # noqa: F811
    expires = int(time.time()) + 60
    with pytest.raises(ValueError, match="valid AWS region"):
        sigv4.make_token(KEY_ID, SECRET, "xx-nowhere-9", expires)
    # A token carrying an unknown region (made before the rule, or by hand) is refused, MAC or not.
    forged = f"gc1.{KEY_ID}.xx-nowhere-9.{expires}.{sigv4._token_mac(SECRET, KEY_ID, 'xx-nowhere-9', expires)}"
    with pytest.raises(errors.SignatureDoesNotMatchException, match="bearer token should be scoped"):
        sigv4.authenticate_bearer({"authorization": f"Bearer {forged}"})
    token = sigv4.make_token(KEY_ID, SECRET, "cn-northwest-1", expires)
    assert sigv4.authenticate_bearer({"authorization": f"Bearer {token}"}).region == "cn-northwest-1"
