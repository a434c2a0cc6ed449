#!/usr/bin/env bash
# Checklist 6: "Web polling runs once per minute; tab, timer, socket, and polling refreshes
# show no native feedback." Host side: tab activation asks tab_activated, timer ticks (the
# once-a-minute poll) and socket events ask with no reason at all; the host shows neither the
# header nor the spinner for them, and flags a Web that starts header feedback for one (M3).
# Rules: H16 (no feedback), H4 (reasons: tab_activated; none for socket/timer), H12, M3.
set -euo pipefail
. "$(dirname "$0")/../lib/curl.sh"
scenario_begin

S=$(sid checklist-6)
R=$(create_session "$S")
no_feedback='[.session.header.state, .session.pull.state, (entries("header") + entries("pull") | length)]'

R=$(play "$S" "lifecycle tabActivated tab-6")
expect_eq "tab activation asks tab_activated (H16, H4)" "$(j "$R" requested)" \
    '[{"type":"todayPage.refreshRequested","schemaVersion":1,"requestId":"tab-6","reason":"tab_activated"}]'
expect_eq "tab activation shows no feedback (H16)" "$(j "$R" "$no_feedback")" '["hidden","idle",0]'
R=$(play "$S" "result tab-6 succeeded")
expect_eq "tab result settles silently (H16)" "$(j "$R" "[.outcome] + $no_feedback")" '["applied","hidden","idle",0]'

# Web's poll: a timer tick once a minute, with no reason (legacy, silent).
for minute in 1 2; do
    R=$(play "$S" "to:$((minute * 60000))" "lifecycle timerTick timer-6-$minute")
    expect_eq "timer tick at minute $minute asks with no reason (H16, H4)" "$(j "$R" requested)" \
        "[{\"type\":\"todayPage.refreshRequested\",\"schemaVersion\":1,\"requestId\":\"timer-6-$minute\"}]"
    expect_eq "timer tick at minute $minute shows no feedback (H16)" "$(j "$R" "$no_feedback")" '["hidden","idle",0]'
    R=$(play "$S" "result timer-6-$minute succeeded")
    expect_eq "timer result at minute $minute settles silently" "$(j "$R" "[.outcome] + $no_feedback")" '["applied","hidden","idle",0]'
done

R=$(play "$S" "lifecycle socketEvent sock-6")
expect_eq "socket event asks with no reason (H16, H4)" "$(j "$R" requested)" \
    '[{"type":"todayPage.refreshRequested","schemaVersion":1,"requestId":"sock-6"}]'
expect_eq "socket event shows no feedback (H16)" "$(j "$R" "$no_feedback")" '["hidden","idle",0]'
R=$(play "$S" "result sock-6 failed")
expect_eq "socket failure settles silently (recovery reload aside)" \
    "$(j "$R" "[.outcome] + $no_feedback")" '["applied","hidden","idle",0]'

R=$(timeline "$S")
expect_eq "no header or spinner entry in the whole session (H16)" \
    "$(j "$R" 'entries("header") + entries("pull") | length')" "0"
expect_eq "no contract violation so far" "$(j "$R" 'violations | length')" "0"

# A Web that commands header feedback for a silent refresh breaks the contract (M3).
R=$(play "$S" "lifecycle timerTick timer-6-m3" "started timer-6-m3")
expect_eq "refreshStarted for a timer refresh is flagged M3" "$(j "$R" violation_codes)" '["M3"]'
R=$(play "$S" "result timer-6-m3 succeeded")

scenario_end
