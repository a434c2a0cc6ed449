package dev.todaysim.recorder;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Date;
import java.util.List;
import java.util.Map;
import org.junit.Test;

/**
 * The recorder as a Java host calls it, compiled by javac (--release 8) against the recorder's
 * classes: the constructors @JvmOverloads makes, a lambda as the clock, the typed calls.
 */
public class JavaCallerTest {
    private static File tempTrace() throws IOException {
        File file = File.createTempFile("todaysim-java-caller-", ".jsonl");
        file.deleteOnExit();
        return file;
    }

    private static List<String> lines(File file) throws IOException {
        return Files.readAllLines(file.toPath(), StandardCharsets.UTF_8);
    }

    @Test
    public void aJavaHostMakesARecorderFromTheFileAndTheCreationAlone() throws IOException {
        File file = tempTrace();
        Map<String, Object> creation = Collections.singletonMap("uid", "u1");
        try (TodayPageTraceRecorder recorder = new TodayPageTraceRecorder(file, creation)) {
            recorder.lifecycle(LifecycleType.FOREGROUND);
        }
        List<String> lines = lines(file);
        assertEquals("{\"recorded\":[\"emit\",\"navigation\",\"header\",\"pull\",\"overlay\",\"analytics\",\"resolution\"],"
                + "\"todaysimTrace\":1,\"toleranceMs\":100}", lines.get(0));
        assertEquals("{\"atMs\":0,\"data\":{\"input\":{\"uid\":\"u1\"},\"via\":\"create\"},\"kind\":\"input\",\"type\":\"create\"}", lines.get(1));
        assertEquals(4, lines.size());
        String foreground = "\\{\"atMs\":[0-9]+,\"data\":\\{\"input\":\\{\"type\":\"foreground\"},\"via\":\"lifecycle\"},\"kind\":\"input\",\"type\":\"foreground\"}";
        assertTrue(lines.get(2), lines.get(2).matches(foreground));
        assertTrue(lines.get(3), lines.get(3).matches("\\{\"atMs\":[0-9]+,\"kind\":\"end\"}"));
    }

    @Test
    public void aJavaHostPassesItsClockAsALambdaAndCallsTheTypedMethods() throws IOException {
        File file = tempTrace();
        long[] elapsedRealtime = {7_200_000L};
        TodayPageTraceRecorder recorder = new TodayPageTraceRecorder(file, Collections.singletonMap("uid", "u1"),
                () -> elapsedRealtime[0], Arrays.asList(TodayPageTraceRecorder.Kind.PULL, TodayPageTraceRecorder.Kind.HEADER));
        elapsedRealtime[0] += 40;
        recorder.gesture(GestureType.PULL);
        recorder.pull(PullState.REFRESHING, "P");
        recorder.navigated(NavigationCause.MANUAL_REPEAT, "/embed/feeds/v1?requestId=P", "P");
        recorder.overlayShownByLoad();
        elapsedRealtime[0] += 500;
        recorder.header(HeaderState.UPDATED, "P");
        recorder.pull(PullState.IDLE, "P", PullOutcome.TIMED_OUT);
        recorder.overlay(OverlayState.HIDDEN);
        recorder.lifecycle(LifecycleType.ACCOUNT_SWITCH, Collections.singletonMap("uid", "u2"));
        recorder.close();
        assertEquals(Arrays.asList(
                "{\"recorded\":[\"pull\",\"header\"],\"todaysimTrace\":1,\"toleranceMs\":100}",
                "{\"atMs\":0,\"data\":{\"input\":{\"uid\":\"u1\"},\"via\":\"create\"},\"kind\":\"input\",\"type\":\"create\"}",
                "{\"atMs\":40,\"data\":{\"input\":{\"type\":\"pull\"},\"via\":\"gesture\"},\"kind\":\"input\",\"type\":\"pull\"}",
                "{\"atMs\":40,\"data\":{\"state\":\"refreshing\"},\"kind\":\"pull\",\"requestId\":\"P\",\"type\":\"refreshing\"}",
                "{\"atMs\":40,\"data\":{\"cause\":\"manualRepeat\",\"url\":\"/embed/feeds/v1?requestId=P\"},\"kind\":\"navigation\",\"requestId\":\"P\",\"type\":\"manualRepeat\"}",
                "{\"atMs\":540,\"data\":{\"to\":\"updated\"},\"kind\":\"header\",\"requestId\":\"P\",\"type\":\"updated\"}",
                "{\"atMs\":540,\"data\":{\"outcome\":\"timedOut\",\"state\":\"idle\"},\"kind\":\"pull\",\"requestId\":\"P\",\"type\":\"idle\"}",
                "{\"atMs\":540,\"data\":{\"to\":\"hidden\"},\"kind\":\"overlay\",\"type\":\"hidden\"}",
                "{\"atMs\":540,\"data\":{\"input\":{\"type\":\"accountSwitch\",\"uid\":\"u2\"},\"via\":\"lifecycle\"},\"kind\":\"input\",\"type\":\"accountSwitch\"}",
                "{\"atMs\":540,\"kind\":\"end\"}"),
                lines(file));
    }

    @Test
    public void aJavaHostPassesAnErrorHandlerAsAMethodReference() throws IOException {
        File file = tempTrace();
        List<TraceRecordingException> errors = new ArrayList<>();
        TodayPageTraceRecorder recorder = new TodayPageTraceRecorder(file, Collections.singletonMap("uid", "u1"),
                TraceClock.NANO_TIME, Arrays.asList(TodayPageTraceRecorder.Kind.values()), 100, "java host", errors::add);
        recorder.analytics("page_view", Collections.singletonMap("when", new Date(0)));
        recorder.close();
        assertEquals(1, errors.size());
        assertEquals("data.properties.when", errors.get(0).getPath());
        assertEquals(3, lines(file).size());  // the header, the creation, the end
    }
}
