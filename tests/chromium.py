"""A real browser for the tests that need one: headless Chromium (Debian's ``chromium``),
installed from Debian's packages by the test's set-up where it is missing and this is a
Debian machine run as root (as CI is), else the test is skipped naming what is missing.

Chromium is driven through the DevTools protocol over a pipe (``--remote-debugging-pipe``:
JSON messages separated by NUL bytes on file descriptors 3 and 4), so no websocket client
or browser-automation package is needed. The browser runs with no network: every host name
fails to resolve (``--host-resolver-rules``), and the page's requests are recorded
(``Network.requestWillBeSent``) as are its console messages, exceptions and log entries."""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

PACKAGES = ("chromium",)
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-extensions", "--no-default-browser-check",
         "--mute-audio", "--hide-scrollbars", "--font-render-hinting=none",
         '--host-resolver-rules=MAP * ~NOTFOUND', "--remote-debugging-pipe")


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


def chromium_missing() -> str | None:
    """Why no headless Chromium can run here (None: one can), after installing Debian's
    package where it may be installed."""
    if chromium_path() is not None:
        return None
    why = "Chromium is not installed (Debian: apt install chromium)"
    if os.environ.get("ROOFLINE_NO_APT") == "1":
        return why
    apt = shutil.which("apt-get")
    if apt is None or os.geteuid() != 0:
        return f"{why}; not installed by the test (needs apt-get run as root)"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = [apt, "install", "-y", "-q", *PACKAGES]
    try:
        if subprocess.run(install, capture_output=True, timeout=600, env=env).returncode != 0:
            # a fresh machine may not have the package lists yet
            subprocess.run([apt, "update", "-q"], capture_output=True, timeout=300, env=env, check=True)
            subprocess.run(install, capture_output=True, timeout=600, env=env, check=True)
    except (subprocess.SubprocessError, OSError) as error:
        return f"{why}; apt-get install {' '.join(PACKAGES)} failed: {error}"
    return None if chromium_path() is not None else why


class BrowserError(RuntimeError):
    pass


@dataclass
class Page:
    """One tab, and what it did: every request it made, every console message, exception
    and log entry."""

    browser: Browser
    session: str
    requests: list[str] = field(default_factory=list)
    console: list[tuple[str, str]] = field(default_factory=list)  # (level, text)

    def send(self, method: str, **params) -> dict:
        return self.browser.send(method, params, self.session)

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (a promise awaited)."""
        reply = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in reply:
            raise BrowserError(f"{expression!r} threw: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def navigate(self, url: str) -> None:
        self.browser.loaded.discard(self.session)
        reply = self.send("Page.navigate", url=url)
        if reply.get("errorText"):
            raise BrowserError(f"cannot open {url}: {reply['errorText']}")
        self.browser.wait(lambda: self.session in self.browser.loaded, f"the load of {url}")

    def mouse(self, kind: str, x: float, y: float) -> None:
        """A real mouse event at (x, y) CSS pixels: moved, pressed or released."""
        moved = kind == "mouseMoved"
        self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="none" if moved else "left",
                  buttons=1 if kind == "mousePressed" else 0, clickCount=0 if moved else 1)

    def click(self, x: float, y: float) -> None:
        self.mouse("mouseMoved", x, y)
        self.mouse("mousePressed", x, y)
        self.mouse("mouseReleased", x, y)

    def key(self, key: str, code: int, shift: bool = False) -> None:
        """A real key press: down and up (``code``: its Windows virtual key code)."""
        modifiers = 8 if shift else 0
        for kind in ("rawKeyDown", "keyUp"):
            self.send("Input.dispatchKeyEvent", type=kind, key=key, code=key, windowsVirtualKeyCode=code,
                      nativeVirtualKeyCode=code, modifiers=modifiers)

    def screenshot(self, clip: dict, scale: float = 1.0) -> bytes:
        reply = self.send("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                          clip={**clip, "scale": scale})
        return base64.b64decode(reply["data"])


class Browser:
    """A headless Chromium driven over its DevTools pipe; a context manager."""

    def __init__(self, width: int = 1280, height: int = 900) -> None:
        path = chromium_path()
        if path is None:
            raise BrowserError("no chromium")
        self.profile = tempfile.TemporaryDirectory(prefix="roofline-chromium-")
        self.size = (width, height)
        to_browser, self._write = os.pipe()
        self._read, from_browser = os.pipe()

        def pipes() -> None:  # the browser's ends as its fds 3 (commands) and 4 (replies)
            # (copied above 10 first: the pipes' own numbers may be 3 or 4)
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_browser, from_browser)]
            for target, fd in zip((3, 4), high, strict=True):
                os.dup2(fd, target)  # (inheritable: the two the browser keeps)

        self.log = Path(self.profile.name) / "chromium.log"
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                [path, *FLAGS, "--enable-logging=stderr", "--v=0",
                 f"--user-data-dir={self.profile.name}/data",
                 f"--window-size={width},{height}", "about:blank"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, close_fds=False, preexec_fn=pipes)
        os.close(to_browser)
        os.close(from_browser)
        self._buffer = b""
        self._next_id = 0
        self._replies: dict[int, dict] = {}
        self.loaded: set[str] = set()
        self.pages: dict[str, Page] = {}

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        with contextlib.suppress(BrowserError, OSError):
            self.send("Browser.close", {}, timeout=10)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=15)
        for fd in (self._read, self._write):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.profile.cleanup()

    def send(self, method: str, params: dict, session: str | None = None, timeout: float = 60) -> dict:
        self._next_id += 1
        ident = self._next_id
        message = {"id": ident, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        self.wait(lambda: ident in self._replies, method, timeout)
        reply = self._replies.pop(ident)
        if "error" in reply:
            raise BrowserError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def wait(self, done, what: str, timeout: float = 60) -> None:
        end = time.monotonic() + timeout
        while not done():
            left = end - time.monotonic()
            if left <= 0 or self.process.poll() is not None:
                state = "exited" if self.process.poll() is not None else "timed out"
                raise BrowserError(f"no answer for {what} (chromium {state}); "
                                   f"log: {self.log.read_text(errors='replace')[-2000:]}")
            ready, _, _ = select.select([self._read], [], [], min(left, 0.5))
            if ready:
                chunk = os.read(self._read, 1 << 20)
                if not chunk:
                    continue
                self._buffer += chunk
                *messages, self._buffer = self._buffer.split(b"\0")
                for raw in messages:
                    self._dispatch(json.loads(raw))

    def _dispatch(self, message: dict) -> None:
        if "id" in message:
            self._replies[message["id"]] = message
            return
        page = self.pages.get(message.get("sessionId", ""))
        method, params = message.get("method"), message.get("params", {})
        if page is None:
            return
        if method == "Page.loadEventFired":
            self.loaded.add(page.session)
        elif method == "Network.requestWillBeSent":
            page.requests.append(params["request"]["url"])
        elif method == "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
            page.console.append((params.get("type", ""), text))
        elif method == "Runtime.exceptionThrown":
            page.console.append(("exception", json.dumps(params.get("exceptionDetails", {}))[:2000]))
        elif method == "Log.entryAdded":
            entry = params.get("entry", {})
            page.console.append((entry.get("level", ""), entry.get("text", "")))

    def new_page(self, width: int | None = None, height: int | None = None) -> Page:
        """A fresh tab on about:blank, its requests, console and log recorded from the start."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session)
        self.pages[session] = page
        for domain in ("Page", "Network", "Runtime", "Log"):
            page.send(f"{domain}.enable")
        w, h = width or self.size[0], height or self.size[1]
        page.send("Emulation.setDeviceMetricsOverride", width=w, height=h, deviceScaleFactor=1, mobile=False)
        return page
