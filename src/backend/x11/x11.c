/* X11 observation: the connection (errors recorded, a lost server never exits
 * the process), window listing and event-driven waits. Capture is in
 * x11_capture.c; both share the private state in x11_priv.h. */
#include "ksr/x11.h"
#include "backend/x11/priv.h"

#include <X11/Xatom.h>
#include <X11/Xutil.h>
#include <X11/extensions/Xrandr.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/utf8.h"

/* Xlib's error handlers are process-wide; the last error is only kept for
 * messages. A BadWindow after a window vanished is normal and never fatal. */
static unsigned long x_error_count;

/* The last few errors, for a caller that must know whether its own requests
 * failed (keys.c's keymap change) without a round trip of its own per request. */
#define ERROR_RING 16
static struct x_error_seen {
	Display *dpy;
	unsigned long serial;
	unsigned char request;
} x_errors[ERROR_RING];

static int on_x_error(Display *dpy, XErrorEvent *ev)
{
	x_errors[x_error_count % ERROR_RING] =
	        (struct x_error_seen){dpy, ev->serial, ev->request_code};
	x_error_count++;
	return 0;
}

bool ksr_x11_request_failed(const ksr_x11 *x, unsigned long errors_before, unsigned long first,
                            unsigned long last, int request)
{
	unsigned long seen = x_error_count - errors_before;
	if (seen > ERROR_RING)
		return true; /* more errors than kept: assume ours among them */
	for (unsigned long i = errors_before; i < x_error_count; i++) {
		const struct x_error_seen *e = &x_errors[i % ERROR_RING];
		if (e->dpy == x->dpy && e->request == request && e->serial >= first &&
		    e->serial <= last)
			return true;
	}
	return false;
}

/* Called by Xlib when the connection breaks; returning (instead of exiting, as
 * the default does) is allowed since libX11 1.7 together with an exit handler. */
static int on_io_error(Display *dpy)
{
	(void)dpy;
	return 0;
}

static void on_io_error_exit(Display *dpy, void *data)
{
	(void)dpy;
	((ksr_x11 *)data)->dead = true;
}

unsigned long ksr_x11_error_count(void)
{
	return x_error_count;
}

int ksr_x11_lost(ksr_x11 *x, ksr_err *err)
{
	if (!x || x->dead)
		return ksr_err_set(err, "the X display connection was lost");
	return 0;
}

static void intern_atoms(ksr_x11 *x)
{
	static const char *const names[KSR_ATOM_COUNT] = {
	        [KSR_NET_CLIENT_LIST] = "_NET_CLIENT_LIST",
	        [KSR_NET_ACTIVE_WINDOW] = "_NET_ACTIVE_WINDOW",
	        [KSR_NET_WM_NAME] = "_NET_WM_NAME",
	        [KSR_UTF8_STRING] = "UTF8_STRING",
	        [KSR_WM_STATE] = "WM_STATE",
	        [KSR_NET_WM_PID] = "_NET_WM_PID",
	        [KSR_NET_WM_WINDOW_TYPE] = "_NET_WM_WINDOW_TYPE",
	        [KSR_NET_WM_WINDOW_TYPE_DIALOG] = "_NET_WM_WINDOW_TYPE_DIALOG",
	        [KSR_NET_WM_WINDOW_TYPE_SPLASH] = "_NET_WM_WINDOW_TYPE_SPLASH",
	        [KSR_NET_WM_WINDOW_TYPE_NORMAL] = "_NET_WM_WINDOW_TYPE_NORMAL",
	        [KSR_NET_WM_WINDOW_TYPE_UTILITY] = "_NET_WM_WINDOW_TYPE_UTILITY",
	        [KSR_NET_WM_WINDOW_TYPE_TOOLBAR] = "_NET_WM_WINDOW_TYPE_TOOLBAR",
	        [KSR_NET_WM_WINDOW_TYPE_MENU] = "_NET_WM_WINDOW_TYPE_MENU",
	        [KSR_NET_WM_WINDOW_TYPE_DOCK] = "_NET_WM_WINDOW_TYPE_DOCK",
	        [KSR_NET_WM_WINDOW_TYPE_DESKTOP] = "_NET_WM_WINDOW_TYPE_DESKTOP",
	        [KSR_NET_WM_WINDOW_TYPE_NOTIFICATION] = "_NET_WM_WINDOW_TYPE_NOTIFICATION",
	        [KSR_NET_WM_STATE] = "_NET_WM_STATE",
	        [KSR_NET_WM_STATE_MODAL] = "_NET_WM_STATE_MODAL",
	        [KSR_GTK_FRAME_EXTENTS] = "_GTK_FRAME_EXTENTS",
	        [KSR_NET_SUPPORTING_WM_CHECK] = "_NET_SUPPORTING_WM_CHECK",
	};
	XInternAtoms(x->dpy, (char **)names, KSR_ATOM_COUNT, False, x->atoms);
}

static ksr_x11 *x11_new(Display *dpy, const char *name)
{
	ksr_x11 *x = ksr_xcalloc(1, sizeof *x);
	x->dpy = dpy;
	x->name = ksr_xstrdup(name);
	x->screen = DefaultScreen(dpy);
	x->root = RootWindow(dpy, x->screen);
	x->sw = DisplayWidth(dpy, x->screen);
	x->sh = DisplayHeight(dpy, x->screen);
	x->shm.shmid = -1;
	XSetIOErrorExitHandler(dpy, on_io_error_exit, x);
	intern_atoms(x);
	/* StructureNotify too: Qt sends its _NET_WM_PING answers to the root
	 * with that mask (GTK with SubstructureNotify), never to us directly. */
	XSelectInput(dpy, x->root,
	             SubstructureNotifyMask | StructureNotifyMask | PropertyChangeMask);
	/* A Kasm session's screen follows the viewer's browser window (xrandr -s). */
	int rr_event, rr_error;
	if (XRRQueryExtension(dpy, &rr_event, &rr_error)) {
		x->rr_event = rr_event;
		XRRSelectInput(dpy, x->root, RRScreenChangeNotifyMask);
	}
	XFlush(dpy);
	return x;
}

ksr_wait ksr_x11_open_wait(const char *display_name, ksr_deadline d, ksr_x11 **out, ksr_err *err)
{
	*out = NULL;
	const char *name = display_name ? display_name : getenv("DISPLAY");
	if (!name || !*name) {
		ksr_err_set(err, "DISPLAY is not set");
		return KSR_WAIT_ERROR;
	}
	XSetErrorHandler(on_x_error);
	XSetIOErrorHandler(on_io_error);
	for (;;) {
		Display *dpy = XOpenDisplay(name);
		if (dpy) {
			*out = x11_new(dpy, name);
			return KSR_WAIT_READY;
		}
		ksr_wait w = ksr_sleep_until(ksr_deadline_min(d, ksr_deadline_in_ms(50)));
		if (w == KSR_WAIT_CANCELLED || ksr_deadline_passed(d)) {
			if (w != KSR_WAIT_CANCELLED)
				w = KSR_WAIT_TIMEOUT;
			ksr_err_set(err, "cannot connect to X display %s: %s", name,
			            w == KSR_WAIT_CANCELLED ? "cancelled" : "timed out");
			return w;
		}
	}
}

void ksr_x11_close(ksr_x11 *x)
{
	if (!x)
		return;
	ksr_x11_keys_release(x);
	ksr_x11_capture_release(x);
	ksr_x11_ready_release(x);
	/* XCloseDisplay skips its round trip when the connection is already broken. */
	XCloseDisplay(x->dpy);
	free(x->name);
	free(x);
}

bool ksr_x11_alive(const ksr_x11 *x)
{
	return x && !x->dead;
}

bool ksr_x11_still_connected(ksr_x11 *x)
{
	/* Reading finds the end of a closed connection: Xlib then calls the
	 * I/O error handlers, which mark it dead (on_io_error_exit). */
	if (x && !x->dead)
		XEventsQueued(x->dpy, QueuedAfterReading);
	return x && !x->dead;
}

const char *ksr_x11_display_name(const ksr_x11 *x)
{
	return x ? x->name : NULL;
}

void ksr_x11_screen_size(ksr_x11 *x, int *w, int *h)
{
	ksr_x11_screen_refresh(x);
	*w = x ? x->sw : 0;
	*h = x ? x->sh : 0;
}

/* ---- properties ---- */

/* Read a whole property of the given type (AnyPropertyType allowed). Returns the
 * item count (0 when absent) and *data (XFree it), *type the actual type. */
static unsigned long get_prop(ksr_x11 *x, Window w, Atom prop, Atom type, int *format, Atom *actual,
                              unsigned char **data)
{
	unsigned long n = 0, after = 0;
	int fmt = 0;
	Atom act = None;
	*data = NULL;
	if (x->dead || XGetWindowProperty(x->dpy, w, prop, 0, 1 << 20, False, type, &act, &fmt, &n,
	                                  &after, data) != Success)
		return 0;
	if (act == None || !*data) {
		if (*data)
			XFree(*data);
		*data = NULL;
		return 0;
	}
	if (format)
		*format = fmt;
	if (actual)
		*actual = act;
	return n;
}

/* A string property of the root window (e.g. AT_SPI_BUS, set by
 * at-spi-bus-launcher in some sessions); NULL when absent. */
char *ksr_x11_root_property_string(ksr_x11 *x, const char *name, ksr_err *err)
{
	if (ksr_x11_lost(x, err) < 0)
		return NULL;
	Atom prop = XInternAtom(x->dpy, name, True);
	if (prop == None)
		return NULL;
	unsigned char *data = NULL;
	int fmt = 0;
	unsigned long n = get_prop(x, x->root, prop, AnyPropertyType, &fmt, NULL, &data);
	char *out = n > 0 && fmt == 8 ? ksr_xstrndup((const char *)data, n) : NULL;
	if (data)
		XFree(data);
	return out;
}

unsigned long ksr_x11_server_time(ksr_x11 *x, int64_t *ours_ms)
{
	XSetWindowAttributes a = {.event_mask = PropertyChangeMask};
	Window w = XCreateWindow(x->dpy, x->root, -1, -1, 1, 1, 0, 0, InputOnly, CopyFromParent,
	                         CWEventMask, &a);
	XChangeProperty(x->dpy, w, XA_WM_NAME, XA_STRING, 8, PropModeAppend, (unsigned char *)"",
	                0);
	int64_t before = ksr_now_ms();
	XSync(x->dpy, False);
	int64_t after = ksr_now_ms();
	XEvent ev;
	unsigned long t = CurrentTime;
	if (!x->dead && XCheckTypedWindowEvent(x->dpy, w, PropertyNotify, &ev))
		t = ev.xproperty.time;
	if (ours_ms)
		*ours_ms = (before + after) / 2;
	XDestroyWindow(x->dpy, w);
	XFlush(x->dpy);
	return t;
}

/* Set a root window string property (STRING, 8-bit), as at-spi-bus-launcher
 * sets AT_SPI_BUS. It lives as long as the server does not reset. */
int ksr_x11_root_property_set_string(ksr_x11 *x, const char *name, const char *value, ksr_err *err)
{
	if (ksr_x11_lost(x, err) < 0)
		return -1;
	Atom prop = XInternAtom(x->dpy, name, False);
	XChangeProperty(x->dpy, x->root, prop, XA_STRING, 8, PropModeReplace,
	                (const unsigned char *)value, (int)strlen(value));
	XSync(x->dpy, False);
	return ksr_x11_lost(x, err);
}

/* Set a root string property only where it is absent: the check and the write
 * under one server grab, so a value someone else (at-spi-bus-launcher) sets
 * meanwhile is never replaced. */
int ksr_x11_root_property_add_string(ksr_x11 *x, const char *name, const char *value, ksr_err *err)
{
	if (ksr_x11_lost(x, err) < 0)
		return -1;
	Atom prop = XInternAtom(x->dpy, name, False);
	XGrabServer(x->dpy);
	unsigned char *data = NULL;
	get_prop(x, x->root, prop, AnyPropertyType, NULL, NULL, &data);
	bool present = data != NULL; /* even an empty one is someone's */
	if (data)
		XFree(data);
	if (!present)
		XChangeProperty(x->dpy, x->root, prop, XA_STRING, 8, PropModeReplace,
		                (const unsigned char *)value, (int)strlen(value));
	XUngrabServer(x->dpy);
	XSync(x->dpy, False);
	if (ksr_x11_lost(x, err) < 0)
		return -1;
	return present ? 0 : 1;
}

static bool get_card32(ksr_x11 *x, Window w, Atom prop, Atom type, unsigned long *out,
                       unsigned long max, unsigned long *n_out)
{
	unsigned char *data;
	int fmt = 0;
	unsigned long n = get_prop(x, w, prop, type, &fmt, NULL, &data);
	if (!data)
		return false;
	if (fmt != 32) {
		XFree(data);
		return false;
	}
	/* Format-32 data comes as longs from Xlib, whatever their size. */
	const unsigned long *v = (const unsigned long *)data;
	for (unsigned long i = 0; i < n && i < max; i++)
		out[i] = v[i];
	*n_out = n < max ? n : max;
	XFree(data);
	return true;
}

static char *latin1_to_utf8(const unsigned char *s, unsigned long n)
{
	char *out = ksr_xmalloc(n * 2 + 1);
	size_t j = 0;
	for (unsigned long i = 0; i < n && s[i]; i++) {
		if (s[i] < 0x80) {
			out[j++] = (char)s[i];
		} else {
			out[j++] = (char)(0xc0 | (s[i] >> 6));
			out[j++] = (char)(0x80 | (s[i] & 0x3f));
		}
	}
	out[j] = '\0';
	return out;
}

/* s, owned, with invalid UTF-8 repaired losslessly (ksr/utf8.h): a client may
 * write any bytes into its title, and titles go to patterns and JSON. */
static char *repaired(char *s)
{
	if (ksr_utf8_valid(s))
		return s;
	char *r = ksr_utf8_repair(s);
	free(s);
	return r;
}

static char *get_title(ksr_x11 *x, Window w)
{
	unsigned char *data;
	Atom type = None;
	int fmt = 0;
	unsigned long n = get_prop(x, w, x->atoms[KSR_NET_WM_NAME], x->atoms[KSR_UTF8_STRING], &fmt,
	                           &type, &data);
	if (data && fmt == 8) {
		char *s = ksr_xstrndup((const char *)data, n);
		XFree(data);
		return repaired(s);
	}
	if (data)
		XFree(data);
	n = get_prop(x, w, XA_WM_NAME, AnyPropertyType, &fmt, &type, &data);
	if (!data)
		return ksr_xstrdup("");
	char *s = NULL;
	if (fmt != 8)
		s = ksr_xstrdup("");
	else if (type == XA_STRING)
		s = latin1_to_utf8(data, n);
	else /* UTF8_STRING, or COMPOUND_TEXT whose ASCII part reads the same */
		s = repaired(ksr_xstrndup((const char *)data, n));
	XFree(data);
	return s;
}

static void get_class(ksr_x11 *x, Window w, ksr_window *out)
{
	unsigned char *data;
	int fmt = 0;
	unsigned long n = get_prop(x, w, XA_WM_CLASS, XA_STRING, &fmt, NULL, &data);
	if (data && fmt == 8) {
		/* "instance\0class\0" */
		size_t first = strnlen((const char *)data, n);
		out->res_name = ksr_xstrndup((const char *)data, first);
		out->res_class =
		        first < n ? ksr_xstrndup((const char *)data + first + 1, n - first - 1)
		                  : ksr_xstrdup("");
	} else {
		out->res_name = ksr_xstrdup("");
		out->res_class = ksr_xstrdup("");
	}
	if (data)
		XFree(data);
}

/* The window's type as EWMH names it (the first type it lists that we know,
 * as a window manager reads the list); "" when it lists none we know (the
 * caller applies EWMH's default). */
static const char *read_window_type(ksr_x11 *x, Window w)
{
	static const struct {
		int atom;
		const char *name;
	} known[] = {
	        {KSR_NET_WM_WINDOW_TYPE_NORMAL, "normal"},
	        {KSR_NET_WM_WINDOW_TYPE_DIALOG, "dialog"},
	        {KSR_NET_WM_WINDOW_TYPE_SPLASH, "splash"},
	        {KSR_NET_WM_WINDOW_TYPE_UTILITY, "utility"},
	        {KSR_NET_WM_WINDOW_TYPE_TOOLBAR, "toolbar"},
	        {KSR_NET_WM_WINDOW_TYPE_MENU, "menu"},
	        {KSR_NET_WM_WINDOW_TYPE_DOCK, "dock"},
	        {KSR_NET_WM_WINDOW_TYPE_DESKTOP, "desktop"},
	        {KSR_NET_WM_WINDOW_TYPE_NOTIFICATION, "notification"},
	};
	unsigned long types[16], n = 0;
	if (!get_card32(x, w, x->atoms[KSR_NET_WM_WINDOW_TYPE], XA_ATOM, types, 16, &n))
		return "";
	for (unsigned long i = 0; i < n; i++)
		for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
			if (types[i] == x->atoms[known[k].atom])
				return known[k].name;
	return "";
}

static bool has_state(ksr_x11 *x, Window w, Atom state)
{
	unsigned long states[32], n = 0;
	if (!get_card32(x, w, x->atoms[KSR_NET_WM_STATE], XA_ATOM, states, 32, &n))
		return false;
	for (unsigned long i = 0; i < n; i++)
		if (states[i] == state)
			return true;
	return false;
}

static void free_window(ksr_window *w)
{
	free(w->title);
	free(w->res_name);
	free(w->res_class);
	w->title = w->res_name = w->res_class = NULL;
}

/* Geometry and mapped state; false when the window is gone or not viewable. */
static bool read_geometry(ksr_x11 *x, Window w, ksr_window *out)
{
	XWindowAttributes wa;
	Window child;
	int rx = 0, ry = 0;
	if (x->dead || !XGetWindowAttributes(x->dpy, w, &wa) || wa.map_state != IsViewable)
		return false;
	if (!XTranslateCoordinates(x->dpy, w, x->root, 0, 0, &rx, &ry, &child))
		return false;
	out->x = rx;
	out->y = ry;
	out->w = wa.width;
	out->h = wa.height;
	unsigned long ext[4], n = 0; /* left, right, top, bottom */
	if (get_card32(x, w, x->atoms[KSR_GTK_FRAME_EXTENTS], XA_CARDINAL, ext, 4, &n) && n == 4 &&
	    (long)(ext[0] + ext[1]) < wa.width && (long)(ext[2] + ext[3]) < wa.height) {
		out->x += (int)ext[0];
		out->y += (int)ext[2];
		out->w -= (int)(ext[0] + ext[1]);
		out->h -= (int)(ext[2] + ext[3]);
	}
	return true;
}

bool ksr_x11_window_rect(ksr_x11 *x, Window w, int *rx, int *ry, int *rw, int *rh)
{
	ksr_window tmp = {0};
	if (!read_geometry(x, w, &tmp))
		return false;
	*rx = tmp.x;
	*ry = tmp.y;
	*rw = tmp.w;
	*rh = tmp.h;
	return true;
}

static bool read_window(ksr_x11 *x, Window w, ksr_window *out)
{
	memset(out, 0, sizeof *out);
	out->id = w;
	if (!read_geometry(x, w, out))
		return false;
	/* Title changes and unmaps of this window must wake ksr_x11_wait_change. */
	XSelectInput(x->dpy, w, PropertyChangeMask | StructureNotifyMask);
	out->title = get_title(x, w);
	get_class(x, w, out);
	unsigned long v[1], n = 0;
	if (get_card32(x, w, x->atoms[KSR_NET_WM_PID], XA_CARDINAL, v, 1, &n) && n == 1)
		out->pid = (int)v[0];
	Window tf = None;
	if (!x->dead && XGetTransientForHint(x->dpy, w, &tf) && tf != None)
		out->transient_for = tf;
	out->type = read_window_type(x, w);
	if (!*out->type) /* EWMH: untyped is dialog when transient, else normal */
		out->type = out->transient_for ? "dialog" : "normal";
	out->is_splash = strcmp(out->type, "splash") == 0;
	out->is_dialog = out->transient_for != 0 || strcmp(out->type, "dialog") == 0;
	out->is_modal = has_state(x, w, x->atoms[KSR_NET_WM_STATE_MODAL]);
	if (x->dead) {
		free_window(out);
		return false;
	}
	return true;
}

/* ---- listing ---- */

typedef struct idlist {
	Window *ids;
	size_t len, cap;
} idlist;

static void idlist_add(idlist *l, Window w)
{
	if (l->len == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 32;
		l->ids = ksr_xrealloc(l->ids, l->cap * sizeof *l->ids);
	}
	l->ids[l->len++] = w;
}

static bool client_list(ksr_x11 *x, idlist *out)
{
	unsigned char *data;
	int fmt = 0;
	unsigned long n =
	        get_prop(x, x->root, x->atoms[KSR_NET_CLIENT_LIST], XA_WINDOW, &fmt, NULL, &data);
	if (!data)
		return false;
	if (fmt == 32)
		for (unsigned long i = 0; i < n; i++)
			idlist_add(out, ((const unsigned long *)data)[i]);
	XFree(data);
	return fmt == 32;
}

static bool has_wm_state(ksr_x11 *x, Window w)
{
	unsigned char *data;
	get_prop(x, w, x->atoms[KSR_WM_STATE], x->atoms[KSR_WM_STATE], NULL, NULL, &data);
	if (!data)
		return false;
	XFree(data);
	return true;
}

/* The client under a WM frame: the child carrying WM_STATE, if any. */
static Window framed_client(ksr_x11 *x, Window frame)
{
	Window root_ret, parent, *kids = NULL, found = None;
	unsigned int n = 0;
	if (!XQueryTree(x->dpy, frame, &root_ret, &parent, &kids, &n))
		return None;
	for (unsigned int i = 0; i < n && found == None; i++)
		if (has_wm_state(x, kids[i]))
			found = kids[i];
	if (kids)
		XFree(kids);
	return found;
}

Window ksr_x11_client_of(ksr_x11 *x, Window top)
{
	return has_wm_state(x, top) ? top : framed_client(x, top);
}

char *ksr_x11_title(ksr_x11 *x, Window w)
{
	return get_title(x, w);
}

static void tree_walk(ksr_x11 *x, idlist *out)
{
	Window root_ret, parent, *kids = NULL;
	unsigned int n = 0;
	if (x->dead || !XQueryTree(x->dpy, x->root, &root_ret, &parent, &kids, &n))
		return;
	for (unsigned int i = 0; i < n && !x->dead; i++) {
		XWindowAttributes wa;
		if (has_wm_state(x, kids[i])) {
			idlist_add(out, kids[i]);
		} else {
			Window c = framed_client(x, kids[i]);
			if (c != None)
				idlist_add(out, c);
			else if (XGetWindowAttributes(x->dpy, kids[i], &wa) &&
			         wa.map_state == IsViewable && !wa.override_redirect)
				idlist_add(out, kids[i]);
		}
	}
	if (kids)
		XFree(kids);
}

int ksr_x11_list_windows(ksr_x11 *x, ksr_window_list *out, ksr_err *err)
{
	out->items = NULL;
	out->len = 0;
	if (ksr_x11_lost(x, err) < 0)
		return -1;
	idlist ids = {0};
	if (!client_list(x, &ids))
		tree_walk(x, &ids);
	out->items = ksr_xcalloc(ids.len, sizeof *out->items);
	for (size_t i = 0; i < ids.len && !x->dead; i++)
		if (read_window(x, ids.ids[i], &out->items[out->len]))
			out->len++;
	XFlush(x->dpy);
	free(ids.ids);
	if (x->dead) {
		ksr_window_list_clear(out);
		return ksr_x11_lost(x, err);
	}
	return 0;
}

void ksr_window_list_clear(ksr_window_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->len; i++)
		free_window(&l->items[i]);
	free(l->items);
	l->items = NULL;
	l->len = 0;
}

int ksr_x11_window_refresh(ksr_x11 *x, ksr_window *w, ksr_err *err)
{
	if (ksr_x11_lost(x, err) < 0)
		return -1;
	ksr_window fresh;
	if (!read_window(x, w->id, &fresh)) {
		if (ksr_x11_lost(x, err) < 0)
			return -1;
		return ksr_err_set(err, "window 0x%lx is gone or no longer mapped", w->id);
	}
	free_window(w);
	*w = fresh;
	return 0;
}

/* ---- waits ---- */

static bool relevant_atom(ksr_x11 *x, Atom a)
{
	return a == x->atoms[KSR_NET_CLIENT_LIST] || a == x->atoms[KSR_NET_ACTIVE_WINDOW] ||
	       a == x->atoms[KSR_NET_WM_NAME] || a == x->atoms[KSR_WM_STATE] || a == XA_WM_NAME;
}

bool ksr_x11_relevant_event(ksr_x11 *x, const XEvent *ev)
{
	switch (ev->type) {
	case MapNotify:
	case UnmapNotify:
	case DestroyNotify:
	case CreateNotify:
	case ReparentNotify:
		return true;
	case PropertyNotify:
		return relevant_atom(x, ev->xproperty.atom);
	default:
		return false;
	}
}

/* Take every event Xlib has read or can read without blocking. */
static void drain(ksr_x11 *x, bool (*match)(ksr_x11 *, const XEvent *), bool *hit)
{
	while (!x->dead && XPending(x->dpy) > 0) {
		XEvent ev;
		XNextEvent(x->dpy, &ev);
		ksr_x11_ready_event(x, &ev);
		if (match(x, &ev))
			*hit = true;
	}
}

static ksr_wait wait_for(ksr_x11 *x, ksr_deadline d, bool (*match)(ksr_x11 *, const XEvent *),
                         bool (*done)(ksr_x11 *))
{
	for (;;) {
		bool hit = false;
		if (ksr_cancelled()) /* cancellation wins over events already queued */
			return KSR_WAIT_CANCELLED;
		if (x->dead)
			return KSR_WAIT_ERROR;
		drain(x, match, &hit);
		if (x->dead)
			return KSR_WAIT_ERROR;
		if (hit && (!done || done(x)))
			return KSR_WAIT_READY;
		struct pollfd pfd = {.fd = ConnectionNumber(x->dpy), .events = POLLIN};
		ksr_wait w = ksr_wait_fds(&pfd, 1, d);
		if (w != KSR_WAIT_READY)
			return w;
	}
}

ksr_wait ksr_x11_wait_change(ksr_x11 *x, ksr_deadline d)
{
	if (!x)
		return KSR_WAIT_ERROR;
	return wait_for(x, d, ksr_x11_relevant_event, NULL);
}

static bool wm_check_event(ksr_x11 *x, const XEvent *ev)
{
	return ev->type == PropertyNotify &&
	       ev->xproperty.atom == x->atoms[KSR_NET_SUPPORTING_WM_CHECK];
}

static bool wm_present(ksr_x11 *x)
{
	unsigned long v[1], n = 0;
	return get_card32(x, x->root, x->atoms[KSR_NET_SUPPORTING_WM_CHECK], XA_WINDOW, v, 1, &n) &&
	       n == 1 && v[0] != None;
}

ksr_wait ksr_x11_wait_wm(ksr_x11 *x, ksr_deadline d)
{
	if (!x || x->dead)
		return KSR_WAIT_ERROR;
	/* Root's PropertyChangeMask was selected at open, so a WM that sets the
	 * property after this read still wakes the wait. */
	if (wm_present(x))
		return KSR_WAIT_READY;
	if (x->dead)
		return KSR_WAIT_ERROR;
	return wait_for(x, d, wm_check_event, wm_present);
}

/* ---- the window manager manages windows ---- */

typedef struct manage_probe {
	Window win;
	bool managed;
} manage_probe;

static bool managed_event(const XEvent *ev, void *p)
{
	manage_probe *m = p;
	if (ev->xany.window == m->win && (ev->type == ReparentNotify || ev->type == MapNotify))
		m->managed = true;
	return m->managed;
}

ksr_wait ksr_x11_wait_wm_manages(ksr_x11 *x, ksr_deadline d)
{
	if (!x || x->dead)
		return KSR_WAIT_ERROR;
	XSetWindowAttributes a = {.event_mask = StructureNotifyMask};
	manage_probe m = {.win = XCreateWindow(x->dpy, x->root, 0, 0, 1, 1, 0, CopyFromParent,
	                                       InputOutput, CopyFromParent, CWEventMask, &a)};
	XStoreName(x->dpy, m.win, "ksr window manager probe");
	XMapWindow(x->dpy, m.win);
	XFlush(x->dpy);
	/* A window manager that redirects maps maps (and reparents) the probe
	 * only once its event loop runs: a MapRequest sent between its
	 * _NET_SUPPORTING_WM_CHECK and that moment can wait seconds (seen: xterm
	 * waiting 5 s for its first map). */
	ksr_wait w = ksr_x11_input_wait(x, d, managed_event, &m);
	XDestroyWindow(x->dpy, m.win);
	XSync(x->dpy, False);
	return x->dead ? KSR_WAIT_ERROR : w;
}
