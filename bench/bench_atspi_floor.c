/* bench_atspi_floor: the floor of an AT-SPI job, for bench/atspi.sh: the
 * least any client must ask the app, sent by a client with next to no cost
 * of its own (C, GDBus, every call in flight as soon as it can be). The app
 * answers one call at a time, so this is the app's own time for those
 * answers, which no client goes below.
 *
 *   bench_atspi_floor walk PID RUNS
 *     every node's role, name, states and interfaces, extents (of a node that
 *     is visible or showing) and actions. Where the app serves
 *     Cache.GetItems: that one call, then GetExtents/GetActions per node.
 *     Without a cache (Qt 5): per node GetRole, Properties.Get(Name),
 *     GetState, GetInterfaces, GetChildren (no count asked first), then
 *     extents and actions.
 *   bench_atspi_floor find PID RUNS NAME
 *     a find of NAME by the runtime's rule (a showing match anywhere wins over
 *     a hidden one) without a cache: every node's states and name and its
 *     children; once a hidden match is known, only showing nodes are gone
 *     below (no showing node lies under a hidden one). Timed until the first
 *     showing match, else until all is read.
 *   bench_atspi_floor findact PID RUNS NAME
 *     find as above, then the match's GetActions and DoAction on its click
 *     action, asked the moment the showing match's name is read (a hidden
 *     match: once all is read). The floor of a find + act on an app without
 *     a cache (Qt 5), timed until DoAction answers; GAP_MS apart as act.
 *   bench_atspi_floor act PID RUNS NAME
 *     find NAME and do its click action with a cache: one Cache.GetItems,
 *     the item named NAME (showing first), its GetActions (which one is
 *     the click: "click", "press" or "activate", else the first), DoAction
 *     on it: three round trips, none of which a client can leave out. GAP_MS
 *     (default 300) apart, not timed, as bench_atspi act.
 *
 * One line per run: "<ms> <nodes> <calls>". Needs the session's
 * DBUS_SESSION_BUS_ADDRESS (or AT_SPI_BUS_ADDRESS). Not our walk: a bench
 * yardstick, written against the D-Bus interfaces alone. */
#include <atspi/atspi-constants.h>
#include <gio/gio.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CALL_MS 5000
#define ACC     "org.a11y.atspi.Accessible"

typedef struct floor_run {
	GDBusConnection *bus;
	const char *app;
	const char *find; /* NULL: a full walk */
	int pending, nodes, calls;
	GPtrArray *all;  /* the nodes, freed with the run (answers refer to them) */
	bool cand;       /* find: a hidden match is known */
	double found_at; /* find: when the first showing match was read, 0: not yet */
	bool act;        /* findact: its action done once found */
	char *cand_path; /* findact: the first hidden match */
	double acted_at; /* findact: when DoAction answered, 0: not yet */
} floor_run;

/* One node's answers so far (find mode and the walk without a cache). */
typedef struct node {
	floor_run *r;
	char *path;
	int depth;
	uint64_t states;
} node;

typedef void (*answer_fn)(node *n, GVariant *reply);

typedef struct call {
	node *n;
	answer_fn then;
} call;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static uint64_t states_of(GVariant *au)
{
	guint32 lo = 0, hi = 0;
	if (g_variant_n_children(au) > 0)
		g_variant_get_child(au, 0, "u", &lo);
	if (g_variant_n_children(au) > 1)
		g_variant_get_child(au, 1, "u", &hi);
	return lo | (uint64_t)hi << 32;
}

static bool shown(uint64_t st)
{
	return st & ((1ull << ATSPI_STATE_SHOWING) | (1ull << ATSPI_STATE_VISIBLE));
}

static void node_free(gpointer p)
{
	node *n = p;
	g_free(n->path);
	free(n);
}

static void on_answer(GObject *src, GAsyncResult *res, gpointer data)
{
	call *c = data;
	GVariant *reply = g_dbus_connection_call_finish(G_DBUS_CONNECTION(src), res, NULL);
	c->n->r->pending--;
	if (reply && c->then)
		c->then(c->n, reply);
	if (reply)
		g_variant_unref(reply);
	free(c);
}

static void ask(floor_run *r, node *n, const char *path, const char *iface, const char *method,
                GVariant *args, answer_fn then)
{
	call *c = malloc(sizeof *c);
	*c = (call){.n = n, .then = then};
	r->pending++;
	r->calls++;
	g_dbus_connection_call(r->bus, r->app, path, iface, method, args, NULL,
	                       G_DBUS_CALL_FLAGS_NO_AUTO_START, CALL_MS, NULL, on_answer, c);
}

static void ask_details(floor_run *r, node *n, const char *path, GVariant *ifaces, uint64_t st)
{
	const char **names = g_variant_get_strv(ifaces, NULL);
	for (size_t k = 0; names[k]; k++) {
		if (!strcmp(names[k], ATSPI_DBUS_INTERFACE_COMPONENT) && shown(st))
			ask(r, n, path, names[k], "GetExtents", g_variant_new("(u)", 0), NULL);
		else if (!strcmp(names[k], ATSPI_DBUS_INTERFACE_ACTION))
			ask(r, n, path, names[k], "GetActions", NULL, NULL);
	}
	g_free(names);
}

/* ---- with a cache ---- */

/* The interface list, the name (its first string: the description comes
 * after it) and the states of a GetItems entry, whichever layout; name may
 * be NULL. Each part found is a reference to drop. */
static void item_parts(GVariant *item, GVariant **ifaces, GVariant **name, GVariant **states)
{
	GVariant *unused = NULL, **nm = name ? name : &unused;
	*ifaces = *states = *nm = NULL;
	for (size_t k = 0; k < g_variant_n_children(item); k++) {
		GVariant *v = g_variant_get_child_value(item, k);
		if (g_variant_is_of_type(v, G_VARIANT_TYPE_STRING_ARRAY) && !*ifaces)
			*ifaces = v;
		else if (g_variant_is_of_type(v, G_VARIANT_TYPE_STRING) && !*nm)
			*nm = v;
		else if (g_variant_is_of_type(v, G_VARIANT_TYPE("au")))
			*states = v;
		else
			g_variant_unref(v);
	}
	if (unused)
		g_variant_unref(unused);
}

static bool cached_walk(floor_run *r, node *holder)
{
	GVariant *res = g_dbus_connection_call_sync(
	        r->bus, r->app, "/org/a11y/atspi/cache", "org.a11y.atspi.Cache", "GetItems", NULL,
	        NULL, G_DBUS_CALL_FLAGS_NO_AUTO_START, CALL_MS, NULL, NULL);
	r->calls++;
	if (!res)
		return false;
	GVariant *items = g_variant_get_child_value(res, 0);
	r->nodes = (int)g_variant_n_children(items);
	for (int i = 0; i < r->nodes; i++) {
		GVariant *item = g_variant_get_child_value(items, (size_t)i), *ifaces, *states;
		const char *path = NULL;
		g_variant_get_child(item, 0, "(&s&o)", NULL, &path);
		item_parts(item, &ifaces, NULL, &states);
		if (ifaces && states)
			ask_details(r, holder, path, ifaces, states_of(states));
		if (ifaces)
			g_variant_unref(ifaces);
		if (states)
			g_variant_unref(states);
		g_variant_unref(item);
	}
	g_variant_unref(items);
	g_variant_unref(res);
	return r->nodes > 0;
}

/* ---- without a cache ---- */

static void add_node(floor_run *r, const char *path, int depth);

static void got_states(node *n, GVariant *reply)
{
	GVariant *au = g_variant_get_child_value(reply, 0);
	n->states = states_of(au);
	g_variant_unref(au);
}

static void got_ifaces(node *n, GVariant *reply)
{
	/* GetState was asked first, and one app answers in order. */
	GVariant *as = g_variant_get_child_value(reply, 0);
	ask_details(n->r, n, n->path, as, n->states);
	g_variant_unref(as);
}

static int pick_action(GVariant *reply);

static void got_done(node *n, GVariant *reply)
{
	(void)reply;
	n->r->acted_at = now_ms();
}

static void got_actions(node *n, GVariant *reply)
{
	int k = pick_action(reply);
	if (k >= 0)
		ask(n->r, n, n->path, ATSPI_DBUS_INTERFACE_ACTION, "DoAction",
		    g_variant_new("(i)", k), got_done);
}

static void got_name(node *n, GVariant *reply)
{
	floor_run *r = n->r;
	GVariant *v = NULL;
	g_variant_get(reply, "(v)", &v);
	if (r->find && g_variant_is_of_type(v, G_VARIANT_TYPE_STRING) &&
	    !strcmp(g_variant_get_string(v, NULL), r->find)) {
		if (n->states & (1ull << ATSPI_STATE_SHOWING)) {
			if (!r->found_at && r->act)
				ask(r, n, n->path, ATSPI_DBUS_INTERFACE_ACTION, "GetActions", NULL,
				    got_actions);
			if (!r->found_at)
				r->found_at = now_ms();
		} else {
			if (!r->cand && r->act)
				r->cand_path = g_strdup(n->path);
			r->cand = true;
		}
	}
	g_variant_unref(v);
}

static void got_children(node *n, GVariant *reply)
{
	floor_run *r = n->r;
	if (r->find && (r->found_at || (r->cand && !(n->states & (1ull << ATSPI_STATE_SHOWING)))))
		return;
	GVariantIter *it = NULL;
	const char *bus, *path;
	g_variant_get(reply, "(a(so))", &it);
	while (g_variant_iter_next(it, "(&s&o)", &bus, &path))
		if (!strcmp(bus, r->app) && strcmp(path, "/org/a11y/atspi/null"))
			add_node(r, path, n->depth + 1);
	g_variant_iter_free(it);
}

static void add_node(floor_run *r, const char *path, int depth)
{
	node *n = calloc(1, sizeof *n);
	*n = (node){.r = r, .path = g_strdup(path), .depth = depth};
	r->nodes++;
	ask(r, n, path, ACC, "GetState", NULL, got_states);
	ask(r, n, path, "org.freedesktop.DBus.Properties", "Get",
	    g_variant_new("(ss)", ACC, "Name"), got_name);
	if (!r->find) {
		ask(r, n, path, ACC, "GetRole", NULL, NULL);
		ask(r, n, path, ACC, "GetInterfaces", NULL, got_ifaces);
	}
	if (depth < 32)
		ask(r, n, path, ACC, "GetChildren", NULL, got_children);
	g_ptr_array_add(r->all, n);
}

/* ---- setup ---- */

static GDBusConnection *a11y_bus(void)
{
	const char *addr = getenv("AT_SPI_BUS_ADDRESS");
	char *found = NULL;
	if (!addr) {
		GDBusConnection *s = g_bus_get_sync(G_BUS_TYPE_SESSION, NULL, NULL);
		GVariant *r = s ? g_dbus_connection_call_sync(s, "org.a11y.Bus", "/org/a11y/bus",
		                                              "org.a11y.Bus", "GetAddress", NULL,
		                                              G_VARIANT_TYPE("(s)"), 0, CALL_MS,
		                                              NULL, NULL)
		                : NULL;
		if (r) {
			g_variant_get(r, "(s)", &found);
			g_variant_unref(r);
		}
		addr = found;
	}
	GDBusConnection *bus =
	        addr ? g_dbus_connection_new_for_address_sync(
	                       addr,
	                       G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
	                               G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION,
	                       NULL, NULL, NULL)
	             : NULL;
	g_free(found);
	return bus;
}

static char *app_of_pid(GDBusConnection *bus, guint32 pid)
{
	GVariant *r = g_dbus_connection_call_sync(bus, "org.freedesktop.DBus",
	                                          "/org/freedesktop/DBus", "org.freedesktop.DBus",
	                                          "ListNames", NULL, NULL, 0, CALL_MS, NULL, NULL);
	if (!r)
		return NULL;
	GVariantIter *it = NULL;
	const char *name;
	char *app = NULL;
	g_variant_get(r, "(as)", &it);
	while (!app && g_variant_iter_next(it, "&s", &name)) {
		if (name[0] != ':')
			continue;
		GVariant *p = g_dbus_connection_call_sync(
		        bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
		        "org.freedesktop.DBus", "GetConnectionUnixProcessID",
		        g_variant_new("(s)", name), NULL, 0, CALL_MS, NULL, NULL);
		guint32 got = 0;
		if (p) {
			g_variant_get(p, "(u)", &got);
			g_variant_unref(p);
		}
		if (got == pid)
			app = g_strdup(name);
	}
	g_variant_iter_free(it);
	g_variant_unref(r);
	return app;
}

/* GTK 3's bridge serves GetItems once a client has registered a listener. */
static void register_listener(GDBusConnection *bus)
{
	const char *none[] = {NULL};
	GVariant *r = g_dbus_connection_call_sync(
	        bus, "org.a11y.atspi.Registry", "/org/a11y/atspi/registry",
	        "org.a11y.atspi.Registry", "RegisterEvent",
	        g_variant_new("(s^ass)", "object:children-changed", none, ""), NULL, 0, CALL_MS,
	        NULL, NULL);
	if (r)
		g_variant_unref(r);
}

/* act: the path of the item named name (a showing one first), or NULL. */
static char *item_named(GVariant *items, const char *name)
{
	char *pick = NULL;
	bool pick_showing = false;
	for (size_t i = 0; i < g_variant_n_children(items) && !pick_showing; i++) {
		GVariant *item = g_variant_get_child_value(items, i), *ifaces, *iname, *states;
		const char *path = NULL;
		g_variant_get_child(item, 0, "(&s&o)", NULL, &path);
		item_parts(item, &ifaces, &iname, &states);
		bool named = iname && !strcmp(g_variant_get_string(iname, NULL), name);
		bool showing = states && (states_of(states) & (1ull << ATSPI_STATE_SHOWING));
		if (named && (!pick || showing)) {
			g_free(pick);
			pick = g_strdup(path);
			pick_showing = showing;
		}
		if (ifaces)
			g_variant_unref(ifaces);
		if (iname)
			g_variant_unref(iname);
		if (states)
			g_variant_unref(states);
		g_variant_unref(item);
	}
	return pick;
}

/* The index of the click action in a GetActions reply: "click", "press" or
 * "activate", else the first; -1: none. */
static int pick_action(GVariant *reply)
{
	GVariantIter *it = NULL;
	const char *aname;
	int k = 0, pick = -1;
	g_variant_get(reply, "(a(sss))", &it);
	while (g_variant_iter_next(it, "(&s&s&s)", &aname, NULL, NULL)) {
		if (pick < 0 && (!strcmp(aname, "click") || !strcmp(aname, "press") ||
		                 !strcmp(aname, "activate")))
			pick = k;
		k++;
	}
	g_variant_iter_free(it);
	return pick >= 0 ? pick : k > 0 ? 0 : -1;
}

/* act: the index of the item's click action (GetActions), -1: none. */
static int click_action(GDBusConnection *bus, const char *app, const char *path)
{
	GVariant *r = g_dbus_connection_call_sync(
	        bus, app, path, ATSPI_DBUS_INTERFACE_ACTION, "GetActions", NULL,
	        G_VARIANT_TYPE("(a(sss))"), G_DBUS_CALL_FLAGS_NO_AUTO_START, CALL_MS, NULL, NULL);
	if (!r)
		return -1;
	int pick = pick_action(r);
	g_variant_unref(r);
	return pick;
}

static void gap(void)
{
	g_usleep((gulong)(getenv("GAP_MS") ? atoi(getenv("GAP_MS")) : 300) * 1000);
}

static void act_run(GDBusConnection *bus, const char *app, const char *name)
{
	double t0 = now_ms();
	GVariant *res = g_dbus_connection_call_sync(
	        bus, app, "/org/a11y/atspi/cache", "org.a11y.atspi.Cache", "GetItems", NULL, NULL,
	        G_DBUS_CALL_FLAGS_NO_AUTO_START, CALL_MS, NULL, NULL);
	GVariant *items = res ? g_variant_get_child_value(res, 0) : NULL;
	char *path = items ? item_named(items, name) : NULL;
	int action = path ? click_action(bus, app, path) : -1;
	GVariant *done = action >= 0 ? g_dbus_connection_call_sync(
	                                       bus, app, path, ATSPI_DBUS_INTERFACE_ACTION,
	                                       "DoAction", g_variant_new("(i)", action), NULL,
	                                       G_DBUS_CALL_FLAGS_NO_AUTO_START, CALL_MS, NULL, NULL)
	                             : NULL;
	printf("%.2f %zu 3%s\n", now_ms() - t0, items ? g_variant_n_children(items) : 0,
	       done ? "" : " (not done)");
	fflush(stdout);
	if (done)
		g_variant_unref(done);
	if (items)
		g_variant_unref(items);
	if (res)
		g_variant_unref(res);
	g_free(path);
	gap();
}

/* findact with no showing match: the hidden one's action, once all is read. */
static void act_on_hidden(floor_run *r, node *holder)
{
	if (!r->cand_path)
		return;
	holder->path = r->cand_path;
	ask(r, holder, r->cand_path, ATSPI_DBUS_INTERFACE_ACTION, "GetActions", NULL, got_actions);
	while (r->pending > 0)
		g_main_context_iteration(NULL, TRUE);
	holder->path = NULL;
}

static void one_run(GDBusConnection *bus, const char *app, const char *find, bool act)
{
	floor_run r = {.bus = bus, .app = app, .find = find, .act = act};
	r.all = g_ptr_array_new_with_free_func(node_free);
	node holder = {.r = &r};
	double t0 = now_ms();
	if (find || !cached_walk(&r, &holder)) {
		r.nodes = 0;
		add_node(&r, "/org/a11y/atspi/accessible/root", 0);
	}
	while (r.pending > 0)
		g_main_context_iteration(NULL, TRUE);
	if (act && !r.found_at)
		act_on_hidden(&r, &holder);
	double end = act ? r.acted_at : r.found_at ? r.found_at : now_ms();
	if (act && !end)
		printf("n/a %d %d (not done)\n", r.nodes, r.calls);
	else
		printf("%.2f %d %d\n", end - t0, r.nodes, r.calls);
	fflush(stdout);
	g_ptr_array_free(r.all, TRUE);
	g_free(r.cand_path);
	if (act)
		gap();
}

/* The bridge builds its cache on the registration: wait for it (a bench
 * tool's setup, 1 s at most; an app without a cache never serves one). */
static void await_cache(GDBusConnection *bus, const char *app)
{
	for (int k = 0; k < 50; k++) {
		GVariant *r = g_dbus_connection_call_sync(
		        bus, app, "/org/a11y/atspi/cache", "org.a11y.atspi.Cache", "GetItems", NULL,
		        NULL, G_DBUS_CALL_FLAGS_NO_AUTO_START, CALL_MS, NULL, NULL);
		if (r) { /* Qt 5's answer is an empty list: it has none */
			g_variant_unref(r);
			return;
		}
		g_usleep(20000);
	}
}

int main(int argc, char **argv)
{
	bool find = argc == 5 && !strcmp(argv[1], "find");
	bool act = argc == 5 && !strcmp(argv[1], "act");
	bool findact = argc == 5 && !strcmp(argv[1], "findact");
	find = find || findact;
	if (!find && !act && !(argc == 4 && !strcmp(argv[1], "walk"))) {
		fprintf(stderr, "usage: bench_atspi_floor walk PID RUNS | find|findact|act PID "
		                "RUNS NAME\n");
		return 2;
	}
	GDBusConnection *bus = a11y_bus();
	char *app = bus ? app_of_pid(bus, (guint32)atoi(argv[2])) : NULL;
	if (!app) {
		fprintf(stderr, "bench_atspi_floor: no accessibility bus connection of pid %s\n",
		        argv[2]);
		return 1;
	}
	register_listener(bus);
	if (!find)
		await_cache(bus, app);
	for (int k = 0; k < atoi(argv[3]); k++)
		if (act)
			act_run(bus, app, argv[4]);
		else
			one_run(bus, app, find ? argv[4] : NULL, findact);
	g_free(app);
	g_object_unref(bus);
	return 0;
}
