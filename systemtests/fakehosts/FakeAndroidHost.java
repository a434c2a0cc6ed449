// A fake Android Today Page host for one scenario, recording through the real Kotlin recorder
// (android/recorder, compiled by kotlinc; this host by javac, as an app's Java code would be):
// what systemtests/test_android_recorder.py compares with ios/main.swift's recording of the same
// scenario (`todaysim compare-traces`). Its clock is the scenario's. Arguments: the trace's path,
// and how long an app must have been away for its return to revalidate (5000 ms: H15; the test
// plants 4000, a platform difference).
import dev.todaysim.recorder.GestureType;
import dev.todaysim.recorder.LifecycleType;
import dev.todaysim.recorder.NavigationCause;
import dev.todaysim.recorder.OverlayState;
import dev.todaysim.recorder.PullOutcome;
import dev.todaysim.recorder.PullState;
import dev.todaysim.recorder.TodayPageTraceRecorder;
import java.io.File;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

public final class FakeAndroidHost {
    private final TodayPageTraceRecorder recorder;
    private final long[] clock;
    private final long foregroundThresholdMs;
    private Long backgroundSince;
    private String spinnerId;

    private FakeAndroidHost(String path, long foregroundThresholdMs, long[] clock) {
        this.clock = clock;
        this.foregroundThresholdMs = foregroundThresholdMs;
        Map<String, Object> creation = new HashMap<>();
        creation.put("uid", "u1");
        creation.put("platform", "android");
        recorder = new TodayPageTraceRecorder(new File(path), creation, () -> clock[0],
            Arrays.asList(TodayPageTraceRecorder.Kind.EMIT, TodayPageTraceRecorder.Kind.NAVIGATION,
                          TodayPageTraceRecorder.Kind.PULL, TodayPageTraceRecorder.Kind.OVERLAY),
            100, "fake Android host");
        recorder.navigated(NavigationCause.INITIAL, "https://today.example.com/embed/feeds/v1?uid=u1&language=en");
    }

    private void web(Map<String, Object> message) {
        recorder.webEvent(message);
        Object type = message.get("type");
        if ("webView.loadingPresentation".equals(type)) {
            recorder.overlay(OverlayState.HIDDEN);
        } else if ("todayPage.refreshResult".equals(type) && message.get("requestId").equals(spinnerId)) {
            String id = spinnerId;
            spinnerId = null;
            recorder.pull(PullState.IDLE, id, PullOutcome.SUCCEEDED);
        }
    }

    private void background() {
        recorder.lifecycle(LifecycleType.BACKGROUND);
        backgroundSince = clock[0];
        visibility(false);
    }

    private void foreground() {
        recorder.lifecycle(LifecycleType.FOREGROUND);
        if (backgroundSince == null) return;
        long away = clock[0] - backgroundSince;
        backgroundSince = null;
        visibility(true);
        if (away >= foregroundThresholdMs) request("app_foreground", UUID.randomUUID().toString());
    }

    private String pull() {
        recorder.gesture(GestureType.PULL);
        String id = UUID.randomUUID().toString();
        spinnerId = id;
        recorder.pull(PullState.REFRESHING, id);
        request("user_pull", id);
        return id;
    }

    private void request(String reason, String id) {
        Map<String, Object> payload = new HashMap<>();
        payload.put("type", "todayPage.refreshRequested");
        payload.put("schemaVersion", 1);
        payload.put("requestId", id);
        payload.put("reason", reason);
        recorder.emitted(payload);
    }

    private void visibility(boolean visible) {
        for (String type : new String[] {"webView.visibilityWillChange", "webView.visibilityChanged"}) {
            Map<String, Object> payload = new HashMap<>();
            payload.put("type", type);
            payload.put("schemaVersion", 1);
            payload.put("visible", visible);
            recorder.emitted(payload);
        }
    }

    private static Map<String, Object> message(String... members) {
        Map<String, Object> message = new HashMap<>();
        for (int index = 0; index < members.length; index += 2) message.put(members[index], members[index + 1]);
        return message;
    }

    public static void main(String[] arguments) throws Exception {
        long[] clock = {0};
        FakeAndroidHost host = new FakeAndroidHost(arguments[0], Long.parseLong(arguments[1]), clock);
        // The scenario, the same in ios/main.swift.
        clock[0] = 100;
        host.web(message("type", "webView.loadingPresentation", "owner", "web", "reason", "placeholders_visible"));
        clock[0] = 1_000;
        host.background();
        clock[0] = 5_500;
        host.foreground();
        clock[0] = 8_000;
        String pulled = host.pull();
        clock[0] = 8_400;
        Map<String, Object> result = message("type", "todayPage.refreshResult", "requestId", pulled, "mode", "soft", "status", "succeeded");
        result.put("schemaVersion", 1);
        host.web(result);
        clock[0] = 10_000;
        host.recorder.close();
    }
}
