"""The words of DynamoDB's PartiQL dialect: keywords, operator words, type names and the functions each clause
may call, with their operand counts."""

from __future__ import annotations

from typing import Final

__all__ = [
    "COMPARISONS",
    "CONDITION_FUNCTIONS",
    "KEYWORDS",
    "OPERAND_FUNCTIONS",
    "OPERATOR_WORDS",
    "OTHER_TYPE_NAMES",
    "TYPE_NAMES",
    "UPDATE_FUNCTIONS",
]

# Words that are never a bare name (double-quote them to use them as one).
KEYWORDS: Final = frozenset(
    {
        "ALL", "AND", "AS", "ASC", "BETWEEN", "BY", "CASE", "CAST", "CREATE", "DELETE", "DESC", "DISTINCT",
        "DROP", "ELSE", "END", "EXISTS", "FALSE", "FROM", "GROUP", "HAVING", "IN", "INSERT", "INTO", "IS",
        "JOIN", "LIKE", "LIMIT", "MISSING", "NOT", "NULL", "OFFSET", "ON", "OR", "ORDER", "PAD", "REMOVE",
        "RETURNING", "SELECT", "SET", "THEN", "TRUE", "UNION", "UPDATE", "VALUE", "VALUES", "WHEN", "WHERE",
    }
)  # fmt: skip
OPERATOR_WORDS: Final = frozenset({"AND", "OR", "IS", "IN", "LIKE", "BETWEEN", "NOT"})
COMPARISONS: Final = frozenset({"=", "<>", "!=", "<", "<=", ">", ">="})
# Functions of a WHERE clause and their operand counts; the first operand of each must be a document path.
CONDITION_FUNCTIONS: Final = {
    "attribute_exists": 1,
    "attribute_not_exists": 1,
    "attribute_type": 2,
    "begins_with": 2,
    "contains": 2,
}
OPERAND_FUNCTIONS: Final = {"size": 1}
UPDATE_FUNCTIONS: Final = frozenset({"list_append", "set_add", "set_delete"})
TYPE_NAMES: Final = frozenset({"MISSING", "NULL"})
OTHER_TYPE_NAMES: Final = frozenset(
    {"INT", "INT4", "INT8", "INTEGER", "BOOL", "BOOLEAN", "STRING", "VARCHAR", "CHAR", "DECIMAL", "FLOAT",
     "DOUBLE", "REAL", "TIMESTAMP", "LIST", "BAG", "STRUCT", "TUPLE", "SEXP", "BLOB", "CLOB", "SYMBOL"}
)  # fmt: skip
