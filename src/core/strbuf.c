/* The growable string shared by every renderer (report.md, watch lines,
 * JUnit XML, ${VAR} expansion, HTTP replies). */
#include "ksr/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/error.h"
#include "ksr/utf8.h"

void ksr_strbuf_addn(ksr_strbuf *b, const void *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->p = ksr_xrealloc(b->p, b->cap);
	}
	if (n)
		memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void ksr_strbuf_add(ksr_strbuf *b, const char *s)
{
	if (s)
		ksr_strbuf_addn(b, s, strlen(s));
}

void ksr_strbuf_addf(ksr_strbuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = NULL;
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		abort(); /* out of memory, as in ksr_xasprintf */
	ksr_strbuf_addn(b, s, (size_t)n);
	free(s);
}

char *ksr_strbuf_take(ksr_strbuf *b)
{
	char *p = b->p ? b->p : ksr_xstrdup("");
	b->p = NULL;
	b->len = b->cap = 0;
	return p;
}

void ksr_strbuf_free(ksr_strbuf *b)
{
	if (!b)
		return;
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

void ksr_strbuf_add_html(ksr_strbuf *b, const char *s)
{
	for (const char *c = s ? s : ""; *c; c++) {
		size_t len = ksr_utf8_seq_len((const unsigned char *)c);
		if (len != 1) { /* a bad byte as text, lossless (ksr/utf8.h) */
			if (len == 0)
				ksr_strbuf_addf(b, "\\x%02x", (unsigned char)*c);
			else
				ksr_strbuf_addn(b, c, len);
			c += len ? len - 1 : 0;
			continue;
		}
		switch (*c) {
		case '&':
			ksr_strbuf_add(b, "&amp;");
			break;
		case '<':
			ksr_strbuf_add(b, "&lt;");
			break;
		case '>':
			ksr_strbuf_add(b, "&gt;");
			break;
		case '"':
			ksr_strbuf_add(b, "&quot;");
			break;
		case '\'':
			ksr_strbuf_add(b, "&#39;");
			break;
		default:
			if (((unsigned char)*c < 0x20 && *c != '\n' && *c != '\t') || *c == 0x7f)
				ksr_strbuf_add(b, " ");
			else
				ksr_strbuf_addn(b, c, 1);
		}
	}
}

void ksr_strbuf_add_url(ksr_strbuf *b, const char *s, int subfolders)
{
	const unsigned char *c = (const unsigned char *)(s ? s : "");
	while (*c == '/')
		c++;
	for (; *c; c++) {
		if ((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
		    (*c >= '0' && *c <= '9') || strchr("._-~", *c) || (subfolders && *c == '/'))
			ksr_strbuf_addn(b, (const char *)c, 1);
		else
			ksr_strbuf_addf(b, "%%%02X", *c);
	}
}

/* Bytes of the UTF-8 character starting at p (1 for a stray byte). */
static size_t char_len(const unsigned char *p)
{
	size_t n = *p >= 0xf0 ? 4 : *p >= 0xe0 ? 3 : *p >= 0xc0 ? 2 : 1;
	for (size_t i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 1;
	return n;
}

void ksr_strbuf_add_quoted(ksr_strbuf *b, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t used = 0;
	ksr_strbuf_addn(b, "\"", 1);
	while (*p) {
		size_t n = char_len(p);
		if (used + n > max) {
			ksr_strbuf_addn(b, "...", 3);
			break;
		}
		if (*p == '"' || *p == '\\')
			ksr_strbuf_addf(b, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			ksr_strbuf_addf(b, "\\x%02x", *p);
		else
			ksr_strbuf_addn(b, p, n);
		used += n;
		p += n;
	}
	ksr_strbuf_addn(b, "\"", 1);
}
