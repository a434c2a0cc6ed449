# Sourced by Scripts/test: each step named and timed as it goes, and a table of where the time
# went at the end (also when a step fails, which then ends the run).
#   step NAME COMMAND...   runs COMMAND; prints `── NAME: S s (at T s)` to stderr
#   step_beside NAME COMMAND...
#                          starts COMMAND side by side with what follows (its output kept in a
#                          file, printed whole when it is joined); for steps that mostly wait
#   steps_join             waits for every step started beside, prints each one's output and
#                          time as it ends; fails (after all have ended) when any failed
#   step_later NAME COMMAND...
#                          as step_beside, but joined only by `steps_join later`: for a long
#                          chain (a build, then its suite) that runs beside several groups
#   steps_report           the table, slowest first (call it from an EXIT trap)
#   steps_stop             stops the steps running now, with every process they started (call it
#                          from the EXIT trap too: a run stopped by SIGTERM leaves nothing behind)
# Each step's CPU seconds (user + system of everything it started and waited for) are in the
# table beside its wall seconds: on a machine shared with other work the wall time measures the
# machine, the CPU time the step.
# A command that is a program runs in a process group of its own, in the background, so a signal
# to the script is handled at once (bash runs a trap only after a foreground child ends) and the
# whole group of the step is stopped. A shell function or builtin (`wait`) runs in the script.
STEPS_STARTED=$(date +%s)
STEPS_DONE=()
STEP_GROUP=""
STEPS_BESIDE=()  # "pid<TAB>name<TAB>output file<TAB>start" of each step started beside
STEPS_LATER=()   # the same, of each step started by step_later
STEPS_OUT=$(mktemp -d "${TMPDIR:-/tmp}/todaysim-steps.XXXXXX")

# Seconds in a line of bash's `times` ("0m1.500s 0m0.250s": user and system), as a whole number.
cpu_seconds() {
    awk '{ total = 0; for (i = 1; i <= 2; i++) { split($i, part, "m"); sub("s", "", part[2]); total += part[1] * 60 + part[2] }
           printf "%d", total + 0.5 }'
}

# Children's user + system seconds so far, in STEPS_CPU_NOW. Not a $(…): `times` must run in
# this shell (a subshell has no children of its own yet).
children_cpu() {
    times >"$STEPS_OUT/times"
    STEPS_CPU_NOW=$(sed -n 2p "$STEPS_OUT/times" | cpu_seconds)
}

step_record() {  # NAME WALL CPU STATUS
    STEPS_DONE+=("$2	$3	$1$([ "$4" = 0 ] || echo " (FAILED, exit $4)")")
    echo "── $1: $2 s, $3 s CPU (at $(( $(date +%s) - STEPS_STARTED )) s)$([ "$4" = 0 ] || echo ", FAILED with exit $4")" >&2
}

step() {
    local name=$1 began cpu status=0
    shift
    began=$(date +%s)
    children_cpu
    cpu=$STEPS_CPU_NOW
    echo "── $name" >&2
    rm -f "$STEPS_OUT/step.times"
    if [ "$(type -t "$1")" = file ]; then
        # Its own CPU seconds, written by the wrapper when it ends: the shell's children's times
        # would also count a chain (step_later) that happened to end meanwhile.
        setsid bash -c '"$@"; status=$?; times >"$0"; exit "$status"' "$STEPS_OUT/step.times" "$@" &
        STEP_GROUP=$!
        wait "$STEP_GROUP" || status=$?
        STEP_GROUP=""
    else
        "$@" || status=$?
    fi
    children_cpu
    if [ -s "$STEPS_OUT/step.times" ]; then
        step_record "$name" $(( $(date +%s) - began )) "$(sed -n 2p "$STEPS_OUT/step.times" | cpu_seconds)" "$status"
    else
        step_record "$name" $(( $(date +%s) - began )) $(( STEPS_CPU_NOW - cpu )) "$status"
    fi
    return "$status"
}

step_beside() {
    local name=$1 out
    shift
    out="$STEPS_OUT/$(( ${#STEPS_BESIDE[@]} + ${#STEPS_LATER[@]} ))"
    echo "── $name (started beside the next steps)" >&2
    # Its own process group (stopped whole by steps_stop); the inner shell writes the step's CPU
    # seconds and its end time when the command ends, so the join reports when it really ended.
    setsid bash -c '"$@" >"$0" 2>&1; status=$?; times >"$0.times"; { sed -n 2p "$0.times"; date +%s; } >"$0.end"; exit "$status"' \
        "$out" "$@" </dev/null &
    STEPS_BESIDE+=("$!	$name	$out	$(date +%s)")
}

step_later() {
    step_beside "$@"
    STEPS_LATER+=("${STEPS_BESIDE[-1]}")
    unset 'STEPS_BESIDE[-1]'
}

steps_join() {  # [later]
    local entry pid name out began failed=0 status cpu entries
    if [ "${1:-}" = later ]; then entries=(${STEPS_LATER[@]+"${STEPS_LATER[@]}"}); STEPS_LATER=()
    else entries=(${STEPS_BESIDE[@]+"${STEPS_BESIDE[@]}"}); STEPS_BESIDE=(); fi
    for entry in ${entries[@]+"${entries[@]}"}; do
        IFS=$'\t' read -r pid name out began <<<"$entry"
        status=0
        wait "$pid" || status=$?
        echo "── output of $name:" >&2
        cat "$out" >&2
        if [ -s "$out.end" ]; then
            cpu=$(sed -n 1p "$out.end" | cpu_seconds)
            step_record "$name" $(( $(sed -n 2p "$out.end") - began )) "$cpu" "$status"
        else
            step_record "$name" $(( $(date +%s) - began )) 0 "$status"
        fi
        [ "$status" = 0 ] || failed=1
    done
    return "$failed"
}

steps_report() {
    [ "${#STEPS_DONE[@]}" -gt 0 ] || return 0
    echo "── where the time went ($(( $(date +%s) - STEPS_STARTED )) s in all):" >&2
    echo "     wall      CPU" >&2
    printf '%s\n' "${STEPS_DONE[@]}" | sort -t$'\t' -k1,1nr | awk -F'\t' '{ printf "   %5d s  %5d s  %s\n", $1, $2, $3 }' >&2
}

# Every process below the given ones (children first found, then theirs), from one `ps`.
steps_descendants() {
    ps -e -o pid= -o ppid= | awk -v roots=" $* " '
        { parent[$1] = $2; order[NR] = $1 }
        END { for (round = 0; round < 32; round++) for (i = 1; i <= NR; i++) {
                  p = order[i]; if (!(p in seen) && index(roots, " " parent[p] " ")) { seen[p] = 1; roots = roots p " "; print p } } }'
}

steps_stop() {
    local entry pid groups=() strays
    [ -n "$STEP_GROUP" ] && groups+=("$STEP_GROUP")
    for entry in ${STEPS_BESIDE[@]+"${STEPS_BESIDE[@]}"} ${STEPS_LATER[@]+"${STEPS_LATER[@]}"}; do groups+=("${entry%%$'\t'*}"); done
    # What a step started in a process group of its own (a build tool's compilers do) is not in
    # the step's group: found by parentage first, and stopped with it.
    strays=$( [ "${#groups[@]}" -gt 0 ] && steps_descendants "${groups[@]}" )
    for pid in "${groups[@]}"; do kill -TERM -- -"$pid" 2>/dev/null; done
    for pid in $strays; do kill -TERM "$pid" 2>/dev/null; done
    # Up to 30 s for the steps' own clean-up (servers they started stop, temp folders go), then KILL.
    for pid in "${groups[@]}"; do
        for _ in $(seq 300); do kill -0 -- -"$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL -- -"$pid" 2>/dev/null
    done
    for pid in $strays; do kill -KILL "$pid" 2>/dev/null; done
    STEP_GROUP="" STEPS_BESIDE=() STEPS_LATER=()
    rm -rf "$STEPS_OUT"
    return 0
}
