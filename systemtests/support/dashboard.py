"""The dashboard (GET /) under test: a server with its sessions in a file (as `Scripts/run`
keeps them) and no page origin allowed but its own, the package's client for it, and the page
opened at a session. Registered as a plugin by conftest.py; the tests are test_dashboard_*.py."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator

import pytest
from todaysim.client import Client, TodaysimError
from todaysim.server import Server

from .browser import Tab


@dataclass
class Dashboard:
    server: Server
    api: Client

    @property
    def base(self) -> str:
        assert self.server.url
        return self.server.url

    def open(self, tab: Tab, session: str) -> None:
        tab.goto(f"{self.base}/#session={session}")

    def status_of(self, session: str) -> tuple[int, Any]:
        """(200, its status) or (the refusal's HTTP status, None)."""
        try:
            return 200, self.api.read_session(session)["status"]
        except TodaysimError as error:
            return error.status, None


@pytest.fixture
def dashboard(start_server: Callable[..., Server], tmp_path: Any) -> Iterator[Dashboard]:
    server = start_server(db=str(tmp_path / "sessions.sqlite"), allow_origin=None)
    with server.client() as api:
        yield Dashboard(server, api)
