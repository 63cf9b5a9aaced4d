"""SigV4 presence and format checks, with DynamoDB's texts (signatures are verified by security/authenticator.py)."""

from __future__ import annotations

from dynastore import messages
from dynastore.errors import IncompleteSignatureException, MissingAuthenticationTokenException
from dynastore.security.authenticator import check_presigned_query, is_presigned

_REQUIRED_PARAMS = ("Credential", "Signature", "SignedHeaders")


def check(headers: dict[str, str], path: str = "/") -> None:
    """Raise the error DynamoDB gives a request whose Authorization header is missing or incomplete. A request
    presigned in its query string instead (no Authorization header) must carry the signature's parameters."""
    authorization = headers.get("authorization")
    if authorization is not None and _well_formed(authorization) and ("x-amz-date" in headers or "date" in headers):
        return
    if authorization is None and is_presigned(path):
        check_presigned_query(path.partition("?")[2])
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


def _well_formed(authorization: str) -> bool:
    """What SDKs send, `AWS4-<algorithm> Credential=<c>, SignedHeaders=<h>, Signature=<s>` with no spaces or
    commas in the values: a header of this form passes every check, so the request skips the parsing."""
    parts = authorization.split(", ")
    if len(parts) != 3:
        return False
    scheme, _, credential = parts[0].partition(" Credential=")
    signed, signature = parts[1], parts[2]
    return (
        scheme.startswith("AWS4-")
        and " " not in scheme
        and _plain_value(credential)
        and signed.startswith("SignedHeaders=")
        and _plain_value(signed[14:])
        and signature.startswith("Signature=")
        and _plain_value(signature[10:])
    )


def _plain_value(value: str) -> bool:
    return value != "" and " " not in value and "," not in value


def _auth_params(authorization: str) -> dict[str, str]:
    """`AWS4-HMAC-SHA256 Credential=a/b, SignedHeaders=h, Signature=s` -> {"Credential": "a/b", ...}."""
    _, _, rest = authorization.strip().partition(" ")
    params: dict[str, str] = {}
    for part in rest.replace(" ", "").split(","):
        name, _, value = part.partition("=")
        params[name] = value
    return params
