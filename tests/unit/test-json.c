/* SPDX-License-Identifier: MIT */
/* JSON strings and UTF-8 sanitising. */
#include "json.h"

#include <stdlib.h>
#include <string.h>

#include "tap.h"

static void expect_json(const char *in, size_t len, const char *want,
                        const char *name)
{
	struct ga_buf b;

	ga_buf_init(&b);
	ga_json_string(&b, in, len);
	is_str(b.data, want, "json: %s", name);
	ga_buf_finish(&b);
}

static void expect_sanitized(const char *in, size_t len, const char *want,
                             const char *name)
{
	struct ga_buf b;

	ga_buf_init(&b);
	ga_utf8_sanitize(&b, in, len);
	is_str(b.data ? b.data : "", want, "sanitize: %s", name);
	ga_buf_finish(&b);
}

#define FFFD "\xef\xbf\xbd"

int main(void)
{
	struct ga_buf b;
	int first = 1;

	expect_json("", 0, "\"\"", "empty");
	expect_json("plain", 5, "\"plain\"", "plain");
	expect_json("a\"b\\c", 5, "\"a\\\"b\\\\c\"", "quote and backslash");
	expect_json("\n\r\t", 3, "\"\\n\\r\\t\"", "short escapes");
	expect_json("\x01\x1b\x1f\x7f", 4, "\"\\u0001\\u001b\\u001f\\u007f\"",
	            "control characters");
	expect_json("a\0b", 3, "\"a\\u0000b\"", "NUL inside");
	expect_json("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9,
	            "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"",
	            "valid 2, 3 and 4 byte sequences");
	expect_json("a\xff"
	            "b",
	            3, "\"a" FFFD "b\"", "invalid byte");
	expect_json("\xc3", 1, "\"" FFFD "\"", "truncated sequence at end");
	expect_json("\xe2\x82", 2, "\"" FFFD FFFD "\"", "truncated 3-byte");
	expect_json("\xc0\xaf", 2, "\"" FFFD FFFD "\"", "overlong 2-byte");
	expect_json("\xe0\x80\xaf", 3, "\"" FFFD FFFD FFFD "\"",
	            "overlong 3-byte");
	expect_json("\xed\xa0\x80", 3, "\"" FFFD FFFD FFFD "\"", "surrogate");
	expect_json("\xf4\x90\x80\x80", 4, "\"" FFFD FFFD FFFD FFFD "\"",
	            "past U+10FFFF");
	expect_json("\x80x", 2, "\"" FFFD "x\"", "lone continuation byte");
	expect_json("\xc3\"", 2, "\"" FFFD "\\\"\"",
	            "cut sequence before a quote");

	ga_buf_init(&b);
	ga_json_str(&b, NULL);
	ga_buf_putc(&b, ' ');
	ga_json_str(&b, "x");
	is_str(b.data, "null \"x\"", "json_str: NULL is null");
	ga_buf_reset(&b);
	ga_buf_putc(&b, '{');
	ga_json_key(&b, &first, "a");
	ga_buf_putc(&b, '1');
	ga_json_key(&b, &first, "b");
	ga_buf_putc(&b, '2');
	ga_buf_putc(&b, '}');
	is_str(b.data, "{\"a\":1,\"b\":2}", "json_key: commas");
	ga_buf_finish(&b);

	expect_sanitized("a\tb\nc\rd\x01\x7f"
	                 "e",
	                 10, "a\tb\ncde",
	                 "controls dropped except tab and newline");
	expect_sanitized("x\xffy\0z", 5, "x" FFFD "yz", "invalid and NUL");

	is_int(ga_utf8_seq_len((const unsigned char *)"\xe2\x82\xac", 3), 3,
	       "seq_len 3");
	is_int(ga_utf8_seq_len((const unsigned char *)"\xe2\x82\xac", 2), 0,
	       "seq_len: not enough bytes");
	is_int(ga_utf8_seq_len((const unsigned char *)"\xf5\x80\x80\x80", 4), 0,
	       "seq_len: F5 lead byte");
	return tap_done();
}
