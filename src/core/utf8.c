/* Lossless repair of invalid UTF-8 (ksr/utf8.h). */
#include "ksr/utf8.h"

#include <stdio.h>
#include <string.h>

#include "ksr/error.h"

/* Table 3-7 of the Unicode standard (well-formed byte sequences): the range
 * of the second byte depends on the first, which rules out overlong forms,
 * surrogates and code points past U+10FFFF. */
size_t ksr_utf8_seq_len(const unsigned char *s)
{
	unsigned char c = s[0];
	if (c < 0x80)
		return 1;
	size_t len;
	unsigned char lo = 0x80, hi = 0xBF;
	if (c >= 0xC2 && c <= 0xDF)
		len = 2;
	else if (c >= 0xE0 && c <= 0xEF) {
		len = 3;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		len = 4;
		if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
	} else
		return 0;
	if (s[1] < lo || s[1] > hi)
		return 0; /* also a NUL: the sequence is cut */
	for (size_t i = 2; i < len; i++)
		if ((s[i] & 0xC0) != 0x80)
			return 0;
	return len;
}

bool ksr_utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (p && *p) {
		size_t n = ksr_utf8_seq_len(p);
		if (!n)
			return false;
		p += n;
	}
	return true;
}

char *ksr_utf8_repair(const char *s)
{
	if (!s)
		return NULL;
	if (ksr_utf8_valid(s))
		return ksr_xstrdup(s);
	size_t n = strlen(s);
	char *out = ksr_xmalloc(4 * n + 1), *o = out;
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		size_t len = ksr_utf8_seq_len(p);
		if (!len) {
			snprintf(o, 5, "\\x%02x", *p);
			o += 4;
			p++;
			continue;
		}
		memcpy(o, p, len);
		o += len;
		p += len;
	}
	*o = '\0';
	return out;
}

/* The escape of one byte or code point that must not reach a terminal raw. */
static size_t control_escape(const unsigned char *p, size_t len, char out[8])
{
	if (len == 0)
		return (size_t)snprintf(out, 8, "\\x%02x", *p);
	if (len == 1 && (*p < 0x20 || *p == 0x7f)) {
		const char *named = *p == '\n'   ? "\\n"
		                    : *p == '\r' ? "\\r"
		                    : *p == '\t' ? "\\t"
		                                 : NULL;
		if (named)
			return (size_t)snprintf(out, 8, "%s", named);
		return (size_t)snprintf(out, 8, "\\x%02x", *p);
	}
	if (len == 2 && p[0] == 0xC2 && p[1] < 0xA0) /* U+0080..U+009F: C1 controls */
		return (size_t)snprintf(out, 8, "\\u%04x", p[1]);
	return 0;
}

char *ksr_utf8_escape_controls(const char *s)
{
	if (!s)
		return NULL;
	size_t n = strlen(s);
	char *out = ksr_xmalloc(6 * n + 1), *o = out; /* "\u0085" is 6 for 2 bytes */
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		size_t len = ksr_utf8_seq_len(p);
		char esc[8];
		size_t e = control_escape(p, len, esc);
		if (e) {
			memcpy(o, esc, e);
			o += e;
		} else {
			memcpy(o, p, len);
			o += len;
		}
		p += len ? len : 1;
	}
	*o = '\0';
	return out;
}

bool ksr_utf8_has_controls(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
		size_t len = ksr_utf8_seq_len(p);
		char esc[8];
		if (control_escape(p, len, esc))
			return true;
		p += len;
	}
	return false;
}
