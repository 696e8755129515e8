/* Who did not answer: after the registry (or the bus) left a call
 * unanswered, the party at fault is found by asking each directly, within a
 * short bound of its own: the bus daemon (GetId), then the app on its own
 * bus name (org.freedesktop.DBus.Peer.Ping, which GDBus and libdbus answer in
 * the app's connection). The registry's GetChildren is served by
 * at-spi2-registryd alone, so a silent registry with an app that answers is
 * the session's fault, not the app's (issue 31). Only the failure path pays
 * for these calls. */
#include "backend/atspi/priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROBE_MS 1000

static ksr_deadline probe_bound(void)
{
	return ksr_deadline_in_ms(PROBE_MS);
}

static GVariant *ask_bus(ksr_atspi *a, const char *method, GVariant *params, const char *type,
                         ksr_err *err)
{
	return ksr_atspi_call(a->ctx, a->conn, "org.freedesktop.DBus", "/org/freedesktop/DBus",
	                      "org.freedesktop.DBus", method, params, type, probe_bound(), err);
}

static int name_pid(ksr_atspi *a, const char *name)
{
	ksr_err ignored = {0};
	GVariant *r = ask_bus(a, "GetConnectionUnixProcessID", g_variant_new("(s)", name), "(u)",
	                      &ignored);
	guint32 pid = 0;
	if (r) {
		g_variant_get(r, "(u)", &pid);
		g_variant_unref(r);
	}
	return (int)pid;
}

/* The first unique name on the bus whose connection is pid's (malloc'd), or
 * NULL: the app's own connection, found without the registry. */
static char *app_bus_name(ksr_atspi *a, int pid)
{
	ksr_err ignored = {0};
	GVariant *r = ask_bus(a, "ListNames", NULL, "(as)", &ignored);
	if (!r)
		return NULL;
	char *found = NULL;
	GVariantIter *it = NULL;
	const char *name;
	g_variant_get(r, "(as)", &it);
	while (!found && g_variant_iter_next(it, "&s", &name))
		if (name[0] == ':' && name_pid(a, name) == pid)
			found = ksr_xstrdup(name);
	g_variant_iter_free(it);
	g_variant_unref(r);
	return found;
}

static bool app_answers(ksr_atspi *a, const char *bus)
{
	ksr_err ignored = {0};
	GVariant *r =
	        ksr_atspi_call(a->ctx, a->conn, bus, ATSPI_ROOT_PATH, "org.freedesktop.DBus.Peer",
	                       "Ping", NULL, NULL, probe_bound(), &ignored);
	if (r)
		g_variant_unref(r);
	return r != NULL;
}

bool ksr_atspi_bus_answers(ksr_atspi *a, ksr_err *err)
{
	if (!a || !a->conn)
		return true;
	ksr_atspi_ctx_enter(a->ctx);
	ksr_err bus_err = {0};
	GVariant *id = ask_bus(a, "GetId", NULL, "(s)", &bus_err);
	ksr_atspi_ctx_leave(a->ctx);
	if (id) {
		g_variant_unref(id);
		return true;
	}
	char *guess = strstr(bus_err.msg, " (is the app hung?)"); /* dbus.c's, not ours */
	if (guess)
		*guess = '\0';
	ksr_err_set(err,
	            "the accessibility bus (its dbus-daemon at %.120s) did not answer GetId within "
	            "%d ms (%.160s)",
	            a->address ? a->address : "?", PROBE_MS, bus_err.msg);
	return false;
}

int ksr_atspi_registry_silent(ksr_atspi *a, int app_pid, const char *call, ksr_err *err)
{
	if (ksr_cancelled())
		return -1;
	char was[KSR_ERR_MSG_MAX];
	snprintf(was, sizeof was, "%s", err->msg);
	/* dbus.c's guess for a silent app, which the registry is not */
	char *guess = strstr(was, " (is the app hung?)");
	if (guess)
		*guess = '\0';
	ksr_err bus_err = {0};
	GVariant *id = ask_bus(a, "GetId", NULL, "(s)", &bus_err);
	if (!id) {
		ksr_err_set(
		        err,
		        "the accessibility bus (its dbus-daemon at %.120s) did not answer GetId "
		        "within %d ms after %s was left unanswered (%.160s)",
		        a->address ? a->address : "?", PROBE_MS, call, bus_err.msg);
		return -3;
	}
	g_variant_unref(id);
	int registry = name_pid(a, ATSPI_REGISTRY);
	char *bus = app_pid > 0 ? app_bus_name(a, app_pid) : NULL;
	bool app_ok = bus && app_answers(a, bus);
	int rc = -1;
	if (!bus || app_ok) {
		char registry_pid[48] = "";
		if (registry > 0)
			snprintf(registry_pid, sizeof registry_pid, ", pid %d", registry);
		char app_said[160];
		if (bus)
			snprintf(app_said, sizeof app_said,
			         "while the app (pid %d, %s) answered a Ping", app_pid, bus);
		else
			snprintf(app_said, sizeof app_said,
			         "and the app has no connection on the bus to ask");
		ksr_err_set(err,
		            "the accessibility registry (%s%s) did not answer %s (%.160s) %s: the "
		            "session's accessibility stack is at fault, not the app",
		            ATSPI_REGISTRY, registry > 0 ? registry_pid : ", not on the bus", call,
		            was, app_said);
		rc = -3;
	} else {
		ksr_err_set(err, "%.300s; the app (pid %d, %s) did not answer a Ping either", was,
		            app_pid, bus);
	}
	free(bus);
	return rc;
}
