"""The engine context holds the engine's components only, each built by the composition root (app.py) and passed
in; another namespace's context shares every one of them but its catalog and its config."""

from __future__ import annotations

from dynastore.engine.context import Context
from tests.unit.engine.tables import make_ctx

# Everything a context holds beside its config, store and catalog (the namespace registries are its own).
COMPONENTS = ("capacity", "indexes", "changelog", "shards", "locks", "ttl_cursors", "expressions", "key_templates",
              "table_spaces")  # fmt: skip


def test_a_context_holds_the_components_it_is_given() -> None:
    """Passed in, not built (what else it may hold is checked by the layer test: nothing of partiql/ or security/)."""
    built, _ = make_ctx()
    given = {name: getattr(built, name) for name in COMPONENTS}
    ctx = Context(built.config, built.kv, built.catalog, **given)
    assert all(getattr(ctx, name) is component for name, component in given.items())


def test_another_namespace_shares_every_component_but_its_catalog_and_config() -> None:
    ctx, _ = make_ctx()
    other = ctx.in_namespace("111111111111", "eu-west-1")
    assert all(getattr(other, name) is getattr(ctx, name) for name in COMPONENTS)
    assert other.kv is ctx.kv and other.catalog is not ctx.catalog
    assert (other.config.account_id, other.config.region) == ("111111111111", "eu-west-1")
