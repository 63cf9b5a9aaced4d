"""errors.validation_message: the one place a ValidationException is worded, in the new form or the older one."""

from __future__ import annotations

from dynastore.errors import OLD_FORM_REGIONS, ValidationException, Violation, validation_message


def _both(error: ValidationException) -> tuple[str | None, str | None]:
    return validation_message(error, old_form=False), validation_message(error, old_form=True)


def test_the_older_form_is_answered_in_two_regions() -> None:
    assert frozenset({"eu-south-2", "me-central-1"}) == OLD_FORM_REGIONS


def test_a_request_text_is_prefixed_in_the_new_form_only() -> None:
    error = ValidationException('Invalid UpdateExpression: The "ADD" section can only be used once in an update '
                                "expression;")  # fmt: skip
    assert error.message == (
        '1 validation error detected: Invalid UpdateExpression: The "ADD" section can only be used once in an update '
        "expression;"
    )
    assert (
        _both(error)[1] == 'Invalid UpdateExpression: The "ADD" section can only be used once in an update expression;'
    )


def test_a_bare_text_is_never_prefixed() -> None:
    error = ValidationException("The provided key element does not match the schema", bare=True)
    assert _both(error) == (
        "The provided key element does not match the schema",
        "The provided key element does not match the schema",
    )


def test_a_text_with_the_prefix_keeps_it_in_both_forms() -> None:
    text = "1 validation error detected: Empty attribute name"
    assert _both(ValidationException(text)) == (text, text)


def test_the_older_wording_of_a_text() -> None:
    error = ValidationException(
        "ExpressionAttributeValues can only be specified when using expressions",
        old_detail=(
            "ExpressionAttributeValues can only be specified when using expressions: ConditionExpression is null"
        ),
    )
    assert _both(error) == (
        "1 validation error detected: ExpressionAttributeValues can only be specified when using expressions",
        "ExpressionAttributeValues can only be specified when using expressions: ConditionExpression is null",
    )


def test_constraint_failures_first_by_rank_or_aggregated() -> None:
    enum = "Member must satisfy enum value set: [ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, UPDATED_NEW]"
    length = "Member must have length greater than or equal to 1"
    error = ValidationException(
        violations=(
            Violation("ReturnValues", "returnValues", enum, "'INVALID'", (3,)),
            Violation("TableName", "tableName", length, "''", (0,)),
        )
    )
    assert _both(error) == (
        f"1 validation error detected: Value at 'TableName' failed to satisfy constraint: {length}",
        f"2 validation errors detected: Value 'INVALID' at 'returnValues' failed to satisfy constraint: {enum}; "
        f"Value '' at 'tableName' failed to satisfy constraint: {length}",
    )


def test_in_old_form_rewords_the_message() -> None:
    error = ValidationException(violations=(Violation("Limit", "limit", "Member must be 1", "'0'", (0,)),))
    error.in_old_form()
    assert (
        error.to_body()["message"]
        == "1 validation error detected: Value '0' at 'limit' failed to satisfy constraint: Member must be 1"
    )
