# Sourced by Scripts/test: each step named and timed as it goes, and a table of where the time
# went at the end (also when a step fails, which then ends the run).
#   step NAME COMMAND...   runs COMMAND; prints `── NAME: S s (at T s)` to stderr
#   steps_report           the table, slowest first (call it from an EXIT trap)
STEPS_STARTED=$(date +%s)
STEPS_DONE=()

step() {
    local name=$1 began status=0
    shift
    began=$(date +%s)
    echo "── $name" >&2
    "$@" || status=$?
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
