"""The boto3 clients of dynastore's commands that call a running server's API (``backup``, ``restore``,
``export``, ``import``, ``streams tail``): one set of options and one way of signing for all of them, the same
as ``dynastore partitions`` (partitions_cli.signer_from: the options, else the standard AWS variables).

boto3 is imported only when a command runs: the server does not need it, and a command without it says so.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from dynastore.admin.partitions_cli import endpoint_url, signer_from

__all__ = ["add_client_options", "client", "client_arguments"]


def add_client_options(cmd: argparse.ArgumentParser, endpoint: str) -> None:
    """The server and the credentials a command signs with."""
    cmd.add_argument("--endpoint", default=endpoint, help=f"the server, as URL or host:port (default: {endpoint})")
    cmd.add_argument("--access-key-id", default="", help="sign requests (default: AWS_ACCESS_KEY_ID)")
    cmd.add_argument("--secret-access-key", default="", help="its secret (default: AWS_SECRET_ACCESS_KEY)")
    cmd.add_argument("--session-token", default="", help="temporary credentials' token (default: AWS_SESSION_TOKEN)")
    cmd.add_argument("--region", default="", help="the server's region (default: AWS_REGION, DYNASTORE_REGION)")
    cmd.add_argument("--ca-bundle", default="", help="certificates to trust for https (default: AWS_CA_BUNDLE)")


def client_arguments(args: argparse.Namespace) -> dict[str, Any]:
    """boto3.client's keyword arguments for the server and credentials of ``args``."""
    from botocore.config import Config

    signer = signer_from(args)
    bundle = args.ca_bundle or os.environ.get("AWS_CA_BUNDLE") or None
    return {
        "endpoint_url": endpoint_url(args.endpoint),
        "region_name": signer.region,
        # Without a key (a server without authentication takes any signature) a stand-in signs.
        "aws_access_key_id": signer.access_key_id or "dynastore",
        "aws_secret_access_key": signer.secret or "dynastore",
        "aws_session_token": signer.session_token or None,
        "verify": bundle if bundle else True,
        "config": Config(retries={"max_attempts": 3, "mode": "standard"}, connect_timeout=10, read_timeout=30),
    }


def client(args: argparse.Namespace, service: str = "dynamodb") -> Any:
    import boto3

    return boto3.client(service, **client_arguments(args))
