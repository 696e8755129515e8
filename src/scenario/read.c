/* Typed readers over the YAML tree: each reports its own error at the node's
 * line:column, so the loader can keep going and report every rejection. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/atspi.h"
#include "ksr/page.h"
#include "scenario/scn_internal.h"

void scn_err(scn_ctx *c, const snode *at, const char *fmt, ...)
{
	char msg[KSR_ERR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	ksr_errlist_add(c->errs, at ? at->line : 0, at ? at->col : 0, "%s", msg);
}

const char *scn_kind_word(const snode *n)
{
	switch (n->kind) {
	case SN_NULL:
		return "nothing";
	case SN_SEQ:
		return "a list";
	case SN_MAP:
		return "a mapping";
	default:
		return "a string";
	}
}

bool scn_is_null(const snode *n)
{
	return !n || n->kind == SN_NULL;
}

bool scn_str(scn_ctx *c, const snode *n, const char *what, bool nonempty, char **out)
{
	if (n->bad)
		return false;
	if (n->kind != SN_SCALAR) {
		scn_err(c, n, "%s: expected a string, got %s", what, scn_kind_word(n));
		return false;
	}
	if (nonempty && !*n->str) {
		scn_err(c, n, "%s: must not be empty", what);
		return false;
	}
	*out = ksr_xstrdup(n->str);
	return true;
}

static bool scalar_number(const snode *n, double *out)
{
	if (n->kind != SN_SCALAR || !n->plain || !*n->str)
		return false;
	char *end;
	double v = strtod(n->str, &end);
	if (*end || !isfinite(v))
		return false;
	*out = v;
	return true;
}

bool scn_num(scn_ctx *c, const snode *n, const char *what, double min, double max, double *out)
{
	double v;
	if (n->bad)
		return false;
	if (!scalar_number(n, &v)) {
		if (n->kind == SN_SCALAR)
			scn_err(c, n, "%s: expected a number, got '%s'", what, n->str);
		else
			scn_err(c, n, "%s: expected a number, got %s", what, scn_kind_word(n));
		return false;
	}
	if (v < min || v > max) {
		if (isinf(max))
			scn_err(c, n, "%s: %g is below %g", what, v, min);
		else
			scn_err(c, n, "%s: %g is outside %g..%g", what, v, min, max);
		return false;
	}
	*out = v;
	return true;
}

bool scn_int(scn_ctx *c, const snode *n, const char *what, int min, int max, int *out)
{
	double v;
	if (!scn_num(c, n, what, min, max, &v))
		return false;
	if (v != floor(v)) {
		scn_err(c, n, "%s: expected a whole number, got '%s'", what, n->str);
		return false;
	}
	*out = (int)v;
	return true;
}

bool scn_bool(scn_ctx *c, const snode *n, const char *what, bool *out)
{
	static const char *const t[] = {"true", "True", "TRUE"}, *const f[] = {"false", "False",
	                                                                       "FALSE"};
	if (n->bad)
		return false;
	for (int i = 0; n->kind == SN_SCALAR && n->plain && i < 3; i++) {
		if (!strcmp(n->str, t[i]) || !strcmp(n->str, f[i])) {
			*out = !strcmp(n->str, t[i]);
			return true;
		}
	}
	if (n->kind == SN_SCALAR)
		scn_err(c, n, "%s: expected true or false, got '%s'", what, n->str);
	else
		scn_err(c, n, "%s: expected true or false, got %s", what, scn_kind_word(n));
	return false;
}

bool scn_pattern(scn_ctx *c, const snode *n, const char *what, ksr_pattern **out)
{
	char *src;
	if (!scn_str(c, n, what, true, &src))
		return false;
	ksr_err err = {0};
	*out = ksr_pattern_compile(src, &err);
	if (!*out)
		scn_err(c, n, "%s: invalid pattern '%s': %s", what, src, err.msg);
	free(src);
	return *out != NULL;
}

bool scn_page_ref(scn_ctx *c, const snode *n, const char *what, char **out)
{
	if (!scn_str(c, n, what, true, out))
		return false;
	ksr_err err = {0};
	if (ksr_page_ref_check(*out, &err) == 0)
		return true;
	scn_err(c, n, "%s: %s", what, err.msg);
	free(*out);
	*out = NULL;
	return false;
}

bool scn_name(scn_ctx *c, const snode *n, const char *what, ksr_name_match *out)
{
	char *src;
	if (!scn_str(c, n, what, true, &src))
		return false;
	ksr_err err = {0};
	int rc = ksr_name_match_parse(out, src, &err);
	if (rc < 0)
		scn_err(c, n, "%s: invalid pattern '%s': %s", what, src, err.msg);
	free(src);
	return rc == 0;
}

bool scn_is_map(scn_ctx *c, const snode *n, const char *what)
{
	if (n->kind == SN_MAP)
		return true;
	if (!n->bad)
		scn_err(c, n, "%s: expected a mapping, got %s", what, scn_kind_word(n));
	return false;
}

bool scn_is_seq(scn_ctx *c, const snode *n, const char *what)
{
	if (n->kind == SN_SEQ)
		return true;
	if (!n->bad)
		scn_err(c, n, "%s: expected a list, got %s", what, scn_kind_word(n));
	return false;
}

static bool fraction(scn_ctx *c, const snode *n, const char *what, double *out)
{
	double v;
	if (!scn_num(c, n, what, -INFINITY, INFINITY, &v))
		return false;
	if (v < 0 || v > 1) {
		scn_err(c, n, "%s: fraction %g is outside 0..1", what, v);
		return false;
	}
	*out = v;
	return true;
}

/* [fx, fy] or "FX FY". A string that is not two numbers is the caller's
 * business (it may be a name), so only call this for a list or for text that
 * starts like a number. */
bool scn_fraction_pair(scn_ctx *c, const snode *n, const char *what, double *fx, double *fy)
{
	if (n->kind == SN_SEQ) {
		if (n->n != 2) {
			scn_err(c, n, "%s: expected two fractions [fx, fy], got %zu items", what,
			        n->n);
			return false;
		}
		bool a = fraction(c, n->kids[0], what, fx), b = fraction(c, n->kids[1], what, fy);
		return a && b;
	}
	if (n->kind != SN_SCALAR || n->bad) {
		if (!n->bad)
			scn_err(c, n, "%s: expected \"FX FY\" or [fx, fy], got %s", what,
			        scn_kind_word(n));
		return false;
	}
	char *e1, *e2 = NULL;
	double x = strtod(n->str, &e1), y = e1 != n->str ? strtod(e1, &e2) : 0;
	if (e1 == n->str || e2 == e1 || e2[strspn(e2, " \t")] || !isfinite(x) || !isfinite(y)) {
		scn_err(c, n, "%s: expected \"FX FY\" (two fractions), got '%s'", what, n->str);
		return false;
	}
	if (x < 0 || x > 1 || y < 0 || y > 1) {
		scn_err(c, n, "%s: fraction %g is outside 0..1", what, x < 0 || x > 1 ? x : y);
		return false;
	}
	*fx = x;
	*fy = y;
	return true;
}

const snode *scn_get(const snode *map, const char *key)
{
	for (size_t i = 0; map && map->kind == SN_MAP && i < map->n; i++)
		if (!sn_key(map, i)->bad && !strcmp(sn_key(map, i)->str, key))
			return sn_val(map, i);
	return NULL;
}

const char *scn_suggest(const char *word, const char *const *cands, size_t n)
{
	const char *best = NULL;
	size_t best_d = 0, len = strlen(word);
	/* Within 2 edits, or a third of the word for long keys; more is noise. */
	size_t limit = len / 3 > 2 ? len / 3 : 2;
	for (size_t i = 0; i < n; i++) {
		size_t d = ksr_edit_distance(word, cands[i], false);
		if (d <= limit && (!best || d < best_d))
			best = cands[i], best_d = d;
	}
	return best;
}

const char *scn_did_you_mean(char *buf, size_t len, const char *word, const char *const *cands,
                             size_t n)
{
	const char *s = scn_suggest(word, cands, n);
	if (s)
		snprintf(buf, len, " (did you mean '%s'?)", s);
	else
		buf[0] = 0;
	return buf;
}

static bool in_list(const char *key, const char *const *allowed)
{
	for (size_t i = 0; allowed[i]; i++)
		if (!strcmp(allowed[i], key))
			return true;
	return false;
}

size_t scn_check_keys(scn_ctx *c, const snode *map, const char *const *allowed, const char *what)
{
	size_t unknown = 0, n = 0;
	while (allowed[n])
		n++;
	for (size_t i = 0; i < map->n; i++) {
		const snode *k = sn_key(map, i);
		if (k->bad || in_list(k->str, allowed))
			continue;
		char hint[128];
		scn_err(c, k, "unknown key '%s' in %s%s", k->str, what,
		        scn_did_you_mean(hint, sizeof hint, k->str, allowed, n));
		unknown++;
	}
	return unknown;
}

bool scn_role(scn_ctx *c, const snode *n, const char *what, char **out)
{
	if (!scn_str(c, n, what, true, out))
		return false;
	if (ksr_atspi_role_known(*out))
		return true;
	size_t nr;
	const char *const *names = ksr_atspi_role_names(&nr, NULL);
	/* "pushbutton", "Push_Button": compared as the matcher does (no case,
	 * '_' and '-' as spaces), so the suggestion is the written word's. */
	char hint[128];
	scn_did_you_mean(hint, sizeof hint, *out, names, nr);
	if (!hint[0]) {
		char *folded = ksr_xstrdup(*out);
		for (char *p = folded; *p; p++)
			*p = *p == '_' || *p == '-' ? ' ' : (char)tolower((unsigned char)*p);
		scn_did_you_mean(hint, sizeof hint, folded, names, nr);
		free(folded);
	}
	scn_err(c, n,
	        "%s: unknown accessibility role '%s'%s (roles are AT-SPI's names: push button, "
	        "check box, toggle button, menu item, text...; docs/accessibility.md#roles)",
	        what, *out, hint);
	free(*out);
	*out = NULL;
	return false;
}

bool scn_state_word(scn_ctx *c, const snode *at, const char *what, const char *word)
{
	if (ksr_atspi_state_index(word) >= 0)
		return true;
	const char *const *names = ksr_atspi_state_names();
	size_t n = 0;
	while (names[n])
		n++;
	char hint[128];
	scn_err(c, at, "%s: unknown accessibility state '%s'%s", what, word,
	        scn_did_you_mean(hint, sizeof hint, word, names, n));
	return false;
}
