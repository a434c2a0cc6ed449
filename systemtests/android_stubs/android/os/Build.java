package android.os;

public class Build {
    public static final String MODEL = "stub";
}
