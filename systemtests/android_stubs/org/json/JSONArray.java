package org.json;

public class JSONArray {
    public int length() {
        return 0;
    }

    public Object get(int index) throws JSONException {
        return null;
    }
}
