"""A throwaway PostgreSQL of a test's own, over `Scripts/postgres` (Debian's binaries, installed
when missing; initdb in a folder of its own, a free loopback port, trust authentication). `start()`
gives its URI; `stop()` is a fast shutdown and `start()` again restarts it on the same port — a
database restart under a running todaysim. A watcher `Scripts/postgres` leaves stops it and
removes its folder when this process exits, however it ends; `remove()` does it at once."""
from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile

from support import ROOT
SCRIPT = os.path.join(ROOT, "Scripts", "postgres")


class Postgres:
    def __init__(self) -> None:
        # Its own folder under the temporary directory, not pytest's tmp_path: as root the server
        # runs as another user, who must be let into the folder's parent.
        self.dir = tempfile.mkdtemp(prefix="todaysim-systemtests-pg-")
        self.uri = ""

    def _run(self, *args: str) -> str:
        done = subprocess.run([SCRIPT, *args], capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            raise RuntimeError(f"Scripts/postgres {' '.join(args)} failed: {done.stderr.strip()[-500:]}")
        return done.stdout

    def start(self) -> str:
        """Starts it (initdb the first time); its URI, the same after a restart."""
        self.uri = self._run("start", self.dir, "--until-exit-of", str(os.getpid())).strip().splitlines()[-1]
        return self.uri

    def stop(self) -> None:
        self._run("stop", self.dir)

    def remove(self) -> None:
        subprocess.run([SCRIPT, "stop", self.dir], capture_output=True, timeout=300)
        shutil.rmtree(self.dir, ignore_errors=True)

    def query(self, sql: str) -> list[str]:
        """`psql` on its database: the rows of `sql`'s answer, one line each (fields `|`-separated)."""
        found = shutil.which("psql") or next(iter(sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"))[-1:]), None)
        if not found:
            raise RuntimeError("psql not found (Scripts/postgres installs postgresql)")
        done = subprocess.run([found, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", self.uri, "-c", sql],
                              capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise RuntimeError(f"psql failed: {done.stderr.strip()[:300]}")
        return [line for line in done.stdout.splitlines() if line.strip()]
