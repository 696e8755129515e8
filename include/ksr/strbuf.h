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
/* The string (never NULL: "" when empty); the buffer is reset and the caller frees. */
char *ksr_strbuf_take(ksr_strbuf *b);
void ksr_strbuf_free(ksr_strbuf *b); /* NULL-safe */

#endif
