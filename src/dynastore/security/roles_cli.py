"""``dynastore roles`` and ``dynastore oidc``: roles that STS lets principals assume, and the OpenID Connect
providers whose tokens AssumeRoleWithWebIdentity accepts (docs/security.md "Web identity federation").

    dynastore roles add NAME --trust-policy FILE [--account ID] [--max-session-duration S]
    dynastore roles list | remove NAME
    dynastore oidc add ISSUER --audience A [--audience B ...] (--jwks FILE | --jwks-url URL) [--account ID]
    dynastore oidc refresh ISSUER        fetch the keys of a provider added with --jwks-url now (the server also
                                         fetches them itself when they expire or a token names a new key)
    dynastore oidc list | remove ISSUER

A role's permissions are policies attached with ``dynastore policies put --role NAME``. Each command edits the
credentials store (``--data-dir`` or ``--users-file``, as ``dynastore users``); a running server sees the change on
its next STS request.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from dynastore import limits, messages
from dynastore.config import Config
from dynastore.security import roles, users
from dynastore.security.credentials import store_path
from dynastore.security.jwks_cache import fetch_jwks

__all__ = ["add_roles_commands", "run"]

_FETCH_TIMEOUT_SECONDS = 10


def add_roles_commands(commands: Any, defaults: Config) -> None:
    store = argparse.ArgumentParser(add_help=False)
    store.add_argument("--data-dir", type=Path, default=defaults.data_dir, help="the server's data directory")
    store.add_argument("--users-file", type=Path, default=defaults.users_file, metavar="PATH",
                       help="the credentials store, if not <data dir>/security/credentials.json")  # fmt: skip
    store.add_argument("--json", action="store_true", help="print JSON")
    owned = argparse.ArgumentParser(add_help=False)
    owned.add_argument("--account", default=defaults.account_id, help="its 12-digit account id")

    cmd = commands.add_parser("roles", help="roles of STS AssumeRole / AssumeRoleWithWebIdentity (docs/security.md)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    actions = cmd.add_subparsers(dest="roles_command", required=True)
    add = actions.add_parser("add", parents=[store, owned], help="add a role with its trust policy")
    add.add_argument("name")
    add.add_argument("--trust-policy", type=Path, required=True, metavar="FILE",
                     help="who may assume it (an IAM trust policy, JSON); - reads stdin")  # fmt: skip
    add.add_argument("--max-session-duration", type=int, default=limits.ROLE_SESSION_SECONDS_DEFAULT,
                     help=f"the longest session, in seconds ({limits.ROLE_SESSION_SECONDS_DEFAULT} to "
                     f"{limits.ROLE_MAX_SESSION_SECONDS})")  # fmt: skip
    actions.add_parser("list", parents=[store], help="list roles")
    remove = actions.add_parser("remove", parents=[store], help="remove a role and end its sessions")
    remove.add_argument("name")

    oidc = commands.add_parser("oidc", help="OpenID Connect providers of AssumeRoleWithWebIdentity",
                               description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    providers = oidc.add_subparsers(dest="oidc_command", required=True)
    padd = providers.add_parser("add", parents=[store, owned], help="add (or replace) a provider and its keys")
    padd.add_argument("issuer", help="the tokens' iss (an https:// URL)")
    padd.add_argument("--audience", dest="audiences", action="append", required=True, metavar="CLIENT_ID",
                      help="an accepted aud (the app's client id; repeatable)")  # fmt: skip
    keys = padd.add_mutually_exclusive_group(required=True)
    keys.add_argument("--jwks", type=Path, metavar="FILE", help="the provider's keys (a JWKS, JSON)")
    keys.add_argument(
        "--jwks-url", metavar="URL", help="where the provider publishes its JWKS (fetched now and by the server)"
    )
    providers.add_parser("list", parents=[store], help="list providers")
    refresh = providers.add_parser("refresh", parents=[store], help="fetch a provider's JWKS from its URL again")
    refresh.add_argument("issuer")
    premove = providers.add_parser("remove", parents=[store], help="remove a provider")
    premove.add_argument("issuer")


def run(args: argparse.Namespace) -> int:
    path: Path = args.users_file if args.users_file is not None else store_path(args.data_dir)
    name = "roles" if args.command == "roles" else "oidc"
    if args.users_file is None and not args.data_dir.is_dir():
        print(f"dynastore {name}: error: {messages.CLI_NO_DATA_DIR.format(path=args.data_dir)}", file=sys.stderr)
        return 1
    try:
        shown = _roles(args, path) if args.command == "roles" else _providers(args, path)
    except users.UsersError as e:
        print(f"dynastore {name}: error: {e}", file=sys.stderr)
        return 1
    except (OSError, ValueError) as e:
        print(f"dynastore {name}: error: {e}", file=sys.stderr)
        return 1
    if shown is not None:
        print(json.dumps(shown, indent=2) if args.json or not isinstance(shown, str) else shown)
    return 0


def _roles(args: argparse.Namespace, path: Path) -> Any:
    command = args.roles_command
    if command == "add":
        text = sys.stdin.read() if str(args.trust_policy) == "-" else args.trust_policy.read_text()
        return users.change(path, lambda d: roles.add_role(d, args.name, args.account, text, args.max_session_duration))
    if command == "remove":
        users.change(path, lambda d: roles.remove_role(d, args.name))
        return f"removed role {args.name}"
    return roles.role_listing(users.read(path), time.time())


def _providers(args: argparse.Namespace, path: Path) -> Any:
    command = args.oidc_command
    if command == "add":
        url = args.jwks_url or ""
        jwks = _fetch(url) if url else _read_json(args.jwks)
        return users.change(path, lambda d: roles.add_provider(d, args.issuer, args.account, args.audiences, jwks, url))
    if command == "refresh":
        provider = users.read(path).get("oidc_providers", {}).get(args.issuer)
        if provider is None or not provider.get("jwks_url"):
            raise users.UsersError(f"no OpenID Connect provider {args.issuer} added with --jwks-url")
        jwks = _fetch(provider["jwks_url"])
        return users.change(
            path,
            lambda d: roles.add_provider(d, args.issuer, str(provider["account"]), provider["audiences"], jwks,
                                         provider["jwks_url"]),
        )  # fmt: skip
    if command == "remove":
        users.change(path, lambda d: roles.remove_provider(d, args.issuer))
        return f"removed OpenID Connect provider {args.issuer}"
    return roles.provider_listing(users.read(path))


def _read_json(path: Path) -> dict[str, Any]:
    loaded = json.loads(path.read_text())
    if not isinstance(loaded, dict):
        raise users.UsersError(f"{path} is not a JWKS (a JSON object with keys)")
    return loaded


def _fetch(url: str) -> dict[str, Any]:
    return fetch_jwks(url, _FETCH_TIMEOUT_SECONDS).jwks
