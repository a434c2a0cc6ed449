"""The Android host-trace recorder (android/recorder, issue 35 item 2) built and tested here with
Debian's Kotlin compiler (kotlin 1.3.31: kotlinc) and JUnit 4 on the machine's JDK — not with
Gradle, which cannot be fetched here, and not on an Android device. The recorder's source
(src/main/kotlin) compiles on its own, against the Kotlin standard library and the JDK only (an
Android class or org.json would not compile); the tests (src/test/kotlin) against it and JUnit,
then the Java tests (src/test/java: a Java host's calls) with javac --release 8 against both.
Each JUnit class runs on its own and must pass every `@Test` of its file: among them the
checklist's calls played through the recorder and judged by this build's `todaysim verify-host`
(TODAYSIM_BIN): the golden table conforms, each planted host bug is found by its rule (H11, H10).
kotlin, junit4 and a JDK are installed with apt-get when missing."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from support import ROOT
from support.tools import install_packages

RECORDER = os.path.join(ROOT, "android", "recorder")
TESTS = os.path.join(RECORDER, "src", "test", "kotlin")
JAVA_TESTS = os.path.join(RECORDER, "src", "test", "java")


def junit_classes() -> dict[str, int]:
    """Each JUnit class of src/test/kotlin and src/test/java (`class NameTest` in its own file,
    `public class` in Java, named with the file's package) and the number of `@Test`s its file
    holds."""
    found = {}
    for path in sorted([*Path(TESTS).rglob("*Test.kt"), *Path(JAVA_TESTS).rglob("*Test.java")]):
        text = path.read_text(encoding="utf-8")
        package = re.search(r"^package ([\w.]+)", text, re.M)
        if package and re.search(rf"^(public )?class {path.stem}\b", text, re.M):
            found[f"{package.group(1)}.{path.stem}"] = len(re.findall(r"@Test\b", text))
    return found


JUNIT_CLASSES = junit_classes()


@dataclass
class Kotlin:
    stdlib: str
    junit: str  # JUnit 4's jar and the hamcrest-core its manifest names
    work: Path
    version: str = ""

    def compile(self, *args: str) -> None:
        """kotlinc with the flags both compilations share: -jvm-target 1.8 (bytecode any JDK from 8 on
        runs and Android's D8 takes), -Werror (a warning fails the build, deprecations included, so
        nothing 1.3 already warns about gets in), -no-reflect (an app need not add kotlin-reflect).
        Debian's launcher starts the compiler's JVM with -noverify, which JDK 13 and later warn
        about on every run: that line concerns the compiler's own JVM and is left out."""
        done = subprocess.run(["kotlinc", "-jvm-target", "1.8", "-Werror", "-no-reflect", *args],
                              capture_output=True, text=True, timeout=600)
        output = done.stdout + done.stderr
        self.version = self.version or next(iter(re.findall(r"^info: kotlinc-jvm (\S+)", output, re.M)), "")
        shown = "\n".join(line for line in output.splitlines()
                          if "-noverify were deprecated" not in line and not line.startswith("info: kotlinc-jvm"))
        assert done.returncode == 0, f"kotlinc {' '.join(args)} failed ({self.versions()}):\n{shown}"

    def compile_java(self, classpath: str, out: Path, sources: list[str]) -> None:
        """javac --release 8 (the Java an Android app's code may be), every lint, a warning an error."""
        done = subprocess.run(["javac", "--release", "8", "-Xlint:all", "-Werror", "-cp", classpath, "-d", str(out), *sources],
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"javac {' '.join(sources)} failed ({self.versions()}):\n{done.stdout}{done.stderr}"

    def versions(self) -> str:
        packaged = {name: subprocess.run(["dpkg-query", "-W", "-f=${Version}", name], capture_output=True,
                                         text=True).stdout for name in ("kotlin", "junit4")}
        java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.split("\n")[0]
        return f"kotlinc {self.version or '?'} of Debian kotlin {packaged['kotlin'] or '?'}, JUnit {packaged['junit4'] or '4'}, {java}"


@pytest.fixture(scope="module")
def kotlin(tmp_path_factory: pytest.TempPathFactory) -> Kotlin:
    missing = [] if shutil.which("kotlinc") else ["kotlin"]
    missing += [] if os.path.isfile("/usr/share/java/junit4.jar") else ["junit4"]
    missing += [] if shutil.which("java") and shutil.which("javac") else ["default-jdk-headless"]
    install_packages(*missing)
    # The standard library beside the compiler (Debian links /usr/bin/kotlinc into its KOTLIN_HOME).
    home = os.path.dirname(os.path.dirname(os.path.realpath(str(shutil.which("kotlinc")))))
    stdlib = next((jar for jar in (os.path.join(home, "lib", "kotlin-stdlib.jar"), "/usr/share/java/kotlin-stdlib.jar")
                   if os.path.isfile(jar)), "")
    assert stdlib, f"no kotlin-stdlib.jar in {home}/lib nor /usr/share/java"
    junit = ":".join(jar for jar in ("/usr/share/java/junit4.jar", "/usr/share/java/hamcrest-core.jar") if os.path.isfile(jar))
    return Kotlin(stdlib, junit, tmp_path_factory.mktemp("android-recorder"))


@pytest.fixture(scope="module")
def recorder_classes(kotlin: Kotlin) -> Path:
    out = kotlin.work / "main"
    kotlin.compile("-version", "-d", str(out), os.path.join(RECORDER, "src", "main", "kotlin"))
    return out


@pytest.fixture(scope="module")
def compiled_tests(kotlin: Kotlin, recorder_classes: Path) -> Path:
    out = kotlin.work / "test"
    kotlin.compile("-cp", f"{recorder_classes}:{kotlin.junit}", "-d", str(out), TESTS)
    java = sorted(str(path) for path in Path(JAVA_TESTS).rglob("*.java"))
    if java:
        kotlin.compile_java(f"{recorder_classes}:{out}:{kotlin.stdlib}:{kotlin.junit}", out, java)
    return out


def test_the_recorder_compiles_on_the_standard_library_and_the_jdk_alone(recorder_classes: Path) -> None:
    assert (recorder_classes / "dev" / "todaysim" / "recorder" / "TodayPageTraceRecorder.class").is_file(), \
        f"no TodayPageTraceRecorder.class in {sorted(str(p) for p in recorder_classes.rglob('*.class'))}"


def test_the_tests_compile_and_every_test_class_is_run_here(compiled_tests: Path) -> None:
    compiled = sorted(str(path.relative_to(compiled_tests).with_suffix("")).replace("/", ".")
                      for path in compiled_tests.rglob("*Test.class") if "$" not in path.name)
    assert compiled == sorted(JUNIT_CLASSES), f"compiled test classes {compiled}, run here {sorted(JUNIT_CLASSES)}"
    assert all(JUNIT_CLASSES.values()), f"a test class without a @Test: {JUNIT_CLASSES}"


@pytest.mark.parametrize("junit_class", sorted(JUNIT_CLASSES))
def test_the_junit_class_passes_every_test(junit_class: str, kotlin: Kotlin, recorder_classes: Path, compiled_tests: Path,
                                           binary: str) -> None:
    scratch = kotlin.work / "tmp"
    scratch.mkdir(exist_ok=True)
    done = subprocess.run(["java", f"-Djava.io.tmpdir={scratch}", "-cp",
                           f"{recorder_classes}:{compiled_tests}:{kotlin.stdlib}:{kotlin.junit}",
                           "org.junit.runner.JUnitCore", junit_class],
                          env={**os.environ, "TODAYSIM_BIN": binary}, capture_output=True, text=True, timeout=600)
    output = done.stdout + done.stderr
    expected = JUNIT_CLASSES[junit_class]
    assert done.returncode == 0 and f"OK ({expected} test{'s' if expected != 1 else ''})" in output, \
        f"{junit_class}: {expected} tests expected to pass ({kotlin.versions()}; verify-host: {binary}):\n{output}"
