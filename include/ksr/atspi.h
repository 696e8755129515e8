/* The accessibility backend (rung 2): find the AT-SPI bus the way real sessions
 * offer it, find an app's tree by PID, walk it with pipelined asynchronous
 * D-Bus calls (GDBus), perform a control's action, read its states. Every
 * D-Bus call has a timeout (KSR_ATSPI_CALL_MS) and every wait goes through
 * ksr/deadline.h, so a hung (SIGSTOPped) app can never hang the caller. */
#ifndef KSR_ATSPI_H
#define KSR_ATSPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ksr/deadline.h"
#include "ksr/error.h"
#include "ksr/pattern.h"

typedef struct ksr_x11 ksr_x11;
typedef struct cJSON cJSON;
typedef struct ksr_atspi ksr_atspi;

/* One D-Bus call's bound: a busy app must not hang the run. */
#define KSR_ATSPI_CALL_MS 1000

/* Where the bus address came from. */
typedef enum ksr_atspi_source {
	KSR_ATSPI_SRC_ENV,      /* AT_SPI_BUS_ADDRESS */
	KSR_ATSPI_SRC_X_ROOT,   /* the root window property AT_SPI_BUS */
	KSR_ATSPI_SRC_SESSION,  /* org.a11y.Bus.GetAddress on $DBUS_SESSION_BUS_ADDRESS */
	KSR_ATSPI_SRC_PROC_ENV, /* ... on a session bus read from /proc/PID/environ */
} ksr_atspi_source;

const char *ksr_atspi_source_name(ksr_atspi_source s);

typedef struct ksr_atspi_opts {
	ksr_x11 *x;  /* for the AT_SPI_BUS root property; may be NULL */
	int app_pid; /* whose /proc/PID/environ may name the session bus; 0: none */
} ksr_atspi_opts;

/* Find and connect to the accessibility bus (sources in the order above) and
 * set org.a11y.Status.IsEnabled where a session bus is known. -1 with err
 * naming every source tried and what to start when there is none. */
int ksr_atspi_open(const ksr_atspi_opts *opts, ksr_deadline d, ksr_atspi **out, ksr_err *err);
void ksr_atspi_close(ksr_atspi *a); /* NULL-safe */
const char *ksr_atspi_address(const ksr_atspi *a);
/* After a call went unanswered: does the bus itself (its dbus-daemon) still
 * answer? One GetId, bounded by 1 s of its own. true: it answered (the call's
 * silence is the callee's); false: err names the bus and its address. */
bool ksr_atspi_bus_answers(ksr_atspi *a, ksr_err *err);
ksr_atspi_source ksr_atspi_bus_source(const ksr_atspi *a);

/*  Before an app starts: where the X root has no AT_SPI_BUS property (and no
 * AT_SPI_BUS_ADDRESS is set), ask the session bus (DBUS_SESSION_BUS_ADDRESS,
 * else one named in the environment of a process on this display) for the
 * accessibility bus and publish its address there, as at-spi-bus-launcher
 * does on X11 (type STRING on the default screen's root; one that appears
 * meanwhile is never replaced). Qt 5 finds the bus reliably only through that
 * property: asked over the session bus, its bridge turns on before the answer
 * arrives and never registers. 1 with *published (free it; published may be
 * NULL) when set, 0 when not needed, -1 with err (may be NULL). */
int ksr_atspi_publish_root(ksr_x11 *x, ksr_deadline d, char **published, ksr_err *err);

/* For the embedded session: wait until org.a11y.Bus has an owner on the
 * session bus at address (NameOwnerChanged; asking GetAddress earlier would
 * activate a second launcher), then set IsEnabled true. */
int ksr_atspi_session_ready(const char *session_address, ksr_deadline d, ksr_err *err);

/* The bus address from an environment block (NUL-separated NAME=VALUE, as in
 * /proc/PID/environ); a copy, or NULL. */
char *ksr_atspi_environ_lookup(const char *block, size_t len, const char *name);

/* ---- an app's accessibility bridge, as its process shows it ---- */

typedef struct ksr_atspi_bridge {
	bool readable; /* /proc/PID/maps could be read (the process is there and ours) */
	/* "GTK 2", "GTK 3", "GTK 4", "Qt 5", "Qt 6", "Java", "Tk", "Motif", "Xaw",
	 * "FLTK", or NULL (none of them mapped), and the library that told. */
	const char *toolkit, *library;
	bool bridge_lib;     /* libatk-bridge (GTK 2's module, GTK 3's) or libatk-wrapper mapped */
	bool toolkit_bridge; /* the toolkit brings its own (GTK 4, Qt) */
	bool loaded;         /* either: a bridge is in the process */
	bool no_atspi;       /* a toolkit with no AT-SPI support at all (Tk, Motif...) */
	/* What in its environment turns the bridge off ("NO_AT_BRIDGE=1",
	 * "GTK_A11Y=none", "QT_ACCESSIBILITY=0"), or NULL. */
	const char *off_by;
	bool qt_always_on; /* QT_LINUX_ACCESSIBILITY_ALWAYS_ON is set */
	int64_t age_ms;    /* how long ago the process started; -1: unknown */
} ksr_atspi_bridge;

/* Read pid's maps and environment; -1 (out->readable false) when they cannot be read. */
int ksr_atspi_bridge_of(int pid, ksr_atspi_bridge *out);
/* A Qt (5 or 6) app: its bridge reads the X root's AT_SPI_BUS as it starts. */
bool ksr_atspi_bridge_is_qt(const ksr_atspi_bridge *b);
/* The cause b shows for an app that is not on the bus, one clause into buf
 * ("the app (pid N) is a GTK 2 app ... start it with GTK_MODULES=gail:atk-bridge");
 * empty when b shows none (a GTK 3 app with its bridge loaded). root_names_bus:
 * the X root has AT_SPI_BUS now (Qt 5 joins only through it). */
void ksr_atspi_bridge_cause(const ksr_atspi_bridge *b, int pid, bool root_names_bus, char *buf,
                            size_t cap);

/* ---- applications ---- */

typedef struct ksr_atspi_app {
	char *bus;     /* unique bus name of the app's connection */
	char *name;    /* the application object's name (usually the program) */
	char *toolkit; /* ToolkitName ("GTK", "Qt"...) or NULL */
	int toolkit_major;
	int pid;
} ksr_atspi_app;

/* The app with this PID; else (pid 0, or none) the first whose name equals
 * name_hint (NULL: none). found_by gets "pid" or "name". -1 with err when none
 * (the cause the app's process shows first, ksr_atspi_bridge_cause, else guesses);
 * -2 with err when the app is on the bus but did not answer (busy, stopped);
 * -3 with err when the registry or the bus did not answer while the app does
 * (the session's fault: err names what was silent).
 * The app with the PID may take until d for its first answer (one just
 * started on a loaded machine is busy, not hung: the caller's d, not a bound
 * per call, says how long it may); an app asked only for its name gets one
 * call's bound (KSR_ATSPI_CALL_MS). */
int ksr_atspi_find_app(ksr_atspi *a, int pid, const char *name_hint, ksr_deadline d,
                       ksr_atspi_app *out, const char **found_by, ksr_err *err);
void ksr_atspi_app_clear(ksr_atspi_app *app);

/* Apps joining, by the bus's signals (no polling): after watch, wait returns
 * READY once the registry's root reported a child added or removed, or a
 * connection came or went on the bus, since the last wait (then look again
 * with ksr_atspi_find_app); TIMEOUT at d, CANCELLED. Subscribe before the
 * first look, so that nothing between the look and the wait is missed. */
void ksr_atspi_watch_apps(ksr_atspi *a);
ksr_wait ksr_atspi_wait_apps(ksr_atspi *a, ksr_deadline d);
/* After ksr_atspi_find_app returned find_rc (< 0), with the apps watched:
 * wait until it is worth looking again, the bus's next signal (not
 * registered yet) or, for an app there that did not answer (-2) or a silent
 * registry (-3), that or one call's bound. false at until or when cancelled. */
bool ksr_atspi_await_app(ksr_atspi *a, int find_rc, ksr_deadline until);

/* ---- the tree ---- */

enum {
	KSR_ATSPI_IF_ACTION = 1u << 0,
	KSR_ATSPI_IF_COMPONENT = 1u << 1,
	KSR_ATSPI_IF_TEXT = 1u << 2,
	KSR_ATSPI_IF_VALUE = 1u << 3,
	KSR_ATSPI_IF_SELECTION = 1u << 4,
};

typedef struct ksr_atspi_node {
	char *path;         /* object path (on the app's bus name) */
	char *role;         /* the standard AT-SPI role name (GetRole), else the toolkit's */
	char *toolkit_role; /* the toolkit's own GetRoleName string (an alias of role) */
	char *name, *description;
	uint64_t states; /* bit i = AT-SPI state i */
	uint32_t ifaces; /* KSR_ATSPI_IF_* */
	char **actions;  /* action names */
	size_t n_actions;
	char *keybinding; /* the first action's key binding as the app wrote it, or NULL */
	bool has_extents; /* screen coordinates (window origin added for GTK4) */
	int x, y, w, h;
	int parent; /* index, -1 for the application */
	int depth;
	int n_children; /* as the app reported */
	bool answered;  /* the app answered for this node */
} ksr_atspi_node;

typedef struct ksr_atspi_walk_opts {
	int max_depth; /* default 32 */
	int max_nodes; /* default 5000 */
	/* Added to extents when the toolkit reports them relative to its window
	 * (GTK4); the caller gives the X window's client-area origin. */
	bool have_origin;
	int origin_x, origin_y;
	/* Find mode (find_name set): the walk stops as soon as the node
	 * ksr_atspi_tree_find(find_name, find_role) would pick on the whole tree
	 * is known. Only matching nodes get actions, extents and interfaces; a
	 * hidden match is kept while the walk goes on below showing nodes only
	 * (a node that is not showing has no showing descendants in AT-SPI).
	 * Pick the node with ksr_atspi_tree_find on the returned tree. */
	const ksr_name_match *find_name;
	const char *find_role; /* NULL: any role */
	/* Full walk for what nodes say, not for acting on them: roles, names,
	 * states and the tree's shape only (no interfaces, extents, actions nor
	 * toolkit role names: fewer calls, the app answers one at a time). */
	bool names_only;
} ksr_atspi_walk_opts;

typedef struct ksr_atspi_tree {
	ksr_atspi_node *nodes; /* nodes[0] is the application */
	size_t len, cap;
	bool truncated;     /* a bound (depth, nodes, time) cut the walk */
	const char *cut_by; /* "depth", "nodes", "time" or NULL */
	int unanswered;     /* calls that timed out or failed */
	int64_t ms;         /* how long the walk took */
	int calls;          /* D-Bus calls sent */
	bool found_early;   /* find mode: stopped once the match was known */
	bool cached;        /* the app's Cache.GetItems answered the core questions */
	int kids_cached;    /* full walk: nodes whose children the cache named (no GetChildren) */
	/* Find mode answered from the cache alone: nodes are the match and its
	 * ancestors (a showing match no other node equals; docs/accessibility.md). */
	bool found_in_cache;
	/* A GTK 4 app none of whose controls (below its windows) answered
	 * showing: visible stands for it (see ksr_atspi_tree_showing). */
	bool visible_is_showing;
} ksr_atspi_tree;

/* Walk app's tree breadth-first, all of a level's calls in flight at once.
 * Returns 0 (the tree may be partial: truncated/unanswered say so), or -1 when
 * the walk was cancelled or the app answered nothing (err says which; *out is
 * then empty, nothing to free). */
int ksr_atspi_walk(ksr_atspi *a, const ksr_atspi_app *app, const ksr_atspi_walk_opts *opts,
                   ksr_deadline d, ksr_atspi_tree *out, ksr_err *err);
void ksr_atspi_tree_clear(ksr_atspi_tree *t);

/* A node's path from the application, e.g. "/frame[KSR Test App]/filler/push button[Press me]"
 * (malloc'd). */
char *ksr_atspi_node_path(const ksr_atspi_tree *t, size_t i);
/* The node as JSON: role, name, states[], actions[], extents {x,y,w,h} or null, path. */
cJSON *ksr_atspi_node_json(const ksr_atspi_tree *t, size_t i);

/* Whether node i is on screen, where a person could see and click it: the
 * AT-SPI showing state; in a tree whose toolkit never sets showing (GTK 4),
 * the visible state (docs/accessibility.md, "Hidden controls"). */
bool ksr_atspi_tree_showing(const ksr_atspi_tree *t, size_t i);

/* The first node matching name and role (NULL: any role), preferring showing
 * ones (ksr_atspi_tree_showing); -1 when none. Roles compare without case, '_' and '-' as spaces.
 */
int ksr_atspi_tree_find(const ksr_atspi_tree *t, const ksr_name_match *name, const char *role);
bool ksr_atspi_role_equal(const char *written, const char *role);

/* ---- locators: controls without a usable name (locate.c) ---- */

/* What finds a control on a whole tree (docs/scenario.md#locators): every
 * part given must hold. The strings and matches are the caller's. */
typedef struct ksr_atspi_locator {
	const ksr_name_match *name; /* NULL or text NULL: any name */
	const char *role;           /* NULL: any role */
	/* A label's name: the control it labels (AT-SPI label-for of the label,
	 * labelled-by of the control; else the first control after the label in
	 * reading order). NULL or text NULL: not asked. */
	const ksr_name_match *label;
	bool in;                       /* inside an ancestor matching in_name and in_role */
	const ksr_name_match *in_name; /* NULL or text NULL: any name */
	const char *in_role;           /* NULL: any role */
	int nth;        /* 1-based among the matches in reading order; 0: the first */
	bool hidden_ok; /* hidden matches count as showing ones */
} ksr_atspi_locator;

typedef struct ksr_atspi_located {
	int index;   /* the control; -1 when none (a hidden one when only hidden ones match) */
	int matches; /* controls that fit (showing ones; with hidden_ok all) */
	int hidden;  /* hidden controls that fit besides (not counted without hidden_ok) */
	int relation_calls; /* GetRelationSet calls made for label: */
} ksr_atspi_located;

/* Only a name (and a role): the find-mode walk can answer it. */
bool ksr_atspi_locator_simple(const ksr_atspi_locator *l);
/* Find the control on t (a full walk): 0 with *out (out->index -1 when
 * nothing fits); label: asks the app its relations (bounded by d). Controls
 * named exactly as written win over those that match only normalised; then
 * reading order (depth first, children in the app's order). */
int ksr_atspi_locate(ksr_atspi *a, const ksr_atspi_app *app, const ksr_atspi_tree *t,
                     const ksr_atspi_locator *l, ksr_deadline d, ksr_atspi_located *out);
/* The locator as a reason names it: `label "Host:", role "text", nth 2` (malloc'd). */
char *ksr_atspi_locator_text(const ksr_atspi_locator *l);
/* Whether node i fits the locator's role and in: (name and label aside). */
bool ksr_atspi_locator_fits_place(const ksr_atspi_tree *t, size_t i, const ksr_atspi_locator *l);
/* The nodes of t in reading order (depth first from the application, children
 * in index order): t->len indices into a malloc'd array. */
int *ksr_atspi_reading_order(const ksr_atspi_tree *t);
/* Node i's label by AT-SPI relations or reading order, for inspect: the
 * index of the label node, or -1. Asks the app (bounded by d). */
int ksr_atspi_label_of(ksr_atspi *a, const ksr_atspi_app *app, const ksr_atspi_tree *t,
                       const int *order, size_t i, ksr_deadline d);

/* ---- states ---- */

/* The state's bit index ("checked" -> 4), or -1 for an unknown word. Accepts
 * the AT-SPI names (with '_' or '-' for spaces) and "pressed", "enabled",
 * "sensitive", "visible", "showing"... */
int ksr_atspi_state_index(const char *word);
const char *ksr_atspi_state_name(int index); /* NULL when unknown */
/* The known state names, NULL-terminated (for messages). */
const char *const *ksr_atspi_state_names(void);

/* Re-read one node's states (and name) now. */
int ksr_atspi_node_states(ksr_atspi *a, const ksr_atspi_app *app, const char *path, ksr_deadline d,
                          uint64_t *states, char **name, ksr_err *err);

/* ---- actions ---- */

/* The action to perform for a click: "click", "press", "activate", "toggle" or
 * "jump" (any case); -1 when the node has none of these. */
int ksr_atspi_pick_action(const ksr_atspi_node *n);
/* Action.DoAction(index); 0 when the app accepted it. */
int ksr_atspi_do_action(ksr_atspi *a, const ksr_atspi_app *app, const char *path, int index,
                        ksr_deadline d, ksr_err *err);

/* ---- roles, names, near misses (atspi_roles.c, atspi_match.c) ---- */

/* Every role name a scenario may write: the standard AT-SPI names (libatspi's
 * atspi_role_get_name of each role), then the toolkits' own GetRoleName
 * strings that differ (GTK 4's "button", "checkbox"...). *n_canonical: how
 * many of the first are standard. Static storage. */
const char *const *ksr_atspi_role_names(size_t *n, size_t *n_canonical);
/* Whether a scenario's role: word names a role (ksr_atspi_role_equal). */
bool ksr_atspi_role_known(const char *written);
/* The standard name of AT-SPI role number role (malloc'd), NULL when unknown. */
char *ksr_atspi_role_canonical(uint32_t role);

/* ---- text, values, shortcuts (atspi_text.c) ---- */

/* What a person reads in the control: its text (Text.GetText), else its
 * value (Value.CurrentValue, as "%g" would print it; also when its text is
 * empty), else for a label or static text its name (Qt's labels publish
 * only that): malloc'd into *out; *from gets "text", "value" or "name". -1
 * with err when it offers none of them or does not answer.
 * Needs n->ifaces (a full walk, or the match of a find-mode walk). */
int ksr_atspi_node_text(ksr_atspi *a, const ksr_atspi_app *app, const ksr_atspi_node *n,
                        ksr_deadline d, char **out, const char **from, ksr_err *err);
/* An action's key binding (ATK's "mnemonic;sequence;shortcut" such as
 * "s;<Alt>f:s;<Primary>s", or Qt's "Ctrl+S") as the chord a key: step
 * writes ("ctrl+s"); NULL when it has no shortcut that ksr_keys_parse reads. */
char *ksr_atspi_shortcut_chord(const char *binding);

/* An accessibility name as people read it: surrounding whitespace trimmed,
 * inner runs of whitespace collapsed to one space (malloc'd; NULL for NULL). */
char *ksr_atspi_name_display(const char *name);
/* How node n matches: 2 exactly (the name as the app spells it), 1 only once
 * whitespace is normalised on both sides (ksr_atspi_name_display), 0 not. A
 * role given must equal the node's standard role name or its toolkit's. */
int ksr_atspi_node_match_kind(const ksr_atspi_node *n, const ksr_name_match *name,
                              const char *role);

/* The controls of t closest to name (and role) when nothing matches: the
 * same name with another role first, then by edit distance of the
 * normalised names (case-insensitive), the same role first. Up to max
 * indices into out; returns how many. */
size_t ksr_atspi_near_misses(const ksr_atspi_tree *t, const ksr_name_match *name, const char *role,
                             int *out, size_t max);
/* The near misses as text for a reason: `closest: "Paper Mode" (check menu
 * item), "Paper Size" (menu item)`, or "" when there are none; into buf. */
const char *ksr_atspi_near_miss_text(const ksr_atspi_tree *t, const ksr_name_match *name,
                                     const char *role, char *buf, size_t len);

/* ---- the control under a point (atspi_point.c) ---- */

typedef struct ksr_atspi_at {
	int x, y;                 /* root pixels */
	const char *window_title; /* the X window there: its accessible is the start */
	/* GTK 4 answers in window coordinates: the X window's client origin. */
	bool window_coords;
	int origin_x, origin_y;
} ksr_atspi_at;

typedef struct ksr_atspi_control {
	char *path, *role, *name;
	uint64_t states;
	int depth; /* hops below the window */
} ksr_atspi_control;

/* The deepest accessible with a click-like action at the point, inside the
 * app's top-level whose name is at->window_title: 1 with *out set, 0 when
 * there is none (or the window cannot be told), -1 with err. */
int ksr_atspi_control_at(ksr_atspi *a, const ksr_atspi_app *app, const ksr_atspi_at *at,
                         ksr_deadline d, ksr_atspi_control *out, ksr_err *err);
/* Sensitive (or enabled) and showing (or, where the toolkit never sets
 * showing, visible): a person could click it now. */
bool ksr_atspi_control_ready(const ksr_atspi_control *c, bool visible_is_showing, bool *sensitive,
                             bool *showing);
void ksr_atspi_control_clear(ksr_atspi_control *c); /* NULL-safe */
/* The default button of the app's top-level named window_title (the state
 * "is default", visible): what Return activates. 1 with *out set, 0 when the
 * window has none, -1 with err. */
int ksr_atspi_default_control(ksr_atspi *a, const ksr_atspi_app *app, const char *window_title,
                              ksr_deadline d, ksr_atspi_control *out, ksr_err *err);
/* Read c's states again (c->path); -1 with err when the app did not answer. */
int ksr_atspi_control_refresh(ksr_atspi *a, const ksr_atspi_app *app, ksr_atspi_control *c,
                              ksr_deadline d, ksr_err *err);
/* The toolkit answers coordinates relative to the window (GTK 4). */
bool ksr_atspi_app_window_coords(const ksr_atspi_app *app);

/* ---- landmarks: what a window says it is (landmarks.c) ---- */

/* One showing node that names a part of a window: a frame, window or
 * dialog, an alert, a heading, a landmark or form, a panel or info bar
 * with a name, a web page, a selected page tab. The first look reads them for first-run and
 * recovery prompts drawn inside the app's windows (docs/scenario.md#dialogs). */
typedef struct ksr_atspi_landmark {
	char *role;   /* the standard AT-SPI role name */
	char *name;   /* as people read it (ksr_atspi_name_display) */
	char *path;   /* ksr_atspi_node_path */
	char *window; /* the name of the top-level it is in (NULL: none) */
	int depth;
} ksr_atspi_landmark;

typedef struct ksr_atspi_landmarks {
	ksr_atspi_landmark *items; /* in breadth-first order: nearest the window first */
	size_t len;
	size_t nodes;       /* nodes walked */
	const char *cut_by; /* the walk's bound that cut it ("time", "nodes"...) or NULL */
	int64_t ms;
} ksr_atspi_landmarks;

/* Whether a node of this role (standard name) is a landmark (a page tab is
 * one only when selected). */
bool ksr_atspi_landmark_role(const char *role);
/* Walk app's tree (at most max_nodes, until d) and keep its showing named
 * landmarks. 0 (possibly cut: cut_by says so), or -1 with err when the app
 * did not answer or the walk was cancelled (*out then empty). */
int ksr_atspi_landmarks_read(ksr_atspi *a, const ksr_atspi_app *app, int max_nodes, ksr_deadline d,
                             ksr_atspi_landmarks *out, ksr_err *err);
void ksr_atspi_landmarks_clear(ksr_atspi_landmarks *l); /* NULL-safe */

/* ---- key bindings (atspi_keys.c) ---- */

/* Each action's key binding as the app reports it (Action.GetActions: GTK
 * gives "mnemonic;sequence;shortcut", e.g. "<Alt>s;;<Control>s"; "" when none). */
typedef struct ksr_atspi_keys {
	char **action;  /* action names */
	char **binding; /* their key bindings, same index */
	size_t n;
} ksr_atspi_keys;

/* Read them for one node now. 0, or -1 with err (no Action interface, no answer). */
int ksr_atspi_action_keys(ksr_atspi *a, const ksr_atspi_app *app, const char *path, ksr_deadline d,
                          ksr_atspi_keys *out, ksr_err *err);
void ksr_atspi_keys_clear(ksr_atspi_keys *k); /* NULL-safe */

#endif
