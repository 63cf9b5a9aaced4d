"""A trigger's configuration: Lambda's event source mapping parameters for a DynamoDB stream, plus what to call.

A trigger is one JSON object (``--trigger``, ``DYNASTORE_TRIGGERS``: a JSON array of them) or one table of a
TOML/JSON file (``--triggers-file``), with Lambda's parameter names::

    {"Name": "orders-audit", "Table": "orders", "Command": "python3 audit.py",
     "BatchSize": 10, "BisectBatchOnFunctionError": true, "MaximumRetryAttempts": 3,
     "DestinationConfig": {"OnFailure": {"Destination": "/var/log/orders-failed.jsonl"}},
     "FilterCriteria": {"Filters": [{"Pattern": "{\\"eventName\\": [\\"INSERT\\"]}"}]}}

Exactly one of ``Command`` (a string split like a shell does, or a list of arguments), ``Url`` (an HTTP
endpoint) or, through the Python API only, ``handler`` (a callable) says where batches go. Bad configuration
raises ``TriggerConfigError`` with one line saying what is wrong, before the server starts.
"""

from __future__ import annotations

import shlex
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from dynastore.limits import (
    TRIGGER_BATCH_SIZE_DEFAULT,
    TRIGGER_BATCH_SIZE_MAX,
    TRIGGER_BATCHING_WINDOW_MAX,
    TRIGGER_RECORD_AGE_MAX,
    TRIGGER_RECORD_AGE_MIN,
    TRIGGER_RETRY_ATTEMPTS_MAX,
    TRIGGER_RETRY_DELAY_DEFAULT,
    TRIGGER_TIMEOUT_DEFAULT,
)
from dynastore.triggers.filters import FilterSet

__all__ = ["Handler", "TriggerConfigError", "TriggerSpec", "parse_trigger", "parse_triggers", "read_triggers_file"]

# A Python trigger: called with the event ({"Records": [...]}); raising means the batch failed. A coroutine
# function is awaited on the loop; a plain function runs in a worker thread.
Handler = Callable[[dict[str, Any]], Any]

TRIM_HORIZON, LATEST = "TRIM_HORIZON", "LATEST"

_KNOWN = {
    "Name",
    "Table",
    "TableName",
    "Command",
    "Url",
    "Timeout",
    "BatchSize",
    "MaximumBatchingWindowInSeconds",
    "StartingPosition",
    "BisectBatchOnFunctionError",
    "MaximumRetryAttempts",
    "MaximumRecordAgeInSeconds",
    "DestinationConfig",
    "OnFailure",
    "FilterCriteria",
    "RetryDelaySeconds",
}


class TriggerConfigError(ValueError):
    """A trigger's configuration is wrong (the text says what and where)."""


@dataclass(frozen=True)
class TriggerSpec:
    name: str
    table: str
    command: tuple[str, ...] | None = None
    url: str | None = None
    handler: Handler | None = field(default=None, compare=False)
    timeout: float = TRIGGER_TIMEOUT_DEFAULT
    batch_size: int = TRIGGER_BATCH_SIZE_DEFAULT
    batching_window: float = 0.0
    starting_position: str = TRIM_HORIZON
    bisect: bool = False
    max_retries: int = -1  # -1: until the record expires
    max_record_age: int = -1  # -1: until the record expires
    on_failure: Path | None = None  # a file: one JSON line per discarded batch
    filters: FilterSet | None = None
    retry_delay: float = TRIGGER_RETRY_DELAY_DEFAULT

    def __post_init__(self) -> None:
        targets = sum(x is not None for x in (self.command, self.url, self.handler))
        where = f"trigger {self.name!r}"
        if targets != 1:
            raise TriggerConfigError(f"{where}: give exactly one of Command, Url or a Python handler")
        if not self.name or not self.table:
            raise TriggerConfigError(f"{where}: Name and Table must not be empty")
        if not 1 <= self.batch_size <= TRIGGER_BATCH_SIZE_MAX:
            raise TriggerConfigError(f"{where}: BatchSize must be from 1 to {TRIGGER_BATCH_SIZE_MAX}")
        if not 0 <= self.batching_window <= TRIGGER_BATCHING_WINDOW_MAX:
            raise TriggerConfigError(
                f"{where}: MaximumBatchingWindowInSeconds must be from 0 to {TRIGGER_BATCHING_WINDOW_MAX}"
            )
        if self.starting_position not in (TRIM_HORIZON, LATEST):
            raise TriggerConfigError(f"{where}: StartingPosition must be TRIM_HORIZON or LATEST")
        if not (self.max_retries == -1 or 0 <= self.max_retries <= TRIGGER_RETRY_ATTEMPTS_MAX):
            raise TriggerConfigError(
                f"{where}: MaximumRetryAttempts must be -1 or from 0 to {TRIGGER_RETRY_ATTEMPTS_MAX}"
            )
        if not (self.max_record_age == -1 or TRIGGER_RECORD_AGE_MIN <= self.max_record_age <= TRIGGER_RECORD_AGE_MAX):
            raise TriggerConfigError(
                f"{where}: MaximumRecordAgeInSeconds must be -1 or from {TRIGGER_RECORD_AGE_MIN} to "
                f"{TRIGGER_RECORD_AGE_MAX}"
            )
        if not self.timeout > 0 or self.retry_delay < 0:
            raise TriggerConfigError(f"{where}: Timeout must be above 0 and RetryDelaySeconds not below 0")
        if self.command is not None and not self.command:
            raise TriggerConfigError(f"{where}: Command is empty")

    @property
    def kind(self) -> str:
        return "command" if self.command is not None else "http" if self.url is not None else "python"


def parse_trigger(raw: Mapping[str, Any], default_name: str | None = None) -> TriggerSpec:
    """One trigger from its JSON/TOML object."""
    if not isinstance(raw, Mapping):
        raise TriggerConfigError("a trigger must be a JSON object (or a TOML table)")
    table = _text("a trigger", "Table", raw.get("Table", raw.get("TableName")))
    name = raw.get("Name", default_name if default_name is not None else table)
    where = f"trigger {name!r}"
    unknown = sorted(set(raw) - _KNOWN)
    if unknown:
        raise TriggerConfigError(f"{where}: unknown parameters {', '.join(unknown)}")
    return TriggerSpec(
        name=_text(where, "Name", name),
        table=table,
        command=_command(where, raw.get("Command")),
        url=None if raw.get("Url") is None else _text(where, "Url", raw["Url"]),
        timeout=_number(where, raw, "Timeout", TRIGGER_TIMEOUT_DEFAULT),
        batch_size=int(_number(where, raw, "BatchSize", TRIGGER_BATCH_SIZE_DEFAULT, whole=True)),
        batching_window=_number(where, raw, "MaximumBatchingWindowInSeconds", 0),
        starting_position=_text(where, "StartingPosition", raw.get("StartingPosition", TRIM_HORIZON)),
        bisect=_flag(where, raw, "BisectBatchOnFunctionError"),
        max_retries=int(_number(where, raw, "MaximumRetryAttempts", -1, whole=True)),
        max_record_age=int(_number(where, raw, "MaximumRecordAgeInSeconds", -1, whole=True)),
        on_failure=_destination(where, raw),
        filters=_filters(where, raw.get("FilterCriteria")),
        retry_delay=_number(where, raw, "RetryDelaySeconds", TRIGGER_RETRY_DELAY_DEFAULT),
    )


def parse_triggers(definitions: Sequence[str], env_value: str = "", file: Path | None = None) -> list[TriggerSpec]:
    """Every trigger of a run: the ``--trigger`` JSON objects, ``DYNASTORE_TRIGGERS`` (a JSON array or object)
    and the triggers file. Names must be unique: a trigger's checkpoints are kept under its name."""
    raws: list[Any] = []
    if env_value.strip():
        raws += _json_list("DYNASTORE_TRIGGERS", env_value)
    for text in definitions:
        raws += _json_list("--trigger (or DYNASTORE_TRIGGERS)", text)
    if file is not None:
        raws += read_triggers_file(file)
    specs = [parse_trigger(raw) for raw in raws]
    check_unique(specs)
    return specs


def check_unique(specs: Sequence[TriggerSpec]) -> None:
    seen: set[str] = set()
    for spec in specs:
        if spec.name in seen:
            raise TriggerConfigError(f"two triggers are named {spec.name!r}: give each its own Name")
        seen.add(spec.name)


def read_triggers_file(path: Path) -> list[Any]:
    """The triggers of a JSON file (an array, or {"triggers": [...]}) or a TOML file ([[trigger]] tables)."""
    try:
        text = path.read_bytes()
    except OSError as unreadable:
        raise TriggerConfigError(f"cannot read the triggers file {path}: {unreadable.strerror}") from None
    if path.suffix.lower() == ".toml":
        try:
            data: Any = tomllib.loads(text.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as not_toml:
            raise TriggerConfigError(f"the triggers file {path} is not TOML: {not_toml}") from None
    else:
        try:
            data = orjson.loads(text)
        except orjson.JSONDecodeError as not_json:
            raise TriggerConfigError(f"the triggers file {path} is not JSON: {not_json}") from None
    if isinstance(data, dict):
        data = data.get("trigger", data.get("triggers", [data] if "Table" in data else []))
    if not isinstance(data, list):
        raise TriggerConfigError(f"the triggers file {path} must hold a list of triggers")
    return data


def _json_list(where: str, text: str) -> list[Any]:
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError as e:
        raise TriggerConfigError(f"{where}: not JSON: {e}") from None
    return data if isinstance(data, list) else [data]


def _text(where: str, name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise TriggerConfigError(f"{where}: {name} must be a string")
    return value


def _number(where: str, raw: Mapping[str, Any], name: str, default: float, whole: bool = False) -> float:
    value = raw.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or (whole and not float(value).is_integer()):
        raise TriggerConfigError(f"{where}: {name} must be a {'whole ' if whole else ''}number")
    return float(value)


def _flag(where: str, raw: Mapping[str, Any], name: str) -> bool:
    value = raw.get(name, False)
    if not isinstance(value, bool):
        raise TriggerConfigError(f"{where}: {name} must be true or false")
    return value


def _command(where: str, value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return tuple(shlex.split(value))
    if isinstance(value, list) and all(isinstance(a, str) for a in value):
        return tuple(value)
    raise TriggerConfigError(f"{where}: Command must be a string or a list of strings")


def _destination(where: str, raw: Mapping[str, Any]) -> Path | None:
    value = raw.get("OnFailure")
    config = raw.get("DestinationConfig")
    if config is not None:
        if not isinstance(config, Mapping) or not isinstance(config.get("OnFailure"), Mapping):
            raise TriggerConfigError(f'{where}: DestinationConfig must be {{"OnFailure": {{"Destination": path}}}}')
        value = config["OnFailure"].get("Destination")
    return None if value is None else Path(_text(where, "the on-failure Destination", value))


def _filters(where: str, value: Any) -> FilterSet | None:
    if value is None:
        return None
    if not isinstance(value, Mapping) or not isinstance(value.get("Filters"), list):
        raise TriggerConfigError(f'{where}: FilterCriteria must be {{"Filters": [{{"Pattern": ...}}]}}')
    patterns: list[Any] = []
    for entry in value["Filters"]:
        pattern = entry.get("Pattern") if isinstance(entry, Mapping) else None
        if isinstance(pattern, str):
            try:
                pattern = orjson.loads(pattern)
            except orjson.JSONDecodeError:
                raise TriggerConfigError(f"{where}: a filter Pattern is not JSON") from None
        patterns.append(pattern)
    try:
        return FilterSet(patterns)
    except ValueError as e:
        raise TriggerConfigError(f"{where}: {e}") from None
