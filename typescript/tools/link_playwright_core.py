#!/usr/bin/env python3
"""Links typescript/node_modules/playwright-core to a playwright-core, as `npm install` would put
the package's dev dependency there, where npm's registry is out of reach: the one PyPI's
`playwright` wheel ships (playwright/driver/package), of the Python running this script, or the
folder given. todaysim/playwright's types import Playwright's from it.
    python3 typescript/tools/link_playwright_core.py [PLAYWRIGHT_CORE_FOLDER]"""
from __future__ import annotations

import os
import sys

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def wheel_core() -> str:
    try:
        import playwright
    except ImportError:
        sys.exit("link_playwright_core: this Python has no playwright (pip install playwright), and no folder was given")
    return os.path.join(os.path.dirname(playwright.__file__), "driver", "package")


def main() -> None:
    core = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else wheel_core()
    if not os.path.isfile(os.path.join(core, "index.d.ts")):
        sys.exit(f"link_playwright_core: {core} is not a playwright-core (no index.d.ts)")
    link = os.path.join(PACKAGE, "node_modules", "playwright-core")
    os.makedirs(os.path.dirname(link), exist_ok=True)
    if os.path.islink(link) or os.path.exists(link):
        if os.path.realpath(link) == os.path.realpath(core):
            return
        os.remove(link)
    os.symlink(core, link)
    print(f"typescript/node_modules/playwright-core -> {core}")


if __name__ == "__main__":
    main()
