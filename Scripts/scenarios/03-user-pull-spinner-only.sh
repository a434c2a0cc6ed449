#!/usr/bin/env bash
# Checklist 3: "User pull shows only the UIKit spinner and ends on matching result."
# Host side: the pull gesture starts the spinner (never the header), asks user_pull, and only
# the refreshResult for the spinner's own requestId ends it.
# Rules: H4 (user_pull), H10 (spinner, never header for a pull), H11 (ends on its own id),
# H8 (a result for another id changes nothing), C3 (watchdog listed).
set -euo pipefail
. "$(dirname "$0")/../lib/curl.sh"
scenario_begin

S=$(sid checklist-3)
R=$(create_session "$S")

R=$(play "$S" "gesture pull pull-3")
expect_eq "spinner refreshing for pull-3 (H10)" "$(j "$R" '[.session.pull.state, .session.pull.requestId]')" '["refreshing","pull-3"]'
expect_eq "request asks user_pull (H4)" "$(j "$R" 'requested | map(.reason)')" '["user_pull"]'
expect_eq "header hidden (H10)" "$(j "$R" '.session.header.state')" "hidden"
expect_eq "pull watchdog due 12 s after the gesture (H10, C4)" \
    "$(j "$R" 'timers("pullWatchdog") | map([.requestId, .dueAtMs])')" '[["pull-3",12000]]'

# 700 ms later, a result for another id leaves the spinner alone (H8, H11).
R=$(play "$S" +700 "result other-3 succeeded")
expect_eq "result for another id is a stale result (H8)" "$(j "$R" '[.outcome, .reason]')" '["ignored","staleResult"]'
expect_eq "spinner still up for pull-3 (H11)" "$(j "$R" '[.session.pull.state, .session.pull.requestId]')" '["refreshing","pull-3"]'

R=$(play "$S" "result pull-3 succeeded")
expect_eq "matching result applied (H7)" "$(j "$R" '.outcome')" "applied"
expect_eq "spinner ends succeeded (H11)" \
    "$(j "$R" 'entries("pull") | map([.requestId, .data.state, .data.outcome])')" '[["pull-3","idle","succeeded"]]'
expect_eq "spinner idle, lastOutcome succeeded (H11)" \
    "$(j "$R" '[.session.pull.state, .session.pull.lastOutcome]')" '["idle","succeeded"]'
expect_eq "header still hidden (H10)" "$(j "$R" '.session.header.state')" "hidden"

R=$(watchdogs "$S")
expect_eq "no timer left" "$(j "$R" '.watchdogs')" "[]"
R=$(timeline "$S" "kind=header")
expect_eq "no header entry in the whole timeline (H10)" "$(j "$R" '.entries | length')" "0"

scenario_end
