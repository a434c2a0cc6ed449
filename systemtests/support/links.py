"""Whether every link and path in a repository resolves inside it (test_links.py; formerly the
script `check-links`). A clone is all a reader has, so every reference must resolve inside it.
The rules, chosen to catch real breakage without flagging prose:

1. Outside references. No tracked file, of any kind, mentions the shared folder beside the
   repository (`../` + `shared`) or an absolute path under the development machine's work
   folder (`/` + `work/`): a clone has neither.
2. Markdown links. In `*.md`, every inline link or image `[text](target)` / `![alt](target)`
   and every reference definition `[id]: target` whose target has no URL scheme must name a
   tracked file, or a folder holding tracked files, relative to the Markdown file's folder and
   inside the repository. Fenced code blocks are not links.
3. Paths in text. In Markdown (code included), YAML, TOML and scripts (`*.sh`, `*.py`,
   `*.lua`, any file starting with `#!`), a token that starts a path — `./` or `../`, or the
   name of a top-level tracked folder followed by `/` (`Scripts/`, `docs/`, `Sources/`, …),
   not glued to a preceding word, `/` or `$` — must resolve to a tracked file or folder
   (relative to the file's folder or to the repository root: scripts `cd` to the root), or to
   a path `.gitignore` covers (what the scripts generate, e.g. `.build/…`). So do
   `$(dirname "$0")/…` paths in scripts, relative to the script. A token followed by a glob or
   placeholder (`*`, `{`, `<`, `$`, `…`) is checked up to its last `/`. In a script, `./name`
   with no further `/` is a program in the folder the script has moved to (often a scratch
   one), not a reference, and is left alone. The files named `exempt` (the checker's own tests,
   which plant broken paths on purpose) are held to rule 1 alone.
4. Anchors. `target.md#anchor`, in a link or a path token, and `#anchor` alone in a Markdown
   link must name a heading of that Markdown file (GitHub's slug) or an explicit `id="…"` /
   `name="…"` anchor in it.

Python's standard library and git only; it checks whatever tree it is given (`git ls-files`)."""
from __future__ import annotations

import os
import re
import subprocess
from typing import Iterable, Iterator, Optional, Sequence

# Built from parts so this file does not trip rule 1 itself.
FORBIDDEN = ["../" + "shared", "/" + "work/"]
DOCUMENT_SUFFIXES = (".md", ".yaml", ".yml", ".toml")
SCRIPT_SUFFIXES = (".sh", ".py", ".lua")
PATH_CHARS = r"[A-Za-z0-9_.@%+/-]"
PATTERN_FOLLOWERS = "*{<$…["


def git(root: str, *args: str) -> str:
    return subprocess.run(["git", "-C", root, *args], capture_output=True, text=True, check=True).stdout


def read_text(path: str) -> str:
    with open(path, "rb") as handle:
        return handle.read().decode("utf-8", errors="replace")


def slug(heading: str) -> str:
    """GitHub's heading anchor: tags and link targets dropped, lowercase, punctuation removed."""
    text = re.sub(r"<[^>]*>", "", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def markdown_lines(text: str) -> Iterator[tuple[int, str, bool]]:
    """(number, line, inside a fenced code block) for each line but the fences themselves."""
    in_fence = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        yield number, line, in_fence


def markdown_anchors(text: str) -> set[str]:
    anchors: set[str] = set()
    seen: dict[str, int] = {}
    for _, line, in_fence in markdown_lines(text):
        if in_fence:
            continue
        heading = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading:
            base = slug(heading.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            anchors.add(base if count == 0 else f"{base}-{count}")
        anchors.update(re.findall(r"""<a\s[^>]*(?:id|name)=["']([^"']+)["']""", line))
    return anchors


class Repository:
    """The tracked files and folders of the git tree at `root`."""

    def __init__(self, root: str):
        self.root = os.path.realpath(root)
        self.files = [f for f in git(self.root, "ls-files", "-z").split("\0") if f]
        self.tracked = set(self.files)
        self.folders = {os.path.dirname(f) for f in self.files}
        for folder in list(self.folders):
            while folder:
                folder = os.path.dirname(folder)
                self.folders.add(folder)
        self.top_folders = sorted({f.split("/", 1)[0] for f in self.files if "/" in f})
        self.anchor_cache: dict[str, set[str]] = {}

    def relative(self, path: str) -> Optional[str]:
        """The repository-relative form of an absolute path, or None outside the repository."""
        real = os.path.normpath(path)
        if real == self.root:
            return ""
        if not real.startswith(self.root + os.sep):
            return None
        return real[len(self.root) + 1:]

    def exists(self, rel: str) -> bool:
        return rel in self.tracked or rel.rstrip("/") in self.folders

    def ignored(self, rel: str) -> bool:
        return subprocess.run(["git", "-C", self.root, "check-ignore", "-q", "--no-index", rel]).returncode == 0

    def anchors(self, rel: str) -> set[str]:
        if rel not in self.anchor_cache:
            self.anchor_cache[rel] = markdown_anchors(read_text(os.path.join(self.root, rel)))
        return self.anchor_cache[rel]

    def is_script(self, rel: str) -> bool:
        if rel.endswith(SCRIPT_SUFFIXES):
            return True
        if "." in os.path.basename(rel):
            return False
        with open(os.path.join(self.root, rel), "rb") as handle:
            return handle.read(2) == b"#!"


class Checker:
    """`Checker(repo, exempt).run()`: one finding a line, `path:line: what`; `checked` counts the
    links and paths it resolved."""

    def __init__(self, repo: Repository, exempt: Iterable[str] = ()):
        self.repo = repo
        self.exempt = set(exempt)
        self.findings: list[str] = []
        self.checked = 0
        start = "|".join(re.escape(folder) + "/" for folder in repo.top_folders)
        self.path_token = re.compile(
            rf"(?<![A-Za-z0-9_.$/~@%+-])((?:\.\.?/|{start}){PATH_CHARS}*(?:#[A-Za-z0-9_-]+)?)")

    def report(self, rel: str, number: int, message: str) -> None:
        self.findings.append(f"{rel}:{number}: {message}")

    def run(self) -> list[str]:
        for rel in self.repo.files:
            path = os.path.join(self.repo.root, rel)
            if not os.path.isfile(path):
                continue
            text = read_text(path)
            for number, line in enumerate(text.splitlines(), 1):
                for forbidden in FORBIDDEN:
                    if forbidden in line:
                        self.report(rel, number, f"refers to '{forbidden}', which a clone does not have")
            if rel in self.exempt:
                continue  # plants broken paths on purpose (rule 1 still applies)
            if rel.endswith(".md"):
                self.check_markdown_links(rel, text)
            if rel.endswith(DOCUMENT_SUFFIXES) or self.repo.is_script(rel):
                self.check_path_tokens(rel, text)
        return self.findings

    def check_markdown_links(self, rel: str, text: str) -> None:
        for number, line, in_fence in markdown_lines(text):
            if in_fence:
                continue
            targets = re.findall(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)", line)
            targets += re.findall(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", line)
            for target in targets:
                if re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", target):
                    continue  # a URL (https:, mailto:, …): not a path in the repository
                self.checked += 1
                self.resolve(rel, number, target, bases=[os.path.dirname(rel)], what="link")

    def check_path_tokens(self, rel: str, text: str) -> None:
        script = not rel.endswith(DOCUMENT_SUFFIXES)
        markdown = rel.endswith(".md")
        lines = markdown_lines(text) if markdown else ((n, line, False) for n, line in enumerate(text.splitlines(), 1))
        for number, line, in_fence in lines:
            if markdown and not in_fence:
                line = re.sub(r"\]\([^)]*\)", "]()", line)  # link targets: checked as links
            for match in re.finditer(rf"""\$\(dirname "\$(?:0|{{BASH_SOURCE\[0\]}})"\)/({PATH_CHARS}+)""", line):
                self.checked += 1
                self.resolve(rel, number, match.group(1), bases=[os.path.dirname(rel)], what="path")
            for match in self.path_token.finditer(line):
                token = match.group(1)
                follower = line[match.end():match.end() + 1]
                if follower and follower in PATTERN_FOLLOWERS:
                    token = token[:token.rfind("/") + 1]  # a pattern: its folder must exist
                token = token.rstrip(".")
                if token in ("./", "../", ""):
                    continue
                if script and token.startswith("./") and "/" not in token[2:]:
                    continue  # `./program` runs from the folder the script is in now, often a scratch one
                self.checked += 1
                self.resolve(rel, number, token, bases=[os.path.dirname(rel), ""], what="path")

    def resolve(self, rel: str, number: int, target: str, bases: Sequence[str], what: str) -> None:
        path, _, anchor = target.partition("#")
        resolved: Optional[str] = rel  # `#anchor` alone: this file
        if path:
            candidates = [self.repo.relative(os.path.join(self.repo.root, base, path)) for base in bases]
            inside = [candidate for candidate in candidates if candidate is not None]
            resolved = next((c for c in inside if self.repo.exists(c)), None)
            if resolved is None:
                resolved = next((c for c in inside if self.repo.ignored(c)), None)
        if resolved is None:
            where = "outside the repository" if len(inside) < len(candidates) else "to nothing tracked"
            self.report(rel, number, f"{what} '{target}' points {where}")
        elif anchor and resolved.endswith(".md") and resolved in self.repo.tracked:
            if anchor not in self.repo.anchors(resolved):
                self.report(rel, number, f"{what} '{target}': no heading or anchor '#{anchor}' in {resolved}")


def check(root: str, exempt: Iterable[str] = ()) -> tuple[list[str], int, int]:
    """(findings, tracked files, links and paths checked) of the git tree at `root`."""
    repo = Repository(root)
    checker = Checker(repo, exempt)
    return checker.run(), len(repo.files), checker.checked
