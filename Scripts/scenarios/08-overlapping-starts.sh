#!/usr/bin/env bash
# Checklist 8: "Two overlapping starts ignore the first request's stale terminal result."
# Host side: a second refreshStarted replaces the header's id (H12); the first id's result
# then leaves the header alone (H13) — for native requests (the request itself still settles,
# H7) and for Web-minted ids (nothing owns it any more: ignored, staleResult, H8). Also a
# second start during the 1 s "updated" hold cancels the pending hide (H12).
# Rules: H12, H13, H7, H8.
set -euo pipefail
. "$(dirname "$0")/../lib/curl.sh"
scenario_begin

S=$(sid checklist-8)
R=$(create_session "$S")

# Native requests: two live widgets created back to back, 100 ms apart, each started by Web.
R=$(play "$S" "gesture liveWidget.created lw-8a" "started lw-8a" \
    +100 "gesture liveWidget.created lw-8b" "started lw-8b")
expect_eq "second start takes the header (H12)" "$(j "$R" '.session.header')" '{"state":"refreshing","requestId":"lw-8b"}'

R=$(play "$S" "result lw-8a succeeded")
expect_eq "first request's result settles its request (H7)" \
    "$(j "$R" '[.outcome, settled]')" '["applied",[["lw-8a","succeeded"]]]'
expect_eq "first request's result leaves the header alone (H13)" \
    "$(j "$R" '[.session.header.state, .session.header.requestId, (entries("header") | length)]')" \
    '["refreshing","lw-8b",0]'

R=$(play "$S" "result lw-8b succeeded")
expect_eq "second result settles the header (H13)" "$(j "$R" '.session.header')" '{"state":"updated","requestId":"lw-8b"}'
R=$(play "$S" +1000)
expect_eq "and it hides after 1 s" "$(j "$R" '.session.header.state')" "hidden"

# Web-minted ids: the first one's result is stale once replaced.
R=$(play "$S" "started web-8a" "started web-8b")
expect_eq "second Web start takes the header (H12)" "$(j "$R" '.session.header')" '{"state":"refreshing","requestId":"web-8b"}'
R=$(play "$S" "result web-8a succeeded")
expect_eq "first Web id's result is stale (H8)" "$(j "$R" '[.outcome, .reason]')" '["ignored","staleResult"]'
expect_eq "header still refreshing web-8b (H13)" "$(j "$R" '.session.header')" '{"state":"refreshing","requestId":"web-8b"}'
R=$(play "$S" "result web-8b succeeded")
expect_eq "web-8b's result shows updated (H13)" "$(j "$R" '.session.header')" '{"state":"updated","requestId":"web-8b"}'

# A new start during the updated hold cancels the hide (H12); the old id's late result is stale.
R=$(play "$S" +500 "started web-8c")
expect_eq "new start during the hold shows refreshing (H12)" "$(j "$R" '.session.header')" '{"state":"refreshing","requestId":"web-8c"}'
expect_eq "the pending hide is cancelled (H12)" "$(j "$R" 'timers("headerHide") | length')" "0"
R=$(play "$S" +600)
expect_eq "header still refreshing past the old hide time" "$(j "$R" '.session.header.state')" "refreshing"
R=$(play "$S" "result web-8c succeeded" idle)
expect_eq "all settled" "$(j "$R" '[.session.header.state, .session.watchdogs]')" '["hidden",[]]'

scenario_end
