"""Server configuration: one frozen value built by the CLI (or by tests) and passed down."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from dynastore.util.clock import Clock, SystemClock


@dataclass(frozen=True)
class Config:
    host: str = "127.0.0.1"
    port: int = 8000
    data_dir: Path = Path("dynastore-data")
    in_memory: bool = False
    region: str = "us-east-1"
    account_id: str = "000000000000"
    # Simulated control-plane delays, in seconds: how long a table stays CREATING / UPDATING / DELETING.
    create_table_delay: float = 0.0
    update_table_delay: float = 0.0
    delete_table_delay: float = 0.0
    clock: Clock = field(default_factory=SystemClock, compare=False)

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Config:
        """Defaults overridden by DYNASTORE_* environment variables (the CLI then applies its flags)."""
        env = os.environ if environ is None else environ
        base = cls()
        return cls(
            host=env.get("DYNASTORE_HOST", base.host),
            port=int(env.get("DYNASTORE_PORT", base.port)),
            data_dir=Path(env.get("DYNASTORE_DATA_DIR", str(base.data_dir))),
            in_memory=env.get("DYNASTORE_IN_MEMORY", "").lower() in ("1", "true", "yes"),
            region=env.get("DYNASTORE_REGION", base.region),
            account_id=env.get("DYNASTORE_ACCOUNT_ID", base.account_id),
            create_table_delay=float(env.get("DYNASTORE_CREATE_TABLE_DELAY", base.create_table_delay)),
            update_table_delay=float(env.get("DYNASTORE_UPDATE_TABLE_DELAY", base.update_table_delay)),
            delete_table_delay=float(env.get("DYNASTORE_DELETE_TABLE_DELAY", base.delete_table_delay)),
        )
