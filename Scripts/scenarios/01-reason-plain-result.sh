#!/usr/bin/env bash
# Checklist 1: "An old Web deployment accepts a request with reason and still returns
# refreshResult." Host side: a request that carries a reason, answered by a plain
# refreshResult with no refreshStarted before it, settles the request and never shows the
# header.
# Rules: H4 (request payload with reason), H5 (one shared deadline), H7 (a result consumes
# its request, cancels the deadline when the set empties), H12/H13 (the header moves only on
# refreshStarted), H15 (foreground return), H26 (live widget created).
set -euo pipefail
. "$(dirname "$0")/../lib/curl.sh"
scenario_begin

S=$(sid checklist-1)
R=$(create_session "$S")

# A foreground return after 6 s asks with reason app_foreground (H15, H4).
R=$(play "$S" "lifecycle background" +6000 "lifecycle foreground fg-1")
expect_eq "foreground return emits refreshRequested with its reason (H4)" "$(j "$R" requested)" \
    '[{"type":"todayPage.refreshRequested","schemaVersion":1,"requestId":"fg-1","reason":"app_foreground"}]'

# A live widget created 1 s later asks with reason live_widget_created and shares the deadline (H26, H5).
R=$(play "$S" +1000 "gesture liveWidget.created lw-1")
expect_eq "live widget created emits refreshRequested with its reason (H4, H26)" \
    "$(j "$R" 'requested | map(.reason)')" '["live_widget_created"]'
expect_eq "both requests pending under one deadline (H5)" \
    "$(j "$R" '[.session.refresh.pending[].requestId, .session.refresh.deadlineAtMs]')" '["fg-1","lw-1",11000]'

# Old Web: no refreshStarted, just the results.
R=$(play "$S" "result fg-1 succeeded")
expect_eq "plain result for fg-1 is applied (H7)" "$(j "$R" '[.outcome, .reason]')" '["applied",null]'
expect_eq "fg-1 settles succeeded (H7)" "$(j "$R" settled)" '[["fg-1","succeeded"]]'
expect_eq "no header change for fg-1 (H13)" "$(j "$R" 'entries("header") | length')" "0"

R=$(play "$S" "result lw-1 succeeded")
expect_eq "lw-1 settles succeeded (H7)" "$(j "$R" settled)" '[["lw-1","succeeded"]]'
expect_eq "nothing pending, deadline cancelled (H7)" \
    "$(j "$R" '[.session.refresh.pending, .session.refresh.deadlineAtMs]')" '[[],null]'
expect_eq "header stays hidden (H12)" "$(j "$R" '.session.header')" '{"state":"hidden","requestId":null}'
expect_eq "spinner untouched" "$(j "$R" '.session.pull.state')" "idle"

R=$(watchdogs "$S")
expect_eq "no timer left (C3)" "$(j "$R" '.watchdogs')" "[]"
R=$(timeline "$S" "kind=header")
expect_eq "no header entry in the whole timeline" "$(j "$R" '.entries | length')" "0"
R=$(view "$S")
expect_eq "no contract violation" "$(j "$R" '.counts.violations')" "0"

scenario_end
