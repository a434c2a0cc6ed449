"""Which Chromium the package's helpers drive (the pytest plugin's browser, `todaysim-explore`):
a module of its own, so the explorer's command needs nothing of the plugin (nor pytest)."""
from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:  # the caller brings Playwright
    from playwright.sync_api import Playwright


def browser_executable(playwright: Playwright) -> Optional[str]:
    """TODAYSIM_BROWSER, else None when the running `playwright`'s own Chromium is installed,
    else `chromium-headless-shell` on PATH (Debian's old headless shell: the browser without its
    UI, which a headless page costs about a third less of the browser's CPU in, docs/PERFORMANCE.md),
    else `chromium`; a RuntimeError saying what to install when there is none (not Playwright's
    "run playwright install", which cannot work on a machine that reaches only package registries)."""
    explicit = os.environ.get("TODAYSIM_BROWSER")
    if explicit:
        found = shutil.which(explicit)
        if not found:
            raise RuntimeError(f"TODAYSIM_BROWSER={explicit} is not an executable Chromium")
        return found
    if os.path.exists(playwright.chromium.executable_path):
        return None
    found = shutil.which("chromium-headless-shell") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        raise RuntimeError("no Chromium to drive: install chromium (apt-get install chromium) or set TODAYSIM_BROWSER "
                           "to a Chromium executable")
    return found
