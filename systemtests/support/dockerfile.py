"""The Dockerfile read without building it (test_dockerfile.py; formerly the script
`check-dockerfile`): no Docker engine runs on the machines this project is developed and tested
on, and an image that no longer builds would otherwise go unnoticed. `problems_of` lists:

- a path Package.swift needs (Package.swift, the path of every target as SwiftPM itself reports
  it, test targets included: SwiftPM refuses to load a package whose declared target folder is
  missing, even to build one product; the files Plugins/EmbedFiles embeds from outside their
  target) that the stage running `swift build` does not COPY to where the package expects it;
- a `.dockerignore` (DOCKERFILE.dockerignore, else the repository's) that leaves one out;
- a `swift` image not pinned to the major.minor of `swift --version` (the runtime libraries of
  the slim image must be the compiler's), or a build stage that is not an official `swift` image;
- a final stage that takes more than the `todaysim` binary from the build (the binary embeds its
  files), misses the runtime package of a system library the binary links (libpq5 for
  CPostgres, …), or has no HEALTHCHECK on /healthz at the EXPOSEd port;
- what `support/compose.py` finds in the docker-compose.yml beside the Dockerfile."""
from __future__ import annotations

import fnmatch
import json
import os
import re
import shlex
import subprocess
import tempfile
from dataclasses import dataclass, field
from typing import Optional

from support.compose import check_compose, probes

from support import ROOT

# The Debian package that holds each system library's shared object at run time (the build
# stage has the -dev packages; the slim runtime image has neither unless installed).
RUNTIME_PACKAGES = {"CMicroHTTPD": "libmicrohttpd12", "CSQLite": "libsqlite3-0", "CPostgres": "libpq5"}


@dataclass
class Needs:
    """What the build needs: every path Package.swift needs, and the system-library targets the
    todaysim binary links."""
    paths: list[str]
    libraries: list[str]


@dataclass
class Stage:
    """A stage: its image, and (keyword, argument, workdir) per instruction after FROM."""
    image: str
    steps: list[tuple[str, str, str]] = field(default_factory=list)

    def builds(self) -> bool:
        return any(keyword == "RUN" and "swift build" in rest for keyword, rest, _ in self.steps)


def instructions(path: str) -> list[tuple[str, str]]:
    """(keyword, argument text) per instruction, continuation lines joined, comments dropped."""
    result, pending = [], ""
    with open(path, encoding="utf-8") as file:
        for raw in file:
            line = raw.rstrip("\n")
            if not pending and (not line.strip() or line.lstrip().startswith("#")):
                continue
            if line.endswith("\\"):
                pending += line[:-1] + " "
                continue
            text = (pending + line).strip()
            pending = ""
            keyword, _, rest = text.partition(" ")
            result.append((keyword.upper(), rest.strip()))
    return result


def stages(path: str) -> list[Stage]:
    """Each stage, in order. Its image is the first word of FROM that is not a flag, with the
    ARGs declared before the first FROM substituted."""
    found: list[Stage] = []
    workdir, arguments = "/", {}
    for keyword, rest in instructions(path):
        if keyword == "ARG" and not found:
            name, _, default = rest.partition("=")
            arguments[name.strip()] = default.strip().strip('"')
        if keyword == "FROM":
            workdir = "/"
            image = next(word for word in rest.split() if not word.startswith("--"))
            image = re.sub(r"\$\{?(\w+)\}?", lambda match: arguments.get(match.group(1), match.group(0)), image)
            found.append(Stage(image))
        elif found:
            if keyword == "WORKDIR":
                workdir = os.path.normpath(os.path.join(workdir, rest))
            found[-1].steps.append((keyword, rest, workdir))
    return found


def copy_arguments(rest: str) -> tuple[list[str], list[str], str]:
    """(flags, sources, destination) of a COPY in shell or JSON form."""
    words: list[str] = json.loads(rest) if rest.startswith("[") else shlex.split(rest)
    flags = [word for word in words if word.startswith("--")]
    paths = [word for word in words if not word.startswith("--")]
    return flags, paths[:-1], paths[-1]


def landing(source: str, destination: str, workdir: str, several: bool) -> str:
    """Where a COPY puts the repository path `source` in the image."""
    target = os.path.join(workdir, destination)
    if os.path.isfile(os.path.join(ROOT, source)) and (destination.endswith("/") or several):
        target = os.path.join(target, os.path.basename(source))
    return os.path.normpath(target)


def needed() -> Needs:
    """What Package.swift needs, as `swift package describe` says, and what the plugin embeds.
    In a scratch folder of its own: `.build` is locked while a build runs there (Scripts/test's
    chains build beside this test), and describing waited for the whole build."""
    with tempfile.TemporaryDirectory(prefix="todaysim-describe-") as scratch:
        described = subprocess.run(["swift", "package", "--scratch-path", scratch, "describe", "--type", "json"],
                                   cwd=ROOT, capture_output=True, text=True, check=True, timeout=600).stdout
    package = json.loads(described[described.index("{"):])
    libraries = sorted(target["name"] for target in package["targets"]
                       if target["type"] == "system-target" and "todaysim" in target.get("product_memberships", []))
    return Needs(["Package.swift"] + sorted(target["path"] for target in package["targets"]) + embedded_elsewhere(),
                 libraries)


def embedded_elsewhere() -> list[str]:
    """The files Plugins/EmbedFiles embeds from outside their target's folder (its
    `alsoEmbedded`, e.g. docs/RULES.md for /rules): the build needs them as much as a target."""
    with open(os.path.join(ROOT, "Plugins", "EmbedFiles", "EmbedFiles.swift"), encoding="utf-8") as file:
        source = file.read()
    table = re.search(r"static let alsoEmbedded[^=]*=\s*\[(.*?)\]\s*$", source, re.S | re.M)
    assert table is not None, "Plugins/EmbedFiles/EmbedFiles.swift has no alsoEmbedded table to read"
    lists = re.findall(r":\s*\[([^\]]*)\]", table.group(1))
    return sorted(path for paths in lists for path in re.findall(r'"([^"]+)"', paths))


def swift_version() -> str:
    output = subprocess.run(["swift", "--version"], capture_output=True, text=True, check=True, timeout=120).stdout
    match = re.search(r"Swift version (\d+)\.(\d+)", output)
    assert match is not None, output
    return f"{match.group(1)}.{match.group(2)}"


def check_copies(build: Stage, paths: list[str], problems: list[str]) -> None:
    build_dir = next(workdir for keyword, rest, workdir in build.steps if keyword == "RUN" and "swift build" in rest)
    copied = {}
    for keyword, rest, workdir in build.steps:
        if keyword != "COPY":
            continue
        flags, sources, destination = copy_arguments(rest)
        if any(flag.startswith("--from") for flag in flags):
            continue
        for source in sources:
            source = os.path.normpath(source)
            copied[source] = landing(source, destination, workdir, len(sources) > 1)
    for path in paths:
        covering = [source for source in copied if source == "." or path == source or path.startswith(source + "/")]
        expected = os.path.normpath(os.path.join(build_dir, path))
        if not covering:
            problems.append(f"the build stage does not COPY {path} (Package.swift needs it)")
        elif not any(os.path.normpath(os.path.join(copied[source], os.path.relpath(path, source))) == expected
                     for source in covering):
            places = ", ".join(f"{source} → {copied[source]}" for source in covering)
            problems.append(f"{path} must land at {expected} (where `swift build` runs); the COPY puts {places}")


def check_dockerignore(dockerfile: str, paths: list[str], problems: list[str]) -> None:
    candidates = [dockerfile + ".dockerignore", os.path.join(ROOT, ".dockerignore")]
    ignore = next((path for path in candidates if os.path.isfile(path)), None)
    if ignore is None:
        return
    with open(ignore, encoding="utf-8") as file:
        patterns = [line.strip().strip("/") for line in file if line.strip() and not line.lstrip().startswith(("#", "!"))]
    shown = os.path.relpath(ignore, ROOT) if ignore.startswith(ROOT + "/") else ignore
    for path in paths:
        parts = path.split("/")
        prefixes = ["/".join(parts[:count]) for count in range(1, len(parts) + 1)]
        for pattern in patterns:
            if any(fnmatch.fnmatchcase(prefix, pattern) for prefix in prefixes):
                problems.append(f"{shown}: `{pattern}` leaves {path} out of the build context")


def image_name(image: str) -> str:
    return image.rpartition("/")[2].partition(":")[0].partition("@")[0]


def check_images(found: list[Stage], build: Stage, version: str, problems: list[str]) -> None:
    if image_name(build.image) != "swift":
        problems.append(f"the build stage is FROM {build.image}: use an official swift image, "
                        f"whose tag names its Swift ({version})")
    for stage in found:
        name, _, tag = stage.image.rpartition("/")[2].partition(":")
        if name != "swift":
            continue
        match = re.match(r"(\d+)\.(\d+)", tag)
        if not match:
            problems.append(f"FROM {stage.image}: pin the Swift version ({version}, as `swift --version` says)")
        elif f"{match.group(1)}.{match.group(2)}" != version:
            problems.append(f"FROM {stage.image}: Swift {match.group(1)}.{match.group(2)}, "
                            f"but the project builds with {version} (`swift --version`)")


def check_runtime(final: Stage, libraries: list[str], problems: list[str]) -> Optional[str]:
    """The runtime stage's problems; returns its EXPOSEd port."""
    installed = " ".join(rest for keyword, rest, _ in final.steps if keyword == "RUN").split()
    for library in libraries:
        package = RUNTIME_PACKAGES.get(library)
        if package is None:
            problems.append(f"the binary links {library}: add its Debian runtime package to RUNTIME_PACKAGES")
        elif package not in installed:
            problems.append(f"the runtime stage does not install {package}, which the binary needs ({library})")
    for keyword, rest, _ in final.steps:
        if keyword == "COPY" and any(flag.startswith("--from") for flag in copy_arguments(rest)[0]):
            extra = [source for source in copy_arguments(rest)[1] if os.path.basename(source.rstrip("/")) != "todaysim"]
            if extra:
                problems.append(f"the runtime stage copies {', '.join(extra)}: only the todaysim binary belongs there")
    port = next((rest.split()[0].partition("/")[0] for keyword, rest, _ in final.steps if keyword == "EXPOSE"), None)
    checks = [rest for keyword, rest, _ in final.steps if keyword == "HEALTHCHECK"]
    if not any(probes(check, port, "healthz") for check in checks):
        problems.append(f"the runtime stage has no HEALTHCHECK on /healthz at its EXPOSEd port ({port})")
    return port


def problems_of(dockerfile: str, needs: Needs, version: str) -> list[str]:
    """Every problem of `dockerfile` and of the docker-compose.yml beside it, if any."""
    found = stages(dockerfile)
    build = next((stage for stage in found if stage.builds()), None)
    if build is None:
        return [f"no stage of {dockerfile} runs `swift build`"]
    problems: list[str] = []
    check_copies(build, needs.paths, problems)
    check_dockerignore(dockerfile, needs.paths, problems)
    check_images(found, build, version, problems)
    port = check_runtime(found[-1], needs.libraries, problems)
    compose = os.path.join(os.path.dirname(dockerfile), "docker-compose.yml")
    if os.path.isfile(compose):
        check_compose(compose, port, problems)
    return problems
