"""The identity a request runs as, made once per request by the protocol layer and handed to the operation."""

from __future__ import annotations


class Caller:
    """An authenticated principal (or, with authentication off, the one anonymous caller of the server).

    ``account_id`` and ``region`` say which namespace the request addresses; ``arn`` is the principal as AWS
    names it in policies and error messages (``arn:aws:iam::<account>:user/<name>``); ``user_id`` is the value of
    ``${aws:userid}``; ``groups`` are the user's groups (their policies apply too); ``admin`` allows dynastore's
    own endpoints when authentication is on; ``authenticated`` is False only for the anonymous caller."""

    __slots__ = ("account_id", "region", "user_name", "user_id", "arn", "access_key_id", "groups", "admin",
                 "authenticated", "temporary")  # fmt: skip

    def __init__(
        self,
        account_id: str,
        region: str,
        *,
        user_name: str = "",
        user_id: str = "",
        arn: str = "",
        access_key_id: str = "",
        groups: tuple[str, ...] = (),
        admin: bool = False,
        authenticated: bool = False,
        temporary: bool = False,
    ) -> None:
        self.account_id = account_id
        self.region = region
        self.user_name = user_name
        self.user_id = user_id
        self.arn = arn
        self.access_key_id = access_key_id
        self.groups = groups
        self.admin = admin
        self.authenticated = authenticated
        self.temporary = temporary


def anonymous(account_id: str, region: str) -> Caller:
    """The caller of a server without authentication: every request is it, and it may do everything."""
    return Caller(account_id, region, user_name="anonymous", arn=f"arn:aws:iam::{account_id}:root", admin=True)
