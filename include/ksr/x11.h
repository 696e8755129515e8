/* X11 observation and capture. The display connection, window listing with
 * title/class/PID/geometry, event-driven waits for window changes, and screen
 * capture (XShm, falling back to XGetImage). No printing; errors are values.
 * A broken connection (the X server died) never exits the process: every later
 * call fails with "the X display connection was lost". */
#ifndef KSR_X11_H
#define KSR_X11_H

#include <stdbool.h>
#include <stddef.h>

#include "ksr/deadline.h"
#include "ksr/error.h"
#include "ksr/image.h"
#include "ksr/keys.h"

typedef struct ksr_x11 ksr_x11;

typedef struct ksr_window {
	unsigned long id; /* the client window (not the WM frame) */
	char *title;      /* _NET_WM_NAME (UTF-8), else WM_NAME */
	char *res_name;   /* WM_CLASS instance */
	char *res_class;  /* WM_CLASS class */
	int pid;          /* _NET_WM_PID, 0 when absent */
	int x, y, w, h;   /* client area in root coordinates, _GTK_FRAME_EXTENTS removed */
	bool is_dialog;   /* _NET_WM_WINDOW_TYPE_DIALOG, or transient for another window */
	bool is_modal;    /* _NET_WM_STATE_MODAL: it blocks the window it is transient for */
	bool is_splash; /* _NET_WM_WINDOW_TYPE_SPLASH: a start-up screen, never the app's window */
	/* _NET_WM_WINDOW_TYPE as EWMH names it ("normal", "dialog", "splash",
	 * "utility", "toolbar", "menu", "dock", "desktop", "notification": the
	 * first known one the window lists; one that lists none is "dialog" when
	 * transient, else "normal", as EWMH says); static storage (NULL in a
	 * window not read from the server). */
	const char *type;
	unsigned long transient_for;
} ksr_window;

typedef struct ksr_window_list {
	ksr_window *items;
	size_t len;
} ksr_window_list;

/* Connect to display_name (NULL: $DISPLAY), retrying until the deadline: the
 * server may still be starting. READY with *out set, TIMEOUT, CANCELLED, or
 * ERROR (no display name at all: err says so). */
ksr_wait ksr_x11_open_wait(const char *display_name, ksr_deadline d, ksr_x11 **out, ksr_err *err);
void ksr_x11_close(ksr_x11 *x); /* NULL-safe */
bool ksr_x11_alive(const ksr_x11 *x);
/* Reads what the server has sent (never blocks, no request): false when the
 * connection is gone, e.g. the X server died and closed it, even if nothing
 * we did has met that yet. */
bool ksr_x11_still_connected(ksr_x11 *x);
const char *ksr_x11_display_name(const ksr_x11 *x);
/* The screen's size now: a change of size (RandR, xrandr -s) is followed. */
void ksr_x11_screen_size(ksr_x11 *x, int *w, int *h);
/* Follow a change of the screen's size now (one round trip); captures do. */
void ksr_x11_screen_refresh(ksr_x11 *x);
/* True once after the screen changed size (the size before and now), for the
 * run's `screen` event. */
bool ksr_x11_screen_change(ksr_x11 *x, int *old_w, int *old_h, int *new_w, int *new_h);

/* Top-level client windows that are mapped (_NET_CLIENT_LIST, else a tree walk
 * for WM_STATE / override-redirect-free mapped children of root). */
int ksr_x11_list_windows(ksr_x11 *x, ksr_window_list *out, ksr_err *err);
void ksr_window_list_clear(ksr_window_list *l);
/* Re-read one window's title/geometry now (e.g. at click time). -1 if it is gone. */
int ksr_x11_window_refresh(ksr_x11 *x, ksr_window *w, ksr_err *err);

/* Wait until something about top-level windows may have changed (a map, unmap,
 * destroy, _NET_CLIENT_LIST or title change), then drain the queue. READY,
 * TIMEOUT, CANCELLED, or ERROR when the connection is lost. */
ksr_wait ksr_x11_wait_change(ksr_x11 *x, ksr_deadline d);

/* A root window string property (8-bit, e.g. AT_SPI_BUS); NULL when absent
 * (or the connection is lost: err says so). Free it. */
char *ksr_x11_root_property_string(ksr_x11 *x, const char *name, ksr_err *err);
/* Set one (type STRING); -1 with err when the connection is lost. */
int ksr_x11_root_property_set_string(ksr_x11 *x, const char *name, const char *value, ksr_err *err);

/* Set one (type STRING) only where the root has none: 1 set, 0 left as it
 * was (present; never replaced), -1 with err when the connection is lost. */
int ksr_x11_root_property_add_string(ksr_x11 *x, const char *name, const char *value, ksr_err *err);

/* Wait for a window manager (_NET_SUPPORTING_WM_CHECK on the root). */
ksr_wait ksr_x11_wait_wm(ksr_x11 *x, ksr_deadline d);
/* Wait until the window manager maps a window of ours (a probe, mapped then
 * destroyed): its event loop handles requests, not only its check property
 * is set. READY, TIMEOUT, CANCELLED, or ERROR. */
ksr_wait ksr_x11_wait_wm_manages(ksr_x11 *x, ksr_deadline d);

/* Capture the whole screen (window == 0) or a window's client area. */
ksr_image *ksr_x11_capture(ksr_x11 *x, unsigned long window, ksr_err *err);
/* The same straight into a PNG (caller frees *png): the screen's pixels are
 * converted row by row as they are encoded, so no RGB copy of the screen is
 * held (what a screenshot that is only written needs). */
int ksr_x11_capture_png(ksr_x11 *x, unsigned long window, unsigned char **png, size_t *len,
                        ksr_err *err);

/* ---- readiness (x11_ready.c): is a window ready for input ----------------- */

/* 1 the window is viewable, 0 it exists but is not (unmapped, iconified),
 * -1 it is gone (or the connection is lost). */
int ksr_x11_window_viewable(ksr_x11 *x, unsigned long window);
/* Would input at the point (root pixels) land in window? 0 yes, 1 another
 * top-level window is over it there (*by: that window's client, or the
 * top-level itself), -1 window is gone. An override-redirect window (menus,
 * tooltips, overlays the window manager does not manage) covers it like any
 * other, unless window's own client made it (the app's menu takes the click
 * as the app) or we did. */
int ksr_x11_point_covered(ksr_x11 *x, unsigned long window, int px, int py, unsigned long *by);
/* 1 the window is override-redirect (the window manager does not manage it), 0
 * not, -1 gone. */
int ksr_x11_override_redirect(ksr_x11 *x, unsigned long window);

/* Another client's active grab of the keyboard or the pointer (grab.c): XTest
 * input would all go to it. One round trip, and no grab taken (a grab request
 * dated ahead of the server's clock: AlreadyGrabbed is answered before the
 * time is checked). X does not say who holds a grab: by_app when app_window's
 * own client has an override-redirect window mapped (its open menu grabs, and
 * the input goes to the app), else popup is the topmost such window of another
 * client, a hint (0: none). -1 only when the connection is lost. */
typedef enum ksr_x11_device { KSR_X11_KEYBOARD, KSR_X11_POINTER } ksr_x11_device;
typedef struct ksr_x11_grab {
	bool grabbed;
	bool by_app;
	unsigned long popup;
	int popup_pid; /* its _NET_WM_PID, 0 when absent */
	char popup_title[128];
} ksr_x11_grab;
int ksr_x11_grab_probe(ksr_x11 *x, ksr_x11_device dev, unsigned long app_window, ksr_x11_grab *g,
                       ksr_err *err);
/* Wait for a change of what is where: a map, unmap, move, resize, restack or
 * destroy of a top-level. READY, TIMEOUT, CANCELLED, or ERROR. */
ksr_wait ksr_x11_wait_stacking(ksr_x11 *x, ksr_deadline d);

/* The server has the DAMAGE extension (asked once). */
bool ksr_x11_damage_available(ksr_x11 *x);
/* Track window's repaints from now on (one Damage object per window, kept
 * until it is destroyed). A window tracked for the first time counts as
 * damaged now: what it did before is unknown. 0, or -1 with err. */
int ksr_x11_damage_track(ksr_x11 *x, unsigned long window, ksr_err *err);

typedef struct ksr_x11_quiet {
	int quiet_ms;        /* no damage for this long */
	int64_t since_ms;    /* ksr_now_ms() of the input: quiet counts from then at the earliest */
	bool window_changes; /* a map, unmap or title change counts as activity too */
} ksr_x11_quiet;

/* Wait until none of the n windows (tracked here if they were not) has been
 * damaged for q->quiet_ms. Costs one round trip when they already are. READY,
 * TIMEOUT (still repainting at d), CANCELLED, or ERROR (connection lost, no
 * DAMAGE). *waited_ms: how long it waited. */
ksr_wait ksr_x11_quiet_wait(ksr_x11 *x, const unsigned long *windows, size_t n,
                            const ksr_x11_quiet *q, ksr_deadline d, int64_t *waited_ms);

/* Wait until window has been repainted after since_ms (ksr_now_ms clock): a
 * control's state change shows as a repaint. READY (also when the window is
 * gone), TIMEOUT, CANCELLED, or ERROR. */
ksr_wait ksr_x11_damage_wait(ksr_x11 *x, unsigned long window, int64_t since_ms, ksr_deadline d);

/* Did the input do anything: whether window has been repainted after
 * since_ms, counting every repaint the server did before this call (one
 * round trip). 1 yes, 0 no, -1 not tracked (ksr_x11_damage_track first) or
 * the connection is lost. */
int ksr_x11_damaged_since(ksr_x11 *x, unsigned long window, int64_t since_ms);
/* How many repaints of window (tracked) have been read, after a round trip:
 * every repaint the server did before it is counted. A later count that is
 * higher saw a repaint done after this call, whatever the clocks say. -1 when
 * the window is not tracked or the display is gone. */
long ksr_x11_damage_count(ksr_x11 *x, unsigned long window);
/* ksr_now_ms() of the newest map, unmap, destroy, active-window or title
 * change read so far (0: none yet). */
int64_t ksr_x11_last_change_ms(const ksr_x11 *x);
/* Whether a map, unmap, create, destroy, reparent or title change read after
 * since_ms was to a window of the client that made one of of[] (a window's
 * resource ID names its client: the app's menus and dialogs are its own,
 * another program's window, or the window manager's frame, is not). 1 yes,
 * 0 no, -1 unknown (more changes came than are kept, or the connection is
 * lost). Reads what the server sent so far, no round trip. */
int ksr_x11_client_changed_since(ksr_x11 *x, const unsigned long *of, size_t n_of,
                                 int64_t since_ms);
/* Whether a and b were made by the same X client (their resource IDs). */
bool ksr_x11_same_client(ksr_x11 *x, unsigned long a, unsigned long b);
/* The window that has the X input focus (0: none, or the connection is lost). */
unsigned long ksr_x11_input_focus(ksr_x11 *x);

/* Send window's client a _NET_WM_PING and wait for its answer: the app's
 * event loop is running. READY also when the window does not take pings
 * (*supported false); TIMEOUT when it did not answer by d (stopped, hung). */
ksr_wait ksr_x11_ping_wait(ksr_x11 *x, unsigned long window, ksr_deadline d, bool *supported);

/* ---- the window manager (wm.c) ---- */
typedef struct ksr_x11_wm {
	unsigned long check; /* _NET_SUPPORTING_WM_CHECK's window, when it names itself (0: none) */
	unsigned long owner; /* the WM_S<screen> selection's owner (0: none) */
	char name[64];       /* the check window's _NET_WM_NAME ("Openbox"); "" unknown */
} ksr_x11_wm;
/* The window manager there now (all 0 and "" without one); -1 when the
 * connection is lost. */
int ksr_x11_wm_read(ksr_x11 *x, ksr_x11_wm *out, ksr_err *err);

/* ---- a window watched for its end (x11_watch.c) ----
 * On an X connection of its own: its descriptor can wait beside anything (a
 * guard in every wait of the run) and it never takes events from the main
 * connection. */
typedef struct ksr_x11_watch ksr_x11_watch;
ksr_x11_watch *ksr_x11_watch_open(const ksr_x11 *x, unsigned long window, ksr_err *err);
int ksr_x11_watch_fd(const ksr_x11_watch *w); /* -1 once the connection broke */
/* Read what arrived: 1 the window was destroyed, 0 not, -1 the connection broke. */
int ksr_x11_watch_gone(ksr_x11_watch *w);
/* How many other top-level client windows (_NET_CLIENT_LIST) carry
 * _NET_WM_PID pid: does the process live on with a window. -1 on error. */
int ksr_x11_watch_pid_windows(ksr_x11_watch *w, int pid);
void ksr_x11_watch_close(ksr_x11_watch *w); /* NULL-safe */

/* ---- input (XTest, in process; coordinates are root-window pixels) ----
 * Each action is flushed at once; call ksr_x11_sync at the end of a step so the
 * server has processed it. All return 0, or -1 with err set. */

/* Ask the window manager to activate window (EWMH _NET_ACTIVE_WINDOW, source 2)
 * and raise it, then wait (X events) until it is _NET_ACTIVE_WINDOW or holds the
 * input focus. Without a window manager, XSetInputFocus. -1 when focus could not
 * be obtained by d (or the wait was cancelled: err says which). */
int ksr_x11_activate(ksr_x11 *x, unsigned long window, ksr_deadline d, ksr_err *err);
int ksr_x11_pointer_move(ksr_x11 *x, int px, int py, ksr_err *err);
/* Move, then count press/release pairs (2 = double click). Button 1 left,
 * 2 middle, 3 right. */
int ksr_x11_click(ksr_x11 *x, int px, int py, int button, int count, ksr_err *err);
int ksr_x11_drag(ksr_x11 *x, int x1, int y1, int x2, int y2, int button, ksr_err *err);
/* dy < 0: |dy| clicks of button 4 (up); dy > 0: button 5 (down). */
int ksr_x11_scroll(ksr_x11 *x, int px, int py, int dy, ksr_err *err);
/* Space-separated chords (ksr/keys.h): "ctrl+s alt+F4 Return". Keys of a chord
 * are pressed in order and released in reverse, also when something fails. */
int ksr_x11_key_chords(ksr_x11 *x, const char *chords, ksr_err *err);
/* The same for chords already parsed (ksr_keys_parse): a scenario's key step
 * carries its chords from load time. */
int ksr_x11_key_press(ksr_x11 *x, const ksr_chord *chords, size_t n, ksr_err *err);
/* Type any UTF-8 text ('\n' is Return, '\t' Tab), whatever the keyboard layout:
 * keysyms missing from the keymap are bound to spare keycodes for the call. */
int ksr_x11_type(ksr_x11 *x, const char *utf8, ksr_err *err);
/* XSync: the server has processed our input. -1 when the connection is lost. */
int ksr_x11_sync(ksr_x11 *x);

/* ---- the root window (x11_root.c) ---- */

/* The root window's id (0 when the connection is lost): ksr_x11_quiet_wait on
 * it waits for the whole screen to stop repainting. */
unsigned long ksr_x11_root_window(const ksr_x11 *x);

/* ---- a window's colours (capture.c): has it painted ---- */

/* Distinct colours are counted up to this many: enough to tell a flat window
 * from a drawn one, and a bound on the work. */
#define KSR_X11_COLOURS_MAX 256

typedef struct ksr_x11_colours {
	long long pixels;   /* counted: the client area clipped to the screen, every pixel */
	long long dominant; /* of them, pixels of rgb */
	unsigned long rgb;  /* 0xRRGGBB: the colour covering most of the window when one covers
	                     * more than half of it (else one of its colours) */
	int distinct;       /* distinct colours, at most KSR_X11_COLOURS_MAX */
} ksr_x11_colours;

/* Count the colours in window's client area as it is on the screen (one grab
 * of that region, no RGB copy; what covers the window counts, as in a
 * screenshot). 0, or -1 with err (gone, unmapped, off the screen, connection
 * lost). */
int ksr_x11_window_colours(ksr_x11 *x, unsigned long window, ksr_x11_colours *out, ksr_err *err);

#endif
