package dev.todaysim.recorder

/**
 * A small JSON reader for the tests (written apart from [TraceJson], which only writes): reads a
 * trace line or a verdict into `Map<String, Any?>` (members in document order), `List<Any?>`,
 * `String`, `Long` (a number without fraction or exponent), `Double`, `Boolean` and `null`.
 */
class TinyJson private constructor(private val text: String) {
    private var index = 0

    companion object {
        fun parse(text: String): Any? {
            val reader = TinyJson(text)
            val value = reader.value()
            reader.space()
            if (reader.index != text.length) throw reader.fail("text after the value")
            return value
        }

        @Suppress("UNCHECKED_CAST")
        fun obj(text: String): Map<String, Any?> =
            parse(text) as? Map<String, Any?> ?: throw IllegalArgumentException("not a JSON object: $text")
    }

    private fun fail(what: String) = IllegalArgumentException("$what at offset $index of: $text")

    private fun space() {
        while (index < text.length && text[index] in " \t\r\n") index += 1
    }

    private fun value(): Any? {
        space()
        if (index >= text.length) throw fail("a value expected")
        return when (text[index]) {
            '{' -> objectValue()
            '[' -> arrayValue()
            '"' -> stringValue()
            't' -> literal("true", true)
            'f' -> literal("false", false)
            'n' -> literal("null", null)
            else -> numberValue()
        }
    }

    private fun literal(word: String, value: Any?): Any? {
        if (!text.startsWith(word, index)) throw fail("'$word' expected")
        index += word.length
        return value
    }

    private fun objectValue(): Map<String, Any?> {
        val members = LinkedHashMap<String, Any?>()
        index += 1
        space()
        if (index < text.length && text[index] == '}') { index += 1; return members }
        while (true) {
            space()
            if (index >= text.length || text[index] != '"') throw fail("a member name expected")
            val name = stringValue()
            space()
            if (index >= text.length || text[index] != ':') throw fail("':' expected")
            index += 1
            if (members.containsKey(name)) throw fail("member '$name' repeated")
            members[name] = value()
            space()
            if (index < text.length && text[index] == ',') { index += 1; continue }
            if (index < text.length && text[index] == '}') { index += 1; return members }
            throw fail("',' or '}' expected")
        }
    }

    private fun arrayValue(): List<Any?> {
        val items = ArrayList<Any?>()
        index += 1
        space()
        if (index < text.length && text[index] == ']') { index += 1; return items }
        while (true) {
            items.add(value())
            space()
            if (index < text.length && text[index] == ',') { index += 1; continue }
            if (index < text.length && text[index] == ']') { index += 1; return items }
            throw fail("',' or ']' expected")
        }
    }

    private fun stringValue(): String {
        val out = StringBuilder()
        index += 1
        while (true) {
            if (index >= text.length) throw fail("unterminated string")
            val c = text[index]
            index += 1
            when {
                c == '"' -> return out.toString()
                c < ' ' -> throw fail("a raw control character in a string")
                c != '\\' -> out.append(c)
                else -> {
                    if (index >= text.length) throw fail("unterminated escape")
                    val e = text[index]
                    index += 1
                    when (e) {
                        '"' -> out.append('"')
                        '\\' -> out.append('\\')
                        '/' -> out.append('/')
                        'b' -> out.append('\b')
                        'f' -> out.append('\u000C')
                        'n' -> out.append('\n')
                        'r' -> out.append('\r')
                        't' -> out.append('\t')
                        'u' -> {
                            if (index + 4 > text.length) throw fail("short \\u escape")
                            out.append(Integer.parseInt(text.substring(index, index + 4), 16).toChar())
                            index += 4
                        }
                        else -> throw fail("invalid escape \\$e")
                    }
                }
            }
        }
    }

    private fun numberValue(): Any {
        val start = index
        while (index < text.length && text[index] in "+-0123456789.eE") index += 1
        val token = text.substring(start, index)
        if (!Regex("-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?").matches(token)) throw fail("invalid number '$token'")
        return if (token.any { it in ".eE" }) token.toDouble() else token.toLong()
    }
}
