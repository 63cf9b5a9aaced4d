"""A short seeded fuzz run in the normal suite (the long run is ``python -m tests.fuzz``, docs/operations.md):
every answer 200 or 400, the server still serving, nothing invalid stored."""

from __future__ import annotations

import random

from tests.e2e.conftest import Signer
from tests.fuzz import runner
from tests.fuzz.tables import fuzz_tables


def test_short_fuzz_run(endpoint: str, signer: Signer) -> None:
    report = runner.run(endpoint, 2000, seed=20261123, sign=signer)
    assert report.failures == []
    assert set(report.statuses) <= {200, 400}
    assert report.statuses[200] > 100  # the run reaches the engine, not only the validators
    assert report.sent == 2000


def test_stored_item_checks_find_what_must_never_be_stored() -> None:
    """The end-of-run check would notice an invalid item, were one ever stored."""
    table = fuzz_tables("t")[3]
    good = {"pk": {"S": "a"}, "sk": {"S": "b"}, "n": {"N": "1.5"}, "m": {"M": {"x": {"NS": ["1", "2"]}}}}
    assert runner.item_problems(table, good) == []
    bad = {
        "pk": {"S": "a"},
        "sk": {"S": "b"},
        "": {"S": "x"},
        "n": {"N": "1e200"},
        "l": {"L": [{"N": "1.50"}]},
        "g": {"S": "x" * 3000},
        "s": {"SS": []},
    }
    problems = runner.item_problems(table, bad)
    assert len(problems) == 5, problems


def test_requests_are_reproducible() -> None:
    tables = fuzz_tables("t")
    first = [runner.request(random.Random(7), tables) for _ in range(1)]
    again = [runner.request(random.Random(7), tables) for _ in range(1)]
    assert first == again
    operations = {runner.request(random.Random(seed), tables)[0] for seed in range(200)}
    assert operations == set(runner._OPERATIONS)
