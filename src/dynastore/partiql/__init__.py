"""DynamoDB's PartiQL dialect: tokenizer, parser (statement text -> ``partiql.ast``), a bounded cache of parsed
statements, value binding, and translation into the expression language's resolved objects.

Public API::

    parsed = cache.get(text)                   # the StatementCache of api/services.py; PartiQLSyntaxError
    parsed.statement, parsed.param_count
    bind_value(value, params)                  # literal / ? -> AttributeValue
    translate_condition / translate_update / translate_projection / split_key / plan_read / plan_multi_read

The api layer (api/partiql_*.py) turns the results into the engine's typed calls.
"""

from __future__ import annotations

from dynastore.partiql import ast
from dynastore.partiql.bind import bind_value
from dynastore.partiql.cache import StatementCache
from dynastore.partiql.parser import ParsedStatement, parse
from dynastore.partiql.tokens import PartiQLSyntaxError
from dynastore.partiql.translate import (
    ReadPlan,
    conjoin,
    key_equality,
    partition_equality,
    plan_multi_read,
    plan_read,
    split_key,
    translate_condition,
    translate_projection,
    translate_update,
)

__all__ = [
    "ParsedStatement",
    "PartiQLSyntaxError",
    "ReadPlan",
    "StatementCache",
    "ast",
    "bind_value",
    "conjoin",
    "parse",
    "key_equality",
    "partition_equality",
    "plan_multi_read",
    "plan_read",
    "split_key",
    "translate_condition",
    "translate_projection",
    "translate_update",
]
