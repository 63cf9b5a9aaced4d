"""Web identity federation end to end: the test plays an OpenID Connect provider (an RSA and an EC key pair, a JWKS
file), a server with ``--auth sigv4`` knows it (``dynastore oidc add``) and a role its users may assume
(``dynastore roles add`` with a trust policy on the provider's audience, a LeadingKeys policy with
``dynastore policies put --role``). Each user exchanges a token for temporary credentials through boto3's STS
client and reaches only the items under their own subject, through every kind of DynamoDB request.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from joserfc import jwt
from joserfc.jwk import ECKey, RSAKey

from tests.e2e.conftest import BOTO_CONFIG
from tests.e2e.server_process import ServerProcess
from tests.e2e.test_auth import admin

OWNER = "111111111111"
REGION = "us-east-1"
ISSUER = "https://login.example.com"
AUDIENCE = "notes-app"
PROVIDER_ARN = f"arn:aws:iam::{OWNER}:oidc-provider/login.example.com"
APP_ROLE = f"arn:aws:iam::{OWNER}:role/NotesUsers"
CONSOLE_ROLE = f"arn:aws:iam::{OWNER}:role/ConsoleUsers"
OPERATORS_ROLE = f"arn:aws:iam::{OWNER}:role/Operators"
NOTES = f"arn:aws:dynamodb:{REGION}:{OWNER}:table/Notes"
ALICE, BOB = "alice-7f3a", "bob-91c2"
ITEM_ACTIONS = [
    "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:Query",
    "dynamodb:BatchGetItem", "dynamodb:BatchWriteItem", "dynamodb:ConditionCheckItem", "dynamodb:PartiQLSelect",
    "dynamodb:PartiQLInsert", "dynamodb:PartiQLUpdate", "dynamodb:PartiQLDelete",
]  # fmt: skip


def _trust(audience: str) -> dict[str, Any]:
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Federated": PROVIDER_ARN},
                "Action": "sts:AssumeRoleWithWebIdentity",
                "Condition": {"StringEquals": {"login.example.com:aud": audience}},
            }
        ],
    }


OWN_ITEMS_ONLY = {
    "Version": "2012-10-17",
    "Statement": [
        {
            "Effect": "Allow",
            "Action": ITEM_ACTIONS,
            "Resource": NOTES,
            "Condition": {"ForAllValues:StringEquals": {"dynamodb:LeadingKeys": ["${login.example.com:sub}"]}},
        }
    ],
}


AMAZON, AMAZON_APP, AMAZON_USER = "https://www.amazon.com", "amzn1.application.notes", "amzn1.account.AF6RHEXAMPLE"
AMAZON_TRUST = {
    "Version": "2012-10-17",
    "Statement": [
        {
            "Effect": "Allow",
            "Principal": {"Federated": "www.amazon.com"},
            "Action": "sts:AssumeRoleWithWebIdentity",
            "Condition": {"StringEquals": {"www.amazon.com:app_id": AMAZON_APP}},
        }
    ],
}
AMAZON_OWN_ITEMS = {
    "Version": "2012-10-17",
    "Statement": [
        {
            "Effect": "Allow",
            "Action": ["dynamodb:GetItem", "dynamodb:Query"],
            "Resource": NOTES,
            "Condition": {"ForAllValues:StringEquals": {"dynamodb:LeadingKeys": ["${www.amazon.com:user_id}"]}},
        }
    ],
}


class Provider:
    """The identity provider the test plays: its keys, and the tokens it signs."""

    def __init__(self) -> None:
        self.rsa = RSAKey.generate_key(2048, parameters={"kid": "rsa-1"})
        self.ec = ECKey.generate_key("P-256", parameters={"kid": "ec-1"})
        self.impostor = RSAKey.generate_key(2048, parameters={"kid": "rsa-1"})  # same kid, another key

    def jwks(self) -> dict[str, Any]:
        return {"keys": [self.rsa.as_dict(private=False), self.ec.as_dict(private=False)]}

    def token(self, subject: str, now: float, *, ec: bool = False, lifetime: int = 600, **claims: Any) -> str:
        key = self.ec if ec else self.rsa
        header = {"alg": "ES256" if ec else "RS256", "kid": key.kid}
        payload = {"iss": ISSUER, "sub": subject, "aud": AUDIENCE, "iat": int(now), "exp": int(now) + lifetime}
        payload.update(claims)
        return jwt.encode(header, payload, key)

    def forged(self, subject: str, now: float) -> str:
        payload = {"iss": ISSUER, "sub": subject, "aud": AUDIENCE, "iat": int(now), "exp": int(now) + 600}
        return jwt.encode({"alg": "RS256", "kid": "rsa-1"}, payload, self.impostor)


class World:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.store = folder / "credentials.json"
        self.policies = folder / "policies.json"
        self.provider = Provider()
        self.builder = self._user("builder", "--admin")
        self.operator = self._user("operator")
        self.intruder = self._user("intruder")
        jwks = folder / "jwks.json"
        jwks.write_text(json.dumps(self.provider.jwks()))
        self._cli("oidc", "add", ISSUER, "--audience", AUDIENCE, "--audience", "console", "--jwks", str(jwks),
                  "--account", OWNER)  # fmt: skip
        self._role("NotesUsers", _trust(AUDIENCE))
        self._role("ConsoleUsers", _trust("console"))
        # Login with Amazon as the Developer Guide's fine-grained access example names it
        self._cli("oidc", "add", AMAZON, "--audience", AMAZON_APP, "--jwks", str(jwks), "--account", OWNER)
        self._role("AmazonUsers", AMAZON_TRUST)
        self._policy("--role", "AmazonUsers", AMAZON_OWN_ITEMS)
        self._role(
            "Operators",
            {
                "Version": "2012-10-17",
                "Statement": [
                    {"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{OWNER}:root"}, "Action": "sts:AssumeRole"}
                ],
            },
        )
        self._policy("--role", "NotesUsers", OWN_ITEMS_ONLY)
        self._policy(
            "--role",
            "Operators",
            {
                "Version": "2012-10-17",
                "Statement": [{"Effect": "Allow", "Action": "dynamodb:DescribeTable", "Resource": NOTES}],
            },
        )
        self._policy("--user", "operator", {"Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "Action": "sts:AssumeRole", "Resource": OPERATORS_ROLE}]})  # fmt: skip
        self.server = ServerProcess(
            "--auth", "sigv4", "--manual-clock", "--users-file", str(self.store), "--policies-file",
            str(self.policies), env={"DYNASTORE_ACCOUNT_ID": OWNER, "DYNASTORE_REGION": REGION},
        )  # fmt: skip
        builder = self.client(self.builder)
        builder.create_table(
            TableName="Notes",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
            AttributeDefinitions=[
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "S"},
            ],
            BillingMode="PAY_PER_REQUEST",
        )
        for owner in (ALICE, BOB, AMAZON_USER):
            builder.put_item(TableName="Notes", Item={"pk": {"S": owner}, "sk": {"S": "first"}, "v": {"S": owner}})

    def _cli(self, *args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "dynastore", *args, "--users-file", str(self.store)],
                              capture_output=True, text=True, check=False)  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stdout

    def _user(self, name: str, *extra: str) -> dict[str, str]:
        shown = json.loads(self._cli("users", "add", name, "--account", OWNER, "--json", *extra))
        return {"aws_access_key_id": shown["AccessKeyId"], "aws_secret_access_key": shown["SecretAccessKey"]}

    def _role(self, name: str, trust: dict[str, Any]) -> None:
        document = self.folder / f"trust-{name}.json"
        document.write_text(json.dumps(trust))
        self._cli("roles", "add", name, "--account", OWNER, "--trust-policy", str(document))

    def _policy(self, kind: str, name: str, policy: dict[str, Any]) -> None:
        document = self.folder / f"policy-{name}.json"
        document.write_text(json.dumps(policy))
        done = subprocess.run(
            [sys.executable, "-m", "dynastore", "policies", "put", "--policies-file", str(self.policies),
             "--account-id", OWNER, kind, name, "--name", "main", "--file", str(document)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr

    def now(self) -> float:
        """The server's clock (--manual-clock), read by its admin user."""
        status, body = admin(self.server, self.builder, "GET", "/dynastore/clock")
        assert status == 200, body
        return float(body["now"])

    def client(self, credentials: dict[str, str], service: str = "dynamodb") -> Any:
        return boto3.client(service, endpoint_url=self.server.url, region_name=REGION, config=BOTO_CONFIG,
                            **credentials)  # fmt: skip

    def sts(self) -> Any:
        """An STS client without credentials: AssumeRoleWithWebIdentity is unsigned."""
        return boto3.client(
            "sts", endpoint_url=self.server.url, region_name=REGION, config=BOTO_CONFIG,
            aws_access_key_id="unused", aws_secret_access_key="unused",
        )  # fmt: skip

    def assume(self, token: str, role: str = APP_ROLE, session: str = "app", **extra: Any) -> dict[str, Any]:
        answer: dict[str, Any] = self.sts().assume_role_with_web_identity(
            RoleArn=role, RoleSessionName=session, WebIdentityToken=token, **extra
        )
        return answer

    def session_client(self, answer: dict[str, Any], service: str = "dynamodb") -> Any:
        credentials = answer["Credentials"]
        return self.client(
            {
                "aws_access_key_id": credentials["AccessKeyId"],
                "aws_secret_access_key": credentials["SecretAccessKey"],
                "aws_session_token": credentials["SessionToken"],
            },
            service,
        )


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    made = World(tmp_path_factory.mktemp("web-identity"))
    try:
        yield made
    finally:
        made.server.stop()


def _refused(call: Any) -> tuple[int, str, str]:
    with pytest.raises(ClientError) as refused:
        call()
    response = refused.value.response
    return response["ResponseMetadata"]["HTTPStatusCode"], response["Error"]["Code"], response["Error"]["Message"]


def _denied_text(principal: str, action: str) -> str:
    return (
        f"User: {principal} is not authorized to perform: {action} on resource: {NOTES} because no identity-based "
        f"policy allows the {action} action"
    )


def test_each_user_assumes_the_role_and_reaches_only_their_own_items(world: World) -> None:
    now = world.now()
    alice_answer = world.assume(world.provider.token(ALICE, now), session="alice")  # RS256
    bob_answer = world.assume(world.provider.token(BOB, now, ec=True), session="bob")  # ES256
    assert alice_answer["SubjectFromWebIdentityToken"] == ALICE
    assert alice_answer["Audience"] == AUDIENCE
    assert alice_answer["Provider"] == "login.example.com"
    alice_arn = f"arn:aws:sts::{OWNER}:assumed-role/NotesUsers/alice"
    assert alice_answer["AssumedRoleUser"]["Arn"] == alice_arn
    assert alice_answer["AssumedRoleUser"]["AssumedRoleId"].startswith("AROA")
    assert alice_answer["Credentials"]["AccessKeyId"].startswith("ASIA")
    assert alice_answer["Credentials"]["Expiration"].timestamp() == int(now) + 3600
    alice, bob = world.session_client(alice_answer), world.session_client(bob_answer)
    identity = world.session_client(alice_answer, "sts").get_caller_identity()
    assert (identity["Arn"], identity["Account"]) == (alice_arn, OWNER)
    assert identity["UserId"] == alice_answer["AssumedRoleUser"]["AssumedRoleId"]

    own = {"pk": {"S": ALICE}, "sk": {"S": "first"}}
    other = {"pk": {"S": BOB}, "sk": {"S": "first"}}
    assert alice.get_item(TableName="Notes", Key=own)["Item"]["v"] == {"S": ALICE}
    assert _refused(lambda: alice.get_item(TableName="Notes", Key=other)) == (
        400, "AccessDeniedException", _denied_text(alice_arn, "dynamodb:GetItem"),
    )  # fmt: skip
    alice.put_item(TableName="Notes", Item={"pk": {"S": ALICE}, "sk": {"S": "second"}})
    assert _refused(lambda: alice.put_item(TableName="Notes", Item={"pk": {"S": BOB}, "sk": {"S": "x"}}))[1] == (
        "AccessDeniedException"
    )
    query = alice.query(TableName="Notes", KeyConditionExpression="pk = :p", ExpressionAttributeValues={
        ":p": {"S": ALICE}})  # fmt: skip
    assert [item["sk"]["S"] for item in query["Items"]] == ["first", "second"]
    assert (
        _refused(
            lambda: alice.query(
                TableName="Notes", KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": BOB}}
            )
        )[1]
        == "AccessDeniedException"
    )

    # batches: every key must be the caller's own
    batch = bob.batch_get_item(RequestItems={"Notes": {"Keys": [other]}})
    assert batch["Responses"]["Notes"][0]["v"] == {"S": BOB}
    assert _refused(lambda: bob.batch_get_item(RequestItems={"Notes": {"Keys": [other, own]}}))[1] == (
        "AccessDeniedException"
    )
    bob.batch_write_item(RequestItems={"Notes": [{"PutRequest": {"Item": {"pk": {"S": BOB}, "sk": {"S": "b"}}}}]})
    assert _refused(lambda: bob.batch_write_item(RequestItems={"Notes": [
        {"PutRequest": {"Item": {"pk": {"S": ALICE}, "sk": {"S": "b"}}}}]}))[1] == "AccessDeniedException"  # fmt: skip

    # transactions
    bob.transact_write_items(TransactItems=[{"Put": {"TableName": "Notes", "Item": {"pk": {"S": BOB},
                                                                                    "sk": {"S": "t"}}}}])  # fmt: skip
    assert _refused(lambda: bob.transact_write_items(TransactItems=[
        {"Put": {"TableName": "Notes", "Item": {"pk": {"S": BOB}, "sk": {"S": "t2"}}}},
        {"Put": {"TableName": "Notes", "Item": {"pk": {"S": ALICE}, "sk": {"S": "t2"}}}},
    ]))[1] == "AccessDeniedException"  # fmt: skip

    # PartiQL
    selected = alice.execute_statement(Statement=f"SELECT * FROM Notes WHERE pk = '{ALICE}' AND sk = 'first'")
    assert selected["Items"][0]["v"] == {"S": ALICE}
    alice.execute_statement(Statement=f"INSERT INTO Notes VALUE {{'pk': '{ALICE}', 'sk': 'partiql'}}")
    assert (
        _refused(lambda: alice.execute_statement(Statement=f"SELECT * FROM Notes WHERE pk = '{BOB}' AND sk = 'first'"))[
            1
        ]
        == "AccessDeniedException"
    )

    # the items of the other user are as they were
    builder = world.client(world.builder)
    assert "Item" not in builder.get_item(TableName="Notes", Key={"pk": {"S": BOB}, "sk": {"S": "x"}})
    assert "Item" not in builder.get_item(TableName="Notes", Key={"pk": {"S": ALICE}, "sk": {"S": "b"}})


def test_a_session_policy_narrows_what_the_role_allows(world: World) -> None:
    now = world.now()
    policy = json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": "dynamodb:GetItem", "Resource": NOTES}]})  # fmt: skip
    answer = world.assume(world.provider.token(ALICE, now), session="reader", Policy=policy)
    assert 0 < answer["PackedPolicySize"] <= 100
    reader = world.session_client(answer)
    assert reader.get_item(TableName="Notes", Key={"pk": {"S": ALICE}, "sk": {"S": "first"}})["Item"]
    arn = f"arn:aws:sts::{OWNER}:assumed-role/NotesUsers/reader"
    assert _refused(lambda: reader.put_item(TableName="Notes", Item={"pk": {"S": ALICE}, "sk": {"S": "z"}})) == (
        400, "AccessDeniedException",
        f"User: {arn} is not authorized to perform: dynamodb:PutItem on resource: {NOTES} because no session "
        "policy allows the dynamodb:PutItem action",
    )  # fmt: skip
    # a managed policy by ARN (the DynamoDB part of AWS's read-only policy) narrows the same way
    managed = world.assume(world.provider.token(ALICE, now), session="managed",
                           PolicyArns=[{"arn": "arn:aws:iam::aws:policy/AmazonDynamoDBReadOnlyAccess"}])  # fmt: skip
    assert world.session_client(managed).query(TableName="Notes", KeyConditionExpression="pk = :p",
                                               ExpressionAttributeValues={":p": {"S": ALICE}})["Items"]  # fmt: skip
    assert _refused(lambda: world.session_client(managed).put_item(
        TableName="Notes", Item={"pk": {"S": ALICE}, "sk": {"S": "z"}}))[1] == "AccessDeniedException"  # fmt: skip


def test_tokens_sts_refuses(world: World) -> None:
    now = int(world.now())
    expired = world.provider.token(ALICE, now, lifetime=-3600)
    assert _refused(lambda: world.assume(expired)) == (
        400, "ExpiredTokenException",
        f"Token expired: current date/time {now} must be before the expiration date/time{now - 3600}",
    )  # fmt: skip
    assert _refused(lambda: world.assume(world.provider.forged(ALICE, now))) == (
        400, "InvalidIdentityToken",
        "The web identity token that was passed could not be validated by AWS. Get a new identity token from the "
        "identity provider and then retry the request.",
    )  # fmt: skip
    assert _refused(lambda: world.assume(world.provider.token(ALICE, now, aud="someone-else"))) == (
        400, "InvalidIdentityToken", "Incorrect token audience",
    )  # fmt: skip
    assert _refused(lambda: world.assume(world.provider.token(ALICE, now, iss="https://evil.example.com"))) == (
        400, "InvalidIdentityToken", "No OpenIDConnect provider found in your account for https://evil.example.com",
    )  # fmt: skip
    assert _refused(lambda: world.assume("an-opaque-access-token")) == (
        400, "InvalidIdentityToken",
        "The ID Token provided is not a valid JWT. (You may see this error if you sent an Access Token)",
    )  # fmt: skip
    # a token of the notes app replayed for the console's role: its trust policy wants another audience
    assert _refused(lambda: world.assume(world.provider.token(ALICE, now), role=CONSOLE_ROLE)) == (
        403, "AccessDenied", "Not authorized to perform sts:AssumeRoleWithWebIdentity",
    )  # fmt: skip
    assert world.assume(world.provider.token(ALICE, now, aud="console"), role=CONSOLE_ROLE)["Credentials"]
    assert (
        _refused(lambda: world.assume(world.provider.token(ALICE, now), role=f"arn:aws:iam::{OWNER}:role/None"))[1]
        == "AccessDenied"
    )
    assert _refused(lambda: world.assume(world.provider.token(ALICE, now), session="no spaces")) == (
        400, "ValidationError",
        "1 validation error detected: Value 'no spaces' at 'roleSessionName' failed to satisfy constraint: Member "
        "must satisfy regular expression pattern: [\\w+=,.@-]*",
    )  # fmt: skip
    assert _refused(lambda: world.assume(world.provider.token(ALICE, now), DurationSeconds=7200)) == (
        400, "ValidationError", "The requested DurationSeconds exceeds the MaxSessionDuration set for this role.",
    )  # fmt: skip
    assert _refused(lambda: world.assume(world.provider.token(ALICE, now), Policy="{not json")) == (
        400, "MalformedPolicyDocument", "Syntax errors in policy. This policy contains invalid Json",
    )  # fmt: skip


def test_a_user_assumes_a_role_its_trust_and_own_policy_allow(world: World) -> None:
    sts = world.client(world.operator, "sts")
    answer = sts.assume_role(RoleArn=OPERATORS_ROLE, RoleSessionName="shift")
    operator = world.session_client(answer)
    assert operator.describe_table(TableName="Notes")["Table"]["TableName"] == "Notes"
    arn = f"arn:aws:sts::{OWNER}:assumed-role/Operators/shift"
    assert _refused(lambda: operator.get_item(TableName="Notes", Key={"pk": {"S": ALICE}, "sk": {"S": "first"}})) == (
        400, "AccessDeniedException", _denied_text(arn, "dynamodb:GetItem"),
    )  # fmt: skip
    intruder = f"arn:aws:iam::{OWNER}:user/intruder"
    assert _refused(lambda: world.client(world.intruder, "sts").assume_role(
        RoleArn=OPERATORS_ROLE, RoleSessionName="night")) == (
        403, "AccessDenied",
        f"User: {intruder} is not authorized to perform: sts:AssumeRole on resource: {OPERATORS_ROLE}",
    )  # fmt: skip
    assert world.client(world.intruder, "sts").get_caller_identity()["Arn"] == intruder


def test_the_sdks_web_identity_credential_provider(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    token_file = world.folder / "token"
    token_file.write_text(world.provider.token(BOB, world.now()))
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(world.folder / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(world.folder / "no-credentials"))
    monkeypatch.setenv("AWS_WEB_IDENTITY_TOKEN_FILE", str(token_file))
    monkeypatch.setenv("AWS_ROLE_ARN", APP_ROLE)
    monkeypatch.setenv("AWS_ROLE_SESSION_NAME", "sdk")
    monkeypatch.setenv("AWS_ENDPOINT_URL_STS", world.server.url)
    session = boto3.session.Session(region_name=REGION)
    client = session.client("dynamodb", endpoint_url=world.server.url, config=BOTO_CONFIG)
    item = client.get_item(TableName="Notes", Key={"pk": {"S": BOB}, "sk": {"S": "first"}})["Item"]
    assert item["v"] == {"S": BOB}
    frozen = session.get_credentials().get_frozen_credentials()
    assert frozen.access_key.startswith("ASIA")


def test_the_developer_guides_login_with_amazon_variables(world: World) -> None:
    token = world.provider.token(AMAZON_USER, world.now(), iss=AMAZON, aud=AMAZON_APP)
    answer = world.assume(token, role=f"arn:aws:iam::{OWNER}:role/AmazonUsers", session="amazon")
    assert answer["Provider"] == "www.amazon.com"
    amazon = world.session_client(answer)
    own = amazon.get_item(TableName="Notes", Key={"pk": {"S": AMAZON_USER}, "sk": {"S": "first"}})
    assert own["Item"]["v"] == {"S": AMAZON_USER}
    arn = f"arn:aws:sts::{OWNER}:assumed-role/AmazonUsers/amazon"
    assert _refused(lambda: amazon.get_item(TableName="Notes", Key={"pk": {"S": ALICE}, "sk": {"S": "first"}})) == (
        400,
        "AccessDeniedException",
        _denied_text(arn, "dynamodb:GetItem"),
    )


def test_temporary_credentials_expire_on_the_servers_clock(tmp_path: Path) -> None:
    world = World(tmp_path)
    try:
        now = world.now()
        answer = world.assume(world.provider.token(ALICE, now), DurationSeconds=900)
        alice = world.session_client(answer)
        key = {"pk": {"S": ALICE}, "sk": {"S": "first"}}
        assert alice.get_item(TableName="Notes", Key=key)["Item"]
        assert admin(world.server, world.builder, "POST", "/dynastore/clock", {"advance": 901})[0] == 200
        assert _refused(lambda: alice.get_item(TableName="Notes", Key=key)) == (
            400, "ExpiredTokenException", "The security token included in the request is expired",
        )  # fmt: skip
    finally:
        world.server.stop()
