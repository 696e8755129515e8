/* In-process pointer input and window activation through XTest: no process per
 * action, each action flushed at once. Keys and typing are in x11_keys.c. */
#include "ksr/x11.h"
#include "backend/x11/priv.h"

#include <X11/XKBlib.h>
#include <X11/Xatom.h>
#include <X11/extensions/XTest.h>

/* Steps of a drag: apps (GTK drag-and-drop, sliders) want to see motion between
 * the press and the release, not one jump. */
#define DRAG_STEPS 8
/* Some window managers ignore a pager's activation request (focus stealing
 * prevention); after this long without focus we also set it ourselves. */
#define ACTIVATE_FALLBACK_MS 500

/* Xlib turns XKB on by itself, and the server then sends such clients no core
 * MappingNotify: keymap changes only arrive as XkbMapNotify, once selected. */
static void select_keymap_events(ksr_x11 *x)
{
	int opcode, error, major = XkbMajorVersion, minor = XkbMinorVersion;
	if (!XkbQueryExtension(x->dpy, &opcode, &x->xkb_event, &error, &major, &minor)) {
		x->xkb_event = 0;
		return;
	}
	XkbSelectEvents(x->dpy, XkbUseCoreKbd, XkbMapNotifyMask, XkbMapNotifyMask);
}

int ksr_x11_input_begin(ksr_x11 *x, ksr_err *err)
{
	if (ksr_x11_lost(x, err) < 0)
		return -1;
	if (x->xtest == 0) {
		int ev, er, major, minor;
		x->xtest = XTestQueryExtension(x->dpy, &ev, &er, &major, &minor) ? 1 : -1;
		select_keymap_events(x);
	}
	if (x->xtest < 0)
		return ksr_err_set(err,
		                   "the X server %s has no XTEST extension (input is impossible)",
		                   x->name);
	return 0;
}

int ksr_x11_input_end(ksr_x11 *x, ksr_err *err)
{
	if (!x->dead)
		XFlush(x->dpy);
	return ksr_x11_lost(x, err);
}

bool ksr_x11_keymap_event(const ksr_x11 *x, const XEvent *ev, int *first, int *count)
{
	if (ev->type == MappingNotify && ev->xmapping.request == MappingKeyboard) {
		*first = ev->xmapping.first_keycode;
		*count = ev->xmapping.count;
		return true;
	}
	const XkbEvent *k = (const XkbEvent *)ev;
	if (x->xkb_event && ev->type == x->xkb_event && k->any.xkb_type == XkbMapNotify &&
	    (k->map.changed & XkbKeySymsMask)) {
		*first = k->map.first_key_sym;
		*count = k->map.num_key_syms;
		return true;
	}
	return false;
}

static void note_event(ksr_x11 *x, XEvent *ev)
{
	int first, count;
	ksr_x11_ready_event(x, ev);
	if (!ksr_x11_keymap_event(x, ev, &first, &count))
		return;
	/* Xlib's own keymap (XLookupString, XKeysymToKeycode): the core one is
	 * marked for a reload. The XKB one needs nothing: Xlib merged this
	 * event's change into its pending ones as it read it, and fetches them
	 * all in one request at its next lookup. XkbRefreshKeyboardMapping here
	 * fetched each event's change at once, a round trip per event: another
	 * client binding 17 keysyms one by one and unbinding them cost our next
	 * text 34 round trips (7 ms, bench/input.sh). */
	if (ev->type == MappingNotify)
		XRefreshKeyboardMapping(&ev->xmapping);
	x->keymap.stale = true;
}

void ksr_x11_input_pump(ksr_x11 *x)
{
	while (!x->dead && XPending(x->dpy) > 0) {
		XEvent ev;
		XNextEvent(x->dpy, &ev);
		note_event(x, &ev);
	}
}

ksr_wait ksr_x11_input_wait(ksr_x11 *x, ksr_deadline d, bool (*match)(const XEvent *, void *),
                            void *ctx)
{
	for (;;) {
		if (ksr_cancelled())
			return KSR_WAIT_CANCELLED;
		while (!x->dead && XPending(x->dpy) > 0) {
			XEvent ev;
			XNextEvent(x->dpy, &ev);
			note_event(x, &ev);
			if (match(&ev, ctx))
				return KSR_WAIT_READY;
		}
		if (x->dead)
			return KSR_WAIT_ERROR;
		struct pollfd pfd = {.fd = ConnectionNumber(x->dpy), .events = POLLIN};
		ksr_wait w = ksr_wait_fds(&pfd, 1, d);
		if (w != KSR_WAIT_READY)
			return w;
	}
}

int ksr_x11_sync(ksr_x11 *x)
{
	if (!x || x->dead)
		return -1;
	/* Nothing sent since the server last answered (keys.c ends with a
	 * sync): it has processed everything already, and any error of ours has
	 * arrived. */
	if (LastKnownRequestProcessed(x->dpy) == NextRequest(x->dpy) - 1)
		return 0;
	XSync(x->dpy, False);
	return x->dead ? -1 : 0;
}

/* ---- pointer ---- */

static int check_point(ksr_x11 *x, int px, int py, ksr_err *err)
{
	if (px < 0 || py < 0 || px >= x->sw || py >= x->sh)
		return ksr_err_set(err, "point (%d, %d) is outside the %dx%d screen", px, py, x->sw,
		                   x->sh);
	return 0;
}

static int check_button(int button, ksr_err *err)
{
	if (button < 1 || button > 9)
		return ksr_err_set(
		        err, "mouse button %d does not exist (1 left, 2 middle, 3 right)", button);
	return 0;
}

static void motion(ksr_x11 *x, int px, int py)
{
	XTestFakeMotionEvent(x->dpy, x->screen, px, py, CurrentTime);
}

static void button(ksr_x11 *x, int b, bool down)
{
	XTestFakeButtonEvent(x->dpy, (unsigned int)b, down, CurrentTime);
}

int ksr_x11_pointer_move(ksr_x11 *x, int px, int py, ksr_err *err)
{
	if (ksr_x11_input_begin(x, err) < 0 || check_point(x, px, py, err) < 0)
		return -1;
	motion(x, px, py);
	return ksr_x11_input_end(x, err);
}

int ksr_x11_click(ksr_x11 *x, int px, int py, int b, int count, ksr_err *err)
{
	if (ksr_x11_input_begin(x, err) < 0 || check_point(x, px, py, err) < 0 ||
	    check_button(b, err) < 0)
		return -1;
	if (count < 1 || count > 10)
		return ksr_err_set(err, "click count %d is out of range (1..10)", count);
	motion(x, px, py);
	for (int i = 0; i < count; i++) {
		button(x, b, true);
		button(x, b, false);
	}
	return ksr_x11_input_end(x, err);
}

int ksr_x11_drag(ksr_x11 *x, int x1, int y1, int x2, int y2, int b, ksr_err *err)
{
	if (ksr_x11_input_begin(x, err) < 0 || check_point(x, x1, y1, err) < 0 ||
	    check_point(x, x2, y2, err) < 0 || check_button(b, err) < 0)
		return -1;
	motion(x, x1, y1);
	button(x, b, true);
	for (int i = 1; i <= DRAG_STEPS; i++)
		motion(x, x1 + (x2 - x1) * i / DRAG_STEPS, y1 + (y2 - y1) * i / DRAG_STEPS);
	button(x, b, false);
	return ksr_x11_input_end(x, err);
}

int ksr_x11_scroll(ksr_x11 *x, int px, int py, int dy, ksr_err *err)
{
	if (ksr_x11_input_begin(x, err) < 0 || check_point(x, px, py, err) < 0)
		return -1;
	if (dy < -1000 || dy > 1000)
		return ksr_err_set(err, "scroll of %d clicks is out of range", dy);
	motion(x, px, py);
	int b = dy < 0 ? 4 : 5;
	for (int i = 0; i < (dy < 0 ? -dy : dy); i++) {
		button(x, b, true);
		button(x, b, false);
	}
	return ksr_x11_input_end(x, err);
}

/* ---- activation ---- */

static unsigned long root_window_prop(ksr_x11 *x, Atom prop, Atom type)
{
	Atom act = None;
	int fmt = 0;
	unsigned long n = 0, after = 0, v = 0;
	unsigned char *data = NULL;
	if (XGetWindowProperty(x->dpy, x->root, prop, 0, 1, False, type, &act, &fmt, &n, &after,
	                       &data) == Success &&
	    data && fmt == 32 && n == 1)
		v = ((const unsigned long *)data)[0];
	if (data)
		XFree(data);
	return v;
}

/* w itself or one of its descendants has the input focus. */
static bool focus_in(ksr_x11 *x, Window w)
{
	Window f = None;
	int revert = 0;
	XGetInputFocus(x->dpy, &f, &revert);
	while (f != None && f != PointerRoot && f != x->root) {
		if (f == w)
			return true;
		Window root_ret, parent = None, *kids = NULL;
		unsigned int n = 0;
		if (!XQueryTree(x->dpy, f, &root_ret, &parent, &kids, &n))
			return false;
		if (kids)
			XFree(kids);
		f = parent;
	}
	return false;
}

/* Keys go where the X input focus is, so that counts first. With a window
 * manager, we also wait for its _NET_ACTIVE_WINDOW to agree: its shortcuts
 * (alt+F4) act on the window it believes active, and under load it can lag
 * behind the server. Once we have set the focus ourselves (the WM ignored the
 * request), either word is enough (a client that never takes focus). */
static bool is_active(ksr_x11 *x, Window w, bool wm, bool forced)
{
	bool focus = focus_in(x, w);
	if (!wm)
		return focus;
	bool wm_agrees = root_window_prop(x, x->atoms[KSR_NET_ACTIVE_WINDOW], XA_WINDOW) == w;
	return forced ? focus || wm_agrees : focus && wm_agrees;
}

typedef struct activate_ctx {
	ksr_x11 *x;
	Window w;
} activate_ctx;

/* Anything that may mean the focus moved, or the window went away. */
static bool activation_event(const XEvent *ev, void *p)
{
	const activate_ctx *c = p;
	switch (ev->type) {
	case PropertyNotify:
		return ev->xproperty.atom == c->x->atoms[KSR_NET_ACTIVE_WINDOW];
	case FocusIn:
	case UnmapNotify:
	case DestroyNotify:
		return true;
	default:
		return false;
	}
}

/* As a pager asks (EWMH: source indication 2), with a real timestamp: a WM
 * with focus stealing prevention (xfwm4) passes the request's time on to its
 * own XSetInputFocus, and the X server ignores a focus change dated before
 * the last one, which CurrentTime in the request can turn into (the WM
 * substitutes the newest time it has seen, older than a focus change since). */
static void request_activation(ksr_x11 *x, Window w, bool wm)
{
	XRaiseWindow(x->dpy, w);
	if (!wm) {
		XSetInputFocus(x->dpy, w, RevertToParent, CurrentTime);
		return;
	}
	XEvent ev = {0};
	ev.xclient.type = ClientMessage;
	ev.xclient.window = w;
	ev.xclient.message_type = x->atoms[KSR_NET_ACTIVE_WINDOW];
	ev.xclient.format = 32;
	ev.xclient.data.l[0] = 2; /* source: a pager, which WMs obey */
	ev.xclient.data.l[1] = (long)ksr_x11_server_time(x, NULL);
	ev.xclient.data.l[2] =
	        (long)root_window_prop(x, x->atoms[KSR_NET_ACTIVE_WINDOW], XA_WINDOW);
	XSendEvent(x->dpy, x->root, False, SubstructureRedirectMask | SubstructureNotifyMask, &ev);
}

static int viewable(ksr_x11 *x, Window w, ksr_err *err)
{
	XWindowAttributes wa;
	if (!XGetWindowAttributes(x->dpy, w, &wa) || wa.map_state != IsViewable) {
		if (ksr_x11_lost(x, err) < 0)
			return -1;
		return ksr_err_set(err, "cannot focus window 0x%lx: it is gone or not mapped", w);
	}
	return 0;
}

static int activation_failed(ksr_x11 *x, Window w, ksr_wait why, ksr_err *err)
{
	if (ksr_x11_lost(x, err) < 0)
		return -1;
	if (why == KSR_WAIT_CANCELLED)
		return ksr_err_set(err, "cancelled while focusing window 0x%lx", w);
	if (viewable(x, w, err) < 0)
		return -1;
	return ksr_err_set(err, "window 0x%lx did not get the input focus in time", w);
}

int ksr_x11_activate(ksr_x11 *x, unsigned long window, ksr_deadline d, ksr_err *err)
{
	if (ksr_x11_input_begin(x, err) < 0 || viewable(x, window, err) < 0)
		return -1;
	bool wm = root_window_prop(x, x->atoms[KSR_NET_SUPPORTING_WM_CHECK], XA_WINDOW) != 0;
	/* Already active (the usual case from the second step on): nothing to
	 * ask, nothing to wait for. Only raised (one request, no reply awaited):
	 * a window mapped since, which the WM did not give the focus (focus
	 * stealing prevention), may cover it; on top already, the WM does nothing. */
	if (is_active(x, window, wm, false)) {
		XRaiseWindow(x->dpy, window);
		return ksr_x11_input_end(x, err);
	}
	/* Keep the masks x11.c's listing selected, and add focus changes. */
	XSelectInput(x->dpy, window, PropertyChangeMask | StructureNotifyMask | FocusChangeMask);
	request_activation(x, window, wm);
	XFlush(x->dpy);
	activate_ctx ctx = {x, window};
	ksr_deadline fallback = ksr_deadline_min(d, ksr_deadline_in_ms(ACTIVATE_FALLBACK_MS));
	bool forced = !wm;
	for (;;) {
		if (x->dead)
			return ksr_x11_lost(x, err);
		if (is_active(x, window, wm, forced))
			return 0;
		ksr_wait w = ksr_x11_input_wait(x, forced ? d : fallback, activation_event, &ctx);
		if (w == KSR_WAIT_TIMEOUT && !forced && !ksr_deadline_passed(d)) {
			forced = true;
			XSetInputFocus(x->dpy, window, RevertToParent, CurrentTime);
			XFlush(x->dpy);
			continue;
		}
		if (w != KSR_WAIT_READY)
			return is_active(x, window, wm, true)
			               ? 0
			               : activation_failed(x, window, w, err);
		if (viewable(x, window, err) < 0) /* unmapped or destroyed meanwhile */
			return -1;
	}
}
