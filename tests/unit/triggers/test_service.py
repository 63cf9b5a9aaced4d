"""Triggers as a component of app.Dynastore: configured from Config, added through the Python API, started and
stopped with the other background work, inspected at GET /dynastore/triggers."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from dynastore.admin import routes
from dynastore.app import Dynastore
from dynastore.config import Config
from dynastore.triggers.runner import TriggerRunner
from dynastore.triggers.spec import TriggerConfigError, TriggerSpec
from tests.unit.test_app import call

TABLE = {
    "TableName": "orders",
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
    "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"},
}


def test_a_python_trigger_runs_with_the_dynastore() -> None:
    app = Dynastore(Config(in_memory=True))
    seen: list[str] = []
    done = asyncio.Event()

    async def handler(event: dict[str, Any]) -> None:
        seen.extend(r["dynamodb"]["NewImage"]["pk"]["S"] for r in event["Records"])
        if len(seen) == 3:
            done.set()

    app.add_trigger(TriggerSpec(name="py", table="orders", handler=handler))

    async def main() -> None:
        app.start(asyncio.get_running_loop())
        with pytest.raises(RuntimeError, match="add triggers before the dynastore starts"):
            app.add_trigger(TriggerSpec(name="late", table="orders", handler=handler))
        assert call(app, "CreateTable", TABLE)[0] == 200
        for key in "abc":
            assert call(app, "PutItem", {"TableName": "orders", "Item": {"pk": {"S": key}}})[0] == 200
        await asyncio.wait_for(done.wait(), 30)
        response = routes.handle(app.engine, "GET", {}, "/dynastore/triggers", b"", app.triggers)
        (view,) = orjson.loads(response.body)["triggers"]
        assert view["name"] == "py" and view["kind"] == "python"
        assert sum(s["records_delivered"] for s in view["shards"]) == 3
        refused = routes.handle(app.engine, "POST", {"content-type": "application/json"}, "/dynastore/triggers", b"{}")
        assert refused.status == 405
        await app.stop()

    asyncio.run(main())
    assert seen == ["a", "b", "c"]


def test_configured_triggers_come_from_config() -> None:
    definition = json.dumps({"Name": "cmd", "Table": "orders", "Command": "cat", "BatchSize": 7})
    app = Dynastore(Config(in_memory=True, triggers=(definition,)))
    try:
        (runner,) = app.triggers.runners
        assert runner.spec.batch_size == 7 and runner.spec.kind == "command"
        with pytest.raises(TriggerConfigError, match="two triggers are named 'cmd'"):
            app.add_trigger(TriggerSpec(name="cmd", table="orders", handler=print))
    finally:
        app.close()
    with pytest.raises(TriggerConfigError, match="BatchSize must be from 1 to 10000"):
        Dynastore(Config(in_memory=True, triggers=('{"Table": "t", "Command": "cat", "BatchSize": 0}',)))


def test_triggers_from_the_environment(tmp_path: Path) -> None:
    file = tmp_path / "t.toml"
    file.write_text('[[trigger]]\nName = "f"\nTable = "t"\nUrl = "http://127.0.0.1:1/"\n')
    env = {
        "DYNASTORE_TRIGGERS": '[{"Name": "e", "Table": "t", "Command": "cat"}]',
        "DYNASTORE_TRIGGERS_FILE": str(file),
    }
    config = Config.from_env(env)
    assert config.triggers_file == file
    app = Dynastore(dataclasses.replace(config, in_memory=True))
    try:
        assert [(r.spec.name, r.spec.kind) for r in app.triggers.runners] == [("e", "command"), ("f", "http")]
    finally:
        app.close()


def test_stop_ends_a_trigger_whose_delivery_fails_otherwise_when_cancelled() -> None:
    """stop() cancels a delivery in flight; one that then ends with another error than the cancellation (as a
    command that had exited meanwhile once did on uvloop: ProcessLookupError) still stops its trigger, instead of
    the error being counted as a failed round and the trigger going on while stop() waits for it forever."""
    app = Dynastore(Config(in_memory=True))
    in_flight = asyncio.Event()
    cancellations: list[int] = []

    async def deliver(body: bytes) -> None:
        in_flight.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancellations.append(1)
            if len(cancellations) == 1:  # the first one only: a runner that went on must still stop at the end
                raise ProcessLookupError from None
            raise

    runner = TriggerRunner(TriggerSpec(name="cmd", table="orders", command=("true",)), app.engine, deliver)
    app.triggers.runners.append(runner)
    app.add_consumer(runner)

    async def main() -> None:
        app.start(asyncio.get_running_loop())
        assert call(app, "CreateTable", TABLE)[0] == 200
        assert call(app, "PutItem", {"TableName": "orders", "Item": {"pk": {"S": "a"}}})[0] == 200
        await asyncio.wait_for(in_flight.wait(), 30)
        await asyncio.wait_for(app.stop(), 30)

    asyncio.run(main())
    assert cancellations == [1]
