/* Locators for controls without a usable name (docs/scenario.md#locators):
 * by the label that labels them (AT-SPI label-for / labelled-by relations,
 * else the first control after the label in reading order), by an ancestor,
 * by their place among the matches. They work on a whole tree (a full
 * walk); only label: asks the app anything more (GetRelationSet, one
 * bounded call a node, of the labels and of the controls that fit). */
#include "backend/atspi/priv.h"

#include <atspi/atspi-constants.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/strbuf.h"

/* Relation questions one locate may ask: a label's relations and those of
 * the controls that fit otherwise; past this the reading order decides. */
#define MAX_RELATION_CALLS 300

static bool has_text(const ksr_name_match *m)
{
	return m && m->text;
}

bool ksr_atspi_locator_simple(const ksr_atspi_locator *l)
{
	return has_text(l->name) && !has_text(l->label) && !l->in && l->nth == 0;
}

static bool role_fits(const ksr_atspi_node *n, const char *role)
{
	return !role || ksr_atspi_role_equal(role, n->role) ||
	       ksr_atspi_role_equal(role, n->toolkit_role);
}

/* The name test of a node: 2 exactly, 1 normalised, 0 not; any name: 2. */
static int name_kind(const ksr_atspi_node *n, const ksr_name_match *m)
{
	if (!has_text(m))
		return 2;
	return ksr_atspi_node_match_kind(n, m, NULL);
}

bool ksr_atspi_locator_fits_place(const ksr_atspi_tree *t, size_t i, const ksr_atspi_locator *l)
{
	if (i == 0 || i >= t->len || !role_fits(&t->nodes[i], l->role))
		return false;
	if (!l->in)
		return true;
	for (int k = t->nodes[i].parent; k > 0; k = t->nodes[k].parent) {
		const ksr_atspi_node *a = &t->nodes[k];
		if (role_fits(a, l->in_role) && name_kind(a, l->in_name) > 0)
			return true;
	}
	return false;
}

int *ksr_atspi_reading_order(const ksr_atspi_tree *t)
{
	size_t n = t->len;
	int *first = ksr_xmalloc((n ? n : 1) * sizeof *first);
	int *next = ksr_xmalloc((n ? n : 1) * sizeof *next);
	int *last = ksr_xmalloc((n ? n : 1) * sizeof *last);
	for (size_t i = 0; i < n; i++)
		first[i] = next[i] = last[i] = -1;
	/* Children in index order: the walk adds a node's children in the app's order. */
	for (size_t i = 1; i < n; i++) {
		int p = t->nodes[i].parent;
		if (p < 0 || (size_t)p >= n)
			continue;
		if (last[p] < 0)
			first[p] = (int)i;
		else
			next[last[p]] = (int)i;
		last[p] = (int)i;
	}
	int *order = ksr_xmalloc((n ? n : 1) * sizeof *order);
	int *stack = ksr_xmalloc((n ? n : 1) * sizeof *stack);
	size_t len = 0, sp = 0;
	if (n)
		stack[sp++] = 0;
	while (sp && len < n) {
		int v = stack[--sp];
		order[len++] = v;
		int kids = 0;
		for (int c = first[v]; c >= 0; c = next[c])
			kids++;
		/* pushed in reverse, so the first child comes out first */
		sp += (size_t)kids;
		int at = (int)sp - 1;
		for (int c = first[v]; c >= 0; c = next[c])
			stack[at--] = c;
	}
	/* Any node the descent missed (a parent not in the tree): at the end, in index order. */
	unsigned char *seen = ksr_xcalloc(n ? n : 1, 1);
	for (size_t k = 0; k < len; k++)
		seen[order[k]] = 1;
	for (size_t i = 0; i < n && len < n; i++)
		if (!seen[i])
			order[len++] = (int)i;
	free(seen);
	free(first);
	free(next);
	free(last);
	free(stack);
	return order;
}

/* ---- relations ---- */

typedef struct rel_ctx {
	ksr_atspi *a;
	const ksr_atspi_app *app;
	const ksr_atspi_tree *t;
	GHashTable *by_path; /* path -> index + 1 */
	ksr_deadline d;
	int calls;
	int unanswered; /* an app that does not answer is not asked on and on */
} rel_ctx;

/* The targets of node i's relations of this type, as tree indices (up to cap);
 * -1 when the app did not answer, else how many. *any: i has such a relation. */
static int relation_targets(rel_ctx *r, size_t i, guint32 type, int *out, int cap, bool *any)
{
	*any = false;
	if (r->calls >= MAX_RELATION_CALLS || r->unanswered >= 3 || ksr_deadline_passed(r->d))
		return -1;
	r->calls++;
	ksr_err err = {0};
	GVariant *v = ksr_atspi_call(r->a->ctx, r->a->conn, r->app->bus, r->t->nodes[i].path,
	                             ATSPI_IFACE_ACCESSIBLE, "GetRelationSet", NULL, "(a(ua(so)))",
	                             r->d, &err);
	if (!v) {
		r->unanswered++;
		return -1;
	}
	GVariantIter *rels = NULL, *targets = NULL;
	guint32 rtype = 0;
	int n = 0;
	g_variant_get(v, "(a(ua(so)))", &rels);
	while (g_variant_iter_next(rels, "(ua(so))", &rtype, &targets)) {
		const char *bus = NULL, *path = NULL;
		while (g_variant_iter_next(targets, "(&s&o)", &bus, &path)) {
			if (rtype != type)
				continue;
			*any = true;
			gpointer hit = strcmp(bus, r->app->bus) == 0
			                       ? g_hash_table_lookup(r->by_path, path)
			                       : NULL;
			if (hit && n < cap)
				out[n++] = GPOINTER_TO_INT(hit) - 1;
		}
		g_variant_iter_free(targets);
	}
	g_variant_iter_free(rels);
	g_variant_unref(v);
	return n;
}

static bool is_label_role(const ksr_atspi_node *n)
{
	return n->role &&
	       (ksr_atspi_role_equal("label", n->role) || ksr_atspi_role_equal("static", n->role) ||
	        ksr_atspi_role_equal("caption", n->role));
}

/* Roles that hold or decorate controls: reading order passes over them. */
static bool is_container_role(const ksr_atspi_node *n)
{
	static const char *const roles[] = {
	        "filler",
	        "panel",
	        "separator",
	        "image",
	        "icon",
	        "heading",
	        "section",
	        "paragraph",
	        "scroll pane",
	        "viewport",
	        "layered pane",
	        "split pane",
	        "tool bar",
	        "status bar",
	        "unknown",
	        "redundant object",
	        "invalid",
	        "frame",
	        "window",
	        "dialog",
	        "menu bar",
	        "grouping",
	        "form",
	        "internal frame",
	        "root pane",
	        "glass pane",
	        "option pane",
	        "desktop frame",
	        "scroll bar",
	        "tool tip",
	        "description list",
	        "block quote",
	        "landmark",
	        "document frame",
	        "page tab list",
	        "page tab",
	        "application",
	};
	if (!n->role)
		return true;
	for (size_t k = 0; k < sizeof roles / sizeof *roles; k++)
		if (ksr_atspi_role_equal(roles[k], n->role))
			return true;
	return false;
}

static bool is_below(const ksr_atspi_tree *t, int node, int ancestor)
{
	for (int k = t->nodes[node].parent; k >= 0; k = t->nodes[k].parent)
		if (k == ancestor)
			return true;
	return false;
}

/* A control a label may label: not a label itself, not a container. */
static bool is_control(const ksr_atspi_node *n)
{
	return !is_label_role(n) && !is_container_role(n);
}

/* Where c lies from label lb as a person reads a form: on its row to its
 * right (the distance), else below it in its column (a larger number), or -1
 * when neither. */
static long read_distance(const ksr_atspi_node *lb, const ksr_atspi_node *c)
{
	int mid = lb->y + lb->h / 2;
	if (c->y <= mid && mid < c->y + c->h && c->x + c->w / 2 >= lb->x + lb->w)
		return c->x > lb->x + lb->w ? (long)(c->x - (lb->x + lb->w)) : 0;
	bool column = c->x < lb->x + lb->w && lb->x < c->x + c->w;
	if (column && c->y >= lb->y + lb->h)
		return 100000L + (c->y - (lb->y + lb->h));
	return -1;
}

/* The top-level (window, dialog) node i is in: positions compare only there,
 * since windows overlap on the screen. */
static int top_level(const ksr_atspi_tree *t, int i)
{
	while (i > 0 && t->nodes[i].parent > 0)
		i = t->nodes[i].parent;
	return i;
}

/* By position: the nearest control on the label's row to its right, else
 * the nearest below it, with no other label nearer in the same way. -2: the
 * label has no position (reading order decides), -1: none. */
static int control_by_position(const ksr_atspi_tree *t, int j)
{
	const ksr_atspi_node *lb = &t->nodes[j];
	if (!lb->has_extents || lb->w <= 0 || lb->h <= 0)
		return -2;
	int best = -1, window = top_level(t, j);
	long best_d = -1, label_d = -1;
	for (size_t c = 1; c < t->len; c++) {
		const ksr_atspi_node *n = &t->nodes[c];
		if ((int)c == j || !n->has_extents || !ksr_atspi_tree_showing(t, c) ||
		    top_level(t, (int)c) != window)
			continue;
		long d = read_distance(lb, n);
		if (d < 0)
			continue;
		if (is_label_role(n) && (label_d < 0 || d < label_d))
			label_d = d;
		else if (is_control(n) && (best_d < 0 || d < best_d))
			best = (int)c, best_d = d;
	}
	return best >= 0 && (label_d < 0 || best_d < label_d) ? best : -1;
}

/* The control a label without relations labels: by position where the
 * label has one (a grid's children need not come in the order drawn:
 * zenity's form lists each row's field before its label), else the first
 * control after it in reading order, before any other label. -1: none. */
static int next_control(const ksr_atspi_tree *t, const int *order, const int *pos, int j)
{
	int by_pos = control_by_position(t, j);
	if (by_pos != -2)
		return by_pos;
	for (size_t k = (size_t)pos[j] + 1; k < t->len; k++) {
		int c = order[k];
		if (is_below(t, c, j))
			continue; /* the label's own parts */
		if (is_label_role(&t->nodes[c]))
			return -1;
		if (is_control(&t->nodes[c]))
			return c;
	}
	return -1;
}

/* Mark labelled[i] for every node a label named l->label labels. */
static void mark_labelled(rel_ctx *r, const ksr_atspi_locator *l, const int *order, const int *pos,
                          const unsigned char *fits, unsigned char *labelled)
{
	const ksr_atspi_tree *t = r->t;
	unsigned char *labeller = ksr_xcalloc(t->len, 1);
	int targets[16];
	for (size_t j = 1; j < t->len; j++) {
		if (ksr_atspi_node_match_kind(&t->nodes[j], l->label, NULL) <= 0)
			continue;
		labeller[j] = 1;
		bool any = false;
		int n = relation_targets(r, j, ATSPI_RELATION_LABEL_FOR, targets, 16, &any);
		for (int k = 0; k < n; k++)
			labelled[targets[k]] = 1;
		if (!any && is_label_role(&t->nodes[j])) {
			int c = next_control(t, order, pos, (int)j);
			if (c >= 0)
				labelled[c] = 2; /* by reading order: unless its own relation says
				                    other */
		}
	}
	/* The controls that fit otherwise: their labelled-by relations. */
	for (size_t i = 1; i < t->len; i++) {
		if (!fits[i])
			continue;
		bool any = false;
		int n = relation_targets(r, i, ATSPI_RELATION_LABELLED_BY, targets, 16, &any);
		bool by_label = false;
		for (int k = 0; k < n; k++)
			by_label = by_label || labeller[targets[k]];
		if (by_label)
			labelled[i] = 1;
		else if (any && labelled[i] == 2)
			labelled[i] = 0; /* labelled by another label */
	}
	free(labeller);
}

/* ---- the pick ---- */

static void rel_ctx_init(rel_ctx *r, ksr_atspi *a, const ksr_atspi_app *app,
                         const ksr_atspi_tree *t, ksr_deadline d)
{
	*r = (rel_ctx){.a = a, .app = app, .t = t, .d = d};
	r->by_path = g_hash_table_new(g_str_hash, g_str_equal);
	for (size_t i = 0; i < t->len; i++)
		if (t->nodes[i].path)
			g_hash_table_insert(r->by_path, t->nodes[i].path,
			                    GINT_TO_POINTER((int)i + 1));
}

/* Which nodes fit the locator: fits[i] 1 (name normalised) or 2 (exact). */
static void fitting(rel_ctx *r, const ksr_atspi_locator *l, const int *order, const int *pos,
                    unsigned char *fits)
{
	const ksr_atspi_tree *t = r->t;
	for (size_t i = 1; i < t->len; i++)
		if (ksr_atspi_locator_fits_place(t, i, l))
			fits[i] = (unsigned char)name_kind(&t->nodes[i], l->name);
	if (!has_text(l->label))
		return;
	unsigned char *labelled = ksr_xcalloc(t->len, 1);
	ksr_atspi_ctx_enter(r->a->ctx);
	mark_labelled(r, l, order, pos, fits, labelled);
	ksr_atspi_ctx_leave(r->a->ctx);
	for (size_t i = 1; i < t->len; i++)
		if (!labelled[i])
			fits[i] = 0;
	free(labelled);
}

int ksr_atspi_locate(ksr_atspi *a, const ksr_atspi_app *app, const ksr_atspi_tree *t,
                     const ksr_atspi_locator *l, ksr_deadline d, ksr_atspi_located *out)
{
	*out = (ksr_atspi_located){.index = -1};
	if (!t || t->len < 2)
		return 0;
	int *order = ksr_atspi_reading_order(t);
	int *pos = ksr_xmalloc(t->len * sizeof *pos);
	for (size_t k = 0; k < t->len; k++)
		pos[order[k]] = (int)k;
	unsigned char *fits = ksr_xcalloc(t->len, 1);
	rel_ctx r;
	rel_ctx_init(&r, a, app, t, d);
	fitting(&r, l, order, pos, fits);
	out->relation_calls = r.calls;
	/* Exact names win over normalised ones, among the controls that count. */
	int best_kind = 0, first_hidden = -1;
	for (size_t i = 1; i < t->len; i++) {
		bool counts = l->hidden_ok || ksr_atspi_tree_showing(t, i);
		if (fits[i] && counts && fits[i] > best_kind)
			best_kind = fits[i];
	}
	int want = l->nth > 0 ? l->nth : 1;
	for (size_t k = 0; k < t->len; k++) {
		int i = order[k];
		if (!fits[i])
			continue;
		if (!l->hidden_ok && !ksr_atspi_tree_showing(t, (size_t)i)) {
			out->hidden++;
			if (first_hidden < 0)
				first_hidden = i;
			continue;
		}
		if (fits[i] < best_kind)
			continue;
		if (++out->matches == want)
			out->index = i;
	}
	if (out->matches == 0 && l->nth == 0)
		out->index = first_hidden; /* the caller says it is not showing */
	g_hash_table_destroy(r.by_path);
	free(fits);
	free(pos);
	free(order);
	return 0;
}

int ksr_atspi_label_of(ksr_atspi *a, const ksr_atspi_app *app, const ksr_atspi_tree *t,
                       const int *order, size_t i, ksr_deadline d)
{
	rel_ctx r;
	rel_ctx_init(&r, a, app, t, d);
	int targets[4];
	bool any = false;
	ksr_atspi_ctx_enter(a->ctx);
	int n = relation_targets(&r, i, ATSPI_RELATION_LABELLED_BY, targets, 4, &any);
	ksr_atspi_ctx_leave(a->ctx);
	g_hash_table_destroy(r.by_path);
	if (n > 0)
		return targets[0];
	if (any)
		return -1;
	/* A label without relations whose control (by position, else reading
	 * order) it is: as locate judges it. */
	int *pos = ksr_xmalloc(t->len * sizeof *pos);
	for (size_t k = 0; k < t->len; k++)
		pos[order[k]] = (int)k;
	int found = -1;
	for (size_t j = 1; j < t->len && found < 0; j++)
		if (is_label_role(&t->nodes[j]) && t->nodes[j].name && *t->nodes[j].name &&
		    next_control(t, order, pos, (int)j) == (int)i)
			found = (int)j;
	free(pos);
	return found;
}

char *ksr_atspi_locator_text(const ksr_atspi_locator *l)
{
	ksr_strbuf b = {0};
	const char *sep = "";
	if (has_text(l->name)) {
		char *dn = ksr_atspi_name_display(l->name->text);
		ksr_strbuf_addf(&b, l->name->re ? "name /%s/" : "name \"%s\"", dn);
		free(dn);
		sep = ", ";
	}
	if (l->role) {
		ksr_strbuf_addf(&b, "%srole \"%s\"", sep, l->role);
		sep = ", ";
	}
	if (has_text(l->label)) {
		ksr_strbuf_addf(&b, l->label->re ? "%slabel /%s/" : "%slabel \"%s\"", sep,
		                l->label->text);
		sep = ", ";
	}
	if (l->in) {
		ksr_strbuf_addf(&b, "%sin ", sep);
		if (has_text(l->in_name))
			ksr_strbuf_addf(&b, l->in_name->re ? "/%s/" : "\"%s\"", l->in_name->text);
		if (l->in_role)
			ksr_strbuf_addf(&b, "%s%s", has_text(l->in_name) ? " " : "", l->in_role);
		sep = ", ";
	}
	if (l->nth)
		ksr_strbuf_addf(&b, "%snth %d", sep, l->nth);
	return ksr_strbuf_take(&b);
}
