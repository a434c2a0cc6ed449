package dev.todaysim.recorder

import org.junit.Assert.assertEquals
import org.junit.Assert.assertTrue
import org.junit.Assert.fail
import org.junit.Test
import java.math.BigDecimal
import java.math.BigInteger

/** The recorder's own JSON writer: exact text for each form, and what it refuses. */
class TraceJsonTest {
    private fun json(value: Any?) = TraceJson.write(value)

    @Test fun quotesAndBackslashesAreEscapedAndSlashesAreNot() {
        assertEquals("\"a\\\"b\\\\c/d\"", json("a\"b\\c/d"))
        assertEquals("\"https://today.example.com/embed/feeds/v1?uid=u1\"", json("https://today.example.com/embed/feeds/v1?uid=u1"))
    }

    @Test fun everyControlCharacterIsAUnicodeEscape() {
        assertEquals("\"\\u0000\\u0001\\u0008\\u0009\\u000a\\u000c\\u000d\\u001b\\u001f\"", json("\u0000\u0001\b\t\n\u000C\r\u001B\u001F"))
        // Every one of the 32, and the first character that is not one (a space) is written as it is.
        for (code in 0 until 32) {
            val text = json(code.toChar().toString())
            assertEquals("\"\\u" + String.format("%04x", code) + "\"", text)
        }
        assertEquals("\" \"", json(" "))
    }

    @Test fun otherCharactersAreWrittenAsTheyAre() {
        assertEquals("\"\u007F é ü 今日 😀 \u2028\"", json("\u007F é ü 今日 😀 \u2028"))
    }

    @Test fun aLoneSurrogateBecomesTheReplacementCharacter() {
        assertEquals("\"a\uFFFDb\uFFFD\"", json("a\uD800b\uDC00"))
        assertEquals("\"\uFFFD😀\"", json("\uD83D\uD83D\uDE00"))  // a high surrogate, then a whole pair
    }

    @Test fun numbersAreWrittenByValue() {
        assertEquals("[0,-7,9223372036854775807,3,4,1.5,0.25,1.0E21,1.0E-7,123456789012345678901234567890,1.50]",
            json(listOf(0, -7L, Long.MAX_VALUE, 3.toShort(), 4.toByte(), 1.5, 0.25f, 1e21, 1e-7,
                BigInteger("123456789012345678901234567890"), BigDecimal("1.50"))))
        // What Double.toString writes is JSON: it reads back as the same number.
        for (number in listOf(1.0, -0.5, 1e21, 1e-7, 123456.789, Double.MAX_VALUE, Double.MIN_VALUE)) {
            assertEquals(number, (TinyJson.parse(json(number)) as Number).toDouble(), 0.0)
        }
    }

    @Test fun objectsAreSortedByNameAndNest() {
        val value = linkedMapOf<String, Any?>(
            "b" to listOf(1, linkedMapOf("z" to null, "a" to true)),
            "a" to arrayOf("x", false),
            "c" to emptyMap<String, Any?>(),
            "d" to emptyList<Any?>(),
            "e" to setOf("only")
        )
        assertEquals("{\"a\":[\"x\",false],\"b\":[1,{\"a\":true,\"z\":null}],\"c\":{},\"d\":[],\"e\":[\"only\"]}", json(value))
        assertEquals("null", json(null))
    }

    @Test fun whatJsonHasNoFormForIsRefused() {
        val refused = listOf<Any>(Double.NaN, Double.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, 'c', Any(),
            mapOf(1 to "one"), listOf(mapOf("a" to java.util.Date(0))))
        for (value in refused) {
            try {
                json(value)
                fail("$value was written")
            } catch (expected: IllegalArgumentException) {
            }
        }
    }

    /** Every character from U+0000 to U+00FF and a few beyond, written and read back. */
    @Test fun stringsReadBackAsTheyWere() {
        val text = buildString {
            for (code in 0..0xFF) append(code.toChar())
            append("今日😀\u2028\u2029\uFEFF")
        }
        val written = json(mapOf("s" to text, text to "key"))
        assertTrue("no raw control character may stay in the text", written.none { it < ' ' })
        assertEquals(mapOf("s" to text, text to "key"), TinyJson.parse(written))
    }
}
