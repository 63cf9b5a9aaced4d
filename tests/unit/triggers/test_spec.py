"""Trigger configuration: Lambda's parameter names and bounds, the three sources, one-line errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from dynastore.triggers.spec import TriggerConfigError, TriggerSpec, parse_trigger, parse_triggers


def test_a_full_definition() -> None:
    spec = parse_trigger(
        {
            "Name": "audit",
            "Table": "orders",
            "Command": "python3 -c 'import sys'",
            "BatchSize": 10,
            "MaximumBatchingWindowInSeconds": 5,
            "StartingPosition": "LATEST",
            "BisectBatchOnFunctionError": True,
            "MaximumRetryAttempts": 3,
            "MaximumRecordAgeInSeconds": 600,
            "DestinationConfig": {"OnFailure": {"Destination": "/tmp/failed.jsonl"}},
            "FilterCriteria": {"Filters": [{"Pattern": '{"eventName": ["INSERT"]}'}]},
            "Timeout": 5,
            "RetryDelaySeconds": 0.5,
        }
    )
    assert spec.command == ("python3", "-c", "import sys")
    assert (spec.batch_size, spec.batching_window, spec.starting_position) == (10, 5.0, "LATEST")
    assert (spec.bisect, spec.max_retries, spec.max_record_age) == (True, 3, 600)
    assert spec.on_failure == Path("/tmp/failed.jsonl")
    assert spec.filters is not None and spec.filters.passes({"eventName": "INSERT"})
    assert (spec.timeout, spec.retry_delay, spec.kind) == (5.0, 0.5, "command")


def test_defaults_are_lambdas() -> None:
    spec = parse_trigger({"Table": "orders", "Url": "http://127.0.0.1:9/hook"})
    assert spec.name == "orders" and spec.kind == "http"
    assert (spec.batch_size, spec.batching_window, spec.starting_position) == (100, 0.0, "TRIM_HORIZON")
    assert (spec.bisect, spec.max_retries, spec.max_record_age, spec.on_failure) == (False, -1, -1, None)


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        ({"Table": "t"}, "give exactly one of Command, Url or a Python handler"),
        ({"Table": "t", "Command": "x", "Url": "http://h"}, "give exactly one of Command, Url"),
        ({"Table": "t", "Command": "x", "BatchSize": 0}, "BatchSize must be from 1 to 10000"),
        ({"Table": "t", "Command": "x", "BatchSize": 10001}, "BatchSize must be from 1 to 10000"),
        ({"Table": "t", "Command": "x", "BatchSize": 1.5}, "BatchSize must be a whole number"),
        ({"Table": "t", "Command": "x", "MaximumBatchingWindowInSeconds": 301}, "from 0 to 300"),
        ({"Table": "t", "Command": "x", "StartingPosition": "AT_TIMESTAMP"}, "TRIM_HORIZON or LATEST"),
        ({"Table": "t", "Command": "x", "MaximumRetryAttempts": -2}, "-1 or from 0 to 10000"),
        ({"Table": "t", "Command": "x", "MaximumRecordAgeInSeconds": 59}, "-1 or from 60 to 604800"),
        ({"Table": "t", "Command": "x", "BisectBatchOnFunctionError": "yes"}, "must be true or false"),
        ({"Table": "t", "Command": "x", "Bogus": 1}, "unknown parameters Bogus"),
        ({"Table": "t", "Command": ""}, "Command is empty"),
        ({"Table": "t", "Command": 5}, "Command must be a string or a list of strings"),
        ({"Command": "x"}, "Table must be a string"),
        ({"Table": "t", "Command": "x", "DestinationConfig": {"OnFailure": "f"}}, "DestinationConfig must be"),
        ({"Table": "t", "Command": "x", "FilterCriteria": {"Filters": [{"Pattern": "{"}]}}, "Pattern is not JSON"),
        ({"Table": "t", "Command": "x", "FilterCriteria": {"Filters": [{"Pattern": {"a": 1}}]}}, "filter value"),
    ],
)
def test_a_wrong_definition_is_one_line(raw: dict[str, Any], text: str) -> None:
    with pytest.raises(TriggerConfigError, match=text):
        parse_trigger(raw)


def test_the_sources_together_and_unique_names(tmp_path: Path) -> None:
    toml = tmp_path / "triggers.toml"
    toml.write_text('[[trigger]]\nName = "c"\nTable = "t"\nCommand = ["cat"]\nBatchSize = 5\n')
    env = orjson.dumps([{"Name": "a", "Table": "t", "Command": "cat"}]).decode()
    flag = orjson.dumps({"Name": "b", "Table": "t", "Url": "http://127.0.0.1:1/"}).decode()
    specs = parse_triggers([flag], env, toml)
    assert [(s.name, s.kind) for s in specs] == [("a", "command"), ("b", "http"), ("c", "command")]
    assert specs[2].batch_size == 5 and specs[2].command == ("cat",)
    as_json = tmp_path / "triggers.json"
    as_json.write_bytes(orjson.dumps({"triggers": [{"Name": "d", "Table": "t", "Command": "cat"}]}))
    assert [s.name for s in parse_triggers([], "", as_json)] == ["d"]
    with pytest.raises(TriggerConfigError, match="two triggers are named 'a'"):
        parse_triggers([env], env)


def test_a_bad_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(TriggerConfigError, match="cannot read the triggers file"):
        parse_triggers([], "", tmp_path / "absent.json")
    bad = tmp_path / "bad.toml"
    bad.write_text("[[trigger]\n")
    with pytest.raises(TriggerConfigError, match="is not TOML"):
        parse_triggers([], "", bad)
    with pytest.raises(TriggerConfigError, match=r"--trigger \(or DYNASTORE_TRIGGERS\): not JSON"):
        parse_triggers(["{"])


def test_a_python_handler_is_given_through_the_api() -> None:
    spec = TriggerSpec(name="py", table="t", handler=print)
    assert spec.kind == "python"
