"""The credentials store: users, their access keys and temporary credentials, as the server looks them up.

The store is one JSON file, ``<data dir>/security/credentials.json`` (or any file given with ``--users-file``),
written only by ``dynastore users`` (security/users.py) by replacing it whole, so a reader never sees half of it.
The server re-reads it when its identity (inode, size, modification time) changes: at once when a request names
an access key it does not know (a key just added works on its next request), and otherwise at most every
``CREDENTIALS_RECHECK_SECONDS`` (a removed user or retired key stops working within that time).

Secrets are kept as they are: SigV4 proves knowledge of the secret by an HMAC the server must compute too, so the
file is as sensitive as the keys themselves (mode 0600 in a 0700 directory).
"""

from __future__ import annotations

import base64
import hashlib
import logging
import math
import os
import time
from pathlib import Path
from typing import Any, Final

import orjson

from dynastore.limits import CREDENTIALS_RECHECK_SECONDS
from dynastore.security.caller import Caller
from dynastore.security.policy_documents import IDENTITY, compiled

log = logging.getLogger("dynastore")

STORE_DIRECTORY = "security"
STORE_FILE = "credentials.json"
FORMAT_VERSION = 1
ADMIN_SEED_USER = "admin"

# Read per request: as a Final name compiled code reads it from a C static, not the module's dict.
monotonic: Final = time.monotonic


def store_path(data_dir: Path) -> Path:
    return data_dir / STORE_DIRECTORY / STORE_FILE


def user_arn(account_id: str, name: str) -> str:
    return f"arn:aws:iam::{account_id}:user/{name}"


def role_arn(account_id: str, name: str) -> str:
    return f"arn:aws:iam::{account_id}:role/{name}"


def assumed_role_arn(account_id: str, role: str, session: str) -> str:
    return f"arn:aws:sts::{account_id}:assumed-role/{role}/{session}"


class Identity:
    """What one access key proves: its secret, the caller it makes, and (temporary credentials) its session token
    and expiry (seconds since the epoch; ``math.inf`` for a user's own keys)."""

    __slots__ = ("secret", "caller", "session_token", "expiration")

    def __init__(self, secret: str, caller: Caller, session_token: str = "", expiration: float = math.inf) -> None:
        self.secret = secret
        self.caller = caller
        self.session_token = session_token
        self.expiration = expiration


def identities(document: dict[str, Any], region: str) -> dict[str, Identity]:
    """Every access key of a store document, with the Caller each makes (built once per load, not per request)."""
    out: dict[str, Identity] = {}
    users: dict[str, Any] = document.get("users", {})
    callers: dict[str, Caller] = {}
    for name, user in users.items():
        caller = _caller(name, user, region, "", temporary=False)
        callers[name] = caller
        for key in user.get("keys", []):
            out[key["id"]] = Identity(key["secret"], _caller(name, user, region, key["id"], temporary=False))
    for temp in document.get("temporary", []):
        if "role" in temp:  # a role session (STS AssumeRole / AssumeRoleWithWebIdentity)
            out[temp["id"]] = Identity(temp["secret"], session_caller(temp, region), temp["token"],
                                       float(temp["expiration"]))  # fmt: skip
            continue
        user = users.get(temp["user"])
        if user is None:
            continue  # its user was removed: the temporary credentials go with it
        caller = _caller(temp["user"], user, region, temp["id"], temporary=True)
        out[temp["id"]] = Identity(temp["secret"], caller, temp["token"], float(temp["expiration"]))
    return out


def _caller(name: str, user: dict[str, Any], region: str, key_id: str, *, temporary: bool) -> Caller:
    account = str(user["account"])
    return Caller(
        account,
        region,
        user_name=name,
        user_id=str(user["user_id"]),
        arn=user_arn(account, name),
        access_key_id=key_id,
        groups=tuple(user.get("groups", ())),
        admin=bool(user.get("admin", False)),
        authenticated=True,
        temporary=temporary,
    )


def session_caller(temp: dict[str, Any], region: str) -> Caller:
    """The caller of a role session's credentials: the assumed-role principal, its role's policies limited by
    the session's own, its web identity's claims as policy variables."""
    account, role, session = str(temp["account"]), str(temp["role"]), str(temp["session"])
    policy = temp.get("policy")
    claims = temp.get("claims")
    return Caller(
        account,
        region,
        user_id=f"{temp['role_id']}:{session}",
        arn=assumed_role_arn(account, role, session),
        access_key_id=str(temp["id"]),
        authenticated=True,
        temporary=True,
        role_name=role,
        session_policies=(compiled(policy, IDENTITY),) if policy else (),
        claims={str(k).lower(): str(v) for k, v in claims.items()} if claims else None,
    )


def derived_id(prefix: str, text: str) -> str:
    """A 21-character id in AWS's form (a prefix and upper-case letters and digits), stable for ``text``."""
    digest = base64.b32encode(hashlib.sha256(text.encode()).digest()).decode()
    return prefix + digest[: 21 - len(prefix)]


def seeded_admin(access_key_id: str, secret: str, account_id: str) -> dict[str, Any]:
    """A store document of one admin user, ``admin``, with the given key (DYNASTORE_ADMIN_ACCESS_KEY_ID and
    DYNASTORE_ADMIN_SECRET_ACCESS_KEY): what a test suite's in-memory server starts with."""
    return {
        "version": FORMAT_VERSION,
        "users": {
            ADMIN_SEED_USER: {
                "account": account_id,
                "user_id": derived_id("AIDA", access_key_id),
                "admin": True,
                "groups": [],
                "keys": [{"id": access_key_id, "secret": secret}],
            }
        },
    }


def read_document(path: Path) -> dict[str, Any]:
    """The store's document (an empty one if the file does not exist). Raises OSError or ValueError."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {"version": FORMAT_VERSION, "users": {}, "temporary": []}
    document = orjson.loads(data)
    if not isinstance(document, dict) or not isinstance(document.get("users", {}), dict):
        raise ValueError("not a credentials store (a JSON object with users)")
    return document


class CredentialStore:
    """The access keys the server accepts: those of the store file (re-read when it changes), plus a seeded admin."""

    def __init__(self, path: Path | None, region: str, seed: dict[str, Any] | None = None) -> None:
        self._path = path
        self._region = region
        self._seed = identities(seed, region) if seed is not None else {}
        self._keys: dict[str, Identity] = dict(self._seed)
        # Roles and OpenID Connect providers (security/roles.py), as the store file has them.
        self.roles: dict[str, Any] = {}
        self.providers: dict[str, Any] = {}
        self._stamp: tuple[int, int, int] | None = None
        self._next_check = 0.0
        self.generation = 0  # counts reloads: signing keys cached under an older generation are dropped
        if path is not None:
            self._reload()

    def find(self, access_key_id: str) -> Identity | None:
        now = monotonic()
        if now >= self._next_check:
            self._next_check = now + CREDENTIALS_RECHECK_SECONDS
            self._reload()
        identity = self._keys.get(access_key_id)
        if identity is None and self._path is not None and self._reload():
            identity = self._keys.get(access_key_id)
        return identity

    @property
    def path(self) -> Path | None:
        return self._path

    def refresh(self) -> None:
        """Read the file again if it changed (roles and providers included)."""
        self._reload()

    def _reload(self) -> bool:
        """Read the file again if it changed; True if it did."""
        path = self._path
        if path is None:
            return False
        try:
            st = os.stat(path)
            stamp: tuple[int, int, int] | None = (st.st_ino, st.st_size, st.st_mtime_ns)
        except FileNotFoundError:
            stamp = None
        except OSError as e:
            log.warning("cannot read the credentials store %s: %s", path, e)
            return False
        if stamp == self._stamp and self.generation:
            return False
        try:
            document = read_document(path) if stamp is not None else {}
            keys = identities(document, self._region) if stamp is not None else {}
        except (OSError, ValueError, KeyError, TypeError) as e:
            log.warning("cannot read the credentials store %s (keeping the keys read before): %s", path, e)
            self._stamp = stamp
            return False
        keys.update(self._seed)
        self._keys = keys
        self.roles = dict(document.get("roles", {}))
        self.providers = dict(document.get("oidc_providers", {}))
        self._stamp = stamp
        self.generation += 1
        return True
