"""Runs a todaysim server for a test run: the binary from `TODAYSIM_BIN`, else `todaysim` on PATH,
on a free loopback port (`--port 0`: the server names the port it got), with its sessions in
memory (`--db :memory:`) unless told otherwise, any page origin allowed (`--allow-origin *`: it
listens on 127.0.0.1 only), stopped with SIGTERM when done."""
from __future__ import annotations

import os
import re
import shutil
import collections
import subprocess
import tempfile
import threading
import time
from typing import Any, Optional, Sequence

from .client import Client, TodaysimError

LISTENING = re.compile(r"listening on (http://[0-9.]+:\d+)")

# What to do about a server that could not start, by what went wrong (as the TypeScript package says).
FIXES = {
    "missing": "set TODAYSIM_BIN to the todaysim binary (in a todaysim clone: Scripts/run prints where it is), "
               "or put todaysim on PATH (Scripts/run --install-link ~/.local/bin)",
    "not_executable": "make it executable (chmod +x), or set TODAYSIM_BIN to the todaysim binary",
    "port_taken": "the port is taken: pass another port (or 0, the default, for a free one) or stop what listens there",
    "exited": "its last lines above say why; run the same command by hand to see it whole",
    "silent": "a loaded machine may need a larger start_timeout; its last lines above show how far it got",
}


def find_binary() -> str:
    """`TODAYSIM_BIN`, else `todaysim` on PATH; a clear error when neither is there."""
    explicit = os.environ.get("TODAYSIM_BIN")
    if explicit:
        if not (os.path.isfile(explicit) and os.access(explicit, os.X_OK)):
            raise RuntimeError(f"TODAYSIM_BIN={explicit} is not an executable file")
        return explicit
    found = shutil.which("todaysim")
    if not found:
        raise RuntimeError("no todaysim binary: set TODAYSIM_BIN to it (swift build --show-bin-path in the todaysim "
                           "clone, then /todaysim), put it on PATH (Scripts/run --install-link ~/.local/bin), or "
                           "set TODAYSIM_URL to a running server")
    return found


class Server:
    """A todaysim process: `with Server() as server: Client(server.url)`.

    `args` are extra `serve` flags (e.g. `["--field-validation", "strict"]`); `db` defaults to
    `:memory:`; `start_timeout` is how long to wait for it to listen (generous: a loaded CI
    machine starts it slowly; a server that exits or never listens is an error with its log)."""

    def __init__(self, binary: Optional[str] = None, args: Sequence[str] = (), db: str = ":memory:",
                 allow_origin: Optional[str] = "*", token: Optional[str] = None, start_timeout: float = 60.0,
                 port: int = 0):
        self.binary = binary or find_binary()
        self.port = port  # 0: the kernel's pick; a fixed port lets a test restart it where clients expect it
        self.args, self.db, self.allow_origin, self.token = list(args), db, allow_origin, token
        self.start_timeout = start_timeout
        self.url: Optional[str] = None
        self.process: Optional[subprocess.Popen[str]] = None
        self.log_lines: collections.deque[str] = collections.deque(maxlen=500)  # its stderr's last lines

    def start(self) -> "Server":
        command = [self.binary, "serve", "--host", "127.0.0.1", "--port", str(self.port), "--db", self.db]
        if self.allow_origin:
            command += ["--allow-origin", self.allow_origin]
        if self.token:
            command += ["--token", self.token]
        command += self.args
        self.url = None
        try:
            process = self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                                      stderr=subprocess.PIPE, text=True, errors="replace")
        except OSError as error:
            fix = FIXES["not_executable"] if isinstance(error, PermissionError) else FIXES["missing"]
            raise RuntimeError(f"cannot run {self.binary}: {error.strerror}: {fix}") from None
        stderr = process.stderr
        assert stderr is not None  # stderr=PIPE
        found = threading.Event()

        def read_log() -> None:
            for line in stderr:
                self.log_lines.append(line.rstrip("\n"))
                match = LISTENING.search(line)
                if match and not found.is_set():
                    self.url = match.group(1)
                    found.set()
            found.set()

        threading.Thread(target=read_log, name="todaysim-log", daemon=True).start()
        found.wait(self.start_timeout)
        if self.url is None:
            code = self.stop()
            last = "\n".join(list(self.log_lines)[-20:])
            if process.returncode is not None and found.is_set() and code is not None and code >= 0:
                fix = FIXES["port_taken"] if "address already in use" in last.lower() else FIXES["exited"]
                raise RuntimeError(f"todaysim exited ({code}) before it listened: {fix}\n{' '.join(command)}\n{last}")
            raise RuntimeError(f"todaysim did not listen within {self.start_timeout:g} s: {FIXES['silent']}\n"
                               f"{' '.join(command)}\n{last}")
        with self.client() as client:
            end = time.monotonic() + self.start_timeout
            while True:
                try:
                    client.health()
                    break
                except TodaysimError:
                    if time.monotonic() > end or process.poll() is not None:
                        self.stop()
                        raise RuntimeError(f"todaysim never answered /healthz at {self.url}: {FIXES['silent']}\n"
                                           + "\n".join(list(self.log_lines)[-20:])) from None
                    time.sleep(0.05)
        return self

    def stop(self, timeout: float = 60.0) -> Optional[int]:
        """SIGTERM, then its exit code (SIGKILL if it has not stopped within `timeout` s)."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode

    def kill(self) -> Optional[int]:
        """SIGKILL (a crash: nothing of the server's own shutdown runs), then its exit code."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.kill()
        return self.process.wait()

    def client(self, **options: Any) -> Client:
        """A client of the started server (`options` as `Client` takes them)."""
        if self.url is None:
            raise RuntimeError("the server is not started: call start() (or use it as a context manager) first")
        return Client(self.url, token=self.token, **options)

    def __enter__(self) -> "Server":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def temporary_database() -> str:
    """A path for a SQLite file in a new temporary folder (for a server that must keep sessions)."""
    return os.path.join(tempfile.mkdtemp(prefix="todaysim-"), "sessions.sqlite")
