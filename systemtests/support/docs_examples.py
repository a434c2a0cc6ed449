"""The examples of the README and of docs/*.md, read and run (test_docs_examples.py; formerly the
script `check-readme`). A plugin too: `--docs FILE` (repeatable; repository paths or absolute)
names the files to check, in that order, instead of README.md then every `*.md` under docs/.

How a file marks its examples:
- A ```sh block holding a line `# → …` is an example. Its lines run in order in one bash, from
  the repository root whichever file holds them, with `http://127.0.0.1:8080` replaced by the
  test's server. Each run of `# → ` lines is exactly what the commands above it (since the
  previous `# → ` run) must print on standard output, a line each; commands with no `# → ` line
  after them must print nothing.
- Examples call the binary `todaysim`, as a reader has it after `Scripts/run --install-link DIR`:
  the binary under test is put first on PATH under that name, and an example that calls a build
  folder's binary (`.build/debug/todaysim`, which `Scripts/run` never builds) is refused.
- Every other ```sh block that calls `curl` must say why it is not run, on the line before its
  fence: `<!-- not run: reason -->` (it starts servers, needs a browser, …). So an example cannot
  silently escape the check."""
from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass

import pytest

from support import ROOT
README_BASE = "http://127.0.0.1:8080"
EXPECTED = "# → "
MARKER = "@@docs-example segment {}@@"
BUILT_BINARY = re.compile(r"\.build/(debug|release)/todaysim|swift build --show-bin-path")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--docs", action="append", default=[], metavar="FILE",
                     help="test_docs_examples.py: check these Markdown files, in this order (default: README.md, "
                          "then every *.md under docs/); repository paths or absolute")


@dataclass
class Block:
    """A fenced block: the line of its fence, its info string, its lines, the line before it."""
    line: int
    info: str
    body: list[str]
    before: str

    @property
    def is_example(self) -> bool:
        return self.info == "sh" and any(line.startswith(EXPECTED.rstrip()) for line in self.body)


def blocks(text: str) -> list[Block]:
    lines = text.split("\n")
    found, index = [], 0
    while index < len(lines):
        match = re.match(r"^(\s*)```(\S*)\s*$", lines[index])
        if not match:
            index += 1
            continue
        indent, info, start = match.group(1), match.group(2), index
        body = []
        index += 1
        while index < len(lines) and lines[index].strip() != "```":
            line = lines[index]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            index += 1
        found.append(Block(start + 1, info, body, lines[start - 1].strip() if start > 0 else ""))
        index += 1
    return found


def segments(body: list[str]) -> list[tuple[list[str], list[str]]]:
    """[(command lines, expected output lines)] of an example block."""
    result: list[tuple[list[str], list[str]]] = []
    commands: list[str] = []
    expected: list[str] = []
    for line in body:
        if line.startswith(EXPECTED) or line == EXPECTED.rstrip():
            expected.append(line[len(EXPECTED):])
            continue
        if expected:
            result.append((commands, expected))
            commands, expected = [], []
        commands.append(line)
    if commands or expected:
        result.append((commands, expected))
    return result


def default_files() -> list[str]:
    """README.md, then every Markdown file under docs/, sorted by path."""
    found = []
    for folder, subfolders, names in os.walk(os.path.join(ROOT, "docs")):
        subfolders.sort()
        found += [os.path.join(folder, name) for name in names if name.endswith(".md")]
    return [os.path.join(ROOT, "README.md")] + sorted(found)


def read_files(paths: list[str]) -> list[tuple[str, str]]:
    """(name as shown, text) of each file; `paths` relative to the repository root or absolute."""
    files = []
    for path in (os.path.join(ROOT, path) for path in paths):
        with open(path, encoding="utf-8") as handle:
            name = os.path.relpath(path, ROOT) if os.path.abspath(path).startswith(ROOT + os.sep) else path
            files.append((name, handle.read()))
    return files


def unexplained_curl_blocks(name: str, text: str) -> list[str]:
    """Every ```sh, bash or console block with curl, no `# → ` output and no reason not to run."""
    return [f"{name}:{block.line}: a curl block with no `# → ` output and no `<!-- not run: reason -->` before it"
            for block in blocks(text) if not block.is_example and block.info in ("sh", "bash", "console")
            and any("curl " in line for line in block.body) and not block.before.startswith("<!-- not run:")]


def built_binary_examples(name: str, text: str) -> list[str]:
    """Every example that calls a build folder's binary: `Scripts/run` builds a release, so
    `.build/debug/todaysim` in a guide does not exist; a reader has `todaysim` on PATH."""
    problems = []
    for block in blocks(text):
        built = [line for line in block.body if BUILT_BINARY.search(line)]
        if block.is_example and built:
            problems.append(f"{name}:{block.line}: an example calls a build folder's binary ({built[0].strip()[:80]}); "
                            "call it `todaysim`, as a reader has it after `Scripts/run --install-link DIR`")
    return problems


def run_block(body: list[str], base: str, path: str) -> tuple[list[tuple[list[str], list[str], list[str]]], str]:
    """(commands, expected, printed) of each segment, run in one bash so variables carry over,
    and its stderr; `path` is PATH with the binary under test first, as `todaysim`."""
    parts = segments(body)
    script = [f"B={base}"]  # as the walkthrough sets it, for blocks read on their own
    for number, (commands, _) in enumerate(parts):
        script.append(f"echo '{MARKER.format(number)}'")
        script.extend(line.replace(README_BASE, base) for line in commands)
    completed = subprocess.run(["bash", "--noprofile", "--norc", "-c", "\n".join(script)], cwd=ROOT,
                               capture_output=True, text=True, timeout=120, env=dict(os.environ, PATH=path))
    printed: dict[int, list[str]] = {}
    current = None
    for line in completed.stdout.split("\n"):
        match = re.fullmatch(r"@@docs-example segment (\d+)@@", line)
        if match:
            current = int(match.group(1))
            printed[current] = []
        elif current is not None:
            printed[current].append(line)
    outputs = []
    for number, (commands, expected) in enumerate(parts):
        got = printed.get(number, [])
        while got and got[-1] == "":
            got.pop()
        outputs.append((commands, [line.replace(README_BASE, base) for line in expected], got))
    return outputs, completed.stderr


def run_examples(name: str, text: str, base: str, path: str) -> tuple[list[str], int]:
    """The mismatches of one pass over a file's examples against the server at `base`, and how
    many commands ran. Examples that call a build folder's binary are not run (refused apart)."""
    problems, commands_run = [], 0
    for block in blocks(text):
        if not block.is_example or any(BUILT_BINARY.search(line) for line in block.body):
            continue
        outputs, stderr = run_block(block.body, base, path)
        for commands, expected, got in outputs:
            shown = [line for line in commands if line.strip() and not line.lstrip().startswith("#")]
            commands_run += len(shown)
            if got != expected:
                problems.append(f"{name}:{block.line}: `{' '.join(shown)[:160]}`\n"
                                f"  {name} shows: {expected}\n  it printed:   {got}"
                                + (f"\n  stderr: {stderr.strip()[:300]}" if stderr.strip() else ""))
    return problems, commands_run
