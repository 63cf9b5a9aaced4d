"""DynamoDB's expression language: parse (cached), check, resolve per request, evaluate, update, project.

Public API::

    ctx = ExpressionContext(names, values, cache)   # cache: the server's ExpressionCache (None: parse every time)
    cond = ctx.condition("ConditionExpression", text)      # or "FilterExpression"
    upd = ctx.update(text); proj = ctx.projection(text)
    kc = ctx.key_condition(text, hash_key=("pk", "S"), range_key=("sk", "N"))
    ctx.check_unused()
    evaluate(cond, item_or_None) -> bool
    apply_update(upd, item) -> (new_item, updated_paths); updated_view(item, updated_paths) -> Item
    project(item, proj) -> Item

``legacy`` converts Expected / AttributeUpdates / AttributesToGet / QueryFilter / ScanFilter /
KeyConditions into the same resolved objects.
"""

from __future__ import annotations

import dynastore.expressions.legacy as legacy
from dynastore.expressions.ast import ResolvedCondition, ResolvedProjection, ResolvedUpdate
from dynastore.expressions.cache import ExpressionCache, KeyTemplate, KeyTemplates
from dynastore.expressions.evaluate import evaluate
from dynastore.expressions.key_condition import KeyCondition
from dynastore.expressions.projection import project
from dynastore.expressions.resolve import ExpressionContext, check_expression_maps
from dynastore.expressions.update import UpdatedPaths, apply_update, creates_item, updated_view

__all__ = [
    "ExpressionCache",
    "ExpressionContext",
    "KeyTemplate",
    "KeyTemplates",
    "KeyCondition",
    "ResolvedCondition",
    "ResolvedProjection",
    "ResolvedUpdate",
    "UpdatedPaths",
    "apply_update",
    "creates_item",
    "check_expression_maps",
    "evaluate",
    "legacy",
    "project",
    "updated_view",
]
