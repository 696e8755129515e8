/* The accessibility backend: finding the bus, the apps on it, states and
 * actions. GDBus is used for every call (not libatspi's synchronous API):
 * libatspi finds its bus by itself once per process and cannot be pointed at
 * the address we found (e.g. from the session's /proc environment), and each
 * call here carries its own timeout on a context we iterate through
 * ksr_wait_fds, so a SIGSTOPped app costs one bounded timeout, never a hang. */
#include "backend/atspi/priv.h"
#include "ksr/proc.h"

#include <atspi/atspi-constants.h>
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "ksr/strbuf.h"
#include "ksr/x11.h"

#define ENVIRON_MAX   (256 * 1024)
#define PROC_SCAN_MAX 4 /* distinct session bus addresses tried from /proc */

const char *ksr_atspi_source_name(ksr_atspi_source s)
{
	switch (s) {
	case KSR_ATSPI_SRC_ENV:
		return "AT_SPI_BUS_ADDRESS";
	case KSR_ATSPI_SRC_X_ROOT:
		return "X root property AT_SPI_BUS";
	case KSR_ATSPI_SRC_SESSION:
		return "session bus (DBUS_SESSION_BUS_ADDRESS)";
	case KSR_ATSPI_SRC_PROC_ENV:
		return "session bus from the session's process environment";
	}
	return "unknown";
}

const char *ksr_atspi_address(const ksr_atspi *a)
{
	return a ? a->address : NULL;
}

ksr_atspi_source ksr_atspi_bus_source(const ksr_atspi *a)
{
	return a ? a->source : KSR_ATSPI_SRC_ENV;
}

void ksr_atspi_close(ksr_atspi *a)
{
	if (!a)
		return;
	for (int i = 0; i < 2 && a->conn; i++)
		if (a->apps_sub[i])
			g_dbus_connection_signal_unsubscribe(a->conn, a->apps_sub[i]);
	if (a->conn) {
		g_dbus_connection_close_sync(a->conn, NULL, NULL);
		g_object_unref(a->conn);
	}
	if (a->ctx) {
		/* Let the connection's last idle callbacks run before the context goes. */
		int none = 0;
		ksr_atspi_ctx_enter(a->ctx);
		while (g_main_context_iteration(a->ctx, FALSE))
			;
		ksr_atspi_drain(a->ctx, &none);
		ksr_atspi_ctx_leave(a->ctx);
		g_main_context_unref(a->ctx);
	}
	free(a->address);
	free(a);
}

/* ---- discovery ---- */

char *ksr_atspi_environ_lookup(const char *block, size_t len, const char *name)
{
	size_t nlen = strlen(name);
	for (size_t i = 0; i < len;) {
		const char *entry = block + i;
		size_t elen = strnlen(entry, len - i);
		if (elen > nlen && strncmp(entry, name, nlen) == 0 && entry[nlen] == '=')
			return ksr_xstrndup(entry + nlen + 1, elen - nlen - 1);
		i += elen + 1;
	}
	return NULL;
}

char *ksr_atspi_read_environ(int pid, size_t *len)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/environ", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	char *buf = ksr_xmalloc(ENVIRON_MAX);
	size_t n = 0;
	ssize_t r;
	while (n < ENVIRON_MAX && (r = read(fd, buf + n, ENVIRON_MAX - n)) > 0)
		n += (size_t)r;
	close(fd);
	*len = n;
	return buf;
}

/* DBUS_SESSION_BUS_ADDRESS of pid, when its DISPLAY is ours (or unknown;
 * strict: when it is ours). */
static char *proc_session_address(int pid, const char *display, bool strict)
{
	size_t len = 0;
	char *env = ksr_atspi_read_environ(pid, &len);
	if (!env)
		return NULL;
	char *addr = ksr_atspi_environ_lookup(env, len, "DBUS_SESSION_BUS_ADDRESS");
	char *disp = ksr_atspi_environ_lookup(env, len, "DISPLAY");
	bool other = display && disp ? strcmp(disp, display) != 0 : strict;
	if (addr && other) {
		free(addr);
		addr = NULL;
	}
	free(disp);
	free(env);
	return addr;
}

/* A candidate address and when the newest process naming it started. */
typedef struct bus_candidate {
	char *addr;
	unsigned long long started;
} bus_candidate;

static int newest_first(const void *a, const void *b)
{
	unsigned long long x = ((const bus_candidate *)a)->started,
	                   y = ((const bus_candidate *)b)->started;
	return x < y ? 1 : x > y ? -1 : 0;
}

/* Candidate session bus addresses from /proc: the app's first, then other
 * processes of our user on our display (a `docker exec` shell has none),
 * the bus of the most recently started process first: a session bus left
 * behind by an earlier X server with the same display number (an autolaunched
 * dbus-daemon and its at-spi launcher outlive their session on a shared
 * machine) is older than the session that is up now; /proc's pid order put
 * it first. strict: only those that name our display (another session's bus,
 * on a machine with several, is never taken for ours). */
static size_t proc_candidates(int app_pid, bool strict, char **out, size_t cap)
{
	const char *display = getenv("DISPLAY");
	size_t n = 0;
	if (app_pid > 0 && (out[n] = proc_session_address(app_pid, display, strict)))
		n++;
	size_t first = n;
	bus_candidate *c = calloc(cap, sizeof *c);
	size_t m = 0;
	DIR *dir = c ? opendir("/proc") : NULL;
	struct dirent *e;
	while (dir && first + m < cap && (e = readdir(dir))) {
		int pid = atoi(e->d_name);
		if (pid <= 0 || pid == app_pid || pid == getpid())
			continue;
		char *addr = proc_session_address(pid, display, strict);
		if (!addr || strncmp(addr, "disabled:", 9) == 0 ||
		    (first && !strcmp(out[0], addr))) {
			free(addr);
			continue;
		}
		unsigned long long started = ksr_proc_start_ticks(pid);
		size_t i = 0;
		while (i < m && strcmp(c[i].addr, addr) != 0)
			i++;
		if (i < m) {
			free(addr);
			if (started > c[i].started)
				c[i].started = started;
			continue;
		}
		c[m++] = (bus_candidate){addr, started};
	}
	if (dir)
		closedir(dir);
	if (m)
		qsort(c, m, sizeof *c, newest_first);
	for (size_t i = 0; i < m; i++)
		out[n++] = c[i].addr;
	free(c);
	return n;
}

static void set_enabled(GMainContext *ctx, GDBusConnection *session, ksr_deadline d)
{
	ksr_err ignored = {0};
	GVariant *r = ksr_atspi_call(
	        ctx, session, "org.a11y.Bus", "/org/a11y/bus", "org.freedesktop.DBus.Properties",
	        "Set",
	        g_variant_new("(ssv)", "org.a11y.Status", "IsEnabled", g_variant_new_boolean(TRUE)),
	        NULL, d, &ignored);
	if (r)
		g_variant_unref(r);
}

/* org.a11y.Bus.GetAddress on the session bus at session_addr (IsEnabled set too). */
static char *a11y_address_from_session(GMainContext *ctx, const char *session_addr, ksr_deadline d,
                                       ksr_err *err)
{
	GDBusConnection *session = ksr_atspi_connect(ctx, session_addr, d, err);
	if (!session)
		return NULL;
	char *addr = NULL;
	GVariant *r = ksr_atspi_call(ctx, session, "org.a11y.Bus", "/org/a11y/bus", "org.a11y.Bus",
	                             "GetAddress", NULL, "(s)", d, err);
	if (r) {
		const char *s = NULL;
		g_variant_get(r, "(&s)", &s);
		addr = s && *s ? ksr_xstrdup(s) : NULL;
		g_variant_unref(r);
		if (!addr)
			ksr_err_set(err, "org.a11y.Bus returned an empty address");
		else
			set_enabled(ctx, session, d);
	}
	g_dbus_connection_close_sync(session, NULL, NULL);
	g_object_unref(session);
	return addr;
}

static bool try_bus(ksr_atspi *a, char *addr, ksr_atspi_source src, ksr_deadline d, char *tried,
                    size_t cap)
{
	ksr_err e = {0};
	a->conn = ksr_atspi_connect(a->ctx, addr, d, &e);
	if (a->conn) {
		a->address = addr;
		a->source = src;
		return true;
	}
	size_t n = strlen(tried);
	snprintf(tried + n, cap - n, "%s%s: %s", n ? "; " : "", ksr_atspi_source_name(src), e.msg);
	if (!a->silent[0] && strstr(e.msg, KSR_ATSPI_BUS_SILENT))
		snprintf(a->silent, sizeof a->silent, "%.150s, named by %s", addr,
		         ksr_atspi_source_name(src));
	free(addr);
	return false;
}

static bool try_session(ksr_atspi *a, const char *session_addr, ksr_atspi_source src,
                        ksr_deadline d, char *tried, size_t cap)
{
	ksr_err e = {0};
	char *addr = a11y_address_from_session(a->ctx, session_addr, d, &e);
	if (addr)
		return try_bus(a, addr, src, d, tried, cap);
	size_t n = strlen(tried);
	snprintf(tried + n, cap - n, "%s%s: %s", n ? "; " : "", ksr_atspi_source_name(src), e.msg);
	return false;
}

static bool discover(ksr_atspi *a, const ksr_atspi_opts *o, ksr_deadline d, char *tried, size_t cap)
{
	const char *env = getenv("AT_SPI_BUS_ADDRESS");
	if (env && *env && try_bus(a, ksr_xstrdup(env), KSR_ATSPI_SRC_ENV, d, tried, cap))
		return true;
	char *prop = o->x ? ksr_x11_root_property_string(o->x, "AT_SPI_BUS", NULL) : NULL;
	a->root_names_bus = prop != NULL;
	if (prop && try_bus(a, prop, KSR_ATSPI_SRC_X_ROOT, d, tried, cap))
		return true;
	const char *session = getenv("DBUS_SESSION_BUS_ADDRESS");
	if (session && *session)
		return try_session(a, session, KSR_ATSPI_SRC_SESSION, d, tried, cap);
	char *cands[PROC_SCAN_MAX] = {0};
	size_t n = proc_candidates(o->app_pid, false, cands, PROC_SCAN_MAX);
	bool ok = false;
	for (size_t i = 0; i < n; i++) {
		if (!ok && !ksr_deadline_passed(d))
			ok = try_session(a, cands[i], KSR_ATSPI_SRC_PROC_ENV, d, tried, cap);
		free(cands[i]);
	}
	return ok;
}

int ksr_atspi_open(const ksr_atspi_opts *opts, ksr_deadline d, ksr_atspi **out, ksr_err *err)
{
	ksr_atspi_opts o = opts ? *opts : (ksr_atspi_opts){0};
	*out = NULL;
	ksr_atspi *a = ksr_xcalloc(1, sizeof *a);
	a->ctx = g_main_context_new();
	char tried[400] = "";
	ksr_atspi_ctx_enter(a->ctx);
	bool ok = discover(a, &o, d, tried, sizeof tried);
	ksr_atspi_ctx_leave(a->ctx);
	if (!ok && a->silent[0]) {
		/* A bus is there and did not answer: the session's, not a missing setup. */
		ksr_err_set(
		        err,
		        "the accessibility bus (its dbus-daemon at %s) did not answer the "
		        "connection: the session's accessibility stack is at fault, not the app "
		        "(%.400s)",
		        a->silent, tried);
		ksr_atspi_close(a);
		return -1;
	}
	if (!ok) {
		ksr_atspi_close(a);
		return ksr_err_set(err,
		                   "no AT-SPI bus is reachable (%s); start a D-Bus session bus and "
		                   "at-spi-bus-launcher (or set AT_SPI_BUS_ADDRESS)",
		                   tried[0] ? tried
		                            : "no AT_SPI_BUS_ADDRESS, no AT_SPI_BUS root "
		                              "property, no session bus found");
	}
	*out = a;
	return 0;
}

/* Activate the registry (at-spi2-registryd) before any app starts: a GTK4 app
 * that starts first registers only later, when the registry appears. */
static void start_registry(GMainContext *ctx, const char *session_address, ksr_deadline d)
{
	ksr_err ignored = {0};
	char *addr = a11y_address_from_session(ctx, session_address, d, &ignored);
	GDBusConnection *a11y = addr ? ksr_atspi_connect(ctx, addr, d, &ignored) : NULL;
	GVariant *r = a11y ? ksr_atspi_call(ctx, a11y, ATSPI_REGISTRY, ATSPI_ROOT_PATH,
	                                    ATSPI_IFACE_ACCESSIBLE, "GetChildren", NULL, "(a(so))",
	                                    d, &ignored)
	                   : NULL;
	if (r)
		g_variant_unref(r);
	if (a11y) {
		g_dbus_connection_close_sync(a11y, NULL, NULL);
		g_object_unref(a11y);
	}
	free(addr);
}

/* The accessibility bus's address from the session bus: ours, else the first
 * one a process on our display names (a `docker exec` shell in a Kasm
 * container has none of its own). */
static char *a11y_address_any_session(GMainContext *ctx, ksr_deadline d, ksr_err *err)
{
	const char *session = getenv("DBUS_SESSION_BUS_ADDRESS");
	if (session && *session)
		return a11y_address_from_session(ctx, session, d, err);
	char *cands[PROC_SCAN_MAX] = {0};
	size_t n = proc_candidates(0, true, cands, PROC_SCAN_MAX);
	char *addr = NULL;
	for (size_t i = 0; i < n; i++) {
		if (!addr && !ksr_deadline_passed(d))
			addr = a11y_address_from_session(ctx, cands[i], d, err);
		free(cands[i]);
	}
	if (!n)
		ksr_err_set(err, "no session bus to ask for the AT-SPI bus (no "
		                 "DBUS_SESSION_BUS_ADDRESS here or in this display's processes)");
	return addr;
}

int ksr_atspi_publish_root(ksr_x11 *x, ksr_deadline d, char **published, ksr_err *err)
{
	if (published)
		*published = NULL;
	const char *env = getenv("AT_SPI_BUS_ADDRESS");
	char *have = ksr_x11_root_property_string(x, "AT_SPI_BUS", NULL);
	bool needed = !have && !(env && *env);
	free(have);
	if (!needed)
		return 0;
	GMainContext *ctx = g_main_context_new();
	ksr_atspi_ctx_enter(ctx);
	char *addr = a11y_address_any_session(ctx, d, err);
	int none = 0;
	ksr_atspi_drain(ctx, &none);
	ksr_atspi_ctx_leave(ctx);
	g_main_context_unref(ctx);
	int rc = addr ? ksr_x11_root_property_add_string(x, "AT_SPI_BUS", addr, err) : -1;
	if (rc > 0 && published)
		*published = addr;
	else
		free(addr);
	return rc;
}

static void on_owner_changed(GDBusConnection *c, const gchar *sender, const gchar *path,
                             const gchar *iface, const gchar *member, GVariant *params, gpointer ud)
{
	(void)c, (void)sender, (void)path, (void)iface, (void)member, (void)params;
	*(bool *)ud = true;
}

static bool a11y_bus_owned(GMainContext *ctx, GDBusConnection *c, ksr_deadline d, ksr_err *err)
{
	GVariant *r = ksr_atspi_call(ctx, c, "org.freedesktop.DBus", "/org/freedesktop/DBus",
	                             "org.freedesktop.DBus", "NameHasOwner",
	                             g_variant_new("(s)", "org.a11y.Bus"), "(b)", d, err);
	gboolean owned = FALSE;
	if (r) {
		g_variant_get(r, "(b)", &owned);
		g_variant_unref(r);
	}
	return owned;
}

/* org.a11y.Bus's owner is waited for by NameOwnerChanged (subscribed before
 * the first NameHasOwner, so a claim between the two is not missed). */
int ksr_atspi_session_ready(const char *session_address, ksr_deadline d, ksr_err *err)
{
	GMainContext *ctx = g_main_context_new();
	ksr_atspi_ctx_enter(ctx);
	GDBusConnection *c = ksr_atspi_connect(ctx, session_address, d, err);
	bool changed = false;
	guint sub = c ? g_dbus_connection_signal_subscribe(
	                        c, "org.freedesktop.DBus", "org.freedesktop.DBus",
	                        "NameOwnerChanged", "/org/freedesktop/DBus", "org.a11y.Bus",
	                        G_DBUS_SIGNAL_FLAGS_NONE, on_owner_changed, &changed, NULL)
	              : 0;
	int rc = -1;
	ksr_wait w = KSR_WAIT_READY;
	while (c && rc < 0 && w != KSR_WAIT_CANCELLED) {
		changed = false;
		if (a11y_bus_owned(ctx, c, d, err)) {
			set_enabled(ctx, c, d);
			start_registry(ctx, session_address, d);
			rc = 0;
			break;
		}
		while (!changed && !ksr_deadline_passed(d) &&
		       (w = ksr_atspi_iterate(ctx, d, false)) != KSR_WAIT_CANCELLED &&
		       w != KSR_WAIT_ERROR)
			;
		if (!changed) {
			ksr_err_set(err, "org.a11y.Bus got no owner on the session bus (%s)",
			            w == KSR_WAIT_CANCELLED ? "cancelled" : "timed out");
			break;
		}
	}
	if (c) {
		g_dbus_connection_signal_unsubscribe(c, sub);
		g_dbus_connection_close_sync(c, NULL, NULL);
		g_object_unref(c);
	}
	int none = 0;
	ksr_atspi_drain(ctx, &none);
	ksr_atspi_ctx_leave(ctx);
	g_main_context_unref(ctx);
	return rc;
}

/* ---- applications ---- */

void ksr_atspi_app_clear(ksr_atspi_app *app)
{
	if (!app)
		return;
	free(app->bus);
	free(app->name);
	free(app->toolkit);
	*app = (ksr_atspi_app){0};
}

static void ksr_atspi_apps_free(ksr_atspi_app *apps, size_t n)
{
	for (size_t i = 0; apps && i < n; i++)
		ksr_atspi_app_clear(&apps[i]);
	free(apps);
}

static int bus_pid(ksr_atspi *a, const char *bus, ksr_deadline d)
{
	ksr_err e = {0};
	GVariant *r =
	        ksr_atspi_call(a->ctx, a->conn, "org.freedesktop.DBus", "/org/freedesktop/DBus",
	                       "org.freedesktop.DBus", "GetConnectionUnixProcessID",
	                       g_variant_new("(s)", bus), "(u)", d, &e);
	guint32 pid = 0;
	if (r) {
		g_variant_get(r, "(u)", &pid);
		g_variant_unref(r);
	}
	return (int)pid;
}

/* The registered applications, each with its PID. -3 when the registry (or
 * the bus) did not answer and the app with app_pid does (ksr_atspi_registry_silent). */
static int ksr_atspi_apps(ksr_atspi *a, int app_pid, ksr_deadline d, ksr_atspi_app **apps,
                          size_t *n, ksr_err *err)
{
	*apps = NULL;
	*n = 0;
	ksr_atspi_ctx_enter(a->ctx);
	GVariant *r = NULL;
	/* Twice: the first call may be the one that activates the registry. */
	for (int i = 0; i < 2 && !r && !ksr_deadline_passed(d) && !ksr_cancelled(); i++)
		r = ksr_atspi_call(a->ctx, a->conn, ATSPI_REGISTRY, ATSPI_ROOT_PATH,
		                   ATSPI_IFACE_ACCESSIBLE, "GetChildren", NULL, "(a(so))", d, err);
	if (r) {
		GVariantIter *it = NULL;
		const char *bus, *path;
		g_variant_get(r, "(a(so))", &it);
		*apps = ksr_xcalloc(g_variant_iter_n_children(it) + 1, sizeof **apps);
		while (g_variant_iter_next(it, "(&s&o)", &bus, &path)) {
			ksr_atspi_app *app = &(*apps)[(*n)++];
			app->bus = ksr_xstrdup(bus);
			app->pid = bus_pid(a, bus, d);
		}
		g_variant_iter_free(it);
		g_variant_unref(r);
	}
	int rc = r ? 0
	         : ksr_cancelled()
	                 ? -1
	                 : ksr_atspi_registry_silent(a, app_pid, "GetChildren of its root", err);
	ksr_atspi_ctx_leave(a->ctx);
	return rc;
}

static int parse_major(const char *version)
{
	return version ? atoi(version) : 0;
}

/* One string property of the application object; NULL when unanswered. */
static char *app_property(ksr_atspi *a, const ksr_atspi_app *app, const char *prop, ksr_deadline d)
{
	return ksr_atspi_string_property(a, app->bus, ATSPI_ROOT_PATH, ATSPI_IFACE_APPLICATION,
	                                 prop, d);
}

/* The application object's name: the first question to an app. patient: it
 * is the app looked for, whose first answer may take as long as d allows (an
 * app just started on a loaded machine is busy, not hung); an app only asked
 * for its name keeps the usual bound per call. */
static GVariant *ask_name(ksr_atspi *a, const char *bus, bool patient, ksr_deadline d, ksr_err *err)
{
	GVariant *params = g_variant_new("(ss)", ATSPI_IFACE_ACCESSIBLE, "Name");
	if (patient)
		return ksr_atspi_call_patient(a->ctx, a->conn, bus, ATSPI_ROOT_PATH,
		                              "org.freedesktop.DBus.Properties", "Get", params,
		                              "(v)", d, err);
	return ksr_atspi_call(a->ctx, a->conn, bus, ATSPI_ROOT_PATH,
	                      "org.freedesktop.DBus.Properties", "Get", params, "(v)", d, err);
}

/* The application object's name and toolkit (one round trip each, bounded). */
static int app_details(ksr_atspi *a, ksr_atspi_app *app, bool patient, ksr_deadline d, ksr_err *err)
{
	GVariant *r = ask_name(a, app->bus, patient, d, err);
	if (!r)
		return -1;
	GVariant *v = NULL;
	g_variant_get(r, "(v)", &v);
	if (g_variant_is_of_type(v, G_VARIANT_TYPE_STRING))
		app->name = ksr_xstrdup(g_variant_get_string(v, NULL));
	g_variant_unref(v);
	g_variant_unref(r);
	/* Get, not GetAll: Qt 5's bridge reads a second argument of every
	 * Properties call and segfaults on GetAll's single one. */
	app->toolkit = app_property(a, app, "ToolkitName", d);
	char *version = app_property(a, app, "Version", d);
	app->toolkit_major = parse_major(version);
	free(version);
	return 0;
}

static void app_take(ksr_atspi_app *dst, ksr_atspi_app *src)
{
	*dst = *src;
	*src = (ksr_atspi_app){0};
}

/* Why no app was found: the cause its process shows (no bridge loaded, one
 * turned off), else the guesses. */
static void not_found_reason(const ksr_atspi *a, int pid, const char *name_hint, size_t n,
                             ksr_err *err)
{
	ksr_atspi_bridge b;
	char cause[400];
	ksr_atspi_bridge_of(pid, &b);
	ksr_atspi_bridge_cause(&b, pid, a->root_names_bus, cause, sizeof cause);
	if (cause[0]) {
		ksr_err_set(err,
		            "%s; no application on the AT-SPI bus has pid %d%s%s (%zu registered)",
		            cause, pid, name_hint ? " or the name " : "",
		            name_hint ? name_hint : "", n);
		return;
	}
	ksr_err_set(err,
	            "no application on the AT-SPI bus has pid %d%s%s (%zu registered); is its "
	            "accessibility bridge off (NO_AT_BRIDGE, GTK_A11Y=none)%s?",
	            pid, name_hint ? " or the name " : "", name_hint ? name_hint : "", n,
	            a->root_names_bus
	                    ? ", or Qt without QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1"
	                    : ", or a Qt 5 app started while the X root had no AT_SPI_BUS "
	                      "property (this session lacks it: its at-spi-bus-launcher ran "
	                      "without DISPLAY, or the X server reset since; Qt 5 joins "
	                      "reliably only through it, docs/accessibility.md)");
}

int ksr_atspi_find_app(ksr_atspi *a, int pid, const char *name_hint, ksr_deadline d,
                       ksr_atspi_app *out, const char **found_by, ksr_err *err)
{
	*out = (ksr_atspi_app){0};
	ksr_atspi_app *apps = NULL;
	size_t n = 0;
	int listed = ksr_atspi_apps(a, pid, d, &apps, &n, err);
	if (listed < 0)
		return listed;
	int rc = -1;
	ksr_err last = {0};
	ksr_atspi_ctx_enter(a->ctx);
	for (size_t i = 0; i < n && rc < 0 && pid > 0; i++) {
		if (apps[i].pid != pid)
			continue;
		rc = app_details(a, &apps[i], true, d, &last);
		if (rc == 0) {
			app_take(out, &apps[i]);
			*found_by = "pid";
		} else {
			ksr_err_set(err,
			            "the app (pid %d) is on the AT-SPI bus but did not answer: %s",
			            pid, last.msg);
			rc = -2;
		}
	}
	for (size_t i = 0; i < n && rc == -1 && name_hint; i++) {
		if (app_details(a, &apps[i], false, d, &last) == 0 && apps[i].name &&
		    strcasecmp(apps[i].name, name_hint) == 0) {
			app_take(out, &apps[i]);
			*found_by = "name";
			rc = 0;
		}
	}
	ksr_atspi_ctx_leave(a->ctx);
	if (rc == -1)
		not_found_reason(a, pid, name_hint, n, err);
	ksr_atspi_apps_free(apps, n);
	return rc;
}

/* ---- apps joining ---- */

static void on_apps_signal(GDBusConnection *c, const gchar *sender, const gchar *path,
                           const gchar *iface, const gchar *member, GVariant *params, gpointer ud)
{
	(void)c, (void)sender, (void)path, (void)iface, (void)member, (void)params;
	((ksr_atspi *)ud)->apps_changed = true;
}

void ksr_atspi_watch_apps(ksr_atspi *a)
{
	if (!a || !a->conn || a->apps_sub[0])
		return;
	ksr_atspi_ctx_enter(a->ctx); /* the callbacks run in a's context */
	a->apps_sub[0] = g_dbus_connection_signal_subscribe(
	        a->conn, NULL, "org.a11y.atspi.Event.Object", "ChildrenChanged", ATSPI_ROOT_PATH,
	        NULL, G_DBUS_SIGNAL_FLAGS_NONE, on_apps_signal, a, NULL);
	a->apps_sub[1] = g_dbus_connection_signal_subscribe(
	        a->conn, "org.freedesktop.DBus", "org.freedesktop.DBus", "NameOwnerChanged",
	        "/org/freedesktop/DBus", NULL, G_DBUS_SIGNAL_FLAGS_NONE, on_apps_signal, a, NULL);
	ksr_atspi_ctx_leave(a->ctx);
}

ksr_wait ksr_atspi_wait_apps(ksr_atspi *a, ksr_deadline d)
{
	if (!a || !a->apps_sub[0])
		return KSR_WAIT_ERROR;
	ksr_atspi_ctx_enter(a->ctx);
	ksr_wait w = KSR_WAIT_READY;
	while (!a->apps_changed && w == KSR_WAIT_READY) {
		w = ksr_atspi_iterate(a->ctx, d, false);
		if (w == KSR_WAIT_READY && !a->apps_changed && ksr_deadline_passed(d))
			w = KSR_WAIT_TIMEOUT;
		else if (w == KSR_WAIT_TIMEOUT && !ksr_deadline_passed(d))
			w = KSR_WAIT_READY; /* GLib's own timeout, not ours: go on */
	}
	if (a->apps_changed)
		w = KSR_WAIT_READY;
	a->apps_changed = false;
	ksr_atspi_ctx_leave(a->ctx);
	return w;
}

bool ksr_atspi_await_app(ksr_atspi *a, int find_rc, ksr_deadline until)
{
	if (ksr_deadline_passed(until))
		return false;
	bool busy = find_rc == -2 || find_rc == -3; /* asked again after one call's bound */
	ksr_deadline next =
	        busy ? ksr_deadline_min(until, ksr_deadline_in_ms(KSR_ATSPI_CALL_MS)) : until;
	ksr_wait w = ksr_atspi_wait_apps(a, next);
	return w == KSR_WAIT_READY || (w == KSR_WAIT_TIMEOUT && busy && !ksr_cancelled());
}

/* ---- states ---- */

static const struct {
	int index;
	const char *name;
} state_table[] = {
        {ATSPI_STATE_ACTIVE, "active"},
        {ATSPI_STATE_ARMED, "armed"},
        {ATSPI_STATE_BUSY, "busy"},
        {ATSPI_STATE_CHECKED, "checked"},
        {ATSPI_STATE_COLLAPSED, "collapsed"},
        {ATSPI_STATE_DEFUNCT, "defunct"},
        {ATSPI_STATE_EDITABLE, "editable"},
        {ATSPI_STATE_ENABLED, "enabled"},
        {ATSPI_STATE_EXPANDABLE, "expandable"},
        {ATSPI_STATE_EXPANDED, "expanded"},
        {ATSPI_STATE_FOCUSABLE, "focusable"},
        {ATSPI_STATE_FOCUSED, "focused"},
        {ATSPI_STATE_HAS_TOOLTIP, "has tooltip"},
        {ATSPI_STATE_HORIZONTAL, "horizontal"},
        {ATSPI_STATE_ICONIFIED, "iconified"},
        {ATSPI_STATE_MODAL, "modal"},
        {ATSPI_STATE_MULTI_LINE, "multi line"},
        {ATSPI_STATE_MULTISELECTABLE, "multiselectable"},
        {ATSPI_STATE_OPAQUE, "opaque"},
        {ATSPI_STATE_PRESSED, "pressed"},
        {ATSPI_STATE_RESIZABLE, "resizable"},
        {ATSPI_STATE_SELECTABLE, "selectable"},
        {ATSPI_STATE_SELECTED, "selected"},
        {ATSPI_STATE_SENSITIVE, "sensitive"},
        {ATSPI_STATE_SHOWING, "showing"},
        {ATSPI_STATE_SINGLE_LINE, "single line"},
        {ATSPI_STATE_STALE, "stale"},
        {ATSPI_STATE_TRANSIENT, "transient"},
        {ATSPI_STATE_VERTICAL, "vertical"},
        {ATSPI_STATE_VISIBLE, "visible"},
        {ATSPI_STATE_MANAGES_DESCENDANTS, "manages descendants"},
        {ATSPI_STATE_INDETERMINATE, "indeterminate"},
        {ATSPI_STATE_REQUIRED, "required"},
        {ATSPI_STATE_TRUNCATED, "truncated"},
        {ATSPI_STATE_ANIMATED, "animated"},
        {ATSPI_STATE_INVALID_ENTRY, "invalid entry"},
        {ATSPI_STATE_SUPPORTS_AUTOCOMPLETION, "supports autocompletion"},
        {ATSPI_STATE_SELECTABLE_TEXT, "selectable text"},
        {ATSPI_STATE_IS_DEFAULT, "is default"},
        {ATSPI_STATE_VISITED, "visited"},
        {ATSPI_STATE_CHECKABLE, "checkable"},
        {ATSPI_STATE_HAS_POPUP, "has popup"},
        {ATSPI_STATE_READ_ONLY, "read only"},
};
#define N_STATES (sizeof state_table / sizeof state_table[0])

/* Compare ignoring case, with '_' and '-' read as spaces. */
static bool words_equal(const char *a, const char *b)
{
	for (;; a++, b++) {
		char x = *a == '_' || *a == '-' ? ' ' : (char)tolower((unsigned char)*a);
		char y = *b == '_' || *b == '-' ? ' ' : (char)tolower((unsigned char)*b);
		if (x != y)
			return false;
		if (!x)
			return true;
	}
}

int ksr_atspi_state_index(const char *word)
{
	for (size_t i = 0; word && i < N_STATES; i++)
		if (words_equal(word, state_table[i].name))
			return state_table[i].index;
	return -1;
}

const char *ksr_atspi_state_name(int index)
{
	for (size_t i = 0; i < N_STATES; i++)
		if (state_table[i].index == index)
			return state_table[i].name;
	return NULL;
}

const char *const *ksr_atspi_state_names(void)
{
	static const char *names[N_STATES + 1];
	for (size_t i = 0; i < N_STATES; i++)
		names[i] = state_table[i].name;
	return names;
}

bool ksr_atspi_role_equal(const char *written, const char *role)
{
	return written && role && words_equal(written, role);
}

uint64_t ksr_atspi_states_from_variant(GVariant *au)
{
	uint64_t states = 0;
	gsize n = 0;
	const guint32 *w = g_variant_get_fixed_array(au, &n, sizeof(guint32));
	for (gsize i = 0; i < n && i < 2; i++)
		states |= (uint64_t)w[i] << (32 * i);
	return states;
}

int ksr_atspi_node_states(ksr_atspi *a, const ksr_atspi_app *app, const char *path, ksr_deadline d,
                          uint64_t *states, char **name, ksr_err *err)
{
	ksr_atspi_ctx_enter(a->ctx);
	GVariant *r = ksr_atspi_call(a->ctx, a->conn, app->bus, path, ATSPI_IFACE_ACCESSIBLE,
	                             "GetState", NULL, "(au)", d, err);
	if (r) {
		GVariant *au = g_variant_get_child_value(r, 0);
		*states = ksr_atspi_states_from_variant(au);
		g_variant_unref(au);
		g_variant_unref(r);
	}
	if (r && name) {
		*name = NULL;
		GVariant *v = ksr_atspi_call(
		        a->ctx, a->conn, app->bus, path, "org.freedesktop.DBus.Properties", "Get",
		        g_variant_new("(ss)", ATSPI_IFACE_ACCESSIBLE, "Name"), "(v)", d, err);
		if (v) {
			GVariant *s = NULL;
			g_variant_get(v, "(v)", &s);
			if (g_variant_is_of_type(s, G_VARIANT_TYPE_STRING))
				*name = ksr_xstrdup(g_variant_get_string(s, NULL));
			g_variant_unref(s);
			g_variant_unref(v);
		}
	}
	ksr_atspi_ctx_leave(a->ctx);
	return r ? 0 : -1;
}

/* ---- actions ---- */

int ksr_atspi_pick_action(const ksr_atspi_node *n)
{
	static const char *const preferred[] = {"click", "press", "activate", "toggle", "jump"};
	/* Only these: GTK4 lists a label's widget actions ("clipboard.copy",
	 * "menu.popup"...), and firing the first of those is no click. */
	for (size_t p = 0; p < sizeof preferred / sizeof *preferred; p++)
		for (size_t i = 0; i < n->n_actions; i++)
			if (n->actions[i] && strcasecmp(n->actions[i], preferred[p]) == 0)
				return (int)i;
	return -1;
}

int ksr_atspi_do_action(ksr_atspi *a, const ksr_atspi_app *app, const char *path, int index,
                        ksr_deadline d, ksr_err *err)
{
	ksr_atspi_ctx_enter(a->ctx);
	GVariant *r = ksr_atspi_call(a->ctx, a->conn, app->bus, path, ATSPI_IFACE_ACTION,
	                             "DoAction", g_variant_new("(i)", index), "(b)", d, err);
	gboolean ok = FALSE;
	if (r) {
		g_variant_get(r, "(b)", &ok);
		g_variant_unref(r);
		if (!ok)
			ksr_err_set(err, "the app refused action %d", index);
	}
	ksr_atspi_ctx_leave(a->ctx);
	return r && ok ? 0 : -1;
}

/* ---- nodes ---- */

char *ksr_atspi_node_path(const ksr_atspi_tree *t, size_t i)
{
	int chain[64];
	int n = 0;
	for (int k = (int)i; k > 0 && n < 64; k = t->nodes[k].parent)
		chain[n++] = k;
	ksr_strbuf out = {0};
	for (int j = n - 1; j >= 0; j--) {
		const ksr_atspi_node *nd = &t->nodes[chain[j]];
		char *dn = ksr_atspi_name_display(nd->name);
		const char *nm = dn && *dn ? dn : NULL;
		ksr_strbuf_addf(&out, "/%s%s%s%s", nd->role ? nd->role : "?", nm ? "[" : "",
		                nm ? nm : "", nm ? "]" : "");
		free(dn);
	}
	return ksr_strbuf_take(&out);
}

cJSON *ksr_atspi_node_json(const ksr_atspi_tree *t, size_t i)
{
	const ksr_atspi_node *n = &t->nodes[i];
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "role", n->role ? n->role : "");
	if (n->toolkit_role && !ksr_atspi_role_equal(n->toolkit_role, n->role))
		cJSON_AddStringToObject(o, "toolkit_role", n->toolkit_role);
	char *dn = ksr_atspi_name_display(n->name);
	cJSON_AddStringToObject(o, "name", dn ? dn : "");
	free(dn);
	cJSON *st = cJSON_AddArrayToObject(o, "states");
	for (int b = 0; b < 64; b++) {
		const char *sn = (n->states >> b) & 1 ? ksr_atspi_state_name(b) : NULL;
		if (sn)
			cJSON_AddItemToArray(st, cJSON_CreateString(sn));
	}
	cJSON *ac = cJSON_AddArrayToObject(o, "actions");
	for (size_t k = 0; k < n->n_actions; k++)
		cJSON_AddItemToArray(ac, cJSON_CreateString(n->actions[k] ? n->actions[k] : ""));
	if (n->has_extents) {
		cJSON *e = cJSON_AddObjectToObject(o, "extents");
		cJSON_AddNumberToObject(e, "x", n->x);
		cJSON_AddNumberToObject(e, "y", n->y);
		cJSON_AddNumberToObject(e, "w", n->w);
		cJSON_AddNumberToObject(e, "h", n->h);
	} else {
		cJSON_AddNullToObject(o, "extents");
	}
	char *path = ksr_atspi_node_path(t, i);
	cJSON_AddStringToObject(o, "path", path);
	free(path);
	return o;
}

bool ksr_atspi_node_matches(const ksr_atspi_node *n, const ksr_name_match *name, const char *role)
{
	return ksr_atspi_node_match_kind(n, name, role) > 0;
}

bool ksr_atspi_states_showing(uint64_t st, bool visible_is_showing)
{
	return (st & (1ull << ATSPI_STATE_SHOWING)) ||
	       (visible_is_showing && (st & (1ull << ATSPI_STATE_VISIBLE)));
}

bool ksr_atspi_tree_showing(const ksr_atspi_tree *t, size_t i)
{
	return t && i < t->len &&
	       ksr_atspi_states_showing(t->nodes[i].states, t->visible_is_showing);
}

/* Showing before hidden; within each, a name as the app spells it before
 * one that only matches with whitespace normalised; then tree order. */
int ksr_atspi_tree_find(const ksr_atspi_tree *t, const ksr_name_match *name, const char *role)
{
	int best = -1, best_rank = 0;
	for (size_t i = 1; i < t->len; i++) {
		int kind = ksr_atspi_node_match_kind(&t->nodes[i], name, role);
		if (!kind)
			continue;
		int rank = (ksr_atspi_tree_showing(t, i) ? 2 : 0) + kind; /* 1..4 */
		if (rank > best_rank)
			best = (int)i, best_rank = rank;
		if (rank == 4)
			break;
	}
	return best;
}
