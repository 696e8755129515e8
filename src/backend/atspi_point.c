/* The control under a point: what a pointer action at that pixel would reach,
 * so that readiness can wait until it is sensitive and showing (an "OK"
 * button enabled only once a field has text). Component.GetAccessibleAtPoint
 * from the window's accessible down: GTK 3 answers with the child at the
 * point, Qt with the deepest; both are followed until there is no deeper one. */
#include "backend/atspi_priv.h"

#include <atspi/atspi-constants.h>
#include <stdlib.h>
#include <string.h>

#define MAX_HOPS    48
#define MAX_WINDOWS 64
#define NULL_PATH   "/org/a11y/atspi/null"

static GVariant *app_call(ksr_atspi *a, const ksr_atspi_app *app, const char *path,
                          const char *iface, const char *method, GVariant *params,
                          const char *reply, ksr_deadline d, ksr_err *err)
{
	return ksr_atspi_call(a->ctx, a->conn, app->bus, path, iface, method, params, reply, d,
	                      err);
}

static char *string_property(ksr_atspi *a, const ksr_atspi_app *app, const char *path,
                             const char *prop, ksr_deadline d)
{
	ksr_err ignored = {0};
	GVariant *r =
	        app_call(a, app, path, "org.freedesktop.DBus.Properties", "Get",
	                 g_variant_new("(ss)", ATSPI_IFACE_ACCESSIBLE, prop), "(v)", d, &ignored);
	if (!r)
		return NULL;
	GVariant *v = NULL;
	g_variant_get(r, "(v)", &v);
	char *s = g_variant_is_of_type(v, G_VARIANT_TYPE_STRING)
	                  ? ksr_xstrdup(g_variant_get_string(v, NULL))
	                  : NULL;
	g_variant_unref(v);
	g_variant_unref(r);
	return s;
}

/* Titles compare as a person reads them: surrounding blanks aside. */
static bool same_title(const char *a, const char *b)
{
	while (*a == ' ')
		a++;
	while (*b == ' ')
		b++;
	size_t la = strlen(a), lb = strlen(b);
	while (la && a[la - 1] == ' ')
		la--;
	while (lb && b[lb - 1] == ' ')
		lb--;
	return la == lb && memcmp(a, b, la) == 0;
}

/* The application's top-level accessible whose name is the X window's
 * title (malloc'd path), or NULL: when it cannot be told which window is
 * under the point, nothing is claimed about the control there. */
static char *window_accessible(ksr_atspi *a, const ksr_atspi_app *app, const char *title,
                               ksr_deadline d, ksr_err *err)
{
	GVariant *r = app_call(a, app, ATSPI_ROOT_PATH, ATSPI_IFACE_ACCESSIBLE, "GetChildren", NULL,
	                       "(a(so))", d, err);
	if (!r)
		return NULL;
	char *found = NULL;
	GVariantIter *it = NULL;
	const char *bus, *path;
	int seen = 0;
	g_variant_get(r, "(a(so))", &it);
	while (!found && seen++ < MAX_WINDOWS && g_variant_iter_next(it, "(&s&o)", &bus, &path)) {
		char *name = string_property(a, app, path, "Name", d);
		if (name && same_title(name, title))
			found = ksr_xstrdup(path);
		free(name);
	}
	g_variant_iter_free(it);
	g_variant_unref(r);
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
		coords = ATSPI_COORD_TYPE_WINDOW;
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

static bool has_action(ksr_atspi *a, const ksr_atspi_app *app, const char *path, ksr_deadline d)
{
	ksr_err ignored = {0};
	GVariant *r = app_call(a, app, path, ATSPI_IFACE_ACCESSIBLE, "GetInterfaces", NULL, "(as)",
	                       d, &ignored);
	if (!r)
		return false;
	bool yes = false;
	GVariantIter *it = NULL;
	const char *iface;
	g_variant_get(r, "(as)", &it);
	while (g_variant_iter_next(it, "&s", &iface))
		yes = yes || strcmp(iface, ATSPI_IFACE_ACTION) == 0;
	g_variant_iter_free(it);
	g_variant_unref(r);
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
	ksr_err ignored = {0};
	GVariant *r = app_call(a, app, path, ATSPI_IFACE_ACCESSIBLE, "GetRoleName", NULL, "(s)", d,
	                       &ignored);
	const char *role = NULL;
	if (r)
		g_variant_get(r, "(&s)", &role);
	*out = (ksr_atspi_control){.path = path,
	                           .name = name,
	                           .role = ksr_xstrdup(role ? role : ""),
	                           .states = states,
	                           .depth = depth};
	if (r)
		g_variant_unref(r);
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
	/* The deepest one that can be acted on (a button, not the label in it). */
	int pick = -1;
	for (int i = n - 1; i > 0 && pick < 0; i--)
		if (has_action(a, app, chain[i], d))
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

bool ksr_atspi_control_ready(const ksr_atspi_control *c, bool visible_is_showing, bool *sensitive,
                             bool *showing)
{
	uint64_t st = c->states;
	*sensitive = st & ((1ull << ATSPI_STATE_SENSITIVE) | (1ull << ATSPI_STATE_ENABLED));
	*showing = (st & (1ull << ATSPI_STATE_SHOWING)) ||
	           (visible_is_showing && (st & (1ull << ATSPI_STATE_VISIBLE)));
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
