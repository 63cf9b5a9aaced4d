"""DescribeEndpoints: this server's own address.

DynamoDB answers with its regional host name only (``dynamodb.<region>.amazonaws.com``) and a cache period of
1440 minutes. A local server is reachable only with its port, so the address here is ``<host>:<port>``.
"""

from __future__ import annotations

from typing import Any

from dynastore.engine.context import Context

__all__ = ["handle", "CACHE_PERIOD_MINUTES"]

CACHE_PERIOD_MINUTES = 1440


def handle(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    address = f"{ctx.config.host}:{ctx.config.port}"
    return {"Endpoints": [{"Address": address, "CachePeriodInMinutes": CACHE_PERIOD_MINUTES}]}
