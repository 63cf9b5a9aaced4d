"""validation/model_order.py is the service model's member order for every request structure of api/schemas.py."""

from __future__ import annotations

from typing import Any

import botocore.session
import pytest

from dynastore.api import schemas
from dynastore.validation.model_order import MODEL_ORDER
from dynastore.validation.shapes import List, Map, Shape, Struct


def _structs(shape: Shape, found: dict[str, Struct]) -> None:
    if isinstance(shape, Struct):
        if shape.name:
            found.setdefault(shape.name, shape)
        for _, member in shape.members:
            _structs(member, found)
    elif isinstance(shape, List):
        _structs(shape.member, found)
    elif isinstance(shape, Map):
        _structs(shape.value, found)


def _declared() -> dict[str, Struct]:
    found: dict[str, Struct] = {}
    for shape in schemas.SHAPES.values():
        _structs(shape, found)
    for value in vars(schemas).values():
        if isinstance(value, Shape):
            _structs(value, found)
    return found


def _model_members(name: str) -> list[str] | None:
    session = botocore.session.get_session()
    for service in ("dynamodb", "dynamodbstreams"):
        model: Any = session.get_service_model(service)
        if name in model.shape_names:
            return list(model.shape_for(name).members)
    return None


@pytest.mark.parametrize("name", sorted(_declared()))
def test_every_request_structure_has_the_model_order(name: str) -> None:
    members = _model_members(name)
    assert members is not None, f"{name} is no structure of the service model"
    assert list(MODEL_ORDER[name]) == members


def test_the_new_form_reports_the_model_first_member() -> None:
    # A member the model lists first fails before one our shape lists first (PutItem's TableName, ReturnValues).
    put_item = schemas.PUT_ITEM
    ours = [name for name, _ in put_item.members]
    assert ours.index("ReturnValues") < ours.index("TableName")
    assert MODEL_ORDER["PutItemInput"].index("TableName") < MODEL_ORDER["PutItemInput"].index("ReturnValues")
