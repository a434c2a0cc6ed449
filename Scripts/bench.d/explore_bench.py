"""Scripts/bench --explore: how fast the explorer (python/, todaysim.explore) is, unseeded.

- examples per second on the conforming fixture page (EXAMPLES examples, each a session of its
  own on the page the explorer reuses, cleared between examples, up to 10 rules, a settle after
  each step), and one 10-step example's time, run as the explorer runs it;
- for each planted bug (examples/today-page/index.html?bug=NAME): the example it was
  first found in, the examples in all (the rest shrank it), seconds to find and shrink, and the
  shrunk scenario's length beside the shortest known.

Usage: explore_bench.py BIN   (the todaysim binary; TODAYSIM_BROWSER the Chromium; BENCH_EXAMPLES;
BENCH_FRESH_PAGES=1 for a new browser context and page per example, as before pages were reused)
Prints a table and the load average; exits 1 if a planted bug was not found within the default
budget (100).
"""
import functools
import http.server
import os
import sys
import threading
import time

from playwright.sync_api import sync_playwright

from todaysim import Server
from todaysim.explore import Pages, explore

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHORTEST = {"busy-drop": 2, "pull-header": 1, "double": 1, "render-first": 1, "background-drop": 4, "stale-reload-id": 3,
            "foreground-replace": 5}
TEN_STEPS = [{"gesture": {"type": "pull"}}, {"clock": {"advanceMs": 5000}}, {"lifecycle": {"type": "background"}},
             {"clock": {"advanceMs": 5001}}, {"lifecycle": {"type": "foreground"}}, {"clock": {"advanceMs": 999}},
             {"lifecycle": {"type": "tabActivated"}}, {"clock": {"advanceMs": 12001}}, {"gesture": {"type": "pull"}},
             {"clock": {"advanceMs": 200}}]
RUNS = 15


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def main(binary):
    examples = int(os.environ.get("BENCH_EXAMPLES", "50"))
    pages = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(
        Quiet, directory=os.path.join(ROOT, "examples", "today-page")))
    threading.Thread(target=pages.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{pages.server_address[1]}/index.html"
    missed = []
    with Server(binary) as server, server.client() as client, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=os.environ.get("TODAYSIM_BROWSER") or "/usr/bin/chromium")
        # One 10-step example by hand, as the explorer runs it: a session of its own and the page
        # (`Pages`: reused and cleared, or a new context with BENCH_FRESH_PAGES=1); the steps,
        # each settled (a clock move from the settle before it); the verdict from the settled
        # view's violation count (the report is read only on a breach).
        fresh = os.environ.get("BENCH_FRESH_PAGES") == "1"
        pages = Pages(browser, client, url, fresh=fresh)
        times = []
        for _ in range(RUNS):
            began = time.monotonic()
            page = pages.open()
            for step in TEN_STEPS:
                page.step(step, settled=True)
                if page.view["counts"]["violations"]:
                    client.report(page.session_id)
            pages.close(page)
            client.delete_session(page.session_id)
            times.append(time.monotonic() - began)
        pages.discard()
        times.sort()
        how = "a new context and page" if fresh else "the page reused, cleared"
        print(f"one 10-step example (a session of its own, {how}; a settle after each step): "
              f"median {times[RUNS // 2] * 1000:.0f} ms (min {times[0] * 1000:.0f}, max {times[-1] * 1000:.0f}) over {RUNS}")
        began = time.monotonic()
        found = explore(url, client, browser, examples=examples, fresh_pages=fresh)
        seconds = time.monotonic() - began
        print(f"conforming page: {found.examples} examples in {seconds:.1f} s = {found.examples / seconds:.2f} examples a second"
              f" ({'clean' if found.breach is None else 'BREACH: ' + ','.join(found.codes)})")
        print(f"{'bug':16} {'code':5} {'found in':>8} {'examples':>8} {'seconds':>8} {'steps':>5} {'shortest':>8}")
        for bug, shortest in SHORTEST.items():
            began = time.monotonic()
            found = explore(f"{url}?bug={bug}", client, browser, examples=100, fresh_pages=fresh)
            seconds = time.monotonic() - began
            if found.breach is None:
                missed.append(bug)
                print(f"{bug:16} {'-':5} {'-':>8} {found.examples:>8} {seconds:>8.1f} {'-':>5} {shortest:>8}  NOT FOUND")
                continue
            print(f"{bug:16} {','.join(dict.fromkeys(found.codes)):5} {found.found_after:>8} {found.examples:>8} "
                  f"{seconds:>8.1f} {len(found.steps):>5} {shortest:>8}  {found.steps}")
        browser.close()
    print("load average: " + " ".join(f"{load:.2f}" for load in os.getloadavg()))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
