/* The RECORD extension: every client's key and button events as the server
 * processed them. Two connections of our own: one holds the context (create,
 * disable), the other only carries the recorded data, so its descriptor can
 * wait beside anything (ksr_wait_fds) and no event of the main connection is
 * taken. Keyboard mapping changes (a client binding a spare keycode to type a
 * character, as xdotool and our own typing do) are recorded too, in the same
 * stream, so each key is read with the keymap as it was at that moment: the
 * binding is usually undone before we get to read the event. */
#include "ksr/x11_record.h"
#include "ksr/x11.h"
#include "backend/x11/priv.h"

#include <X11/Xatom.h>
#include <X11/Xproto.h>
#include <X11/Xutil.h>
#include <X11/extensions/record.h>
#include <X11/keysym.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xkbcommon/xkbcommon.h>

#define QUEUE_MAX   4096
#define SYMS_PER_KC 8

enum { MOD_SHIFT, MOD_CTRL, MOD_ALT, MOD_SUPER, MOD_ALTGR, MOD_N };

struct ksr_x11_record {
	Display *ctrl, *data;
	XRecordContext ctx;
	bool enabled, dead;
	KeySym syms[256][SYMS_PER_KC]; /* the core keymap, as the stream changes it */
	bool down[256];
	int held[MOD_N];
	bool caps;
	ksr_rec_event q[QUEUE_MAX]; /* a ring */
	size_t head, len;
};

static void on_record_io_error(Display *dpy, void *data)
{
	(void)dpy;
	((ksr_x11_record *)data)->dead = true;
}

static void load_keymap(ksr_x11_record *r)
{
	int min_kc = 0, max_kc = 0, per = 0;
	XDisplayKeycodes(r->ctrl, &min_kc, &max_kc);
	KeySym *m = XGetKeyboardMapping(r->ctrl, (KeyCode)min_kc, max_kc - min_kc + 1, &per);
	if (!m)
		return;
	for (int kc = min_kc; kc <= max_kc && kc < 256; kc++)
		for (int j = 0; j < per && j < SYMS_PER_KC; j++)
			r->syms[kc][j] = m[(kc - min_kc) * per + j];
	XFree(m);
}

/* A ChangeKeyboardMapping request as the client sent it. */
static void apply_mapping(ksr_x11_record *r, const unsigned char *req, size_t len)
{
	if (len < sizeof(xChangeKeyboardMappingReq))
		return;
	const xChangeKeyboardMappingReq *c = (const void *)req;
	int per = c->keySymsPerKeyCode, n = c->keyCodes, first = c->firstKeyCode;
	const CARD32 *syms = (const void *)(req + sizeof *c);
	if (sizeof *c + (size_t)n * per * 4 > len)
		return;
	for (int i = 0; i < n && first + i < 256; i++)
		for (int j = 0; j < SYMS_PER_KC; j++)
			r->syms[first + i][j] = j < per ? syms[i * per + j] : NoSymbol;
}

static int modifier_of(KeySym s)
{
	switch (s) {
	case XK_Shift_L:
	case XK_Shift_R:
		return MOD_SHIFT;
	case XK_Control_L:
	case XK_Control_R:
		return MOD_CTRL;
	case XK_Alt_L:
	case XK_Alt_R:
	case XK_Meta_L:
	case XK_Meta_R:
		return MOD_ALT;
	case XK_Super_L:
	case XK_Super_R:
	case XK_Hyper_L:
	case XK_Hyper_R:
		return MOD_SUPER;
	case XK_ISO_Level3_Shift:
	case XK_Mode_switch:
		return MOD_ALTGR;
	default:
		return -1;
	}
}

static unsigned mods_now(const ksr_x11_record *r)
{
	static const unsigned bit[MOD_N] = {KSR_REC_SHIFT, KSR_REC_CTRL, KSR_REC_ALT, KSR_REC_SUPER,
	                                    KSR_REC_ALTGR};
	unsigned m = r->caps ? KSR_REC_CAPS : 0;
	for (int i = 0; i < MOD_N; i++)
		if (r->held[i] > 0)
			m |= bit[i];
	return m;
}

/* The keysym at the level the modifiers pick, by the core protocol's rules
 * (a column pair without its second keysym is the first's lower and upper
 * case; Caps Lock inverts Shift for letters; AltGr reads the third pair). */
static KeySym level_keysym(const ksr_x11_record *r, int kc, unsigned mods)
{
	const KeySym *s = r->syms[kc];
	int base = (mods & KSR_REC_ALTGR) && (s[4] || s[5]) ? 4 : 0;
	KeySym lo = s[base], hi = s[base + 1], l = lo, u = lo;
	XConvertCase(lo, &l, &u);
	if (hi == NoSymbol) {
		lo = l;
		hi = u;
	}
	bool shift = mods & KSR_REC_SHIFT;
	if ((mods & KSR_REC_CAPS) && l != u)
		shift = !shift;
	return shift && hi != NoSymbol ? hi : lo;
}

static void push(ksr_x11_record *r, const ksr_rec_event *e)
{
	if (r->len == QUEUE_MAX) /* the reader fell far behind: keep the newest */
		r->head = (r->head + 1) % QUEUE_MAX, r->len--;
	r->q[(r->head + r->len) % QUEUE_MAX] = *e;
	r->len++;
}

static void key_event(ksr_x11_record *r, ksr_rec_event *e)
{
	int kc = e->detail & 0xff;
	e->base_keysym = r->syms[kc][0];
	e->keysym = level_keysym(r, kc, e->mods);
	int mod = modifier_of(e->base_keysym);
	e->is_modifier = mod >= 0 || e->base_keysym == XK_Caps_Lock;
	bool press = e->kind == KSR_REC_KEY_PRESS;
	if (mod >= 0 && press != r->down[kc])
		r->held[mod] += press ? 1 : -1;
	if (e->base_keysym == XK_Caps_Lock && press && !r->down[kc])
		r->caps = !r->caps;
	r->down[kc] = press;
	if (!press || e->is_modifier)
		return;
	char buf[sizeof e->utf8] = {0};
	if (xkb_keysym_to_utf8((xkb_keysym_t)e->keysym, buf, sizeof buf) > 1 &&
	    (unsigned char)buf[0] >= 0x20 && buf[0] != 0x7f)
		memcpy(e->utf8, buf, sizeof buf);
}

static void server_event(ksr_x11_record *r, const xEvent *ev)
{
	int type = ev->u.u.type & 0x7f;
	if (type < KeyPress || type > ButtonRelease)
		return;
	ksr_rec_event e = {.kind = type == KeyPress      ? KSR_REC_KEY_PRESS
	                           : type == KeyRelease  ? KSR_REC_KEY_RELEASE
	                           : type == ButtonPress ? KSR_REC_BUTTON_PRESS
	                                                 : KSR_REC_BUTTON_RELEASE,
	                   .detail = ev->u.u.detail,
	                   .x = ev->u.keyButtonPointer.rootX,
	                   .y = ev->u.keyButtonPointer.rootY,
	                   .time_ms = ev->u.keyButtonPointer.time,
	                   .mods = mods_now(r)};
	if (type == KeyPress || type == KeyRelease)
		key_event(r, &e);
	push(r, &e);
}

static void on_data(XPointer priv, XRecordInterceptData *d)
{
	ksr_x11_record *r = (ksr_x11_record *)priv;
	size_t len = (size_t)d->data_len * 4;
	if (d->category == XRecordFromServer && len >= sizeof(xEvent))
		server_event(r, (const xEvent *)d->data);
	else if (d->category == XRecordFromClient && len >= 4 &&
	         d->data[0] == X_ChangeKeyboardMapping)
		apply_mapping(r, d->data, len);
	XRecordFreeData(d);
}

static Display *open_conn(const ksr_x11 *x, ksr_x11_record *r, ksr_err *err)
{
	Display *dpy = XOpenDisplay(x->name);
	if (!dpy)
		ksr_err_set(err, "cannot open a connection for recording to X display %s", x->name);
	else
		XSetIOErrorExitHandler(dpy, on_record_io_error, r);
	return dpy;
}

static int create_context(ksr_x11_record *r, ksr_err *err)
{
	int major = 0, minor = 0;
	if (!XRecordQueryVersion(r->ctrl, &major, &minor))
		return ksr_err_set(err, "the X server has no RECORD extension (Xvfb and Xorg load "
		                        "it by default; was it disabled with -extension RECORD?)");
	XRecordRange *range = XRecordAllocRange();
	if (!range)
		return ksr_err_set(err, "out of memory");
	range->device_events.first = KeyPress;
	range->device_events.last = ButtonRelease;
	range->core_requests.first = X_ChangeKeyboardMapping;
	range->core_requests.last = X_ChangeKeyboardMapping;
	XRecordClientSpec spec = XRecordAllClients;
	r->ctx = XRecordCreateContext(r->ctrl, 0, &spec, 1, &range, 1);
	XFree(range);
	XSync(r->ctrl, False);
	if (!r->ctx)
		return ksr_err_set(err, "XRecordCreateContext failed");
	return 0;
}

ksr_x11_record *ksr_x11_record_open(const ksr_x11 *x, ksr_err *err)
{
	if (ksr_x11_lost((ksr_x11 *)x, err) < 0)
		return NULL;
	ksr_x11_record *r = ksr_xcalloc(1, sizeof *r);
	if (!(r->ctrl = open_conn(x, r, err)) || !(r->data = open_conn(x, r, err)) ||
	    create_context(r, err) < 0) {
		ksr_x11_record_close(r);
		return NULL;
	}
	load_keymap(r);
	if (!XRecordEnableContextAsync(r->data, r->ctx, on_data, (XPointer)r)) {
		ksr_err_set(err, "XRecordEnableContextAsync failed");
		ksr_x11_record_close(r);
		return NULL;
	}
	r->enabled = true;
	XFlush(r->data);
	return r;
}

int ksr_x11_record_fd(const ksr_x11_record *r)
{
	return r && !r->dead ? ConnectionNumber(r->data) : -1;
}

int ksr_x11_record_read(ksr_x11_record *r, ksr_rec_event *out, size_t max)
{
	if (!r)
		return -1;
	if (!r->dead && r->len < max)
		XRecordProcessReplies(r->data);
	size_t n = 0;
	while (n < max && r->len) {
		out[n++] = r->q[r->head];
		r->head = (r->head + 1) % QUEUE_MAX;
		r->len--;
	}
	return n == 0 && r->dead ? -1 : (int)n;
}

void ksr_x11_record_close(ksr_x11_record *r)
{
	if (!r)
		return;
	if (r->ctrl && !r->dead && r->ctx) {
		if (r->enabled)
			XRecordDisableContext(r->ctrl, r->ctx);
		XRecordFreeContext(r->ctrl, r->ctx);
		XSync(r->ctrl, False);
	}
	if (r->data && !r->dead)
		XRecordProcessReplies(r->data);
	if (r->data)
		XCloseDisplay(r->data);
	if (r->ctrl)
		XCloseDisplay(r->ctrl);
	free(r);
}

const char *ksr_x11_keysym_name(unsigned long keysym, char *buf, size_t len)
{
	if (!keysym || !len)
		return NULL;
	/* a Unicode keysym by its code point: XKeysymToString would allocate
	 * some of those names and not others */
	if (keysym >= 0x01000100 && keysym <= 0x0110ffff) {
		snprintf(buf, len, "U%04lX", keysym & 0xffffff);
		return buf;
	}
	const char *name = XKeysymToString((KeySym)keysym);
	if (!name)
		return NULL;
	snprintf(buf, len, "%s", name);
	return buf;
}

unsigned ksr_x11_keysym_modifier(unsigned long keysym)
{
	static const unsigned bit[MOD_N] = {KSR_REC_SHIFT, KSR_REC_CTRL, KSR_REC_ALT, KSR_REC_SUPER,
	                                    KSR_REC_ALTGR};
	int m = modifier_of((KeySym)keysym);
	return m < 0 ? 0 : bit[m];
}

unsigned long ksr_x11_active_window(ksr_x11 *x)
{
	if (!x || x->dead)
		return 0;
	Atom type = None;
	int format = 0;
	unsigned long n = 0, after = 0, id = 0;
	unsigned char *data = NULL;
	if (XGetWindowProperty(x->dpy, x->root, x->atoms[KSR_NET_ACTIVE_WINDOW], 0, 1, False,
	                       XA_WINDOW, &type, &format, &n, &after, &data) == Success &&
	    data && n == 1 && format == 32)
		id = *(unsigned long *)data;
	if (data)
		XFree(data);
	if (id)
		return id;
	Window focus = None;
	int revert = 0;
	XGetInputFocus(x->dpy, &focus, &revert);
	return focus == PointerRoot ? 0 : focus;
}
