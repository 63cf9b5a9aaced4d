"""What requests use beside the engine: the request-side services of one dynastore, built by its composition
root (app.py) and given to the operations when protocol/dispatch.py binds them.

The engine never sees them: the parsed PartiQL statements are the dialect's (api/ translates a statement to the
same typed engine calls as the JSON API) and the identity policies are authorization's (api/authorization.py maps
a request to its checks, security/authorization.py evaluates them). Every namespace's requests share them.
"""

from __future__ import annotations

from typing import Any, Protocol

from dynastore.engine.context import Context
from dynastore.global_tables.strong import StrongTables
from dynastore.partiql.cache import StatementCache
from dynastore.security.identity_policies import IdentityPolicies

__all__ = ["RequestServices", "ServicesHandler"]


class RequestServices:
    __slots__ = ("statements", "policies", "strong")

    def __init__(self, statements: StatementCache, policies: IdentityPolicies, strong: StrongTables) -> None:
        self.statements = statements  # parsed PartiQL statements, shared by all requests
        self.policies = policies  # users' and groups' identity policies (auth sigv4)
        self.strong = strong  # writes and strong reads of global tables with multi-region strong consistency


class ServicesHandler(Protocol):
    """The handler of an operation that also uses the request-side services (the PartiQL operations parse through
    the statement cache, the item operations reach the strong log of global tables): protocol/dispatch.py gives
    it the dynastore's services first, with a partial (no call of its own on the request's path)."""

    def __call__(self, services: RequestServices, req: dict[str, Any], ctx: Context, /) -> Any: ...
