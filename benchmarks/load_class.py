"""A class on a Space (`python benchmarks/load.py --class 10`): Chromium pages decoding in the page, each clicking
Run, Step, Back and Reset; the server's decoding requests and CPU seconds meanwhile."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path


def cpu_s(pid: int) -> float:
    """The CPU seconds a process has used (user and system), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class ClassResult:
    pages: int
    clicks: int  # Run, Step, Back and Reset clicks, every page together
    requests: int  # decoding requests the server got meanwhile (its queue's joins)
    cpu_s: float  # the server's CPU seconds meanwhile
    wall_s: float
    idle_cpu_s: float  # the server's CPU seconds in as long with the pages open and nobody clicking


EXPLAINS = "() => /explains in this page/.test(document.querySelector('.road-line')?.textContent)"
CLASS_SOURCES = ("Wie geht es dir heute?", "Das Haus ist alt.", "Ich habe Hunger.", "Er kommt morgen.")
CLICKS = ("Run", "Back", "Back", "Step", "Reset", "Step")  # what each page clicks, in turn


def clicked(page, names: tuple[str, ...]) -> int:
    """Click each of the step loop's buttons `names` in turn, each once the page holds the decoding the one before
    made; how many."""
    for name in names:
        held = page.evaluate("() => JSON.stringify(window.attentionLab.key)")
        page.get_by_role("button", name=name, exact=True).click()
        page.wait_for_function(f"() => JSON.stringify(window.attentionLab.key) !== {held!r}", timeout=120_000)
    return len(names)


def class_test(
    url: str, pid: int, pages: int = 10, rounds: int = 3, road: str = "page", tab: str | None = None
) -> ClassResult:
    """A class on a Space: `pages` Chromium pages, each decoding in the page once its copy has loaded (`road`
    "server": each decoding on the server, as ?road=server asks), click Run, Back, Back, Step, Reset and Step on a
    sentence of their own `rounds` times; the server's decoding requests and CPU seconds while they do (their
    opening and loading left out). With `tab` (a title: Why, Flow...), each page has that tab open, and on the page's
    road explains it itself."""
    import shutil as which

    from playwright.sync_api import sync_playwright

    args = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
    args += ["--disable-sync", "--no-first-run", "--disable-quic"]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=which.which("chromium") or "/usr/bin/chromium", args=args)
        opened, requests = [], []
        for i in range(pages):
            page = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
            page.goto(url if road == "page" else url + "?road=server")
            page.wait_for_function(f"() => document.body.dataset.road === {road!r}", timeout=300_000)
            if tab:
                page.get_by_role("tab", name=tab, exact=True).click()
                if road == "page":
                    page.wait_for_function(EXPLAINS, timeout=300_000)
            page.get_by_label("Source").fill(CLASS_SOURCES[i % len(CLASS_SOURCES)])
            opened.append(page)
        time.sleep(3)  # the typing's own redraws answered
        for page in opened:
            page.on("request", lambda r: requests.append(r.url) if "/queue/join" in r.url else None)
        cpu, began = cpu_s(pid), time.perf_counter()
        time.sleep(10)
        idle_per_s = (cpu_s(pid) - cpu) / (time.perf_counter() - began)
        cpu, began, clicks = cpu_s(pid), time.perf_counter(), 0
        for _ in range(rounds):
            for page in opened:
                clicks += clicked(page, CLICKS)
        wall = time.perf_counter() - began
        result = ClassResult(pages, clicks, len(requests), cpu_s(pid) - cpu, wall, idle_per_s * wall)
        browser.close()
    return result


TOUR = (
    "Attention",
    "Beams",
    "Compare",
    "Beam tree",
    "Why",
    "Flow",
    "Patch",
    "Trust",
    "Heads",
    "Training",
    "Survey",
    "Two models",
)  # every tab, as the app lays them out


@dataclass
class TourResult:
    pages: int
    clicks: int  # Run, Step, Back and Reset clicks, and tab openings, every page together
    requests: dict[str, int]  # the server's queue joins while each tab was open, every page together
    cpu_s: float  # the server's CPU seconds meanwhile
    wall_s: float

    def said(self) -> str:
        return (
            f"{self.pages} pages decoding in the page, each through every tab: {self.clicks} clicks and tab openings "
            f"in {self.wall_s:.1f} s, {self.cpu_s:.2f} server CPU s; requests to the server while each tab was open: "
            + ", ".join(f"{tab} {n}" for tab, n in self.requests.items())
        )


def class_tour(url: str, pid: int, pages: int = 10, tabs: tuple[str, ...] = TOUR) -> TourResult:
    """A class going through every tab: `pages` Chromium pages on the page's road (each waits for its copy and its
    explanations' graphs), each opening every tab in turn and clicking Run, Back, Back, Step, Reset and Step with it
    open, on a sentence of its own; the server's queue joins while each tab was open, and its CPU seconds (the
    pages' opening and loading left out)."""
    import shutil as which

    from playwright.sync_api import sync_playwright

    args = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
    args += ["--disable-sync", "--no-first-run", "--disable-quic"]
    requests: dict[str, int] = dict.fromkeys(tabs, 0)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=which.which("chromium") or "/usr/bin/chromium", args=args)
        opened = []
        for i in range(pages):
            page = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
            page.goto(url)
            page.wait_for_function("() => document.body.dataset.road === 'page'", timeout=300_000)
            ready = "() => window.attentionLabRoad?.explaining.get(document.querySelector('#lab-model input').value)"
            page.wait_for_function(f"{ready} === 'ready'", timeout=300_000)
            page.get_by_label("Source").fill(CLASS_SOURCES[i % len(CLASS_SOURCES)])
            opened.append(page)
        time.sleep(3)  # the typing's own redraws answered
        now = {"tab": tabs[0]}
        for page in opened:
            page.on(
                "request",
                lambda r: (
                    requests.__setitem__(now["tab"], requests[now["tab"]] + 1) if "/queue/join" in r.url else None
                ),
            )
        cpu, began, clicks = cpu_s(pid), time.perf_counter(), 0
        for tab in tabs:
            now["tab"] = tab
            for page in opened:
                page.get_by_role("tab", name=tab, exact=True).click()
                clicks += 1
                clicks += clicked(page, CLICKS)
        wall = time.perf_counter() - began
        result = TourResult(pages, clicks, requests, cpu_s(pid) - cpu, wall)
        browser.close()
    return result
