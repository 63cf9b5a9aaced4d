"""What the clients did: each operation with its invoke and complete times and what became of it."""

from __future__ import annotations

import enum
import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from botocore.exceptions import (
    ClientError,
    ConnectTimeoutError,
    EndpointConnectionError,
)

NEVER = float("inf")  # when an operation in doubt completed: its effect may come at any time after it was sent


class Outcome(enum.Enum):
    OK = "acknowledged"
    FAILED = "failed"  # definitely not applied: a 4xx, or the connection was never made
    UNKNOWN = "in doubt"  # a timeout, a 5xx, a connection broken once the request may have been sent


@dataclass
class Op:
    """One client operation. ``value`` is what it asked (what to write, what to expect); ``result`` what it got."""

    process: int
    kind: str
    key: str
    value: Any
    invoke: float
    complete: float = NEVER
    outcome: Outcome = Outcome.UNKNOWN
    result: Any = None
    error: str = ""
    node: str = ""  # the URL the request was sent to


def ended(process: int, kind: str, key: str, value: Any, invoke: float, complete: float, outcome: Outcome,
          result: Any = None, error: str = "", node: str = "") -> Op:  # fmt: skip
    """An operation that ended with ``outcome``, as a history records it (one in doubt never completes, whatever
    ``complete`` says): the checkers' tests make their histories of these."""
    return Op(process, kind, key, value, invoke, complete if outcome is not Outcome.UNKNOWN else NEVER,
              outcome, result, error, node)  # fmt: skip


def classify(error: Exception) -> tuple[Outcome, str]:
    """What an exception from a boto3 call says about whether the request took effect.

    A 4xx is an answer: the request was refused. So is a connection that could not be opened (nothing was sent).
    Anything else (a 5xx, a timeout, a connection broken after the request left) leaves it in doubt.
    """
    if isinstance(error, ClientError):
        status = int(error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 500))
        code = str(error.response.get("Error", {}).get("Code", ""))
        return (Outcome.FAILED if 400 <= status < 500 else Outcome.UNKNOWN), code or str(status)
    if isinstance(error, (EndpointConnectionError, ConnectTimeoutError)):
        return Outcome.FAILED, type(error).__name__
    return Outcome.UNKNOWN, type(error).__name__


@dataclass
class History:
    """Every operation of a run, appended to by many client threads; times are seconds since ``origin``."""

    origin: float = field(default_factory=time.monotonic)
    ops: list[Op] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def now(self) -> float:
        return time.monotonic() - self.origin

    def invoke(self, process: int, kind: str, key: str, value: Any = None) -> Op:
        op = Op(process, kind, key, value, self.now())
        with self._lock:
            self.ops.append(op)
        return op

    def ok(self, op: Op, result: Any = None) -> None:
        op.complete, op.outcome, op.result = self.now(), Outcome.OK, result

    def failed(self, op: Op, error: Exception) -> None:
        """``op`` ended with ``error``: refused, or in doubt (then its completion time stays unknown: infinite)."""
        op.outcome, op.error = classify(error)
        if op.outcome is Outcome.FAILED:
            op.complete = self.now()

    def save(self, path: Path) -> None:
        """Every operation as a JSON line (times in seconds since the origin; null: never completed)."""
        with path.open("w") as out:
            for op in self.ops:
                fields = {**vars(op), "outcome": op.outcome.value}
                fields["complete"] = None if op.complete == NEVER else op.complete
                out.write(json.dumps(fields, default=str) + "\n")

    def of_kind(self, kind: str) -> list[Op]:
        with self._lock:
            return [op for op in self.ops if op.kind == kind]
