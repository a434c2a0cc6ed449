"""Every way a server fails to start raises from `Server.start()` within its bound, with a message
naming the fix (issue 45, item 1), as the TypeScript package's `TodaysimServer.start()` rejects:
a missing binary, one that is not executable, one that exits at once, a port already taken, one
that never says it listens, one that never answers /healthz."""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from todaysim import Server


def script(folder: Path, name: str, body: str, executable: bool = True) -> str:
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    path.chmod(0o755 if executable else 0o644)
    return str(path)


def refusal(server: Server) -> str:
    with pytest.raises(RuntimeError) as raised:
        server.start()
    assert server.process is None or server.process.poll() is not None, "a server that failed to start is left running"
    return str(raised.value)


def test_a_missing_binary_names_todaysim_bin() -> None:
    message = refusal(Server(binary="/nonexistent/todaysim"))
    assert message.startswith("cannot run /nonexistent/todaysim: No such file or directory: set TODAYSIM_BIN to the todaysim binary"), message
    assert "Scripts/run --install-link" in message


def test_a_binary_that_is_not_executable_names_chmod(tmp_path: Path) -> None:
    path = script(tmp_path, "not-executable", "exit 0", executable=False)
    assert not os.stat(path).st_mode & stat.S_IXUSR
    message = refusal(Server(binary=path))
    assert message.startswith(f"cannot run {path}: Permission denied: make it executable (chmod +x)"), message


def test_a_binary_that_exits_at_once_shows_its_last_lines(tmp_path: Path) -> None:
    path = script(tmp_path, "exits", 'echo "todaysim: --db: cannot open /x/y.sqlite" >&2; exit 2')
    message = refusal(Server(binary=path))
    assert message.startswith("todaysim exited (2) before it listened: its last lines above say why"), message
    assert "cannot open /x/y.sqlite" in message


def test_a_port_already_taken_names_the_port_option() -> None:
    with Server() as first:  # this build's binary: TODAYSIM_BIN
        assert first.url is not None
        port = int(first.url.rsplit(":", 1)[1])
        message = refusal(Server(port=port))
    assert message.startswith("todaysim exited (2) before it listened: the port is taken: pass another port"), message
    assert "Address already in use" in message


def test_a_server_that_never_says_it_listens_stops_at_its_timeout(tmp_path: Path) -> None:
    path = script(tmp_path, "mute", "exec sleep 600")
    message = refusal(Server(binary=path, start_timeout=1.0))
    assert message.startswith("todaysim did not listen within 1 s: a loaded machine may need a larger start_timeout"), message


def test_a_server_that_never_answers_healthz_stops_at_its_timeout(tmp_path: Path) -> None:
    # Says it listens on a port where nothing does (9, discard: refused), then waits.
    path = script(tmp_path, "silent", 'echo "todaysim: listening on http://127.0.0.1:9" >&2; exec sleep 600')
    message = refusal(Server(binary=path, start_timeout=2.0))
    assert message.startswith("todaysim never answered /healthz at http://127.0.0.1:9: a loaded machine may need"), message
