# Sourced by scripts (and run by Scripts/postgres for the Swift tests): a throwaway PostgreSQL
# server in a folder of its own, on a free loopback port, with trust authentication.
#
#   ensure_postgres        installs Debian's postgresql (and libpq-dev) when missing; sets PG_BIN
#   postgres_start DIR     initdb into DIR/data (once), starts it, creates database `todaysim`;
#                          prints and exports POSTGRES_URI=postgres://postgres@127.0.0.1:PORT/todaysim
#   postgres_stop DIR      fast shutdown (open connections are ended), waits until it is down
#
# Starting a DIR that was stopped reuses its cluster and its port (a database restart).
# PostgreSQL refuses to run as root: as root, the server runs as the system user todaysim-pg
# (created when missing), which then owns DIR; DIR's parent must let that user in.

POSTGRES_SH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$POSTGRES_SH_DIR/deps.sh"

POSTGRES_OS_USER=todaysim-pg
POSTGRES_READY_SECONDS=30

ensure_postgres() {
    local missing=()
    postgres_bin_dir >/dev/null || missing+=(postgresql)
    if ! command -v pkg-config >/dev/null 2>&1; then
        missing+=(pkg-config libpq-dev)
    elif ! pkg-config --exists libpq; then
        missing+=(libpq-dev)
    fi
    if [ "${#missing[@]}" -gt 0 ]; then
        install_packages "${missing[@]}"
    fi
    PG_BIN=$(postgres_bin_dir) || { echo "postgresql is installed but initdb/pg_ctl are not in /usr/lib/postgresql/*/bin" >&2; return 1; }
    export PG_BIN
}

# Runs a server program as the user the cluster belongs to.
postgres_as_owner() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u "$POSTGRES_OS_USER" -- "$@"
    else
        "$@"
    fi
}

ensure_postgres_os_user() {
    [ "$(id -u)" -eq 0 ] || return 0
    id -u "$POSTGRES_OS_USER" >/dev/null 2>&1 && return 0
    # Two scripts may race here; the loser's useradd fails and the user exists all the same.
    useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
        "$POSTGRES_OS_USER" 2>/dev/null || true
    id -u "$POSTGRES_OS_USER" >/dev/null
}

postgres_free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# Waits until the server of DIR answers on its own socket (so someone else's server on the same
# port does not count), or it exited (it logs "database system is shut down" on any exit, e.g.
# when its port was taken), or the deadline passed.
postgres_wait_ready() {
    local dir=$1 port=$2 deadline=$((SECONDS + POSTGRES_READY_SECONDS))
    while [ "$SECONDS" -lt "$deadline" ]; do
        "$PG_BIN/pg_isready" -q -U postgres -h "$dir" -p "$port" -t 1 && return 0
        grep -q 'database system is shut down' "$dir/postgres.log" 2>/dev/null && return 1
        sleep 0.1
    done
    echo "postgres in $dir: not ready after ${POSTGRES_READY_SECONDS}s" >&2
    return 1
}

postgres_start() {
    local dir=${1:?usage: postgres_start DIR}
    ensure_postgres || return 1
    ensure_postgres_os_user || return 1
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    if [ "$(id -u)" -eq 0 ]; then chown "$POSTGRES_OS_USER:" "$dir"; fi
    if ! postgres_as_owner test -w "$dir"; then
        echo "postgres: $POSTGRES_OS_USER cannot write $dir (is a parent folder closed to it?)" >&2
        return 1
    fi
    local fresh=0
    if [ ! -f "$dir/data/PG_VERSION" ]; then
        fresh=1
        # --no-locale: byte-order collation, as SQLite compares text. --no-sync: a throwaway
        # cluster need not survive a machine crash during initdb (the server itself runs with fsync).
        postgres_as_owner "$PG_BIN/initdb" -D "$dir/data" -U postgres --auth=trust --no-locale -E UTF8 --no-sync \
            >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; return 1; }
        echo "include 'todaysim.conf'" | postgres_as_owner tee -a "$dir/data/postgresql.conf" >/dev/null
        postgres_write_conf "$dir" "$(postgres_free_port)"
    fi
    local attempt port
    # A restart keeps its port (clients hold the URI); a new cluster whose free port was taken
    # before the server bound it tries another.
    for attempt in 1 2 3 4 5; do
        port=$(postgres_port "$dir")
        postgres_as_owner rm -f "$dir/postgres.log"
        postgres_as_owner "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -W start >/dev/null || return 1
        if postgres_wait_ready "$dir" "$port"; then
            postgres_create_database "$dir" "$port" || return 1
            export POSTGRES_URI="postgres://postgres@127.0.0.1:$port/todaysim"
            echo "$POSTGRES_URI"
            return 0
        fi
        postgres_as_owner "$PG_BIN/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
        [ "$fresh" -eq 1 ] && grep -q 'could not create any TCP/IP sockets' "$dir/postgres.log" 2>/dev/null || break
        postgres_write_conf "$dir" "$(postgres_free_port)"
    done
    echo "postgres in $dir did not start:" >&2
    cat "$dir/postgres.log" >&2 2>/dev/null || true
    return 1
}

postgres_port() {
    sed -n 's/^port = \([0-9]*\)$/\1/p' "$1/data/todaysim.conf" 2>/dev/null || true
}

# The settings that make this server what the tests assume: loopback only, its socket in DIR,
# durable commits (fsync, synchronous_commit: as a production server, so a restart loses nothing
# acknowledged), and room for many parallel tests' connections.
postgres_write_conf() {
    local dir=$1 port=$2
    postgres_as_owner tee "$dir/data/todaysim.conf" >/dev/null <<EOF
port = $port
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir'
fsync = on
synchronous_commit = on
# Tests run in parallel, each with its own server process (a writer and a few readers).
max_connections = 1000
EOF
}

postgres_create_database() {
    local dir=$1 port=$2
    "$PG_BIN/psql" -X -q -h "$dir" -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 \
        -c "SELECT 1 FROM pg_database WHERE datname = 'todaysim'" -t -A | grep -q 1 && return 0
    "$PG_BIN/psql" -X -q -h "$dir" -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 \
        -c 'CREATE DATABASE todaysim' >/dev/null
}

postgres_stop() {
    local dir=${1:?usage: postgres_stop DIR}
    [ -f "$dir/data/postmaster.pid" ] || return 0
    PG_BIN=${PG_BIN:-$(postgres_bin_dir)} || return 1
    # Status 3: no server runs (a stale pid file after a crash or SIGKILL): nothing to stop.
    local status=0
    postgres_as_owner "$PG_BIN/pg_ctl" -D "$dir/data" status >/dev/null 2>&1 || status=$?
    [ "$status" -eq 3 ] && return 0
    postgres_as_owner "$PG_BIN/pg_ctl" -D "$dir/data" -m fast -w -t "$POSTGRES_READY_SECONDS" stop >/dev/null
}
