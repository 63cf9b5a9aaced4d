"""The STS endpoint (``--auth sigv4`` only), served on DynamoDB's: AssumeRoleWithWebIdentity, AssumeRole and
GetCallerIdentity in AWS's query protocol (a form-encoded POST, ``Action=...&Version=2011-06-15``), answered in
the XML botocore's ``sts`` model reads, so ``boto3.client("sts", endpoint_url=...)`` and the SDKs' web identity
credential providers work unchanged.

AssumeRoleWithWebIdentity is unsigned, as on AWS: the token proves who asks (security/web_tokens.py), the role's
trust policy decides whether they may (``sts:AssumeRoleWithWebIdentity``, conditions on the provider's ``aud`` and
``sub``). AssumeRole and GetCallerIdentity are signed with SigV4 for the service ``sts``. A session's credentials
are temporary credentials in the credentials store (security/roles.py), expiring on the server's clock.

The protocol layer sends here the POSTs whose Content-Type is ``application/x-www-form-urlencoded``; DynamoDB's
requests (JSON with X-Amz-Target) never come here.
"""

from __future__ import annotations

import math
import re
import time
import uuid
from collections.abc import Callable
from typing import Any, Final
from urllib.parse import parse_qs
from xml.sax.saxutils import escape

import orjson

from dynastore import limits, messages
from dynastore.errors import DynamoError
from dynastore.security import roles, users
from dynastore.security.authenticator import Authenticator
from dynastore.security.caller import Caller
from dynastore.security.credentials import CredentialStore, role_arn
from dynastore.security.identity_policies import IdentityPolicies
from dynastore.security.jwks_cache import JwksCache
from dynastore.security.policy_documents import IDENTITY, TRUST, PolicyDocumentError, compiled, parse_policy
from dynastore.security.policy_evaluation import ALLOW, RequestContext, decide, trust_decision
from dynastore.security.web_tokens import TokenRefused, names_unknown_key, unverified_issuer, verify
from dynastore.util.clock import Clock

__all__ = ["FORM_CONTENT_TYPE", "StsError", "StsService"]

FORM_CONTENT_TYPE: Final = "application/x-www-form-urlencoded"
VERSION = "2011-06-15"
NAMESPACE = "https://sts.amazonaws.com/doc/2011-06-15/"
XML_CONTENT_TYPE = "text/xml"
_SESSION_NAME = re.compile(r"[\w+=,.@-]*", re.ASCII)
_ROLE_ARN = re.compile(r"arn:aws:iam::(\d{12}):role/(?:[\w+=,.@/-]*/)?([\w+=,.@-]{1,64})", re.ASCII)
_POLICY_TEXT = re.compile(r"[\t\n\r\x20-\xff]+")
_POLICY_PATTERN = r"[\u0009\u000A\u000D\u0020-\u00FF]+"  # as STS's message shows it

# DynamoDB's authentication errors, as STS names them (the texts are the same).
_AUTH_CODES = {
    "UnrecognizedClientException": "InvalidClientTokenId",
    "InvalidSignatureException": "SignatureDoesNotMatch",
    "ExpiredTokenException": "ExpiredToken",
    "MissingAuthenticationTokenException": "MissingAuthenticationToken",
    "IncompleteSignatureException": "IncompleteSignature",
}
_STATUS = {"AccessDenied": 403, "IDPRejectedClaim": 403, "InvalidClientTokenId": 403, "SignatureDoesNotMatch": 403,
           "ExpiredToken": 403, "MissingAuthenticationToken": 403, "IncompleteSignature": 403}  # fmt: skip


class StsError(Exception):
    """A request STS refuses: its error code (the XML's Code) and text."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class StsService:
    def __init__(
        self,
        authenticator: Authenticator,
        store: CredentialStore,
        policies: IdentityPolicies,
        clock: Clock,
        jwks: JwksCache | None = None,
    ) -> None:
        self._authenticator = authenticator
        # The keys of providers added with --jwks-url, fetched by the server (security/jwks_cache.py).
        self.jwks = jwks if jwks is not None else JwksCache(clock, store.path)
        self._store = store
        self._policies = policies
        self._clock = clock
        self._actions: dict[str, Callable[[dict[str, str], dict[str, str], bytes, str], str]] = {
            "AssumeRoleWithWebIdentity": self._assume_role_with_web_identity,
            "AssumeRole": self._assume_role,
            "GetCallerIdentity": self._get_caller_identity,
        }

    def handle(self, headers: dict[str, str], body: bytes, path: str) -> tuple[int, bytes]:
        """(HTTP status, XML body) of one STS request."""
        request_id = str(uuid.uuid4())
        try:
            params = _form(body)
            action = params.get("Action")
            if not action:
                raise StsError("MissingAction", messages.STS_MISSING_ACTION)
            run = self._actions.get(action)
            version = params.get("Version", "")
            if run is None or version != VERSION:
                raise StsError("InvalidAction", messages.STS_INVALID_ACTION.format(action=action, version=version))
            result = run(params, headers, body, path)
        except StsError as e:
            return _STATUS.get(e.code, 400), _error_xml(e.code, e.message, request_id)
        return 200, _response_xml(action, result, request_id)

    # ---- actions ---------------------------------------------------------------------------------------------
    def _assume_role_with_web_identity(
        self, params: dict[str, str], headers: dict[str, str], body: bytes, path: str
    ) -> str:
        _validate(params, ("RoleArn", "RoleSessionName", "WebIdentityToken"), token_member="WebIdentityToken")
        self._store.refresh()
        now = self._clock.now()
        providers = self.jwks.providers(self._store.providers)
        try:
            token = verify(params["WebIdentityToken"], providers, now)
        except TokenRefused as refused:
            self._unknown_key(params["WebIdentityToken"], providers, refused)
            raise StsError(refused.code, refused.message) from None
        name, role = self._role(params["RoleArn"])
        if role is None:
            raise StsError("AccessDenied", messages.STS_ACCESS_DENIED_WEB_IDENTITY)
        provider_account = str(token.provider["account"])
        if provider_account != str(role["account"]):  # a provider is its account's, as the role is
            raise StsError("InvalidIdentityToken", messages.STS_NO_PROVIDER.format(issuer=token.issuer))
        claims = roles.claim_keys(token.issuer, token.subject, token.audience)
        names = (roles.provider_arn(provider_account, token.issuer), roles.provider_key(token.issuer))
        trust = compiled(orjson.dumps(role["trust_policy"]).decode(), TRUST)
        values: dict[str, Any] = dict(claims)
        values["sts:rolesessionname"] = params["RoleSessionName"]
        caller = Caller(provider_account, "", arn=names[0], claims=claims)
        context = RequestContext(caller, values, self._clock)
        if trust_decision(trust, "sts:assumerolewithwebidentity", names, context) != ALLOW:
            raise StsError("AccessDenied", messages.STS_ACCESS_DENIED_WEB_IDENTITY)
        policy, packed = _session_policy(params)
        entry = self._issue(name, role, params, now, claims, policy)
        provider = roles.provider_key(token.issuer)
        return (
            _credentials_xml(entry) + f"<SubjectFromWebIdentityToken>{escape(token.subject)}"
            "</SubjectFromWebIdentityToken>" + _assumed_role_xml(entry)
            + (f"<PackedPolicySize>{packed}</PackedPolicySize>" if policy else "")
            + f"<Provider>{escape(provider)}</Provider><Audience>{escape(token.audience)}</Audience>"
        )  # fmt: skip

    def _assume_role(self, params: dict[str, str], headers: dict[str, str], body: bytes, path: str) -> str:
        caller = self._authenticate(headers, body, path)
        _validate(params, ("RoleArn", "RoleSessionName"))
        name, role = self._role(params["RoleArn"])
        denied = StsError(
            "AccessDenied", messages.STS_ACCESS_DENIED_ASSUME_ROLE.format(principal=caller.arn, role=params["RoleArn"])
        )
        if role is None:
            raise denied
        arn = role_arn(str(role["account"]), name)
        trust = compiled(orjson.dumps(role["trust_policy"]).decode(), TRUST)
        values: dict[str, Any] = {"sts:rolesessionname": params["RoleSessionName"]}
        if "ExternalId" in params:
            values["sts:externalid"] = params["ExternalId"]
        identity = self._policies.for_caller(caller)
        if decide(caller, "sts:AssumeRole", arn, values, identity, trust, str(role["account"]), self._clock):
            raise denied
        policy, packed = _session_policy(params)
        entry = self._issue(name, role, params, self._clock.now(), None, policy)
        return (
            _credentials_xml(entry) + _assumed_role_xml(entry)
            + (f"<PackedPolicySize>{packed}</PackedPolicySize>" if policy else "")
        )  # fmt: skip

    def _get_caller_identity(self, params: dict[str, str], headers: dict[str, str], body: bytes, path: str) -> str:
        caller = self._authenticate(headers, body, path)
        return (
            f"<Arn>{escape(caller.arn)}</Arn><UserId>{escape(caller.user_id)}</UserId>"
            f"<Account>{escape(caller.account_id)}</Account>"
        )

    # ---- parts -----------------------------------------------------------------------------------------------
    def _unknown_key(self, token: str, providers: dict[str, Any], refused: TokenRefused) -> None:
        """A token refused for a key its provider's keys lack: have them fetched again (the provider may have
        rotated them; the token is refused now and accepted once the fetch lands)."""
        if refused.message != messages.STS_TOKEN_NOT_VALIDATED:
            return
        issuer = unverified_issuer(token)
        provider = providers.get(issuer)
        if provider is not None and names_unknown_key(token, provider):
            self.jwks.key_missing(issuer)

    def _authenticate(self, headers: dict[str, str], body: bytes, path: str) -> Caller:
        try:
            return self._authenticator.authenticate("POST", path, headers, body, service="sts")
        except DynamoError as e:
            code = _AUTH_CODES.get(type(e).__name__, "InvalidClientTokenId")
            raise StsError(code, e.message or messages.AUTH_UNKNOWN_KEY) from None

    def _role(self, arn: str) -> tuple[str, dict[str, Any] | None]:
        """The role a RoleArn names (None: no such role in that account)."""
        self._store.refresh()
        matched = _ROLE_ARN.fullmatch(arn)
        if matched is None:
            raise StsError("ValidationError", messages.STS_ROLE_ARN_INVALID.format(arn=arn))
        account, name = matched.groups()
        role: dict[str, Any] | None = self._store.roles.get(name)
        if role is None or str(role["account"]) != account:
            return name, None
        return name, role

    def _issue(
        self,
        name: str,
        role: dict[str, Any],
        params: dict[str, str],
        now: float,
        claims: dict[str, str] | None,
        policy: str | None,
    ) -> dict[str, Any]:
        duration = int(params.get("DurationSeconds", limits.ROLE_SESSION_SECONDS_DEFAULT))
        if duration > int(role["max_session_duration"]):
            raise StsError("ValidationError", messages.STS_DURATION_OVER_ROLE_MAXIMUM)
        entry = roles.new_session(name, role, params["RoleSessionName"], int(now) + duration, claims, policy)
        path = self._store.path
        assert path is not None  # a role exists: it was read from the store's file
        users.change(path, lambda document: document.setdefault("temporary", []).append(entry), now)
        self._store.refresh()
        return entry


def _form(body: bytes) -> dict[str, str]:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise StsError("MalformedQueryString", "The request body is not valid UTF-8") from None
    return {name: values[0] for name, values in parse_qs(text, keep_blank_values=True).items()}


def _member(name: str) -> str:
    """How STS names a member in validation messages (``roleSessionName``)."""
    return name[0].lower() + name[1:]


def _validate(params: dict[str, str], required: tuple[str, ...], token_member: str = "") -> None:
    """STS's validation of the request's members (botocore's ``sts`` model constraints), all faults in one
    ValidationError as AWS reports them."""
    faults: list[str] = []
    for name in required:
        if name not in params:
            faults.append(messages.STS_MISSING_MEMBER.format(member=_member(name)))
    session = params.get("RoleSessionName")
    if session is not None:
        _length(faults, "RoleSessionName", session, 2, 64)
        if not _SESSION_NAME.fullmatch(session):
            faults.append(messages.STS_MEMBER_PATTERN.format(value=session, member="roleSessionName",
                                                             pattern=_SESSION_NAME.pattern))  # fmt: skip
    if "RoleArn" in params:
        _length(faults, "RoleArn", params["RoleArn"], 20, 2048)
    if token_member and token_member in params:
        _length(faults, token_member, params[token_member], 4, 20000, show=False)
    if "DurationSeconds" in params:
        text = params["DurationSeconds"]
        if not (text.isascii() and text.isdigit()) or int(text) < limits.ROLE_SESSION_SECONDS_MIN:
            faults.append(messages.STS_MEMBER_RANGE.format(value=text, member="durationSeconds",
                                                           bound="greater than or equal to", limit=900))  # fmt: skip
        elif int(text) > limits.ROLE_MAX_SESSION_SECONDS:
            faults.append(messages.STS_MEMBER_RANGE.format(value=text, member="durationSeconds",
                                                           bound="less than or equal to", limit=43200))  # fmt: skip
    if "Policy" in params:
        policy = params["Policy"]
        _length(faults, "Policy", policy, 1, 2048)
        if policy and not _POLICY_TEXT.fullmatch(policy):
            faults.append(messages.STS_MEMBER_PATTERN.format(value=policy, member="policy", pattern=_POLICY_PATTERN))
    if faults:
        count = len(faults)
        head = f"{count} validation error{'s' if count > 1 else ''} detected: "
        raise StsError("ValidationError", head + "; ".join(faults))


def _length(faults: list[str], name: str, value: str, low: int, high: int, show: bool = True) -> None:
    shown = value if show else "***"
    if len(value) < low:
        faults.append(messages.STS_MEMBER_LENGTH.format(value=shown, member=_member(name),
                                                        bound="greater than or equal to", limit=low))  # fmt: skip
    elif len(value) > high:
        faults.append(messages.STS_MEMBER_LENGTH.format(value=shown, member=_member(name),
                                                        bound="less than or equal to", limit=high))  # fmt: skip


def _session_policy(params: dict[str, str]) -> tuple[str | None, int]:
    """The session's policies (Policy and PolicyArns) as one document, and its PackedPolicySize (a percentage of
    what a session may carry); (None, 0) when the request passes none."""
    statements: list[Any] = []
    chars = 0
    text = params.get("Policy")
    if text is not None:
        try:
            policy = parse_policy(text, IDENTITY)
        except PolicyDocumentError as exc:
            detail = messages.STS_MALFORMED_POLICY_DETAIL.format(detail=exc.detail)
            raise StsError("MalformedPolicyDocument", detail) from None
        statements.extend(policy_statements(policy.text))
        chars += sum(1 for ch in policy.text if not ch.isspace())
    for arn in _policy_arns(params):
        managed = roles.MANAGED_POLICIES.get(arn)
        if managed is None:
            raise StsError("MalformedPolicyDocument", messages.STS_POLICY_ARN_NOT_FOUND.format(arn=arn))
        statements.extend(managed["Statement"])
        chars += len(arn)
    if not statements:
        return None, 0
    packed = math.ceil(100 * chars / limits.SESSION_POLICY_PACKED_CHARS)
    if packed > 100:
        raise StsError("PackedPolicyTooLarge", messages.STS_PACKED_POLICY_TOO_LARGE.format(percent=packed))
    combined = orjson.dumps({"Version": "2012-10-17", "Statement": statements}).decode()
    return combined, packed


def policy_statements(text: str) -> list[Any]:
    raw = orjson.loads(text)["Statement"]
    return [raw] if isinstance(raw, dict) else list(raw)


def _policy_arns(params: dict[str, str]) -> list[str]:
    """``PolicyArns.member.N.arn`` in the order of N."""
    found: list[tuple[int, str]] = []
    for name, value in params.items():
        parts = name.split(".")
        if len(parts) == 4 and parts[:2] == ["PolicyArns", "member"] and parts[3] == "arn" and parts[2].isdigit():
            found.append((int(parts[2]), value))
    return [arn for _, arn in sorted(found)]


# ---- XML -------------------------------------------------------------------------------------------------------
def _iso(epoch: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def _credentials_xml(entry: dict[str, Any]) -> str:
    return (
        f"<Credentials><AccessKeyId>{entry['id']}</AccessKeyId>"
        f"<SecretAccessKey>{escape(entry['secret'])}</SecretAccessKey>"
        f"<SessionToken>{escape(entry['token'])}</SessionToken>"
        f"<Expiration>{_iso(int(entry['expiration']))}</Expiration></Credentials>"
    )


def _assumed_role_xml(entry: dict[str, Any]) -> str:
    return (
        f"<AssumedRoleUser><AssumedRoleId>{escape(entry['role_id'])}:{escape(entry['session'])}</AssumedRoleId>"
        f"<Arn>{escape(roles.session_arn(entry))}</Arn></AssumedRoleUser>"
    )


def _response_xml(action: str, result: str, request_id: str) -> bytes:
    return (
        f'<{action}Response xmlns="{NAMESPACE}">\n  <{action}Result>{result}</{action}Result>\n'
        f"  <ResponseMetadata><RequestId>{request_id}</RequestId></ResponseMetadata>\n</{action}Response>\n"
    ).encode()


def _error_xml(code: str, message: str, request_id: str) -> bytes:
    return (
        f'<ErrorResponse xmlns="{NAMESPACE}">\n  <Error>\n    <Type>Sender</Type>\n    <Code>{escape(code)}</Code>\n'
        f"    <Message>{escape(message)}</Message>\n  </Error>\n  <RequestId>{request_id}</RequestId>\n"
        "</ErrorResponse>\n"
    ).encode()
