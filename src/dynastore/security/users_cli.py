"""``dynastore users``: manage the credentials store that ``--auth sigv4`` verifies requests against.

    dynastore users add NAME [--account ID] [--admin] [--group G ...]   a user and its first access key
    dynastore users list                                                 users and key ids (never secrets)
    dynastore users remove NAME                                          the user, its keys and temporary keys
    dynastore users rotate-key NAME [--retire OLD]                       a new key (OLD, if named, dropped at once)
    dynastore users retire-key NAME KEY                                  drop one of the user's keys
    dynastore users issue-temporary NAME [--duration S]                  ASIA key, secret and session token

Each works on ``<data dir>/security/credentials.json`` (``--data-dir``, DYNASTORE_DATA_DIR) or on ``--users-file``
(DYNASTORE_USERS_FILE); a running server sees the change on its next request.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from dynastore import messages
from dynastore.config import Config
from dynastore.limits import SESSION_SECONDS_DEFAULT, SESSION_SECONDS_MAX, SESSION_SECONDS_MIN
from dynastore.security import users
from dynastore.security.credentials import store_path


def add_users_command(commands: Any, defaults: Config) -> None:
    store = argparse.ArgumentParser(add_help=False)
    store.add_argument(
        "--data-dir", type=Path, default=defaults.data_dir, help="the server's data directory (DYNASTORE_DATA_DIR)"
    )
    store.add_argument(
        "--users-file",
        type=Path,
        default=defaults.users_file,
        metavar="PATH",
        help="a credentials store of its own instead of <data dir>/security/credentials.json (DYNASTORE_USERS_FILE)",
    )
    store.add_argument("--json", action="store_true", help="print JSON")
    cmd = commands.add_parser(
        "users", help="users and access keys of --auth sigv4 (docs/security.md)", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    actions = cmd.add_subparsers(dest="users_command", required=True)
    add = actions.add_parser("add", parents=[store], help="add a user and print its first access key (once)")
    add.add_argument("name")
    add.add_argument("--account", default=defaults.account_id, help="its 12-digit account id")
    add.add_argument("--admin", action="store_true", help="may use dynastore's own endpoints (/dynastore/...)")
    add.add_argument("--group", dest="groups", action="append", default=[], metavar="G", help="a group (repeatable)")
    actions.add_parser("list", parents=[store], help="list users and their access key ids (never secrets)")
    remove = actions.add_parser("remove", parents=[store], help="remove a user with all its keys")
    remove.add_argument("name")
    rotate = actions.add_parser("rotate-key", parents=[store], help="give a user a new access key (printed once)")
    rotate.add_argument("name")
    rotate.add_argument("--retire", metavar="OLD", help="drop this key at once (else it works until retired)")
    retire = actions.add_parser("retire-key", parents=[store], help="drop one access key of a user")
    retire.add_argument("name")
    retire.add_argument("key")
    temporary = actions.add_parser("issue-temporary", parents=[store], help="temporary credentials of a user")
    temporary.add_argument("name")
    temporary.add_argument(
        "--duration",
        type=int,
        default=SESSION_SECONDS_DEFAULT,
        help=f"seconds they stay valid ({SESSION_SECONDS_MIN} to {SESSION_SECONDS_MAX}; "
        f"default {SESSION_SECONDS_DEFAULT})",
    )


def run(args: argparse.Namespace) -> int:
    path: Path = args.users_file if args.users_file is not None else store_path(args.data_dir)
    command = args.users_command
    if command != "add" and args.users_file is None and not args.data_dir.is_dir():
        # A mistyped --data-dir would otherwise read as a store without users; `add` may make a new one.
        print(f"dynastore users: error: {messages.CLI_NO_DATA_DIR.format(path=args.data_dir)}", file=sys.stderr)
        return 1
    try:
        if command == "list":
            _print_list(users.listing(users.read(path), time.time()), args.json)
        elif command == "add":
            shown = users.change(path, lambda d: users.add_user(d, args.name, args.account, args.admin, args.groups))
            _print_key(shown, args.json)
        elif command == "remove":
            users.change(path, lambda d: users.remove_user(d, args.name))
            print(f"removed user {args.name}")
        elif command == "rotate-key":
            shown = users.change(path, lambda d: users.rotate_key(d, args.name, args.retire))
            _print_key(shown, args.json)
        elif command == "retire-key":
            users.change(path, lambda d: users.retire_key(d, args.name, args.key))
            print(f"retired access key {args.key} of user {args.name}")
        elif command == "issue-temporary":
            issued = users.change(path, lambda d: users.issue_temporary(d, args.name, args.duration, time.time()))
            print(json.dumps(issued, indent=2))
    except users.UsersError as e:
        print(f"dynastore users: error: {e}", file=sys.stderr)
        return 1
    except (OSError, ValueError) as e:
        print(f"dynastore users: error: cannot use the credentials store {path}: {e}", file=sys.stderr)
        return 1
    return 0


def _print_key(shown: dict[str, str], as_json: bool) -> None:
    if as_json:
        print(json.dumps(shown, indent=2))
        return
    print(f"user {shown['UserName']} ({shown['Arn']}, user id {shown['UserId']})")
    print(f"AccessKeyId:     {shown['AccessKeyId']}")
    print(f"SecretAccessKey: {shown['SecretAccessKey']}")
    print("(the secret is shown only now: keep it)")


def _print_list(listed: list[dict[str, Any]], as_json: bool) -> None:
    if as_json:
        print(json.dumps(listed, indent=2))
        return
    if not listed:
        print("no users")
    for user in listed:
        flags = " admin" if user["Admin"] else ""
        groups = f" groups={','.join(user['Groups'])}" if user["Groups"] else ""
        temporary = f" temporary={user['TemporaryCredentials']}" if user["TemporaryCredentials"] else ""
        print(f"{user['UserName']} {user['Arn']} {user['UserId']}{flags}{groups} keys={','.join(user['AccessKeyIds'])}"
              f"{temporary}")  # fmt: skip
