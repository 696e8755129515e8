/* `inspect`: gather what a scenario author needs into one cJSON document
 * (windows, each window process's accessibility controls with the step that
 * reaches them, a browser page's interactive elements). Everything started
 * here (a private session, a launched app) is stopped before returning. */
#include "ksr/inspect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "ksr/bidi.h"
#include "ksr/cdp.h"
#include "ksr/atspi.h"
#include "ksr/proc.h"
#include "ksr/session.h"
#include "ksr/strbuf.h"

#define DEFAULT_TIMEOUT_S 30
#define REGISTER_MS       5000 /* a launched app may join the AT-SPI bus after it maps */
#define STOP_GRACE_MS     2000
#define WALK_SHARE        2     /* each app's walk gets at most 1/WALK_SHARE of what is left */
#define LAUNCH_TICK_MS    100   /* how soon a launch that ended is noticed */
#define HANDOVER_GRACE_MS 2000  /* an exit 0: a process it handed over to may still map */
#define DEFAULT_SETTLE_S  5     /* the run's settle_s default (docs/scenario.md) */
#define PAINT_QUIET_MS    500   /* the run's "painted and quiet" */
#define PAINT_LIMIT_MS    30000 /* the run's paint_timeout_s default */
#define MAX_QUIET_WINDOWS 64

typedef struct insp {
	const ksr_inspect_opts *o;
	ksr_deadline d;
	ksr_session *session;
	ksr_x11 *x;
	ksr_pattern *window_re, *wait_re;
	int launched_pid;
	int app_pid;   /* _NET_WM_PID of the launched app's window */
	char *tmp_log; /* the launch's output when no --launch-log: for its last lines */
	ksr_window_list wins;
	cJSON *doc;
	bool settled;      /* a settle wait ran */
	double settle_s;   /* its fixed part */
	bool quiet;        /* the app's windows went quiet within the paint limit */
	int64_t settle_ms; /* the whole wait */
} insp;

/* ---- display, session, launch ---- */

static int start_session(insp *s, ksr_err *err)
{
	ksr_session_opts so = {.width = s->o->xvfb_w > 0 ? s->o->xvfb_w : 1280,
	                       .height = s->o->xvfb_h > 0 ? s->o->xvfb_h : 720,
	                       .server = s->o->display_server,
	                       .wm = s->o->wm};
	if (ksr_session_start(&so, s->d, &s->session, err) < 0)
		return -1;
	return 0;
}

static int open_display(insp *s, ksr_err *err)
{
	ksr_wait w = ksr_x11_open_wait(NULL, s->d, &s->x, err);
	if (w == KSR_WAIT_READY)
		return 0;
	if (w != KSR_WAIT_ERROR)
		ksr_err_set(err, "the X display did not accept a connection (%s)",
		            ksr_wait_name(w));
	return -1;
}

static bool listed(const ksr_window_list *l, unsigned long id)
{
	for (size_t i = 0; i < l->len; i++)
		if (l->items[i].id == id)
			return true;
	return false;
}

/* The launched app's window: one matching --wait-window, else any new one. */
static const ksr_window *new_window(const insp *s, const ksr_window_list *before,
                                    const ksr_window_list *now)
{
	for (size_t i = 0; i < now->len; i++) {
		const ksr_window *w = &now->items[i];
		if (s->wait_re ? ksr_pattern_match(s->wait_re, w->title) : !listed(before, w->id))
			return w;
	}
	return NULL;
}

/* The launch ended with nothing of it left and no window: say how, with its
 * last output. */
static int launch_exited(insp *s, const ksr_launch_watch *lw, const char *log, ksr_err *err)
{
	ksr_strbuf b = {0};
	ksr_launch_watch_describe(lw, s->o->launch, strcmp(log, "/dev/null") ? log : NULL, &b);
	int rc = ksr_err_set(err, "no window %s%s appeared: the app exited: %s",
	                     s->o->wait_window ? "matching " : "",
	                     s->o->wait_window ? s->o->wait_window : "", b.p);
	ksr_strbuf_free(&b);
	return rc;
}

static int launch(insp *s, ksr_err *err)
{
	ksr_window_list before = {0}, now = {0};
	if (ksr_x11_list_windows(s->x, &before, err) < 0)
		return -1;
	if (!s->o->launch_log)
		s->tmp_log = ksr_launch_temp_log("inspect");
	const char *log = s->o->launch_log ? s->o->launch_log
	                  : s->tmp_log     ? s->tmp_log
	                                   : "/dev/null";
	/* Qt 5 joins the bus only where the X root names it (docs/accessibility.md). */
	ksr_atspi_publish_root(s->x, ksr_deadline_min(s->d, ksr_deadline_in_ms(3000)), NULL, NULL);
	int rc = ksr_proc_launch(s->o->launch, log, &s->launched_pid, err);
	ksr_launch_watch lw = {.pid = rc == 0 ? s->launched_pid : 0, .start_ms = ksr_now_ms()};
	while (rc == 0) {
		if (ksr_x11_list_windows(s->x, &now, err) < 0) {
			rc = -1;
			break;
		}
		const ksr_window *w = new_window(s, &before, &now);
		if (w) {
			s->app_pid = w->pid;
			break;
		}
		ksr_window_list_clear(&now);
		if (ksr_launch_watch_gone(&lw, HANDOVER_GRACE_MS)) {
			s->launched_pid = 0; /* reaped: its pid may be another's now */
			rc = launch_exited(s, &lw, log, err);
			break;
		}
		ksr_wait wr = ksr_x11_wait_change(
		        s->x, ksr_deadline_min(s->d, ksr_deadline_in_ms(LAUNCH_TICK_MS)));
		if (wr == KSR_WAIT_TIMEOUT && !ksr_deadline_passed(s->d))
			continue;
		if (wr == KSR_WAIT_CANCELLED || wr == KSR_WAIT_ERROR || ksr_deadline_passed(s->d))
			rc = ksr_err_set(err, "no window %s%s appeared after launching '%s' (%s)",
			                 s->o->wait_window ? "matching " : "",
			                 s->o->wait_window ? s->o->wait_window : "", s->o->launch,
			                 wr == KSR_WAIT_READY ? "timed out" : ksr_wait_name(wr));
	}
	ksr_window_list_clear(&now);
	ksr_window_list_clear(&before);
	return rc;
}

/* ---- settle: the run's settle and paint rules before listing ---- */

/* The windows to wait quiet on: the launched app's (by _NET_WM_PID), else all. */
static size_t quiet_windows(const insp *s, const ksr_window_list *l, unsigned long *ids)
{
	size_t n = 0;
	for (size_t i = 0; i < l->len && n < MAX_QUIET_WINDOWS; i++)
		if (s->app_pid <= 0 || l->items[i].pid == s->app_pid)
			ids[n++] = l->items[i].id;
	return n;
}

/* settle_s, then until the app's windows have not repainted for
 * PAINT_QUIET_MS (an app still adding and drawing controls is not listed
 * half-built, issue #32); both within the inspection's bound. */
static void settle(insp *s)
{
	int64_t start = ksr_now_ms();
	s->settled = true;
	s->settle_s = s->o->settle_s >= 0 ? s->o->settle_s : (s->o->launch ? DEFAULT_SETTLE_S : 0);
	ksr_sleep_until(ksr_deadline_min(s->d, ksr_deadline_in_ms((int64_t)(s->settle_s * 1000))));
	ksr_window_list l = {0};
	ksr_err e = {0};
	unsigned long ids[MAX_QUIET_WINDOWS];
	size_t n = ksr_x11_list_windows(s->x, &l, &e) == 0 ? quiet_windows(s, &l, ids) : 0;
	ksr_window_list_clear(&l);
	ksr_x11_quiet q = {
	        .quiet_ms = PAINT_QUIET_MS, .since_ms = ksr_now_ms(), .window_changes = true};
	int64_t waited = 0;
	ksr_wait w =
	        n ? ksr_x11_quiet_wait(s->x, ids, n, &q,
	                               ksr_deadline_min(s->d, ksr_deadline_in_ms(PAINT_LIMIT_MS)),
	                               &waited)
	          : KSR_WAIT_ERROR;
	s->quiet = w == KSR_WAIT_READY;
	s->settle_ms = ksr_now_ms() - start;
}

static void add_settle(insp *s)
{
	if (!s->settled) {
		cJSON_AddNullToObject(s->doc, "settle");
		return;
	}
	cJSON *o = cJSON_AddObjectToObject(s->doc, "settle");
	cJSON_AddNumberToObject(o, "settle_s", s->settle_s);
	cJSON_AddBoolToObject(o, "quiet", s->quiet);
	cJSON_AddNumberToObject(o, "ms", (double)s->settle_ms);
}

/* ---- windows ---- */

static cJSON *window_json(const ksr_window *w)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "id", (double)w->id);
	cJSON_AddStringToObject(o, "title", w->title ? w->title : "");
	cJSON_AddStringToObject(o, "class", w->res_class ? w->res_class : "");
	cJSON_AddStringToObject(o, "instance", w->res_name ? w->res_name : "");
	cJSON_AddNumberToObject(o, "pid", w->pid);
	cJSON *g = cJSON_AddObjectToObject(o, "geometry");
	cJSON_AddNumberToObject(g, "x", w->x);
	cJSON_AddNumberToObject(g, "y", w->y);
	cJSON_AddNumberToObject(g, "w", w->w);
	cJSON_AddNumberToObject(g, "h", w->h);
	cJSON_AddStringToObject(o, "type", w->is_dialog ? "dialog" : "normal");
	if (w->transient_for)
		cJSON_AddNumberToObject(o, "transient_for", (double)w->transient_for);
	else
		cJSON_AddNullToObject(o, "transient_for");
	char *line = ksr_inspect_window_line(w->title);
	cJSON_AddStringToObject(o, "line", line);
	free(line);
	return o;
}

/* Drop the windows --window does not match (kept in place, order unchanged). */
static void filter_windows(insp *s)
{
	size_t keep = 0;
	for (size_t i = 0; i < s->wins.len; i++) {
		ksr_window *w = &s->wins.items[i];
		if (!s->window_re || ksr_pattern_match(s->window_re, w->title)) {
			s->wins.items[keep++] = *w;
			continue;
		}
		free(w->title);
		free(w->res_name);
		free(w->res_class);
	}
	s->wins.len = keep;
}

static void add_windows(insp *s)
{
	cJSON *arr = cJSON_AddArrayToObject(s->doc, "windows");
	for (size_t i = 0; i < s->wins.len; i++)
		cJSON_AddItemToArray(arr, window_json(&s->wins.items[i]));
}

/* ---- accessibility ---- */

/* The app's windows, its main (first non-dialog) window first. */
static size_t app_windows(const insp *s, int pid, const char *hint, ksr_window *out)
{
	size_t n = 0;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < s->wins.len; i++) {
			const ksr_window *w = &s->wins.items[i];
			bool mine =
			        pid > 0 ? w->pid == pid
			                : w->pid == 0 && w->res_name && !strcmp(w->res_name, hint);
			if (mine && w->is_dialog == (pass == 1))
				out[n++] = *w;
		}
	return n;
}

static int find_app(insp *s, ksr_atspi *a, int pid, const char *hint, ksr_atspi_app *app,
                    const char **found_by, ksr_err *err)
{
	/* Only the app we launched is waited for: another window's process that
	 * is not on the bus (xterm) would cost the whole wait. */
	bool wait = pid > 0 && pid == s->app_pid;
	ksr_deadline until = ksr_deadline_min(s->d, ksr_deadline_in_ms(REGISTER_MS));
	if (wait)
		ksr_atspi_watch_apps(a); /* before the first look: nothing is missed */
	for (;;) {
		int rc = ksr_atspi_find_app(a, pid, hint, s->d, app, found_by, err);
		if (rc == 0)
			return 0;
		if (!wait || !ksr_atspi_await_app(a, rc, until))
			return -1;
	}
}

/* A walked app, for the locators (they ask the app its relations). */
typedef struct insp_walked {
	ksr_atspi *a;
	const ksr_atspi_app *app;
	const ksr_atspi_tree *t;
	int *order; /* ksr_atspi_reading_order */
	ksr_deadline d;
	const ksr_window_list *all; /* every listed window: the position fallback */
} insp_walked;

/* One a scenario could act on or check. The top-level frames and dialogs
 * are the windows already listed (a window: line reaches them). */
static bool worth_listing(const ksr_atspi_node *n)
{
	if (n->depth == 1 && ksr_atspi_pick_action(n) < 0)
		return false;
	/* A text or a value is worth a text: check, named or not (FileZilla's log). */
	bool readable = n->ifaces & (KSR_ATSPI_IF_TEXT | KSR_ATSPI_IF_VALUE);
	return n->n_actions > 0 || (n->has_extents && ((n->name && *n->name) || readable));
}

/* A control a name does not reach alone: the shortest locator that does,
 * and the click_element line with it (rung 2, above a fraction). */
static cJSON *by_locator(const insp_walked *w, size_t i, cJSON *reach)
{
	char *loc = ksr_inspect_locator(w->a, w->app, w->t, w->order, i, w->d);
	if (!loc)
		return reach;
	const ksr_atspi_node *n = &w->t->nodes[i];
	cJSON *r = cJSON_CreateObject();
	cJSON_AddNumberToObject(r, "rung", 2);
	cJSON_AddStringToObject(r, "kind", "element");
	cJSON_AddStringToObject(r, "backend", ksr_atspi_pick_action(n) >= 0 ? "atspi" : "xtest");
	cJSON_AddStringToObject(r, "locator", loc);
	cJSON *step = cJSON_AddArrayToObject(r, "step");
	char *line = ksr_xasprintf("click_element: %s", loc);
	cJSON_AddItemToArray(step, cJSON_CreateString(line));
	free(line);
	if (!ksr_atspi_tree_showing(w->t, i))
		cJSON_AddItemToArray(step, cJSON_CreateString("hidden_ok: true"));
	const cJSON *win = reach ? cJSON_GetObjectItem(reach, "window") : NULL;
	if (cJSON_IsNumber(win))
		cJSON_AddNumberToObject(r, "window", win->valuedouble);
	cJSON_AddBoolToObject(r, "hidden", !ksr_atspi_tree_showing(w->t, i));
	cJSON_Delete(reach);
	free(loc);
	return r;
}

static void add_hidden_line(cJSON *c, const char *first)
{
	char *line = ksr_xasprintf("%s  # not showing: open its menu or page first, or add "
	                           "hidden_ok: true",
	                           first);
	cJSON_AddStringToObject(c, "line", line);
	free(line);
}

/* The app's keyboard shortcut for the control, and the key: line that
 * presses it (keys come first in a scenario: docs/acting.md); none when the
 * window's menu bar claims the same chord as a mnemonic (the menu would
 * open instead): then key_withheld says why. */
static void add_shortcut(cJSON *c, const ksr_atspi_tree *t, size_t i)
{
	const ksr_atspi_node *n = &t->nodes[i];
	if (!n->keybinding)
		return;
	cJSON_AddStringToObject(c, "keybinding", n->keybinding);
	char *chord = ksr_atspi_shortcut_chord(n->keybinding);
	if (!chord)
		return;
	const char *menu = ksr_inspect_menu_claims(t, i, chord);
	char *line = menu ? ksr_xasprintf("%s opens the menu \"%s\" (its mnemonic)", chord, menu)
	                  : ksr_xasprintf("key: %s", chord);
	cJSON_AddStringToObject(c, menu ? "key_withheld" : "key", line);
	free(line);
	free(chord);
}

/* A control with extents that none of its app's windows holds (its window
 * carries another process's _NET_WM_PID, a launcher's): its position in
 * whichever listed window holds it. Slot 0 stays an empty window, so every
 * hit is "not the main window" and the line names its window (target:). */
static cJSON *by_any_window(const insp_walked *w, size_t i)
{
	if (!w->t->nodes[i].has_extents || !w->all->len)
		return NULL;
	ksr_window *any = ksr_xcalloc(w->all->len + 1, sizeof *any);
	for (size_t k = 0; k < w->all->len; k++)
		any[k + 1] = w->all->items[k];
	cJSON *r = ksr_inspect_reach(w->t, i, any, w->all->len + 1);
	free(any);
	return r;
}

static void add_controls(cJSON *app, const insp_walked *w, const ksr_window *wins, size_t nw)
{
	const ksr_atspi_tree *t = w->t;
	cJSON *arr = cJSON_AddArrayToObject(app, "controls");
	for (size_t i = 1; i < t->len; i++) {
		if (!worth_listing(&t->nodes[i]))
			continue;
		cJSON *c = ksr_atspi_node_json(t, i);
		cJSON *reach = ksr_inspect_reach(t, i, wins, nw);
		if (!reach)
			reach = by_any_window(w, i);
		const cJSON *kind = reach ? cJSON_GetObjectItem(reach, "kind") : NULL;
		if (!cJSON_IsString(kind) || strcmp(kind->valuestring, "element") != 0)
			reach = by_locator(w, i, reach);
		const char *reads = ksr_inspect_reads(t, i);
		if (reads) /* what a text: check reads there (docs/scenario.md#checks) */
			cJSON_AddStringToObject(c, "reads", reads);
		cJSON *step = reach ? cJSON_GetObjectItem(reach, "step") : NULL;
		cJSON *first = step ? cJSON_GetArrayItem(step, 0) : NULL;
		bool hidden = !ksr_atspi_tree_showing(t, i);
		cJSON_AddBoolToObject(c, "hidden", hidden);
		add_shortcut(c, t, i);
		if (first && hidden) /* never a plain line: a step refuses it as it stands */
			add_hidden_line(c, first->valuestring);
		else if (first)
			cJSON_AddStringToObject(c, "line", first->valuestring);
		else
			cJSON_AddNullToObject(c, "line");
		cJSON_AddItemToObject(c, "reach", reach ? reach : cJSON_CreateNull());
		cJSON_AddItemToArray(arr, c);
	}
}

static void add_walk(cJSON *app, const ksr_atspi_tree *t)
{
	cJSON *w = cJSON_AddObjectToObject(app, "walk");
	cJSON_AddNumberToObject(w, "nodes", (double)t->len);
	cJSON_AddNumberToObject(w, "ms", (double)t->ms);
	cJSON_AddNumberToObject(w, "calls", t->calls);
	cJSON_AddBoolToObject(w, "truncated", t->truncated);
	if (t->cut_by)
		cJSON_AddStringToObject(w, "cut_by", t->cut_by);
	else
		cJSON_AddNullToObject(w, "cut_by");
	cJSON_AddNumberToObject(w, "unanswered", t->unanswered);
}

static void app_head(cJSON *o, const ksr_atspi_app *app, const char *found_by)
{
	cJSON_AddStringToObject(o, "name", app->name ? app->name : "");
	cJSON_AddStringToObject(o, "toolkit", app->toolkit ? app->toolkit : "");
	cJSON_AddNumberToObject(o, "toolkit_major", app->toolkit_major);
	cJSON_AddStringToObject(o, "found_by", found_by);
}

static void inspect_app(insp *s, ksr_atspi *a, int pid, const char *hint, cJSON *apps)
{
	ksr_window *wins = ksr_xcalloc(s->wins.len + 1, sizeof *wins);
	size_t nw = app_windows(s, pid, hint, wins);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddItemToArray(apps, o);
	cJSON_AddNumberToObject(o, "pid", pid);
	cJSON *ids = cJSON_AddArrayToObject(o, "windows");
	for (size_t k = 0; k < nw; k++)
		cJSON_AddItemToArray(ids, cJSON_CreateNumber((double)wins[k].id));
	ksr_atspi_app app = {0};
	const char *found_by = NULL;
	ksr_atspi_tree t = {0};
	ksr_err e = {0};
	if (find_app(s, a, pid, hint, &app, &found_by, &e) < 0) {
		cJSON_AddStringToObject(o, "status", "not-on-bus");
		cJSON_AddStringToObject(o, "reason", e.msg);
		goto cleanup;
	}
	app_head(o, &app, found_by);
	ksr_atspi_walk_opts wo = {.max_nodes = s->o->max_nodes, .have_origin = nw > 0};
	if (nw > 0)
		wo.origin_x = wins[0].x, wo.origin_y = wins[0].y;
	ksr_deadline wd = ksr_deadline_in_ms(ksr_deadline_remaining_ms(s->d) / WALK_SHARE);
	if (ksr_atspi_walk(a, &app, &wo, wd, &t, &e) < 0) {
		cJSON_AddStringToObject(o, "status", "no-answer");
		cJSON_AddStringToObject(o, "reason", e.msg);
		goto cleanup;
	}
	cJSON_AddStringToObject(o, "status", "ok");
	add_walk(o, &t);
	insp_walked w = {.a = a,
	                 .app = &app,
	                 .t = &t,
	                 .order = ksr_atspi_reading_order(&t),
	                 .d = s->d,
	                 .all = &s->wins};
	add_controls(o, &w, wins, nw);
	free(w.order);
cleanup:
	ksr_atspi_tree_clear(&t);
	ksr_atspi_app_clear(&app);
	free(wins);
}

/* One entry per process with a listed window (pid 0: by WM_CLASS instance). */
static bool seen_before(const insp *s, size_t i)
{
	const ksr_window *w = &s->wins.items[i];
	for (size_t k = 0; k < i; k++) {
		const ksr_window *p = &s->wins.items[k];
		if (w->pid > 0 ? p->pid == w->pid
		               : p->pid == 0 && p->res_name && w->res_name &&
		                         !strcmp(p->res_name, w->res_name))
			return true;
	}
	return false;
}

static void add_accessibility(insp *s)
{
	cJSON *acc = cJSON_AddObjectToObject(s->doc, "accessibility");
	ksr_atspi *a = NULL;
	ksr_err e = {0};
	int pid = s->app_pid > 0 ? s->app_pid : (s->wins.len ? s->wins.items[0].pid : 0);
	ksr_atspi_opts ao = {.x = s->x, .app_pid = pid};
	if (ksr_atspi_open(&ao, s->d, &a, &e) < 0) {
		const char *why = s->session ? ksr_session_a11y_error(s->session) : NULL;
		cJSON_AddStringToObject(acc, "status", "unavailable");
		cJSON_AddStringToObject(acc, "reason", why ? why : e.msg);
		return;
	}
	cJSON_AddStringToObject(acc, "status", "ok");
	cJSON_AddStringToObject(acc, "bus_source", ksr_atspi_source_name(ksr_atspi_bus_source(a)));
	cJSON *apps = cJSON_AddArrayToObject(acc, "apps");
	for (size_t i = 0; i < s->wins.len && !ksr_deadline_passed(s->d); i++) {
		const ksr_window *w = &s->wins.items[i];
		if (seen_before(s, i) || (w->pid <= 0 && (!w->res_name || !*w->res_name)))
			continue;
		inspect_app(s, a, w->pid, w->res_name, apps);
	}
	ksr_atspi_close(a);
}

/* ---- page elements (rung 0) ---- */

static void add_elements(cJSON *page, const ksr_page_element_list *l)
{
	cJSON *arr = cJSON_AddArrayToObject(page, "elements");
	for (size_t i = 0; i < l->len; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "id", l->items[i].id);
		cJSON_AddStringToObject(o, "role", l->items[i].role ? l->items[i].role : "");
		cJSON_AddStringToObject(o, "name", l->items[i].name ? l->items[i].name : "");
		cJSON_AddItemToArray(arr, o);
	}
}

/* The page on --cdp PORT in either protocol: Chromium's DevTools, else
 * Firefox's WebDriver BiDi on the same port. */
static void add_page(insp *s)
{
	cJSON *page = cJSON_AddObjectToObject(s->doc, "page");
	if (s->o->cdp_port <= 0) {
		cJSON_AddStringToObject(page, "status", "not-requested");
		cJSON_AddStringToObject(page, "reason",
		                        "give --cdp PORT (a browser's remote debugging port) to "
		                        "list the page's elements");
		return;
	}
	ksr_page_status st = KSR_PAGE_OK;
	ksr_err e = {0};
	ksr_page_element_list l = {0};
	ksr_page *p = ksr_page_connect("127.0.0.1", s->o->cdp_port, KSR_PAGE_BROWSER_ANY, s->d,
	                               NULL, &st, &e);
	if (p)
		st = ksr_page_list_interactive(p, s->d, &l, &e);
	cJSON_AddStringToObject(page, "status",
	                        st == KSR_PAGE_OK ? "ok" : ksr_page_status_name(st));
	if (p)
		cJSON_AddStringToObject(page, "protocol", ksr_page_protocol(p));
	if (st != KSR_PAGE_OK) {
		cJSON_AddStringToObject(page, "reason", e.msg);
	} else {
		cJSON_AddStringToObject(page, "url", ksr_page_url(p) ? ksr_page_url(p) : "");
		/* Element ids live only as long as the page: a scenario names a
		 * CSS selector (cdp_targets) instead, so no line is offered. */
		add_elements(page, &l);
	}
	ksr_page_element_list_clear(&l);
	ksr_page_close(p);
}

/* ---- the whole ---- */

static int compile(const char *src, ksr_pattern **out, const char *what, ksr_err *err)
{
	if (!src)
		return 0;
	ksr_err e = {0};
	*out = ksr_pattern_compile(src, &e);
	return *out ? 0 : ksr_err_set(err, "%s '%s': %s", what, src, e.msg);
}

static void add_head(insp *s)
{
	int w = 0, h = 0;
	ksr_x11_screen_size(s->x, &w, &h);
	cJSON_AddStringToObject(s->doc, "display", ksr_x11_display_name(s->x));
	cJSON *scr = cJSON_AddObjectToObject(s->doc, "screen");
	cJSON_AddNumberToObject(scr, "w", w);
	cJSON_AddNumberToObject(scr, "h", h);
	cJSON_AddBoolToObject(s->doc, "private_session", s->session != NULL);
	if (!s->o->launch) {
		cJSON_AddNullToObject(s->doc, "launched");
		return;
	}
	cJSON *l = cJSON_AddObjectToObject(s->doc, "launched");
	cJSON_AddStringToObject(l, "command", s->o->launch);
	cJSON_AddNumberToObject(l, "pid", s->launched_pid);
	cJSON_AddNumberToObject(l, "window_pid", s->app_pid);
}

static void finish(insp *s)
{
	if (s->launched_pid > 0)
		ksr_proc_stop_group(s->launched_pid, STOP_GRACE_MS);
	ksr_window_list_clear(&s->wins);
	ksr_x11_close(s->x);
	ksr_session_stop(s->session);
	ksr_pattern_free(s->window_re);
	ksr_pattern_free(s->wait_re);
	cJSON_Delete(s->doc);
	if (s->tmp_log)
		unlink(s->tmp_log);
	free(s->tmp_log);
}

int ksr_inspect(const ksr_inspect_opts *opts, cJSON **out, ksr_err *err)
{
	ksr_inspect_opts o = opts ? *opts : (ksr_inspect_opts){0};
	insp s = {.o = &o};
	int rc = -1;
	*out = NULL;
	s.d = ksr_deadline_in_ms((int64_t)(o.timeout_s > 0 ? o.timeout_s : DEFAULT_TIMEOUT_S) *
	                         1000);
	if (compile(o.window_re, &s.window_re, "--window", err) < 0 ||
	    compile(o.wait_window, &s.wait_re, "--wait-window", err) < 0)
		goto cleanup;
	if (o.xvfb && start_session(&s, err) < 0)
		goto cleanup;
	if (open_display(&s, err) < 0 || (o.launch && launch(&s, err) < 0))
		goto cleanup;
	if (o.launch || o.settle)
		settle(&s);
	if (ksr_x11_list_windows(s.x, &s.wins, err) < 0)
		goto cleanup;
	filter_windows(&s);
	s.doc = cJSON_CreateObject();
	add_head(&s);
	add_settle(&s);
	add_windows(&s);
	add_accessibility(&s);
	add_page(&s);
	*out = s.doc;
	s.doc = NULL;
	rc = 0;
cleanup:
	finish(&s);
	return rc;
}
