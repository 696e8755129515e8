/* Matching controls as people read them, and the near misses a failed
 * search reports (docs/accessibility.md, "Names" and "Near misses"). */
#include "backend/atspi/priv.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/strbuf.h"

#define NEAR_MAX_SCAN 5000

static bool is_ws(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

char *ksr_atspi_name_display(const char *name)
{
	if (!name)
		return NULL;
	char *out = ksr_xmalloc(strlen(name) + 1), *o = out;
	const unsigned char *p = (const unsigned char *)name;
	/* U+00A0 (no-break space, C2 A0) is whitespace to a reader too. */
	for (bool gap = false; *p;) {
		size_t w = is_ws(*p) ? 1 : (p[0] == 0xc2 && p[1] == 0xa0) ? 2 : 0;
		if (w) {
			gap = o != out;
			p += w;
			continue;
		}
		if (gap)
			*o++ = ' ';
		gap = false;
		*o++ = (char)*p++;
	}
	*o = '\0';
	return out;
}

static bool role_ok(const ksr_atspi_node *n, const char *role)
{
	return !role || ksr_atspi_role_equal(role, n->role) ||
	       ksr_atspi_role_equal(role, n->toolkit_role);
}

/* A written exact name compares normalised too ("Save" finds "Save      "). */
static bool loose_test(const ksr_name_match *m, const char *name)
{
	char *dn = ksr_atspi_name_display(name);
	bool ok;
	if (m->re) {
		ok = ksr_pattern_match(m->re, dn);
	} else {
		char *dm = ksr_atspi_name_display(m->text);
		ok = strcmp(dm, dn) == 0;
		free(dm);
	}
	free(dn);
	return ok;
}

int ksr_atspi_node_match_kind(const ksr_atspi_node *n, const ksr_name_match *name, const char *role)
{
	if (!n->name || !name || !name->text || !role_ok(n, role))
		return 0;
	if (ksr_name_match_test(name, n->name))
		return 2;
	return loose_test(name, n->name) ? 1 : 0;
}

/* ---- near misses ---- */

typedef struct cand {
	int idx;
	size_t dist;
	int same_role; /* 0: same role (or none asked), 1: another */
} cand;

static int cand_cmp(const void *a, const void *b)
{
	const cand *x = a, *y = b;
	if (x->dist != y->dist)
		return x->dist < y->dist ? -1 : 1;
	if (x->same_role != y->same_role)
		return x->same_role - y->same_role;
	return x->idx - y->idx;
}

/* Edits that still read as the same name: a third of it, at least 2. */
static size_t near_limit(size_t len)
{
	return len / 3 > 2 ? len / 3 : 2;
}

size_t ksr_atspi_near_misses(const ksr_atspi_tree *t, const ksr_name_match *name, const char *role,
                             int *out, size_t max)
{
	if (!t || !name || !name->text || !max)
		return 0;
	char *want = ksr_atspi_name_display(name->text);
	size_t limit = near_limit(strlen(want));
	size_t n_nodes = t->len < NEAR_MAX_SCAN ? t->len : NEAR_MAX_SCAN;
	cand *c = ksr_xcalloc(n_nodes ? n_nodes : 1, sizeof *c);
	size_t nc = 0;
	for (size_t i = 1; i < n_nodes; i++) {
		const ksr_atspi_node *nd = &t->nodes[i];
		if (!nd->name || !*nd->name)
			continue;
		bool same = role_ok(nd, role);
		size_t d;
		if (ksr_atspi_node_match_kind(nd, name, NULL) > 0) {
			d = 0; /* the name matches, the role does not */
		} else {
			char *have = ksr_atspi_name_display(nd->name);
			d = ksr_edit_distance(want, have, true);
			if (d == 0)
				d = 1; /* differs only in case: after an exact-role miss */
			free(have);
		}
		if (d <= limit)
			c[nc++] = (cand){.idx = (int)i, .dist = d, .same_role = same ? 0 : 1};
	}
	qsort(c, nc, sizeof *c, cand_cmp);
	size_t n = 0;
	for (size_t i = 0; i < nc && n < max; i++) {
		bool dup = false; /* one line per distinct (name, role) */
		for (size_t k = 0; k < n && !dup; k++) {
			const ksr_atspi_node *a = &t->nodes[out[k]], *b = &t->nodes[c[i].idx];
			dup = !strcmp(a->name, b->name) && ksr_atspi_role_equal(a->role, b->role);
		}
		if (!dup)
			out[n++] = c[i].idx;
	}
	free(c);
	free(want);
	return n;
}

const char *ksr_atspi_near_miss_text(const ksr_atspi_tree *t, const ksr_name_match *name,
                                     const char *role, char *buf, size_t len)
{
	int idx[3];
	size_t n = ksr_atspi_near_misses(t, name, role, idx, 3);
	if (!len)
		return buf;
	buf[0] = '\0';
	if (!n)
		return buf;
	ksr_strbuf s = {0};
	ksr_strbuf_addf(&s, "; closest: ");
	for (size_t i = 0; i < n; i++) {
		const ksr_atspi_node *nd = &t->nodes[idx[i]];
		char *dn = ksr_atspi_name_display(nd->name);
		ksr_strbuf_addf(&s, "%s\"%s\" (%s)", i ? ", " : "", dn, nd->role ? nd->role : "?");
		free(dn);
	}
	char *text = ksr_strbuf_take(&s);
	snprintf(buf, len, "%s", text);
	free(text);
	return buf;
}
