/* Key chords and typing through XTest, whatever the keyboard layout. A keysym
 * found in the keymap's unshifted or Shift column is typed with that keycode
 * (and Shift); any other (AltGr levels, other scripts, absent keys) is bound to a
 * spare keycode. All of a string's missing keysyms are bound at once (a change
 * per run of adjacent spare keycodes, then one round trip that tells whether any
 * failed), then typed: remapping per character races with the MappingNotify
 * every client must process first. The bindings
 * then stay (a spare keycode has no physical key: nobody else types on it), so
 * the next text with the same characters changes nothing and waits for nobody;
 * a keycode is only rebound once the client typed to has read the keys typed
 * on it (_NET_WM_PING), and all are unbound when the connection closes. */
#include "ksr/keys.h"
#include "ksr/x11.h"
#include "backend/x11/priv.h"

#include <X11/XKBlib.h>
#include <X11/Xproto.h>
#include <X11/Xutil.h>
#include <X11/extensions/XTest.h>
#include <X11/keysym.h>
#include <stdlib.h>
#include <string.h>

/* Bound on the wait inside one call (it takes no deadline): a client answers a
 * ping when its queue of our keys is drained. */
#define PING_WAIT_MS 1000
/* A focused client without _NET_WM_PING (xterm): how long we let it read our
 * keys before the spare keycodes are unbound. */
#define NO_PING_SETTLE_MS 50

typedef struct keystroke {
	KeyCode kc;
	bool shift;
} keystroke;

/* The keysyms one batch of chords binds to spare keycodes, and which of our
 * earlier bindings it keeps (uses) or takes back for them. */
typedef struct binding {
	unsigned long ks[256];
	KeyCode kc[256];
	int n;
	int nspare; /* -1 until a missing keysym makes us look for spares */
	KeyCode spare[256];
	int next;                   /* the first spare not looked at yet */
	bool keep[256], evict[256]; /* by keycode */
} binding;

/* ---- keymap ----
 * With XKB (every current server) the keymap is Xlib's own XKB client map: read
 * once, and refreshed lazily by Xlib when an XkbMapNotify is read off the wire,
 * whoever then takes the event from the queue (x11.c's waits drop events they do
 * not want). Without XKB we keep the core map, refreshed on the MappingNotify our
 * own waits see. */

static int keymap_load_core(ksr_x11 *x, ksr_err *err)
{
	struct ksr_x11_keymap *m = &x->keymap;
	int kpk = 0, count = m->max_kc - m->min_kc + 1;
	KeySym *syms = XGetKeyboardMapping(x->dpy, (KeyCode)m->min_kc, count, &kpk);
	if (!syms || kpk < 1) {
		if (syms)
			XFree(syms);
		if (ksr_x11_lost(x, err) < 0)
			return -1;
		return ksr_err_set(err, "cannot read the keyboard mapping of %s", x->name);
	}
	memset(m->sym, 0, sizeof m->sym);
	memset(m->spare, 0, sizeof m->spare);
	for (int i = 0; i < count; i++) {
		const KeySym *k = syms + (size_t)i * (size_t)kpk;
		int kc = m->min_kc + i;
		bool empty = true;
		for (int j = 0; j < kpk; j++)
			empty = empty && k[j] == NoSymbol;
		m->spare[kc] = empty;
		m->sym[kc][0] = k[0];
		m->sym[kc][1] = kpk > 1 ? k[1] : NoSymbol;
		if (m->sym[kc][1] == NoSymbol && k[0] != NoSymbol) {
			/* Core rule: a lone lowercase letter implies its capital with Shift. */
			KeySym lower, upper;
			XConvertCase(k[0], &lower, &upper);
			if (lower != upper && k[0] == lower)
				m->sym[kc][1] = upper;
		}
	}
	XFree(syms);
	return 0;
}

static int keymap_fresh(ksr_x11 *x, ksr_err *err)
{
	struct ksr_x11_keymap *m = &x->keymap;
	ksr_x11_input_pump(x);
	if (m->stale)
		m->rev_valid = false; /* Xlib's XKB map is fresh; our table of it is not */
	if (m->loaded && x->xkb_event) {
		m->stale = false;
		return 0;
	}
	if (m->loaded && !m->stale)
		return 0;
	XDisplayKeycodes(x->dpy, &m->min_kc, &m->max_kc);
	if (m->min_kc < 8 || m->max_kc > 255 || m->min_kc > m->max_kc)
		return ksr_err_set(err, "the X server reports keycodes %d-%d", m->min_kc,
		                   m->max_kc);
	if (!x->xkb_event && keymap_load_core(x, err) < 0)
		return -1;
	m->loaded = true;
	m->stale = false;
	m->rev_valid = false;
	return 0;
}

/* Group 1, level 1 (unshifted) or 2 (Shift) of keycode kc. */
static KeySym sym_at(const ksr_x11 *x, int kc, int level)
{
	if (x->xkb_event)
		return XkbKeycodeToKeysym(x->dpy, (KeyCode)kc, 0, level);
	return x->keymap.sym[kc][level];
}

/* No keysym in any group or level: nobody uses it, we may bind it. */
static bool is_spare(const ksr_x11 *x, int kc)
{
	if (!x->xkb_event)
		return x->keymap.spare[kc];
	for (int g = 0; g < XkbNumKbdGroups; g++)
		for (int l = 0; l < 8; l++)
			if (XkbKeycodeToKeysym(x->dpy, (KeyCode)kc, g, l) != NoSymbol)
				return false;
	return true;
}

/* The keycode typing ks: unshifted levels first, then Shift ones. */
static bool keymap_scan(const ksr_x11 *x, unsigned long ks, keystroke *out)
{
	const struct ksr_x11_keymap *m = &x->keymap;
	for (int level = 0; level < 2; level++)
		for (int kc = m->min_kc; kc <= m->max_kc; kc++)
			if (sym_at(x, kc, level) == ks) {
				out->kc = (KeyCode)kc;
				out->shift = level == 1;
				return true;
			}
	return false;
}

#define REV_SLOTS (sizeof((struct ksr_x11_keymap *)0)->rev / sizeof(struct ksr_x11_keysym_slot))

static size_t rev_home(unsigned long ks)
{
	return (size_t)((ks * 2654435761u) % REV_SLOTS);
}

/* The slot of ks, or the empty one where it would go; NULL when full. */
static struct ksr_x11_keysym_slot *rev_slot(struct ksr_x11_keymap *m, unsigned long ks)
{
	for (size_t i = 0, at = rev_home(ks); i < REV_SLOTS; i++, at = (at + 1) % REV_SLOTS)
		if (m->rev[at].ks == ks || m->rev[at].ks == 0)
			return &m->rev[at];
	return NULL;
}

/* In keymap_scan's order, so that the first keycode found for a keysym is
 * the one kept (a later one never replaces it). */
static void rev_build(ksr_x11 *x)
{
	struct ksr_x11_keymap *m = &x->keymap;
	memset(m->rev, 0, sizeof m->rev);
	for (int level = 0; level < 2; level++)
		for (int kc = m->min_kc; kc <= m->max_kc; kc++) {
			unsigned long ks = sym_at(x, kc, level);
			struct ksr_x11_keysym_slot *slot = ks ? rev_slot(m, ks) : NULL;
			if (slot && slot->ks == 0)
				*slot = (struct ksr_x11_keysym_slot){ks, (unsigned char)kc,
				                                     level == 1};
		}
	m->rev_valid = true;
}

/* keymap_scan's answer from the table; a hit the keymap no longer has, or a
 * miss, is scanned for (a miss is rare: a keysym about to be bound). */
static bool keymap_find(ksr_x11 *x, unsigned long ks, keystroke *out)
{
	struct ksr_x11_keymap *m = &x->keymap;
	if (!m->rev_valid)
		rev_build(x);
	struct ksr_x11_keysym_slot *slot = ks ? rev_slot(m, ks) : NULL;
	if (slot && slot->ks == ks && sym_at(x, slot->kc, slot->shift ? 1 : 0) == ks) {
		out->kc = slot->kc;
		out->shift = slot->shift;
		return true;
	}
	bool found = keymap_scan(x, ks, out);
	if (found || (slot && slot->ks == ks))
		m->rev_valid = false; /* the keymap changed behind us: built again next time */
	return found;
}

/* ---- binding spare keycodes ---- */

static void binding_init(binding *b)
{
	b->n = 0;
	b->nspare = -1;
	b->next = 0;
	memset(b->keep, 0, sizeof b->keep);
	memset(b->evict, 0, sizeof b->evict);
}

/* Our binding of kc still holds (another client's keymap change may have
 * replaced it). */
static bool ours_holds(const ksr_x11 *x, int kc)
{
	unsigned long ks = x->keymap.ours[kc];
	return ks && sym_at(x, kc, 0) == ks;
}

/* Scanning every group and level of every keycode costs more than typing a
 * character, so it is done only when something is missing. Free keycodes come
 * first; then our own earlier bindings, which may be taken back. */
static void find_spares(ksr_x11 *x, binding *b)
{
	b->nspare = 0;
	for (int kc = x->keymap.min_kc; kc <= x->keymap.max_kc; kc++) {
		if (x->keymap.ours[kc] && !ours_holds(x, kc))
			x->keymap.ours[kc] = 0; /* someone rebound it: no longer ours */
		if (!x->keymap.ours[kc] && is_spare(x, kc))
			b->spare[b->nspare++] = (KeyCode)kc;
	}
	for (int kc = x->keymap.min_kc; kc <= x->keymap.max_kc; kc++)
		if (x->keymap.ours[kc])
			b->spare[b->nspare++] = (KeyCode)kc;
}

static bool binding_has(const binding *b, unsigned long ks, KeyCode *kc)
{
	for (int i = 0; i < b->n; i++)
		if (b->ks[i] == ks) {
			if (kc)
				*kc = b->kc[i];
			return true;
		}
	return false;
}

/* ks as the keymap types it, unless on a keycode this batch takes back. */
static bool keymap_find_kept(ksr_x11 *x, const binding *b, unsigned long ks, keystroke *k)
{
	return keymap_find(x, ks, k) && !b->evict[k->kc];
}

/* The next spare keycode this batch may bind: a free one, or one of ours that
 * it does not use itself. 0 when none is left. */
static KeyCode next_spare(const ksr_x11 *x, binding *b)
{
	while (b->next < b->nspare) {
		KeyCode kc = b->spare[b->next++];
		if (!x->keymap.ours[kc])
			return kc;
		if (!b->keep[kc]) {
			b->evict[kc] = true;
			return kc;
		}
	}
	return 0;
}

/* Add the chord's missing keysyms to b; false (b unchanged) when they do not
 * all fit in the spare keycodes left. */
static bool binding_add(ksr_x11 *x, binding *b, const ksr_chord *c)
{
	/* keep/evict and the cursor are put back when the chord does not fit */
	bool keep[256], evict[256];
	memcpy(keep, b->keep, sizeof keep);
	memcpy(evict, b->evict, sizeof evict);
	int n = b->n, next = b->next;
	for (int i = 0; i < c->n; i++) {
		keystroke k;
		unsigned long ks = c->keysyms[i];
		bool dup = false;
		for (int j = b->n; j < n; j++)
			dup = dup || b->ks[j] == ks;
		if (dup || binding_has(b, ks, NULL))
			continue;
		if (keymap_find_kept(x, b, ks, &k)) {
			if (x->keymap.ours[k.kc])
				b->keep[k.kc] = true;
			continue;
		}
		if (b->nspare < 0)
			find_spares(x, b);
		KeyCode kc = next_spare(x, b);
		if (!kc) {
			memcpy(b->keep, keep, sizeof keep);
			memcpy(b->evict, evict, sizeof evict);
			b->next = next;
			return false;
		}
		b->ks[n] = ks;
		b->kc[n] = kc;
		n++;
	}
	b->n = n;
	return true;
}
/* Change the keycodes [first, last] (spare ones, sorted) to syms (NULL: none). */
static void change_run(ksr_x11 *x, const binding *b, int from, int to, bool bind)
{
	int first = b->kc[from], count = b->kc[to] - first + 1;
	KeySym *syms = ksr_xcalloc((size_t)count * 2, sizeof *syms);
	for (int i = from; i <= to; i++) {
		int at = (b->kc[i] - first) * 2;
		/* Both columns, so Shift or Caps Lock cannot change what arrives. */
		syms[at] = syms[at + 1] = bind ? b->ks[i] : NoSymbol;
	}
	XChangeKeyboardMapping(x->dpy, first, 2, syms, count);
	free(syms);
}

/* One XChangeKeyboardMapping per contiguous run of the spare keycodes used (a
 * run spans only spare keycodes, so no other key is rewritten), then one round
 * trip: the server has applied them all when it answers (it sends every client
 * the MappingNotify before any key of ours), and an error of any has arrived.
 * The MappingNotify events are left queued: reading them makes Xlib fetch the
 * change (a round trip each, behind the window manager and the apps fetching
 * it too), which the next text's lookups do once. */
static int apply_binding(ksr_x11 *x, const binding *b, bool bind, ksr_err *err)
{
	unsigned long errors = ksr_x11_error_count(), first = NextRequest(x->dpy);
	int from = 0;
	while (from < b->n) {
		int to = from;
		while (to + 1 < b->n && b->kc[to + 1] == b->kc[to] + 1)
			to++;
		change_run(x, b, from, to, bind);
		from = to + 1;
	}
	unsigned long last = NextRequest(x->dpy) - 1;
	XSync(x->dpy, False);
	x->keymap.stale = true;
	if (ksr_x11_lost(x, err) < 0)
		return -1;
	if (bind && ksr_x11_request_failed(x, errors, first, last, X_ChangeKeyboardMapping))
		return ksr_err_set(err, "the X server refused binding keycodes %d-%d", b->kc[0],
		                   b->kc[b->n - 1]);
	return 0;
}

/* The keycodes of b are ours now (bound) or free again (unbound). */
static void note_ours(ksr_x11 *x, const binding *b, bool bound)
{
	for (int i = 0; i < b->n; i++)
		x->keymap.ours[b->kc[i]] = bound ? b->ks[i] : 0;
}

/* ---- letting the focused client read our keys ---- */

/* w or its nearest ancestor that answers _NET_WM_PING (None: none does). */
static Window ping_target(ksr_x11 *x, Window w)
{
	while (w != None && w != PointerRoot && w != x->root) {
		if (ksr_x11_takes_pings(x, w))
			return w;
		Window root_ret, parent = None, *kids = NULL;
		unsigned int n = 0;
		if (!XQueryTree(x->dpy, w, &root_ret, &parent, &kids, &n))
			return None;
		if (kids)
			XFree(kids);
		w = parent;
	}
	return None;
}

/* Before rebinding or unbinding: the client translates a key event's keycode
 * with the keymap it has when it reads the event, so it must have read all of
 * ours typed on the old binding. A client answers _NET_WM_PING in queue order,
 * i.e. after our keys; focus (the window they went to) is walked up to the
 * window that takes pings only now, when a ping is due, not after each text.
 * One without it (None) gets a short bounded pause. */
static void let_client_read(ksr_x11 *x, Window focus)
{
	Window w = ping_target(x, focus);
	if (w == None) {
		ksr_sleep_ms(NO_PING_SETTLE_MS);
		return;
	}
	XWindowAttributes wa;
	if (!XGetWindowAttributes(x->dpy, w, &wa))
		return; /* gone: no client is left to read them */
	ksr_x11_send_ping(x, w);
	ksr_x11_input_wait(x, ksr_deadline_in_ms(PING_WAIT_MS), ksr_x11_pong_event, x);
}

/* Keys typed on our bindings went to focus (read by the round trip after
 * them, so the server has processed them). */
static void note_unread(ksr_x11 *x, Window focus)
{
	struct ksr_x11_keymap *m = &x->keymap;
	if (m->has_unread && m->unread != focus)
		let_client_read(x, m->unread); /* the earlier client's keys first */
	m->has_unread = true;
	m->unread = focus;
}

static void wait_unread(ksr_x11 *x)
{
	if (!x->keymap.has_unread || x->dead)
		return;
	ksr_x11_sync(x);
	let_client_read(x, x->keymap.unread);
	x->keymap.has_unread = false;
}

void ksr_x11_keys_release(ksr_x11 *x)
{
	if (!x || x->dead)
		return;
	binding *b = ksr_xmalloc(sizeof *b);
	binding_init(b);
	for (int kc = 0; kc < 256; kc++)
		if (x->keymap.ours[kc]) {
			b->ks[b->n] = x->keymap.ours[kc];
			b->kc[b->n++] = (KeyCode)kc;
		}
	if (b->n > 0) {
		wait_unread(x);
		/* An unbound spare is harmless, so a failed wait here is not worth
		 * an error; XSync makes sure the server applied it. */
		apply_binding(x, b, false, NULL);
		XSync(x->dpy, False);
		note_ours(x, b, false);
	}
	free(b);
}

/* ---- pressing ---- */

static int resolve(ksr_x11 *x, const binding *b, unsigned long ks, keystroke *k, ksr_err *err)
{
	k->shift = false;
	if (binding_has(b, ks, &k->kc) || keymap_find(x, ks, k))
		return 0;
	const char *name = XKeysymToString(ks);
	return ksr_err_set(err, "no keycode for key %s (0x%lx)", name ? name : "?", ks);
}

static KeyCode shift_keycode(ksr_x11 *x)
{
	keystroke k;
	if (keymap_find(x, XK_Shift_L, &k) || keymap_find(x, XK_Shift_R, &k))
		return k.kc;
	return 0;
}

/* A batch's chords as keycodes: k[i * KSR_CHORD_MAX + j] for key j of chord i. */
typedef struct strokes {
	keystroke *k;
	KeyCode shift;
} strokes;

/* Every key of chords [from, to) resolved before anything is pressed or bound:
 * nothing is pressed unless all can be, and no keymap lookup is left for after
 * our mapping change (Xlib's first one then fetches the change, a round trip). */
static int resolve_batch(ksr_x11 *x, const binding *b, const ksr_chord *c, size_t from, size_t to,
                         strokes *s, ksr_err *err)
{
	s->k = ksr_xcalloc((to - from) * KSR_CHORD_MAX, sizeof *s->k);
	s->shift = 0;
	bool shifted = false;
	for (size_t i = from; i < to; i++)
		for (int j = 0; j < c[i].n; j++) {
			keystroke *k = &s->k[(i - from) * KSR_CHORD_MAX + (size_t)j];
			if (resolve(x, b, c[i].keysyms[j], k, err) < 0)
				return -1;
			shifted = shifted || k->shift;
		}
	if (shifted && !(s->shift = shift_keycode(x)))
		return ksr_err_set(err, "no Shift key in the keymap");
	return 0;
}

/* Keys pressed in order and released in reverse, Shift around those that
 * need it. */
static void press_chord(ksr_x11 *x, const ksr_chord *c, const keystroke *k, KeyCode shift)
{
	KeyCode down[2 * KSR_CHORD_MAX];
	int n = 0;
	bool shifted = false;
	for (int i = 0; i < c->n; i++) {
		if (k[i].shift && !shifted) {
			XTestFakeKeyEvent(x->dpy, shift, True, CurrentTime);
			down[n++] = shift;
			shifted = true;
		}
		XTestFakeKeyEvent(x->dpy, k[i].kc, True, CurrentTime);
		down[n++] = k[i].kc;
	}
	while (n > 0)
		XTestFakeKeyEvent(x->dpy, down[--n], False, CurrentTime);
}

static int no_room(const ksr_chord *c, int nspare, ksr_err *err)
{
	const char *name = XKeysymToString(c->keysyms[c->n - 1]);
	return ksr_err_set(err,
	                   "not enough spare keycodes (%d) to bind the keys of %s (0x%lx) that the "
	                   "keymap lacks",
	                   nspare, name ? name : "?", c->keysyms[c->n - 1]);
}

/* Any of the batch's keys on a keycode of ours (bound now or kept). */
static bool uses_ours(const binding *b)
{
	if (b->n > 0)
		return true;
	for (int kc = 0; kc < 256; kc++)
		if (b->keep[kc])
			return true;
	return false;
}

static bool evicts(const binding *b)
{
	for (int kc = 0; kc < 256; kc++)
		if (b->evict[kc])
			return true;
	return false;
}

/* Bind what chords [*i, ...) lack, as many as fit, and press them; advance *i.
 * *on_ours: some were typed on keycodes we bound. */
static int run_batch(ksr_x11 *x, const ksr_chord *c, size_t *i, size_t end, bool *on_ours,
                     ksr_err *err)
{
	binding *b = ksr_xmalloc(sizeof *b);
	binding_init(b);
	strokes s = {0};
	size_t j = *i;
	while (j < end && binding_add(x, b, &c[j]))
		j++;
	int rc = -1;
	if (j == *i) {
		no_room(&c[j], b->nspare, err);
		goto cleanup;
	}
	if (resolve_batch(x, b, c, *i, j, &s, err) < 0)
		goto cleanup;
	if (evicts(b))
		wait_unread(x); /* keys typed on what is rebound now were read */
	if (b->n > 0) {
		note_ours(x, b, true); /* first: a half-applied change is undone too */
		if (apply_binding(x, b, true, err) < 0)
			goto cleanup;
	}
	for (size_t k = *i; k < j; k++)
		press_chord(x, &c[k], &s.k[(k - *i) * KSR_CHORD_MAX], s.shift);
	/* Not flushed per chord nor per batch: the keys go out with the round
	 * trip after the batch, in one write (Xlib still sends as its buffer
	 * fills; the order is the same). */
	*on_ours = uses_ours(b);
	rc = ksr_x11_lost(x, err);
	*i = j;
cleanup:
	free(s.k);
	free(b);
	return rc;
}

/* The keys and one round trip in one write: the server has processed them when
 * this returns, and the sync every caller does next (settle, MCP's answer)
 * costs nothing (ksr_x11_sync). Keys flushed on their own, then a sync request
 * in a second write, let the app the keys went to get the server between the
 * two: the sync then waited behind the app's repaints (typing measured up to
 * 1.9x the raw XTest floor, bench/input.sh). The round trip is GetInputFocus
 * (what XSync sends): its answer is where keys typed on our bindings went. */
static void keys_sent(ksr_x11 *x, bool on_ours)
{
	if (x->dead)
		return;
	Window focus = None;
	int revert = 0;
	XGetInputFocus(x->dpy, &focus, &revert);
	if (on_ours && !x->dead)
		note_unread(x, focus);
}

static int run_chords(ksr_x11 *x, const ksr_chord *c, size_t n, ksr_err *err)
{
	if (ksr_x11_input_begin(x, err) < 0)
		return -1;
	for (size_t i = 0; i < n;) {
		bool on_ours = false;
		/* The keymap may have changed under us (our own binding, or another
		 * client's change): re-read it when a MappingNotify said so. */
		if (keymap_fresh(x, err) < 0 || run_batch(x, c, &i, n, &on_ours, err) < 0)
			return -1;
		/* After each batch typed on ours, the next may rebind them. */
		if (on_ours || i == n)
			keys_sent(x, on_ours);
	}
	return ksr_x11_lost(x, err);
}

int ksr_x11_key_chords(ksr_x11 *x, const char *chords, ksr_err *err)
{
	ksr_chord *c = NULL;
	size_t n = 0;
	if (ksr_keys_parse(chords, &c, &n, err) < 0)
		return -1;
	int rc = run_chords(x, c, n, err);
	ksr_keys_free(c);
	return rc;
}

int ksr_x11_key_press(ksr_x11 *x, const ksr_chord *chords, size_t n, ksr_err *err)
{
	if (!chords || !n)
		return ksr_err_set(err, "no key chords to press");
	return run_chords(x, chords, n, err);
}

/* UTF-8 to one single-key chord per character ("\r\n" is one Return). */
static int text_to_chords(const char *utf8, ksr_chord **out, size_t *n, ksr_err *err)
{
	size_t cap = strlen(utf8), len = 0;
	ksr_chord *c = ksr_xcalloc(cap ? cap : 1, sizeof *c);
	const char *p = utf8;
	uint32_t cp = 0, prev = 0;
	int r;
	while ((r = ksr_keys_utf8_next(&p, &cp)) == 1) {
		unsigned long ks = ksr_keys_from_codepoint(cp);
		if (!ks) {
			free(c);
			return ksr_err_set(err, "cannot type U+%04X (a control character)",
			                   (unsigned)cp);
		}
		if (!(cp == '\n' && prev == '\r'))
			c[len++] = (ksr_chord){.keysyms = {ks}, .n = 1};
		prev = cp;
	}
	if (r < 0) {
		free(c);
		return ksr_err_set(err, "cannot type: invalid UTF-8 at byte %zu",
		                   (size_t)(p - utf8));
	}
	*out = c;
	*n = len;
	return 0;
}

int ksr_x11_type(ksr_x11 *x, const char *utf8, ksr_err *err)
{
	ksr_chord *c = NULL;
	size_t n = 0;
	if (!utf8)
		return ksr_err_set(err, "no text to type");
	if (text_to_chords(utf8, &c, &n, err) < 0)
		return -1;
	int rc = run_chords(x, c, n, err);
	free(c);
	return rc;
}
