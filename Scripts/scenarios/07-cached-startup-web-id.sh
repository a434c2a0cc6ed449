#!/usr/bin/env bash
# Checklist 7: "Cached startup accepts a Web-generated requestId with no prior native
# request." Host side: on a fresh session (initial activation requests nothing), Web's
# refreshStarted with its own id shows the header; the later result for that id settles it.
# No native request, no budget change, no violation.
# Rules: H1 (initial activation requests no refresh), H12 (Web-minted id with no native
# request is valid), H13, H9 (a Web-minted id is Web's own), docs/RULES.md#h9 (no request entry).
set -euo pipefail
. "$(dirname "$0")/../lib/curl.sh"
scenario_begin

S=$(sid checklist-7)
R=$(create_session "$S")
expect_eq "initial activation requests nothing (H1)" \
    "$(j "$R" '[.refresh.pending, .refresh.deadlineAtMs, .watchdogs]')" '[[],null,[]]'

# Web takes the overlay for its cached start and, 150 ms later, starts its own id.
R=$(play "$S" 'web {"type":"webView.loadingPresentation","owner":"web","reason":"cached"}' +150 "started web-cache-7")
expect_eq "Web-generated id accepted (H12)" "$(j "$R" '[.outcome, .reason]')" '["applied",null]'
expect_eq "header refreshing web-cache-7 (H12)" "$(j "$R" '.session.header')" '{"state":"refreshing","requestId":"web-cache-7"}'
expect_eq "still no native request (H12)" "$(j "$R" '.session.refresh.pending')" "[]"
expect_eq "only the header watchdog runs" "$(j "$R" '[.session.watchdogs[] | [.kind, .requestId, .dueAtMs]]')" \
    '[["headerWatchdog","web-cache-7",12150]]'
expect_eq "no violation for a Web-minted start (M3)" "$(j "$R" 'violations | length')" "0"

# It renders, and answers 850 ms later.
R=$(play "$S" 'web {"type":"todayPage.firstBatchRendered","schemaVersion":1,"batchId":"b1","elapsedMs":40}' \
    +850 "result web-cache-7 succeeded")
expect_eq "result for the Web id applied, not stale (H12)" "$(j "$R" '[.outcome, .reason]')" '["applied",null]'
expect_eq "header updated (H13)" "$(j "$R" '.session.header')" '{"state":"updated","requestId":"web-cache-7"}'
expect_eq "no native request settled (H9)" "$(j "$R" 'settled | length')" "0"
expect_eq "budget untouched (H9)" "$(j "$R" '.session.refresh.recoveryArmed')" "true"

R=$(play "$S" +1000)
expect_eq "header hidden 1 s later (H13)" "$(j "$R" '.session.header.state')" "hidden"

R=$(timeline "$S" "kind=emit")
expect_eq "the host never asked for a refresh" "$(j "$R" 'requested | length')" "0"
R=$(view "$S")
expect_eq "no contract violation" "$(j "$R" '.counts.violations')" "0"
R=$(watchdogs "$S")
expect_eq "no timer left" "$(j "$R" '.watchdogs')" "[]"

scenario_end
