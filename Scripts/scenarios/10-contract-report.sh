#!/usr/bin/env bash
# Contract monitor report: "Does this Web conform?" answered over HTTP.
# Session A plays a conforming Web: a cached start with its own id (after releasing the
# overlay and rendering), a foreground return and a live widget creation, each started and
# answered succeeded. Its report conforms, lists only the two native requests (the cached
# start's id is Web-minted) with their outcomes and exact answer times.
# Session B plays a misbehaving Web that breaks six rules, one after the other: header
# feedback for a pull (M3), a soft request answered cancelled (M4), a second result for that
# id (M1), a render before releasing the overlay (M9), a malformed refreshResult (M8) and a
# tab request left unanswered past the deadline (M7). Its report does not conform and lists
# exactly those codes in that order; the JUnit form has a test case per native request and
# per rule; GET /v1/violations?code=M7 finds B's M7 and nothing of A.
# Rules: M1, M3, M4, M7, M8, M9, H12 (Web-minted start), H23 (overlay), H9 (recovery reload),
# docs/RULES.md#h9 (no request record for a Web-minted id), #h4, #the-contract-monitor (codes, details).
set -euo pipefail
. "$(dirname "$0")/../lib/curl.sh"
scenario_begin

request_rows='[.requests[] | [.requestId, .kind, .reason, .outcome, .answeredInMs]]'

# --- A: a conforming Web ---------------------------------------------------------------
A=$(sid checklist-10-conforming)
R=$(create_session "$A")

# Cached start (H23, H12): release the overlay, render 100 ms later, then start and settle a Web-minted id.
R=$(play "$A" 'web {"type":"webView.loadingPresentation","owner":"web","reason":"cached"}')
expect_eq "A: Web releases the overlay (H23)" "$(j "$R" '[.outcome, .session.document.overlay]')" '["applied","hidden"]'
R=$(play "$A" +100 'web {"type":"todayPage.firstBatchRendered","schemaVersion":1,"batchId":"b1","elapsedMs":90}')
expect_eq "A: first batch rendered after the release" "$(j "$R" '[.outcome, .session.document.state]')" '["applied","rendered"]'
R=$(play "$A" "started web-cache-10")
expect_eq "A: Web-minted start shows the header (H12)" "$(j "$R" '.session.header')" '{"state":"refreshing","requestId":"web-cache-10"}'
R=$(play "$A" +400 "result web-cache-10 succeeded")
expect_eq "A: its result settles the header, no request record (interp. 6)" \
    "$(j "$R" '[.outcome, .session.header.state, (settled | length)]')" '["applied","updated",0]'

# 1 s later, a foreground return after 6 s (H15): Web starts and answers fg-10 (requested at 7500).
R=$(play "$A" +1000 "lifecycle background" +6000 "lifecycle foreground fg-10")
expect_eq "A: foreground return requests fg-10 (H15)" \
    "$(j "$R" '.session.refresh.pending | map([.requestId, .reason, .requestedAtMs])')" '[["fg-10","app_foreground",7500]]'
R=$(play "$A" +200 "started fg-10" +300 "result fg-10 succeeded")
expect_eq "A: fg-10 answered succeeded after 500 ms" \
    "$(j "$R" '[.session.header.state, (entries("request") | map([.requestId, .data.outcome, .atMs]))]')" \
    '["updated",[["fg-10","succeeded",8000]]]'

# 1 s later, a live widget created (H26): Web starts and answers lw-10 (requested at 9000).
R=$(play "$A" +1000 "gesture liveWidget.created lw-10" +100 "started lw-10" +250 "result lw-10 succeeded")
expect_eq "A: lw-10 answered succeeded after 350 ms" \
    "$(j "$R" '[.session.header.state, (entries("request") | map([.requestId, .data.outcome, .atMs]))]')" \
    '["updated",[["lw-10","succeeded",9350]]]'
R=$(play "$A" idle)
expect_eq "A: everything settled" "$(j "$R" '[.session.header.state, .session.watchdogs, .session.counts.violations]')" '["hidden",[],0]'

R=$(get "/v1/sessions/$A/report")
expect_eq "A: report names the session and conforms, no violation" \
    "$(j "$R" '[.sessionId, .conforms, .violations]')" "[\"$A\",true,[]]"
expect_eq "A: report lists only the native requests, succeeded, with exact answer times" \
    "$(j "$R" "$request_rows")" \
    '[["fg-10","soft","app_foreground","succeeded",500],["lw-10","soft","live_widget_created","succeeded",350]]'
expect_eq "A: requests carry when they were made" "$(j "$R" '[.requests[] | .requestedAtMs]')" '[7500,9000]'

X=$(get "/v1/sessions/$A/report?format=junit")
expect_eq "A: JUnit has 2 request and 9 rule test cases, no failure" \
    "$(printf '%s\n' \
        "$(grep -c "<testcase classname=\"todaysim.$A.requests\"" <<<"$X" || true)" \
        "$(grep -c "<testcase classname=\"todaysim.$A.rules\"" <<<"$X" || true)" \
        "$(grep -c '<failure' <<<"$X" || true)" | paste -sd,)" "2,9,0"
expect_eq "A: JUnit suite totals" "$(grep -o '<testsuites [^>]*>' <<<"$X")" '<testsuites name="todaysim" tests="11" failures="0">'

# --- B: a misbehaving Web --------------------------------------------------------------
B=$(sid checklist-10-misbehaving)
R=$(create_session "$B")

# M3: header feedback for a pull's request (the pull itself is answered, so no M7 for it).
R=$(play "$B" "gesture pull pull-10" +100 "started pull-10")
expect_eq "B: refreshStarted for a pull is a violation, M3" "$(j "$R" '[.outcome, violations]')" '["applied",[["pull-10","M3"]]]'
R=$(play "$B" +200 "result pull-10 succeeded")
expect_eq "B: the pull's result itself is fine" "$(j "$R" '[.outcome, .session.pull.state, .session.counts.violations]')" '["applied","idle",1]'

# M4: 1 s later, a live widget request answered cancelled; a failure with the budget armed: reload (H9).
R=$(play "$B" +1000 "gesture liveWidget.created lw-10-bad" +100 "result lw-10-bad cancelled")
expect_eq "B: a soft request answered cancelled is M4; it reloads the document (H9)" \
    "$(j "$R" '[violations, .session.document.loadId, .session.document.cause, .session.document.overlay]')" \
    '[[["lw-10-bad","M4"]],2,"recovery","visible"]'
RELOAD=$(j "$R" '.session.document.requestId')

# M1: a second result for the same id (stale, nothing else happens).
R=$(play "$B" "result lw-10-bad succeeded")
expect_eq "B: a second result for lw-10-bad is M1 and stale" \
    "$(j "$R" '[.outcome, .reason, violations]')" '["ignored","staleResult",[["lw-10-bad","M1"]]]'

# M9: the reloaded document renders (300 ms later) before Web releases the overlay.
R=$(play "$B" +300 'web {"type":"todayPage.firstBatchRendered","schemaVersion":1,"batchId":"b1","elapsedMs":280}')
expect_eq "B: rendering before the release is M9; the overlay stays up (H23)" \
    "$(j "$R" '[.outcome, .session.document.state, .session.document.overlay, violation_codes]')" \
    '["applied","rendered","visible",["M9"]]'

# Web releases it; then M8: a malformed refreshResult (mode "medium") is rejected at the bridge.
R=$(play "$B" 'web {"type":"webView.loadingPresentation","owner":"web"}' \
    'web {"type":"todayPage.refreshResult","schemaVersion":1,"requestId":"bad-shape-10","mode":"medium","status":"succeeded"}')
expect_eq "B: a malformed refreshResult is rejected and M8" "$(j "$R" '[.outcome, violation_codes]')" '["rejected",["M8"]]'

# M7: a tab request Web never answers; the deadline passes (budget spent: no reload).
R=$(play "$B" "lifecycle tabActivated tab-10")
TAB_AT=$(j "$R" '.session.clock.nowMs')
R=$(play "$B" +4999)
expect_eq "B: no M7 before the deadline" "$(j "$R" '.session.counts.violations')" "5"
R=$(play "$B" +1)
expect_eq "B: the deadline times tab-10 out: M7, no reload (H6, H9)" \
    "$(j "$R" '[violations, .session.document.loadId]')" '[[["tab-10","M7"]],2]'

R=$(get "/v1/sessions/$B/report")
expect_eq "B: report does not conform" "$(j "$R" '[.sessionId, .conforms]')" "[\"$B\",false]"
expect_eq "B: exactly the expected violations, in order" \
    "$(j "$R" '[.violations[] | [.data.code, .requestId]]')" \
    '[["M3","pull-10"],["M4","lw-10-bad"],["M1","lw-10-bad"],["M9",null],["M8","bad-shape-10"],["M7","tab-10"]]'
expect_eq "B: each violation's detail starts with its code (interp. 23)" \
    "$(j "$R" '[.violations[] | .data as $d | select($d.detail | startswith($d.code + ": ") | not)] | length')" "0"
expect_eq "B: violations are timeline entries in seq order" \
    "$(j "$R" '[.violations[] | .kind] == [.violations[] | "violation"] and ([.violations[] | .seq] | . == sort)')" "true"
expect_eq "B: report lists the native requests with their outcomes" \
    "$(j "$R" "$request_rows")" \
    "[[\"pull-10\",\"soft\",\"user_pull\",\"succeeded\",300],[\"lw-10-bad\",\"soft\",\"live_widget_created\",\"cancelled\",100],[\"$RELOAD\",\"reload\",null,null,null],[\"tab-10\",\"soft\",\"tab_activated\",\"timedOut\",null]]"

X=$(get "/v1/sessions/$B/report?format=junit")
expect_eq "B: JUnit is XML" "$(head -n 1 <<<"$X")" '<?xml version="1.0" encoding="UTF-8"?>'
expect_eq "B: JUnit has 9 rule test cases" "$(grep -c "<testcase classname=\"todaysim.$B.rules\"" <<<"$X" || true)" "9"
expect_eq "B: JUnit has 4 request test cases" "$(grep -c "<testcase classname=\"todaysim.$B.requests\"" <<<"$X" || true)" "4"
# Each violation is a <failure> of its rule's test case; one tied to a native request is also
# a <failure> of that request's test case (here M3, M4, M1, M7: 6 + 4 = 10 in all).
rule_failures=$(awk -v cls="todaysim.$B.rules" '
    /<testcase / { inrule = index($0, "classname=\"" cls "\"") > 0 }
    inrule && /<failure / { match($0, /type="[^"]*"/); print substr($0, RSTART + 6, RLENGTH - 7) }
    /<\/testcase>/ { inrule = 0 }' <<<"$X" | paste -sd, -)
expect_eq "B: one <failure> per violation under the rules, by code" "$rule_failures" "M1,M3,M4,M7,M8,M9"
expect_eq "B: <failure> elements in all (rules + requests)" "$(grep -c '<failure' <<<"$X" || true)" "10"
expect_eq "B: every violation's seq is named by a failure" \
    "$(for seq in $(j "$R" '.violations[] | .seq'); do grep -c "(seq $seq)\"" <<<"$X" || true; done | paste -sd, -)" "2,2,2,1,1,2"
expect_eq "B: JUnit suite totals (13 cases, 9 with failures)" "$(grep -o '<testsuites [^>]*>' <<<"$X")" \
    '<testsuites name="todaysim" tests="13" failures="9">'

# GET /v1/violations across sessions, every page (a long-lived server may hold many).
all_violations() { # all_violations QUERY → the JSON array of {sessionId, entry}
    local page all='[]' next='' query="/v1/violations?$1&limit=1000"
    while :; do
        page=$(get "$query${next:+&after=$next}")
        all=$(jq -c --argjson more "$(j "$page" '.violations')" '. + $more' <<<"$all")
        next=$(j "$page" '.next // empty')
        [ -n "$next" ] || break
    done
    printf '%s' "$all"
}
ALL=$(all_violations "code=M7")
expect_eq "violations?code=M7 holds only M7" "$(j "$ALL" '[.[] | select(.entry.data.code != "M7")] | length')" "0"
expect_eq "violations?code=M7 has B's M7" \
    "$(j "$ALL" "[.[] | select(.sessionId == \"$B\") | [.entry.requestId, .entry.kind, .entry.atMs]]")" \
    "[[\"tab-10\",\"violation\",$((TAB_AT + 5000))]]"
expect_eq "violations?code=M7 has nothing of A" "$(j "$ALL" "[.[] | select(.sessionId == \"$A\")] | length")" "0"
ALL=$(all_violations "code=M3&uid=u-checklist")
expect_eq "violations?code=M3&uid= has B's M3 and nothing of A" \
    "$(j "$ALL" "[[.[] | select(.sessionId == \"$B\") | .entry.requestId], ([.[] | select(.sessionId == \"$A\")] | length)]")" \
    '[["pull-10"],0]'

scenario_end
