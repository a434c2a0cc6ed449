"""A page in headless Chromium (Playwright's sync API driving TODAYSIM_BROWSER, else Playwright's
own Chromium, else Debian's `chromium`): what Scripts/open-page runs, with the tests' venv (the
package installed: `todaysim.plugin.browser_executable` picks the browser).

    open_page.py URL                      the page stays open, its console on stdout, until
                                          SIGINT or SIGTERM
    open_page.py --screenshot OUT.png [--size 1440x900] [--full-page] [--wait JS] URL
                                          a PNG of the page once it has settled

A screenshot waits (up to --timeout s) until the page is loaded and, where the page says so,
settled (`<html data-settled="true">`, which the dashboard sets once the open session is all on
the page), or until the JS expression given with --wait is true. Not `chromium --screenshot` or
a virtual-time budget: virtual time stands still while any fetch is pending, and a page's event
stream is a fetch that never ends.
"""
from __future__ import annotations

import argparse
import signal
import sys
from types import FrameType
from typing import Optional

from playwright.sync_api import ConsoleMessage, Error, Page, sync_playwright
from todaysim.plugin import browser_executable

SETTLED = ("document.readyState === 'complete' && "
           "(document.documentElement.dataset.settled ?? 'true') === 'true'")


def keep_open(page: Page, url: str) -> int:
    stop: list[int] = []

    def stopping(number: int, frame: Optional[FrameType]) -> None:
        stop.append(number)

    signal.signal(signal.SIGTERM, stopping)
    signal.signal(signal.SIGINT, stopping)
    page.on("console", lambda message: print(f"console.{message.type}: {message.text}", flush=True))
    page.on("pageerror", lambda error: print(f"page error: {error}", flush=True))
    page.goto(url, wait_until="commit")
    print(f"open-page: {url} is open in headless Chromium (its console follows); Ctrl-C closes it", flush=True)
    while not stop:  # the page's events are delivered while Playwright waits
        page.wait_for_timeout(200)
    return 0


def screenshot(page: Page, url: str, out: str, full_page: bool, wait: str, timeout: float) -> int:
    page.goto(url, wait_until="commit")
    try:
        page.wait_for_function(f"() => {{ try {{ return !!({wait}); }} catch (e) {{ return false; }} }}",
                               polling=100, timeout=timeout * 1000)
    except Error as error:
        print(f"open-page: the page did not settle in {timeout:g} s ({wait}): {error}", file=sys.stderr)
        return 1
    page.screenshot(path=out, full_page=full_page)
    print(out)
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="Scripts/open-page", description="a page in headless Chromium")
    parser.add_argument("url")
    parser.add_argument("--screenshot", metavar="OUT.png", help="save a PNG of the page once it has settled, then exit")
    parser.add_argument("--size", default="1440x900", help="window WIDTHxHEIGHT (default 1440x900)")
    parser.add_argument("--full-page", action="store_true", help="the whole page, not the window only")
    parser.add_argument("--wait", default=SETTLED, help="JS expression to wait for before the screenshot "
                                                        "(default: loaded, and settled where the page says so)")
    parser.add_argument("--timeout", type=float, default=60, help="seconds to wait for it (default 60)")
    options = parser.parse_args(argv)
    width, height = (int(n) for n in options.size.lower().split("x"))
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=browser_executable(playwright), handle_sigint=False,
                                             handle_sigterm=False, handle_sighup=False)
        try:
            page = browser.new_page(viewport={"width": width, "height": height}, is_mobile=width < 600)
            if options.screenshot:
                return screenshot(page, options.url, options.screenshot, options.full_page, options.wait, options.timeout)
            return keep_open(page, options.url)
        finally:
            browser.close()
            if not options.screenshot:
                print("open-page: closed", flush=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
