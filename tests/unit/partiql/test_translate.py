"""Binding and translation: statements' values as AttributeValues, their WHERE clauses as the expression
language's resolved conditions (evaluated by the one evaluator), updates, and the key analysis of reads and
writes."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from dynastore.errors import ValidationException
from dynastore.expressions import ResolvedCondition, apply_update, evaluate
from dynastore.partiql import (
    ast,
    bind_value,
    key_equality,
    parse,
    partition_equality,
    plan_multi_read,
    plan_read,
    split_key,
    translate_condition,
    translate_update,
)


def where(text: str, params: list[dict[str, Any]] | None = None) -> Any:
    statement = parse(f"SELECT * FROM t WHERE {text}").statement
    assert isinstance(statement, ast.Select) and statement.where is not None
    return translate_condition(statement.where, params or [])


def matches(text: str, item: dict[str, Any], params: list[dict[str, Any]] | None = None) -> bool:
    return evaluate(ResolvedCondition(where(text, params)), item)


ITEM: dict[str, Any] = {
    "pk": {"S": "k"},
    "n": {"N": "5"},
    "s": {"S": "hello"},
    "ss": {"SS": ["a", "b"]},
    "z": {"NULL": True},
    "m": {"M": {"l": {"L": [{"N": "1"}, {"N": "2"}]}}},
}


class TestBinding:
    def test_literals_and_parameters(self) -> None:
        value = parse("INSERT INTO t VALUE {'a': ?, 'n': 1.50, 'l': [TRUE, NULL], 's': <<2, 1>>}").statement
        assert isinstance(value, ast.Insert)
        assert bind_value(value.item, [{"S": "p"}]) == {
            "M": {
                "a": {"S": "p"},
                "n": {"N": "1.5"},
                "l": {"L": [{"BOOL": True}, {"NULL": True}]},
                "s": {"NS": ["2", "1"]},
            }
        }

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            (
                "{'pk': 1e126}",
                "Number overflow. Attempting to store a number with magnitude larger than supported range"
                " under root.pk",
            ),
            (
                "{'l': [1, 1e-131]}",
                "Number underflow. Attempting to store a number with magnitude smaller than supported range"
                " under root.l[1]",
            ),
            (
                "{'s': <<'x', 'x'>>}",
                "One or more parameter values were invalid: Input collection [x, x] contains duplicates.",
            ),
            ("{'s': <<>>}", "Empty bags are not supported"),
            ("{'s': <<'x', 1>>}", "DynamoDB only supports either numbers or strings in bags"),
        ],
    )
    def test_refused_values(self, text: str, message: str) -> None:
        statement = parse(f"INSERT INTO t VALUE {text}").statement
        assert isinstance(statement, ast.Insert)
        with pytest.raises(ValidationException) as info:
            bind_value(statement.item, [])
        assert info.value.message == message


class TestConditions:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("n = 5", True),
            ("n <> 5", False),
            ("n > 4 AND n <= 5", True),
            ("n BETWEEN 6 AND 9", False),
            ("n NOT BETWEEN 6 AND 9", True),
            ("s IN ['x', 'hello']", True),
            ("s NOT IN ('x', 'hello')", False),
            ("missing_attr IS MISSING", True),
            ("s IS NOT MISSING", True),
            ("z IS NULL", True),
            ("s IS NULL", False),
            ("s IS NOT NULL", True),
            ("begins_with(s, 'he')", True),
            ("contains(ss, 'b')", True),
            ("attribute_type(m, 'M')", True),
            ("attribute_exists(m.l[1])", True),
            ("attribute_not_exists(m.l[2])", True),
            ("size(ss) = 2", True),
            ("m.l[0] = 1 OR n = 0", True),
            ("NOT (n = 5)", False),
            ("n = ?", True),
        ],
    )
    def test_evaluates_as_dynamodb(self, text: str, expected: bool) -> None:
        assert matches(text, ITEM, [{"N": "5"}]) is expected


class TestKeys:
    def test_split_key_takes_equalities_either_way_round(self) -> None:
        key, rest = split_key(where("'k' = pk AND sk = 3 AND a > 1"), ("pk", "sk")) or ({}, None)
        assert key == {"pk": {"S": "k"}, "sk": {"N": "3"}}
        assert rest is not None and not evaluate(ResolvedCondition(rest), {"a": {"N": "0"}})

    @pytest.mark.parametrize("text", ["pk = 'k'", "pk = 'k' OR sk = 3", "pk > 'k' AND sk = 3"])
    def test_split_key_needs_every_attribute(self, text: str) -> None:
        assert split_key(where(text), ("pk", "sk")) is None

    def test_query_with_sort_key_range(self) -> None:
        plan = plan_read(where("pk = 'a' AND 3 < sk AND x = 1"), ("pk", "S"), ("sk", "N"))
        assert plan.hash_values == [{"S": "a"}]
        assert (plan.range_op, plan.range_values) == (">", ({"N": "3"},))
        assert plan.filter is not None and evaluate(plan.filter, {"x": {"N": "1"}})

    def test_in_and_or_of_equalities_query_several_partitions(self) -> None:
        assert plan_read(where("pk IN ['a', 'b', 'a']"), ("pk", "S"), None).hash_values == [{"S": "a"}, {"S": "b"}]
        assert plan_read(where("pk = 'a' OR pk = 'c'"), ("pk", "S"), None).hash_values == [{"S": "a"}, {"S": "c"}]

    @pytest.mark.parametrize("text", ["pk > 'a'", "x = 1", "pk = 'a' OR x = 1", "pk = 1"])
    def test_anything_else_scans(self, text: str) -> None:
        plan = plan_read(where(text), ("pk", "S"), None)
        assert plan.hash_values is None and plan.filter is not None

    def test_begins_with_and_between_on_the_sort_key(self) -> None:
        plan = plan_read(where("pk = 'a' AND begins_with(sk, 'x')"), ("pk", "S"), ("sk", "S"))
        assert (plan.range_op, plan.filter) == ("begins_with", None)
        plan = plan_read(where("pk = 'a' AND sk BETWEEN 'b' AND 'c'"), ("pk", "S"), ("sk", "S"))
        assert plan.range_op == "BETWEEN"


class TestMultiAttributeKeys:
    HASH = (("t", "S"), ("r", "S"))
    RANGE = (("a", "S"), ("b", "S"), ("c", "N"))

    def plan(self, text: str) -> Any:
        return plan_multi_read(where(text), self.HASH, self.RANGE)

    def test_every_partition_attribute_makes_a_query_of_each_combination(self) -> None:
        plan = self.plan("r IN ['x', 'y'] AND t = 'w' AND z = 1")
        assert plan.partitions == [({"S": "w"}, {"S": "x"}), ({"S": "w"}, {"S": "y"})]
        assert (plan.range_op, plan.sort_prefix) == (None, ())
        assert plan.filter is not None and evaluate(plan.filter, {"z": {"N": "1"}})

    def test_leading_equalities_and_one_condition_narrow_the_partition(self) -> None:
        plan = self.plan("t = 'w' AND r = 'x' AND b = 'q' AND a = 'p' AND c > 3 AND c < 9")
        assert (plan.sort_prefix, plan.range_op, plan.range_values) == (({"S": "p"}, {"S": "q"}), ">", ({"N": "3"},))
        assert plan.filter is not None and [evaluate(plan.filter, {"c": {"N": n}}) for n in ("8", "9")] == [True, False]

    def test_equalities_only_end_with_an_equality_condition(self) -> None:
        plan = self.plan("t = 'w' AND r = 'x' AND a = 'p'")
        assert (plan.sort_prefix, plan.range_op, plan.range_values) == ((), "=", ({"S": "p"},))

    def test_a_gap_in_the_sort_attributes_stops_the_narrowing(self) -> None:
        plan = self.plan("t = 'w' AND r = 'x' AND begins_with(a, 'p') AND b = 'q'")
        assert (plan.sort_prefix, plan.range_op) == ((), "begins_with")
        plan = self.plan("t = 'w' AND r = 'x' AND b = 'q'")
        assert (plan.range_op, plan.filter is not None) == (None, True)

    @pytest.mark.parametrize("text", ["t = 'w'", "t = 'w' OR r = 'x'", "t = 'w' AND r = 1", "t = 'w' AND r <> 'x'"])
    def test_without_every_partition_attribute_it_scans(self, text: str) -> None:
        plan = self.plan(text)
        assert (plan.partitions, plan.hash_values) == (None, None)
        assert plan.filter is not None

    def test_too_many_combinations_scan(self, monkeypatch: pytest.MonkeyPatch) -> None:
        values = ", ".join(f"'{i}'" for i in range(11))
        assert len(self.plan(f"t IN [{values}] AND r IN ['a']").partitions) == 11

        def never(*lists: Any) -> Any:
            raise AssertionError("combinations built before they are counted")

        monkeypatch.setattr(itertools, "product", never)  # 4 x 100 values would be 10^8 tuples
        assert self.plan(f"t IN [{values}] AND r IN [{values}]").partitions is None


class TestUpdates:
    def test_set_functions_and_arithmetic(self) -> None:
        statement = parse(
            "UPDATE t SET n = n - 2 SET ss = set_add(ss, <<'c'>>) SET m.l = list_append(m.l, [3]) "
            "REMOVE s WHERE pk = 'k'"
        ).statement
        assert isinstance(statement, ast.Update)
        new, _ = apply_update(translate_update(statement.actions, []), ITEM, existed=True)
        assert new["n"] == {"N": "3"}
        assert new["ss"] == {"SS": ["a", "b", "c"]}
        assert new["m"]["M"]["l"]["L"][-1] == {"N": "3"}
        assert "s" not in new

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            ("t = set_add(ss, <<'x'>>)", "The first argument to SET_ADD must equal the assignment value at 1:18:7"),
            ("ss = set_add(ss, 'x')", "The second argument to SET_ADD must be a value with type SET at 1:27:2"),
            ("ss = set_add(ss)", "SET_ADD must have exactly two arguments at 1:19:7"),
            ("ss = set_delete(ss, ['x'])", "The second argument to SET_DELETE must be a value with type SET at 1:30:2"),
        ],
    )
    def test_set_function_refusals(self, text: str, message: str) -> None:
        statement = parse(f"UPDATE t SET {text} WHERE pk = 'k'").statement
        assert isinstance(statement, ast.Update)
        with pytest.raises(ValidationException) as info:
            translate_update(statement.actions, [])
        assert info.value.message == message


class TestKeyEquality:
    def test_the_whole_key_of_a_table_with_a_sort_key(self) -> None:
        def plan(text: str, params: list[dict[str, Any]]) -> Any:
            statement = parse(f"SELECT * FROM t WHERE {text}").statement
            assert isinstance(statement, ast.Select)
            return key_equality(statement.where, params, ("pk", "S"), ("sk", "N"))

        found = plan("pk = ? AND sk = ?", [{"S": "a"}, {"N": "1"}])
        assert (found.hash_values, found.range_op, found.range_values, found.filter) == (
            [{"S": "a"}],
            "=",
            ({"N": "1"},),
            None,
        )
        assert plan("2 = sk AND pk = 'b'", []).range_values == ({"N": "2"},)
        assert plan("pk = 'b'", []).range_op is None  # the partition: a Query
        for other in ("pk = 'a' AND sk = 'x'", "pk = 'a' AND sk > 1", "pk = 'a' AND x = 1", "pk = 'a' OR sk = 1"):
            assert plan(other, []) is None


class TestPartitionEquality:
    def test_the_key_lookup_shortcut(self) -> None:
        def plan(text: str, params: list[dict[str, Any]]) -> Any:
            statement = parse(f"SELECT * FROM t WHERE {text}").statement
            assert isinstance(statement, ast.Select)
            return partition_equality(statement.where, params, ("pk", "S"))

        found = plan("pk = ?", [{"S": "a"}])
        assert (found.hash_values, found.range_op, found.filter) == ([{"S": "a"}], None, None)
        assert plan("'b' = pk", []).hash_values == [{"S": "b"}]
        for other in ("pk = 1", "pk > 'a'", "x = 'a'", "pk = 'a' AND x = 1", "pk.x = 'a'"):
            assert plan(other, []) is None
