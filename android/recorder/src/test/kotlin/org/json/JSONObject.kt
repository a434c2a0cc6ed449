package org.json

/**
 * A stand-in for org.json's `JSONObject` (Android's, not on this classpath): like it, an object
 * that holds JSON members but is not a `Map`, as a bridge that parses Web's message with org.json
 * hands it over.
 */
class JSONObject(private val members: Map<String, Any?>) {
    fun keys(): Iterator<String> = members.keys.iterator()

    fun opt(name: String): Any? = members[name]

    override fun toString(): String = members.toString()
}
