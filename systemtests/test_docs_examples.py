"""Each example of the README and of docs/*.md (a ```sh block with `# → ` lines) run against a
fresh server twice in a row on the same server (a reader runs a walkthrough more than once, so
every example must be re-runnable), each printing exactly what its file shows; every other curl
block says why it is not run; no example calls a build folder's binary (`support/docs_examples.py`
has the rules). One server serves every file of the run, in order, so an example may use what an
earlier file's examples made (the contract report of docs/RELAYING.md reads the session of the
README's walkthrough: to check it alone, `--docs README.md --docs docs/RELAYING.md`).

The package test runs the README's walkthrough against an installed binary with
`Scripts/system-tests /usr/bin/todaysim test_docs_examples.py --docs README.md`."""
from __future__ import annotations

import os
import pathlib
from typing import Callable

import pytest
from todaysim.server import Server

from support.docs_examples import (built_binary_examples, default_files, read_files, run_examples,
                                   unexplained_curl_blocks)


@pytest.fixture(scope="module")
def documents(pytestconfig: pytest.Config) -> list[tuple[str, str]]:
    """(name, text) of each file checked: `--docs` in order, else README.md then docs/*.md."""
    named: list[str] = pytestconfig.getoption("--docs")
    return read_files(named or default_files())


def test_every_example_prints_what_its_file_shows_twice_in_a_row(
        documents: list[tuple[str, str]], binary: str, start_server: Callable[..., Server],
        tmp_path: pathlib.Path) -> None:
    # The binary under test as `todaysim` on PATH, as `Scripts/run --install-link DIR` links it.
    links = tmp_path / "bin"
    links.mkdir()
    (links / "todaysim").symlink_to(binary)
    path = str(links) + os.pathsep + os.environ.get("PATH", "")
    server = start_server(db=str(tmp_path / "db.sqlite"))
    assert server.url is not None
    problems: list[str] = []
    for run in (1, 2):
        commands_run, with_examples = 0, 0
        for name, text in documents:
            found, ran = run_examples(name, text, server.url, path)
            problems += [f"run {run}: {problem}" for problem in found]
            commands_run += ran
            with_examples += ran > 0
    assert not problems, "\n".join(problems)
    assert commands_run > 0, "no example found (no ```sh block with `# → ` lines)"
    print(f"every example ({commands_run} commands in {with_examples} of {len(documents)} files) "
          "printed what its file shows, twice in a row")


def test_every_other_curl_block_says_why_it_is_not_run(documents: list[tuple[str, str]]) -> None:
    problems = [problem for name, text in documents for problem in unexplained_curl_blocks(name, text)]
    assert not problems, "\n".join(problems)


def test_no_example_calls_a_build_folders_binary(documents: list[tuple[str, str]]) -> None:
    problems = [problem for name, text in documents for problem in built_binary_examples(name, text)]
    assert not problems, "\n".join(problems)
