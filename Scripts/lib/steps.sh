# Sourced by Scripts/test: each step named and timed as it goes, and a table of where the time
# went at the end (also when a step fails, which then ends the run).
#   step NAME COMMAND...   runs COMMAND; prints `── NAME: S s (at T s)` to stderr
#   steps_report           the table, slowest first (call it from an EXIT trap)
#   steps_stop             stops the step running now, with every process it started (call it
#                          from the EXIT trap too: a run stopped by SIGTERM leaves nothing behind)
# A command that is a program runs in a process group of its own, in the background, so a signal
# to the script is handled at once (bash runs a trap only after a foreground child ends) and the
# whole group of the step is stopped. A shell function or builtin (`wait`) runs in the script.
STEPS_STARTED=$(date +%s)
STEPS_DONE=()
STEP_GROUP=""

step() {
    local name=$1 began status=0
    shift
    began=$(date +%s)
    echo "── $name" >&2
    if [ "$(type -t "$1")" = file ]; then
        setsid "$@" &
        STEP_GROUP=$!
        wait "$STEP_GROUP" || status=$?
        STEP_GROUP=""
    else
        "$@" || status=$?
    fi
    local took=$(( $(date +%s) - began ))
    STEPS_DONE+=("$took	$name$([ "$status" = 0 ] || echo " (FAILED, exit $status)")")
    echo "── $name: $took s (at $(( $(date +%s) - STEPS_STARTED )) s)$([ "$status" = 0 ] || echo ", FAILED with exit $status")" >&2
    return "$status"
}

steps_report() {
    [ "${#STEPS_DONE[@]}" -gt 0 ] || return 0
    echo "── where the time went ($(( $(date +%s) - STEPS_STARTED )) s in all):" >&2
    printf '%s\n' "${STEPS_DONE[@]}" | sort -t$'\t' -k1,1nr | awk -F'\t' '{ printf "   %5d s  %s\n", $1, $2 }' >&2
}

steps_stop() {
    [ -n "$STEP_GROUP" ] || return 0
    kill -TERM -- -"$STEP_GROUP" 2>/dev/null
    # Up to 30 s for the step's own clean-up (servers it started stop, temp folders go), then KILL.
    for _ in $(seq 300); do kill -0 -- -"$STEP_GROUP" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- -"$STEP_GROUP" 2>/dev/null
    STEP_GROUP=""
    return 0
}
