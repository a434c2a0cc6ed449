"""The package's own tests: a real todaysim (the plugin's `todaysim_server`: TODAYSIM_BIN or
TODAYSIM_URL), real pages served from this clone over HTTP on a free loopback port, and real
Chromium (TODAYSIM_BROWSER, else `chromium` on PATH)."""
import http.server
import os
import threading
import time
from typing import Iterator

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "long: a big run (the explorer over its default budget), skipped unless -m long or TODAYSIM_LONG=1")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


class Pages(http.server.SimpleHTTPRequestHandler):
    """The fixture Today Page (examples/today-page) at /today/, the tests' own pages at
    /pages/; /hang answers only after a minute (a request that keeps a page from settling)."""

    def translate_path(self, path: str) -> str:
        path = path.split("?", 1)[0]
        if path.startswith("/today/"):
            return os.path.join(ROOT, "examples", "today-page", path[len("/today/"):])
        if path.startswith("/pages/"):
            return os.path.join(HERE, "pages", path[len("/pages/"):])
        return os.path.join(HERE, "pages", "missing")

    def do_GET(self) -> None:
        if self.path.startswith("/hang"):
            time.sleep(60)
            self.send_response(204)
            self.end_headers()
            return
        super().do_GET()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="session")
def pages() -> Iterator[str]:
    """The base URL of the page server."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Pages)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="session")
def today_page(pages: str) -> str:
    """The conforming fixture page; `?bug=NAME` plants one bug."""
    return pages + "/today/index.html"
