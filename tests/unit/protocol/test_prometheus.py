"""protocol/prometheus.py: the text exposition format, version 0.0.4."""

from __future__ import annotations

import pytest

from dynastore.protocol.prometheus import CONTENT_TYPE, Histogram, Page, escape_help, escape_label, number


def test_the_content_type_names_the_format_version() -> None:
    assert CONTENT_TYPE == "text/plain; version=0.0.4; charset=utf-8"


def test_label_values_escape_backslash_quote_and_newline() -> None:
    assert escape_label('a\\b"c\nd') == 'a\\\\b\\"c\\nd'
    assert escape_label("plain-name_1.x") == "plain-name_1.x"


def test_help_texts_escape_backslash_and_newline_but_not_quotes() -> None:
    assert escape_help('say "x"\\\nnext') == 'say "x"\\\\\\nnext'


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0, "0"),
        (7, "7"),
        (2.0, "2"),
        (0.5, "0.5"),
        (0.00025, "0.00025"),
        (float("inf"), "+Inf"),
        (float("-inf"), "-Inf"),
        (float("nan"), "NaN"),
    ],
)
def test_numbers_are_written_as_prometheus_reads_them(value: float, text: str) -> None:
    assert number(value) == text


def test_a_histogram_counts_each_observation_in_the_first_bucket_that_holds_it() -> None:
    h = Histogram((0.1, 1.0, 10.0))
    for value in (0.05, 0.1, 0.5, 1.0, 3.0, 50.0):
        h.observe(value)
    assert h.cumulative() == [("0.1", 2), ("1", 4), ("10", 5), ("+Inf", 6)]  # bounds are inclusive
    assert h.count == 6
    assert h.sum == pytest.approx(54.65)


def test_histogram_bounds_must_increase() -> None:
    with pytest.raises(ValueError, match="increasing"):
        Histogram((1.0, 0.5))
    with pytest.raises(ValueError, match="increasing"):
        Histogram(())


def test_a_page_has_help_and_type_lines_then_samples_with_escaped_labels() -> None:
    page = Page()
    page.family("x_total", "counter", "What x counts.\nSecond line.")
    page.sample("x_total", 3, ("table", "index"), ('my"table', ""))
    page.family("y", "gauge", "A gauge without labels.")
    page.sample("y", 1.5)
    assert page.bytes() == (
        b"# HELP x_total What x counts.\\nSecond line.\n"
        b"# TYPE x_total counter\n"
        b'x_total{table="my\\"table",index=""} 3\n'
        b"# HELP y A gauge without labels.\n"
        b"# TYPE y gauge\n"
        b"y 1.5\n"
    )


def test_a_histogram_is_written_as_cumulative_buckets_sum_and_count() -> None:
    h = Histogram((0.5, 1.0))
    h.observe(0.25)
    h.observe(2.0)
    page = Page()
    page.family("d_seconds", "histogram", "Durations.")
    page.histogram("d_seconds", h, ("operation",), ("GetItem",))
    assert page.bytes().decode().splitlines()[2:] == [
        'd_seconds_bucket{operation="GetItem",le="0.5"} 1',
        'd_seconds_bucket{operation="GetItem",le="1"} 1',
        'd_seconds_bucket{operation="GetItem",le="+Inf"} 2',
        'd_seconds_sum{operation="GetItem"} 2.25',
        'd_seconds_count{operation="GetItem"} 2',
    ]
