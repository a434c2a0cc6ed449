#!/usr/bin/env bash
# Checklist 2: "An old iOS build sees no new event because it does not advertise the
# capability." Host side: a session created with "capabilities": [] injects no capability at
# document start and treats todayPage.refreshStarted as unknown: ignored with reason
# capabilityNotAdvertised whatever its form, header untouched, M2 flagged.
# Rules: H2 (explicit empty list = old native build), H12 (refreshStarted unknown without
# today_page_revalidate_feedback.v1), H21 (todayPage.* resolve null), M2.
set -euo pipefail
. "$(dirname "$0")/../lib/curl.sh"
scenario_begin

S=$(sid checklist-2)
R=$(create_session "$S" '{"capabilities": []}')
expect_eq "session advertises nothing (H2)" "$(j "$R" '.capabilities')" "[]"
expect_eq "document start injected no capability (H2)" "$(j "$R" '.document.injected.capabilities')" "[]"

R=$(play "$S" "gesture liveWidget.created lw-2")
expect_eq "the native request still goes out" "$(j "$R" '.session.refresh.pending | map(.requestId)')" '["lw-2"]'

R=$(play "$S" "started lw-2")
expect_eq "refreshStarted is ignored as capabilityNotAdvertised (H12)" \
    "$(j "$R" '[.outcome, .reason, .resolution]')" '["ignored","capabilityNotAdvertised",null]'
expect_eq "header stays hidden (H12)" "$(j "$R" '.session.header')" '{"state":"hidden","requestId":null}'
expect_eq "no header watchdog armed" "$(j "$R" 'timers("headerWatchdog") | length')" "0"
expect_eq "M2 flagged" "$(j "$R" violation_codes)" '["M2"]'

# Whatever its form: a malformed one is not rejected either, it is unknown (H12).
R=$(play "$S" 'web {"type":"todayPage.refreshStarted","schemaVersion":2,"requestId":"","presentation":"toast"}')
expect_eq "malformed refreshStarted is ignored too, not rejected (H12)" \
    "$(j "$R" '[.outcome, .reason]')" '["ignored","capabilityNotAdvertised"]'

R=$(play "$S" "result lw-2 succeeded")
expect_eq "the result still settles the request (H7)" \
    "$(j "$R" '[.outcome, (entries("request") | map(.data.outcome))]')" '["applied",["succeeded"]]'
expect_eq "header still hidden after the result (H13)" "$(j "$R" '.session.header.state')" "hidden"

R=$(timeline "$S" "kind=header")
expect_eq "no header entry in the whole timeline" "$(j "$R" '.entries | length')" "0"

scenario_end
