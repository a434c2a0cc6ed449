package dev.todaysim.recorder

import java.math.BigDecimal
import java.math.BigInteger

/**
 * The JSON the recorder writes: one line, no spaces, object members sorted by name (as the Swift
 * recorder's `.sortedKeys`), `/` not escaped. Strings escape `"` and `\`, and every control
 * character (U+0000–U+001F) as `\u00XX`; other characters are written as they are (the line is
 * UTF-8). A lone surrogate, which a Kotlin string may hold but UTF-8 and the trace reader cannot,
 * becomes U+FFFD.
 *
 * A value is a `Map` with `String` keys, a `Collection` or an `Array`, a `String`, a `Boolean`,
 * an integer (`Int`, `Long`, `Short`, `Byte`, `BigInteger`), a finite `Double` or `Float`, a
 * `BigDecimal`, or `null`. Anything else (an org.json `JSONObject`, a Gson `JsonObject`, a
 * `Date`, a `Char`, NaN) is refused with a [TraceRecordingException] whose path names where it is.
 */
object TraceJson {
    /** [value] as JSON text; throws [TraceRecordingException] for a value JSON has no form for. */
    fun write(value: Any?): String {
        val out = StringBuilder()
        try {
            append(out, value)
        } catch (refusal: Refusal) {
            throw TraceRecordingException(refusal.path(), refusal.problem)
        }
        return out.toString()
    }

    /**
     * A refused value on its way out of the nesting: each level adds its step, so that the path
     * costs nothing unless a value is refused.
     */
    private class Refusal(val problem: String) : RuntimeException(problem, null, false, false) {
        private val steps = ArrayList<String>()  // innermost first

        fun within(step: String): Refusal = apply { steps.add(step) }

        fun path(): String = steps.asReversed().joinToString("").removePrefix(".")
    }

    private val IDENTIFIER = Regex("[A-Za-z_\\$][A-Za-z0-9_\\$]*")

    private fun memberStep(name: String) = if (IDENTIFIER.matches(name)) ".$name" else "[${write(name)}]"

    private fun append(out: StringBuilder, value: Any?) {
        when (value) {
            null -> out.append("null")
            is String -> appendString(out, value)
            is Boolean -> out.append(if (value) "true" else "false")
            is Int, is Long, is Short, is Byte, is BigInteger -> out.append(value.toString())
            is Double -> appendFinite(out, value.isNaN() || value.isInfinite(), value.toString())
            is Float -> appendFinite(out, value.isNaN() || value.isInfinite(), value.toString())
            is BigDecimal -> out.append(value.toString())
            is Map<*, *> -> appendObject(out, value)
            is Collection<*> -> appendArray(out, value)
            is Array<*> -> appendArray(out, value.asList())
            else -> throw Refusal("no JSON form for ${value.javaClass.name} (a trace takes Map, Collection, Array, String, " +
                "Boolean, Number and null)")
        }
    }

    private fun appendFinite(out: StringBuilder, notFinite: Boolean, text: String) {
        if (notFinite) throw Refusal("no JSON form for the number $text")
        out.append(text)
    }

    private fun appendObject(out: StringBuilder, map: Map<*, *>) {
        val members = map.entries.map { member ->
            val name = member.key as? String
                ?: throw Refusal("an object member's name must be a String, not ${describe(member.key)}")
            Pair(name, member.value)
        }.sortedBy { it.first }
        out.append('{')
        members.forEachIndexed { index, member ->
            if (index > 0) out.append(',')
            appendString(out, member.first)
            out.append(':')
            try {
                append(out, member.second)
            } catch (refusal: Refusal) {
                throw refusal.within(memberStep(member.first))
            }
        }
        out.append('}')
    }

    private fun appendArray(out: StringBuilder, items: Collection<*>) {
        out.append('[')
        items.forEachIndexed { index, item ->
            if (index > 0) out.append(',')
            try {
                append(out, item)
            } catch (refusal: Refusal) {
                throw refusal.within("[$index]")
            }
        }
        out.append(']')
    }

    private fun describe(key: Any?) = if (key == null) "null" else "the ${key.javaClass.name} $key"

    private fun appendString(out: StringBuilder, text: String) {
        out.append('"')
        var index = 0
        while (index < text.length) {
            val c = text[index]
            when {
                c == '"' -> out.append("\\\"")
                c == '\\' -> out.append("\\\\")
                c < ' ' -> {
                    val code = text.codePointAt(index)  // (not Char.toInt(), which later Kotlin deprecates)
                    out.append("\\u00").append(HEX[code shr 4]).append(HEX[code and 0xF])
                }
                Character.isHighSurrogate(c) && index + 1 < text.length && Character.isLowSurrogate(text[index + 1]) -> {
                    out.append(c).append(text[index + 1])
                    index += 1
                }
                Character.isSurrogate(c) -> out.append('\uFFFD')
                else -> out.append(c)
            }
            index += 1
        }
        out.append('"')
    }

    private const val HEX = "0123456789abcdef"
}
