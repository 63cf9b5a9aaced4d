"""Changes to the credentials store (what ``dynastore users`` does): users, their access keys, temporary credentials.

Every change is a read-modify-write of the whole file under an exclusive lock (``credentials.json.lock``), written
to a new file (mode 0600) that then replaces the old one, so a running server never reads half a store.
"""

from __future__ import annotations

import base64
import fcntl
import os
import re
import secrets
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import orjson

from dynastore.limits import ACCESS_KEYS_PER_USER, SESSION_SECONDS_MAX, SESSION_SECONDS_MIN
from dynastore.security.credentials import FORMAT_VERSION, read_document, user_arn
from dynastore.util.files import make_private_directory

FILE_MODE = 0o600
_ID_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
_USER_NAME = re.compile(r"[\w+=,.@-]{1,64}", re.ASCII)
_ACCOUNT = re.compile(r"\d{12}")

T = TypeVar("T")


class UsersError(Exception):
    """A change the store refuses (its text is for the command line)."""


def new_id(prefix: str, length: int = 20) -> str:
    """An id as AWS makes them: AKIA/ASIA + 16 (access keys), AIDA + 17 (user ids) upper-case letters and digits."""
    return prefix + "".join(secrets.choice(_ID_ALPHABET) for _ in range(length - len(prefix)))


def new_secret() -> str:
    return base64.b64encode(secrets.token_bytes(30)).decode()  # 40 characters, as AWS's


def new_session_token() -> str:
    return base64.b64encode(secrets.token_bytes(192)).decode()


def check_user_name(name: str) -> None:
    if not _USER_NAME.fullmatch(name):
        raise UsersError(f"{name!r} is not a user name: 1 to 64 letters, digits and + = , . @ _ -")


def check_account(account: str) -> None:
    if not _ACCOUNT.fullmatch(account):
        raise UsersError(f"{account!r} is not an account id: 12 digits")


def change(path: Path, edit: Callable[[dict[str, Any]], T], now: float | None = None) -> T:
    """Apply ``edit`` to the store's document under the lock and write the result; ``edit``'s result is returned.
    Temporary credentials expired at ``now`` (default: the wall clock; the server passes its own) are dropped."""
    with _locked(path):
        document = read_document(path)
        result = edit(document)
        _prune_expired(document, time.time() if now is None else now)
        _write(path, document)
        return result


def read(path: Path) -> dict[str, Any]:
    return read_document(path)


def add_user(document: dict[str, Any], name: str, account: str, admin: bool, groups: list[str]) -> dict[str, str]:
    check_user_name(name)
    check_account(account)
    users = document.setdefault("users", {})
    if name in users:
        raise UsersError(f"user {name} exists already")
    key = _new_key()
    users[name] = {
        "account": account,
        "user_id": new_id("AIDA", 21),
        "admin": admin,
        "groups": sorted(set(groups)),
        "created": _iso(time.time()),
        "keys": [key],
    }
    return _shown(name, users[name], key)


def remove_user(document: dict[str, Any], name: str) -> None:
    users = document.get("users", {})
    if name not in users:
        raise UsersError(f"no user {name}")
    del users[name]
    document["temporary"] = [t for t in document.get("temporary", []) if t.get("user") != name]


def rotate_key(document: dict[str, Any], name: str, retire: str | None) -> dict[str, str]:
    """A new access key for ``name``; the old ones keep working unless ``retire`` names one to drop at once."""
    user = _user(document, name)
    keys: list[dict[str, Any]] = user["keys"]
    if retire is not None:
        _retire(user, name, retire)
    if len(keys) >= ACCESS_KEYS_PER_USER:
        raise UsersError(
            f"user {name} has {len(keys)} access keys already: retire one first (rotate-key {name} --retire KEY, "
            f"or retire-key {name} KEY)"
        )
    key = _new_key()
    keys.append(key)
    return _shown(name, user, key)


def retire_key(document: dict[str, Any], name: str, key_id: str) -> None:
    _retire(_user(document, name), name, key_id)


def issue_temporary(document: dict[str, Any], name: str, duration: int, now: float) -> dict[str, Any]:
    """Temporary credentials of ``name`` (as STS GetSessionToken gives): an ASIA key, its secret and session token,
    valid for ``duration`` seconds."""
    user = _user(document, name)
    if not SESSION_SECONDS_MIN <= duration <= SESSION_SECONDS_MAX:
        raise UsersError(f"--duration must be {SESSION_SECONDS_MIN} to {SESSION_SECONDS_MAX} seconds")
    expiration = int(now) + duration
    entry = {
        "id": new_id("ASIA"),
        "secret": new_secret(),
        "token": new_session_token(),
        "user": name,
        "expiration": expiration,
    }
    document.setdefault("temporary", []).append(entry)
    return {
        "Credentials": {
            "AccessKeyId": entry["id"],
            "SecretAccessKey": entry["secret"],
            "SessionToken": entry["token"],
            "Expiration": _iso(expiration),
        },
        "UserName": name,
        "Arn": user_arn(str(user["account"]), name),
    }


def listing(document: dict[str, Any], now: float) -> list[dict[str, Any]]:
    """Every user without any secret: name, account, ARN, user id, admin, groups, key ids, live temporary keys."""
    temporary: dict[str, int] = {}
    for entry in document.get("temporary", []):
        if entry["expiration"] > now and "user" in entry:  # role sessions are listed by `dynastore roles list`
            temporary[entry["user"]] = temporary.get(entry["user"], 0) + 1
    return [
        {
            "UserName": name,
            "Account": user["account"],
            "Arn": user_arn(str(user["account"]), name),
            "UserId": user["user_id"],
            "Admin": bool(user.get("admin")),
            "Groups": list(user.get("groups", [])),
            "AccessKeyIds": [key["id"] for key in user.get("keys", [])],
            "TemporaryCredentials": temporary.get(name, 0),
        }
        for name, user in sorted(document.get("users", {}).items())
    ]


def _user(document: dict[str, Any], name: str) -> dict[str, Any]:
    user: dict[str, Any] | None = document.get("users", {}).get(name)
    if user is None:
        raise UsersError(f"no user {name}")
    return user


def _retire(user: dict[str, Any], name: str, key_id: str) -> None:
    keys: list[dict[str, Any]] = user["keys"]
    kept = [key for key in keys if key["id"] != key_id]
    if len(kept) == len(keys):
        raise UsersError(f"user {name} has no access key {key_id}")
    keys[:] = kept


def _new_key() -> dict[str, Any]:
    return {"id": new_id("AKIA"), "secret": new_secret(), "created": _iso(time.time())}


def _shown(name: str, user: dict[str, Any], key: dict[str, Any]) -> dict[str, str]:
    return {
        "UserName": name,
        "UserId": str(user["user_id"]),
        "Arn": user_arn(str(user["account"]), name),
        "AccessKeyId": str(key["id"]),
        "SecretAccessKey": str(key["secret"]),
    }


def _iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def _prune_expired(document: dict[str, Any], now: float) -> None:
    document["temporary"] = [t for t in document.get("temporary", []) if t["expiration"] > now]
    document["version"] = FORMAT_VERSION


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    _make_directory(path.parent)
    fd = os.open(path.with_name(path.name + ".lock"), os.O_RDWR | os.O_CREAT, FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _make_directory(directory: Path) -> None:
    make_private_directory(directory)  # the data directory too, when this command is the first to need it


def _write(path: Path, document: dict[str, Any]) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    with os.fdopen(fd, "wb") as out:
        os.fchmod(fd, FILE_MODE)
        out.write(orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
        out.flush()
        os.fsync(fd)
    os.replace(temporary, path)
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
