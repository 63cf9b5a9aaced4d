"""Identity-based policies: the policies attached to users, groups and roles (by name, within an account).

Stored in one JSON file (mode 0600), by default ``policies.json`` in the data directory, or the file given by
``--policies-file`` (an in-memory server reads one only if given). Shape::

    {"accounts": {"111122223333": {"users": {"alice": {"ReadMusic": {<policy document>}}},
                                   "groups": {"readers": {...}}, "roles": {"AppUsers": {...}}}}}

A role's policies apply to its sessions (security/roles.py), in place of a user's and its groups'.

The server reads the file again when it changes: at most once a second a request looks at its modification time
and size (one ``stat``), so ``dynastore policies put`` takes effect on a running server within a second. Tests
and embedders can also ``put`` policies programmatically: the change is seen at once (and written to the file,
if there is one). A file that cannot be read or parsed keeps the policies last read (and is reported on stderr).
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from dynastore import limits, messages
from dynastore.security.caller import Caller
from dynastore.security.policy_documents import IDENTITY, Policy, PolicyDocumentError, compiled, parse_policy
from dynastore.util.files import make_private_directory

__all__ = ["USER", "GROUP", "ROLE", "IdentityPolicies", "IdentityPolicyError", "RELOAD_INTERVAL"]

USER, GROUP, ROLE = "user", "group", "role"
_SECTIONS = {USER: "users", GROUP: "groups", ROLE: "roles"}
_POLICY_NAME = re.compile(r"[\w+=,.@-]{1,128}")  # IAM's policy names
RELOAD_INTERVAL = 1.0  # seconds between two looks at the file's modification time


# The policy every admin user (``dynastore users add --admin``, the seeded admin) holds besides its own.
ADMINISTRATOR_ACCESS = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}


class IdentityPolicyError(Exception):
    """A policy refused by ``put`` (an invalid document, or one over IAM's size quota)."""


class IdentityPolicies:
    def __init__(self, path: Path | None, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.path = path
        self._monotonic = monotonic
        self._doc: dict[str, Any] = {"accounts": {}}
        self._stamp: tuple[int, int] | None = None
        self._next_look = 0.0
        self._by_caller: dict[tuple[str, str, tuple[str, ...], bool], tuple[Policy, ...]] = {}
        self._load()

    # ---- reading ------------------------------------------------------------------------------------------
    def for_caller(self, caller: Caller) -> tuple[Policy, ...]:
        """The compiled policies of the caller's user and of its groups (cached until the store changes)."""
        if self.path is not None and self._monotonic() >= self._next_look:
            self._refresh()
        if caller.role_name:  # a role session: its role's policies
            return self.for_role(caller.account_id, caller.role_name)
        key = (caller.account_id, caller.user_name, caller.groups, caller.admin)
        found = self._by_caller.get(key)
        if found is None:
            found = self._by_caller[key] = self._collect(*key)
        return found

    def for_role(self, account: str, role: str) -> tuple[Policy, ...]:
        """The compiled policies of a role (cached until the store changes)."""
        key = (account, "role/" + role, (), False)  # "/" is in no user name: never a user's entry
        found = self._by_caller.get(key)
        if found is None:
            docs = self._doc["accounts"].get(account, {}).get("roles", {}).get(role, {}).values()
            found = self._by_caller[key] = tuple(compiled(orjson.dumps(d).decode(), IDENTITY) for d in docs)
        return found

    def _collect(self, account: str, user: str, groups: tuple[str, ...], admin: bool) -> tuple[Policy, ...]:
        section = self._doc["accounts"].get(account, {})
        docs = list(section.get("users", {}).get(user, {}).values())
        for group in groups:
            docs.extend(section.get("groups", {}).get(group, {}).values())
        if admin:  # an admin user has AWS's AdministratorAccess: everything, unless a policy explicitly denies it
            docs.append(ADMINISTRATOR_ACCESS)
        return tuple(compiled(orjson.dumps(d).decode(), IDENTITY) for d in docs)

    def entries(self) -> list[tuple[str, str, str, str, Any]]:
        """Every policy: (account, "user" | "group", name, policy name, document), sorted."""
        out: list[tuple[str, str, str, str, Any]] = []
        for account, section in sorted(self._doc["accounts"].items()):
            for kind, key in _SECTIONS.items():
                for name, policies in sorted(section.get(key, {}).items()):
                    out.extend((account, kind, name, pname, doc) for pname, doc in sorted(policies.items()))
        return out

    # ---- changing -----------------------------------------------------------------------------------------
    def put(self, account: str, kind: str, name: str, policy_name: str, text: str) -> None:
        """Attach (or replace) ``policy_name`` on a user or group; raises IdentityPolicyError if refused."""
        if not _POLICY_NAME.fullmatch(policy_name):
            raise IdentityPolicyError(messages.IDENTITY_POLICY_NAME_INVALID.format(name=policy_name))
        self._refresh()
        try:
            policy = parse_policy(text, IDENTITY)
        except PolicyDocumentError as exc:
            raise IdentityPolicyError(messages.INVALID_POLICY_DOCUMENT.format(detail=exc.detail)) from None
        section = self._doc["accounts"].setdefault(account, {}).setdefault(_SECTIONS[kind], {})
        attached = dict(section.get(name, {}))
        attached[policy_name] = orjson.loads(policy.text)
        limit = limits.MAX_GROUP_POLICY_CHARS if kind == GROUP else limits.MAX_USER_POLICY_CHARS  # a role's: a user's
        if sum(_chars(doc) for doc in attached.values()) > limit:
            raise IdentityPolicyError(messages.IDENTITY_POLICY_TOO_LARGE.format(limit=limit, kind=kind, name=name))
        section[name] = attached
        self._changed()

    def remove(self, account: str, kind: str, name: str, policy_name: str) -> bool:
        """Detach a policy; False if it was not attached."""
        self._refresh()
        section = self._doc["accounts"].get(account, {}).get(_SECTIONS[kind], {})
        attached = section.get(name, {})
        if policy_name not in attached:
            return False
        del attached[policy_name]
        if not attached:
            del section[name]
        self._changed()
        return True

    def _changed(self) -> None:
        self._by_caller.clear()
        if self.path is not None:
            _write_private(self.path, orjson.dumps(self._doc, option=orjson.OPT_INDENT_2))
            self._stamp = _stamp(self.path)

    # ---- the file -----------------------------------------------------------------------------------------
    def _refresh(self) -> None:
        self._next_look = self._monotonic() + RELOAD_INTERVAL
        if self.path is not None and _stamp(self.path) != self._stamp:
            self._load()

    def _load(self) -> None:
        if self.path is None:
            return
        stamp = _stamp(self.path)
        if stamp is None:
            self._doc, self._stamp = {"accounts": {}}, None
            self._by_caller.clear()
            return
        try:
            doc = orjson.loads(self.path.read_bytes())
            for section in doc["accounts"].values():
                for key in _SECTIONS.values():
                    for policies in section.get(key, {}).values():
                        for text in policies.values():
                            compiled(orjson.dumps(text).decode(), IDENTITY)
        except (OSError, orjson.JSONDecodeError, KeyError, TypeError, AttributeError, PolicyDocumentError) as exc:
            print(f"dynastore: policies file {self.path} not loaded ({exc}); keeping the policies last read",
                  file=sys.stderr)  # fmt: skip
            self._stamp = stamp
            return
        self._doc, self._stamp = doc, stamp
        self._by_caller.clear()


def _chars(doc: Any) -> int:
    """IAM counts a policy's characters without whitespace."""
    return sum(1 for ch in orjson.dumps(doc).decode() if not ch.isspace())


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def _write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically, readable by its owner only."""
    make_private_directory(path.parent)  # the data directory, when `dynastore policies` is the first to need it
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
