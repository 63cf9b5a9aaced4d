"""The console's Cluster page (admin/static/js/cluster.js) in a real browser against a local three-node cluster:
the leader, the log's head and one row per node with its role, applied index and lag, as the node the page came
from answers GET /dynastore/cluster (docs/cluster.md "Watching it")."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from selenium.common.exceptions import TimeoutException
from selenium.webdriver import Chrome
from selenium.webdriver.support.wait import WebDriverWait

from dynastore.replication.local_cluster import ETCD_BINARY, LocalCluster
from tests.e2e.chromium import browser_log, chromium
from tests.e2e.conftest import make_client

pytestmark = pytest.mark.skipif(
    not os.path.exists(ETCD_BINARY), reason=f"{ETCD_BINARY} is not installed (Debian: etcd-server)"
)
WAIT_SECONDS = 30  # an upper bound for the page to catch up, never a measured time


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    with LocalCluster(tmp_path_factory.mktemp("cluster")) as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[Chrome]:
    with chromium() as driver:
        yield driver


def rows(browser: Chrome) -> list[list[str]]:
    script = (
        "return [...document.querySelectorAll('#cluster-nodes tr.node')]"
        ".map((row) => [...row.cells].map((cell) => cell.textContent))"
    )
    found: list[list[str]] = browser.execute_script(script)
    return found


def test_the_cluster_page_shows_every_node_its_role_and_lag(browser: Chrome, cluster: LocalCluster) -> None:
    status = cluster.status()
    leader = status["leader"]
    follower = next(i for i, name in enumerate(cluster.nodes.names) if name != leader)
    client = make_client(cluster.urls[follower])
    client.create_table(
        TableName="shown",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    browser.get(f"{cluster.urls[follower]}/console/#/cluster")
    browser.refresh()

    last: list[list[list[str]]] = [[]]

    def caught_up(driver: Any) -> list[list[str]] | bool:
        shown = last[0] = rows(driver)  # once every node has applied the new table and reported it
        return shown if len(shown) == 3 and all(row[4] == "0" and row[3] != "0" for row in shown) else False

    try:
        shown = WebDriverWait(browser, WAIT_SECONDS).until(caught_up)
    except TimeoutException:
        status_text = browser.find_element("css selector", "#cluster-view").text
        pytest.fail(f"the page never showed every node caught up: rows {last[0]}, page {status_text!r}, "
                    f"the cluster's own status {cluster.status()}")  # fmt: skip
    assert isinstance(shown, list)
    applied = shown[0][3]
    roles = {name: "leader" if name == leader else "follower" for name in cluster.nodes.names}
    assert shown == [
        [name, roles[name], url, applied, "0"] for name, url in zip(cluster.nodes.names, cluster.urls, strict=True)
    ]
    text = browser.find_element("css selector", "#cluster-view").text
    assert f"Leader {leader} {cluster.urls[cluster.nodes.names.index(leader)]}" in text
    assert f"Log head {applied}; leader changes seen by {cluster.nodes.names[follower]}: " in text
    assert f"This page is served by {cluster.nodes.names[follower]} (follower)." in text
    errors = [e["message"] for e in browser_log(browser) if e["level"] == "SEVERE"]
    assert errors == []
