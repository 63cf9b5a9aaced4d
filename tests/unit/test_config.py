"""Configuration: environment variables and flags reach the storage they configure."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from dynastore.cli import _parser
from dynastore.config import Config
from dynastore.server import open_storage
from dynastore.storage.lmdb_kv import LmdbKV


def test_crash_safe_from_environment_and_flag() -> None:
    assert Config.from_env({}).crash_safe is False
    assert Config.from_env({"DYNASTORE_CRASH_SAFE": "1"}).crash_safe is True
    assert _parser(Config()).parse_args(["serve"]).crash_safe is False
    assert _parser(Config()).parse_args(["serve", "--crash-safe"]).crash_safe is True


def test_crash_safe_storage_syncs_each_commit_in_order(tmp_path: Path) -> None:
    for crash_safe in (False, True):
        config = dataclasses.replace(Config(), data_dir=tmp_path / str(crash_safe), crash_safe=crash_safe)
        kv = open_storage(config)
        try:
            assert isinstance(kv, LmdbKV)
            assert kv.ordered_sync is crash_safe
        finally:
            kv.close()
