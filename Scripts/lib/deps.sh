# Sourced by Scripts/test and Scripts/run: installs the Debian packages the build needs when
# they are missing, so both commands work on a fresh machine.
ensure_build_dependencies() {
    local missing=()
    command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
    if command -v pkg-config >/dev/null 2>&1; then
        pkg-config --exists libmicrohttpd || missing+=(libmicrohttpd-dev)
        pkg-config --exists sqlite3 || missing+=(libsqlite3-dev)
        pkg-config --exists libpq || missing+=(libpq-dev)
    else
        missing+=(libmicrohttpd-dev libsqlite3-dev libpq-dev)
    fi
    install_packages "${missing[@]}"
    pkg-config --exists libmicrohttpd sqlite3 libpq
}

# Scripts/package: dpkg-shlibdeps (dpkg-dev) derives the package's Depends, binutils strips
# the binary (readelf, strip), and the static link of Foundation needs libcurl's -dev package
# (FoundationNetworking keeps libcurl a shared library).
ensure_packaging_tools() {
    local missing=()
    command -v dpkg-shlibdeps >/dev/null 2>&1 || missing+=(dpkg-dev)
    command -v readelf >/dev/null 2>&1 && command -v strip >/dev/null 2>&1 || missing+=(binutils)
    install_packages "${missing[@]}"
    ensure_static_link_dependencies
}

# What a build with the Swift runtime linked in (Scripts/lib/package.sh) needs beyond the build's:
# FoundationNetworking links libcurl as a shared library, found through pkg-config.
ensure_static_link_dependencies() {
    local missing=()
    command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
    command -v pkg-config >/dev/null 2>&1 && pkg-config --exists libcurl || missing+=(libcurl4-openssl-dev)
    install_packages "${missing[@]}"
}

# curl and jq drive the scenario scripts; python3 picks them a free port; the tests run a
# throwaway PostgreSQL (Scripts/postgres) from Debian's server binaries.
ensure_test_tools() {
    local missing=()
    command -v curl >/dev/null 2>&1 || missing+=(curl)
    command -v jq >/dev/null 2>&1 || missing+=(jq)
    command -v python3 >/dev/null 2>&1 || missing+=(python3)
    postgres_bin_dir >/dev/null || missing+=(postgresql)
    install_packages "${missing[@]}"
}

# The Chromium the browser tests drive, installed when missing: Debian's old headless shell
# (chromium-headless-shell: no UI, about a third less of the browser process's CPU a page than
# `chromium --headless`, docs/PERFORMANCE.md), and chromium beside it (Scripts/open-page, the
# TypeScript tests' default). `chromium_path` prints the headless shell's path, else chromium's.
ensure_chromium() {
    local missing=()
    command -v chromium >/dev/null 2>&1 || missing+=(chromium)
    command -v chromium-headless-shell >/dev/null 2>&1 || missing+=(chromium-headless-shell)
    install_packages "${missing[@]}"
}
chromium_path() {
    command -v chromium-headless-shell 2>/dev/null || command -v chromium
}

# For the browser tests' scripts: every settle the page drivers make may take a minute of wall
# time (their default, when a test gives none): 2 s is a race on a machine beside builds, where
# a settle waits its turn for a core. A test of the deadline itself gives a short one of its own.
settle_generously() {
    export TODAYSIM_SETTLE_TIMEOUT_MS=${TODAYSIM_SETTLE_TIMEOUT_MS:-60000}
}

# PostgreSQL's server binaries live in /usr/lib/postgresql/<major>/bin, off PATH; the newest wins.
postgres_bin_dir() {
    local dir
    dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5,5n | tail -n 1)
    [ -n "$dir" ] && [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ] && [ -x "$dir/pg_isready" ] || return 1
    echo "$dir"
}

# Debian's python3 makes virtual environments (with pip) only with python3-venv installed
# (schemathesis runs in one): try one, install the package when that fails.
ensure_python_venv() {
    local probe
    probe=$(mktemp -d "${TMPDIR:-/tmp}/todaysim-venv-probe.XXXXXX")
    if python3 -m venv "$probe/venv" >/dev/null 2>&1; then
        rm -rf "$probe"
        return 0
    fi
    rm -rf "$probe"
    install_packages python3-venv
}

install_packages() {
    [ "$#" -eq 0 ] && return 0
    echo "installing missing packages: $*" >&2
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null 2>&1 || { echo "need root or sudo to install $*" >&2; return 1; }
        sudo="sudo"
    fi
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

ensure_swift() {
    command -v swift >/dev/null 2>&1 && return 0
    [ -x /opt/swift/usr/bin/swift ] && export PATH="/opt/swift/usr/bin:$PATH" && return 0
    echo "swift is not on PATH (expected the Swift 6 toolchain, e.g. in /opt/swift)" >&2
    return 1
}

# The virtual environment the tests' PyPI tools share (schemathesis, the Playwright example, the
# generated client). It lives outside the clone, in the user's cache folder (TODAYSIM_CACHE, else
# $XDG_CACHE_HOME/todaysim or ~/.cache/todaysim), like pip's own cache: a fresh clone would
# otherwise install Playwright and schemathesis again every run (about a minute of each CI run).
# Made when missing or broken, each pinned requirement given installed when not there yet (pip
# answers that from the venv, offline). Shared by every clone on the machine, so it is locked:
# installing takes the lock exclusively, and the script that asked then holds it shared until it
# exits, so no other run installs into it (or remakes it) while this one uses it. Where no cache
# folder can be made it falls back to .build/test-venv in the clone.
test_venv_path() {
    local cache=${TODAYSIM_CACHE:-${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/todaysim}
    local python
    python=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || echo unknown)
    if mkdir -p "$cache" 2>/dev/null && [ -w "$cache" ]; then
        echo "$cache/test-venv-py$python"
    else
        echo "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/.build/test-venv"
    fi
}
TEST_VENV=$(test_venv_path)
ensure_test_venv() {
    # Made whole by prepare_test_venv in a parent (Scripts/test), which holds it for the run.
    [ -n "${TEST_VENV_PREPARED:-}" ] && [ -x "$TEST_VENV/bin/python" ] && return 0
    mkdir -p "$(dirname "$TEST_VENV")"
    # Descriptor 8 stays open (and locked) in this shell and its children until they exit; a
    # second call in the same script turns its shared lock into an exclusive one and back.
    [ -n "${TEST_VENV_LOCKED:-}" ] || { exec 8>>"$TEST_VENV.lock"; TEST_VENV_LOCKED=1; }
    flock -x 8
    if ! "$TEST_VENV/bin/python" -c 'import sys' >/dev/null 2>&1 || [ ! -x "$TEST_VENV/bin/pip" ]; then
        ensure_test_tools
        ensure_python_venv
        rm -rf "$TEST_VENV"
        python3 -m venv "$TEST_VENV"
    fi
    "$TEST_VENV/bin/pip" install -q --disable-pip-version-check "$@"
    flock -s 8
}

# nginx (Debian's, the fleet's load balancer: Scripts/fleet) and openssl (its self-signed
# certificate). Debian starts a package's service on install; a fleet runs its own nginx from a
# generated config, so the install is told not to (policy-rc.d 101, Debian's documented switch),
# unless a policy is already there. Sets NGINX_BIN.
ensure_nginx() {
    local missing=()
    NGINX_BIN=$(command -v nginx 2>/dev/null || echo /usr/sbin/nginx)
    [ -x "$NGINX_BIN" ] || missing+=(nginx)
    command -v openssl >/dev/null 2>&1 || missing+=(openssl)
    if [ "${#missing[@]}" -gt 0 ]; then
        local policy=/usr/sbin/policy-rc.d planted=0 status=0
        if [ "$(id -u)" -eq 0 ] && [ ! -e "$policy" ]; then
            printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && planted=1
        fi
        install_packages "${missing[@]}" || status=$?
        [ "$planted" -eq 1 ] && rm -f "$policy"
        [ "$status" -eq 0 ] || return "$status"
        NGINX_BIN=$(command -v nginx 2>/dev/null || echo /usr/sbin/nginx)
    fi
    [ -x "$NGINX_BIN" ] || { echo "nginx is not installed at $NGINX_BIN" >&2; return 1; }
    export NGINX_BIN
}

# The tests' venv with the Python package (python/) installed from this clone, for the package's
# own tests and the system tests (systemtests/). The package's dependencies come from PyPI by its
# own ranges; pinned here to what the venv already holds, so a run installs nothing new (and works
# offline) once the venv exists.
PACKAGE_PINS=('playwright==1.65.2' 'pytest==9.2.0' 'httpx==0.28.1' 'pyyaml==6.0.4' 'hypothesis>=6.100,<7'
              'mypy==2.4.1' 'types-PyYAML==6.0.12.20261122')
SCHEMATHESIS_PIN='schemathesis==4.32.5'
CLIENT_GENERATOR_PIN='openapi-python-client==0.29.1'
ensure_package_venv() {
    [ -n "${TEST_VENV_PREPARED:-}" ] && [ -x "$TEST_VENV/bin/python" ] && return 0
    ensure_test_venv "${PACKAGE_PINS[@]}"
    "$TEST_VENV/bin/pip" install -q --disable-pip-version-check --no-deps --force-reinstall \
        "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/python" >/dev/null
}

# Everything any test script installs into the venv, installed once, before steps that run side
# by side: each would otherwise ask for the venv's lock exclusively (to install) while another
# holds it shared (to run), and wait for that one to end. This shell keeps its shared lock, and
# its children inherit TEST_VENV_PREPARED: their ensure_test_venv installs nothing.
prepare_test_venv() {
    ensure_package_venv
    ensure_test_venv "$SCHEMATHESIS_PIN"
    ensure_test_venv "$CLIENT_GENERATOR_PIN"
    export TEST_VENV_PREPARED=1
}
