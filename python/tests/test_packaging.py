"""The package as a Python reviewer installs it (issue 37, item 2): `pip install todaysim` needs
httpx alone, `todaysim[pytest]`, `todaysim[explore]` and `todaysim[test]` add the rest; the
client imports none of pytest, Playwright or Hypothesis; `todaysim[explore]` alone runs
`todaysim-explore` (issue 45, item 6: no pytest); the pytest plugin is active only where a
project asks for it (no `pytest11` entry point); the JavaScript it adds to pages ships as the
repository's own `Web/` files."""
from __future__ import annotations

import email.message
import email.parser
import importlib.metadata
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import zipfile

import pytest
from packaging.requirements import Requirement

from todaysim.plugin import TodaysimServer

pytest_plugins = ["pytester"]

ROOT = pathlib.Path(__file__).resolve().parents[2]

#: What the wheel's metadata must say: the one unconditional dependency, and each extra's.
UNCONDITIONAL = {"httpx"}
EXTRAS = {
    "pytest": {"pytest", "playwright"},
    "explore": {"hypothesis", "playwright"},
    "test": {"pytest", "playwright", "hypothesis", "pyyaml", "mypy", "types-pyyaml"},
}
#: The package's files that are the repository's `Web/` scripts (links in the source tree).
SHIPPED_SCRIPTS = {"virtual_time.js": "virtual-time.js", "settle_probe.js": "settle-probe.js",
                   "page_driver.js": "page-driver.js"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """A wheel built as `pip wheel --no-deps` builds it, from a copy of python/ beside the
    repository's VERSION and Web/ (the links in python/ point there), so the clone stays clean."""
    work = tmp_path_factory.mktemp("build")
    shutil.copytree(ROOT / "python", work / "python", symlinks=True,
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", ".hypothesis", ".mypy_cache"))
    shutil.copytree(ROOT / "Web", work / "Web")
    shutil.copy(ROOT / "VERSION", work / "VERSION")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check", "-q",
                            "-w", str(work / "dist"), str(work / "python")], capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    (found,) = (work / "dist").glob("todaysim-*.whl")
    return found


def dist_info(wheel: pathlib.Path, name: str) -> str:
    with zipfile.ZipFile(wheel) as archive:
        (member,) = [m for m in archive.namelist() if re.fullmatch(r"todaysim-[^/]+\.dist-info/" + name, m)]
        return archive.read(member).decode("utf-8")


def requirements(metadata: email.message.Message) -> dict[str | None, set[str]]:
    """Each `Requires-Dist`'s project name (normalized) under its extra (None: unconditional)."""
    found: dict[str | None, set[str]] = {}
    for line in metadata.get_all("Requires-Dist") or []:
        requirement, _, marker = line.partition(";")
        project = re.split(r"[\s<>=!~\[(]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")
        extra = re.fullmatch(r"""\s*extra\s*==\s*["']([^"']+)["']\s*""", marker) if marker else None
        assert not marker or extra, f"a marker other than one extra: {line}"
        found.setdefault(extra.group(1) if extra else None, set()).add(project)
    return found


def test_the_wheel_needs_httpx_alone_and_the_rest_under_extras(wheel: pathlib.Path) -> None:
    metadata = email.parser.Parser().parsestr(dist_info(wheel, "METADATA"))
    found = requirements(metadata)
    assert found.pop(None) == UNCONDITIONAL
    assert found == EXTRAS
    assert set(metadata.get_all("Provides-Extra") or []) == set(EXTRAS)


def test_the_wheel_registers_no_pytest_plugin(wheel: pathlib.Path) -> None:
    """No `pytest11` entry point: installing the package loads nothing into a pytest run."""
    sections = re.findall(r"^\[([^\]]+)\]", dist_info(wheel, "entry_points.txt"), re.M)
    assert sections == ["console_scripts"]
    assert "todaysim-explore = todaysim.cli:main" in dist_info(wheel, "entry_points.txt")


def test_the_wheel_carries_the_web_scripts_as_files(wheel: pathlib.Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        for shipped, source in SHIPPED_SCRIPTS.items():
            assert archive.read(f"todaysim/{shipped}") == (ROOT / "Web" / source).read_bytes(), shipped


def imported_by(statement: str) -> list[str]:
    """The top-level test-tool modules (pytest, Playwright, Hypothesis) a fresh interpreter has
    loaded after `statement`."""
    probe = (f"import json, sys\n{statement}\n"
             "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & {'pytest', '_pytest', 'playwright', 'hypothesis'})))")
    ran = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert ran.returncode == 0, ran.stderr[-2000:]
    loaded: list[str] = json.loads(ran.stdout)
    return loaded


def test_the_client_imports_no_test_tool() -> None:
    assert imported_by("import todaysim, todaysim.client") == []
    # The probe sees them where they are imported: the plugin needs pytest.
    assert "pytest" in imported_by("import todaysim.plugin")


def test_the_explorer_command_without_its_extra_names_it() -> None:
    """`todaysim-explore` comes with the base package; where Hypothesis is missing (no
    `todaysim[explore]`) it says what to install instead of a traceback."""
    assert imported_by("import todaysim.cli") == []
    probe = ("import sys\nsys.modules['hypothesis'] = None  # as if not installed\n"
             "from todaysim.cli import main\nsys.exit(main(['http://127.0.0.1:9/index.html']))")
    ran = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert ran.returncode == 2, ran.stderr[-2000:]
    assert "pip install 'todaysim[explore]'" in ran.stderr and "Traceback" not in ran.stderr


def installed_closure(wheel: pathlib.Path, extra: str) -> dict[str, importlib.metadata.Distribution]:
    """The distributions `pip install 'todaysim[extra]'` installs besides todaysim, by name, as
    this venv holds them: the wheel's own requirements (its unconditional ones and `extra`'s),
    then theirs, each marker evaluated for this interpreter; a version outside a requirement's
    range fails the test (the copy would not be what pip installs)."""
    wanted = [(Requirement(line), extra) for line in
              email.parser.Parser().parsestr(dist_info(wheel, "METADATA")).get_all("Requires-Dist") or []]
    found: dict[str, importlib.metadata.Distribution] = {}
    while wanted:
        requirement, context = wanted.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": context}):
            continue
        distribution = importlib.metadata.distribution(requirement.name)
        assert requirement.specifier.contains(distribution.version, prereleases=True), (requirement, distribution.version)
        name = distribution.metadata["Name"].lower()
        if name in found:
            continue
        found[name] = distribution
        for asked in list(requirement.extras) or [""]:
            wanted += [(Requirement(line), asked) for line in distribution.requires or []]
    return found


def test_the_explorer_runs_with_only_its_extra_installed(wheel: pathlib.Path, tmp_path: pathlib.Path, today_page: str,
                                                         todaysim_server: TodaysimServer) -> None:
    """`pip install 'todaysim[explore]'` alone runs `todaysim-explore` (it once imported the pytest
    plugin, and so pytest, to pick the browser). A new venv gets exactly what that install gets —
    the wheel (by pip, so its console script is made) and its `explore` closure, copied from this
    venv (offline: the same files pip would fetch) — and no pytest; the command then explores the
    fixture page for real, from outside the clone."""
    # Nothing of this run's environment reaches the venv's processes (PYTHONPATH would put a
    # source tree's todaysim beside the wheel's, and make pip take it as installed).
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "TODAYSIM_", "VIRTUAL_ENV"))}
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120, env=env)
    python = venv / "bin" / "python"
    site = pathlib.Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                       capture_output=True, text=True, check=True, env=env).stdout.strip())
    closure = installed_closure(wheel, "explore")
    assert {"hypothesis", "playwright", "httpx"} <= set(closure) and not {"pytest", "todaysim"} & set(closure), closure
    for distribution in closure.values():
        for file in distribution.files or []:
            source = pathlib.Path(str(distribution.locate_file(file))).resolve()
            target = site / file
            if ".." in file.parts or not source.is_file():  # its own scripts (bin/): not needed to import it
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(source, target)
            except OSError:
                shutil.copy2(source, target)
    pip = [sys.executable, "-m", "pip", "--python", str(python), "--disable-pip-version-check"]
    installed = subprocess.run(pip + ["install", "-q", "--no-deps", "--no-index", str(wheel)], capture_output=True,
                               text=True, timeout=600, env=env)
    assert installed.returncode == 0, installed.stderr[-2000:]
    checked = subprocess.run(pip + ["check"], capture_output=True, text=True, timeout=120, env=env)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    env.update(TODAYSIM_URL=str(todaysim_server.url), TODAYSIM_BROWSER=os.environ.get("TODAYSIM_BROWSER") or "chromium")
    if todaysim_server.token:
        env["TODAYSIM_TOKEN"] = todaysim_server.token
    no_pytest = subprocess.run([str(python), "-c", "import pytest"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert no_pytest.returncode == 1 and "No module named 'pytest'" in no_pytest.stderr, no_pytest.stderr

    ran = subprocess.run([str(venv / "bin" / "todaysim-explore"), today_page, "--examples", "2", "--seed", "1"],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-3000:]
    assert "no breach of the contract found" in ran.stdout, ran.stdout


FIXTURE_TEST = '''
def test_the_server_answers(todaysim):
    assert todaysim.health()["status"] == "ok"
'''


def test_the_plugin_is_active_only_where_asked_for(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                                                   todaysim_server: TodaysimServer) -> None:
    """Installed is not active: with plugin autoloading on (as in any project's run), a test
    naming the plugin's fixture finds none; `-p todaysim.plugin` or `pytest_plugins` in a
    conftest.py makes it pass."""
    monkeypatch.setenv("TODAYSIM_URL", str(todaysim_server.url))
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    pytester.makepyfile(test_fixture=FIXTURE_TEST)
    unasked = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    unasked.assert_outcomes(errors=1)
    unasked.stdout.fnmatch_lines(["*fixture 'todaysim' not found*"])

    pytester.runpytest_subprocess("-p", "todaysim.plugin", "-p", "no:cacheprovider").assert_outcomes(passed=1)

    pytester.makeconftest('pytest_plugins = ["todaysim.plugin"]\n')
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
