"""The web console (/console) in a real browser against a real server: a table created through the page, items
written, queried and edited through it, the partition page showing the one partition a hot key throttles (after
"as if 4 partitions" and "spend burst credit", both through the page), the stream's records, and DynamoDB's errors
shown as the API gives them. Each page is saved as a screenshot (DYNASTORE_CONSOLE_SCREENSHOTS, default
build/console-screenshots; docs/images keeps a few).

The server runs with --manual-clock: no capacity refills while the test runs, so the throttles are certain.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver import Chrome
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.select import Select
from selenium.webdriver.support.wait import WebDriverWait

from tests.e2e import chromium as chromium_module
from tests.e2e.chromium import browser_log, chromium, start_clean
from tests.e2e.conftest import ADMIN, BOTO_CONFIG, make_client, unique_name
from tests.e2e.server_process import ServerProcess, server_fixture
from tests.e2e.test_admin_endpoints import request

ROOT = Path(__file__).resolve().parents[2]
SHOTS = Path(os.environ.get("DYNASTORE_CONSOLE_SCREENSHOTS", ROOT / "build" / "console-screenshots"))
TRIGGERED_TABLE = "console_triggered"
FAILING_TRIGGER = {"Name": "audit", "Table": TRIGGERED_TABLE, "Command": "false", "StartingPosition": "TRIM_HORIZON"}
WAIT_SECONDS = 30  # an upper bound for the page to catch up, never a measured time


server = server_fixture("--manual-clock", "--trigger", json.dumps(FAILING_TRIGGER))


@pytest.fixture(scope="module")
def chrome() -> Iterator[Chrome]:
    with chromium() as driver:
        yield driver


@pytest.fixture
def browser(chrome: Chrome) -> Iterator[Chrome]:
    """The browser, whose console must show no error of the page's own (a script error, a blocked resource or a
    request refused with a status the page did not expect) by the end of the test."""
    start_clean(chrome)
    yield chrome
    errors = [entry["message"] for entry in browser_log(chrome) if entry["level"] == "SEVERE"]
    # The requests the test makes fail on purpose answer 400; anything else is a fault of the page.
    assert [e for e in errors if "status of 400" not in e] == []


@pytest.fixture(scope="module")
def ddb(server: ServerProcess) -> Any:
    return make_client(server.url)


def open_page(browser: Chrome, server: ServerProcess, page: str) -> None:
    browser.get(f"{server.url}/console/#/{page}")
    browser.refresh()  # a new hash on the same document would not reload it: start each page afresh


def waiter(browser: Chrome) -> WebDriverWait[Chrome]:
    # The partition page draws itself anew every second: an element found a moment ago may be gone.
    return WebDriverWait(browser, WAIT_SECONDS, ignored_exceptions=(StaleElementReferenceException,))


def wait_for(browser: Chrome, css: str) -> WebElement:
    found: WebElement = waiter(browser).until(lambda d: d.find_element(By.CSS_SELECTOR, css))
    return found


def shown(browser: Chrome, css: str) -> list[dict[str, str]]:
    """Text, class and data-partition of every element ``css`` selects, read in one step of the page."""
    script = (
        "return [...document.querySelectorAll(arguments[0])].map((e) => "
        "({text: e.textContent, class: e.className, partition: e.getAttribute('data-partition')}))"
    )
    found: list[dict[str, str]] = browser.execute_script(script, css)
    return found


def polls(browser: Chrome) -> int:
    return int(browser.execute_script("return document.getElementById('partition-summary').dataset.polls || 0"))


def wait_for_polls(browser: Chrome, count: int) -> None:
    waiter(browser).until(lambda d: polls(d) >= count)


def click_when(browser: Chrome, css: str, text: str) -> None:
    def clicked(d: Any) -> bool:
        for element in d.find_elements(By.CSS_SELECTOR, css):
            if text in element.text:
                element.click()
                return True
        return False

    waiter(browser).until(clicked)


def wait_text(browser: Chrome, css: str, text: str) -> WebElement:
    def with_text(d: Any) -> WebElement | bool:
        elements = [e for e in d.find_elements(By.CSS_SELECTOR, css) if text in e.text]
        return elements[0] if elements else False

    found = waiter(browser).until(with_text)
    assert isinstance(found, WebElement)
    return found


def fill(scope: WebElement, name: str, value: str) -> None:
    field = scope.find_element(By.CSS_SELECTOR, f'[name="{name}"]')
    if field.tag_name == "select":
        Select(field).select_by_value(value)
    else:
        field.clear()
        field.send_keys(value)


def screenshot(browser: Chrome, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    height = int(browser.execute_script("return document.documentElement.scrollHeight"))
    browser.set_window_size(1400, min(max(height, 700), 2400))
    browser.execute_script("window.scrollTo(0, 0)")
    browser.save_screenshot(str(SHOTS / f"console-{name}.png"))
    browser.set_window_size(1400, 1000)


def set_json(browser: Chrome, css: str, value: Any) -> None:
    area = browser.find_element(By.CSS_SELECTOR, css)
    browser.execute_script("arguments[0].value = arguments[1]", area, json.dumps(value))


def provisioned_table(ddb: Any, units: int, stream: bool = False, name: str | None = None) -> str:
    name = name or unique_name("console")
    extra: dict[str, Any] = {"StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}}
    ddb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "N"},
        ],
        ProvisionedThroughput={"ReadCapacityUnits": units, "WriteCapacityUnits": units},
        **(extra if stream else {}),
    )
    return name


def test_create_a_table_and_see_dynamodbs_error_for_a_second_one(
    browser: Chrome, server: ServerProcess, ddb: Any
) -> None:
    name = unique_name("console")
    open_page(browser, server, "tables")
    form = wait_for(browser, "#create-table")
    fill(form, "TableName", name)
    fill(form, "HashName", "pk")
    fill(form, "RangeName", "sk")
    fill(form, "RangeType", "N")
    fill(form, "BillingMode", "PROVISIONED")
    fill(form, "Stream", "NEW_AND_OLD_IMAGES")
    form.find_element(By.XPATH, ".//button[text()='Add GSI']").click()
    gsi = form.find_element(By.CSS_SELECTOR, ".index-row")
    fill(gsi, "IndexName", "byStatus")
    fill(gsi, "HashName", "status")
    fill(gsi, "Projection", "KEYS_ONLY")
    form.find_element(By.XPATH, ".//button[text()='Add LSI']").click()
    lsi = form.find_elements(By.CSS_SELECTOR, ".index-row")[1]
    fill(lsi, "IndexName", "byCreated")
    fill(lsi, "RangeName", "created")
    fill(lsi, "RangeType", "N")
    form.find_element(By.ID, "create-table-submit").click()
    wait_text(browser, "#create-table .ok", f"Created {name}.")
    wait_for(browser, f'tr[data-table="{name}"]')

    table = ddb.describe_table(TableName=name)["Table"]
    assert table["KeySchema"] == [
        {"AttributeName": "pk", "KeyType": "HASH"},
        {"AttributeName": "sk", "KeyType": "RANGE"},
    ]
    assert table["ProvisionedThroughput"]["ReadCapacityUnits"] == 5
    assert table["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
    [index] = table["GlobalSecondaryIndexes"]
    assert (index["IndexName"], index["Projection"]) == ("byStatus", {"ProjectionType": "KEYS_ONLY"})
    [local] = table["LocalSecondaryIndexes"]
    assert local["KeySchema"] == [
        {"AttributeName": "pk", "KeyType": "HASH"},
        {"AttributeName": "created", "KeyType": "RANGE"},
    ]
    assert {"AttributeName": "created", "AttributeType": "N"} in table["AttributeDefinitions"]
    screenshot(browser, "tables")

    form.find_element(By.ID, "create-table-submit").click()  # the same table again
    error = wait_for(browser, "#create-table .error")
    with pytest.raises(ClientError) as raised:
        ddb.create_table(**_same_request(name))
    assert error.find_element(By.CSS_SELECTOR, ".error-type").text == raised.value.response["Error"]["Code"]
    assert error.find_element(By.CSS_SELECTOR, ".error-message").text == raised.value.response["Error"]["Message"]
    assert raised.value.response["Error"]["Code"] == "ResourceInUseException"


def test_a_multi_attribute_gsi_created_shown_and_queried(browser: Chrome, server: ServerProcess, ddb: Any) -> None:
    name = unique_name("console")
    open_page(browser, server, "tables")
    form = wait_for(browser, "#create-table")
    fill(form, "TableName", name)
    fill(form, "HashName", "id")
    form.find_element(By.XPATH, ".//button[text()='Add GSI']").click()
    gsi = form.find_element(By.CSS_SELECTOR, ".index-row")
    fill(gsi, "IndexName", "byPlace")
    fill(gsi, "HashName", "country, city")
    fill(gsi, "RangeName", "year:N, month:N, day")
    fill(gsi, "RangeType", "S")
    form.find_element(By.ID, "create-table-submit").click()
    wait_text(browser, "#create-table .ok", f"Created {name}.")
    table = ddb.describe_table(TableName=name)["Table"]
    assert table["GlobalSecondaryIndexes"][0]["KeySchema"] == [
        {"AttributeName": "country", "KeyType": "HASH"},
        {"AttributeName": "city", "KeyType": "HASH"},
        {"AttributeName": "year", "KeyType": "RANGE"},
        {"AttributeName": "month", "KeyType": "RANGE"},
        {"AttributeName": "day", "KeyType": "RANGE"},
    ]
    assert {"AttributeName": "month", "AttributeType": "N"} in table["AttributeDefinitions"]
    assert {"AttributeName": "day", "AttributeType": "S"} in table["AttributeDefinitions"]
    for id_, month, day in (("a", 1, "03"), ("b", 2, "01"), ("c", 2, "05"), ("d", 3, "01")):
        place = {"country": {"S": "FR"}, "city": {"S": "Paris"}, "year": {"N": "2025"}, "month": {"N": str(month)}}
        ddb.put_item(TableName=name, Item={"id": {"S": id_}, "day": {"S": day}, **place})

    open_page(browser, server, f"table/{name}")
    assert (
        "keys country (HASH), city (HASH), year (RANGE), month (RANGE), day (RANGE)"
        in wait_for(browser, "#indexes").text
    )
    open_page(browser, server, f"items/{name}")
    wait_for(browser, "#item-results")
    form = browser.find_element(By.ID, "item-search")
    fill(form, "Operation", "Query")
    fill(form, "Index", "byPlace")
    fill(form, "HashValue", "FR")
    fill(form, "HashValue1", "Paris")
    fill(form, "SortValue0", "2025")
    fill(form, "SortValue1", "2")
    fill(form, "RangeOp", ">=")
    fill(form, "RangeValue", "02")
    browser.find_element(By.ID, "run-search").click()
    wait_text(browser, "#item-results", "Page 1: 1 item")
    assert [row.text.split()[0] for row in browser.find_elements(By.CSS_SELECTOR, "#items tr.item")] == ["c"]
    fill(form, "SortValue1", "")  # the condition moves to month, the first sort attribute without a value
    fill(form, "RangeOp", "between")
    fill(form, "RangeValue", "1")
    fill(form, "RangeValue2", "2")
    browser.find_element(By.ID, "run-search").click()
    wait_text(browser, "#item-results", "Page 1: 3 items")
    fill(form, "HashValue1", "")  # DynamoDB's error, as the API gives it
    fill(form, "SortValue0", "")
    fill(form, "RangeOp", "(none)")
    browser.find_element(By.ID, "run-search").click()
    error = wait_for(browser, "#item-search + div .error")
    with pytest.raises(ClientError) as raised:
        ddb.query(
            TableName=name,
            IndexName="byPlace",
            KeyConditionExpression="#pk = :pk AND #pk1 = :pk1",
            ExpressionAttributeNames={"#pk": "country", "#pk1": "city"},
            ExpressionAttributeValues={":pk": {"S": "FR"}, ":pk1": {"S": ""}},
        )
    assert error.find_element(By.CSS_SELECTOR, ".error-message").text == raised.value.response["Error"]["Message"]
    screenshot(browser, "items-multi-attribute-index")


def _same_request(name: str) -> dict[str, Any]:
    return {
        "TableName": name,
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "BillingMode": "PAY_PER_REQUEST",
    }


def put_through_the_editor(browser: Chrome, item: dict[str, Any]) -> None:
    browser.find_element(By.ID, "new-item").click()
    wait_for(browser, "#item-json")
    set_json(browser, "#item-json", item)
    browser.find_element(By.ID, "put-item").click()
    wait_text(browser, "#editor-status .ok", "Saved.")


def test_items_written_queried_and_edited(browser: Chrome, server: ServerProcess, ddb: Any) -> None:
    name = provisioned_table(ddb, 50)
    open_page(browser, server, f"items/{name}")
    wait_for(browser, "#item-results")
    for sk in (1, 2, 3):
        put_through_the_editor(
            browser, {"pk": "a", "sk": sk, "tags": {"$SS": ["x", "y"]}, "big": {"$N": "12345678901234567890123"}}
        )
    put_through_the_editor(browser, {"pk": "b", "sk": 1, "note": "other"})
    stored = ddb.get_item(TableName=name, Key={"pk": {"S": "a"}, "sk": {"N": "2"}})["Item"]
    assert stored["tags"] == {"SS": ["x", "y"]} and stored["big"] == {"N": "12345678901234567890123"}

    form = browser.find_element(By.ID, "item-search")
    fill(form, "Operation", "Query")
    fill(form, "HashValue", "a")
    fill(form, "RangeOp", ">=")
    fill(form, "RangeValue", "2")
    fill(form, "Order", "descending")
    fill(form, "Limit", "1")
    browser.find_element(By.ID, "run-search").click()
    wait_text(browser, "#item-results", "Page 1: 1 item")
    assert [row.text.split()[:2] for row in browser.find_elements(By.CSS_SELECTOR, "#items tr.item")] == [["a", "3"]]
    browser.find_element(By.ID, "next-page").click()
    wait_text(browser, "#item-results", "Page 2: 1 item ")
    assert [row.text.split()[:2] for row in browser.find_elements(By.CSS_SELECTOR, "#items tr.item")] == [["a", "2"]]

    browser.find_elements(By.CSS_SELECTOR, "#items tr.item")[0].click()
    wait_for(browser, "#delete-item")
    assert json.loads(browser.find_element(By.ID, "item-json").get_attribute("value") or "")["sk"] == 2
    browser.find_element(By.ID, "format-dynamodb").click()
    as_dynamodb = json.loads(browser.find_element(By.ID, "item-json").get_attribute("value") or "")
    assert as_dynamodb == stored
    fill(browser.find_element(By.ID, "editor"), "Condition", "attribute_not_exists(pk)")
    browser.find_element(By.ID, "put-item").click()
    error = wait_for(browser, "#editor-status .error")
    assert error.find_element(By.CSS_SELECTOR, ".error-type").text == "ConditionalCheckFailedException"
    assert error.find_element(By.CSS_SELECTOR, ".error-message").text == "The conditional request failed"
    screenshot(browser, "items")

    fill(form, "Operation", "Scan")
    fill(form, "Limit", "25")
    fill(form, "Filter", "#n = :n")
    fill(form, "Names", '{"#n": "note"}')
    fill(form, "Values", '{":n": "other"}')
    browser.find_element(By.ID, "run-search").click()
    wait_text(browser, "#item-results", "Page 1: 1 item (4 evaluated)")
    fill(form, "Filter", "#n = ")  # DynamoDB's own error, as the API gives it
    browser.find_element(By.ID, "run-search").click()
    error = wait_for(browser, "#item-search + div .error")
    assert error.find_element(By.CSS_SELECTOR, ".error-type").text == "ValidationException"
    with pytest.raises(ClientError) as raised:
        ddb.scan(
            TableName=name,
            Limit=25,
            FilterExpression="#n =",
            ExpressionAttributeNames={"#n": "note"},
            ExpressionAttributeValues={":n": {"S": "other"}},
        )
    assert error.find_element(By.CSS_SELECTOR, ".error-message").text == raised.value.response["Error"]["Message"]
    assert raised.value.response["Error"]["Message"].startswith(
        "1 validation error detected: Invalid FilterExpression: Syntax error;"
    )

    fill(browser.find_element(By.ID, "editor"), "Condition", "attribute_exists(pk)")
    browser.find_element(By.ID, "delete-item").click()
    wait_text(browser, "#editor-status .ok", "Deleted.")
    assert "Item" not in ddb.get_item(TableName=name, Key={"pk": {"S": "a"}, "sk": {"N": "2"}})


def hammer(ddb: Any, table: str, key: str, count: int) -> int:
    """Write one partition key ``count`` times (no retries); the number of writes refused."""
    throttled = 0
    for i in range(count):
        try:
            ddb.put_item(TableName=table, Item={"pk": {"S": key}, "sk": {"N": str(i)}})
        except ClientError as error:
            assert error.response["Error"]["Code"] == "ProvisionedThroughputExceededException"
            throttled += 1
    return throttled


def test_the_partition_view_shows_the_throttled_partition(browser: Chrome, server: ServerProcess, ddb: Any) -> None:
    name = provisioned_table(ddb, 4)
    open_page(browser, server, f"partitions/{name}")
    wait_text(browser, '.resource[data-index=""] h2', "Table: 1 partition")
    browser.find_element(By.ID, "as-if").send_keys("4")
    browser.find_element(By.ID, "as-if-apply").click()
    wait_text(browser, "#as-if-now", "simulating 4 partitions")
    wait_text(browser, '.resource[data-index=""] h2', "Table: 4 partitions")
    click_when(browser, ".contributors button", "Enable Contributor Insights")
    wait_text(browser, ".rule", "most throttled partition keys")
    browser.find_element(By.ID, "spend-burst").click()

    assert hammer(ddb, name, "hot", 12) > 0
    for second in range(5):  # a workload over time: each second one partition's share, a hot key and a warm one
        drawn = polls(browser)
        assert request(server, "POST", "/dynastore/clock", {"advance": 1}, ADMIN)[0] == 200
        assert hammer(ddb, name, "hot", 4) >= 3
        hammer(ddb, name, f"warm-{second}", 1)  # elsewhere it fits the share; in the hot partition it throttles too
        wait_for_polls(browser, drawn + 2)  # one whole poll after the writes
    status, _, view = request(server, "GET", f"/dynastore/partitions/{name}")
    assert status == 200
    hot = [p["partition"] for p in view["partitions"] if p["throttled"]["write"] > 0]
    assert len(hot) == 1, view["partitions"]

    rows = '.resource[data-index=""] table.partitions tr[data-partition]'
    waiter(browser).until(
        lambda d: [r["partition"] for r in shown(d, rows) if "throttled" in r["class"]] == [str(hot[0])]
    )
    assert len(shown(browser, rows)) == 4
    top_keys = '.rule[data-rule="PKT"] tr[data-partition]'
    waiter(browser).until(lambda d: [r["partition"] for r in shown(d, top_keys)] == [str(hot[0])])
    assert '{"pk":"hot"}' in shown(browser, top_keys)[0]["text"]  # the key and its partition, side by side
    screenshot(browser, "partitions")

    browser.find_element(By.ID, "as-if-stop").click()
    wait_text(browser, '.resource[data-index=""] h2', "Table: 1 partition")


def test_stream_records_and_triggers(browser: Chrome, server: ServerProcess, ddb: Any) -> None:
    name = provisioned_table(ddb, 50, stream=True, name=TRIGGERED_TABLE)
    ddb.put_item(TableName=name, Item={"pk": {"S": "s"}, "sk": {"N": "1"}, "v": {"S": "first"}})
    ddb.put_item(TableName=name, Item={"pk": {"S": "s"}, "sk": {"N": "1"}, "v": {"S": "second"}})
    open_page(browser, server, f"streams/{name}")
    wait_for(browser, "li.shard")
    wait_text(browser, "#stream-records", "MODIFY")
    records = browser.find_elements(By.CSS_SELECTOR, "#stream-records tr.record")
    assert [r.text.split()[0] for r in records] == ["MODIFY", "INSERT"]
    assert '{"pk":"s","sk":1,"v":"second"}' in records[0].text
    screenshot(browser, "stream")

    open_page(browser, server, "triggers")
    wait_text(browser, "#trigger-list .trigger h2", f"audit on {TRIGGERED_TABLE} (command")
    wait_text(browser, "#trigger-list .trigger .error", "exit status 1")  # the command fails: its batch waits
    screenshot(browser, "triggers")


def test_backups_with_their_state(browser: Chrome, server: ServerProcess, ddb: Any) -> None:
    name = provisioned_table(ddb, 5)
    ddb.put_item(TableName=name, Item={"pk": {"S": "s"}, "sk": {"N": "1"}})
    arn = ddb.create_backup(TableName=name, BackupName="console-backup")["BackupDetails"]["BackupArn"]
    open_page(browser, server, "backups")
    row = wait_text(browser, "#backup-list tr.backup[data-backup='console-backup']", "AVAILABLE")
    assert row.text.split()[:4] == ["console-backup", name, "USER", "AVAILABLE"]
    assert arn in row.text
    wait_text(browser, "#recovery-running", "No backup or restore is running.")
    screenshot(browser, "backups")


def test_throughput_update_and_delete(browser: Chrome, server: ServerProcess, ddb: Any) -> None:
    name = provisioned_table(ddb, 4)
    open_page(browser, server, f"table/{name}")
    form = wait_for(browser, "#update-throughput")
    fill(form, "RCU", "9")
    form.find_element(By.TAG_NAME, "button").click()
    wait_text(browser, "#table-status .ok", "Updated")
    assert ddb.describe_table(TableName=name)["Table"]["ProvisionedThroughput"]["ReadCapacityUnits"] == 9
    fill(browser.find_element(By.TAG_NAME, "main"), "confirm", name)
    browser.find_element(By.ID, "delete-table").click()
    wait_for(browser, "#create-table")
    with pytest.raises(ClientError) as raised:
        ddb.describe_table(TableName=name)
    assert raised.value.response["Error"]["Code"] == "ResourceNotFoundException"


def shown_again(browser: Chrome, server: ServerProcess, name: str) -> str:
    """The table page's point-in-time recovery state, the page opened afresh."""
    open_page(browser, server, f"table/{name}")
    return str(wait_for(browser, "#recovery-state").text)


def test_point_in_time_recovery_turned_on_and_a_table_restored(
    browser: Chrome, server: ServerProcess, ddb: Any
) -> None:
    name = provisioned_table(ddb, 5)
    ddb.put_item(TableName=name, Item={"pk": {"S": "a"}, "sk": {"N": "1"}})
    open_page(browser, server, f"table/{name}")
    wait_text(browser, "#recovery-state", "DISABLED")
    browser.find_element(By.ID, "recovery-toggle").click()
    wait_text(browser, "#recovery-state", "ENABLED · 35 day(s)")
    waiter(browser).until(lambda d: "restorable from" in shown_again(d, server, name))  # once its first base is in
    target = unique_name("console_restored")
    form = wait_for(browser, "#restore-to-point-in-time")
    fill(form, "target", target)
    form.find_element(By.TAG_NAME, "button").click()
    wait_text(browser, "#recovery-status .ok", "Restoring")
    screenshot(browser, "recovery")
    waiter(browser).until(lambda d: ddb.describe_table(TableName=target)["Table"]["TableStatus"] == "ACTIVE")
    assert ddb.scan(TableName=target)["Count"] == 1


def test_the_server_serves_the_console_files(server: ServerProcess) -> None:
    conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
    try:
        conn.request("GET", "/console", headers={"Origin": "http://localhost:3000"})
        moved = conn.getresponse()
        moved.read()
        assert (moved.status, moved.getheader("Location")) == (301, "/console/")
        conn.request("GET", "/console/js/partitions.js")
        script = conn.getresponse()
        body = script.read()
        assert (script.status, script.getheader("Content-Type")) == (200, "text/javascript; charset=utf-8")
        assert b"export async function render" in body
        assert script.getheader("Access-Control-Allow-Origin") is None
        assert (script.getheader("Content-Security-Policy") or "").startswith("default-src 'self'")
    finally:
        conn.close()


def test_without_chromium_the_browser_tests_say_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    # The browser found at its fixed path (any existing file will do), the driver nowhere: the message names only
    # what is missing, whatever this machine has installed.
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setattr(chromium_module, "CHROMIUM", sys.executable)
    monkeypatch.setattr(chromium_module, "CHROMEDRIVER", "/nonexistent/chromedriver")
    with pytest.raises(AssertionError) as raised:
        chromium_module.programs()
    assert str(raised.value) == (
        "the console's browser tests need Chromium and its WebDriver: install Debian's packages with "
        "`apt-get install -y chromium chromium-driver` (chromedriver not found)"
    )


def run_partiql(browser: Chrome, statement: str) -> None:
    area = browser.find_element(By.ID, "partiql-statement")
    browser.execute_script("arguments[0].value = arguments[1]", area, statement)
    browser.find_element(By.ID, "run-partiql").click()


def test_partiql_statements_on_the_items_page(browser: Chrome, server: ServerProcess, ddb: Any) -> None:
    name = provisioned_table(ddb, 50)
    open_page(browser, server, f"items/{name}")
    wait_for(browser, "#partiql-statement")
    run_partiql(browser, f"INSERT INTO \"{name}\" VALUE {{'pk': 'p', 'sk': 1, 'note': 'from the console'}}")
    wait_text(browser, "#partiql-results", "Page 1: 0 items")
    stored = ddb.get_item(TableName=name, Key={"pk": {"S": "p"}, "sk": {"N": "1"}})["Item"]
    assert stored["note"] == {"S": "from the console"}
    run_partiql(browser, f"SELECT pk, note FROM \"{name}\" WHERE pk = 'p'")
    wait_text(browser, "#partiql-results", "Page 1: 1 item")
    cells = [cell["text"] for cell in shown(browser, "#partiql-items td")]
    assert cells[0] == "p" and cells[-1] == "from the console"  # key columns first, then the projection's
    run_partiql(browser, f"INSERT INTO \"{name}\" VALUE {{'pk': 'p', 'sk': 1}}")  # the same key again
    error = wait_for(browser, "#partiql-status .error")
    assert error.find_element(By.CSS_SELECTOR, ".error-type").text == "DuplicateItemException"
    assert error.find_element(By.CSS_SELECTOR, ".error-message").text == "Duplicate primary key exists in table"
    screenshot(browser, "partiql")


CONSOLE_ADMIN = {"aws_access_key_id": "AKIACONSOLEADMIN0001", "aws_secret_access_key": "console-admin-secret"}


def test_the_console_signs_in_and_signs_its_requests_on_a_server_with_authentication(chrome: Chrome) -> None:
    """With --auth sigv4 the pages load for anyone, ask for a key, then sign every request (DynamoDB's API and the
    admin endpoints) in the browser: the table list and the live partition view work as without authentication."""
    secured = ServerProcess(
        "--auth", "sigv4",
        env={"DYNASTORE_ADMIN_ACCESS_KEY_ID": CONSOLE_ADMIN["aws_access_key_id"],
             "DYNASTORE_ADMIN_SECRET_ACCESS_KEY": CONSOLE_ADMIN["aws_secret_access_key"]},
    )  # fmt: skip
    try:
        ddb = boto3.client("dynamodb", endpoint_url=secured.url, region_name="us-east-1", config=BOTO_CONFIG,
                           **CONSOLE_ADMIN)  # fmt: skip
        name = provisioned_table(ddb, 5)
        open_page(chrome, secured, "tables")
        form = wait_for(chrome, "form.signin")
        assert chrome.current_url.endswith("/console/#/signin")  # the table list was refused: a key is asked for
        fill(form, "accessKeyId", CONSOLE_ADMIN["aws_access_key_id"])
        fill(form, "secretAccessKey", CONSOLE_ADMIN["aws_secret_access_key"])
        browser_log(chrome)  # the refusals before signing in are expected
        form.find_element(By.CSS_SELECTOR, 'button[type="submit"]').click()
        wait_for(chrome, f'tr[data-table="{name}"]')
        open_page(chrome, secured, f"partitions/{name}")  # the admin endpoints, signed by the page
        wait_for_polls(chrome, 2)
        screenshot(chrome, "signed-in-partitions")
        assert [e["message"] for e in browser_log(chrome) if e["level"] == "SEVERE"] == []
    finally:
        chrome.execute_script("sessionStorage.clear()")
        secured.stop()


def test_exports_and_imports_with_their_state(browser: Chrome, server: ServerProcess, ddb: Any) -> None:
    name = provisioned_table(ddb, 5)
    ddb.update_continuous_backups(TableName=name, PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
    arn = ddb.describe_table(TableName=name)["Table"]["TableArn"]
    ddb.export_table_to_point_in_time(TableArn=arn, S3Bucket="nosuchbucket")  # fails: the bucket is not there
    ddb.import_table(
        S3BucketSource={"S3Bucket": "nosuchbucket", "S3KeyPrefix": "in/"},
        InputFormat="CSV",
        TableCreationParameters={
            "TableName": unique_name(),
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
            "BillingMode": "PAY_PER_REQUEST",
        },
    )
    open_page(browser, server, "transfers")
    row = wait_text(browser, "#export-list tr.transfer.failed", "S3NoSuchBucket")
    assert name in row.text and "FULL_EXPORT" in row.text and "DYNAMODB_JSON" in row.text
    row = wait_text(browser, "#import-list tr.transfer.failed", "S3NoSuchBucket")
    assert "CSV NONE" in row.text and "s3://nosuchbucket/in/" in row.text
    screenshot(browser, "transfers")
