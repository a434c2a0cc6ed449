"""Where an explorer example's time goes: runs N ten-step examples (the fixed ten steps of
systemtests/test_bench_explore.py) on the fixture Today Page as the explorer runs them, and
prints, for each phase, its calls and milliseconds per example.

    python tools/explore_breakdown.py [--examples N] [--fresh] [BIN]

BIN is the todaysim binary (default: TODAYSIM_BIN, else todaysim on PATH); the browser is
TODAYSIM_BROWSER, else /usr/bin/chromium. `--fresh` makes a browser context and page per example
(the explorer's `fresh_pages=True`, how every example ran before pages were reused); without it
one context and page serve the examples, cleared between them (`todaysim.explore.Pages`).

Phases: the page (a new context and page, or the clearing of the one before), the session
(create, and delete at the end), the load (the clock paused, the init script, `goto`), the
load's first settle, and each step: an input (its request, its settle) or a clock move (its
clock requests, the page clock's runs, its settles). The line `rest` is what no phase holds.
"""
from __future__ import annotations

import argparse
import functools
import http.server
import os
import sys
import threading
import time
from collections import defaultdict
from typing import Any, Callable, Iterator, TypeVar

from playwright.sync_api import sync_playwright
from playwright.sync_api._generated import Clock  # not exported by playwright.sync_api

from todaysim import Server
from todaysim.client import Client
from todaysim.explore import Pages, explore
from todaysim.page import BridgedPage

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TEN_STEPS: list[dict[str, Any]] = [
    {"gesture": {"type": "pull"}}, {"clock": {"advanceMs": 5000}}, {"lifecycle": {"type": "background"}},
    {"clock": {"advanceMs": 5001}}, {"lifecycle": {"type": "foreground"}}, {"clock": {"advanceMs": 999}},
    {"lifecycle": {"type": "tabActivated"}}, {"clock": {"advanceMs": 12001}}, {"gesture": {"type": "pull"}},
    {"clock": {"advanceMs": 200}}]
F = TypeVar("F", bound=Callable[..., Any])


class Timer:
    """Seconds and calls per phase; `where` names the step a settle or a request belongs to."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self.where = "load"

    def add(self, phase: str, seconds: float) -> None:
        self.seconds[phase] += seconds
        self.calls[phase] += 1

    def timed(self, name: str, function: F) -> F:
        """`function`, its time added to `<where> <name>` (or `name` where it starts with '!')."""
        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            began = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.add(name[1:] if name.startswith("!") else f"{self.where}: {name}", time.perf_counter() - began)
        return wrapper  # type: ignore[return-value]


def serve_fixture() -> tuple[http.server.ThreadingHTTPServer, str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    pages = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(
        Quiet, directory=os.path.join(ROOT, "examples", "today-page")))
    threading.Thread(target=pages.serve_forever, daemon=True).start()
    return pages, f"http://127.0.0.1:{pages.server_address[1]}/index.html"


def run(client: Client, browser: Any, url: str, examples: int, fresh: bool, explorer: bool = False) -> tuple[Timer, float, int]:
    """Runs the examples with every phase timed; returns the timer, the wall seconds in all and
    the examples run."""
    timer = Timer()
    # Wrapped where the explorer's code calls them: the class methods, for every instance.
    patches: list[tuple[Any, str, Any]] = []

    def patch(owner: Any, name: str, label: str) -> None:
        original = getattr(owner, name)
        patches.append((owner, name, original))
        setattr(owner, name, timer.timed(label, original))

    def load(open_page: Callable[[Pages], BridgedPage]) -> Callable[[Pages], BridgedPage]:
        def opened(pages: Pages) -> BridgedPage:
            timer.where = "load"
            began = time.perf_counter()
            try:
                return open_page(pages)
            finally:
                timer.add("load (clock, init script, goto) and first settle", time.perf_counter() - began)
                timer.where = "between steps"
        return opened

    def stepped(step: Callable[..., Any]) -> Callable[..., Any]:
        def one(page: BridgedPage, element: dict[str, Any], settled: bool = False) -> Any:
            timer.where = "clock move" if "clock" in element else "input"
            began = time.perf_counter()
            try:
                return step(page, element, settled)
            finally:
                seconds = time.perf_counter() - began
                timer.add(f"{timer.where}: in all", seconds)
                (kind, body), = element.items()
                timer.add(f"by step: {kind} {body.get('type', '')}".rstrip(), seconds)
                timer.where = "between steps"
        return one

    timed = [(BridgedPage, "settle", "settle"), (Clock, "run_for", "page clock run"), (Clock, "pause_at", "page clock set"),
             (BridgedPage, "_run_page_to", "page clock run"), (BridgedPage, "_wait", "settle's wait"),
             (BridgedPage, "_probe", "settle's look"), (client, "read_session", "settle's read"),
             (Clock, "set_system_time", "page clock set"), (client, "clock", "clock request"),
             (client, "steps", "input request"), (client, "report", "report"),
             (client, "create_session", "!session create"), (client, "delete_session", "!session delete"),
             (Pages, "_new_context", "!page: new context and page"), (Pages, "clear", "!page: cleared for the next example"),
             (Pages, "discard", "!page: context closed")]
    for owner, name, label in timed:
        if hasattr(owner, name):  # `_wait` and `_run_page_to` are newer than the rest
            patch(owner, name, label)
    for owner, name, wrap in ((Pages, "open", load), (BridgedPage, "step", stepped)):
        patches.append((owner, name, getattr(owner, name)))
        setattr(owner, name, wrap(getattr(owner, name)))
    began = time.perf_counter()
    try:
        if explorer:
            found = explore(url, client, browser, examples=examples, seed=1, fresh_pages=fresh)
            examples = found.examples
        else:
            pages = Pages(browser, client, url, fresh=fresh)
            for _ in range(examples):
                page = pages.open()
                for step in TEN_STEPS:
                    page.step(step, settled=True)
                pages.close(page)
                client.delete_session(page.session_id)
            pages.discard()
    finally:
        for owner, name, original in reversed(patches):
            setattr(owner, name, original)
    return timer, time.perf_counter() - began, examples


def table(timer: Timer, wall: float, examples: int) -> Iterator[str]:
    # What a phase's total holds: the load's line holds the session, the page's and the load's
    # own settle; a step's `in all` holds its requests and settles.
    load = timer.seconds["load (clock, init script, goto) and first settle"]
    # (the page's clearing and closing happen when an example ends, not in the load)
    inner = sum(v for k, v in timer.seconds.items() if (k.startswith("load: ") and "settle's" not in k)
                or k in ("page: new context and page", "session create"))
    timer.seconds["load: goto and the rest"] = max(0.0, load - inner)
    timer.calls["load: goto and the rest"] = timer.calls["load (clock, init script, goto) and first settle"]
    shown = ["page: new context and page", "page: cleared for the next example", "page: context closed",
             "session create", "session delete", "load: page clock set", "load: settle", "load: goto and the rest",
             "input: input request", "input: settle", "input: settle's wait", "input: settle's look", "input: settle's read",
             "input: in all", "clock move: clock request", "clock move: page clock run", "clock move: settle",
             "clock move: settle's wait", "clock move: settle's look", "clock move: settle's read", "clock move: in all",
             "between steps: report", "between steps: settle"]
    yield f"{'phase':40} {'calls/example':>13} {'ms/example':>10} {'ms/call':>8}"
    accounted = 0.0
    for phase in shown:
        seconds, calls = timer.seconds.get(phase, 0.0), timer.calls.get(phase, 0)
        if not calls:
            continue
        if not phase.startswith(("input: ", "clock move: ")) or phase.endswith("in all"):
            accounted += seconds
        yield f"{phase:40} {calls / examples:>13.1f} {seconds * 1000 / examples:>10.1f} {seconds * 1000 / calls:>8.1f}"
    yield f"{'rest':40} {'':>13} {(wall - accounted) * 1000 / examples:>10.1f}"
    yield f"{'one example in all':40} {'':>13} {wall * 1000 / examples:>10.1f}   ({examples / wall:.2f} examples a second)"
    yield "the steps' time by step (the same time as the input and clock move lines):"
    for phase in sorted((p for p in timer.seconds if p.startswith("by step: ")), key=lambda p: -timer.seconds[p]):
        seconds, calls = timer.seconds[phase], timer.calls[phase]
        yield f"{phase:40} {calls / examples:>13.1f} {seconds * 1000 / examples:>10.1f} {seconds * 1000 / calls:>8.1f}"



def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("binary", nargs="?", default=os.environ.get("TODAYSIM_BIN") or "todaysim")
    parser.add_argument("--examples", type=int, default=20)
    parser.add_argument("--fresh", action="store_true", help="a new browser context and page per example")
    parser.add_argument("--explorer", action="store_true",
                        help="the explorer's own examples (explore(), seed 1, on the conforming page) instead of the ten steps")
    options = parser.parse_args(argv)
    fixture, url = serve_fixture()
    try:
        with Server(options.binary) as server, server.client() as client, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=os.environ.get("TODAYSIM_BROWSER") or "/usr/bin/chromium")
            try:
                run(client, browser, url, 2, options.fresh)  # warm: the first pages load everything
                timer, wall, examples = run(client, browser, url, options.examples, options.fresh, options.explorer)
            finally:
                browser.close()
    finally:
        fixture.shutdown()
    load = os.getloadavg()
    kind = "of the explorer's examples (seed 1)" if options.explorer else "ten-step examples"
    print(f"{examples} {kind}, {'a new context and page each' if options.fresh else 'one page, cleared between examples'}"
          f" (load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}):")
    for line in table(timer, wall, examples):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
