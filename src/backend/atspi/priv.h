/* State and D-Bus plumbing shared by atspi.c (bus discovery, apps, states,
 * actions) and atspi_walk.c (the pipelined walk). GDBus async calls are
 * dispatched on a private GMainContext that we iterate ourselves through
 * ksr_wait_fds, so every wait is bounded and cancellable. */
#ifndef KSR_BACKEND_ATSPI_PRIV_H
#define KSR_BACKEND_ATSPI_PRIV_H

#include <gio/gio.h>

#include "ksr/atspi.h"

#define ATSPI_IFACE_ACCESSIBLE  "org.a11y.atspi.Accessible"
#define ATSPI_IFACE_ACTION      "org.a11y.atspi.Action"
#define ATSPI_IFACE_COMPONENT   "org.a11y.atspi.Component"
#define ATSPI_IFACE_APPLICATION "org.a11y.atspi.Application"
#define ATSPI_ROOT_PATH         "/org/a11y/atspi/accessible/root"
#define ATSPI_REGISTRY          "org.a11y.atspi.Registry"

struct ksr_atspi {
	GMainContext *ctx;
	GDBusConnection *conn;
	char *address;
	ksr_atspi_source source;
	bool root_names_bus; /* the X root had AT_SPI_BUS (Qt 5 needs it to join) */
	guint apps_sub[2];   /* ChildrenChanged on the registry's root; NameOwnerChanged */
	bool apps_changed;   /* one of them arrived since the last ksr_atspi_wait_apps */
	/* An event listener registered with the registry (atspi_walk.c): GTK 3's
	 * bridge serves its Cache.GetItems only once some client has one. */
	bool cache_listener;
	/* discover: a bus that was found did not answer the connection (its
	 * dbus-daemon is silent), named here for the error. */
	char silent[200];
};

/* /proc/PID/environ (at most 256 KiB; NUL-separated NAME=VALUE), or NULL. */
char *ksr_atspi_read_environ(int pid, size_t *len);

/* Make ctx the thread's default (async replies are dispatched there) and own it. */
void ksr_atspi_ctx_enter(GMainContext *ctx);
void ksr_atspi_ctx_leave(GMainContext *ctx);

/* One iteration: poll ctx's descriptors until d (cancellable unless
 * cleanup), then dispatch what is ready. */
ksr_wait ksr_atspi_iterate(GMainContext *ctx, ksr_deadline d, bool cleanup);
/* After a cancel: dispatch until *pending is 0, at most 500 ms, not cancellable
 * (so that no callback outlives the data it points to). */
void ksr_atspi_drain(GMainContext *ctx, const int *pending);

/* The end of ksr_atspi_connect's error when the bus's dbus-daemon did not
 * answer the handshake in time (as opposed to refusing it, or no socket). */
#define KSR_ATSPI_BUS_SILENT "(the bus is silent)"

/* Connect to a bus address (a message bus: Hello is sent), bounded by d. */
GDBusConnection *ksr_atspi_connect(GMainContext *ctx, const char *address, ksr_deadline d,
                                   ksr_err *err);
/* One call and its reply, bounded by d and KSR_ATSPI_CALL_MS; params is
 * consumed when floating. NULL with err on error or timeout. */
GVariant *ksr_atspi_call(GMainContext *ctx, GDBusConnection *c, const char *dest, const char *path,
                         const char *iface, const char *method, GVariant *params,
                         const char *reply_type, ksr_deadline d, ksr_err *err);
/* The same bounded by d alone: the first question to an app just found. A busy
 * app (just started, a loaded machine) may take seconds to answer it; the
 * caller's own deadline (inspect's --timeout, the probe's stage, a step's
 * timeout_s) says how long it may, not a fixed bound per call. */
GVariant *ksr_atspi_call_patient(GMainContext *ctx, GDBusConnection *c, const char *dest,
                                 const char *path, const char *iface, const char *method,
                                 GVariant *params, const char *reply_type, ksr_deadline d,
                                 ksr_err *err);

/* One string property (Properties.Get of iface.prop: Get, never GetAll, which
 * Qt 5's bridge cannot take) of path on bus; malloc'd, NULL when unanswered
 * or not a string. */
char *ksr_atspi_string_property(ksr_atspi *a, const char *bus, const char *path, const char *iface,
                                const char *prop, ksr_deadline d);

/* The name (and role, NULL: any) test of ksr_atspi_tree_find, shared with the
 * find-mode walk so that both pick the same node. */
bool ksr_atspi_node_matches(const ksr_atspi_node *n, const ksr_name_match *name, const char *role);

/* Whether states say shown on screen: showing, or visible in a tree whose
 * toolkit never sets showing (ksr_atspi_tree_showing). */
bool ksr_atspi_states_showing(uint64_t states, bool visible_is_showing);

/* AT-SPI's state set (two 32-bit words) as one 64-bit mask. */
uint64_t ksr_atspi_states_from_variant(GVariant *au);

/* After `call` to the registry got no answer (err says how): whose fault
 * (silence.c). -3 with err rewritten when it is the session's (the bus daemon
 * is silent, or the registry is while the app with app_pid answers a Ping on
 * its own bus name, or has none to ask); -1 with err kept (and saying so) when
 * the app does not answer either. */
int ksr_atspi_registry_silent(ksr_atspi *a, int app_pid, const char *call, ksr_err *err);

#endif
