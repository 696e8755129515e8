/* Rung 2: click_element, and the state: / element: checks, through the
 * accessibility backend. The app is found by PID (name as fallback); the
 * control by exact name or /regex/ and optional role. A control with an
 * action gets the action (no coordinate); one with only a position gets an
 * XTest click at the centre of its extents. */
#include "run/actions/exec.h"
#include "run/actions/runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/atspi.h"
#include "ksr/verdict.h"
#include "run/actions/exec.h"
#include "run/actions/exec_atspi.h"

#define CLICK_ELEMENT_DEFAULT_S 10
#define FIND_RETRY_MS           200
#define PING_MS                 2000 /* the app's answer to _NET_WM_PING */
#define WALK_MS                 3000
/* GTK4 drops an action sent within ~250 ms of the previous one (shared
 * notes): keep actions to one app at least this far apart. */
#define ACTION_SPACING_MS 300
#define CONFIRM_MS        600
#define RETRY_WAIT_MS     300

/* The states a toggle-like control changes when acted on. */
#define TOGGLE_STATES                                                                              \
	((1ull << 4) /* checked */ | (1ull << 20) /* pressed */ | (1ull << 23) /* selected */ |    \
	 (1ull << 10) /* expanded */)

void ksr_run_atspi_release(ksr_run_atspi *t)
{
	if (!t)
		return;
	ksr_atspi_app_clear(&t->app);
	ksr_atspi_close(t->a);
	t->a = NULL;
}

/* The process rung 2 looks for, and its WM_CLASS name as a fallback: the
 * app's; in desktop mode the tool a step names (tool:) or the newest one
 * (ksr_tools_a11y). 0: none (desktop mode before any spawn). */
static int a11y_pid(const ksr_run *run, const char **hint)
{
	if (run->sc && run->sc->desktop) {
		const ksr_tool *t = ksr_tools_a11y(run);
		*hint = t ? t->window_res_name : NULL;
		return t ? ksr_tool_a11y_pid(t) : 0;
	}
	*hint = run->have_window ? run->window.res_name : NULL;
	return run->app_pid > 0 ? run->app_pid : (run->have_window ? run->window.pid : 0);
}

/* Desktop mode without a tool to look at: say why instead of looking for
 * pid 0 (a tool: naming one that was killed, or no spawn yet). */
static int no_tool(const ksr_run *run, ksr_err *err)
{
	const ksr_tool *t = ksr_tools_a11y(run);
	if (t && t->stopped)
		return ksr_err_set(err,
		                   "the tool '%s' (spawned at line %d) was killed: its controls "
		                   "are gone",
		                   t->as, t->line);
	if (run->a11y_tool)
		return ksr_err_set(err, "no tool '%s' was spawned (its spawn step did not run)",
		                   run->a11y_tool);
	return ksr_err_set(err, "desktop mode: no spawned tool is running (spawn one first)");
}

int ksr_run_atspi_open_until(ksr_run *run, ksr_deadline d, ksr_deadline appear, ksr_run_atspi *t,
                             ksr_err *err)
{
	*t = (ksr_run_atspi){0};
	const char *hint = NULL;
	int pid = a11y_pid(run, &hint);
	const ksr_tool *tool = run->sc && run->sc->desktop ? ksr_tools_a11y(run) : NULL;
	if (run->sc && run->sc->desktop && (!tool || tool->stopped))
		return no_tool(run, err);
	ksr_atspi_opts o = {.x = run->x, .app_pid = pid};
	if (ksr_atspi_open(&o, d, &t->a, err) < 0) {
		t->no_bus = true;
		return -1;
	}
	ksr_atspi_watch_apps(t->a); /* before the first look: nothing is missed */
	appear = ksr_deadline_min(d, appear);
	int rc;
	while ((rc = ksr_atspi_find_app(t->a, pid, hint, d, &t->app, &t->found_by, err)) < 0) {
		if (!ksr_atspi_await_app(t->a, rc, appear)) {
			t->no_bus = rc == -3; /* the registry or the bus was silent, not the app */
			ksr_run_atspi_release(t);
			return -1;
		}
	}
	return 0;
}

int ksr_run_atspi_open(ksr_run *run, ksr_deadline d, ksr_run_atspi *t, ksr_err *err)
{
	return ksr_run_atspi_open_until(run, d, ksr_deadline_in_ms(0), t, err);
}

void ksr_run_atspi_drop(ksr_run *run)
{
	ksr_run_atspi_release(run->atspi_kept);
	free(run->atspi_kept);
	run->atspi_kept = NULL;
}

ksr_run_atspi *ksr_run_atspi_kept(ksr_run *run, ksr_deadline d)
{
	const char *hint = NULL;
	int pid = a11y_pid(run, &hint);
	/* "Could not be had" holds for the process it was asked for: in desktop
	 * mode the next tool is asked again. */
	if (run->atspi_none && run->atspi_none_pid != pid)
		run->atspi_none = false;
	if (run->atspi_kept && run->atspi_kept->app.pid != pid)
		ksr_run_atspi_drop(run);
	if (run->atspi_kept || run->atspi_none)
		return run->atspi_kept;
	run->atspi_none_pid = pid;
	ksr_err err = {0};
	ksr_run_atspi *t = ksr_xmalloc(sizeof *t);
	if (ksr_run_atspi_open(run, d, t, &err) < 0) {
		free(t);
		run->atspi_none = !ksr_cancelled();
		return NULL;
	}
	run->atspi_kept = t;
	return t;
}

static void window_origin(ksr_run *run, ksr_atspi_walk_opts *wo)
{
	const ksr_tool *tool = run->sc && run->sc->desktop ? ksr_tools_a11y(run) : NULL;
	if (tool && tool->window && run->x) {
		ksr_window w = {.id = tool->window};
		ksr_err ignored = {0};
		if (ksr_x11_window_refresh(run->x, &w, &ignored) == 0) {
			wo->have_origin = true;
			wo->origin_x = w.x;
			wo->origin_y = w.y;
		}
		ksr_run_window_release(&w);
		return;
	}
	if (run->have_window && run->x) {
		ksr_err ignored = {0};
		ksr_x11_window_refresh(run->x, &run->window, &ignored);
		wo->have_origin = true;
		wo->origin_x = run->window.x;
		wo->origin_y = run->window.y;
	}
}

/* The window the app (or the step's tool) answers _NET_WM_PING on; 0: none. */
static unsigned long ping_window(ksr_run *run)
{
	const ksr_tool *tool = run->sc && run->sc->desktop ? ksr_tools_a11y(run) : NULL;
	if (tool)
		return tool->window;
	return run->have_window ? run->window.id : 0;
}

/* A walk whose calls went unanswered: when the bus's own dbus-daemon is
 * silent too and the app answers _NET_WM_PING on X (its event loop runs),
 * the session's accessibility stack is at fault, not the app: t->no_bus, so
 * the step or check is test-error backend-unavailable (issue 31). */
static void blame_silent_bus(ksr_run *run, ksr_run_atspi *t, ksr_err *err)
{
	ksr_err bus = {0};
	if (ksr_cancelled() || ksr_atspi_bus_answers(t->a, &bus))
		return;
	unsigned long win = ping_window(run);
	bool takes = false;
	ksr_wait w = win && run->x
	                     ? ksr_x11_ping_wait(run->x, win, ksr_deadline_in_ms(PING_MS), &takes)
	                     : KSR_WAIT_ERROR;
	if (w != KSR_WAIT_READY || !takes)
		return; /* the app did not show it is alive: its silence may be its own */
	char was[KSR_ERR_MSG_MAX];
	snprintf(was, sizeof was, "%s", err->msg);
	char *guess = strstr(was, " (is the app hung?)");
	if (guess)
		*guess = '\0';
	t->no_bus = true;
	ksr_err_set(
	        err,
	        "%.300s, after %.200s, while the app answered _NET_WM_PING on X (window 0x%lx): "
	        "the session's accessibility stack is at fault, not the app",
	        bus.msg, was, win);
}

int ksr_run_atspi_walk(ksr_run *run, ksr_run_atspi *t, int max_nodes, ksr_deadline d,
                       ksr_atspi_tree *tree, ksr_err *err)
{
	ksr_atspi_walk_opts wo = {.max_nodes = max_nodes};
	window_origin(run, &wo);
	int rc = ksr_atspi_walk(t->a, &t->app, &wo, d, tree, err);
	if (rc < 0)
		blame_silent_bus(run, t, err);
	return rc;
}

ksr_atspi_locator ksr_step_locator(const ksr_step *step)
{
	const ksr_locator *l = &step->loc;
	return (ksr_atspi_locator){.name = &step->name,
	                           .role = step->role,
	                           .label = &l->label,
	                           .in = l->in,
	                           .in_name = &l->in_name,
	                           .in_role = l->in_role,
	                           .nth = l->nth,
	                           .hidden_ok = step->hidden_ok};
}

ksr_atspi_locator ksr_check_locator(const ksr_check *c)
{
	const ksr_locator *l = &c->loc;
	return (ksr_atspi_locator){.name = &c->name,
	                           .role = c->role,
	                           .label = &l->label,
	                           .in = l->in,
	                           .in_name = &l->in_name,
	                           .in_role = l->in_role,
	                           .nth = l->nth,
	                           .hidden_ok = c->hidden_ok};
}

/* A name alone: a walk that stops once the control is known (find mode),
 * then the same finder as on a whole tree. Anything more (label:, in:,
 * nth:, no name): a full walk and the locator on it. */
int ksr_run_atspi_locate(ksr_run *run, ksr_run_atspi *t, const ksr_atspi_locator *l, ksr_deadline d,
                         ksr_atspi_tree *tree, ksr_atspi_located *found, ksr_err *err)
{
	*found = (ksr_atspi_located){.index = -1};
	if (!ksr_atspi_locator_simple(l))
		return ksr_run_atspi_walk(run, t, 0, d, tree, err) < 0
		               ? -1
		               : ksr_atspi_locate(t->a, &t->app, tree, l, d, found);
	ksr_atspi_walk_opts wo = {.find_name = l->name, .find_role = l->role};
	window_origin(run, &wo);
	if (ksr_atspi_walk(t->a, &t->app, &wo, d, tree, err) < 0) {
		blame_silent_bus(run, t, err);
		return -1;
	}
	found->index = ksr_atspi_tree_find(tree, l->name, l->role);
	bool shown = found->index >= 0 && ksr_atspi_tree_showing(tree, (size_t)found->index);
	found->matches = shown || (found->index >= 0 && l->hidden_ok) ? 1 : 0;
	found->hidden = found->index >= 0 && !found->matches ? 1 : 0;
	return 0;
}

void ksr_run_atspi_not_found(const ksr_run_atspi *t, const ksr_atspi_tree *tree,
                             const ksr_atspi_locator *l, const ksr_atspi_located *found,
                             const char *what, char *why, size_t len)
{
	const char *app = t->app.name ? t->app.name : "the app";
	char near[400] = "";
	if (ksr_atspi_locator_simple(l) || (l->name && l->name->text && !l->nth))
		ksr_atspi_near_miss_text(tree, l->name, l->role, near, sizeof near);
	if (ksr_atspi_locator_simple(l)) {
		char q[300];
		snprintf(q, sizeof q, l->name->re ? "/%.280s/" : "\"%.280s\"", l->name->text);
		snprintf(why, len,
		         "%s%sno control named %s%s%s%s in %s's accessibility tree (%zu nodes, %d "
		         "calls unanswered)%s",
		         what ? what : "", what ? ": " : "", q, l->role ? " with role \"" : "",
		         l->role ? l->role : "", l->role ? "\"" : "", app, tree->len,
		         tree->unanswered, near);
		return;
	}
	ksr_atspi_locator all = *l;
	all.nth = 0; /* "only 2 controls fit role "text", not 5" */
	char *lt = ksr_atspi_locator_text(l->nth > 0 && found->matches > 0 ? &all : l);
	if (l->nth > 0 && found->matches > 0)
		snprintf(why, len,
		         "%s%sonly %d control%s fit %s in %s's accessibility tree (%zu nodes), "
		         "not %d",
		         what ? what : "", what ? ": " : "", found->matches,
		         found->matches == 1 ? "" : "s", lt, app, tree->len, l->nth);
	else
		snprintf(why, len,
		         "%s%sno control fits %s in %s's accessibility tree (%zu nodes, %d calls "
		         "unanswered)%s",
		         what ? what : "", what ? ": " : "", lt, app, tree->len, tree->unanswered,
		         near);
	free(lt);
}

static ksr_deadline step_deadline(const ksr_run *run, const ksr_step *step)
{
	double s = step->timeout_s > 0 ? step->timeout_s : CLICK_ELEMENT_DEFAULT_S;
	return ksr_deadline_min(run->work, ksr_deadline_in_ms((int64_t)(s * 1000)));
}

static bool ended(ksr_run *run, const ksr_step *step, ksr_wait w, ksr_step_result *res)
{
	if (w != KSR_WAIT_CANCELLED && !ksr_deadline_passed(run->work))
		return false;
	ksr_run_wait_ended_run(run, w == KSR_WAIT_CANCELLED ? w : KSR_WAIT_TIMEOUT, step->pos.line,
	                       step->info->name);
	res->status = KSR_STEP_ERROR;
	return true;
}

static void describe(cJSON *extra, const ksr_atspi_tree *tree, int i, const ksr_run_atspi *t)
{
	const ksr_atspi_node *n = &tree->nodes[i];
	cJSON_DeleteItemFromObject(extra, "element"); /* an earlier attempt's hidden match */
	cJSON *el = cJSON_AddObjectToObject(extra, "element");
	cJSON_AddStringToObject(el, "role", n->role ? n->role : "");
	char *dn = ksr_atspi_name_display(n->name);
	cJSON_AddStringToObject(el, "name", dn ? dn : "");
	free(dn);
	char *path = ksr_atspi_node_path(tree, (size_t)i);
	cJSON_AddStringToObject(el, "path", path);
	free(path);
	cJSON_AddStringToObject(el, "app", t->app.name ? t->app.name : "");
	cJSON_AddNumberToObject(el, "pid", t->app.pid);
	cJSON_AddBoolToObject(el, "showing", ksr_atspi_tree_showing(tree, (size_t)i));
}

/* Why a control found but not showing is not acted on or counted. */
static void not_showing(char *why, size_t len, const char *what, const ksr_atspi_tree *tree, int i)
{
	const ksr_atspi_node *n = &tree->nodes[i];
	char *dn = ksr_atspi_name_display(n->name); /* names tidied wherever they are printed */
	snprintf(why, len,
	         "%s: the %s \"%s\" is not showing (hidden, as in a closed menu or another "
	         "page: no person could reach it; hidden_ok: true on the step allows it)",
	         what, n->role ? n->role : "control", dn ? dn : "");
	free(dn);
}

/* Wait (through the deadline API) until ACTION_SPACING_MS after the last action. */
static ksr_wait space_actions(ksr_run *run, ksr_deadline d)
{
	int64_t next = run->atspi_last_action_ms + ACTION_SPACING_MS;
	if (run->atspi_last_action_ms <= 0 || ksr_now_ms() >= next)
		return KSR_WAIT_TIMEOUT;
	ksr_deadline until = {.at_ms = next};
	return ksr_sleep_until(ksr_deadline_min(d, until));
}

/* Poll the node's toggle states until they differ from before; true when seen. */
static bool saw_change(ksr_run_atspi *t, const char *path, uint64_t before, ksr_deadline d,
                       uint64_t *after)
{
	ksr_deadline until = ksr_deadline_min(d, ksr_deadline_in_ms(CONFIRM_MS));
	for (;;) {
		ksr_err e = {0};
		uint64_t now = before;
		if (ksr_atspi_node_states(t->a, &t->app, path, d, &now, NULL, &e) == 0) {
			*after = now;
			if ((now & TOGGLE_STATES) != (before & TOGGLE_STATES))
				return true;
		}
		if (ksr_sleep_until(ksr_deadline_min(until, ksr_deadline_in_ms(50))) ==
		            KSR_WAIT_CANCELLED ||
		    ksr_deadline_passed(until))
			return false;
	}
}

static bool is_toggle(const ksr_atspi_node *n)
{
	static const char *const roles[] = {"check box",       "toggle button",   "radio button",
	                                    "check menu item", "radio menu item", "switch"};
	for (size_t i = 0; i < sizeof roles / sizeof *roles; i++)
		if (ksr_atspi_role_equal(roles[i], n->role))
			return true;
	return (n->states & (1ull << 41)) != 0; /* checkable */
}

static void act(ksr_run *run, const ksr_step *step, ksr_run_atspi *t, const ksr_atspi_node *n,
                int action, ksr_deadline d, ksr_step_result *res)
{
	cJSON_AddStringToObject(res->extra, "action", n->actions[action]);
	bool toggle = is_toggle(n);
	uint64_t before = n->states, after = n->states;
	for (int attempt = 0; attempt < 2; attempt++) {
		if (ended(run, step, space_actions(run, d), res))
			return;
		ksr_err e = {0};
		int rc = ksr_atspi_do_action(t->a, &t->app, n->path, action, d, &e);
		run->atspi_last_action_ms = ksr_now_ms();
		if (rc < 0) {
			ksr_step_fail(res, KSR_STEP_FAILED, KSR_OUTCOME_STEP_FAILED,
			              "click_element: %s", e.msg);
			return;
		}
		if (!toggle) {
			cJSON_AddStringToObject(res->extra, "state_change", "not observable");
			return;
		}
		if (saw_change(t, n->path, before, d, &after)) {
			cJSON_AddStringToObject(res->extra, "state_change", "confirmed");
			cJSON_AddNumberToObject(res->extra, "attempts", attempt + 1);
			return;
		}
		/* A toolkit that dropped the action (GTK4 within ~250 ms of the last one):
		 * one retry after a pause. The state is re-read first, so a late change
		 * is not undone. */
		if (attempt == 0 &&
		    ksr_sleep_until(ksr_deadline_min(d, ksr_deadline_in_ms(RETRY_WAIT_MS))) ==
		            KSR_WAIT_CANCELLED)
			break;
		if (attempt == 0 && saw_change(t, n->path, before, ksr_deadline_in_ms(1), &after)) {
			cJSON_AddStringToObject(res->extra, "state_change", "confirmed");
			return;
		}
	}
	if (ksr_cancelled() && ended(run, step, KSR_WAIT_CANCELLED, res))
		return;
	cJSON_AddStringToObject(res->extra, "state_change", "unconfirmed");
	char *dn = ksr_atspi_name_display(n->name);
	ksr_run_concern(run, KSR_CONCERN_UNVERIFIED_CLICK, step->pos.line,
	                "click_element %s: the control's state did not change after two attempts",
	                dn && *dn ? dn : "(unnamed)");
	free(dn);
}

/* A control with no action is clicked at its extents' centre, through XTest
 * like any pointer step: made ready first (the top-level there viewable, its
 * app answering, quiet), since the runner's ready phase cannot know the point. */
static void click_at_extents(ksr_run *run, const ksr_step *step, const ksr_atspi_node *n,
                             ksr_step_result *res)
{
	int px = n->x + n->w / 2, py = n->y + n->h / 2;
	res->has_pixel = true;
	res->px = px, res->py = py;
	cJSON_AddStringToObject(res->extra, "backend", "xtest");
	unsigned long app = run->sc->desktop || !run->have_window ? 0 : run->window.id;
	if (!ksr_step_ready_at(run, step, app, px, py, res))
		return; /* res says which condition never held */
	ksr_err e = {0};
	if (ksr_x11_click(run->x, px, py, 1, 1, &e) < 0)
		ksr_step_fail(res, KSR_STEP_ERROR, KSR_OUTCOME_STEP_FAILED,
		              "click_element: the XTest click failed: %s", e.msg);
}

/* Walk until the control shows up or the deadline passes; its index or -1. */
static int find(ksr_run *run, const ksr_step *step, ksr_run_atspi *t, ksr_deadline d,
                ksr_atspi_tree *tree, ksr_step_result *res)
{
	bool seen_hidden = false;
	ksr_atspi_locator loc = ksr_step_locator(step);
	for (;;) {
		ksr_err e = {0};
		ksr_deadline wd = ksr_deadline_min(d, ksr_deadline_in_ms(WALK_MS));
		ksr_atspi_located found;
		int rc = ksr_run_atspi_locate(run, t, &loc, wd, tree, &found, &e);
		int i = rc < 0 ? -2 : found.index;
		/* A last walk the deadline cut short does not unsay "not showing". */
		bool cut_short = tree->truncated || ksr_deadline_passed(d);
		bool shown = i >= 0 && found.matches > 0;
		if (shown) {
			res->reason[0] = '\0'; /* an earlier attempt's "not found" is moot */
			return i;
		}
		if (i >= 0) {
			/* Waited for: a menu being opened or a page turning shows it. */
			not_showing(res->reason, sizeof res->reason, step->info->name, tree, i);
			describe(res->extra, tree, i, t);
			seen_hidden = true;
		} else if (seen_hidden && cut_short) {
			/* keep the reason */
		} else if (i == -1) {
			ksr_run_atspi_not_found(t, tree, &loc, &found, NULL, res->reason,
			                        sizeof res->reason);
		} else if (t->no_bus) {
			ksr_step_fail(res, KSR_STEP_ERROR, KSR_OUTCOME_BACKEND_UNAVAILABLE,
			              "%s: %.480s", step->info->name, e.msg);
			return -1;
		} else {
			snprintf(res->reason, sizeof res->reason, "click_element: %.480s", e.msg);
		}
		ksr_atspi_tree_clear(tree);
		ksr_wait w =
		        ksr_sleep_until(ksr_deadline_min(d, ksr_deadline_in_ms(FIND_RETRY_MS)));
		if (ended(run, step, w, res))
			return -1;
		if (ksr_deadline_passed(d)) {
			res->status = KSR_STEP_FAILED;
			res->outcome = KSR_OUTCOME_STEP_FAILED;
			return -1;
		}
	}
}

/* The bus and the run's app for a step; false: res says why (no bus is the
 * setup's, an app that never registers the app's). */
static bool open_for(ksr_run *run, const ksr_step *step, ksr_deadline d, ksr_run_atspi *t,
                     ksr_step_result *res)
{
	ksr_err e = {0};
	if (ksr_run_atspi_open(run, d, t, &e) == 0)
		return true;
	if (!ended(run, step, ksr_cancelled() ? KSR_WAIT_CANCELLED : KSR_WAIT_TIMEOUT, res))
		ksr_step_fail(res, t->no_bus ? KSR_STEP_ERROR : KSR_STEP_FAILED,
		              t->no_bus ? KSR_OUTCOME_BACKEND_UNAVAILABLE : KSR_OUTCOME_STEP_FAILED,
		              "%s: %s", step->info->name, e.msg);
	return false;
}

void ksr_exec_click_element(ksr_run *run, const ksr_step *step, const ksr_step_target *tgt,
                            ksr_step_result *res)
{
	(void)tgt;
	ksr_deadline d = step_deadline(run, step);
	ksr_run_atspi t;
	ksr_atspi_tree tree = {0};
	res->rung = "element";
	res->extra = cJSON_CreateObject();
	if (!open_for(run, step, d, &t, res))
		return;
	int i = find(run, step, &t, d, &tree, res);
	if (i >= 0) {
		const ksr_atspi_node *n = &tree.nodes[i];
		describe(res->extra, &tree, i, &t);
		if (run->have_window) {
			res->has_window = true;
			res->win_x = run->window.x, res->win_y = run->window.y;
			res->win_w = run->window.w, res->win_h = run->window.h;
		}
		int action = ksr_atspi_pick_action(n);
		if (action >= 0)
			act(run, step, &t, n, action, d, res);
		else if (n->has_extents)
			click_at_extents(run, step, n, res);
		else {
			char *dn = ksr_atspi_name_display(n->name);
			ksr_step_fail(res, KSR_STEP_FAILED, KSR_OUTCOME_STEP_FAILED,
			              "click_element: the %s \"%s\" offers neither an action nor "
			              "a screen position",
			              n->role ? n->role : "control", dn ? dn : "");
			free(dn);
		}
		/* Acted: the runner settles, looks for the effect and takes the shots. */
		res->acted = res->status == KSR_STEP_OK;
	}
	ksr_atspi_tree_clear(&tree);
	ksr_run_atspi_release(&t);
}

bool ksr_atspi_step_point(ksr_run *run, const ksr_step *step, int *px, int *py,
                          ksr_step_result *res)
{
	ksr_deadline d = step_deadline(run, step);
	ksr_run_atspi t;
	ksr_atspi_tree tree = {0};
	bool found = false;
	if (!res->extra)
		res->extra = cJSON_CreateObject();
	if (!open_for(run, step, d, &t, res))
		return false;
	int i = find(run, step, &t, d, &tree, res);
	if (i >= 0 && tree.nodes[i].has_extents) {
		const ksr_atspi_node *n = &tree.nodes[i];
		describe(res->extra, &tree, i, &t);
		*px = n->x + n->w / 2, *py = n->y + n->h / 2;
		found = true;
	} else if (i >= 0) {
		char *dn = ksr_atspi_name_display(tree.nodes[i].name);
		ksr_step_fail(res, KSR_STEP_FAILED, KSR_OUTCOME_STEP_FAILED,
		              "%s: the %s \"%s\" has no screen position", step->info->name,
		              tree.nodes[i].role ? tree.nodes[i].role : "control", dn ? dn : "");
		free(dn);
	}
	ksr_atspi_tree_clear(&tree);
	ksr_run_atspi_release(&t);
	return found;
}

/* ---- checks ---- */

static ksr_deadline check_deadline(ksr_run *run, const ksr_check *c)
{
	int64_t ms = c->timeout_s > 0 ? (int64_t)(c->timeout_s * 1000) : WALK_MS;
	return ksr_deadline_min(run->work, ksr_deadline_in_ms(ms < WALK_MS ? ms : WALK_MS));
}

/* A check that asks whether a control is showing or visible is answered
 * for a hidden one too; any other needs it showing unless hidden_ok. */
static bool hidden_counts(const ksr_check *c)
{
	if (c->hidden_ok)
		return true;
	int bit = c->state ? ksr_atspi_state_index(c->state) : -1;
	return bit >= 0 &&
	       (bit == ksr_atspi_state_index("showing") || bit == ksr_atspi_state_index("visible"));
}

/* Find the control for a check: 1 found (*idx), 0 not (yet), -1 no bus. */
static int check_find(ksr_run *run, const ksr_check *c, ksr_run_atspi *t, ksr_atspi_tree *tree,
                      int *idx, char *why, size_t len)
{
	ksr_err e = {0};
	ksr_deadline d = check_deadline(run, c);
	if (ksr_run_atspi_open(run, d, t, &e) < 0) {
		snprintf(why, len, "%s", e.msg);
		return t->no_bus ? -1 : 0;
	}
	ksr_atspi_locator loc = ksr_check_locator(c);
	loc.hidden_ok = hidden_counts(c);
	ksr_atspi_located found;
	if (ksr_run_atspi_locate(run, t, &loc, d, tree, &found, &e) < 0) {
		snprintf(why, len, "%s", e.msg);
		return t->no_bus ? -1 : 0;
	}
	*idx = found.index;
	if (*idx < 0) {
		ksr_run_atspi_not_found(t, tree, &loc, &found, NULL, why, len);
		return 0;
	}
	if (!hidden_counts(c) && !ksr_atspi_tree_showing(tree, (size_t)*idx)) {
		not_showing(why, len, c->info->name, tree, *idx);
		return 0;
	}
	return 1;
}

int ksr_check_element(ksr_run *run, const ksr_check *c, char *why, size_t len)
{
	ksr_run_atspi t = {0};
	ksr_atspi_tree tree = {0};
	int i = -1;
	int r = check_find(run, c, &t, &tree, &i, why, len);
	if (r > 0) {
		char *dn = ksr_atspi_name_display(tree.nodes[i].name);
		snprintf(why, len, "%s \"%s\" exists",
		         tree.nodes[i].role ? tree.nodes[i].role : "control", dn ? dn : "");
		free(dn);
	}
	ksr_atspi_tree_clear(&tree);
	ksr_run_atspi_release(&t);
	return r;
}

int ksr_check_state(ksr_run *run, const ksr_check *c, char *why, size_t len)
{
	int bit = ksr_atspi_state_index(c->state);
	if (bit < 0) {
		snprintf(why, len, "unknown accessibility state \"%s\"", c->state ? c->state : "");
		return -1;
	}
	ksr_run_atspi t = {0};
	ksr_atspi_tree tree = {0};
	int i = -1;
	int r = check_find(run, c, &t, &tree, &i, why, len);
	if (r > 0) {
		bool has = (tree.nodes[i].states >> bit) & 1;
		char *dn = ksr_atspi_name_display(tree.nodes[i].name);
		snprintf(why, len, "%s \"%s\" is %s%s",
		         tree.nodes[i].role ? tree.nodes[i].role : "control", dn ? dn : "",
		         has ? "" : "not ", ksr_atspi_state_name(bit));
		free(dn);
		r = has;
	}
	ksr_atspi_tree_clear(&tree);
	ksr_run_atspi_release(&t);
	return r;
}

/* no_element: holds once nothing fits the locator (a hidden control does
 * not count unless hidden_ok); polled by ksr_run_check until its timeout, so
 * it waits for the control to go. A walk cut short cannot say "absent". */
int ksr_check_no_element(ksr_run *run, const ksr_check *c, char *why, size_t len)
{
	ksr_run_atspi t = {0};
	ksr_atspi_tree tree = {0};
	ksr_err e = {0};
	ksr_deadline d = check_deadline(run, c);
	if (ksr_run_atspi_open(run, d, &t, &e) < 0) {
		snprintf(why, len, "%s", e.msg);
		return t.no_bus ? -1 : 0;
	}
	ksr_atspi_locator loc = ksr_check_locator(c);
	ksr_atspi_located found;
	int r = 0;
	char *lt = ksr_atspi_locator_text(&loc);
	if (ksr_run_atspi_locate(run, &t, &loc, d, &tree, &found, &e) < 0) {
		snprintf(why, len, "%s", e.msg);
		r = t.no_bus ? -1 : 0;
	} else if (found.matches > 0) {
		const ksr_atspi_node *n = &tree.nodes[found.index];
		char *dn = ksr_atspi_name_display(n->name);
		snprintf(why, len, "the %s \"%s\" (%s) is still there%s",
		         n->role ? n->role : "control", dn ? dn : "", lt,
		         found.matches > 1 ? ", and others that fit" : "");
		free(dn);
	} else if (tree.truncated) {
		snprintf(why, len,
		         "the walk of %s's accessibility tree was cut (%s) before it saw all of "
		         "it: no control fits %s in the %zu nodes seen",
		         t.app.name ? t.app.name : "the app", tree.cut_by ? tree.cut_by : "?", lt,
		         tree.len);
	} else {
		snprintf(why, len, "no control fits %s in %s's accessibility tree (%zu nodes%s)",
		         lt, t.app.name ? t.app.name : "the app", tree.len,
		         found.hidden ? "; hidden ones do not count" : "");
		r = 1;
	}
	free(lt);
	ksr_atspi_tree_clear(&tree);
	ksr_run_atspi_release(&t);
	return r;
}
