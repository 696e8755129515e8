/* `inspect`: what a scenario author needs, as data. The windows on the display
 * (title, class, PID, geometry, type) and, for each window's process, its
 * accessibility controls, each with the scenario step that reaches it at the
 * highest rung (docs/ladder.md): `click_element: "Save"` (plus `role:` when the
 * name alone would find another control first) for a named control with an
 * action or a position, `click: FX FY` (a fraction of the window's client
 * area) for one without a usable name. With a browser debugging port, the
 * page's interactive elements too. Returns a cJSON document; the caller
 * formats it (text or JSON). No printing. */
#ifndef KSR_INSPECT_H
#define KSR_INSPECT_H

#include <stdbool.h>
#include <stddef.h>

#include "ksr/atspi.h"
#include "ksr/error.h"
#include "ksr/session.h"
#include "ksr/x11.h"

typedef struct cJSON cJSON;

typedef struct ksr_inspect_opts {
	bool xvfb;                      /* start a private session (Xvfb, D-Bus, AT-SPI, openbox) */
	int xvfb_w, xvfb_h;             /* its size; 0: 1280x720 */
	ksr_server_kind display_server; /* its X server and window manager */
	ksr_wm_kind wm;
	const char *window_re;   /* list only windows whose title matches; NULL: all */
	const char *launch;      /* `sh -c` this first (stopped at the end); NULL: none */
	const char *wait_window; /* with launch: wait for a window title matching this */
	const char *launch_log;  /* the launched command's output; NULL: a temporary file */
	int timeout_s;           /* bound on the whole inspection; 0: 30 */
	int max_nodes;           /* per app; 0: 5000 */
	int cdp_port;            /* a browser debugging port on 127.0.0.1; 0: none */
	/* Settle before listing (the run's rules, docs/cli.md#inspect): settle_s
	 * (<0: 5, the run's default, after a launch; 0 otherwise), then the app's
	 * windows quiet (no repaint for 500 ms, at most 30 s). With a launch it
	 * always happens; settle asks for it without one (--after). */
	double settle_s;
	bool settle;
} ksr_inspect_opts;

/* Inspect the display ($DISPLAY, or the private one). 0 with *out set (an
 * absent bus or a silent app is recorded in the document, not an error); -1
 * with err when there is no display, the launched app's window never came, or
 * a pattern does not compile. */
int ksr_inspect(const ksr_inspect_opts *opts, cJSON **out, ksr_err *err);

/* ---- the pure parts (unit-tested) ---- */

/* The scenario lines that reach node i of t, best rung first. wins: the
 * app's windows (the control's window is the one holding its centre; the
 * first is the app's main window). Returns a JSON object {rung, step: [YAML
 * lines], fraction?: {x, y}, window?} or NULL when nothing reaches it (no
 * usable name and no position in a window). */
cJSON *ksr_inspect_reach(const ksr_atspi_tree *t, size_t i, const ksr_window *wins, size_t n_wins);

/* s as a YAML scalar: plain where YAML reads it back unchanged, else
 * double-quoted (malloc'd). */
char *ksr_inspect_yaml_scalar(const char *s);

/* The shortest locator that finds node i of t alone (docs/scenario.md#locators),
 * tried in order: a label (the label's name, then with role:), the nearest
 * named ancestor with role:, the name with in: or nth:, role: with nth:; each
 * checked with ksr_atspi_locate on t, so it finds this node and no other.
 * order: ksr_atspi_reading_order(t). The YAML flow mapping ("{label: "Host:",
 * role: text}", malloc'd) or NULL when none does. Asks the app its relations
 * (bounded by d). */
char *ksr_inspect_locator(ksr_atspi *a, const ksr_atspi_app *app, const ksr_atspi_tree *t,
                          const int *order, size_t i, ksr_deadline d);
/* The name of the menu bar item in node i's window whose mnemonic is chord
 * ("alt+h": the Help menu's), or NULL when no menu bar item there claims it
 * (inspect withholds a key suggestion a menu would take). */
const char *ksr_inspect_menu_claims(const ksr_atspi_tree *t, size_t i, const char *chord);
/* What text: reads in node i: "text", "value", "name" (a label's name), or NULL. */
const char *ksr_inspect_reads(const ksr_atspi_tree *t, size_t i);

/* A title as the `window:` pattern that matches exactly it (`^...$`, PCRE
 * metacharacters escaped), written as a YAML scalar (quoted when needed).
 * malloc'd. */
char *ksr_inspect_window_line(const char *title);

/* The fraction (at most 4 decimals, as few as keep the point inside the
 * control) of the window's client area at (cx, cy). 0, or -1 when the point
 * is outside the window. */
int ksr_inspect_fraction(const ksr_window *w, int x, int y, int cw, int ch, double *fx, double *fy,
                         int *decimals);

#endif
