"""One version a user can rely on (issue 35, item 4): what `pip show todaysim` says, the package's
`__version__`, `todaysim --version` and the served OpenAPI document's `info.version` are all the
repository's VERSION file."""
import importlib.metadata
import os
import subprocess

import yaml

import todaysim
from todaysim.plugin import TodaysimServer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_one_version_everywhere(todaysim_server: TodaysimServer) -> None:
    written = open(os.path.join(ROOT, "VERSION"), encoding="utf-8").read().strip()
    assert importlib.metadata.version("todaysim") == written  # what `pip show todaysim` prints
    assert todaysim.__version__ == written
    first = subprocess.run([os.environ["TODAYSIM_BIN"], "--version"], capture_output=True, text=True, check=True).stdout.splitlines()[0]
    assert first == f"todaysim {written}"
    with todaysim_server.client() as client:
        served = client.http.get("/openapi.yaml")
    assert yaml.safe_load(served.text)["info"]["version"] == written
