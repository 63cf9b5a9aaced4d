"""An export's FilterSpecification: which items an export holds and which of their attributes.

``KeyConditionExpression`` (Query's rules: equality on the partition key, optionally a condition on the sort
key), ``FilterExpression`` (Scan's), ``ProjectionExpression``, with ``ExpressionAttributeNames`` /
``ExpressionAttributeValues``: parsed and checked with DynamoDB's texts when the export is requested, and again
when it runs (the job keeps the request's text, not parsed objects). With a key condition the filter may name
only non-key attributes, as DynamoDB says.
"""

from __future__ import annotations

from typing import Any

from dynastore import messages
from dynastore.engine.pages import condition_paths
from dynastore.errors import ValidationException
from dynastore.expressions.evaluate import evaluate
from dynastore.expressions.projection import project
from dynastore.expressions.resolve import ExpressionContext
from dynastore.model.table_schema import TableDef
from dynastore.model.values import Item

__all__ = ["ExportFilter"]


class ExportFilter:
    __slots__ = ("_key", "_filter", "_projection")

    def __init__(self, spec: dict[str, Any], table: TableDef) -> None:
        """Raises ValidationException as Query and Scan do for the same expressions."""
        exprs = ExpressionContext(spec.get("ExpressionAttributeNames"), spec.get("ExpressionAttributeValues"))
        hash_key, range_key = table.key_schema.hash_key, table.key_schema.range_key
        key_text = spec.get("KeyConditionExpression")
        self._key = None
        if key_text is not None:
            exprs.key_condition(
                key_text,
                (hash_key.name, hash_key.type),
                None if range_key is None else (range_key.name, range_key.type),
            )
            self._key = exprs.condition("KeyConditionExpression", key_text)
        filter_text = spec.get("FilterExpression")
        self._filter = None if filter_text is None else exprs.condition("FilterExpression", filter_text)
        projection_text = spec.get("ProjectionExpression")
        self._projection = None if projection_text is None else exprs.projection(projection_text)
        exprs.check_unused()
        if self._key is not None and self._filter is not None:
            heads = {path[0] for path in condition_paths(self._filter)}
            for attr in table.key_schema.attributes:
                if attr.name in heads:
                    raise ValidationException(
                        messages.FILTER_ON_KEY_ATTRIBUTE.format(param="Filter Expression", name=attr.name), bare=True
                    )

    def apply(self, item: Item) -> Item | None:
        """The item as exported, None when it is not."""
        if self._key is not None and not evaluate(self._key, item):
            return None
        if self._filter is not None and not evaluate(self._filter, item):
            return None
        return item if self._projection is None else project(item, self._projection)
