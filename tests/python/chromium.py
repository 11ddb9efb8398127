"""Headless Chromium (Debian's `chromium`) driven over the DevTools protocol on a pipe (--remote-debugging-pipe:
commands on fd 3, replies and events on fd 4, NUL-separated JSON): load a page, collect its console errors,
exceptions and network requests, read its text, run a script, take a screenshot. Started once per test module."""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path


def find() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Chromium:
    def __init__(self, exe: str):
        self._profile = tempfile.mkdtemp(prefix="hubprof-chromium-")
        to_chrome_r, self._w = os.pipe()
        self._r, from_chrome_w = os.pipe()
        # the browser expects the pipe on fds 3 and 4: move them there in the child
        hi_r, hi_w = os.dup(to_chrome_r), os.dup(from_chrome_w)
        while hi_r < 5 or hi_w < 5:
            hi_r, hi_w = os.dup(hi_r), os.dup(hi_w)

        def child():
            os.dup2(hi_r, 3)
            os.dup2(hi_w, 4)

        self.proc = subprocess.Popen(
            [exe, "--headless=new", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
             "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--hide-scrollbars",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={self._profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=child, close_fds=False)  # our own fds are not inheritable (PEP 446)
        for fd in (to_chrome_r, from_chrome_w, hi_r, hi_w):
            os.close(fd)
        self._buf = b""
        self._id = 0
        self.events: list[dict] = []
        self.session = None

    # -- the protocol ------------------------------------------------------------------------------------
    def _read(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            if time.monotonic() > deadline:
                raise TimeoutError("chromium did not answer within the time limit")
            chunk = os.read(self._r, 1 << 20)
            if not chunk:
                raise RuntimeError(f"chromium closed the DevTools pipe (exit {self.proc.poll()})")
            self._buf += chunk
        msg, _, self._buf = self._buf.partition(b"\0")
        return json.loads(msg)

    def send(self, method: str, params: dict | None = None, session: bool = True, timeout: float = 60) -> dict:
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            m = self._read(deadline)
            if m.get("id") == self._id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method: str, timeout: float = 60) -> dict:
        deadline = time.monotonic() + timeout
        for i, e in enumerate(self.events):
            if e.get("method") == method:
                return self.events.pop(i)
        while True:
            m = self._read(deadline)
            if m.get("method") == method:
                return m
            self.events.append(m)

    # -- pages ---------------------------------------------------------------------------------------------
    def open(self, path: Path, width: int = 1400, height: int = 1000) -> str:
        """Load the file in a fresh tab and wait for its load event; returns the page's URL."""
        if self.session:
            self.send("Target.closeTarget", {"targetId": self._target}, session=False)
        self.events = []
        self._target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": self._target, "flatten": True},
                                 session=False)["sessionId"]
        for domain in ("Runtime", "Log", "Network", "Page"):
            self.send(f"{domain}.enable")
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        url = Path(path).resolve().as_uri()
        self.send("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired")
        self.evaluate("new Promise(r => setTimeout(r, 200))")  # late errors and requests arrive too
        return url

    def evaluate(self, expr: str):
        r = self.send("Runtime.evaluate", {"expression": expr, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in r:
            raise RuntimeError(f"script failed: {r['exceptionDetails']}")
        return r["result"].get("value")

    def problems(self, page_url: str) -> tuple[list[str], list[str]]:
        """(console errors and exceptions, requests other than the page itself) seen since open()."""
        errors, requests = [], []
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                errors.append(json.dumps(p.get("exceptionDetails", {}))[:300])
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                errors.append(json.dumps(p.get("args", []))[:300])
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                errors.append(p["entry"].get("text", "")[:300])
            elif m == "Network.requestWillBeSent" and p.get("request", {}).get("url") != page_url:
                requests.append(p["request"]["url"])
        return errors, requests

    def screenshot(self, out: Path) -> Path:
        """The whole page as a PNG."""
        h = int(self.evaluate("document.documentElement.scrollHeight"))
        w = int(self.evaluate("document.documentElement.scrollWidth"))
        data = self.send("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": min(w, 1600), "height": min(h, 6000), "scale": 1}})["data"]
        Path(out).write_bytes(base64.b64decode(data))
        return Path(out)

    def close(self) -> None:
        try:
            self.send("Browser.close", session=False, timeout=10)
        except Exception:  # noqa: BLE001 (it may be gone already)
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._r)
        os.close(self._w)
        shutil.rmtree(self._profile, ignore_errors=True)
