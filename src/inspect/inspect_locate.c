/* inspect's locators for controls a name alone does not reach
 * (docs/cli.md#inspect): the shortest one that finds the control and no
 * other, each candidate checked with the finder the steps use
 * (ksr_atspi_locate), so a line printed here never reaches another control. */
#include "ksr/inspect.h"
#include "ksr/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A name usable as an exact locator value: not blank, not written /like this/. */
static char *exact_name(const char *name)
{
	char *dn = ksr_atspi_name_display(name);
	size_t n = dn ? strlen(dn) : 0;
	if (!n || (n >= 2 && dn[0] == '/' && dn[n - 1] == '/')) {
		free(dn);
		return NULL;
	}
	return dn;
}

const char *ksr_inspect_reads(const ksr_atspi_tree *t, size_t i)
{
	const ksr_atspi_node *n = &t->nodes[i];
	if (n->ifaces & KSR_ATSPI_IF_TEXT)
		return "text";
	if (n->ifaces & KSR_ATSPI_IF_VALUE)
		return "value";
	if (n->name && *n->name && n->role &&
	    (ksr_atspi_role_equal("label", n->role) || ksr_atspi_role_equal("static", n->role)))
		return "name";
	return NULL;
}

/* The nearest ancestor whose role says something (a scroll pane, a list, a
 * dialog: not a filler or a panel); its role or NULL. */
static const char *telling_ancestor_role(const ksr_atspi_tree *t, size_t i)
{
	for (int k = t->nodes[i].parent; k > 0; k = t->nodes[k].parent) {
		const char *r = t->nodes[k].role;
		if (r && !ksr_atspi_role_equal("filler", r) && !ksr_atspi_role_equal("panel", r))
			return ksr_atspi_role_equal("frame", r) ? NULL : r;
	}
	return NULL;
}

/* The nearest ancestor with a usable name (below the application). */
static int named_ancestor(const ksr_atspi_tree *t, size_t i)
{
	for (int k = t->nodes[i].parent; k > 0; k = t->nodes[k].parent) {
		char *dn = exact_name(t->nodes[k].name);
		free(dn);
		if (dn)
			return k;
	}
	return -1;
}

typedef struct cand {
	const char *name, *label, *in_name; /* display names, or NULL */
	const char *role;
	const char *in_role; /* in: {role: ...} */
	int nth;
} cand;

/* Whether c finds node i alone: it is the one picked and, without nth, the only one. */
static bool finds_alone(ksr_atspi *a, const ksr_atspi_app *app, const ksr_atspi_tree *t, size_t i,
                        const cand *c, ksr_deadline d)
{
	ksr_name_match name = {.text = (char *)c->name}, label = {.text = (char *)c->label},
	               in = {.text = (char *)c->in_name};
	ksr_atspi_locator l = {.name = &name,
	                       .role = c->role,
	                       .label = &label,
	                       .in = c->in_name || c->in_role,
	                       .in_name = &in,
	                       .in_role = c->in_role,
	                       .nth = c->nth,
	                       .hidden_ok = !ksr_atspi_tree_showing(t, i)};
	ksr_atspi_located f;
	if (ksr_atspi_locate(a, app, t, &l, d, &f) < 0 || f.index != (int)i)
		return false;
	return c->nth > 0 || f.matches == 1;
}

static void entry(ksr_strbuf *b, bool *first, const char *key, const char *value)
{
	char *v = ksr_inspect_yaml_scalar(value);
	ksr_strbuf_addf(b, "%s%s: %s", *first ? "" : ", ", key, v);
	*first = false;
	free(v);
}

static char *cand_yaml(const cand *c)
{
	ksr_strbuf b = {0};
	bool first = true;
	ksr_strbuf_add(&b, "{");
	if (c->name)
		entry(&b, &first, "name", c->name);
	if (c->role)
		entry(&b, &first, "role", c->role);
	if (c->label)
		entry(&b, &first, "label", c->label);
	if (c->in_name)
		entry(&b, &first, "in", c->in_name);
	if (c->in_role) {
		char *v = ksr_inspect_yaml_scalar(c->in_role);
		ksr_strbuf_addf(&b, "%sin: {role: %s}", first ? "" : ", ", v);
		first = false;
		free(v);
	}
	if (c->nth)
		ksr_strbuf_addf(&b, "%snth: %d", first ? "" : ", ", c->nth);
	ksr_strbuf_add(&b, "}");
	return ksr_strbuf_take(&b);
}

/* Node i's place (1-based) among the controls c fits, in reading order; 0
 * when it is not among the first 20. */
static int place(ksr_atspi *a, const ksr_atspi_app *app, const ksr_atspi_tree *t, size_t i, cand c,
                 ksr_deadline d)
{
	for (c.nth = 1; c.nth <= 20 && !ksr_deadline_passed(d); c.nth++)
		if (finds_alone(a, app, t, i, &c, d))
			return c.nth;
	return 0;
}

char *ksr_inspect_locator(ksr_atspi *a, const ksr_atspi_app *app, const ksr_atspi_tree *t,
                          const int *order, size_t i, ksr_deadline d)
{
	const ksr_atspi_node *n = &t->nodes[i];
	int lab = ksr_atspi_label_of(a, app, t, order, i, d);
	int anc = named_ancestor(t, i);
	char *name = exact_name(n->name);
	char *label = lab >= 0 ? exact_name(t->nodes[lab].name) : NULL;
	char *in = anc >= 0 ? exact_name(t->nodes[anc].name) : NULL;
	const char *role = n->role;
	const char *in_role = telling_ancestor_role(t, i);
	/* Shortest first; a try whose parts are missing is passed over. */
	const cand tries[] = {
	        {.label = label},
	        {.label = label, .role = role},
	        {.in_name = in, .role = role},
	        {.name = name, .in_name = in},
	        {.name = name, .role = role, .in_name = in},
	        {.role = role, .in_role = in_role},
	};
	const bool have[] = {label, label, in, name && in, name && in, role && in_role};
	char *out = NULL;
	for (size_t k = 0; k < sizeof tries / sizeof *tries && !out; k++)
		if (have[k] && finds_alone(a, app, t, i, &tries[k], d))
			out = cand_yaml(&tries[k]);
	/* Its place among those of its role (within the named ancestor first). */
	cand by_place[] = {{.in_name = in, .role = role}, {.role = role}};
	for (size_t k = in ? 0 : 1; k < 2 && !out && role; k++) {
		by_place[k].nth = place(a, app, t, i, by_place[k], d);
		if (by_place[k].nth)
			out = cand_yaml(&by_place[k]);
	}
	free(name);
	free(label);
	free(in);
	return out;
}
