"""``dynastore policies put|list|remove``: the identity policies of users and groups (docs/security.md "Policies").

The command edits the policies file itself (``policies.json`` in the data directory, or ``--policies-file``); a
running server sees the change within a second, without a restart.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from dynastore.config import Config
from dynastore.security.identity_policies import GROUP, ROLE, USER, IdentityPolicies, IdentityPolicyError
from dynastore.security.policy_documents import policy_warnings

__all__ = ["add_policies_command", "run"]


def add_policies_command(commands: Any, defaults: Config) -> None:
    cmd = commands.add_parser(
        "policies",
        help="attach, list and remove the identity policies of users, groups and roles (takes effect on a running "
        "server)",
    )
    actions = cmd.add_subparsers(dest="policies_command", required=True)
    put = actions.add_parser("put", help="attach a policy document to a user or group (replacing one of that name)")
    remove = actions.add_parser("remove", help="detach a policy from a user or group")
    listing = actions.add_parser("list", help="list the policies (as JSON lines)")
    for parser in (put, remove, listing):
        parser.add_argument("--data-dir", type=Path, default=defaults.data_dir, help="the server's data directory")
        parser.add_argument(
            "--policies-file", type=Path, default=defaults.policies_file, help="the policies file (default: "
            "policies.json in the data directory)"
        )  # fmt: skip
        parser.add_argument("--account-id", default=defaults.account_id, help="the account of the user or group")
    for parser in (put, remove):
        who = parser.add_mutually_exclusive_group(required=True)
        who.add_argument("--user", help="a user name")
        who.add_argument("--group", help="a group name")
        who.add_argument("--role", help="a role name (dynastore roles add): its sessions' permissions")
        parser.add_argument("--name", required=True, help="the policy's name")
    put.add_argument("--file", type=Path, required=True, help="the policy document (JSON); - reads stdin")


def run(args: argparse.Namespace) -> int:
    store = IdentityPolicies(args.policies_file or args.data_dir / "policies.json")
    if args.policies_command == "list":
        for account, kind, name, policy_name, doc in store.entries():
            if account == args.account_id:
                print(json.dumps({"account": account, kind: name, "name": policy_name, "document": doc}))
        return 0
    if args.user is not None:
        kind, name = USER, args.user
    elif args.role is not None:
        kind, name = ROLE, args.role
    else:
        kind, name = GROUP, args.group
    if args.policies_command == "remove":
        if store.remove(args.account_id, kind, name, args.name):
            return 0
        print(f"dynastore: {kind} {name} has no policy {args.name}", file=sys.stderr)
        return 1
    text = sys.stdin.read() if str(args.file) == "-" else args.file.read_text()
    try:
        store.put(args.account_id, kind, name, args.name, text)
    except IdentityPolicyError as exc:
        print(f"dynastore: {exc}", file=sys.stderr)
        return 1
    for warning in policy_warnings(text):  # attached all the same, as IAM attaches it
        print(f"dynastore: warning: {warning}", file=sys.stderr)
    return 0
