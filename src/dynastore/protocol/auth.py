"""SigV4 presence and format checks, with DynamoDB's texts. Signature verification plugs in here later."""

from __future__ import annotations

import re
from collections.abc import Mapping

from dynastore import messages
from dynastore.errors import IncompleteSignatureException, MissingAuthenticationTokenException

_REQUIRED_PARAMS = ("Credential", "Signature", "SignedHeaders")


# What SDKs send; a header of this form passes every check below, so it skips the parsing.
_WELL_FORMED = re.compile(r"AWS4-[\w-]+ Credential=[^,\s]+, ?SignedHeaders=[^,\s]+, ?Signature=[^,\s]+")


def check(headers: Mapping[str, str]) -> None:
    """Raise the error DynamoDB gives a request whose Authorization header is missing or incomplete."""
    authorization = headers.get("authorization")
    if (
        authorization is not None
        and _WELL_FORMED.fullmatch(authorization) is not None
        and ("x-amz-date" in headers or "date" in headers)
    ):
        return
    if not authorization or authorization.strip()[:5] != "AWS4-":
        raise MissingAuthenticationTokenException(messages.AUTH_MISSING_TOKEN)
    params = _auth_params(authorization)
    problems = "".join(
        messages.AUTH_REQUIRES_PARAM.format(param=name) for name in _REQUIRED_PARAMS if not params.get(name)
    )
    if "x-amz-date" not in headers and "date" not in headers:
        problems += messages.AUTH_REQUIRES_DATE
    if problems:
        raise IncompleteSignatureException(problems + "Authorization=" + authorization)


def _auth_params(authorization: str) -> dict[str, str]:
    """`AWS4-HMAC-SHA256 Credential=a/b, SignedHeaders=h, Signature=s` -> {"Credential": "a/b", ...}."""
    _, _, rest = authorization.strip().partition(" ")
    params: dict[str, str] = {}
    for part in rest.replace(" ", "").split(","):
        name, _, value = part.partition("=")
        params[name] = value
    return params
