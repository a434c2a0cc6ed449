"""The Dockerfile and docker-compose.yml, without a Docker engine (none runs here): the build stage
copies every path Package.swift needs where it needs it, the images pin this Swift's
major.minor, the runtime stage ships the binary alone with its libraries, and both files have
health checks (`support/dockerfile.py`, `support/compose.py` have the rules). Then copies of the
two files, each broken in one way the check exists for, must each be refused for its reason, and
the unbroken copies accepted. Needs `swift` (`swift package describe`, `swift --version`), no
binary."""
from __future__ import annotations

import os
import pathlib
from typing import Optional

import pytest

from support import ROOT
from support.dockerfile import RUNTIME_PACKAGES, Needs, needed, problems_of, swift_version

# (file, text replaced (None: a new file), replacement, expected fragment of the problem);
# SWIFT stands for this Swift's major.minor.
MUTANTS: list[tuple[str, Optional[str], str, str]] = [
    ("Dockerfile", "FROM swift:SWIFT-bookworm-slim", "FROM swift:6.1-bookworm-slim", "Swift 6.1, but"),
    ("Dockerfile", "FROM swift:SWIFT-bookworm AS", "FROM --platform=linux/amd64 swift:6.1-bookworm AS", "Swift 6.1, but"),
    ("Dockerfile", "FROM swift:SWIFT-bookworm AS", "ARG SWIFT=6.1\nFROM swift:${SWIFT}-bookworm AS", "Swift 6.1, but"),
    ("Dockerfile", "FROM swift:SWIFT-bookworm AS", "FROM swift:latest AS", "pin the Swift version"),
    ("Dockerfile", "FROM swift:SWIFT-bookworm AS", "FROM debian:bookworm AS", "official swift image"),
    ("Dockerfile", "COPY Web ./Web\n", "", "does not COPY Web"),
    ("Dockerfile", "COPY docs/RULES.md ./docs/RULES.md\n", "", "does not COPY docs/RULES.md"),
    ("Dockerfile", "COPY Web ./Web", "COPY Web ./Sources" + "/Web", "Web must land at /src/Web"),  # split: no path to test_links
    ("Dockerfile.dockerignore", None, ".build\nWeb\n", "leaves Web out"),
    ("Dockerfile", "/out/todaysim /opt", "/out/todaysim /src/Web /opt", "only the todaysim binary"),
    ("Dockerfile", "\nHEALTHCHECK ", "\n# HEALTHCHECK ", "no HEALTHCHECK"),
    ("Dockerfile", "8080/healthz ||", "9090/healthz ||", "no HEALTHCHECK"),
    ("docker-compose.yml", "    healthcheck:", "    x-healthcheck:", "service todaysim has no healthcheck"),
    ("docker-compose.yml", "      retries: 3\n", "      retries: 3\n      disable: true\n", "service todaysim has no healthcheck"),
    ("docker-compose.yml", "8080/healthz\"]", "8080/readyz\"]", "service todaysim has no healthcheck"),
    ("Dockerfile", "libsqlite3-0 libpq5 curl", "libsqlite3-0 curl", "does not install libpq5"),
    ("docker-compose.yml", "127.0.0.1:8081:8080", "127.0.0.1:8080:8080", "both publish 127.0.0.1:8080"),
    ("docker-compose.yml", "image: postgres:15", "image: mysql:8", "no service of the `postgres` profile runs the postgres image"),
    ("docker-compose.yml", "image: postgres:15", "image: postgres:latest", "pin the postgres image"),
    ("docker-compose.yml", "postgres-data:/var/lib/postgresql/data", "postgres-data:/backup", "in no volume"),
    ("docker-compose.yml", '"pg_isready", "-h", "127.0.0.1", ', '"pg_isready", ', "pg_isready -h 127.0.0.1"),
    ("docker-compose.yml", "todaysim@postgres:5432", "todaysim@localhost:5432", "whose host is the database service"),
    ("docker-compose.yml", '"--db", "postgres://todaysim@postgres:5432/todaysim"', '"--db", "/data/s.sqlite"',
     "whose host is the database service"),
    ("docker-compose.yml", "todaysim@postgres:5432", "todaysim:secret@postgres:5432", "the password is in --db"),
    ("docker-compose.yml", "condition: service_healthy", "condition: service_started", "with condition: service_healthy"),
    ("docker-compose.yml", "    depends_on:", "    x-depends_on:", "with condition: service_healthy"),
    ("docker-compose.yml", '    build: .\n    profiles: ["postgres"]', "    build: .", "the `postgres` profile builds no todaysim"),
    ("docker-compose.yml", '8080/readyz"]', '8080/healthz"]', "replica todaysim-1 has no healthcheck on /readyz"),
    ("docker-compose.yml", 'profiles: ["postgres", "cluster"]', 'profiles: ["postgres"]',
     "no service of the `cluster` profile runs the postgres image"),
    ("docker-compose.yml", "image: nginx:1.27", "image: haproxy:2.8", "no service of the `cluster` profile runs the nginx image"),
    ("docker-compose.yml", "      - ./deploy:/deploy:ro\n", "", "does not mount ./deploy"),
    ("docker-compose.yml", "      todaysim-3:\n        condition: service_healthy",
     "      todaysim-3:\n        condition: service_started", "must wait for todaysim-3 with condition: service_healthy"),
]


@pytest.fixture(scope="module")
def needs() -> Needs:
    return needed()


@pytest.fixture(scope="module")
def version() -> str:
    return swift_version()


def copy_problems(folder: pathlib.Path, needs: Needs, version: str, name: Optional[str] = None,
                  old: Optional[str] = None, new: str = "") -> list[str]:
    """The problems of copies of Dockerfile and docker-compose.yml in `folder`, `name` changed
    (its first `old` replaced by `new`) or created (`old` None)."""
    files = {file: pathlib.Path(ROOT, file).read_text(encoding="utf-8") for file in ("Dockerfile", "docker-compose.yml")}
    if name is not None:
        if old is None:
            files[name] = new
        else:
            assert old in files[name], f"the mutant's text {old!r} is not in {name} any more"
            files[name] = files[name].replace(old, new, 1)
    for file, text in files.items():
        (folder / file).write_text(text, encoding="utf-8")
    return problems_of(str(folder / "Dockerfile"), needs, version)


def test_the_dockerfile_and_compose_file_hold(needs: Needs, version: str) -> None:
    problems = problems_of(os.path.join(ROOT, "Dockerfile"), needs, version)
    assert not problems, "\n".join(problems)
    print(f"{len(needs.paths)} paths copied where Package.swift needs them, Swift {version} images, only the binary "
          f"and its libraries ({', '.join(RUNTIME_PACKAGES[name] for name in needs.libraries)}) in the runtime stage")


def test_the_unbroken_copies_are_accepted(needs: Needs, version: str, tmp_path: pathlib.Path) -> None:
    problems = copy_problems(tmp_path, needs, version)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("name", "old", "new", "expected"), [
    pytest.param(*mutant, id=f"{number:02d} {mutant[0]}: {mutant[3]}") for number, mutant in enumerate(MUTANTS, 1)])
def test_a_broken_copy_is_refused_for_its_reason(needs: Needs, version: str, tmp_path: pathlib.Path, name: str,
                                                 old: Optional[str], new: str, expected: str) -> None:
    problems = copy_problems(tmp_path, needs, version, name, old and old.replace("SWIFT", version), new)
    assert any(expected in problem for problem in problems), f"expected a problem with {expected!r}, got {problems}"
