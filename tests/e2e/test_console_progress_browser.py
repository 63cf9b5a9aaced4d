"""The console's bars of long work, in Chromium against a real server: a GSI being built shows, on the table list,
its state, a bar and the server's estimate ("Backfilling 50% (~5 s)"), and the "Running now" card lists it until
the backfill ends. The server runs with --manual-clock and a backfill of one item per 5 s of its clock, so the
share and the estimate shown are exact. The page is saved as a screenshot in the test's temporary directory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium.webdriver import Chrome

from tests.e2e.chromium import browser_log, chromium
from tests.e2e.server_process import ServerProcess, server_fixture
from tests.e2e.test_console_browser import open_page, wait_for, wait_text, waiter
from tests.e2e.test_progress import (
    BACKFILL_INTERVAL,
    add_index,
    backfill,
    eventually,
    finish,
    next_chunk,
    table_with_items,
)

server = server_fixture(
    "--manual-clock", "--gsi-backfill-chunk", "1", "--gsi-backfill-interval", str(BACKFILL_INTERVAL)
)


@pytest.fixture(scope="module")
def browser(server: ServerProcess) -> Iterator[Chrome]:
    """Chromium, whose console shows no error of the page's own by the end (closed before the server it shows)."""
    with chromium() as driver:
        driver.set_window_size(1400, 1000)
        yield driver
        errors = [entry["message"] for entry in browser_log(driver) if entry["level"] == "SEVERE"]
        assert errors == []


def test_the_table_list_shows_a_backfill_with_its_bar_and_estimate(
    browser: Chrome, server: ServerProcess, tmp_path: Path
) -> None:
    table = table_with_items(server, 4)
    add_index(server, table)
    eventually(lambda: backfill(server, table), "the first chunk")
    server.advance(BACKFILL_INTERVAL)
    next_chunk(server, table, 1)  # 2 of 4 items in 5 s of the clock: 5 s left
    open_page(browser, server, "tables")
    row = f'tr[data-table="{table}"]'
    wait_text(browser, row, "byg CREATING Backfilling 50% (~5 s)")
    bar = wait_for(browser, f"{row} progress.job-bar")
    assert (bar.get_attribute("value"), bar.get_attribute("title")) == ("50", "2 items of 4 items")
    wait_text(browser, "#jobs", "Running now")
    assert wait_for(browser, "#jobs .job-row").text == f"{table} byg Backfilling 50% (~5 s)"
    browser.save_screenshot(str(tmp_path / "backfill-on-the-table-list.png"))
    finish(server, table)
    assert backfill(server, table) is None
    waiter(browser).until(lambda d: d.execute_script("return document.querySelector('#jobs').hidden"))
    assert browser.find_elements("css selector", f"{row} progress.job-bar") == []
