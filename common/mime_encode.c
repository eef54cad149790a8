/* SPDX-License-Identifier: MIT */
/* The encoders of a message: base64, quoted-printable, header text as
 * RFC 2047 encoded-words, addresses and the Message-ID (mime.h). */
#include "mime_private.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

bool ga_mime_address_ok(const char *addr)
{
	const char *at = NULL;
	size_t n = 0;

	if (!addr)
		return false;
	for (const char *c = addr; *c; c++, n++) {
		unsigned char u = (unsigned char)*c;

		if (n >= 254 || u <= 0x20 || u >= 0x7f)
			return false;
		if (strchr("<>()[]\\,;:\"", u))
			return false;
		if (u == '@') {
			if (at)
				return false;
			at = c;
		}
	}
	/* local@domain with both parts present and a dot-free or dotted
	 * domain that does not start or end with a dot. */
	return n >= 3 && at && at != addr && at[1] && at[1] != '.' &&
	       addr[n - 1] != '.';
}

static const char b64[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void b64_chunk(struct ga_buf *out, const unsigned char *p, size_t n)
{
	char q[4];

	q[0] = b64[p[0] >> 2];
	q[1] = b64[((p[0] & 3) << 4) | (n > 1 ? p[1] >> 4 : 0)];
	q[2] = n > 1 ? b64[((p[1] & 15) << 2) | (n > 2 ? p[2] >> 6 : 0)] : '=';
	q[3] = n > 2 ? b64[p[2] & 63] : '=';
	ga_buf_append(out, q, 4);
}

void ga_mime_base64(struct ga_buf *out, const void *data, size_t len)
{
	const unsigned char *p = data;

	/* 57 input bytes make exactly 76 characters: RFC 2045 section 6.8
	 * "no more than 76 characters" per line. */
	for (size_t i = 0; i < len; i += 57) {
		size_t line = len - i < 57 ? len - i : 57;

		for (size_t j = 0; j < line; j += 3)
			b64_chunk(out, p + i + j, line - j < 3 ? line - j : 3);
		ga_buf_puts(out, "\r\n");
	}
}

void ga_mime_qp(struct ga_buf *out, const char *s, size_t len)
{
	size_t col = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		char enc[4];
		size_t w;
		bool at_eol = i + 1 == len || s[i + 1] == '\n';

		if (c == '\n') {
			ga_buf_puts(out, "\r\n");
			col = 0;
			continue;
		}
		/* RFC 2045 6.7 rules 2-3: printable ASCII except '=' goes
		 * literally; a space or tab at the end of a line must be
		 * encoded, or transports may strip it.  A leading '.' or
		 * "From " would also be safe here: libcurl dot-stuffs. */
		if ((c >= 33 && c <= 126 && c != '=') ||
		    ((c == ' ' || c == '\t') && !at_eol)) {
			enc[0] = (char)c;
			w = 1;
		} else {
			snprintf(enc, sizeof(enc), "=%02X", c);
			w = 3;
		}
		/* Soft line break (rule 5): at most 76 characters including
		 * the trailing '='. */
		if (col + w > 75) {
			ga_buf_puts(out, "=\r\n");
			col = 0;
		}
		ga_buf_append(out, enc, w);
		col += w;
	}
	if (len && s[len - 1] != '\n')
		ga_buf_puts(out, "\r\n");
}

/* Length of S cut to at most MAX bytes on a UTF-8 character boundary. */
size_t ga_mime_utf8_cut(const char *s, size_t len, size_t max)
{
	size_t i = 0;

	while (i < len) {
		size_t n = ga_utf8_seq_len((const unsigned char *)s + i,
		                           len - i);

		if (n == 0)
			n = 1;
		if (i + n > max)
			break;
		i += n;
	}
	return i;
}

void ga_mime_header_text(struct ga_buf *out, const char *s, size_t max,
                         size_t start)
{
	struct ga_buf clean;
	bool ascii = true;
	size_t len;

	ga_buf_init(&clean);
	/* Control characters (CR and LF above all: a job name carrying
	 * "\r\nBcc: x" must not start a header) become spaces; invalid
	 * UTF-8 becomes U+FFFD so the encoded-words are valid. */
	for (const unsigned char *c = (const unsigned char *)(s ? s : "");
	     *c;) {
		size_t n = ga_utf8_seq_len(c, strlen((const char *)c));

		if (*c < 0x20 || *c == 0x7f) {
			ga_buf_putc(&clean, ' ');
			c++;
		} else if (n == 0) {
			ga_buf_puts(&clean, "\xef\xbf\xbd");
			ascii = false;
			c++;
		} else {
			if (n > 1)
				ascii = false;
			ga_buf_append(&clean, c, n);
			c += n;
		}
	}
	len = clean.data ? ga_mime_utf8_cut(clean.data, clean.len, max) : 0;
	/* "=?" in plain text would read as the start of an encoded-word
	 * (RFC 2047 section 6.1): encode such values too. */
	if (ascii && len && strstr(clean.data, "=?"))
		ascii = false;
	if (ascii) {
		/* Fold before a space when the line would pass 78 characters
		 * (RFC 5322 section 2.2.3: the space starts the next line). */
		size_t col = start, i = 0;

		while (i < len) {
			size_t w = 1;

			while (i + w < len && clean.data[i + w] != ' ')
				w++;
			if (i && clean.data[i] == ' ' && col + w > 78) {
				ga_buf_puts(out, "\r\n");
				col = 0;
			}
			ga_buf_append(out, clean.data + i, w);
			col += w;
			i += w;
		}
	} else {
		/* RFC 2047 section 2: an encoded-word is at most 75
		 * characters; "=?UTF-8?B?" + "?=" is 12, leaving 63 for
		 * base64, i.e. 45 input bytes, cut on character boundaries
		 * (section 5: a word must hold whole characters). */
		size_t i = 0, col = start;

		while (i < len) {
			/* Fill the rest of a 78-character line (RFC 5322
			 * section 2.1.1) without exceeding 75 per word. */
			size_t room = col + 12 + 4 < 78
			                      ? (78 - col - 12) / 4 * 3
			                      : 3;
			size_t n = ga_mime_utf8_cut(clean.data + i, len - i,
			                            room < 45 ? room : 45);
			struct ga_buf w;

			if (n == 0)
				n = ga_utf8_seq_len(
				        (const unsigned char *)clean.data + i,
				        len - i);
			if (n == 0)
				n = 1;
			ga_buf_init(&w);
			for (size_t j = 0; j < n; j += 3)
				b64_chunk(&w,
				          (const unsigned char *)clean.data +
				                  i + j,
				          n - j < 3 ? n - j : 3);
			if (i) {
				ga_buf_puts(out, "\r\n ");
				col = 1;
			}
			ga_buf_puts(out, "=?UTF-8?B?");
			ga_buf_append(out, w.data, w.len);
			ga_buf_puts(out, "?=");
			ga_buf_finish(&w);
			i += n;
			col = 1; /* the next word goes on a folded line */
		}
	}
	ga_buf_finish(&clean);
}

void ga_mime_message_id(const char *job, const char *claim, const char *from,
                        char *out, size_t size)
{
	const char *at = from ? strrchr(from, '@') : NULL;
	char jb[64], dom[128];
	size_t k;

	ga_safe_copy(jb, sizeof(jb), job ? job : "0", "_", '-');
	k = ga_safe_copy(dom, sizeof(dom), at ? at + 1 : "localhost", ".-",
	                 '\0');
	snprintf(out, size, "<gpualert.%s.%016" PRIx64 "@%s>", jb,
	         ga_fnv1a_str(GA_FNV1A_INIT, claim), k ? dom : "localhost");
}
