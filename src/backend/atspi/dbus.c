/* GDBus on a private main context, iterated through ksr_wait_fds: the one
 * place where D-Bus replies are waited for (see atspi_priv.h). */
#include "backend/atspi/priv.h"

#include <limits.h>
#include <poll.h>

#define MAX_POLL   16
#define DRAIN_MS   500
#define CONNECT_MS 5000 /* a bus's handshake (authentication, Hello) */

void ksr_atspi_ctx_enter(GMainContext *ctx)
{
	g_main_context_push_thread_default(ctx);
	g_main_context_acquire(ctx);
}

void ksr_atspi_ctx_leave(GMainContext *ctx)
{
	g_main_context_release(ctx);
	g_main_context_pop_thread_default(ctx);
}

ksr_wait ksr_atspi_iterate(GMainContext *ctx, ksr_deadline d, bool cleanup)
{
	gint prio = 0, timeout = -1;
	GPollFD gfds[MAX_POLL];
	struct pollfd pfds[MAX_POLL];
	g_main_context_prepare(ctx, &prio);
	gint n = g_main_context_query(ctx, prio, &timeout, gfds, MAX_POLL);
	if (n > MAX_POLL)
		n = MAX_POLL; /* a private context has one wakeup descriptor */
	for (gint i = 0; i < n; i++)
		pfds[i] = (struct pollfd){.fd = gfds[i].fd, .events = (short)gfds[i].events};
	ksr_deadline until = timeout >= 0 ? ksr_deadline_min(d, ksr_deadline_in_ms(timeout)) : d;
	ksr_wait w;
	if (cleanup) {
		/* Cleanup runs after a cancel too: no cancel fd here. A failed
		 * poll reads as a timeout, as it always did. */
		w = ksr_wait_fds_uncancellable(pfds, n, until);
		if (w == KSR_WAIT_ERROR)
			w = KSR_WAIT_TIMEOUT;
	} else {
		w = ksr_wait_fds(pfds, n, until);
	}
	for (gint i = 0; i < n; i++)
		gfds[i].revents = w == KSR_WAIT_READY ? (gushort)pfds[i].revents : 0;
	if (g_main_context_check(ctx, prio, gfds, n))
		g_main_context_dispatch(ctx);
	return w;
}

void ksr_atspi_drain(GMainContext *ctx, const int *pending)
{
	ksr_deadline d = ksr_deadline_in_ms(DRAIN_MS);
	while (*pending > 0 && !ksr_deadline_passed(d))
		ksr_atspi_iterate(ctx, d, true);
}

/* The call's own timeout: cap_ms or what is left of d, at least 1. */
static int call_ms(ksr_deadline d, int cap_ms)
{
	int64_t left = ksr_deadline_remaining_ms(d);
	if (left > cap_ms)
		left = cap_ms;
	return left < 1 ? 1 : (int)left;
}

/* ---- one connection ---- */

typedef struct pending_conn {
	GDBusConnection *conn;
	GError *error;
	int pending;
} pending_conn;

static void on_connected(GObject *src, GAsyncResult *res, gpointer data)
{
	(void)src;
	pending_conn *p = data;
	p->conn = g_dbus_connection_new_for_address_finish(res, &p->error);
	p->pending = 0;
}

GDBusConnection *ksr_atspi_connect(GMainContext *ctx, const char *address, ksr_deadline d,
                                   ksr_err *err)
{
	pending_conn p = {.pending = 1};
	GCancellable *cancel = g_cancellable_new();
	g_dbus_connection_new_for_address(address,
	                                  G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
	                                          G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION,
	                                  NULL, cancel, on_connected, &p);
	ksr_wait w = KSR_WAIT_READY;
	/* A bus daemon answers the handshake at once: one that does not within
	 * CONNECT_MS is silent (SIGSTOPped, hung), and the next bus still gets
	 * its chance within d. */
	ksr_deadline cd = ksr_deadline_min(d, ksr_deadline_in_ms(CONNECT_MS));
	int64_t t0 = ksr_now_ms();
	while (p.pending && w != KSR_WAIT_CANCELLED && !ksr_deadline_passed(cd))
		w = ksr_atspi_iterate(ctx, cd, false);
	bool silent = p.pending && w != KSR_WAIT_CANCELLED && !ksr_cancelled();
	if (p.pending) {
		g_cancellable_cancel(cancel);
		ksr_atspi_drain(ctx, &p.pending);
	}
	g_object_unref(cancel);
	if (p.conn)
		return p.conn;
	if (silent)
		ksr_err_set(err,
		            "cannot connect to %s: its dbus-daemon did not answer the connection "
		            "within %lld ms " KSR_ATSPI_BUS_SILENT,
		            address, (long long)(ksr_now_ms() - t0));
	else if (p.error)
		ksr_err_set(err, "cannot connect to %s: %s", address, p.error->message);
	else
		ksr_err_set(err, "cannot connect to %s: %s", address,
		            w == KSR_WAIT_CANCELLED ? "cancelled" : "no answer in time");
	g_clear_error(&p.error);
	return NULL;
}

/* ---- one call ---- */

typedef struct pending_call {
	GVariant *reply;
	GError *error;
	int pending;
} pending_call;

static void on_reply(GObject *src, GAsyncResult *res, gpointer data)
{
	pending_call *p = data;
	p->reply = g_dbus_connection_call_finish(G_DBUS_CONNECTION(src), res, &p->error);
	p->pending = 0;
}

static GVariant *call_capped(GMainContext *ctx, GDBusConnection *c, const char *dest,
                             const char *path, const char *iface, const char *method,
                             GVariant *params, const char *reply_type, ksr_deadline d, int cap_ms,
                             ksr_err *err)
{
	pending_call p = {.pending = 1};
	GCancellable *cancel = g_cancellable_new();
	int ms = call_ms(d, cap_ms);
	/* Auto-start allowed: the registry (at-spi2-registryd) is D-Bus-activated
	 * on the a11y bus by the first client that asks for it. */
	g_dbus_connection_call(c, dest, path, iface, method, params,
	                       reply_type ? G_VARIANT_TYPE(reply_type) : NULL,
	                       G_DBUS_CALL_FLAGS_NONE, ms, cancel, on_reply, &p);
	/* GDBus ends the call at its timeout; the margin only guards against a
	 * reply that never gets dispatched. */
	ksr_deadline hard = ksr_deadline_in_ms((int64_t)ms + 250);
	ksr_wait w = KSR_WAIT_READY;
	while (p.pending && w != KSR_WAIT_CANCELLED && !ksr_deadline_passed(hard))
		w = ksr_atspi_iterate(ctx, hard, false);
	if (p.pending) {
		g_cancellable_cancel(cancel);
		ksr_atspi_drain(ctx, &p.pending);
	}
	g_object_unref(cancel);
	if (p.reply)
		return p.reply;
	if (p.error && g_error_matches(p.error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT))
		ksr_err_set(err, "%s.%s got no answer within %d ms (is the app hung?)", iface,
		            method, ms);
	else if (p.error)
		ksr_err_set(err, "%s.%s failed: %s", iface, method, p.error->message);
	else
		ksr_err_set(err, "%s.%s was cancelled", iface, method);
	g_clear_error(&p.error);
	return NULL;
}

GVariant *ksr_atspi_call(GMainContext *ctx, GDBusConnection *c, const char *dest, const char *path,
                         const char *iface, const char *method, GVariant *params,
                         const char *reply_type, ksr_deadline d, ksr_err *err)
{
	return call_capped(ctx, c, dest, path, iface, method, params, reply_type, d,
	                   KSR_ATSPI_CALL_MS, err);
}

GVariant *ksr_atspi_call_patient(GMainContext *ctx, GDBusConnection *c, const char *dest,
                                 const char *path, const char *iface, const char *method,
                                 GVariant *params, const char *reply_type, ksr_deadline d,
                                 ksr_err *err)
{
	return call_capped(ctx, c, dest, path, iface, method, params, reply_type, d, INT_MAX, err);
}

char *ksr_atspi_string_property(ksr_atspi *a, const char *bus, const char *path, const char *iface,
                                const char *prop, ksr_deadline d)
{
	ksr_err ignored = {0};
	GVariant *r = ksr_atspi_call(a->ctx, a->conn, bus, path, "org.freedesktop.DBus.Properties",
	                             "Get", g_variant_new("(ss)", iface, prop), "(v)", d, &ignored);
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
