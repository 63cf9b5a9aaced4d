"""Random PartiQL requests from a user whose policy keeps it to its own partition key, and the checks that none
of them read or changed another's item (tests/e2e/test_partiql_fuzz.py runs a bounded, seeded run).

The table has a partition key ``pk`` (S) and a sort key ``sk`` (N), and an index ``byG`` (``pk``, ``g``). The
user's own items sit under its user id; every other item (``Victims``) holds only values containing ``SECRET``
and sort keys from ``VICTIM_SK`` up, which no generated statement writes: an answer showing one of them, or a
table where one changed, is a leak.
"""

from __future__ import annotations

import random
from typing import Any

VICTIM_SK = 9_990_000
SECRET = "SECRET"

_SHAPES = [
    "pk = {k}", "{k} = pk", "pk = {k} AND sk = {n}", "sk = {n} AND pk = {k}", "pk IN [{k}, {k}]",
    "pk = {k} OR pk = {k}", "pk <> {k}", "begins_with(pk, {k})", "pk > {k}", "NOT pk = {k}",
    "pk = {k} AND pk = {k}", "(pk = {k}) AND sk = {n}", "pk = {k} OR v = 'w'", "sk = {n}",
    "pk BETWEEN {k} AND {k}", "pk IN [{k}] AND pk = {k}", "pk = {k} AND (sk = {n} OR pk = {k})",
    "\"pk\" = {k} AND \"sk\" = {n}", "pk = {k} AND sk = {n} AND v = 'w'", "pk = {k} AND sk > {n}",
    "pk = {k} AND sk = {n} OR pk = {k} AND sk = {n}", "v = {k}", "pk IN [{k}, {k}, {k}] AND sk = {n}",
]  # fmt: skip
_PROJECTIONS = ["*", "v", "pk, sk", "v, a.b", "g", "sk"]


class Generator:
    """Statements and requests naming the user's own key (``own``), the ``victims``' keys and keys that look
    like its own (a prefix, a case, a suffix), as literals or as parameters."""

    def __init__(self, rng: random.Random, table: str, own: str, victims: list[str]) -> None:
        self.rng = rng
        self.table = table
        self.own = own
        self.keys = [own] * 8 * len(victims) + victims  # mostly its own: allowed statements run too

    def _key(self, params: list[dict[str, Any]]) -> str:
        value = self.rng.choice(self.keys)
        if self.rng.random() < 0.4:
            params.append({"S": value})
            return "?"
        return "'" + value.replace("'", "''") + "'"

    def _number(self, params: list[dict[str, Any]]) -> str:
        value = str(self.rng.randint(1, 4))
        if self.rng.random() < 0.2:
            params.append({"N": value})
            return "?"
        return value

    def _where(self, params: list[dict[str, Any]]) -> str:
        shape = self.rng.choice(_SHAPES)
        out: list[str] = []
        pos = 0
        while True:  # fill the placeholders in order, so parameters line up with the ?s
            k, n = shape.find("{k}", pos), shape.find("{n}", pos)
            found = [i for i in (k, n) if i >= 0]
            if not found:
                out.append(shape[pos:])
                return "".join(out)
            at = min(found)
            out.append(shape[pos:at])
            out.append(self._key(params) if at == k else self._number(params))
            pos = at + 3

    def statement(self, kind: str | None = None) -> dict[str, Any]:
        """One statement entry (Statement, and Parameters when it has any ?)."""
        kind = kind or self.rng.choice(["SELECT", "SELECT", "UPDATE", "DELETE", "INSERT"])
        params: list[dict[str, Any]] = []
        source = f'"{self.table}"' + ('."byG"' if self.rng.random() < 0.15 else "")
        if kind == "SELECT":
            where = "" if self.rng.random() < 0.08 else " WHERE " + self._where(params)
            text = f"SELECT {self.rng.choice(_PROJECTIONS)} FROM {source}{where}"
        elif kind == "EXISTS":
            text = f"EXISTS(SELECT * FROM \"{self.table}\" WHERE {self._where(params)} AND v = 'w')"
        elif kind == "UPDATE":
            action = self.rng.choice(["SET v = 'w'", "SET a.b = 'w'", "REMOVE v", "SET v = 'w' SET g = 'x'"])
            returning = self.rng.choice(["", "", " RETURNING ALL OLD *", " RETURNING MODIFIED NEW *"])
            text = f'UPDATE "{self.table}" {action} WHERE {self._where(params)}{returning}'
        elif kind == "DELETE":
            returning = self.rng.choice(["", " RETURNING ALL OLD *"])
            text = f'DELETE FROM "{self.table}" WHERE {self._where(params)}{returning}'
        else:
            key = self._key(params)
            if self.rng.random() < 0.2:
                text = f'INSERT INTO "{self.table}" VALUE ?'
                params = [{"M": {"pk": {"S": self.rng.choice(self.keys)}, "sk": {"N": self._number([])},
                                 "v": {"S": "w"}}}]  # fmt: skip
            else:
                text = f"INSERT INTO \"{self.table}\" VALUE {{'pk': {key}, 'sk': {self._number(params)}, 'v': 'w'}}"
        entry: dict[str, Any] = {"Statement": text}
        if params:
            entry["Parameters"] = params
        return entry

    def request(self) -> tuple[str, dict[str, Any]]:
        """(operation, request) for ExecuteStatement, BatchExecuteStatement or ExecuteTransaction."""
        roll = self.rng.random()
        if roll < 0.55:
            request = self.statement()
            if self.rng.random() < 0.2:
                request["Limit"] = self.rng.randint(1, 3)
            return "ExecuteStatement", request
        reads = self.rng.random() < 0.5
        count = self.rng.randint(1, 4)
        if roll < 0.8:
            kinds = (
                ["SELECT"] * count if reads else [self.rng.choice(["UPDATE", "DELETE", "INSERT"]) for _ in "x" * count]
            )
            return "BatchExecuteStatement", {"Statements": [self.statement(kind) for kind in kinds]}
        if reads:
            kinds = ["SELECT"] * count
        else:
            kinds = [self.rng.choice(["UPDATE", "DELETE", "INSERT", "EXISTS"]) for _ in range(count)]
        return "ExecuteTransaction", {"TransactStatements": [self.statement(kind) for kind in kinds]}


def leaks(response: Any, own: str) -> list[str]:
    """What an answer shows of items that are not the user's: a SECRET value anywhere, an item (or a
    LastEvaluatedKey) whose ``pk`` is another's or whose ``sk`` is a victim's."""
    found: list[str] = []
    stack = [response]
    while stack:
        node = stack.pop()
        if isinstance(node, str) and SECRET in node:
            found.append(node)
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            stack.extend(node.values())
    items = list(response.get("Items") or [])
    items += [entry.get("Item") or {} for entry in response.get("Responses") or [] if isinstance(entry, dict)]
    items.append(response.get("LastEvaluatedKey") or {})
    for item in items:
        pk = item.get("pk")
        if pk is not None and pk != {"S": own}:
            found.append(f"pk {pk}")
        sk = item.get("sk")
        if sk is not None and int(sk.get("N", "0")) >= VICTIM_SK:
            found.append(f"sk {sk}")
    return found


def victim_items(keys: list[str]) -> list[dict[str, Any]]:
    """The items of other users: every value SECRET, sort keys from VICTIM_SK up."""
    items = []
    for number, key in enumerate(keys):
        for offset in (1, 2):
            items.append({
                "pk": {"S": key}, "sk": {"N": str(VICTIM_SK + offset)}, "v": {"S": f"{SECRET}-{number}"},
                "g": {"S": f"{SECRET}-g"}, "a": {"M": {"b": {"S": SECRET}}},
            })  # fmt: skip
    return items


def as_victim(item: dict[str, Any]) -> dict[str, Any]:
    """An item of a user once another user fuzzes: its key kept, every other value (and v, g, a.b) SECRET."""
    secret = {name: {"S": f"{SECRET}-{name}"} for name in item if name not in ("pk", "sk")}
    return {**secret, "pk": item["pk"], "sk": item["sk"], "v": {"S": SECRET}, "g": {"S": SECRET},
            "a": {"M": {"b": {"S": SECRET}}}}  # fmt: skip
