"""Configuration: environment variables and flags reach the storage they configure."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from dynastore.app import durable_log, open_storage
from dynastore.cli import _parser, _serve_config, _with_network
from dynastore.config import Config
from dynastore.server import connection_limits
from dynastore.storage.lmdb_kv import LmdbKV
from dynastore.storage.local_log import LocalLog


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


def test_the_durable_log_is_the_local_log_in_the_data_directory(tmp_path: Path) -> None:
    log = durable_log(dataclasses.replace(Config(), data_dir=tmp_path))
    assert isinstance(log, LocalLog)
    assert log.location == str(tmp_path / "wal")  # where every earlier release kept it


def test_connection_limits_from_environment_and_flags() -> None:
    defaults = Config()
    assert (defaults.max_header_bytes, defaults.idle_timeout, defaults.max_connections) == (16384, 60.0, 4096)
    env = Config.from_env({"DYNASTORE_IDLE_TIMEOUT": "2.5", "DYNASTORE_MAX_CONNECTIONS": "10"})
    assert (env.idle_timeout, env.max_connections) == (2.5, 10)
    args = _parser(env).parse_args(["serve", "--max-connections", "20", "--write-buffer-bytes", "4096"])
    config = _with_network(env, args)
    assert (config.idle_timeout, config.max_connections, config.write_buffer_bytes) == (2.5, 20, 4096)
    limits = connection_limits(config)
    assert (limits.idle_timeout, limits.max_connections, limits.write_buffer_bytes) == (2.5, 20, 4096)


def test_metrics_from_environment_and_flags() -> None:
    assert (Config.from_env({}).metrics, Config.from_env({}).metrics_port) == (True, None)
    env = Config.from_env({"DYNASTORE_NO_METRICS": "1", "DYNASTORE_METRICS_PORT": "9100"})
    assert (env.metrics, env.metrics_port) == (False, 9100)
    assert _parser(env).parse_args(["serve"]).metrics is False  # the environment's default
    args = _parser(Config()).parse_args(["serve", "--no-metrics", "--metrics-port", "9200"])
    assert (args.metrics, args.metrics_port) == (False, 9200)
    assert _parser(Config()).parse_args(["serve"]).metrics is True


def test_shared_namespace_from_environment_and_flag() -> None:
    assert Config.from_env({}).shared_namespace is False
    assert Config.from_env({"DYNASTORE_SHARED_NAMESPACE": "1"}).shared_namespace is True
    assert _parser(Config()).parse_args(["serve"]).shared_namespace is False
    assert _parser(Config()).parse_args(["serve", "--shared-namespace"]).shared_namespace is True


def test_security_settings_from_environment_and_flags() -> None:
    base = Config.from_env({})
    assert (base.auth, base.users_file, base.tls_cert, base.tls_key, base.admin_access_key_id) == (
        "none", None, None, None, ""
    )  # fmt: skip
    env = Config.from_env(
        {
            "DYNASTORE_AUTH": "sigv4",
            "DYNASTORE_USERS_FILE": "/srv/users.json",
            "DYNASTORE_TLS_CERT": "/srv/cert.pem",
            "DYNASTORE_TLS_KEY": "/srv/key.pem",
            "DYNASTORE_ADMIN_ACCESS_KEY_ID": "AKIAEXAMPLEEXAMPLE00",
            "DYNASTORE_ADMIN_SECRET_ACCESS_KEY": "top-secret",
        }
    )
    assert (env.auth, env.users_file, env.tls_cert, env.tls_key) == (
        "sigv4", Path("/srv/users.json"), Path("/srv/cert.pem"), Path("/srv/key.pem")
    )  # fmt: skip
    assert (env.admin_access_key_id, env.admin_secret_access_key) == ("AKIAEXAMPLEEXAMPLE00", "top-secret")
    assert "top-secret" not in repr(env)  # a logged config shows no secret
    args = _parser(env).parse_args(["serve", "--auth", "none", "--users-file", "/other.json"])
    assert (args.auth, args.users_file, args.tls_cert) == ("none", Path("/other.json"), Path("/srv/cert.pem"))


def test_allowed_hosts_from_environment_and_flag() -> None:
    assert Config.from_env({}).allowed_hosts == ()
    env = Config.from_env({"DYNASTORE_ALLOWED_HOSTS": " db.example,dev.example  other.example ,"})
    assert env.allowed_hosts == ("db.example", "dev.example", "other.example")
    assert serve_config_of(env, []).allowed_hosts == ("db.example", "dev.example", "other.example")
    assert serve_config_of(env, ["--allowed-hosts", "*"]).allowed_hosts == ("*",)
    assert serve_config_of(Config(), []).allowed_hosts == ()


def serve_config_of(defaults: Config, flags: list[str]) -> Config:
    return _serve_config(defaults, _parser(defaults).parse_args(["serve", *flags]))
