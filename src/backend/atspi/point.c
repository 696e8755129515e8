/* The control under a point: what a pointer action at that pixel would reach,
 * so that readiness can wait until it is sensitive and showing (an "OK"
 * button enabled only once a field has text). Component.GetAccessibleAtPoint
 * from the window's accessible down: GTK 3 answers with the child at the
 * point, Qt with the deepest; both are followed until there is no deeper one. */
#include "backend/atspi/priv.h"

#include <atspi/atspi-constants.h>
#include <stdlib.h>
#include <string.h>

/* The window's default button is looked for in at most this many nodes. */
#define DEFAULT_WALK_NODES 3000
#define MAX_HOPS           48
#define MAX_WINDOWS        64
#define NULL_PATH          "/org/a11y/atspi/null"

static GVariant *app_call(ksr_atspi *a, const ksr_atspi_app *app, const char *path,
                          const char *iface, const char *method, GVariant *params,
                          const char *reply, ksr_deadline d, ksr_err *err)
{
	return ksr_atspi_call(a->ctx, a->conn, app->bus, path, iface, method, params, reply, d,
	                      err);
}

/* Titles compare as a person reads them (ksr_atspi_name_display). */
static bool same_title(const char *a, const char *b)
{
	char *da = ksr_atspi_name_display(a), *db = ksr_atspi_name_display(b);
	bool same = strcmp(da, db) == 0;
	free(da);
	free(db);
	return same;
}

/* The application's top-level accessible whose name is the X window's
 * title (malloc'd path), or NULL: when it cannot be told which window is
 * under the point, nothing is claimed about the control there. A toolkit
 * may leave its frame unnamed (gtk3-widget-factory): when no name is the
 * title and exactly one top-level has no name, the window is that one. */
static char *window_accessible(ksr_atspi *a, const ksr_atspi_app *app, const char *title,
                               ksr_deadline d, ksr_err *err)
{
	GVariant *r = app_call(a, app, ATSPI_ROOT_PATH, ATSPI_IFACE_ACCESSIBLE, "GetChildren", NULL,
	                       "(a(so))", d, err);
	if (!r)
		return NULL;
	char *found = NULL, *unnamed = NULL;
	int n_unnamed = 0;
	GVariantIter *it = NULL;
	const char *bus, *path;
	int seen = 0;
	g_variant_get(r, "(a(so))", &it);
	while (!found && seen++ < MAX_WINDOWS && g_variant_iter_next(it, "(&s&o)", &bus, &path)) {
		char *name = ksr_atspi_string_property(a, app->bus, path, ATSPI_IFACE_ACCESSIBLE,
		                                       "Name", d);
		if (name && same_title(name, title))
			found = ksr_xstrdup(path);
		else if (name && !*name && !n_unnamed++)
			unnamed = ksr_xstrdup(path);
		free(name);
	}
	g_variant_iter_free(it);
	g_variant_unref(r);
	if (!found && n_unnamed == 1)
		found = unnamed, unnamed = NULL;
	free(unnamed);
	return found;
}

static bool visible(ksr_atspi *a, const ksr_atspi_app *app, const char *path, ksr_deadline d)
{
	uint64_t st = 0;
	ksr_err ignored = {0};
	return ksr_atspi_node_states(a, app, path, d, &st, NULL, &ignored) == 0 &&
	       (st & (1ull << ATSPI_STATE_VISIBLE));
}

typedef struct extents_req {
	int *pending;
	bool ok;
	gint32 x, y, w, h;
} extents_req;

static void on_extents(GObject *src, GAsyncResult *res, gpointer data)
{
	extents_req *r = data;
	GVariant *v = g_dbus_connection_call_finish(G_DBUS_CONNECTION(src), res, NULL);
	if (v) {
		g_variant_get(v, "((iiii))", &r->x, &r->y, &r->w, &r->h);
		g_variant_unref(v);
		r->ok = true;
	}
	(*r->pending)--;
}

/* Every child's window-relative extents at once (one round trip, not one
 * per child): which hold the point. */
static void children_extents(ksr_atspi *a, const ksr_atspi_app *app, char **kids, size_t n,
                             extents_req *out, ksr_deadline d)
{
	int pending = (int)n;
	GCancellable *cancel = g_cancellable_new();
	for (size_t i = 0; i < n; i++) {
		out[i] = (extents_req){.pending = &pending};
		g_dbus_connection_call(a->conn, app->bus, kids[i], ATSPI_IFACE_COMPONENT,
		                       "GetExtents", g_variant_new("(u)", ATSPI_COORD_TYPE_WINDOW),
		                       G_VARIANT_TYPE("((iiii))"), G_DBUS_CALL_FLAGS_NO_AUTO_START,
		                       KSR_ATSPI_CALL_MS, cancel, on_extents, &out[i]);
	}
	ksr_deadline bound = ksr_deadline_min(d, ksr_deadline_in_ms(KSR_ATSPI_CALL_MS + 250));
	ksr_wait w = KSR_WAIT_READY;
	while (pending > 0 && w != KSR_WAIT_CANCELLED && !ksr_deadline_passed(bound))
		w = ksr_atspi_iterate(a->ctx, bound, false);
	if (pending > 0) {
		g_cancellable_cancel(cancel);
		ksr_atspi_drain(a->ctx, &pending);
	}
	g_object_unref(cancel);
}

/* GTK 4.8 answers GetAccessibleAtPoint for a window's direct children only
 * (deeper, it compares window coordinates with a child's own): there the
 * child is the last visible one whose window-relative extents hold the point
 * (the last drawn is on top). */
static char *child_by_extents(ksr_atspi *a, const ksr_atspi_app *app, const char *path, int x,
                              int y, ksr_deadline d, ksr_err *err)
{
	GVariant *r = app_call(a, app, path, ATSPI_IFACE_ACCESSIBLE, "GetChildren", NULL, "(a(so))",
	                       d, err);
	if (!r)
		return NULL;
	GVariantIter *it = NULL;
	const char *bus, *child;
	g_variant_get(r, "(a(so))", &it);
	size_t n = 0, cap = g_variant_iter_n_children(it);
	char **kids = ksr_xcalloc(cap + 1, sizeof *kids);
	while (n < cap && g_variant_iter_next(it, "(&s&o)", &bus, &child))
		kids[n++] = ksr_xstrdup(child);
	g_variant_iter_free(it);
	g_variant_unref(r);
	extents_req *ext = ksr_xcalloc(n + 1, sizeof *ext);
	children_extents(a, app, kids, n, ext, d);
	char *found = NULL;
	for (size_t i = n; i-- > 0 && !found;) {
		const extents_req *e = &ext[i];
		if (e->ok && e->w > 0 && e->h > 0 && x >= e->x && y >= e->y && x < e->x + e->w &&
		    y < e->y + e->h && visible(a, app, kids[i], d))
			found = ksr_xstrdup(kids[i]);
	}
	for (size_t i = 0; i < n; i++)
		free(kids[i]);
	free(kids);
	free(ext);
	return found;
}

/* The accessible at (x, y) inside path, or NULL when there is none deeper. */
static char *child_at(ksr_atspi *a, const ksr_atspi_app *app, const char *path,
                      const ksr_atspi_at *at, ksr_deadline d, ksr_err *err)
{
	int x = at->x, y = at->y;
	guint32 coords = ATSPI_COORD_TYPE_SCREEN;
	if (at->window_coords) {
		x -= at->origin_x, y -= at->origin_y;
		return child_by_extents(a, app, path, x, y, d, err);
	}
	GVariant *r = app_call(a, app, path, ATSPI_IFACE_COMPONENT, "GetAccessibleAtPoint",
	                       g_variant_new("(iiu)", x, y, coords), "((so))", d, err);
	if (!r)
		return NULL;
	const char *bus = NULL, *child = NULL;
	g_variant_get(r, "((&s&o))", &bus, &child);
	char *out = child && strcmp(child, NULL_PATH) != 0 && strcmp(child, path) != 0
	                    ? ksr_xstrdup(child)
	                    : NULL;
	g_variant_unref(r);
	return out;
}

/* The standard role name (GetRole), else the toolkit's (GetRoleName). */
static char *role_of(ksr_atspi *a, const ksr_atspi_app *app, const char *path, ksr_deadline d)
{
	ksr_err ignored = {0};
	char *role = NULL;
	GVariant *r =
	        app_call(a, app, path, ATSPI_IFACE_ACCESSIBLE, "GetRole", NULL, "(u)", d, &ignored);
	if (r) {
		guint32 n = 0;
		g_variant_get(r, "(u)", &n);
		g_variant_unref(r);
		role = ksr_atspi_role_canonical(n);
	}
	if (role)
		return role;
	r = app_call(a, app, path, ATSPI_IFACE_ACCESSIBLE, "GetRoleName", NULL, "(s)", d, &ignored);
	const char *s = NULL;
	if (r)
		g_variant_get(r, "(&s)", &s);
	role = ksr_xstrdup(s ? s : "");
	if (r)
		g_variant_unref(r);
	return role;
}

/* Roles a person clicks. Qt lists no actions for a disabled button, GTK 4
 * none for any widget inside an insensitive one (the label in a greyed
 * button): with no actions, only these roles count as a control. */
static bool control_role(const char *role)
{
	static const char *const roles[] = {
	        "push button",     "toggle button",   "check box", "radio button",  "menu item",
	        "check menu item", "radio menu item", "page tab",  "link",          "combo box",
	        "spin button",     "slider",          "text",      "password text", "entry",
	};
	for (size_t i = 0; role && i < sizeof roles / sizeof roles[0]; i++)
		if (strcmp(role, roles[i]) == 0)
			return true;
	return false;
}

/* A control: an Action interface with a click-like action
 * (ksr_atspi_pick_action), or with none at all and a control's role; a
 * GTK 4 label lists only widget actions ("clipboard.copy") and is no
 * control. */
static bool clickable(ksr_atspi *a, const ksr_atspi_app *app, const char *path, ksr_deadline d)
{
	ksr_err ignored = {0};
	GVariant *r = app_call(a, app, path, ATSPI_IFACE_ACTION, "GetActions", NULL, "(a(sss))", d,
	                       &ignored);
	if (!r)
		return false; /* no Action interface */
	GVariantIter *it = NULL;
	const char *name, *desc, *key;
	g_variant_get(r, "(a(sss))", &it);
	char *names[64];
	ksr_atspi_node n = {.actions = names};
	while (n.n_actions < 64 && g_variant_iter_next(it, "(&s&s&s)", &name, &desc, &key))
		names[n.n_actions++] = (char *)name;
	bool yes = ksr_atspi_pick_action(&n) >= 0;
	bool none = n.n_actions == 0;
	g_variant_iter_free(it);
	g_variant_unref(r);
	if (none) {
		char *role = role_of(a, app, path, d);
		yes = control_role(role);
		free(role);
	}
	return yes;
}

static int describe(ksr_atspi *a, const ksr_atspi_app *app, char *path, int depth, ksr_deadline d,
                    ksr_atspi_control *out, ksr_err *err)
{
	uint64_t states = 0;
	char *name = NULL;
	if (ksr_atspi_node_states(a, app, path, d, &states, &name, err) < 0) {
		free(path);
		return -1;
	}
	*out = (ksr_atspi_control){.path = path,
	                           .name = ksr_atspi_name_display(name ? name : ""),
	                           .role = role_of(a, app, path, d),
	                           .states = states,
	                           .depth = depth};
	free(name);
	return 1;
}

int ksr_atspi_control_at(ksr_atspi *a, const ksr_atspi_app *app, const ksr_atspi_at *at,
                         ksr_deadline d, ksr_atspi_control *out, ksr_err *err)
{
	*out = (ksr_atspi_control){0};
	if (!a || !app || !app->bus || !at->window_title)
		return 0;
	ksr_atspi_ctx_enter(a->ctx);
	char *chain[MAX_HOPS];
	int n = 0, rc = 0;
	char *top = window_accessible(a, app, at->window_title, d, err);
	for (char *p = top; p && n < MAX_HOPS; p = child_at(a, app, p, at, d, err))
		chain[n++] = p;
	/* The deepest one that can be clicked (a button, not the label in it). */
	int pick = -1;
	for (int i = n - 1; i > 0 && pick < 0; i--)
		if (clickable(a, app, chain[i], d))
			pick = i;
	if (pick > 0) {
		rc = describe(a, app, chain[pick], pick, d, out, err);
		chain[pick] = NULL;
	}
	for (int i = 0; i < n; i++)
		free(chain[i]);
	ksr_atspi_ctx_leave(a->ctx);
	return rc;
}

/* The node's top-level ancestor (a child of the application), or -1. */
static int top_of(const ksr_atspi_tree *t, int i)
{
	while (i > 0 && t->nodes[i].parent > 0)
		i = t->nodes[i].parent;
	return i > 0 ? i : -1;
}

int ksr_atspi_default_control(ksr_atspi *a, const ksr_atspi_app *app, const char *window_title,
                              ksr_deadline d, ksr_atspi_control *out, ksr_err *err)
{
	*out = (ksr_atspi_control){0};
	if (!a || !app || !app->bus || !window_title)
		return 0;
	ksr_atspi_tree t = {0};
	ksr_atspi_walk_opts o = {.max_nodes = DEFAULT_WALK_NODES};
	if (ksr_atspi_walk(a, app, &o, d, &t, err) < 0)
		return -1;
	const uint64_t want = (1ull << ATSPI_STATE_IS_DEFAULT) | (1ull << ATSPI_STATE_VISIBLE);
	int rc = 0;
	for (size_t i = 1; i < t.len && rc == 0; i++) {
		const ksr_atspi_node *n = &t.nodes[i];
		int top = top_of(&t, (int)i);
		if ((n->states & want) != want || top < 0 ||
		    !same_title(t.nodes[top].name ? t.nodes[top].name : "", window_title))
			continue;
		*out = (ksr_atspi_control){.path = ksr_xstrdup(n->path),
		                           .name = ksr_atspi_name_display(n->name ? n->name : ""),
		                           .role = ksr_xstrdup(n->role ? n->role : ""),
		                           .states = n->states,
		                           .depth = n->depth - t.nodes[top].depth};
		rc = 1;
	}
	ksr_atspi_tree_clear(&t);
	return rc;
}

int ksr_atspi_control_refresh(ksr_atspi *a, const ksr_atspi_app *app, ksr_atspi_control *c,
                              ksr_deadline d, ksr_err *err)
{
	return ksr_atspi_node_states(a, app, c->path, d, &c->states, NULL, err);
}

bool ksr_atspi_control_ready(const ksr_atspi_control *c, bool visible_is_showing, bool *sensitive,
                             bool *showing)
{
	uint64_t st = c->states;
	*sensitive = st & ((1ull << ATSPI_STATE_SENSITIVE) | (1ull << ATSPI_STATE_ENABLED));
	*showing = ksr_atspi_states_showing(st, visible_is_showing);
	return *sensitive && *showing;
}

void ksr_atspi_control_clear(ksr_atspi_control *c)
{
	if (!c)
		return;
	free(c->path);
	free(c->name);
	free(c->role);
	*c = (ksr_atspi_control){0};
}
