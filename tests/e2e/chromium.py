"""A headless Chromium driven through Selenium, for the console's browser tests.

Debian's packages provide both programs (``apt-get install chromium chromium-driver``). Without them the tests fail
and say so: a browser test that skips itself would hide that the console was never tried. The flags keep Chromium
from reaching out to the network (it stalls on a closed network otherwise) and give it a fresh profile.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
MISSING = (
    "the console's browser tests need Chromium and its WebDriver: install Debian's packages with "
    "`apt-get install -y chromium chromium-driver` ({missing} not found)"
)
_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1400,1000",
)


def programs() -> tuple[str, str]:
    """The browser and driver to run, or an AssertionError that says what to install."""
    browser = shutil.which("chromium") or (CHROMIUM if Path(CHROMIUM).exists() else None)
    driver = shutil.which("chromedriver") or (CHROMEDRIVER if Path(CHROMEDRIVER).exists() else None)
    missing = [name for name, found in (("chromium", browser), ("chromedriver", driver)) if found is None]
    if browser is None or driver is None:
        raise AssertionError(MISSING.format(missing=" and ".join(missing)))
    return browser, driver


@contextmanager
def chromium() -> Iterator[webdriver.Chrome]:
    browser, driver_path = programs()
    with tempfile.TemporaryDirectory(prefix="dynastore-chromium-") as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = browser
        for flag in _FLAGS:
            options.add_argument(flag)
        options.add_argument(f"--user-data-dir={profile}")
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(options=options, service=Service(executable_path=driver_path))
        try:
            driver.set_page_load_timeout(30)
            yield driver
        finally:
            driver.quit()


# Chromium aborts the loads in flight when the machine's network interfaces change, and logs each as failed with
# net::ERR_NETWORK_CHANGED. The cluster tests make and remove network namespaces and links on this machine, beside
# these tests when the suite runs in two processes: such entries are the machine's, not the page's.
NETWORK_CHANGED = "net::ERR_NETWORK_CHANGED"


def browser_log(driver: webdriver.Chrome) -> list[dict[str, Any]]:
    """The browser's console log since the last call, without the entries of a change of the machine's network."""
    entries: list[dict[str, Any]] = driver.get_log("browser")  # type: ignore[no-untyped-call]
    return [entry for entry in entries if NETWORK_CHANGED not in entry["message"]]


def start_clean(driver: webdriver.Chrome) -> None:
    """Before a test: leave whatever page an earlier test left (it may still be polling, perhaps a server that test
    has stopped) and read the log it wrote, so that none of its requests can fail after this and be counted against
    the next test."""
    driver.get("about:blank")
    browser_log(driver)
