/* A growable, always NUL-terminated string for building reports, lines and
 * documents. Allocation failure aborts, as with the ksr_x* helpers. */
#ifndef KSR_STRBUF_H
#define KSR_STRBUF_H

#include <stddef.h>

typedef struct ksr_strbuf {
	char *p; /* NULL until something is added */
	size_t len, cap;
} ksr_strbuf;

void ksr_strbuf_addn(ksr_strbuf *b, const void *s, size_t n);
void ksr_strbuf_add(ksr_strbuf *b, const char *s); /* NULL adds nothing */
void ksr_strbuf_addf(ksr_strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s as HTML text or attribute value: & < > " ' as entities, control
 * characters but newline and tab as spaces (NULL adds nothing). */
void ksr_strbuf_add_html(ksr_strbuf *b, const char *s);
/* s as a relative link target: bytes outside [A-Za-z0-9._~-] (and '/' unless
 * subfolders) percent-encoded, so no scheme (javascript:) can form; leading
 * '/' dropped, so it never leaves the page's folder by an absolute path. */
void ksr_strbuf_add_url(ksr_strbuf *b, const char *s, int subfolders);
/* s between double quotes as data: '"' and '\\' escaped, control characters
 * as \xNN, cut at max bytes (whole UTF-8 sequences) with "..." (NULL: ""). */
void ksr_strbuf_add_quoted(ksr_strbuf *b, const char *s, size_t max);
/* The string (never NULL: "" when empty); the buffer is reset and the caller frees. */
char *ksr_strbuf_take(ksr_strbuf *b);
void ksr_strbuf_free(ksr_strbuf *b); /* NULL-safe */

#endif
