"""Apply a resolved update to an item, copy-on-write: the input item is never mutated.

Order and rules (DynamoDB Developer Guide, "Update expressions"; runtime texts from dynalite's tests):

* every SET right-hand side is evaluated against the item *before* the update; then SET, REMOVE, ADD
  and DELETE actions are applied in that order (paths of one expression never overlap);
* a right-hand path that does not exist -> ``The provided expression refers to an attribute that does
  not exist in the item``; ``+``/``-`` on non-numbers, ``list_append`` on non-lists, ADD/DELETE on an
  attribute of another type -> ``An operand in the update expression has an incorrect data type``;
* a nested target whose parent does not exist or is not a map/list as the path requires -> ``The
  document path provided in the update expression is invalid for update`` (SET, REMOVE, ADD and
  DELETE alike); SET of a list index past the end appends, several of them in index order (not
  expression order); REMOVE of a missing attribute, map key or list index is a no-op; several list
  indexes of one list are removed using the indexes of the original list;
* ADD creates a missing number or set; DELETE of a missing attribute is a no-op, and a set emptied by
  DELETE is removed;
* on a missing item an update of only REMOVE / DELETE actions creates nothing (``creates_item``), and
  REMOVE / DELETE of a nested path there is a no-op, not an invalid path (test suites run against
  DynamoDB show both).
Guess: the ``UpdatedPaths`` of an appended list element name the index written in the expression.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, TypeAlias

from dynastore import messages
from dynastore.errors import ValidationException
from dynastore.expressions.ast import (
    ArithOperand,
    FunctionOperand,
    PathOperand,
    ResolvedOperand,
    ResolvedPath,
    ResolvedUpdate,
    ValueOperand,
)
from dynastore.expressions.evaluate import lookup
from dynastore.expressions.projection import project_paths
from dynastore.model.values import AttributeValue, Item, add_numbers, decode_binary, subtract_numbers

__all__ = ["UpdatedPaths", "apply_update", "creates_item", "updated_view"]

UpdatedPaths: TypeAlias = tuple[ResolvedPath, ...]
_SET_TYPES = frozenset({"SS", "NS", "BS"})


def _invalid_path() -> ValidationException:
    return ValidationException(messages.UPDATE_INVALID_PATH, bare=True)


def _bad_operand(update: ResolvedUpdate) -> ValidationException:
    text = messages.UPDATE_TYPE_MISMATCH if update.legacy else messages.UPDATE_BAD_OPERAND
    return ValidationException(text, bare=True)


def _value(operand: ResolvedOperand, item: Item) -> AttributeValue:
    if isinstance(operand, ValueOperand):
        return operand.value
    if isinstance(operand, PathOperand):
        found = lookup(item, operand.path)
        if found is None:
            raise ValidationException(messages.UPDATE_MISSING_ATTRIBUTE, bare=True)
        return found
    if isinstance(operand, ArithOperand):
        left = _value(operand.left, item)
        right = _value(operand.right, item)
        if "N" not in left or "N" not in right:
            raise ValidationException(messages.UPDATE_BAD_OPERAND, bare=True)
        combine = add_numbers if operand.op == "+" else subtract_numbers
        return {"N": combine(left["N"], right["N"])}
    if operand.name == "if_not_exists":
        target = operand.args[0]
        assert isinstance(target, PathOperand)
        found = lookup(item, target.path)
        return found if found is not None else _value(operand.args[1], item)
    assert isinstance(operand, FunctionOperand) and operand.name == "list_append"
    left = _value(operand.args[0], item)
    right = _value(operand.args[1], item)
    if "L" not in left or "L" not in right:
        raise ValidationException(messages.UPDATE_BAD_OPERAND, bare=True)
    return {"L": [*left["L"], *right["L"]]}


def _copy(value: AttributeValue) -> AttributeValue:
    if "M" in value:
        return {"M": dict(value["M"])}
    if "L" in value:
        return {"L": list(value["L"])}
    return value


def _parent(item: Item, path: ResolvedPath) -> AttributeValue:
    """Copy the containers along ``path[:-1]`` into ``item`` and return the (copied) parent container."""
    head = path[0]
    assert isinstance(head, str)
    current = item.get(head)
    if current is None:
        raise _invalid_path()
    current = _copy(current)
    item[head] = current
    for element in path[1:-1]:
        if isinstance(element, int):
            items = current.get("L")
            if items is None or element >= len(items):
                raise _invalid_path()
            child = _copy(items[element])
            items[element] = child
        else:
            members = current.get("M")
            if members is None or element not in members:
                raise _invalid_path()
            child = _copy(members[element])
            members[element] = child
        current = child
    return current


def _check_parent(item: Item, path: ResolvedPath) -> None:
    """A nested ``path`` whose target is missing must still go through containers of the right kind."""
    if len(path) > 1:
        parent = _parent(item, path)
        if ("L" if isinstance(path[-1], int) else "M") not in parent:
            raise _invalid_path()


def _put(item: Item, path: ResolvedPath, value: AttributeValue) -> None:
    if len(path) == 1:
        item[path[0]] = value  # type: ignore[index]
        return
    parent = _parent(item, path)
    last = path[-1]
    if isinstance(last, int):
        items = parent.get("L")
        if items is None:
            raise _invalid_path()
        if last < len(items):
            items[last] = value
        else:
            items.append(value)
    else:
        members = parent.get("M")
        if members is None:
            raise _invalid_path()
        members[last] = value


def _remove(item: Item, path: ResolvedPath) -> None:
    if len(path) == 1:
        item.pop(path[0], None)  # type: ignore[arg-type]
        return
    parent = _parent(item, path)
    last = path[-1]
    if isinstance(last, int):
        items = parent.get("L")
        if items is None:
            raise _invalid_path()
        if last < len(items):
            del items[last]
    else:
        members = parent.get("M")
        if members is None:
            raise _invalid_path()
        members.pop(last, None)


def _set_key(type_name: str, element: str) -> Any:
    if type_name == "NS":
        return Decimal(element)
    if type_name == "BS":
        return decode_binary(element)
    return element


def _add(update: ResolvedUpdate, item: Item, path: ResolvedPath, value: AttributeValue) -> None:
    current = lookup(item, path)
    type_name, payload = next(iter(value.items()))
    if current is None:
        _check_parent(item, path)  # a missing parent is an invalid path
        _put(item, path, value)
        return
    if type_name not in current:
        raise _bad_operand(update)
    if type_name == "N":
        _put(item, path, {"N": add_numbers(current["N"], payload)})
    elif type_name == "L":  # legacy AttributeUpdates ADD appends to a list
        _put(item, path, {"L": [*current["L"], *payload]})
    else:
        seen = {_set_key(type_name, element) for element in current[type_name]}
        merged = list(current[type_name])
        for element in payload:
            key = _set_key(type_name, element)
            if key not in seen:
                seen.add(key)
                merged.append(element)
        _put(item, path, {type_name: merged})


def _delete(update: ResolvedUpdate, item: Item, path: ResolvedPath, value: AttributeValue) -> None:
    current = lookup(item, path)
    if current is None:
        _check_parent(item, path)
        return
    type_name, payload = next(iter(value.items()))
    if type_name not in current:
        raise _bad_operand(update)
    drop = {_set_key(type_name, element) for element in payload}
    kept = [element for element in current[type_name] if _set_key(type_name, element) not in drop]
    if kept:
        _put(item, path, {type_name: kept})
    else:
        _remove(item, path)


def _removal_order(path: ResolvedPath) -> tuple[tuple[int, Any], ...]:
    return tuple((1, element) if isinstance(element, int) else (0, element) for element in path)


def creates_item(update: ResolvedUpdate) -> bool:
    """Whether the update creates a missing item: only SET (PUT) and ADD do; REMOVE and DELETE alone do not."""
    return bool(update.sets or update.adds)


def apply_update(update: ResolvedUpdate, item: Item, *, existed: bool = True) -> tuple[Item, UpdatedPaths]:
    """Return ``(new_item, updated_paths)``; ``item`` is not mutated. Raises ValidationException.

    ``existed`` False: ``item`` is only the key of a missing item, where nested REMOVE / DELETE paths are no-ops.
    """
    values = [(path, _value(operand, item)) for path, operand in update.sets]
    new: Item = dict(item)
    if len(values) > 1:
        # Several list elements set past the end are appended in index order: sort list indexes (paths
        # never overlap, so only the order of appends to one list can change).
        values.sort(key=lambda entry: _removal_order(entry[0]))
    for path, value in values:
        _put(new, path, value)
    for path in sorted(update.removes, key=_removal_order, reverse=True):
        if existed or len(path) == 1:
            _remove(new, path)
    for path, value in update.adds:
        _add(update, new, path, value)
    for path, value in update.deletes:
        if next(iter(value)) not in _SET_TYPES and update.legacy:
            raise _bad_operand(update)
        if existed or len(path) == 1:
            _delete(update, new, path, value)
    return new, update.paths


def updated_view(item: Item, paths: UpdatedPaths) -> Item:
    """The parts of ``item`` at ``paths``, as DynamoDB returns ReturnValues UPDATED_OLD / UPDATED_NEW."""
    return project_paths(item, paths)
