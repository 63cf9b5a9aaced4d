"""Web identity tokens (OpenID Connect ID tokens, JWTs): verified against their provider's keys with joserfc.

A token is accepted when its issuer (``iss``) is a registered provider (security/roles.py), its signature verifies
against one of that provider's keys (RS256 or ES256, picked by the header's ``kid``), one of its audiences
(``aud``) is one the provider lists, it has a subject (``sub``), and the server's clock is before its expiry
(``exp``) and not before its ``nbf`` (each with ``WEB_TOKEN_SKEW_SECONDS`` of skew). Refusals carry STS's error
code and text.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

import orjson
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from dynastore import messages
from dynastore.limits import WEB_TOKEN_SKEW_SECONDS

__all__ = ["ALGORITHMS", "TokenRefused", "VerifiedToken", "names_unknown_key", "unverified_issuer", "verify"]

ALGORITHMS = ("RS256", "ES256")
INVALID_IDENTITY_TOKEN, EXPIRED_TOKEN = "InvalidIdentityToken", "ExpiredTokenException"
IDP_REJECTED_CLAIM = "IDPRejectedClaim"


class TokenRefused(Exception):
    """A token STS refuses: ``code`` is STS's error code, the text its message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class VerifiedToken:
    __slots__ = ("issuer", "subject", "audience", "provider")

    def __init__(self, issuer: str, subject: str, audience: str, provider: dict[str, Any]) -> None:
        self.issuer = issuer
        self.subject = subject
        self.audience = audience  # the audience the provider lists (a token may name several)
        self.provider = provider


def verify(token: str, providers: dict[str, Any], now: float) -> VerifiedToken:
    """The verified token; raises TokenRefused otherwise."""
    issuer = unverified_issuer(token)
    provider = providers.get(issuer)
    if provider is None:
        raise TokenRefused(INVALID_IDENTITY_TOKEN, messages.STS_NO_PROVIDER.format(issuer=issuer))
    try:
        keys = KeySet.import_key_set(provider["jwks"])
        claims = jwt.decode(token, keys, algorithms=list(ALGORITHMS)).claims
    except (JoseError, ValueError, KeyError, TypeError):
        raise TokenRefused(INVALID_IDENTITY_TOKEN, messages.STS_TOKEN_NOT_VALIDATED) from None
    audience = _audience(claims.get("aud"), provider["audiences"])
    _check_times(claims, now)
    subject = claims.get("sub")
    if not isinstance(subject, str) or not subject:
        raise TokenRefused(IDP_REJECTED_CLAIM, messages.STS_TOKEN_NO_SUBJECT)
    return VerifiedToken(issuer, subject, audience, provider)


def names_unknown_key(token: str, provider: dict[str, Any]) -> bool:
    """Whether the token's header names a ``kid`` that none of the provider's keys has (its keys may have rotated)."""
    head = token.split(".", 1)[0]
    try:
        header = orjson.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    except (binascii.Error, ValueError):
        return False
    kid = header.get("kid") if isinstance(header, dict) else None
    if not isinstance(kid, str):
        return False
    keys = provider.get("jwks", {}).get("keys", [])
    return not any(isinstance(key, dict) and key.get("kid") == kid for key in keys)


def unverified_issuer(token: str) -> str:
    """The ``iss`` of a compact JWS, read before its signature is checked (it says whose keys to check it with)."""
    parts = token.split(".")
    if len(parts) != 3:
        raise TokenRefused(INVALID_IDENTITY_TOKEN, messages.STS_NOT_A_JWT)
    try:
        payload = orjson.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (binascii.Error, ValueError):
        raise TokenRefused(INVALID_IDENTITY_TOKEN, messages.STS_NOT_A_JWT) from None
    issuer = payload.get("iss") if isinstance(payload, dict) else None
    if not isinstance(issuer, str) or not issuer:
        raise TokenRefused(INVALID_IDENTITY_TOKEN, messages.STS_NOT_A_JWT)
    return issuer


def _audience(aud: Any, accepted: list[str]) -> str:
    named = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
    for audience in named:
        if isinstance(audience, str) and audience in accepted:
            return audience
    raise TokenRefused(INVALID_IDENTITY_TOKEN, messages.STS_INCORRECT_AUDIENCE)


def _check_times(claims: dict[str, Any], now: float) -> None:
    expiration = claims.get("exp")
    if not isinstance(expiration, (int, float)) or isinstance(expiration, bool):
        raise TokenRefused(INVALID_IDENTITY_TOKEN, messages.STS_TOKEN_NOT_VALIDATED)
    if now >= expiration + WEB_TOKEN_SKEW_SECONDS:
        raise TokenRefused(EXPIRED_TOKEN, messages.STS_TOKEN_EXPIRED.format(now=int(now), expiration=int(expiration)))
    not_before = claims.get("nbf")
    if not isinstance(not_before, (int, float)) or isinstance(not_before, bool):
        return
    if now + WEB_TOKEN_SKEW_SECONDS < not_before:
        raise TokenRefused(
            INVALID_IDENTITY_TOKEN, messages.STS_TOKEN_NOT_YET_VALID.format(now=int(now), nbf=int(not_before))
        )
