package android.content;

import java.io.File;

public abstract class Context {
    public abstract File getFilesDir();

    public abstract File getExternalFilesDir(String type);
}
