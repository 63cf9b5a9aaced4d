"""The credentials store: what `dynastore users` writes (ids, permissions, rotation, temporary credentials) and how
the server's CredentialStore sees changes without a restart."""

from __future__ import annotations

import math
import re
import stat
import time
from pathlib import Path

import orjson
import pytest

from dynastore.security import credentials, users
from dynastore.security.credentials import CredentialStore, store_path


def add(path: Path, name: str, *, admin: bool = False, groups: tuple[str, ...] = ()) -> dict[str, str]:
    return users.change(path, lambda d: users.add_user(d, name, "123456789012", admin, list(groups)))


def test_ids_look_like_aws_ids(tmp_path: Path) -> None:
    shown = add(tmp_path / "c.json", "alice")
    assert re.fullmatch(r"AKIA[A-Z2-7]{16}", shown["AccessKeyId"])
    assert re.fullmatch(r"AIDA[A-Z2-7]{17}", shown["UserId"])
    assert len(shown["SecretAccessKey"]) == 40
    assert shown["Arn"] == "arn:aws:iam::123456789012:user/alice"


def test_the_store_is_readable_only_by_its_owner(tmp_path: Path) -> None:
    path = store_path(tmp_path / "data")
    add(path, "alice")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert path == tmp_path / "data" / "security" / "credentials.json"


def test_refusals(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    add(path, "alice")
    with pytest.raises(users.UsersError, match="exists already"):
        add(path, "alice")
    with pytest.raises(users.UsersError, match="not a user name"):
        add(path, "no spaces")
    with pytest.raises(users.UsersError, match="not an account id"):
        users.change(path, lambda d: users.add_user(d, "bob", "12345", False, []))
    with pytest.raises(users.UsersError, match="no user carol"):
        users.change(path, lambda d: users.remove_user(d, "carol"))
    with pytest.raises(users.UsersError, match="--duration must be 900 to 129600"):
        users.change(path, lambda d: users.issue_temporary(d, "alice", 60, time.time()))


def test_the_server_sees_a_new_user_on_its_next_request_and_a_removed_one_soon(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    store = CredentialStore(path, "us-east-1")
    assert store.find("AKIAAAAAAAAAAAAAAAAA") is None
    alice = add(path, "alice", admin=True, groups=("readers", "ops"))
    identity = store.find(alice["AccessKeyId"])  # a miss re-reads the file at once
    assert identity is not None
    caller = identity.caller
    assert (caller.user_name, caller.arn, caller.user_id, caller.groups, caller.admin, caller.account_id) == (
        "alice",
        "arn:aws:iam::123456789012:user/alice",
        alice["UserId"],
        ("ops", "readers"),
        True,
        "123456789012",
    )
    assert identity.secret == alice["SecretAccessKey"] and identity.expiration == math.inf
    users.change(path, lambda d: users.remove_user(d, "alice"))
    store._next_check = 0.0  # the periodic check is due (it runs every CREDENTIALS_RECHECK_SECONDS)
    assert store.find(alice["AccessKeyId"]) is None


def test_rotation_keeps_the_old_key_until_retired(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    old = add(path, "alice")["AccessKeyId"]
    new = users.change(path, lambda d: users.rotate_key(d, "alice", None))["AccessKeyId"]
    store = CredentialStore(path, "us-east-1")
    assert store.find(old) is not None and store.find(new) is not None
    with pytest.raises(users.UsersError, match="has 2 access keys already"):
        users.change(path, lambda d: users.rotate_key(d, "alice", None))
    newest = users.change(path, lambda d: users.rotate_key(d, "alice", old))["AccessKeyId"]
    users.change(path, lambda d: users.retire_key(d, "alice", new))
    store._next_check = 0.0
    assert [store.find(k) is not None for k in (old, new, newest)] == [False, False, True]
    listed = users.listing(users.read(path), time.time())
    assert listed[0]["AccessKeyIds"] == [newest]
    assert "SecretAccessKey" not in orjson.dumps(listed).decode() and "secret" not in orjson.dumps(listed).decode()


def test_temporary_credentials(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    alice = add(path, "alice")
    issued = users.change(path, lambda d: users.issue_temporary(d, "alice", 900, 1_800_000_000.0))
    temp = issued["Credentials"]
    assert re.fullmatch(r"ASIA[A-Z2-7]{16}", temp["AccessKeyId"])
    assert temp["Expiration"] == "2027-01-15T08:15:00Z"
    assert len(temp["SessionToken"]) > 200
    identity = CredentialStore(path, "us-east-1").find(temp["AccessKeyId"])
    assert identity is not None
    assert (identity.session_token, identity.expiration, identity.caller.temporary) == (
        temp["SessionToken"],
        1_800_000_900.0,
        True,
    )
    assert (identity.caller.user_id, identity.caller.arn) == (alice["UserId"], alice["Arn"])
    # Removing the user takes its temporary credentials too; expired ones are dropped on the next change.
    users.change(path, lambda d: users.remove_user(d, "alice"))
    assert users.read(path)["temporary"] == []


def test_a_damaged_store_keeps_the_keys_read_before(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    alice = add(path, "alice")
    store = CredentialStore(path, "us-east-1")
    path.write_bytes(b"{not json")
    store._next_check = 0.0
    assert store.find(alice["AccessKeyId"]) is not None


def test_a_seeded_admin_outlives_store_changes(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    seed = credentials.seeded_admin("AKIASEEDSEEDSEEDSEED", "seed-secret", "000000000000")
    store = CredentialStore(path, "us-east-1", seed)
    add(path, "alice")
    store._next_check = 0.0
    identity = store.find("AKIASEEDSEEDSEEDSEED")
    assert identity is not None and identity.caller.admin and identity.caller.user_name == "admin"
    assert re.fullmatch(r"AIDA[A-Z2-7]{17}", identity.caller.user_id)
