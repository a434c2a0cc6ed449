#!/usr/bin/env bash
# Checklist 5: "Successful Live Widget creation shows header refreshing, then updated for one
# second." Host side: liveWidget.created dismisses the sheet and requests live_widget_created;
# Web's refreshStarted shows refreshing; its succeeded result shows updated for exactly
# headerSettleMs (1000), then hidden.
# Rules: H26 (sheet, request), H4 (reason), H12, H13 (updated for headerSettleMs), C2 (timer
# fires at its due time), C4.
set -euo pipefail
. "$(dirname "$0")/../lib/curl.sh"
scenario_begin

S=$(sid checklist-5)
R=$(create_session "$S")

R=$(play "$S" 'web {"type":"liveWidgetCreation.present"}')
expect_eq "sheet presented (H26)" "$(j "$R" '[.resolution, .session.liveWidgetSheet]')" '[{"presented":true},"presented"]'

# 2 s later the widget is created.
R=$(play "$S" +2000 "gesture liveWidget.created lw-5")
expect_eq "creation dismisses the sheet (H26)" "$(j "$R" '.session.liveWidgetSheet')" "hidden"
expect_eq "creation requests live_widget_created (H26, H4)" "$(j "$R" requested)" \
    '[{"type":"todayPage.refreshRequested","schemaVersion":1,"requestId":"lw-5","reason":"live_widget_created"}]'

R=$(play "$S" "started lw-5")
expect_eq "header refreshing lw-5 (H12)" "$(j "$R" '.session.header')" '{"state":"refreshing","requestId":"lw-5"}'
expect_eq "header watchdog armed (H12)" \
    "$(j "$R" 'timers("headerWatchdog") | map([.requestId, .dueAtMs])')" '[["lw-5",14000]]'

R=$(play "$S" +300 "result lw-5 succeeded")
expect_eq "result applied" "$(j "$R" '.outcome')" "applied"
expect_eq "header updated (H13)" "$(j "$R" '.session.header')" '{"state":"updated","requestId":"lw-5"}'
expect_eq "hide due 1 s after the result (H13)" \
    "$(j "$R" '[.session.watchdogs[] | [.kind, .requestId, .dueAtMs]]')" '[["headerHide","lw-5",3300]]'

R=$(play "$S" +999)
expect_eq "still updated at 999 ms (H13)" "$(j "$R" '.session.header.state')" "updated"
R=$(play "$S" +1)
expect_eq "hidden at 1000 ms (H13)" "$(j "$R" '.session.header')" '{"state":"hidden","requestId":null}'
expect_eq "the hide fired as a headerHide timer" \
    "$(j "$R" 'entries("watchdog") | map([.type, .atMs])')" '[["headerHide",3300]]'

R=$(timeline "$S" "kind=header")
expect_eq "header went refreshing, updated, hidden — nothing else" \
    "$(j "$R" '[.entries[] | [.atMs, .data.from, .data.to, .requestId]]')" \
    '[[2000,"hidden","refreshing","lw-5"],[2300,"refreshing","updated","lw-5"],[3300,"updated","hidden","lw-5"]]'
R=$(watchdogs "$S")
expect_eq "no timer left" "$(j "$R" '.watchdogs')" "[]"
R=$(view "$S")
expect_eq "no contract violation" "$(j "$R" '.counts.violations')" "0"

scenario_end
