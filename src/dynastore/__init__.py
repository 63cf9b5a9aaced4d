"""dynastore: a DynamoDB-compatible database server."""

from __future__ import annotations

from dynastore.config import Config

__version__ = "0.1.0"
__all__ = ["Config", "Server", "__version__"]


def __getattr__(name: str) -> object:
    # The server pulls in storage and the protocol stack; import it only when asked for.
    if name == "Server":
        from dynastore.server import Server

        return Server
    raise AttributeError(name)
