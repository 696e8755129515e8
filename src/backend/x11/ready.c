/* Is a window ready for input: viewable, not covered at the point, its app
 * answering pings, and no longer repainting. Repaints come from the DAMAGE
 * extension: one Damage object per window, created the first time a window
 * is asked about and kept, its events recorded by every wait of the backend
 * (ksr_x11_ready_event), so a window that has been quiet for a while is known
 * to be quiet after one round trip. */
#include "ksr/x11.h"
#include "backend/x11/priv.h"

#include <X11/Xatom.h>
#include <X11/Xutil.h>
#include <X11/extensions/Xdamage.h>
#include <stdlib.h>
#include <string.h>

#define N_DAMAGED (sizeof((ksr_x11 *)0)->damaged / sizeof((ksr_x11 *)0)->damaged[0])

/* ---- the server's clock ---- */

/* A DamageNotify carries the server's time of the damage; read late (the
 * runtime was busy elsewhere), it still dates the repaint right. The offset
 * comes from one server timestamp (ksr_x11_server_time). */
static void calibrate_clock(ksr_x11 *x)
{
	int64_t ours = 0;
	unsigned long t = ksr_x11_server_time(x, &ours);
	if (t != CurrentTime) {
		x->clock_ours_ms = ours;
		x->clock_server_ms = t;
		x->have_clock = true;
	}
}

/* Our clock's ms of a server timestamp; a 32-bit server time wraps, so the
 * difference to the calibration point is taken as signed. Never later than now. */
static int64_t server_to_ours(const ksr_x11 *x, unsigned long t)
{
	int64_t now = ksr_now_ms();
	if (!x->have_clock)
		return now;
	int32_t delta = (int32_t)(uint32_t)(t - x->clock_server_ms);
	int64_t at = x->clock_ours_ms + delta;
	return at > now ? now : at;
}

/* ---- damage ---- */

bool ksr_x11_damage_available(ksr_x11 *x)
{
	if (!x || x->dead)
		return false;
	if (x->damage_event == 0) {
		int ev = 0, er = 0, major = 1, minor = 1;
		bool ok = XDamageQueryExtension(x->dpy, &ev, &er) &&
		          XDamageQueryVersion(x->dpy, &major, &minor);
		x->damage_event = ok ? ev + XDamageNotify : -1;
		if (ok)
			calibrate_clock(x);
	}
	return x->damage_event > 0;
}

static struct ksr_x11_damaged *find_damaged(ksr_x11 *x, unsigned long win)
{
	for (size_t i = 0; i < N_DAMAGED; i++)
		if (x->damaged[i].win == win && win)
			return &x->damaged[i];
	return NULL;
}

/* A free slot, else the least recently used one (its Damage destroyed). */
static struct ksr_x11_damaged *free_slot(ksr_x11 *x)
{
	struct ksr_x11_damaged *lru = &x->damaged[0];
	for (size_t i = 0; i < N_DAMAGED; i++) {
		if (!x->damaged[i].win)
			return &x->damaged[i];
		if (x->damaged[i].used_ms < lru->used_ms)
			lru = &x->damaged[i];
	}
	XDamageDestroy(x->dpy, lru->damage);
	memset(lru, 0, sizeof *lru);
	return lru;
}

int ksr_x11_damage_track(ksr_x11 *x, unsigned long window, ksr_err *err)
{
	if (ksr_x11_lost(x, err) < 0)
		return -1;
	if (!ksr_x11_damage_available(x))
		return ksr_err_set(err, "the X server %s has no DAMAGE extension", x->name);
	struct ksr_x11_damaged *e = find_damaged(x, window);
	int64_t now = ksr_now_ms();
	if (e) {
		e->used_ms = now;
		return 0;
	}
	unsigned long errors = ksr_x11_error_count();
	/* Raw rectangles: one event per repaint, none lost between an event and
	 * its acknowledgement (the non-empty level needs a subtract after each). */
	Damage dmg = XDamageCreate(x->dpy, window, XDamageReportRawRectangles);
	XSync(x->dpy, False);
	if (x->dead)
		return ksr_x11_lost(x, err);
	if (ksr_x11_error_count() != errors)
		return ksr_err_set(err, "window 0x%lx is gone", window);
	e = free_slot(x);
	*e = (struct ksr_x11_damaged){.win = window, .damage = dmg, .last_ms = now, .used_ms = now};
	return 0;
}

/* The window a relevant event is about (not the one it was reported on:
 * the root, for its children's changes). */
static unsigned long changed_window(const XEvent *ev)
{
	switch (ev->type) {
	case MapNotify:
		return ev->xmap.window;
	case UnmapNotify:
		return ev->xunmap.window;
	case DestroyNotify:
		return ev->xdestroywindow.window;
	case CreateNotify:
		return ev->xcreatewindow.window;
	case ReparentNotify:
		return ev->xreparent.window;
	default:
		return ev->xany.window; /* PropertyNotify: the window whose property it is */
	}
}

static void note_change(ksr_x11 *x, const XEvent *ev)
{
	size_t n = sizeof x->changes / sizeof x->changes[0];
	x->last_change_ms = ksr_now_ms();
	x->changes[x->changes_next++ % n] =
	        (struct ksr_x11_change){.ms = x->last_change_ms, .win = changed_window(ev)};
}

void ksr_x11_ready_event(ksr_x11 *x, const XEvent *ev)
{
	if (x->damage_event > 0 && ev->type == x->damage_event) {
		const XDamageNotifyEvent *d = (const XDamageNotifyEvent *)ev;
		struct ksr_x11_damaged *e = find_damaged(x, d->drawable);
		int64_t at = server_to_ours(x, d->timestamp);
		if (e && at > e->last_ms)
			e->last_ms = at;
		if (e)
			e->count++;
		return;
	}
	if (ev->type == DestroyNotify) {
		/* The server freed the window's Damage with it. */
		struct ksr_x11_damaged *e = find_damaged(x, ev->xdestroywindow.window);
		if (e)
			memset(e, 0, sizeof *e);
	}
	if (ev->type == ClientMessage && ev->xclient.message_type == x->wm_protocols &&
	    (Atom)ev->xclient.data.l[0] == x->net_wm_ping &&
	    (unsigned long)ev->xclient.data.l[1] == x->ping_serial &&
	    (unsigned long)ev->xclient.data.l[2] == x->ping_window)
		x->pong = true;
	if (ksr_x11_relevant_event(x, ev))
		note_change(x, ev);
	ksr_x11_randr_event(x, ev);
}

void ksr_x11_ready_release(ksr_x11 *x)
{
	if (x->dead)
		return;
	for (size_t i = 0; i < N_DAMAGED; i++)
		if (x->damaged[i].win)
			XDamageDestroy(x->dpy, x->damaged[i].damage);
	memset(x->damaged, 0, sizeof x->damaged);
}

/* When the windows will have been quiet long enough: the newest damage (or
 * window change, or the input) plus the interval. */
static int64_t quiet_at(ksr_x11 *x, const unsigned long *wins, size_t n, const ksr_x11_quiet *q)
{
	int64_t last = q->since_ms;
	for (size_t i = 0; i < n; i++) {
		const struct ksr_x11_damaged *e = find_damaged(x, wins[i]);
		if (e && e->last_ms > last)
			last = e->last_ms;
	}
	if (q->window_changes && x->last_change_ms > last)
		last = x->last_change_ms;
	return last + q->quiet_ms;
}

static ksr_wait track_all(ksr_x11 *x, const unsigned long *wins, size_t n)
{
	ksr_err err = {0};
	if (!ksr_x11_damage_available(x))
		return KSR_WAIT_ERROR;
	for (size_t i = 0; i < n; i++)
		if (wins[i] && ksr_x11_damage_track(x, wins[i], &err) < 0 && x->dead)
			return KSR_WAIT_ERROR;
	return KSR_WAIT_READY; /* a window that went away is not waited for */
}

ksr_wait ksr_x11_quiet_wait(ksr_x11 *x, const unsigned long *wins, size_t n, const ksr_x11_quiet *q,
                            ksr_deadline d, int64_t *waited_ms)
{
	int64_t start = ksr_now_ms();
	*waited_ms = 0;
	if (!x || x->dead || track_all(x, wins, n) != KSR_WAIT_READY)
		return KSR_WAIT_ERROR;
	bool synced = false;
	for (;;) {
		if (ksr_cancelled())
			return KSR_WAIT_CANCELLED;
		if (!synced) {
			/* Every repaint the server did before this point is queued
			 * before the reply: nothing recent goes unseen. */
			XSync(x->dpy, False);
			synced = true;
		}
		ksr_x11_input_pump(x);
		if (x->dead)
			return KSR_WAIT_ERROR;
		int64_t at = quiet_at(x, wins, n, q);
		*waited_ms = ksr_now_ms() - start;
		if (ksr_now_ms() >= at)
			return KSR_WAIT_READY;
		if (ksr_deadline_passed(d))
			return KSR_WAIT_TIMEOUT;
		struct pollfd pfd = {.fd = ConnectionNumber(x->dpy), .events = POLLIN};
		ksr_deadline until = ksr_deadline_min(d, (ksr_deadline){.at_ms = at});
		ksr_wait w = ksr_wait_fds(&pfd, 1, until);
		if (w == KSR_WAIT_CANCELLED || w == KSR_WAIT_ERROR)
			return w;
		synced = w == KSR_WAIT_READY; /* quiet so far: look again before saying so */
	}
}

ksr_wait ksr_x11_damage_wait(ksr_x11 *x, unsigned long window, int64_t since_ms, ksr_deadline d)
{
	if (!x || x->dead || track_all(x, &window, 1) != KSR_WAIT_READY)
		return KSR_WAIT_ERROR;
	XSync(x->dpy, False); /* what the server did before now is queued */
	for (;;) {
		ksr_x11_input_pump(x);
		if (x->dead)
			return KSR_WAIT_ERROR;
		const struct ksr_x11_damaged *e = find_damaged(x, window);
		if (!e || e->last_ms > since_ms)
			return KSR_WAIT_READY; /* repainted (or gone: the caller looks) */
		struct pollfd pfd = {.fd = ConnectionNumber(x->dpy), .events = POLLIN};
		ksr_wait w = ksr_wait_fds(&pfd, 1, d);
		if (w != KSR_WAIT_READY)
			return w;
	}
}

int ksr_x11_damaged_since(ksr_x11 *x, unsigned long window, int64_t since_ms)
{
	if (!x || x->dead || !window)
		return -1;
	XSync(x->dpy, False); /* every repaint so far is queued before the reply */
	ksr_x11_input_pump(x);
	const struct ksr_x11_damaged *e = find_damaged(x, window);
	if (x->dead || !e)
		return -1;
	return e->last_ms > since_ms;
}

long ksr_x11_damage_count(ksr_x11 *x, unsigned long window)
{
	if (!x || x->dead || !window)
		return -1;
	XSync(x->dpy, False); /* every repaint so far is queued before the reply */
	ksr_x11_input_pump(x);
	const struct ksr_x11_damaged *e = find_damaged(x, window);
	return x->dead || !e ? -1 : e->count;
}

int64_t ksr_x11_last_change_ms(const ksr_x11 *x)
{
	return x ? x->last_change_ms : 0;
}

int ksr_x11_client_changed_since(ksr_x11 *x, const unsigned long *of, size_t n_of, int64_t since_ms)
{
	if (!x || x->dead)
		return -1;
	ksr_x11_input_pump(x); /* what has been read from the server so far */
	size_t cap = sizeof x->changes / sizeof x->changes[0];
	size_t have = x->changes_next < cap ? x->changes_next : cap;
	bool older_seen = have < cap;
	for (size_t k = 1; k <= have; k++) {
		const struct ksr_x11_change *c = &x->changes[(x->changes_next - k) % cap];
		if (c->ms <= since_ms) {
			older_seen = true;
			break;
		}
		for (size_t i = 0; i < n_of; i++)
			if (of[i] && (c->win == of[i] || ksr_x11_same_client(x, c->win, of[i])))
				return 1;
	}
	return older_seen ? 0 : -1; /* -1: more changes than the ring holds */
}

unsigned long ksr_x11_input_focus(ksr_x11 *x)
{
	if (!x || x->dead)
		return 0;
	Window focus = None;
	int revert = 0;
	XGetInputFocus(x->dpy, &focus, &revert);
	return focus == PointerRoot ? 0 : focus;
}

/* ---- viewable, covered, answering ---- */

int ksr_x11_window_viewable(ksr_x11 *x, unsigned long window)
{
	XWindowAttributes wa;
	if (!x || x->dead || !XGetWindowAttributes(x->dpy, window, &wa))
		return -1;
	return wa.map_state == IsViewable;
}

/* The child of the root that holds w (a WM frame, or w itself). */
static Window top_level(ksr_x11 *x, Window w)
{
	for (;;) {
		Window root_ret, parent = None, *kids = NULL;
		unsigned int n = 0;
		if (!XQueryTree(x->dpy, w, &root_ret, &parent, &kids, &n))
			return None;
		if (kids)
			XFree(kids);
		if (parent == x->root || parent == None)
			return w;
		w = parent;
	}
}

int ksr_x11_point_covered(ksr_x11 *x, unsigned long window, int px, int py, unsigned long *by)
{
	*by = 0;
	if (!x || x->dead)
		return -1;
	Window top = top_level(x, window), child = None;
	int tx, ty;
	if (top == None)
		return -1;
	if (!XTranslateCoordinates(x->dpy, x->root, x->root, px, py, &tx, &ty, &child) ||
	    child == None || child == top)
		return 0;
	XWindowAttributes wa;
	if (!XGetWindowAttributes(x->dpy, child, &wa))
		return 0;
	if (wa.override_redirect &&
	    (ksr_x11_same_client(x, child, window) || ksr_x11_ours(x, child)))
		return 0; /* the app's own popup (its menu): the input goes to the app */
	Window client = ksr_x11_client_of(x, child);
	*by = client != None ? client : child;
	return 1;
}

int ksr_x11_override_redirect(ksr_x11 *x, unsigned long window)
{
	XWindowAttributes wa;
	if (!x || x->dead || !XGetWindowAttributes(x->dpy, window, &wa))
		return -1;
	return wa.override_redirect ? 1 : 0;
}

static bool stacking_event(ksr_x11 *x, const XEvent *ev, void *unused)
{
	(void)x;
	(void)unused;
	switch (ev->type) {
	case MapNotify:
	case UnmapNotify:
	case ConfigureNotify:
	case DestroyNotify:
	case CirculateNotify:
	case ReparentNotify:
		return true;
	default:
		return false;
	}
}

typedef struct ready_ctx {
	ksr_x11 *x;
	bool (*match)(ksr_x11 *, const XEvent *, void *);
} ready_ctx;

static bool ctx_match(const XEvent *ev, void *p)
{
	const ready_ctx *c = p;
	return c->match(c->x, ev, NULL);
}

ksr_wait ksr_x11_wait_stacking(ksr_x11 *x, ksr_deadline d)
{
	if (!x || x->dead)
		return KSR_WAIT_ERROR;
	ready_ctx c = {x, stacking_event};
	return ksr_x11_input_wait(x, d, ctx_match, &c);
}

static void ping_atoms(ksr_x11 *x)
{
	if (!x->wm_protocols) {
		x->wm_protocols = XInternAtom(x->dpy, "WM_PROTOCOLS", False);
		x->net_wm_ping = XInternAtom(x->dpy, "_NET_WM_PING", False);
	}
}

bool ksr_x11_takes_pings(ksr_x11 *x, Window w)
{
	Atom *protos = NULL;
	int n = 0;
	bool yes = false;
	ping_atoms(x);
	if (XGetWMProtocols(x->dpy, w, &protos, &n)) {
		for (int i = 0; i < n; i++)
			yes = yes || protos[i] == x->net_wm_ping;
		XFree(protos);
	}
	return yes;
}

void ksr_x11_send_ping(ksr_x11 *x, Window w)
{
	/* The answer comes to the root window, whose SubstructureNotify we
	 * selected at open; the serial tells it from the window manager's pings. */
	ping_atoms(x);
	x->ping_serial++;
	x->ping_window = w;
	x->pong = false;
	XEvent ev = {0};
	ev.xclient.type = ClientMessage;
	ev.xclient.window = w;
	ev.xclient.message_type = x->wm_protocols;
	ev.xclient.format = 32;
	ev.xclient.data.l[0] = (long)x->net_wm_ping;
	ev.xclient.data.l[1] = (long)x->ping_serial;
	ev.xclient.data.l[2] = (long)w;
	XSendEvent(x->dpy, w, False, NoEventMask, &ev);
	XFlush(x->dpy);
}

bool ksr_x11_pong_event(const XEvent *ev, void *p)
{
	(void)ev;
	return ((ksr_x11 *)p)->pong;
}

ksr_wait ksr_x11_ping_wait(ksr_x11 *x, unsigned long window, ksr_deadline d, bool *supported)
{
	*supported = false;
	if (!x || x->dead)
		return KSR_WAIT_ERROR;
	if (!ksr_x11_takes_pings(x, window))
		return x->dead ? KSR_WAIT_ERROR : KSR_WAIT_READY;
	*supported = true;
	ksr_x11_send_ping(x, window);
	ksr_wait w = ksr_x11_input_wait(x, d, ksr_x11_pong_event, x);
	return x->pong ? KSR_WAIT_READY : w;
}
