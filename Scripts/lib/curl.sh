# shellcheck shell=bash
# Shared helpers for the checklist scenarios. Source it from a scenario script:
#
#   set -euo pipefail
#   . "$(dirname "$0")/../lib/curl.sh"     (from Scripts/scenarios/NN-*.sh)
#   scenario_begin
#
# A scenario needs BASE (e.g. http://127.0.0.1:8080) pointing at a running `todaysim serve`.
# Session ids are fixed (checklist-1 …), so a scenario runs once per server; to run again
# against the same long-lived server set RUN_TAG (ids become checklist-1-$RUN_TAG …).
#
# Pattern: always assign an HTTP call to a variable first (R=$(post …)); `set -e` then stops
# the scenario on an unexpected HTTP status. A call nested inside another command's arguments
# would hide that failure.
#
# Helpers: api/post/get (fail on an unexpected status), create_session, one per input route
# (gesture, lifecycle, web_event, clock) and per read (view, timeline, watchdogs), play (several
# inputs in a row, one POST each: R=$(play "$S" +200 "started fg-1" "result fg-1 succeeded")),
# the bridge message builders started/result, j (jq with the shared definitions of JQ_DEFS:
# requested, settled, violations, violation_codes, entries(kind), timers(kind)) and
# expect_eq / scenario_end.

# How long one answer may take: generous, a loaded machine (or a sanitizer build) is slow.
CURL_MAX_TIME=${CURL_MAX_TIME:-30}
FAILURES=0
CHECKS=0

# jq is needed by every scenario; install it when it is missing (Debian/Ubuntu, as root or sudo).
ensure_jq() {
    command -v jq >/dev/null 2>&1 && return 0
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null 2>&1 || { echo "jq is missing and there is no root or sudo to install it" >&2; return 1; }
        sudo="sudo"
    fi
    echo "installing jq" >&2
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq jq >/dev/null 2>&1 \
        || { $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null \
             && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq jq >/dev/null; }
    command -v jq >/dev/null 2>&1
}

scenario_begin() {
    : "${BASE:?set BASE to the server, e.g. BASE=http://127.0.0.1:8080}"
    BASE=${BASE%/}
    SCENARIO=$(basename "$0" .sh)
    ensure_jq
}

# The session id for this scenario (unique per script; RUN_TAG makes it unique per run).
sid() { printf '%s%s' "$1" "${RUN_TAG:+-$RUN_TAG}"; }

# api METHOD PATH [BODY] [EXPECTED_STATUS=200]: prints the body; exits non-zero (with the
# answer on stderr) on a transport error or any other status.
api() {
    local method=$1 path=$2 body=${3-} want=${4:-200} out status
    out=$(mktemp)
    local args=(-sS --max-time "$CURL_MAX_TIME" -X "$method" -o "$out" -w '%{http_code}')
    if [ -n "$body" ]; then
        args+=(-H 'Content-Type: application/json' --data-binary "$body")
    fi
    if ! status=$(curl "${args[@]}" "$BASE$path"); then
        echo "  FAIL $method $path: curl failed" >&2
        rm -f "$out"
        exit 1
    fi
    if [ "$status" != "$want" ]; then
        echo "  FAIL $method $path: HTTP $status, expected $want" >&2
        echo "       request: ${body:-<none>}" >&2
        echo "       answer:  $(head -c 800 "$out")" >&2
        rm -f "$out"
        exit 1
    fi
    cat "$out"
    rm -f "$out"
}

post() { api POST "$1" "$2" "${3:-200}"; }
get() { api GET "$1" "" "${2:-200}"; }

# create_session ID [EXTRA_JSON_OBJECT]: POST /v1/sessions → 201; prints the view.
create_session() {
    local body extra=${2:-}
    [ -n "$extra" ] || extra='{}'
    body=$(jq -nc --arg id "$1" --argjson extra "$extra" '{uid: "u-checklist", id: $id} + $extra')
    post /v1/sessions "$body" 201
}

gesture() { post "/v1/sessions/$1/gestures" "$2"; }
lifecycle() { post "/v1/sessions/$1/lifecycle" "$2"; }
web_event() { post "/v1/sessions/$1/web-events" "$2"; }
clock() { post "/v1/sessions/$1/clock" "$2"; }
view() { get "/v1/sessions/$1"; }
timeline() { get "/v1/sessions/$1/timeline?limit=1000${2:+&$2}"; }
watchdogs() { get "/v1/sessions/$1/watchdogs"; }

# Bridge messages exactly as Web sends them (H21).
started() {
    jq -nc --arg id "$1" '{type: "todayPage.refreshStarted", schemaVersion: 1, requestId: $id, presentation: "header"}'
}
result() { # result ID STATUS [MODE=soft]
    jq -nc --arg id "$1" --arg status "$2" --arg mode "${3:-soft}" \
        '{type: "todayPage.refreshResult", schemaVersion: 1, requestId: $id, mode: $mode, status: $status}'
}

# play SESSION STEP...: sends the inputs in order, one POST each, exactly as the helper named;
# prints the last answer; exits non-zero on an unexpected HTTP status, like `api`. A step is
# one argument, a word list:
#   +MS                          clock {"advanceMs":MS}
#   to:MS                        clock {"toMs":MS}
#   idle                         clock {"runUntilIdle":true}
#   gesture TYPE [ID]            gesture {"type":TYPE,"requestId":ID}, e.g. "gesture pull pull-3"
#   lifecycle TYPE [ID]          lifecycle {"type":TYPE,"requestId":ID}, e.g. "lifecycle background"
#   gesture|lifecycle|web JSON   that body as it is, e.g. 'web {"type":"liveWidgetCreation.present"}'
#   started ID                   web_event "$(started ID)"
#   result ID STATUS [MODE]      web_event "$(result ID STATUS MODE)"
play() {
    local s=$1 step verb rest out=""
    local -a words
    shift
    for step in "$@"; do
        verb=${step%% *}
        rest=${step#"$verb"}
        rest=${rest# }
        case "$verb" in
            +[0-9]*) out=$(clock "$s" "{\"advanceMs\":${verb#+}}") || exit 1 ;;
            to:[0-9]*) out=$(clock "$s" "{\"toMs\":${verb#to:}}") || exit 1 ;;
            idle) out=$(clock "$s" '{"runUntilIdle":true}') || exit 1 ;;
            started) out=$(web_event "$s" "$(started "$rest")") || exit 1 ;;
            result)
                read -ra words <<<"$rest"
                out=$(web_event "$s" "$(result "${words[@]}")") || exit 1 ;;
            web) out=$(web_event "$s" "$rest") || exit 1 ;;
            gesture | lifecycle)
                case "$rest" in
                    "{"*) ;;
                    *" "*) rest=$(printf '{"type":"%s","requestId":"%s"}' "${rest%% *}" "${rest#* }") ;;
                    *) rest=$(printf '{"type":"%s"}' "$rest") ;;
                esac
                out=$("$verb" "$s" "$rest") || exit 1 ;;
            *)
                echo "  FAIL play: unknown step '$step'" >&2
                exit 2 ;;
        esac
    done
    printf '%s' "$out"
}

# Shared jq definitions: every `j` filter may use them.
#   requested          the refreshRequested payloads the answer's entries emitted
#   settled            [requestId, outcome] of every request the answer's entries settled
#   violations         [requestId, code] of every violation entry; violation_codes: the codes
#   entries(KIND)      the answer's entries of that kind
#   timers(KIND)       the session's running watchdogs (timers) of that kind
JQ_DEFS='
def entries(k): [.entries[] | select(.kind == k)];
def requested: entries("emit") | map(select(.type == "todayPage.refreshRequested") | .data.payload);
def settled: entries("request") | map([.requestId, .data.outcome]);
def violations: entries("violation") | map([.requestId, .data.code]);
def violation_codes: entries("violation") | map(.data.code);
def timers(k): [.session.watchdogs[] | select(.kind == k)];
'

# j JSON FILTER: jq -r with compact output (strings raw, everything else as compact JSON), with
# the definitions above.
j() { jq -rc "$JQ_DEFS $2" <<<"$1"; }

# expect_eq LABEL ACTUAL EXPECTED: prints the check and counts a failure; never exits, so a
# scenario reports every broken check. `scenario_end` decides the exit status.
expect_eq() {
    CHECKS=$((CHECKS + 1))
    if [ "$2" == "$3" ]; then
        echo "  ok   $1"
    else
        FAILURES=$((FAILURES + 1))
        echo "  FAIL $1"
        echo "       expected: $3"
        echo "       actual:   $2"
    fi
}

scenario_end() {
    if [ "$FAILURES" -gt 0 ]; then
        echo "$SCENARIO: $FAILURES of $CHECKS checks failed"
        exit 1
    fi
    echo "$SCENARIO: all $CHECKS checks passed"
    exit 0
}
