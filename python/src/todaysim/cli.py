"""`todaysim-explore URL [--examples N] [--seed S] [--steps K] [--shrink-seconds T] [--fresh-pages] [--timings] [--junit FILE] [--export FILE]`

Explores the page at URL (a Today Page that loads todaysim's /bridge.js from the `todaysim`
and `session` query parameters it is given, as examples/today-page does) with the
explorer of `todaysim.explore`, against the server at `TODAYSIM_URL` (its token in
`TODAYSIM_TOKEN`), else a server it starts from `TODAYSIM_BIN` or `todaysim` on PATH, in
headless Chromium (`TODAYSIM_BROWSER`, else Playwright's own, else `chromium-headless-shell` or `chromium`
on PATH).

Exit 0 when N examples found no breach; 1 with the minimal scenario printed (and written as
JUnit and as the failing session's export when asked); 2 when it could not explore (usage, no
server, no browser, a page that never settles).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING, Optional

from .browser import browser_executable
from .client import Client, TodaysimError

if TYPE_CHECKING:
    from .explore import Found
from .page import SettleTimeout, check_origin
from .server import Server


EPILOG = """environment:
  TODAYSIM_URL      a running todaysim to use (e.g. http://127.0.0.1:8080; it must be started with
                    --allow-origin <the page's origin>, e.g. Scripts/run --allow-origin http://127.0.0.1:5173)
  TODAYSIM_TOKEN    its token, when it was started with --token
  TODAYSIM_BIN      else: the todaysim binary to start (default: todaysim on PATH), on a free port
                    with its sessions in memory and any page origin allowed
  TODAYSIM_BROWSER  the Chromium to drive (default: Playwright's own when installed, else
                    chromium-headless-shell or chromium on PATH; apt-get install chromium-headless-shell)

exit status: 0 no breach found, 1 a breach (the minimal scenario printed), 2 could not explore"""


def junit(found: Found, seconds: float) -> bytes:
    suites = ET.Element("testsuites", name="todaysim-explore", tests="1", failures="1" if found.breach else "0",
                        time=f"{seconds:.3f}")
    suite = ET.SubElement(suites, "testsuite", name="todaysim-explore", tests="1", failures="1" if found.breach else "0",
                          time=f"{seconds:.3f}")
    case = ET.SubElement(suite, "testcase", classname="todaysim-explore", name=f"explore {found.page_url}", time=f"{seconds:.3f}")
    if found.breach:
        failure = ET.SubElement(case, "failure", type=",".join(dict.fromkeys(found.codes)), message=str(found.breach).splitlines()[1])
        failure.text = found.describe()
    else:
        ET.SubElement(case, "system-out").text = found.describe()
    document: bytes = ET.tostring(suites, encoding="utf-8", xml_declaration=True)
    return document


def main(argv: Optional[list[str]] = None) -> int:
    try:  # the explorer's own dependencies come with the extra, not with the client
        from .explore import explore
    except ImportError as missing:
        print(f"todaysim-explore needs the explorer's dependencies ({missing.name or missing}): "
              "pip install 'todaysim[explore]'", file=sys.stderr)
        return 2
    parser = argparse.ArgumentParser(prog="todaysim-explore", description="Find Today Page contract breaches nobody scripted.",
                                     epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("url", help="the page under test")
    parser.add_argument("--examples", type=int, default=100, help="examples to try (default 100)")
    parser.add_argument("--seed", type=int, default=None, help="a seed, for the same examples every run")
    parser.add_argument("--steps", type=int, default=10, help="steps an example takes at most (default 10)")
    parser.add_argument("--shrink-seconds", type=float, default=120,
                        help="how long the explorer shrinks a breach, replaying shorter scenarios (default 120)")
    parser.add_argument("--fresh-pages", action="store_true",
                        help="a new browser context and page for every example (default: one page, cleared between examples)")
    parser.add_argument("--timings", action="store_true",
                        help="print where the examples' time went (each part of an example, the requests and CDP commands in it)")
    parser.add_argument("--junit", metavar="FILE", help="write the outcome as JUnit XML")
    parser.add_argument("--export", metavar="FILE", help="write the failing session's export (replays without a page)")
    options = parser.parse_args(argv)
    if options.examples < 1 or options.steps < 1:
        parser.error("--examples and --steps must be at least 1")

    server = None
    try:
        if os.environ.get("TODAYSIM_URL"):
            client = Client(os.environ["TODAYSIM_URL"], token=os.environ.get("TODAYSIM_TOKEN") or None)
        else:
            server = Server().start()
            client = server.client()
        client.health()
        check_origin(client, options.url)  # before a browser starts: a refused origin is named at once
        from playwright.sync_api import sync_playwright

        started = time.monotonic()
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=browser_executable(playwright))
            try:
                found = explore(options.url, client, browser, examples=options.examples, seed=options.seed, steps=options.steps,
                                shrink_seconds=options.shrink_seconds, fresh_pages=options.fresh_pages)
            finally:
                browser.close()
        seconds = time.monotonic() - started
    except (TodaysimError, SettleTimeout, RuntimeError) as error:
        print(f"todaysim-explore: could not explore {options.url}: {error}", file=sys.stderr)
        return 2
    finally:
        if server is not None:
            server.stop()
    print(found.describe())
    print(f"({found.tally}; {seconds:.1f} s)")
    if options.timings and found.timings is not None:
        print("\n".join(found.timings.lines(found.examples)))
    if options.junit:
        with open(options.junit, "wb") as file:
            file.write(junit(found, seconds))
    if options.export and found.export is not None:
        with open(options.export, "w", encoding="utf-8") as file:
            json.dump(found.export, file, indent=1)
        print(f"the failing session's export: {options.export} (replay it with Client.replay, or POST it as "
              f"create + steps)")
    return 1 if found.breach else 0


if __name__ == "__main__":
    sys.exit(main())
