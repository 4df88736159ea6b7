"""A headless Chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe): no driver, no
websocket library, nothing but the standard library and the browser.

``open_page(path)`` loads a local HTML file and returns what a test asks of a page: the console's errors and
warnings, the exceptions thrown, every request the page made, values evaluated in it, and a screenshot. Used by
tests/test_class_report.py (is class.html a page a browser shows without errors?) and by
tests/benchmarks/class_report_picture.py (the picture in docs/class.md).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find() -> str | None:
    """The path of a Chromium on PATH, or None."""
    return next((path for path in map(shutil.which, NAMES) if path), None)


@dataclass
class Page:
    """What the browser said while it loaded the page."""
    errors: list[str] = field(default_factory=list)  # console errors and warnings, exceptions, failed loads
    requests: list[str] = field(default_factory=list)


class Browser:
    """One headless Chromium and one tab, talked to in the protocol's JSON messages, each ended by a NUL byte."""

    def __init__(self, width: int = 1000, height: int = 800, timeout: float = 60.0):
        executable = find()
        if executable is None:
            raise FileNotFoundError("no Chromium on PATH")
        self.profile = tempfile.mkdtemp(prefix="autograd-lab-chromium-")
        to_browser, self._write = os.pipe()
        self._read, from_browser = os.pipe()
        flags = ["--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe", "--no-first-run",
                 "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--hide-scrollbars", "--mute-audio",
                 f"--user-data-dir={self.profile}", f"--window-size={width},{height}"]
        # The protocol's pipe is the browser's fds 3 (in) and 4 (out): a small Python moves them there, through
        # fds past 9 so that neither clobbers the other, then becomes the browser.
        launcher = ("import fcntl, os, sys; a, b = (fcntl.fcntl(int(fd), fcntl.F_DUPFD, 10) for fd in sys.argv[1:3]); "
                    "os.dup2(a, 3); os.dup2(b, 4); os.execv(sys.argv[3], sys.argv[3:])")
        self.process = subprocess.Popen([sys.executable, "-c", launcher, str(to_browser), str(from_browser),
                                         executable, *flags], pass_fds=(to_browser, from_browser),
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser)
        os.close(from_browser)
        self.timeout, self._next, self._buffer, self.events = timeout, 0, b"", []
        try:
            target = self.call("Target.createTarget", url="about:blank")["targetId"]
            self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        except BaseException:
            self.close()
            raise

    def _message(self) -> dict:
        deadline = time.monotonic() + self.timeout
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("the browser did not answer")
            chunk = os.read(self._read, 1 << 16)
            if not chunk:
                raise ConnectionError("the browser closed its pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method: str, session: str | None = None, **params) -> dict:
        """Send one command and wait for its answer; the events that arrive meanwhile are kept in ``events``."""
        self._next += 1
        message = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        while True:
            answer = self._message()
            if answer.get("id") == self._next:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            self.events.append(answer)

    def tab(self, method: str, **params) -> dict:
        return self.call(method, session=self.session, **params)

    def wait_for(self, method: str) -> dict:
        """The first event ``method`` (of those already kept, then of those to come)."""
        for event in self.events:
            if event.get("method") == method:
                return event
        while True:
            event = self._message()
            self.events.append(event)
            if event.get("method") == method:
                return event

    def open(self, path: Path, grayscale: bool = False) -> Page:
        """Load the file at ``path`` and wait for its load event; ``grayscale``: as a reader without colour vision
        sees it (the protocol's achromatopsia)."""
        for domain in ("Runtime", "Log", "Page", "Network"):
            self.tab(f"{domain}.enable")
        if grayscale:
            self.tab("Emulation.setEmulatedVisionDeficiency", type="achromatopsia")
        self.tab("Page.navigate", url=Path(path).resolve().as_uri())
        self.wait_for("Page.loadEventFired")
        self.evaluate("1")  # lets the events of the load arrive
        page = Page()
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                page.errors.append(f"exception: {params['exceptionDetails'].get('text')}")
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning", "assert"):
                page.errors.append(f"console.{params['type']}: {params.get('args')}")
            elif method == "Log.entryAdded" and params["entry"].get("level") in ("error", "warning"):
                page.errors.append(f"log {params['entry']['level']}: {params['entry'].get('text')}")
            elif method == "Network.loadingFailed":
                page.errors.append(f"failed to load: {params.get('errorText')}")
            elif method == "Network.requestWillBeSent":
                page.requests.append(params["request"]["url"])
        return page

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (JSON-serialisable values only)."""
        result = self.tab("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def screenshot(self, width: int, height: int, scale: float = 1.0) -> bytes:
        """A PNG of the page's top ``width`` x ``height`` CSS pixels, drawn at ``scale``."""
        clip = {"x": 0, "y": 0, "width": width, "height": height, "scale": scale}
        data = self.tab("Page.captureScreenshot", format="png", clip=clip, captureBeyondViewport=True)["data"]
        return base64.b64decode(data)

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (ConnectionError, TimeoutError, OSError, RuntimeError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._read)
        os.close(self._write)
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
