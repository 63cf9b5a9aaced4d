"""The partition page opened AFTER a hot-key load has ended (in a real browser against a real server): the heat map
and the top keys come from the history the server keeps (engine/capacity/history.py), over the window picked on
the page (5 min / 15 min / 1 h). The server runs with --manual-clock: the load's seconds and the quiet after it are
the test's to choose. The page is saved as a screenshot (console-partitions-after-load.png beside the others)."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver import Chrome
from selenium.webdriver.common.by import By
from selenium.webdriver.support.select import Select

from tests.e2e.chromium import browser_log, chromium
from tests.e2e.conftest import ADMIN, make_client, unique_name
from tests.e2e.server_process import ServerProcess, server_fixture
from tests.e2e.test_admin_endpoints import request
from tests.e2e.test_console_browser import SHOTS, open_page, shown, wait_text, waiter

server = server_fixture("--manual-clock")

LOAD_SECONDS = 30
QUIET_SECONDS = 10 * 60
TABLE = '.resource[data-index=""]'


@pytest.fixture(scope="module")
def browser(server: ServerProcess) -> Iterator[Chrome]:
    """The browser (closed before the server it polls), whose console must show no error of the page's own by
    the end of the tests."""
    with chromium() as driver:
        yield driver
        assert [e["message"] for e in browser_log(driver) if e["level"] == "SEVERE"] == []


def write(ddb: Any, table: str, key: str, count: int) -> int:
    """``count`` writes of partition key ``key`` (no retries); the number throttled."""
    throttled = 0
    for i in range(count):
        try:
            ddb.put_item(TableName=table, Item={"pk": {"S": key}, "n": {"N": str(i)}})
        except ClientError as error:
            assert error.response["Error"]["Code"] == "ProvisionedThroughputExceededException"
            throttled += 1
    return throttled


@pytest.fixture(scope="module")
def ended_load(server: ServerProcess) -> str:
    """A table of 4 partitions ("as if") with Contributor Insights on, 30 seconds of a hot key and a few warm
    ones, then ten quiet minutes: the table's name."""
    ddb = make_client(server.url)
    table = unique_name("after")
    ddb.create_table(
        TableName=table,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        ProvisionedThroughput={"ReadCapacityUnits": 20, "WriteCapacityUnits": 20},
    )
    ddb.update_contributor_insights(TableName=table, ContributorInsightsAction="ENABLE")
    change = {"as_if": 4, "spend_burst": True}
    assert request(server, "POST", f"/dynastore/partitions/{table}", change, ADMIN)[0] == 200
    throttled = 0
    for second in range(LOAD_SECONDS):
        assert request(server, "POST", "/dynastore/clock", {"advance": 1}, ADMIN)[0] == 200
        throttled += write(ddb, table, "hot", 8)  # the hot partition's share is 5 units a second
        write(ddb, table, f"warm-{second % 6}", 1)
    assert throttled > 0
    assert request(server, "POST", "/dynastore/clock", {"advance": QUIET_SECONDS}, ADMIN)[0] == 200
    return table


def hot_partition(server: ServerProcess, table: str) -> int:
    status, _, view = request(server, "GET", f"/dynastore/partitions/{table}")
    assert status == 200
    (hot,) = [p["partition"] for p in view["partitions"] if p["throttled"]["write"]]
    return int(hot)


def heat(browser: Chrome) -> tuple[int, int]:
    """Columns of the table's heat map that saw use, and those that saw throttling (read again when the page
    redrew the map between finding it and reading it: it polls the server every second)."""
    for _ in range(10):
        try:
            canvas = browser.find_element(By.CSS_SELECTOR, f"{TABLE} canvas.heat")
            used = int(canvas.get_attribute("data-used-columns") or 0)
            return used, int(canvas.get_attribute("data-throttled-columns") or 0)
        except StaleElementReferenceException:
            continue
    raise AssertionError("the heat map was redrawn on every read")


def full_page_screenshot(browser: Chrome, name: str) -> None:
    """The whole page, however tall (a window cannot grow past the screen): console-<name>.png."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    height = int(browser.execute_script("return document.documentElement.scrollHeight"))
    clip = {"x": 0, "y": 0, "width": 1400, "height": height, "scale": 1}
    shot = browser.execute_cdp_cmd("Page.captureScreenshot", {"captureBeyondViewport": True, "clip": clip})
    (SHOTS / f"console-{name}.png").write_bytes(base64.b64decode(shot["data"]))


def pick(browser: Chrome, window: str) -> None:
    Select(browser.find_element(By.ID, "history-window")).select_by_visible_text(window)


def test_the_page_opened_after_the_load_shows_it(browser: Chrome, server: ServerProcess, ended_load: str) -> None:
    hot = hot_partition(server, ended_load)
    open_page(browser, server, f"partitions/{ended_load}")
    summary = wait_text(browser, f"{TABLE} .heat-summary", "Throttled in the last 15 min: partition")
    assert summary.get_attribute("data-throttled-partitions") == str(hot)  # only the hot key's partition
    waiter(browser).until(lambda d: heat(d)[1] > 0)
    used, throttled_columns = heat(browser)
    assert used >= LOAD_SECONDS // 5 and throttled_columns >= LOAD_SECONDS // 5 - 1  # 5-second columns
    top_keys = f'{TABLE} .rule[data-rule="PKT"] tr[data-partition]'
    waiter(browser).until(lambda d: shown(d, top_keys))
    top = shown(browser, top_keys)
    assert {row["partition"] for row in top} == {str(hot)}  # warm keys there throttle too, no key elsewhere does
    assert '{"pk":"hot"}' in top[0]["text"]
    assert "(last 15 min)" in browser.find_element(By.CSS_SELECTOR, f'{TABLE} .rule[data-rule="PKT"]').text
    accessed = f'{TABLE} .rule[data-rule="PKC"] tr[data-partition]'
    assert '{"pk":"hot"}' in shown(browser, accessed)[0]["text"]
    browser.find_element(By.ID, "live").click()  # the page stands still while it is photographed
    full_page_screenshot(browser, "partitions-after-load")


def test_the_window_picked_decides_what_is_shown(browser: Chrome, server: ServerProcess, ended_load: str) -> None:
    open_page(browser, server, f"partitions/{ended_load}")
    wait_text(browser, f"{TABLE} .heat-summary", "Throttled in the last 15 min")
    pick(browser, "5 min")  # the load ended ten minutes ago
    wait_text(browser, f"{TABLE} .heat-summary", "No throttling in the last 5 min, and no use.")
    wait_text(browser, f'{TABLE} .rule[data-rule="PKT"]', "nothing in the last 5 min")
    waiter(browser).until(lambda d: heat(d) == (0, 0))
    pick(browser, "1 h")
    wait_text(browser, f"{TABLE} .heat-summary", "Throttled in the last 1 h: partition")
    waiter(browser).until(lambda d: shown(d, f'{TABLE} .rule[data-rule="PKT"] tr[data-partition]'))
    assert heat(browser)[1] > 0
