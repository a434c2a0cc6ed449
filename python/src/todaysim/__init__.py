"""todaysim for Python test suites: a typed client for the todaysim HTTP API (`Client`, problem
documents raised as `TodaysimError`), a server runner (`Server`), a pytest plugin (fixtures
`todaysim_server`, `todaysim`, `host_session`, `bridged_page`) and the explorer
(`todaysim.explore`) that finds contract breaches nobody scripted in a real page."""
from .client import OPERATIONS, Client, StreamEvent, TodaysimError
from .server import Server

__all__ = ["Client", "TodaysimError", "StreamEvent", "OPERATIONS", "Server"]
__version__ = "0.1.0"
