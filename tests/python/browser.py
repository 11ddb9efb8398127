"""Headless Chromium (Debian's `chromium`) driven through selenium and Debian's chromium-driver, one session for
the whole Python suite (conftest's `browser` fixture): load a page, collect its console errors, exceptions and
network requests, run a script, take a screenshot."""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import json
import shutil
import time
from pathlib import Path


def find() -> tuple[str, str] | None:
    """(chromium, chromedriver), or None when either is missing."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    drv = shutil.which("chromedriver")
    return (exe, drv) if exe and drv else None


class Browser:
    def __init__(self, exe: str, driver: str):
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
        o = Options()
        o.binary_location = exe
        for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000",
                  "--hide-scrollbars", "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run", "--no-default-browser-check", "--disable-extensions"):
            o.add_argument(a)
        # console messages (errors, uncaught exceptions, CSP violations) and the network log
        o.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
        self.driver = webdriver.Chrome(service=Service(driver), options=o)
        self._pending: tuple[list, list] = ([], [])

    def open(self, path: Path, fragment: str = "") -> str:
        """Load the file (after dropping what earlier pages logged) and wait for its load; returns its URL."""
        self.driver.get_log("browser"), self.driver.get_log("performance")
        url = Path(path).resolve().as_uri()
        self.driver.get(url + fragment)
        deadline = time.monotonic() + 60
        while self.driver.execute_script("return document.readyState") != "complete":
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} did not load")
            time.sleep(0.02)
        return url

    def wait(self, js: str, timeout: float = 60):
        """Poll the expression js until it is truthy; its value."""
        deadline = time.monotonic() + timeout
        while True:
            v = self.driver.execute_script("return " + js)
            if v or time.monotonic() > deadline:
                return v
            time.sleep(0.05)

    def problems(self, page_url: str) -> tuple[list[str], list[str]]:
        """Console errors and exceptions, and requests for anything but the page, since open()."""
        errors = [e["message"] for e in self.driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
        requests = []
        for e in self.driver.get_log("performance"):
            m = json.loads(e["message"])["message"]
            if m.get("method") == "Network.requestWillBeSent":
                u = m["params"]["request"]["url"]
                if u.split("#")[0] != page_url:
                    requests.append(u)
        return errors, requests

    def evaluate(self, expr: str):
        return self.driver.execute_script("return " + expr)

    def screenshot(self, out: Path) -> Path:
        self.driver.save_screenshot(str(out))
        return Path(out)

    def close(self) -> None:
        self.driver.quit()
