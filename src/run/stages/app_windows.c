/* Near misses and quoted titles for the app wait's reasons (app_windows.h). */
#include "run/stages/app_windows.h"

#include <ctype.h>
#include <strings.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/error.h"

/* Surrounding whitespace off (ASCII, and U+00A0 which reads as a space). */
static char *trimmed(const char *s)
{
	const unsigned char *b = (const unsigned char *)s, *e = b + strlen(s);
	for (;;) {
		if (b < e && isspace(*b))
			b++;
		else if (e - b >= 2 && b[0] == 0xc2 && b[1] == 0xa0)
			b += 2;
		else
			break;
	}
	for (;;) {
		if (e > b && isspace(e[-1]))
			e--;
		else if (e - b >= 2 && e[-2] == 0xc2 && e[-1] == 0xa0)
			e -= 2;
		else
			break;
	}
	return ksr_xstrndup((const char *)b, (size_t)(e - b));
}

static bool matches_folded(const ksr_pattern *want, const char *title)
{
	char *src = ksr_xasprintf("(?i)%s", ksr_pattern_source(want));
	ksr_err err = {0};
	ksr_pattern *p = ksr_pattern_compile(src, &err);
	free(src);
	bool ok = p && ksr_pattern_match(p, title);
	ksr_pattern_free(p);
	return ok;
}

/* The text a pattern stands for when it is a plain title with at most
 * anchors, (?i) and escaped punctuation ("^RetroArch$" -> "RetroArch");
 * NULL when it uses other regular expression syntax. */
static char *pattern_text(const char *src)
{
	if (strncmp(src, "(?i)", 4) == 0)
		src += 4;
	if (*src == '^')
		src++;
	size_t n = strlen(src);
	if (n && src[n - 1] == '$' && (n < 2 || src[n - 2] != '\\'))
		n--;
	char *out = ksr_xmalloc(n + 1), *o = out;
	for (size_t i = 0; i < n; i++) {
		char c = src[i];
		if (c == '\\' && i + 1 < n && ispunct((unsigned char)src[i + 1])) {
			*o++ = src[++i];
			continue;
		}
		if (strchr("\\*+?[](){}|^$", c)) {
			free(out);
			return NULL;
		}
		*o++ = c;
	}
	*o = '\0';
	return out;
}

static bool starts_folded(const char *s, const char *prefix)
{
	return strncasecmp(s, prefix, strlen(prefix)) == 0;
}

/* A few edits (a quarter of the shorter, at least 1, at most 3), or one
 * starts the other (at least 3 characters of it), case ignored. */
static bool close_text(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), shorter = la < lb ? la : lb;
	if (shorter >= 3 && (starts_folded(a, b) || starts_folded(b, a)))
		return true;
	size_t allowed = shorter / 4;
	allowed = allowed < 1 ? 1 : allowed > 3 ? 3 : allowed;
	return shorter >= 3 && ksr_edit_distance(a, b, true) <= allowed;
}

static bool close_title(const ksr_pattern *want, const char *title)
{
	char *text = pattern_text(ksr_pattern_source(want));
	if (!text)
		return false;
	char *t = trimmed(title), *w = trimmed(text);
	bool close = *w && *t && close_text(w, t);
	free(t);
	free(w);
	free(text);
	return close;
}

ksr_near_miss ksr_title_near_miss(const ksr_pattern *want, const char *title)
{
	if (!want || !title || !*title || ksr_pattern_match(want, title))
		return KSR_NEAR_NONE;
	char *t = trimmed(title);
	ksr_near_miss k = KSR_NEAR_NONE;
	if (matches_folded(want, title))
		k = KSR_NEAR_CASE;
	else if (strcmp(t, title) != 0 && ksr_pattern_match(want, t))
		k = KSR_NEAR_SPACE;
	else if (strcmp(t, title) != 0 && matches_folded(want, t))
		k = KSR_NEAR_CASE_SPACE;
	else if (close_title(want, title))
		k = KSR_NEAR_CLOSE;
	free(t);
	return k;
}

const char *ksr_near_miss_mark(ksr_near_miss k)
{
	switch (k) {
	case KSR_NEAR_CASE:
		return "case";
	case KSR_NEAR_SPACE:
		return "whitespace";
	case KSR_NEAR_CASE_SPACE:
		return "case and whitespace";
	case KSR_NEAR_CLOSE:
		return "close title";
	default:
		return "";
	}
}

void ksr_quote_title(ksr_strbuf *b, const char *s, size_t max)
{
	ksr_strbuf_add_quoted(b, s, max);
}
