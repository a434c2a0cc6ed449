"""Every link and repository path in Markdown, YAML, TOML and scripts resolves inside this clone,
and nothing refers to folders beside it (`support/links.py` has the rules). The checker is first
checked on a scratch repository that breaks each rule once beside a correct twin of each: every
planted breakage is reported, and nothing else. No binary: the tree is read, nothing is run."""
from __future__ import annotations

import os
import pathlib

import pytest

from support import ROOT
from support.links import FORBIDDEN, check, git

HERE = os.path.dirname(os.path.abspath(__file__))
# This file plants broken paths on purpose: held to rule 1 (outside references) alone.
THIS_FILE = os.path.relpath(os.path.abspath(__file__), ROOT)

PLANTED_FILES = {
    "README.md": "\n".join([
        "# Demo",
        "## The rules",
        "See [rules](docs/RULES.md#h10), [missing](docs/NOPE.md), [bad anchor](docs/RULES.md#h99),",
        "[here](#the-rules), [nowhere](#nowhere), [web](https://example.com/x), ![img](docs/pic.png).",
        "Outside: [spec](" + FORBIDDEN[0] + "/spec/X.md), `" + FORBIDDEN[1] + "r1`.",
        "Paths: `docs/RULES.md`, `docs/GONE.md`, `Scripts/NN-*.sh`, `Scripts/`, `.build/debug`, ./.build/made, ../up/x.",
        "```sh",
        "[not a link](docs/ALSO-NOPE.md)",
        "```",
        "",
    ]),
    "docs/RULES.md": "# Rules\n\n### <a id=\"h10\"></a>H10 Pull\n\nBack to [the readme](../README.md#demo).\n",
    "docs/pic.png": "",
    "Scripts/run": "#!/bin/sh\ncd \"$(dirname \"$0\")/..\" && ./made-here\n. \"$(dirname \"$0\")/lib.sh\"\n"
                   "exec \"$(dirname \"$0\")/../docs/RULES.md\" Scripts/gone\n",
    "Scripts/lib.sh": "# see docs/RULES.md#h10 and docs/RULES.md#h11\n",
    "api.yaml": "description: docs/RULES.md#h10, ./docs/, ./missing.yaml\n",
    ".gitignore": ".build/\n",
}

PLANTED_BREAKAGES = [
    "README.md:3: link 'docs/NOPE.md' points to nothing tracked",
    "README.md:3: link 'docs/RULES.md#h99': no heading or anchor '#h99' in docs/RULES.md",
    "README.md:4: link '#nowhere': no heading or anchor '#nowhere' in README.md",
    "README.md:5: refers to '" + FORBIDDEN[0] + "', which a clone does not have",
    "README.md:5: refers to '" + FORBIDDEN[1] + "', which a clone does not have",
    "README.md:5: link '" + FORBIDDEN[0] + "/spec/X.md' points outside the repository",
    "README.md:6: path 'docs/GONE.md' points to nothing tracked",
    "README.md:6: path '../up/x' points outside the repository",
    "README.md:8: path 'docs/ALSO-NOPE.md' points to nothing tracked",
    "Scripts/run:4: path 'Scripts/gone' points to nothing tracked",
    "Scripts/lib.sh:1: path 'docs/RULES.md#h11': no heading or anchor '#h11' in docs/RULES.md",
    "api.yaml:1: path './missing.yaml' points to nothing tracked",
]


@pytest.fixture(scope="module")
def planted_findings(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """What the checker reports on a scratch repository of PLANTED_FILES."""
    scratch: pathlib.Path = tmp_path_factory.mktemp("planted")
    git(str(scratch), "init", "-q")
    for rel, text in PLANTED_FILES.items():
        (scratch / rel).parent.mkdir(parents=True, exist_ok=True)
        (scratch / rel).write_text(text)
    git(str(scratch), "add", "-A")
    return check(str(scratch))[0]


@pytest.mark.parametrize("breakage", PLANTED_BREAKAGES)
def test_the_checker_reports_a_planted_breakage(planted_findings: list[str], breakage: str) -> None:
    assert breakage in planted_findings, planted_findings


def test_the_checker_reports_nothing_else(planted_findings: list[str]) -> None:
    """The correct twin of each breakage (a link, an anchor, an id, a pattern, an ignored path,
    `./program` in a script, a fenced block, a URL) is not reported."""
    extra = [finding for finding in planted_findings if finding not in PLANTED_BREAKAGES]
    assert not extra, extra


def test_every_link_and_path_of_the_tree_resolves_inside_it() -> None:
    findings, files, checked = check(ROOT, exempt=[THIS_FILE])
    assert not findings, f"{len(findings)} reference(s) do not resolve inside the repository:\n" + "\n".join(findings)
    assert files > 0 and checked > 0, (files, checked)
    print(f"{files} tracked files, {checked} links and paths, all resolve inside the repository")
