/* Errors are values: a message naming the cause and, where there is one, the
 * scenario position (line/column, 1-based; 0 = none). */
#ifndef KSR_ERROR_H
#define KSR_ERROR_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#define KSR_ERR_MSG_MAX 512

typedef struct ksr_err {
	char msg[KSR_ERR_MSG_MAX];
	int line;
	int col;
} ksr_err;

/* Set err (NULL-safe) and return -1, so callers can write `return ksr_err_set(...)`. */
int ksr_err_set(ksr_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int ksr_err_errno(ksr_err *err, const char *what); /* "what: strerror(errno)" */
void ksr_err_clear(ksr_err *err);

/* A list of errors, for the loader, which reports every rejection, not only the first. */
typedef struct ksr_errlist {
	ksr_err *items;
	size_t len, cap;
} ksr_errlist;

void ksr_errlist_add(ksr_errlist *l, int line, int col, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
void ksr_errlist_free(ksr_errlist *l);

/* Small allocation helpers that abort on out-of-memory (the runtime cannot
 * write a trustworthy report without memory, and these keep call sites short). */
void *ksr_xmalloc(size_t n);
void *ksr_xcalloc(size_t n, size_t size);
void *ksr_xrealloc(void *p, size_t n);
char *ksr_xstrdup(const char *s);
char *ksr_xstrndup(const char *s, size_t n);
char *ksr_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Levenshtein distance for "did you mean" (case-insensitive when fold_case);
 * strings over 64 bytes are "far" (99). */
size_t ksr_edit_distance(const char *a, const char *b, bool fold_case);

#endif
