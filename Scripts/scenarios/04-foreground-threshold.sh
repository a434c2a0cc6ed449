#!/usr/bin/env bash
# Checklist 4: "A foreground return at 4 seconds does nothing; a return at 5 seconds sends one
# app_foreground request and shows header feedback."
# Host side: under foregroundThresholdMs (5000) the return only reports visibility; at exactly
# 5000 it emits one refreshRequested (reason app_foreground); when Web answers with
# refreshStarted the header shows refreshing, then updated, then hides.
# Rules: H15 (threshold, at most one request per background interval), H4, C4 (5000 default),
# H12 (start), H13 (settle), H21 (alreadyForeground).
set -euo pipefail
. "$(dirname "$0")/../lib/curl.sh"
scenario_begin

S=$(sid checklist-4)
R=$(create_session "$S")

# Back after 4 s: nothing but visibility and page_view (H15).
R=$(play "$S" "lifecycle background" +4000 "lifecycle foreground fg-4s")
expect_eq "return at 4 s is applied" "$(j "$R" '.outcome')" "applied"
expect_eq "return at 4 s reports visibility only (H15)" \
    "$(j "$R" 'entries("emit") | map([.type, .data.payload.visible])')" \
    '[["webView.visibilityWillChange",true],["webView.visibilityChanged",true]]'
expect_eq "return at 4 s requests nothing (H15)" "$(j "$R" 'requested | length')" "0"
expect_eq "nothing pending after 4 s return" "$(j "$R" '.session.refresh.pending')" "[]"
expect_eq "header hidden after 4 s return" "$(j "$R" '.session.header.state')" "hidden"

# Back after exactly 5 s: one app_foreground request (H15: "at least" the threshold).
R=$(play "$S" "lifecycle background" +5000 "lifecycle foreground fg-5s")
expect_eq "return at 5 s sends exactly one app_foreground request (H15, H4)" "$(j "$R" requested)" \
    '[{"type":"todayPage.refreshRequested","schemaVersion":1,"requestId":"fg-5s","reason":"app_foreground"}]'
expect_eq "fg-5s pending (H4)" "$(j "$R" '.session.refresh.pending | map([.requestId, .reason])')" '[["fg-5s","app_foreground"]]'
expect_eq "the host shows nothing by itself" "$(j "$R" '.session.header.state')" "hidden"
R=$(play "$S" "lifecycle foreground fg-again")
expect_eq "a second foreground is ignored: one request per interval (H15)" \
    "$(j "$R" '[.outcome, .reason]')" '["ignored","alreadyForeground"]'

# Web starts it with header feedback (H12), then succeeds 400 ms later (H13).
R=$(play "$S" "started fg-5s")
expect_eq "refreshStarted shows the header refreshing (H12)" "$(j "$R" '.session.header')" '{"state":"refreshing","requestId":"fg-5s"}'
R=$(play "$S" +400 "result fg-5s succeeded")
expect_eq "result shows updated (H13)" "$(j "$R" '.session.header')" '{"state":"updated","requestId":"fg-5s"}'
R=$(play "$S" +1000)
expect_eq "header hides 1 s later (H13)" "$(j "$R" '.session.header.state')" "hidden"

R=$(timeline "$S")
expect_eq "exactly one refreshRequested in the whole session (H15)" "$(j "$R" 'requested | length')" "1"
expect_eq "header went refreshing, updated, hidden" \
    "$(j "$R" 'entries("header") | map([.atMs, .type])')" '[[9000,"refreshing"],[9400,"updated"],[10400,"hidden"]]'
R=$(watchdogs "$S")
expect_eq "no timer left" "$(j "$R" '.watchdogs')" "[]"

scenario_end
