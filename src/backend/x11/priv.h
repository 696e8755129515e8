/* State shared by x11.c (connection, windows, waits) and x11_capture.c. */
#ifndef KSR_BACKEND_X11_PRIV_H
#define KSR_BACKEND_X11_PRIV_H

#include <X11/Xlib.h>
#include <X11/extensions/XShm.h>
#include <stdbool.h>
#include <stdint.h>

#include "ksr/deadline.h"
#include "ksr/error.h"

enum {
	KSR_NET_CLIENT_LIST,
	KSR_NET_ACTIVE_WINDOW,
	KSR_NET_WM_NAME,
	KSR_UTF8_STRING,
	KSR_WM_STATE,
	KSR_NET_WM_PID,
	KSR_NET_WM_WINDOW_TYPE,
	KSR_NET_WM_WINDOW_TYPE_DIALOG,
	KSR_NET_WM_WINDOW_TYPE_SPLASH,
	KSR_NET_WM_WINDOW_TYPE_NORMAL,
	KSR_NET_WM_WINDOW_TYPE_UTILITY,
	KSR_NET_WM_WINDOW_TYPE_TOOLBAR,
	KSR_NET_WM_WINDOW_TYPE_MENU,
	KSR_NET_WM_WINDOW_TYPE_DOCK,
	KSR_NET_WM_WINDOW_TYPE_DESKTOP,
	KSR_NET_WM_WINDOW_TYPE_NOTIFICATION,
	KSR_NET_WM_STATE,
	KSR_NET_WM_STATE_MODAL,
	KSR_GTK_FRAME_EXTENTS,
	KSR_NET_SUPPORTING_WM_CHECK,
	KSR_ATOM_COUNT
};

struct ksr_x11 {
	Display *dpy;
	char *name;
	int screen;
	Window root;
	int sw, sh;
	/* RandR (x11_capture.c): its first event code (0 without it); a size
	 * change not yet taken by ksr_x11_screen_change, and the size before it. */
	int rr_event;
	bool size_changed;
	int old_sw, old_sh;
	bool dead; /* set by the IO error exit handler */
	Atom atoms[KSR_ATOM_COUNT];
	/* XShm: one segment sized for the whole screen, attached once. */
	XShmSegmentInfo shm;
	size_t shm_size;
	bool shm_tried, shm_ok;
	/* Input (x11_input.c, x11_keys.c). The core keymap cache is only used
	 * when the server has no XKB (then Xlib keeps the XKB map for us). */
	struct ksr_x11_keymap {
		bool loaded, stale; /* stale: a MappingNotify came since the load */
		int min_kc, max_kc;
		unsigned long sym[256][2]; /* the unshifted and Shift columns we type with */
		bool spare[256];           /* no keysym in any column: free to bind */
		/* The keysym we bound to a spare keycode (0: none). Bindings stay
		 * until the room is needed or the connection closes, so typing the
		 * same characters again changes no mapping and waits for no client. */
		unsigned long ours[256];
		/* Keys were typed on our bindings since a client last confirmed it
		 * had read them (to `unread`, the focus window they went to; the
		 * window that answers the ping is looked up when one is due):
		 * rebinding waits for that first. */
		bool has_unread;
		unsigned long unread;
		/* keysym -> the keycode (and level) keymap_find would pick, built
		 * once per keymap (keys.c): a scan of every keycode per character
		 * was a third of typing's CPU. Each hit is checked against the
		 * keymap, so a change we did not see cannot make us type wrong. */
		struct ksr_x11_keysym_slot {
			unsigned long ks; /* 0: empty */
			unsigned char kc;
			bool shift;
		} rev[1024];
		bool rev_valid;
	} keymap;
	int xtest;     /* 0 not checked yet, 1 present, -1 absent */
	int xkb_event; /* XKB's first event code; 0 without XKB */
	Atom wm_protocols, net_wm_ping;
	unsigned long ping_serial;
	/* Readiness (x11_ready.c): a Damage object per window once asked about,
	 * kept so that a window already quiet costs nothing; the server's clock
	 * against ours, to date damage read late; the last window change. */
	int damage_event; /* DamageNotify's event code; 0 not checked yet, -1 absent */
	struct ksr_x11_damaged {
		unsigned long win, damage;
		int64_t last_ms; /* the newest damage (or when tracking began), our clock */
		long count;      /* DamageNotify events read since tracking began */
		int64_t used_ms; /* the least recently used entry makes room */
	} damaged[16];
	bool have_clock;
	int64_t clock_ours_ms;
	unsigned long clock_server_ms;
	int64_t last_change_ms; /* the newest map/unmap/destroy/title change seen */
	/* The newest window changes, by window, to tell whose they were (an
	 * input step's effect is its app's windows changing, not another
	 * client's): a ring, the oldest overwritten. */
	struct ksr_x11_change {
		int64_t ms;
		unsigned long win;
	} changes[64];
	unsigned changes_next;
	bool pong; /* the ping sent as ping_serial was answered */
	unsigned long ping_window;
};

/* -1 with "the X display connection was lost" when x is NULL or dead. */
int ksr_x11_lost(ksr_x11 *x, ksr_err *err);
/* The server's time now: the timestamp of the PropertyNotify for a zero-length
 * append to a property of a window of our own (the server queues it before
 * the reply to the XSync after it); CurrentTime without one. *ours_ms (may be
 * NULL): our clock at that moment (the middle of the round trip). */
unsigned long ksr_x11_server_time(ksr_x11 *x, int64_t *ours_ms);
/* How many X protocol errors the process-wide handler has seen (to tell whether
 * a request sent before an XSync failed). */
unsigned long ksr_x11_error_count(void);
/* An error of request code `request` came for one of our requests with serials
 * first..last since ksr_x11_error_count() was errors_before (read after a
 * round trip that followed them). */
bool ksr_x11_request_failed(const ksr_x11 *x, unsigned long errors_before, unsigned long first,
                            unsigned long last, int request);
/* A mapped window's client area in root coordinates (_GTK_FRAME_EXTENTS removed);
 * false when it is gone or unmapped. */
bool ksr_x11_window_rect(ksr_x11 *x, Window w, int *rx, int *ry, int *rw, int *rh);
void ksr_x11_capture_release(ksr_x11 *x);
/* The screen is w x h now (RandR told us, or the root's geometry did): follow it
 * (the XShm segment is made again at the next capture). */
void ksr_x11_screen_resized(ksr_x11 *x, int w, int h);
/* An RRScreenChangeNotify: followed, true; anything else false. */
bool ksr_x11_randr_event(ksr_x11 *x, const XEvent *ev);

/* Every event taken off the queue passes here (damage, window changes, ping
 * replies are recorded); x11.c's waits and x11_input.c's both call it. */
void ksr_x11_ready_event(ksr_x11 *x, const XEvent *ev);
/* A map, unmap, destroy, _NET_CLIENT_LIST or title change (x11.c). */
bool ksr_x11_relevant_event(ksr_x11 *x, const XEvent *ev);
void ksr_x11_ready_release(ksr_x11 *x);
/* _NET_WM_PING (x11_ready.c): whether w lists it in WM_PROTOCOLS; send one
 * (x->pong turns true when its answer is taken off the queue); a match for
 * ksr_x11_input_wait (ctx: x) that holds once it has been answered. */
bool ksr_x11_takes_pings(ksr_x11 *x, Window w);
void ksr_x11_send_ping(ksr_x11 *x, Window w);
bool ksr_x11_pong_event(const XEvent *ev, void *x);
/* The client window in a top-level (itself, or the WM frame's child with
 * WM_STATE; None without one), and a window's title (free it) (x11.c). */
Window ksr_x11_client_of(ksr_x11 *x, Window top);
/* Two resource IDs made by the same client; an ID made by our own
 * connection (grab.c). No round trip. */
bool ksr_x11_ours(ksr_x11 *x, unsigned long id);
char *ksr_x11_title(ksr_x11 *x, Window w);

/* Input helpers shared by x11_input.c and x11_keys.c. */
/* -1 with a message when the connection is lost or the server has no XTEST. */
int ksr_x11_input_begin(ksr_x11 *x, ksr_err *err);
/* XFlush; -1 when the connection broke meanwhile. */
int ksr_x11_input_end(ksr_x11 *x, ksr_err *err);
/* Take queued events until match(ev, ctx) is true (READY) or the deadline; a
 * MappingNotify on the way marks the keymap cache stale. */
ksr_wait ksr_x11_input_wait(ksr_x11 *x, ksr_deadline d, bool (*match)(const XEvent *, void *),
                            void *ctx);
/* Take every event already readable, without blocking (MappingNotify as above). */
void ksr_x11_input_pump(ksr_x11 *x);
/* Unbind the keycodes typing bound (x11_keys.c), once the client that was
 * typed to has read its keys; before the connection closes. */
void ksr_x11_keys_release(ksr_x11 *x);
/* ev changed the keyboard mapping of keycodes [*first, *first + *count). */
bool ksr_x11_keymap_event(const ksr_x11 *x, const XEvent *ev, int *first, int *count);

#endif
