"""todaysim for Python test suites: a typed client for the todaysim HTTP API (`Client`, problem
documents raised as `TodaysimError`), a server runner (`Server`), a pytest plugin (fixtures
`todaysim_server`, `todaysim`, `host_session`, `bridged_page`) and the explorer
(`todaysim.explore`) that finds contract breaches nobody scripted in a real page."""
from .client import OPERATIONS, Client, StreamEvent, TodaysimError
from .server import Server

__all__ = ["Client", "TodaysimError", "StreamEvent", "OPERATIONS", "Server"]
try:  # the repository's VERSION, as the installed package's metadata has it (pyproject.toml)
    from importlib.metadata import version as _installed_version
    __version__ = _installed_version("todaysim")
except Exception:  # running from a source tree that was never installed
    __version__ = "unknown"
