#!/usr/bin/env bash
# Checklist 9: "Failure, cancellation, timeout, navigation, and Web process termination
# cannot leave either spinner stuck." Host side, one session per path, with both the pull
# spinner and the header up: after the path (and, where a recovery reload carries the
# spinner, after Web's answer to that reload), the spinner is idle, the header hidden and no
# timer remains.
# Rules: H3 (navigation consumes requests, clears the header), H6 (deadline expiry), H7, H9
# (recovery reload, budget), H11 (spinner end / follows a host reload), H12 (header watchdog),
# H13 (failed/cancelled settle), H14 (clears), H17 (navigation ends the spinner), H18
# (termination), docs/RULES.md#h11 (a failure that triggers a reload carries the spinner).
set -euo pipefail
. "$(dirname "$0")/../lib/curl.sh"
scenario_begin

ui='[.session.pull.state, .session.pull.lastOutcome, .session.header.state]'
# After a host reload: its cause, and the spinner carried by the reload's own id (H11).
reloaded='[.session.document.cause, .session.pull.state, (.session.document.requestId != null and .session.pull.requestId == .session.document.requestId), .session.header.state]'

# Both UIs up at t=0: a pull (spinner) and a live widget refresh Web starts in the header.
both_up() { # both_up SESSION PULL_ID LW_ID
    R=$(create_session "$1")
    R=$(play "$1" "gesture pull $2" "gesture liveWidget.created $3" "started $3")
    expect_eq "$1: spinner and header up" \
        "$(j "$R" '[.session.pull.state, .session.pull.requestId, .session.header.state, .session.header.requestId]')" \
        "[\"refreshing\",\"$2\",\"refreshing\",\"$3\"]"
}
no_timers() { # no_timers SESSION
    R=$(watchdogs "$1")
    expect_eq "$1: no timer left (C3)" "$(j "$R" '.watchdogs')" "[]"
}

# --- failure ---------------------------------------------------------------------------
S=$(sid checklist-9-failure)
both_up "$S" pull-9f lw-9f
R=$(play "$S" "result pull-9f failed")
RELOAD=$(j "$R" '.session.document.requestId')
expect_eq "$S: failure with the budget armed reloads (H9)" \
    "$(j "$R" '[.session.document.cause, .session.document.awaitingResult, .session.refresh.recoveryArmed]')" '["recovery",true,false]'
expect_eq "$S: spinner follows the reload, header cleared by it (H11, H14, interp. 3)" \
    "$(j "$R" "[.session.pull.state, .session.pull.requestId == \"$RELOAD\", .session.header.state]")" '["refreshing",true,"hidden"]'
expect_eq "$S: the header's request was cancelled by the reload (H3)" \
    "$(j "$R" settled)" '[["pull-9f","failed"],["lw-9f","cancelled"]]'
R=$(play "$S" "result $RELOAD failed hard")
expect_eq "$S: reload fails with the budget spent: no reload, spinner ends failed (H9, H11)" \
    "$(j "$R" "[.session.document.loadId] + $ui")" '[2,"idle","failed","hidden"]'
# Header failure without a reload: failed for 1 s, then hidden (H9, H13).
R=$(play "$S" "gesture liveWidget.created lw-9f2" "started lw-9f2" "result lw-9f2 failed")
expect_eq "$S: header failure shows failed, never updated (H13)" "$(j "$R" '.session.header')" '{"state":"failed","requestId":"lw-9f2"}'
R=$(play "$S" +1000)
expect_eq "$S: failed hides after 1 s (H13)" "$(j "$R" "$ui")" '["idle","failed","hidden"]'
no_timers "$S"

# --- cancellation ----------------------------------------------------------------------
S=$(sid checklist-9-cancel)
both_up "$S" pull-9c lw-9c
R=$(play "$S" "result pull-9c cancelled")
RELOAD=$(j "$R" '.session.document.requestId')
expect_eq "$S: cancelled counts as a failure: reload, spinner follows it (H7, H9, H11)" \
    "$(j "$R" "$reloaded")" '["recovery","refreshing",true,"hidden"]'
R=$(play "$S" "result $RELOAD cancelled hard")
expect_eq "$S: the reload cancelled with the budget spent ends the spinner cancelled (H11)" \
    "$(j "$R" "[.session.document.loadId] + $ui")" '[2,"idle","cancelled","hidden"]'
R=$(play "$S" "gesture liveWidget.created lw-9c2" "started lw-9c2" "result lw-9c2 cancelled")
expect_eq "$S: a cancelled header request hides at once (H13)" \
    "$(j "$R" '[.session.header.state, (timers("headerHide") | length)]')" '["hidden",0]'
R=$(play "$S" "started web-9c" "result web-9c unsupported")
expect_eq "$S: an unsupported Web-minted header request hides at once (H13)" "$(j "$R" '.session.header.state')" "hidden"
no_timers "$S"

# --- timeout ---------------------------------------------------------------------------
S=$(sid checklist-9-timeout)
both_up "$S" pull-9t lw-9t
R=$(play "$S" to:5000)
expect_eq "$S: the deadline times both requests out (H6, M7)" \
    "$(j "$R" '[settled, violation_codes]')" '[[["pull-9t","timedOut"],["lw-9t","timedOut"]],["M7","M7"]]'
expect_eq "$S: budget armed: recovery reload carries the spinner, header cleared (H6, H9, H11, H14)" \
    "$(j "$R" "$reloaded")" '["recovery","refreshing",true,"hidden"]'
# Web never answers the reload either: the spinner's own watchdog ends it (H11).
R=$(play "$S" to:12000)
expect_eq "$S: pull watchdog ends the spinner timedOut at 12 s (H11)" "$(j "$R" "$ui")" '["idle","timedOut","hidden"]'
# A header Web never settles: its watchdog hides it, never via updated (H12, H13).
R=$(play "$S" "started web-9t" +11999)
expect_eq "$S: header still refreshing just before its watchdog" "$(j "$R" '.session.header.state')" "refreshing"
R=$(play "$S" +1)
expect_eq "$S: header watchdog hides the header (H13)" \
    "$(j "$R" '[.session.header.state, (entries("watchdog") | map(.type))]')" '["hidden",["headerWatchdog"]]'
R=$(timeline "$S" "kind=header")
expect_eq "$S: the header never showed updated (H13)" \
    "$(j "$R" '[.entries[] | select(.type == "updated")] | length')" "0"
# Budget spent (the recovery reload used it): the deadline itself hides the header (H6, H9).
R=$(play "$S" "gesture liveWidget.created lw-9t2" "started lw-9t2" +5000)
expect_eq "$S: with the budget spent the deadline hides the header, no reload (H6, H9)" \
    "$(j "$R" '[.session.document.loadId, .session.header.state, settled]')" '[2,"hidden",[["lw-9t2","timedOut"]]]'
no_timers "$S"

# --- navigation ------------------------------------------------------------------------
S=$(sid checklist-9-navigation)
both_up "$S" pull-9n lw-9n
R=$(play "$S" "lifecycle navigation")
expect_eq "$S: navigation ends the spinner cancelled and clears the header (H17, H14)" "$(j "$R" "$ui")" '["idle","cancelled","hidden"]'
expect_eq "$S: pending requests consumed as cancelled (H3)" \
    "$(j "$R" '[settled, .session.refresh.pending, .session.document.cause]')" \
    '[[["pull-9n","cancelled"],["lw-9n","cancelled"]],[],"navigation"]'
R=$(play "$S" "result lw-9n succeeded")
expect_eq "$S: a late result after the navigation is stale (H8)" "$(j "$R" "[.outcome, .reason] + $ui")" '["ignored","staleResult","idle","cancelled","hidden"]'
no_timers "$S"

# --- Web process termination -----------------------------------------------------------
S=$(sid checklist-9-termination)
both_up "$S" pull-9w lw-9w
R=$(play "$S" "lifecycle webContentTerminated")
expect_eq "$S: termination clears the header and reloads, spinner follows (H18, H9, H11)" \
    "$(j "$R" "$reloaded + [.session.refresh.pending]")" '["termination","refreshing",true,"hidden",[]]'
R=$(play "$S" "started web-9w")
expect_eq "$S: Web shows the header on the new document" "$(j "$R" '.session.header.state')" "refreshing"
R=$(play "$S" "lifecycle webContentTerminated")
expect_eq "$S: second termination, budget spent: spinner ends cancelled, header hidden, document terminated (H18, H11, H14)" \
    "$(j "$R" "[.session.document.state] + $ui")" '["terminated","idle","cancelled","hidden"]'
no_timers "$S"

# --- teardown, then delete ---------------------------------------------------------------
S=$(sid checklist-9-teardown)
both_up "$S" pull-9t lw-9t
R=$(play "$S" "gesture pull pull-9t2")
expect_eq "$S: a second pull within 10 s hard-reloads with its id (H10)" \
    "$(j "$R" '[.session.document.cause, .session.document.requestId]')" '["manualRepeat","pull-9t2"]'
R=$(play "$S" "lifecycle teardown")
expect_eq "$S: teardown ends the spinner cancelled, clears the header and closes (H20, H11, H14)" \
    "$(j "$R" "[.session.status] + $ui")" '["closed","idle","cancelled","hidden"]'
no_timers "$S"
R=$(get "/v1/sessions/$S/report")
expect_eq "$S: every request is settled, the reload's own id included (H20)" \
    "$(j "$R" '[.requests[] | [.requestId, .outcome]]')" '[["pull-9t","cancelled"],["lw-9t","cancelled"],["pull-9t2","cancelled"]]'
R=$(post "/v1/sessions/$S/lifecycle" '{"type":"teardown"}' 409)
expect_eq "$S: a second teardown is refused, the session stays readable" "$(j "$R" .code)" "session_closed"
R=$(api DELETE "/v1/sessions/$S" "" 204)
R=$(get "/v1/sessions/$S" 404)
expect_eq "$S: DELETE removed the session: every route is 404" "$(j "$R" .code)" "session_not_found"
R=$(api DELETE "/v1/sessions/$S" "" 404)

scenario_end
