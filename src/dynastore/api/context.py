"""What every operation handler is given: the long-lived services of one server."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dynastore.config import Config
from dynastore.storage.catalog import Catalog
from dynastore.storage.kv import KV
from dynastore.util.clock import Clock


@dataclass
class Context:
    config: Config
    kv: KV
    catalog: Catalog
    states: dict[Any, Any] = field(default_factory=dict)  # what engine modules keep per server (api/per_server.py)

    @property
    def clock(self) -> Clock:
        return self.config.clock
