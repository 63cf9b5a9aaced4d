"""The console's table settings and small defects, in Chromium against a real server: no stray "null" on an
on-demand table's overview, a menu and a partition table usable at 800 px, "Sign in" only where the server verifies
signatures, a GSI's status and backfill progress while it is built, and what dynamodb-admin users look for:
billing mode, adding and deleting a GSI, Time to Live, deleting every item. Each page is saved as a screenshot in
the test's temporary directory.

The server runs with --manual-clock and a backfill of one item a second: a new GSI stays CREATING, its progress
visible, until the test moves the clock.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver import Chrome
from selenium.webdriver.common.by import By

from tests.e2e.chromium import browser_log, chromium, start_clean
from tests.e2e.conftest import make_client, unique_name
from tests.e2e.server_process import ServerProcess, server_fixture
from tests.e2e.test_admin_endpoints import request
from tests.e2e.test_console_browser import fill, open_page, shown, wait_for, wait_text, waiter

server = server_fixture("--manual-clock", "--gsi-backfill-chunk", "1", "--gsi-backfill-interval", "1")
NARROW = (800, 900)
WIDE = (1400, 1000)


@pytest.fixture(scope="module")
def chrome() -> Iterator[Chrome]:
    with chromium() as driver:
        yield driver


@pytest.fixture
def browser(chrome: Chrome) -> Iterator[Chrome]:
    """The browser at its usual size, whose console shows no error of the page's own by the end of the test."""
    chrome.set_window_size(*WIDE)
    start_clean(chrome)
    yield chrome
    errors = [entry["message"] for entry in browser_log(chrome) if entry["level"] == "SEVERE"]
    assert [e for e in errors if "status of 400" not in e] == []


@pytest.fixture(scope="module")
def ddb(server: ServerProcess) -> Any:
    return make_client(server.url)


def snap(browser: Chrome, directory: Path, name: str) -> None:
    browser.save_screenshot(str(directory / f"{name}.png"))
    assert (directory / f"{name}.png").stat().st_size > 0


def table(ddb: Any, billing: str = "PAY_PER_REQUEST", items: int = 0) -> str:
    name = unique_name()
    units = {"ProvisionedThroughput": {"ReadCapacityUnits": 50, "WriteCapacityUnits": 50}}
    ddb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "N"}],
        BillingMode=billing,
        **(units if billing == "PROVISIONED" else {}),
    )  # fmt: skip
    for i in range(items):
        ddb.put_item(TableName=name, Item={"pk": {"S": f"p{i % 7}"}, "sk": {"N": str(i)}, "g": {"S": f"g{i % 3}"}})
    return name


def overview(browser: Chrome, server: ServerProcess, name: str) -> None:
    open_page(browser, server, f"table/{name}")
    wait_for(browser, "#describe")


def text_of(browser: Chrome, css: str) -> str:
    found: str = browser.execute_script("return document.querySelector(arguments[0])?.innerText ?? ''", css)
    return found


def test_an_on_demand_overview_shows_no_null_and_counts_in_words(
    browser: Chrome, server: ServerProcess, ddb: Any, tmp_path: Path
) -> None:
    name = table(ddb, items=1)
    overview(browser, server, name)
    main = text_of(browser, "main")
    assert "null" not in main.replace('"null"', "")
    assert "on demand · 1 item · " in main
    snap(browser, tmp_path, "on-demand-overview")


def test_at_800_px_the_menu_keeps_one_line_and_the_partition_table_scrolls_to_its_last_column(
    browser: Chrome, server: ServerProcess, ddb: Any, tmp_path: Path
) -> None:
    name = table(ddb)
    browser.set_window_size(*NARROW)
    open_page(browser, server, f"partitions/{name}")
    wait_for(browser, "table.partitions th")
    tops = [link["top"] for link in rects(browser, "header nav a, header .brand")]
    assert max(tops) - min(tops) < 8, tops  # the menu does not wrap: one line (a second would be 20 px lower)
    assert all(link["right"] <= NARROW[0] for link in rects(browser, "header nav a"))
    snap(browser, tmp_path, "partitions-800px")
    scrolled = browser.execute_script(
        "const box = document.querySelector('table.partitions').parentElement;"
        "box.scrollLeft = box.scrollWidth;"
        "const last = [...box.querySelectorAll('th')].pop().getBoundingClientRect();"
        "const page = document.documentElement;"
        "return {overflow: getComputedStyle(box).overflowX, right: last.right, width: page.clientWidth,"
        " page: page.scrollWidth}"
    )
    assert scrolled["overflow"] == "auto"
    assert scrolled["right"] <= scrolled["width"]  # the last column, "borrowed R/W", can be reached
    assert scrolled["page"] <= scrolled["width"]  # and the page itself does not scroll sideways
    snap(browser, tmp_path, "partitions-800px-scrolled")


def rects(browser: Chrome, css: str) -> list[dict[str, float]]:
    found: list[dict[str, float]] = browser.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map((e) => e.getBoundingClientRect().toJSON())", css
    )
    assert found != []
    return found


def test_without_authentication_there_is_no_sign_in(browser: Chrome, server: ServerProcess, tmp_path: Path) -> None:
    status, _, body = request(server, "GET", "/console/server.json")
    assert (status, body) == (200, {"verifies_signatures": False, "clustered": False})
    open_page(browser, server, "tables")
    wait_for(browser, "#table-list")
    assert [link["text"] for link in shown(browser, "header nav > a")] == ["Tables", "Backups", "Triggers", "Exports"]
    open_page(browser, server, "signin")
    wait_text(browser, "#no-signin", "This server does not verify signatures")
    assert browser.find_elements(By.CSS_SELECTOR, "form.signin") == []
    snap(browser, tmp_path, "signin-without-authentication")


ADMIN = {"aws_access_key_id": "AKIASETTINGSADMIN001", "aws_secret_access_key": "settings-admin-secret"}


def test_with_authentication_sign_in_is_offered(chrome: Chrome, tmp_path: Path) -> None:
    secured = ServerProcess(
        "--auth", "sigv4",
        env={"DYNASTORE_ADMIN_ACCESS_KEY_ID": ADMIN["aws_access_key_id"],
             "DYNASTORE_ADMIN_SECRET_ACCESS_KEY": ADMIN["aws_secret_access_key"]},
    )  # fmt: skip
    try:
        status, _, body = request(secured, "GET", "/console/server.json")
        assert (status, body) == (200, {"verifies_signatures": True, "clustered": False})  # unsigned, as the files are
        open_page(chrome, secured, "tables")
        form = wait_for(chrome, "form.signin")
        assert "This server verifies signatures (--auth sigv4)" in form.text
        assert "Sign in" in [link["text"] for link in shown(chrome, "header nav > a")]
        snap(chrome, tmp_path, "signin-with-authentication")
        browser_log(chrome)  # the refusals before signing in are expected
    finally:
        secured.stop()


def advance(server: ServerProcess, seconds: float) -> None:
    server.admin("/dynastore/clock", {"advance": seconds})


def built(server: ServerProcess, ddb: Any, name: str) -> bool:
    """Move the clock a backfill step on; True once the table's GSI is ACTIVE."""
    advance(server, 1)
    return bool(ddb.describe_table(TableName=name)["Table"]["GlobalSecondaryIndexes"][0]["IndexStatus"] == "ACTIVE")


def test_a_gsi_added_shows_its_backfill_then_is_deleted(
    browser: Chrome, server: ServerProcess, ddb: Any, tmp_path: Path
) -> None:
    name = table(ddb, billing="PROVISIONED", items=6)
    overview(browser, server, name)
    wait_text(browser, "#gsi-list", "No global secondary index.")
    form = wait_for(browser, "#add-index")
    fill(form, "IndexName", "by_g")
    fill(form, "HashName", "g")
    form.find_element(By.ID, "add-index-submit").click()
    wait_text(browser, '#gsi-list tr[data-index="by_g"] .index-status', "CREATING")
    gsi = ddb.describe_table(TableName=name)["Table"]["GlobalSecondaryIndexes"][0]
    assert gsi["ProvisionedThroughput"]["ReadCapacityUnits"] == 5  # the form's default units
    advance(server, 1)  # one item a second of the server's clock: part of the table is copied
    cell = '#gsi-list tr[data-index="by_g"]'
    waiter(browser).until(
        lambda _: re.fullmatch(r"backfilling: [1-5] of about 6 items", text_of(browser, f"{cell} .backfill-text"))
    )
    share = float(browser.execute_script("return document.querySelector(arguments[0]).value", f"{cell} progress"))
    assert 0 < share < 1
    snap(browser, tmp_path, "gsi-backfilling")
    open_page(browser, server, "tables")
    wait_text(browser, f'tr[data-table="{name}"]', "by_g CREATING")  # the table list shows it too
    overview(browser, server, name)
    waiter(browser).until(lambda _: built(server, ddb, name))  # the page redraws itself as the backfill ends
    wait_text(browser, '#gsi-list tr[data-index="by_g"] .index-status', "ACTIVE")
    browser.find_element(By.CSS_SELECTOR, '#gsi-list tr[data-index="by_g"] .delete-index').click()
    browser.switch_to.alert.accept()
    waiter(browser).until(lambda _: "GlobalSecondaryIndexes" not in ddb.describe_table(TableName=name)["Table"])
    wait_text(browser, "#gsi-list", "No global secondary index.")
    snap(browser, tmp_path, "gsi-deleted")


def test_billing_mode_switched_both_ways(browser: Chrome, server: ServerProcess, ddb: Any, tmp_path: Path) -> None:
    name = table(ddb)
    overview(browser, server, name)
    form = wait_for(browser, "#billing-mode")
    fill(form, "RCU", "7")
    fill(form, "WCU", "3")
    form.find_element(By.ID, "switch-billing").click()
    wait_text(browser, "#billing-now", "provisioned (PROVISIONED)")
    described = ddb.describe_table(TableName=name)["Table"]
    assert described["BillingModeSummary"]["BillingMode"] == "PROVISIONED"
    assert (
        described["ProvisionedThroughput"]["ReadCapacityUnits"],
        described["ProvisionedThroughput"]["WriteCapacityUnits"],
    ) == (7, 3)
    snap(browser, tmp_path, "billing-provisioned")
    wait_for(browser, "#switch-billing").click()
    wait_text(browser, "#billing-now", "on demand (PAY_PER_REQUEST)")
    assert ddb.describe_table(TableName=name)["Table"]["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"


def test_time_to_live_enabled_and_disabled(browser: Chrome, server: ServerProcess, ddb: Any, tmp_path: Path) -> None:
    name = table(ddb)
    overview(browser, server, name)
    wait_text(browser, "#ttl-status", "DISABLED")
    fill(wait_for(browser, "#ttl-form"), "AttributeName", "expires_at")
    browser.find_element(By.ID, "ttl-submit").click()
    wait_text(browser, "#ttl-status", "ENABLED")
    described = ddb.describe_time_to_live(TableName=name)["TimeToLiveDescription"]
    assert described == {"TimeToLiveStatus": "ENABLED", "AttributeName": "expires_at"}
    snap(browser, tmp_path, "ttl-enabled")
    wait_for(browser, "#ttl-submit").click()
    wait_text(browser, "#ttl-status", "DISABLED")
    assert ddb.describe_time_to_live(TableName=name)["TimeToLiveDescription"]["TimeToLiveStatus"] == "DISABLED"


def test_delete_all_items_after_typing_the_name(
    browser: Chrome, server: ServerProcess, ddb: Any, tmp_path: Path
) -> None:
    name = table(ddb, items=60)
    overview(browser, server, name)
    wait_for(browser, "#delete-items").click()  # not confirmed: nothing goes
    wait_text(browser, "#table-status .error", "Type the table's name to delete all its items.")
    assert ddb.scan(TableName=name, Select="COUNT")["Count"] == 60
    browser.find_element(By.CSS_SELECTOR, '[name="confirm-items"]').send_keys(name)
    browser.find_element(By.ID, "delete-items").click()
    wait_text(browser, "#delete-items-progress", "Deleted 60 items.")
    assert ddb.scan(TableName=name, Select="COUNT")["Count"] == 0
    assert ddb.describe_table(TableName=name)["Table"]["TableStatus"] == "ACTIVE"  # the table stays
    snap(browser, tmp_path, "all-items-deleted")


def test_a_replica_added_in_another_region_then_removed(
    browser: Chrome, server: ServerProcess, ddb: Any, tmp_path: Path
) -> None:
    name = unique_name()
    ddb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    )
    overview(browser, server, name)
    wait_text(browser, "#replica-list", "No replica in another region.")
    fill(wait_for(browser, "#add-replica"), "RegionName", "us-west-2")
    browser.find_element(By.ID, "add-replica-submit").click()
    wait_for(browser, '#replica-list tr[data-region="us-west-2"]')  # the page drawn anew: CREATING, or ACTIVE already
    waiter(browser).until(lambda _: replica_status(ddb, name) == "ACTIVE")
    overview(browser, server, name)
    wait_text(browser, '#replica-list tr[data-region="us-west-2"] .replica-status', "ACTIVE")
    assert "Global table version 2019.11.21." in text_of(browser, "#replicas")
    snap(browser, tmp_path, "replica-active")
    browser.find_element(By.CSS_SELECTOR, '#replica-list tr[data-region="us-west-2"] .remove-replica').click()
    browser.switch_to.alert.accept()
    waiter(browser).until(lambda _: replica_status(ddb, name) in ("DELETING", None))
    # A table without the stream a replica needs says so instead of offering the form.
    plain = table(ddb)
    overview(browser, server, plain)
    wait_text(browser, "#add-replica", "A replica needs the table's stream on with NEW_AND_OLD_IMAGES.")


def replica_status(ddb: Any, name: str) -> str | None:
    replicas = ddb.describe_table(TableName=name)["Table"].get("Replicas", [])
    return str(replicas[0]["ReplicaStatus"]) if replicas else None
