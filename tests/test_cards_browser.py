"""The robustness cards in a real browser: headless Chromium, driven over the Chrome DevTools
Protocol, opens the index and a card of a small hand-made run and checks that no script error is
logged, that every image loaded, and that clicking a header sorts the index (numbers numerically,
empty cells last). Screenshots go to the test's folder and to /tmp/cards-shots/."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from vlstress.record import write_record
from vlstress.suites.findings.cards import page_name

from test_findings_cards import OBJECTS, _cards, _record, _summary, _write_run

pytestmark = pytest.mark.slow

CHROMIUM = "/usr/bin/chromium"
SHOTS = Path("/tmp/cards-shots")


def _chromium() -> str:
    """The browser; installed with apt when missing and this runs as root, else the test skips."""
    found = shutil.which("chromium") or (CHROMIUM if Path(CHROMIUM).exists() else None)
    if found:
        return found
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        pytest.skip("Chromium (Debian package `chromium`) is not installed and cannot be installed")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-q", "chromium"]
    done = subprocess.run(install, capture_output=True, text=True, timeout=900, env=env)
    if done.returncode != 0:  # a fresh machine may have no package lists yet
        subprocess.run(["apt-get", "update", "-q"], capture_output=True, timeout=900, env=env)
        done = subprocess.run(install, capture_output=True, text=True, timeout=900, env=env)
    if done.returncode != 0 or not Path(CHROMIUM).exists():
        pytest.skip(f"`apt-get install -y chromium` failed: {done.stderr[-500:]}")
    return CHROMIUM


class Browser:
    """One page of a headless Chromium, over the DevTools websocket: commands, and the errors the
    page reports (console errors, uncaught exceptions, failed loads)."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.next_id = 0
        self.errors: list[str] = []
        self.events: list[dict] = []

    async def send(self, method: str, **params: Any) -> dict:
        self.next_id += 1
        mine = self.next_id
        await self.ws.send_json({"id": mine, "method": method, "params": params})
        while True:
            message = json.loads((await asyncio.wait_for(self.ws.receive(), 30)).data)
            if message.get("id") == mine:
                if "error" in message:
                    raise AssertionError(f"{method}: {message['error']}")
                return message.get("result", {})
            self._event(message)

    def _event(self, message: dict) -> None:
        self.events.append(message)
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.exceptionThrown":
            self.errors.append(json.dumps(params["exceptionDetails"])[:500])
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append(json.dumps(params["args"])[:500])
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            self.errors.append(params["entry"].get("text", "")[:500])

    async def open(self, url: str) -> None:
        self.events.clear()
        await self.send("Page.navigate", url=url)
        deadline = time.monotonic() + 30
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            assert time.monotonic() < deadline, f"{url} did not load"
            self._event(json.loads((await asyncio.wait_for(self.ws.receive(), 30)).data))

    async def value(self, expression: str) -> Any:
        found = await self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        assert "exceptionDetails" not in found, found
        return found["result"].get("value")

    async def screenshot(self, path: Path) -> None:
        size = await self.value(
            "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]"
        )
        shot = await self.send(
            "Page.captureScreenshot",
            format="png",
            captureBeyondViewport=True,
            clip={"x": 0, "y": 0, "width": size[0], "height": min(size[1], 6000), "scale": 1},
        )
        path.write_bytes(base64.b64decode(shot["data"]))


async def _devtools(binary: str, profile: Path, work) -> None:
    import aiohttp

    process = subprocess.Popen(
        [
            binary,
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--allow-file-access-from-files",
            "--remote-debugging-port=0",
            f"--user-data-dir={profile}",
            "--window-size=1400,1000",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (port_file.exists() and port_file.read_text().strip()):
            assert process.poll() is None, "Chromium exited at start"
            assert time.monotonic() < deadline, "Chromium opened no DevTools port"
            await asyncio.sleep(0.2)
        port = port_file.read_text().split()[0]
        async with aiohttp.ClientSession() as session:
            async with session.get(f"http://127.0.0.1:{port}/json/list") as response:
                targets = await response.json()
            page = next(t for t in targets if t["type"] == "page")
            async with session.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0) as ws:
                browser = Browser(ws)
                for domain in ("Page", "Runtime", "Log"):
                    await browser.send(f"{domain}.enable")
                await work(browser)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()


IMAGES_LOADED = (
    "Array.from(document.images).map(i => [i.complete, i.naturalWidth, i.naturalHeight])"
)


def _column(header: str) -> str:
    """JS: the data-value of each body row's cell in the column whose header starts with
    `header`, in the table's current order."""
    return (
        "(() => { const t = document.getElementById('models');"
        " const i = Array.from(t.tHead.rows[0].cells)"
        f".findIndex(c => c.textContent.startsWith({json.dumps(header)}));"
        " return Array.from(t.tBodies[0].rows).map(r => r.cells[i].getAttribute('data-value'));"
        " })()"
    )


def _click(header: str) -> str:
    return (
        "Array.from(document.querySelectorAll('#models th'))"
        f".find(c => c.textContent.startsWith({json.dumps(header)})).click()"
    )


def test_cards_work_in_a_browser(tmp_path):
    pytest.importorskip("aiohttp", reason="the DevTools client uses aiohttp's websocket client")
    binary = _chromium()
    paths = _write_run(tmp_path)
    # a model without any zero-shot number: its cell in that column is empty
    for path in [p for p in paths if p.parent.name == "vit-rand+ft" and "zeroshot" in p.name]:
        paths.remove(path)
    # 1 of 14 (7.1%): as text, "7.14" would sort above "57.1"
    zeroshot = {"top1": 100 / 14}
    path = next(p for p in paths if p.parent.name == "vit-rand" and p.stem == "zeroshot-objects")
    write_record(path, _record("vit-rand", "zeroshot", OBJECTS, {}, zeroshot))
    assert _cards(tmp_path, paths, _summary(tmp_path, paths)) == 0
    cards = tmp_path / "results" / "cards"
    SHOTS.mkdir(parents=True, exist_ok=True)
    found: dict[str, Any] = {}

    async def work(browser: Browser) -> None:
        await browser.open((cards / "index.html").as_uri())
        found["index images"] = await browser.value(IMAGES_LOADED)
        found["zero-shot"] = await browser.value(_column("zero-shot classification"))
        await browser.value(_click("model"))
        found["models sorted"] = await browser.value(_column("model"))
        await browser.value(_click("model"))
        found["models reversed"] = await browser.value(_column("model"))
        # by kind of weights: `checkpoint` first, the model without a zero-shot cell
        await browser.value(_click("weights"))
        found["by weights"] = await browser.value(_column("weights"))
        await browser.value(_click("zero-shot classification"))  # higher is better: best first
        found["zero-shot sorted"] = await browser.value(_column("zero-shot classification"))
        await browser.value(_click("zero-shot classification"))
        found["zero-shot reversed"] = await browser.value(_column("zero-shot classification"))
        await browser.screenshot(tmp_path / "index.png")
        # the card of a model whose name has a `+`, through the index's link
        ft = await browser.value(
            "Array.from(document.querySelectorAll('#models a'))"
            ".find(a => a.textContent.startsWith('vit-rand+ft')).href"
        )
        await browser.open(ft)
        found["ft card"] = await browser.value("document.querySelector('h1').textContent")
        await browser.open((cards / page_name("vit-rand")).as_uri())
        found["card images"] = await browser.value(IMAGES_LOADED)
        found["card links"] = await browser.value(
            "Array.from(document.querySelectorAll('a.record')).map(a => a.href)"
        )
        found["provenance"] = await browser.value(
            "JSON.parse(document.getElementById('provenance').textContent).step"
        )
        await browser.screenshot(tmp_path / "card.png")
        found["errors"] = list(browser.errors)

    asyncio.run(_devtools(binary, tmp_path / "profile", work))
    for name in ("index.png", "card.png"):
        shutil.copyfile(tmp_path / name, SHOTS / name)

    assert found["errors"] == []
    assert found["index images"] == []  # the index has no figure
    assert len(found["card images"]) == 1
    assert all(done and width > 0 and height > 0 for done, width, height in found["card images"])
    # 8 of 14 > 1 of 14, numerically; the model without a value stays last either way
    assert [v[:4] if v else v for v in found["zero-shot sorted"]] == ["57.1", "7.14", ""]
    assert [v[:4] if v else v for v in found["zero-shot reversed"]] == ["7.14", "57.1", ""]
    assert sorted(found["zero-shot"], key=str) == sorted(found["zero-shot sorted"], key=str)
    assert found["models sorted"] == sorted(found["models sorted"], key=str.lower)
    assert found["models reversed"] == found["models sorted"][::-1]
    assert found["by weights"] == ["checkpoint", "hub", "random-init"]
    assert len(found["card links"]) == 5 and all(
        link.startswith("file://") and Path(link[len("file://") :]).is_file()
        for link in found["card links"]
    )
    assert found["provenance"] == "cards"
    assert "vit-rand+ft" in found["ft card"]
    assert "fine-tuned from a random-init base" in found["ft card"]
