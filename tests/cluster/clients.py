"""boto3 clients of the cluster's nodes as the load and the checker use them: no retries, no client-side
validation, short timeouts (a request that outlives them is in doubt)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

LOAD_CONFIG = Config(parameter_validation=False, retries={"max_attempts": 0}, connect_timeout=1, read_timeout=5,
                     max_pool_connections=32)  # fmt: skip
CHECK_CONFIG = Config(parameter_validation=False, retries={"max_attempts": 0}, connect_timeout=2, read_timeout=30)
CREDENTIALS = {"region_name": "us-east-1", "aws_access_key_id": "AKIDEXAMPLE", "aws_secret_access_key": "secret"}

T = TypeVar("T")


def client(url: str, config: Config = LOAD_CONFIG, service: str = "dynamodb") -> Any:
    """A client of one node; a session of its own, so that threads can each make theirs."""
    return boto3.session.Session().client(service, endpoint_url=url, config=config, **CREDENTIALS)


def until_done(call: Callable[[], T], timeout: float = 20, accept: tuple[str, ...] = ()) -> T | None:
    """``call()`` repeated until it answers, or raises a ClientError whose code is in ``accept`` (then None): for
    the setup and the checker's reads, which must get through whatever the cluster is doing."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return call()
        except ClientError as e:
            if e.response["Error"]["Code"] in accept:
                return None
            if time.monotonic() > deadline:
                raise
        except BotoCoreError:
            if time.monotonic() > deadline:
                raise
        time.sleep(0.2)
