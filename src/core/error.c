/* Error values and allocation helpers. */
#include "ksr/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void vset(ksr_err *err, int line, int col, const char *fmt, va_list ap)
{
	if (!err)
		return;
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	err->line = line;
	err->col = col;
}

int ksr_err_set(ksr_err *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vset(err, 0, 0, fmt, ap);
	va_end(ap);
	return -1;
}

int ksr_err_errno(ksr_err *err, const char *what)
{
	return ksr_err_set(err, "%s: %s", what, strerror(errno));
}

void ksr_err_clear(ksr_err *err)
{
	if (err)
		memset(err, 0, sizeof *err);
}

void ksr_errlist_add(ksr_errlist *l, int line, int col, const char *fmt, ...)
{
	if (l->len == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 8;
		l->items = ksr_xrealloc(l->items, l->cap * sizeof *l->items);
	}
	va_list ap;
	va_start(ap, fmt);
	vset(&l->items[l->len++], line, col, fmt, ap);
	va_end(ap);
}

void ksr_errlist_free(ksr_errlist *l)
{
	if (!l)
		return;
	free(l->items);
	memset(l, 0, sizeof *l);
}

static void *check_alloc(void *p)
{
	if (!p) {
		/* Nothing sensible is left to do; the process cannot write a report. */
		fputs("kasm-session-runtime: out of memory\n", stderr);
		abort();
	}
	return p;
}

void *ksr_xmalloc(size_t n)
{
	return check_alloc(malloc(n ? n : 1));
}

void *ksr_xcalloc(size_t n, size_t size)
{
	return check_alloc(calloc(n ? n : 1, size ? size : 1));
}

void *ksr_xrealloc(void *p, size_t n)
{
	return check_alloc(realloc(p, n ? n : 1));
}

char *ksr_xstrdup(const char *s)
{
	return check_alloc(strdup(s ? s : ""));
}

char *ksr_xstrndup(const char *s, size_t n)
{
	return check_alloc(strndup(s ? s : "", n));
}

char *ksr_xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *out = NULL;
	va_start(ap, fmt);
	int r = vasprintf(&out, fmt, ap);
	va_end(ap);
	if (r < 0)
		out = NULL;
	return check_alloc(out);
}

static bool same_char(char a, char b, bool fold_case)
{
	return fold_case ? (a | 0x20) == (b | 0x20) : a == b;
}

size_t ksr_edit_distance(const char *a, const char *b, bool fold_case)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64)
		return 99;
	size_t row[65];
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + !same_char(a[i - 1], b[j - 1], fold_case);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}
