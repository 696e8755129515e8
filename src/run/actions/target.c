/* The runner's first two phases for the rows whose target is a window or a
 * point of one (ksr/vocabulary.def): resolve which window the input goes to,
 * then make it ready: activate it, read its geometry at that moment (a moved
 * or resized window still gets the right pixel) and work out the pixel. */
#include "ksr/keys.h"
#include "run/actions/exec.h"
#include "run/actions/exec_atspi.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TARGET_WAIT_DEFAULT_S 10 /* target: window "RE" may take this long to appear */
#define ACTIVATE_MS           1000
#define READY_DEFAULT_S       10   /* viewable, answering, uncovered: without timeout_s */
#define QUIET_BOUND_MS        1000 /* still repainting after this (without timeout_s): act */

bool ksr_step_run_ended(ksr_run *run, const ksr_step *step, ksr_wait w, ksr_step_result *res)
{
	if (!ksr_run_wait_ended_run(run, w, step->pos.line, step->info->name))
		return false;
	res->status = KSR_STEP_ERROR;
	return true;
}

/* ---- resolve: which window ---------------------------------------------------- */

/* target: window "RE": the first mapped window whose title matches, awaited
 * through X events up to the step's timeout (a dialog may still be opening). */
static bool wait_target(ksr_run *run, const ksr_step *step, ksr_window *out, ksr_step_result *res)
{
	double s = step->timeout_s > 0 ? step->timeout_s : TARGET_WAIT_DEFAULT_S;
	ksr_deadline d = ksr_deadline_min(run->work, ksr_deadline_in_ms((int64_t)(s * 1000)));
	for (;;) {
		if (ksr_run_find_window(run, step->target_window, NULL, out))
			return true;
		ksr_wait w = ksr_x11_wait_change(run->x, d);
		if (w == KSR_WAIT_READY)
			continue;
		if (ksr_step_run_ended(run, step, w, res))
			return false;
		if (ksr_run_find_window(run, step->target_window, NULL, out))
			return true; /* one last look: it may have come with the last event */
		if (w == KSR_WAIT_ERROR)
			ksr_step_fail(res, KSR_STEP_ERROR, KSR_OUTCOME_NO_DISPLAY,
			              "the X display connection was lost");
		else
			ksr_step_fail(res, KSR_STEP_FAILED, KSR_OUTCOME_STEP_FAILED,
			              "no window matching %s appeared within %g s",
			              ksr_pattern_source(step->target_window), s);
		return false;
	}
}

/* The app's window; when it is gone, a window matching the scenario's window:
 * (the app may have replaced it: a splash, then the main window), which later
 * steps then follow too. */
/* A dialog the app has open over its window: transient for it, or a dialog
 * of the app's own process. Input goes where it will land: to that dialog
 * (the newest when there are several), never to the window it blocks, whose
 * focus a toolkit may drop and a forced activation would take from the
 * dialog. true with *out replaced by a copy of the dialog. */
static bool open_dialog(ksr_run *run, ksr_window *out, ksr_step_result *res)
{
	ksr_window_list wins = {0};
	ksr_err err = {0};
	const ksr_window *found = NULL;
	if (ksr_x11_list_windows(run->x, &wins, &err) < 0)
		return false;
	for (size_t i = 0; i < wins.len; i++) {
		const ksr_window *w = &wins.items[i];
		if (w->id == out->id)
			continue;
		if (w->transient_for == out->id || (w->is_dialog && out->pid && w->pid == out->pid))
			found = w;
	}
	if (found) {
		char main_id[32];
		snprintf(main_id, sizeof main_id, "0x%lx", out->id);
		cJSON_AddStringToObject(ksr_step_extra(res), "dialog_of", main_id);
		ksr_run_window_release(out);
		*out = *found;
		out->title = ksr_xstrdup(found->title);
		out->res_name = ksr_xstrdup(found->res_name);
		out->res_class = ksr_xstrdup(found->res_class);
	}
	ksr_window_list_clear(&wins);
	return found != NULL;
}

static bool app_window(ksr_run *run, ksr_window *out, ksr_step_result *res)
{
	ksr_err err = {0};
	out->id = run->window.id;
	if (run->have_window && ksr_x11_window_refresh(run->x, out, &err) == 0) {
		open_dialog(run, out, res);
		return true;
	}
	bool by_pattern = run->sc->window || run->sc->window_class;
	if (run->have_window && by_pattern &&
	    ksr_run_find_window(run, run->sc->window, run->sc->window_class, out)) {
		ksr_run_window_release(&run->window);
		run->window = *out;
		run->window.title = ksr_xstrdup(out->title);
		run->window.res_name = ksr_xstrdup(out->res_name);
		run->window.res_class = ksr_xstrdup(out->res_class);
		ksr_run_rewatch_window(run);
		return true;
	}
	ksr_step_fail(res, KSR_STEP_FAILED, KSR_OUTCOME_WINDOW_LOST,
	              "the app's window (0x%lx) is gone", run->window.id);
	return false;
}

/* Desktop mode: the most recently spawned tool's window, or with none, the
 * screen itself (id 0: fractions of the screen, no activation). */
static bool tool_window(ksr_run *run, ksr_window *out, ksr_step_result *res)
{
	ksr_err err = {0};
	out->id = ksr_tools_current_window(run);
	if (!out->id) {
		ksr_x11_screen_size(run->x, &out->w, &out->h);
		return true;
	}
	if (ksr_x11_window_refresh(run->x, out, &err) == 0)
		return true;
	ksr_step_fail(res, KSR_STEP_FAILED, KSR_OUTCOME_WINDOW_LOST,
	              "the spawned tool's window (0x%lx) is gone", out->id);
	return false;
}

static bool resolve_window(ksr_run *run, const ksr_step *step, ksr_window *w, ksr_step_result *res)
{
	if (step->target_window)
		return wait_target(run, step, w, res);
	return run->sc->desktop ? tool_window(run, w, res) : app_window(run, w, res);
}

/* Activate the window and confirm focus. Not obtaining it does not fail the
 * step by itself (a click still lands by position; the step's checks decide
 * whether input arrived), but the step row says so. */
static bool activate(ksr_run *run, const ksr_step *step, const ksr_window *w, ksr_step_result *res)
{
	ksr_err err = {0};
	ksr_deadline d = ksr_deadline_min(run->work, ksr_deadline_in_ms(ACTIVATE_MS));
	if (ksr_x11_activate(run->x, w->id, d, &err) == 0) {
		cJSON_AddStringToObject(ksr_step_extra(res), "focus", "obtained");
		return true;
	}
	if (ksr_cancelled() || ksr_deadline_passed(run->work))
		return !ksr_step_run_ended(
		        run, step, ksr_cancelled() ? KSR_WAIT_CANCELLED : KSR_WAIT_TIMEOUT, res);
	char note[KSR_ERR_MSG_MAX + 32];
	snprintf(note, sizeof note, "not obtained: %s", err.msg);
	cJSON_AddStringToObject(ksr_step_extra(res), "focus", note);
	return true;
}

static void record_window(const ksr_window *w, ksr_step_result *res)
{
	res->has_window = true;
	res->win_x = w->x, res->win_y = w->y;
	res->win_w = w->w, res->win_h = w->h;
	if (!w->id)
		return;
	char id[32];
	snprintf(id, sizeof id, "0x%lx", w->id);
	cJSON_AddStringToObject(ksr_step_extra(res), "window_id", id);
	cJSON_AddStringToObject(ksr_step_extra(res), "window_title", w->title ? w->title : "");
}

bool ksr_step_resolve(ksr_run *run, const ksr_step *step, ksr_step_target *t, ksr_step_result *res)
{
	if (!resolve_window(run, step, &t->win, res))
		return false;
	ksr_err err = {0};
	if (t->win.id) /* from now on its repaints are known (ksr_x11_quiet_wait) */
		ksr_x11_damage_track(run->x, t->win.id, &err);
	return true;
}

/* ---- ready: activated, geometry now, the pixel ---------------------------------- */

static const char *rung_word(ksr_point_kind k)
{
	return k == KSR_POINT_CENTER ? "center" : k == KSR_POINT_DECLARED ? "declared" : "literal";
}

/* Fractions of the client area, rounded, kept inside it. */
static int fraction_to_pixel(int origin, int size, double f)
{
	long p = origin + lround(f * size);
	long last = origin + (size > 0 ? size - 1 : 0);
	return (int)(p < origin ? origin : p > last ? last : p);
}

/* A point form (click, scroll, hover's point): the pixel of the step's
 * fractions in the window as it is now. */
static void resolve_point(const ksr_step *step, ksr_step_target *t, ksr_step_result *res)
{
	if (step->info->kind == KSR_KIND_HOVER && step->hover.via != KSR_HOVER_POINT)
		return; /* hover's element and page forms find their point when acting */
	res->rung = rung_word(step->point.kind);
	t->px = res->px = fraction_to_pixel(t->win.x, t->win.w, step->point.fx);
	t->py = res->py = fraction_to_pixel(t->win.y, t->win.h, step->point.fy);
	t->has_point = res->has_pixel = true;
	if (step->point.declared)
		cJSON_AddStringToObject(ksr_step_extra(res), "target", step->point.declared->name);
	if (step->info->shape == KSR_SHAPE_DRAG) { /* to: in the same window, now */
		t->to_x = fraction_to_pixel(t->win.x, t->win.w, step->drag_to.fx);
		t->to_y = fraction_to_pixel(t->win.y, t->win.h, step->drag_to.fy);
	}
}

/* ---- ready: viewable, answering, uncovered, quiet ------------------------------- */

double ksr_step_quiet_ms(const ksr_run *run, const ksr_step *step)
{
	return step->ready_quiet_set ? step->ready_quiet_ms : run->sc->ready_quiet_ms;
}

static ksr_deadline bound(const ksr_run *run, const ksr_step *step, int64_t dflt_ms)
{
	int64_t ms = step->timeout_s > 0 ? (int64_t)(step->timeout_s * 1000) : dflt_ms;
	return ksr_deadline_min(run->work, ksr_deadline_in_ms(ms));
}

static double bound_s(const ksr_step *step, int64_t dflt_ms)
{
	return step->timeout_s > 0 ? step->timeout_s : (double)dflt_ms / 1000;
}

/* A condition that never held: the step fails and the row's ready.never says which. */
static bool not_ready(cJSON *rd, const char *never)
{
	cJSON_AddStringToObject(rd, "never", never);
	return false;
}

/* The run ended, the display went, or the condition timed out: false with res set. */
static bool wait_failed(ksr_run *run, const ksr_step *step, ksr_wait w, ksr_step_result *res)
{
	if (ksr_step_run_ended(run, step, w, res))
		return true;
	if (w == KSR_WAIT_ERROR) {
		ksr_step_fail(res, KSR_STEP_ERROR, KSR_OUTCOME_NO_DISPLAY,
		              "the X display connection was lost");
		return true;
	}
	return false;
}

static bool wait_viewable(ksr_run *run, const ksr_step *step, unsigned long id, ksr_deadline d,
                          cJSON *rd, ksr_step_result *res)
{
	for (;;) {
		int v = ksr_x11_window_viewable(run->x, id);
		if (v > 0)
			return true;
		if (v < 0 && ksr_x11_alive(run->x)) {
			ksr_step_fail(res, KSR_STEP_FAILED, KSR_OUTCOME_WINDOW_LOST,
			              "the window 0x%lx went away before the input", id);
			return not_ready(rd, "viewable");
		}
		ksr_wait w = ksr_x11_wait_stacking(run->x, d);
		if (w == KSR_WAIT_READY)
			continue;
		if (!wait_failed(run, step, w, res))
			ksr_step_fail(res, KSR_STEP_FAILED, KSR_OUTCOME_STEP_FAILED,
			              "not ready: the window 0x%lx stayed unmapped for %g s", id,
			              bound_s(step, READY_DEFAULT_S * 1000));
		return not_ready(rd, "viewable");
	}
}

/* The app's event loop runs: it answers the window's _NET_WM_PING (a
 * stopped or hung app would take the input and never act on it). */
static bool wait_answering(ksr_run *run, const ksr_step *step, unsigned long id, ksr_deadline d,
                           cJSON *rd, ksr_step_result *res)
{
	bool takes = false;
	ksr_wait w = ksr_x11_ping_wait(run->x, id, d, &takes);
	cJSON_AddStringToObject(rd, "answering",
	                        !takes                ? "no pings"
	                        : w == KSR_WAIT_READY ? "yes"
	                                              : "no");
	if (w == KSR_WAIT_READY)
		return true;
	if (!wait_failed(run, step, w, res))
		ksr_step_fail(res, KSR_STEP_FAILED, KSR_OUTCOME_STEP_FAILED,
		              "not ready: the app did not answer a _NET_WM_PING on window 0x%lx "
		              "for %g s (stopped or hung)",
		              id, bound_s(step, READY_DEFAULT_S * 1000));
	return not_ready(rd, "answering");
}

static bool wait_uncovered(ksr_run *run, const ksr_step *step, unsigned long id, int px, int py,
                           ksr_deadline d, cJSON *rd, ksr_step_result *res)
{
	unsigned long by = 0;
	for (;;) {
		int c = ksr_x11_point_covered(run->x, id, px, py, &by);
		if (c == 0)
			return true;
		if (c > 0) {
			ksr_wait w = ksr_x11_wait_stacking(run->x, d);
			if (w == KSR_WAIT_READY)
				continue;
			if (wait_failed(run, step, w, res))
				return not_ready(rd, "uncovered");
		}
		ksr_err err = {0};
		ksr_window cover = {.id = by};
		ksr_x11_window_refresh(run->x, &cover, &err);
		if (c < 0)
			ksr_step_fail(res, KSR_STEP_FAILED, KSR_OUTCOME_WINDOW_LOST,
			              "the window 0x%lx went away before the input", id);
		else
			ksr_step_fail(
			        res, KSR_STEP_FAILED, KSR_OUTCOME_STEP_FAILED,
			        "not ready: the point (%d, %d) stayed covered by window 0x%lx "
			        "(\"%.100s\") for %g s",
			        px, py, by, cover.title ? cover.title : "",
			        bound_s(step, READY_DEFAULT_S * 1000));
		ksr_run_window_release(&cover);
		return not_ready(rd, "uncovered");
	}
}

/* No repaint for the quiet interval. An app that never stops (a clock, an
 * animation) is acted on when the bound runs out, with a note: never a hang,
 * never a failure by itself. */
static bool wait_quiet(ksr_run *run, const ksr_step *step, unsigned long id, cJSON *rd,
                       ksr_step_result *res)
{
	double q = ksr_step_quiet_ms(run, step);
	cJSON_AddNumberToObject(rd, "quiet_ms", q);
	if (q <= 0)
		return true;
	ksr_x11_quiet spec = {.quiet_ms = (int)q};
	int64_t waited = 0;
	ksr_wait w = ksr_x11_quiet_wait(run->x, &id, 1, &spec, bound(run, step, QUIET_BOUND_MS),
	                                &waited);
	cJSON_AddNumberToObject(rd, "quiet_waited_ms", (double)waited);
	if (w == KSR_WAIT_READY)
		return true;
	if (w == KSR_WAIT_ERROR && ksr_x11_alive(run->x)) {
		cJSON_AddStringToObject(rd, "note", "no DAMAGE extension: repaints not waited for");
		return true;
	}
	if (wait_failed(run, step, w, res))
		return false;
	char note[160];
	snprintf(note, sizeof note, "the window kept repainting for %lld ms; acted anyway",
	         (long long)waited);
	cJSON_AddBoolToObject(rd, "repainting", true);
	cJSON_AddStringToObject(rd, "note", note);
	return true;
}

static void record_control(cJSON *rd, const ksr_atspi_control *c, bool sensitive, bool showing)
{
	cJSON_DeleteItemFromObjectCaseSensitive(rd, "control");
	cJSON *o = cJSON_AddObjectToObject(rd, "control");
	cJSON_AddStringToObject(o, "name", c->name ? c->name : "");
	cJSON_AddStringToObject(o, "role", c->role ? c->role : "");
	cJSON_AddBoolToObject(o, "sensitive", sensitive);
	cJSON_AddBoolToObject(o, "showing", showing);
}

static void control_never(const ksr_step *step, const ksr_atspi_control *c, bool sensitive,
                          ksr_step_result *res)
{
	ksr_step_fail(res, KSR_STEP_FAILED, KSR_OUTCOME_STEP_FAILED,
	              "not ready: the %s \"%.100s\" under the point stayed %s for %g s",
	              c->role && *c->role ? c->role : "control", c->name ? c->name : "",
	              !sensitive ? "insensitive" : "not showing",
	              bound_s(step, READY_DEFAULT_S * 1000));
}

/* Where the app is on the accessibility bus, the control a pointer action
 * at the point would reach is sensitive and showing: a dialog's button that
 * is enabled only once a field has text is waited for. A change of its
 * state repaints the window, so each repaint is the moment to ask again;
 * no control there (or no bus) claims nothing. */
static bool wait_control(ksr_run *run, const ksr_step *step, const ksr_window *w, int px, int py,
                         ksr_deadline d, cJSON *rd, ksr_step_result *res)
{
	if (!run->sc->atspi || ksr_step_quiet_ms(run, step) <= 0 || !w->title)
		return true;
	ksr_run_atspi *t = ksr_run_atspi_kept(run, d);
	if (!t)
		return true;
	bool window_coords = ksr_atspi_app_window_coords(&t->app);
	ksr_atspi_at at = {.x = px,
	                   .y = py,
	                   .window_title = w->title,
	                   .window_coords = window_coords,
	                   .origin_x = w->x,
	                   .origin_y = w->y};
	for (;;) {
		int64_t asked = ksr_now_ms();
		ksr_atspi_control c = {0};
		ksr_err err = {0};
		if (ksr_atspi_control_at(t->a, &t->app, &at, d, &c, &err) <= 0)
			return true; /* nothing there to wait for (an unanswered call claims
			                nothing) */
		bool sensitive, showing;
		bool ok = ksr_atspi_control_ready(&c, window_coords, &sensitive, &showing);
		record_control(rd, &c, sensitive, showing);
		if (ok) {
			ksr_atspi_control_clear(&c);
			return true;
		}
		ksr_wait wt = ksr_x11_damage_wait(run->x, w->id, asked, d);
		if (wt != KSR_WAIT_READY && !wait_failed(run, step, wt, res))
			control_never(step, &c, sensitive, res);
		ksr_atspi_control_clear(&c);
		if (wt != KSR_WAIT_READY)
			return not_ready(rd, "control");
	}
}

/* A key step that presses Return (or Enter) with no modifier activates the
 * window's default button: a dialog's Save that is greyed while the folder
 * a typed path names loads takes nothing. */
static bool presses_return(const ksr_step *step)
{
	if (step->info->kind != KSR_KIND_KEY || !step->text)
		return false;
	ksr_chord *chords = NULL;
	size_t n = 0;
	ksr_err err = {0};
	bool yes = false;
	if (ksr_keys_parse(step->text, &chords, &n, &err) < 0)
		return false;
	for (size_t i = 0; i < n && !yes; i++)
		yes = chords[i].n == 1 && (chords[i].keysyms[0] == ksr_keys_lookup("Return") ||
		                           chords[i].keysyms[0] == ksr_keys_lookup("KP_Enter"));
	ksr_keys_free(chords);
	return yes;
}

static void default_never(const ksr_step *step, const ksr_atspi_control *c, bool sensitive,
                          ksr_step_result *res)
{
	ksr_step_fail(res, KSR_STEP_FAILED, KSR_OUTCOME_STEP_FAILED,
	              "not ready: the window's default %s \"%.100s\" (what Return activates) "
	              "stayed %s for %g s",
	              c->role && *c->role ? c->role : "control", c->name ? c->name : "",
	              !sensitive ? "insensitive" : "not showing",
	              bound_s(step, READY_DEFAULT_S * 1000));
}

/* Where the app is on the accessibility bus, Return waits until the window's
 * default button is sensitive, asked again on each repaint as a pointer
 * action's control is; a window with none claims nothing. */
static bool wait_default(ksr_run *run, const ksr_step *step, const ksr_window *w, ksr_deadline d,
                         cJSON *rd, ksr_step_result *res)
{
	if (!run->sc->atspi || ksr_step_quiet_ms(run, step) <= 0 || !w->title ||
	    !presses_return(step))
		return true;
	ksr_run_atspi *t = ksr_run_atspi_kept(run, d);
	ksr_atspi_control c = {0};
	ksr_err err = {0};
	if (!t || ksr_atspi_default_control(t->a, &t->app, w->title, d, &c, &err) <= 0)
		return true;
	bool window_coords = ksr_atspi_app_window_coords(&t->app);
	bool ok = true;
	for (;;) {
		int64_t asked = ksr_now_ms();
		bool sensitive, showing;
		if (ksr_atspi_control_ready(&c, window_coords, &sensitive, &showing)) {
			record_control(rd, &c, sensitive, showing);
			break;
		}
		record_control(rd, &c, sensitive, showing);
		ksr_wait wt = ksr_x11_damage_wait(run->x, w->id, asked, d);
		if (wt != KSR_WAIT_READY) {
			if (!wait_failed(run, step, wt, res))
				default_never(step, &c, sensitive, res);
			ok = not_ready(rd, "default control");
			break;
		}
		if (ksr_atspi_control_refresh(t->a, &t->app, &c, d, &err) < 0)
			break; /* an unanswered call claims nothing */
	}
	cJSON_AddBoolToObject(cJSON_GetObjectItemCaseSensitive(rd, "control"), "default", true);
	ksr_atspi_control_clear(&c);
	return ok;
}

/* The checks before the window's activation (it must be there and its app
 * alive to take the focus) and after (the point, the repaints). */
static bool ready_before(ksr_run *run, const ksr_step *step, unsigned long id, ksr_deadline d,
                         cJSON *rd, ksr_step_result *res)
{
	if (!wait_viewable(run, step, id, d, rd, res))
		return false;
	return ksr_step_quiet_ms(run, step) <= 0 || wait_answering(run, step, id, d, rd, res);
}

static bool ready_after(ksr_run *run, const ksr_step *step, const ksr_window *w, const int *pt,
                        ksr_deadline d, cJSON *rd, ksr_step_result *res)
{
	if (pt && !wait_uncovered(run, step, w->id, pt[0], pt[1], d, rd, res))
		return false;
	if (pt && !wait_control(run, step, w, pt[0], pt[1], d, rd, res))
		return false;
	if (!pt && !wait_default(run, step, w, d, rd, res))
		return false;
	return wait_quiet(run, step, w->id, rd, res);
}

static bool ready_end(cJSON *rd, int64_t start, bool ok, ksr_step_result *res)
{
	cJSON_AddNumberToObject(rd, "waited_ms", (double)(ksr_now_ms() - start));
	cJSON *extra = ksr_step_extra(res);
	if (cJSON_GetObjectItemCaseSensitive(extra, "ready")) /* a second grounded click */
		cJSON_ReplaceItemInObjectCaseSensitive(extra, "ready", rd);
	else
		cJSON_AddItemToObject(extra, "ready", rd);
	return ok;
}

bool ksr_step_ready_at(ksr_run *run, const ksr_step *step, unsigned long id, int px, int py,
                       ksr_step_result *res)
{
	int64_t start = ksr_now_ms();
	cJSON *rd = cJSON_CreateObject();
	ksr_deadline d = bound(run, step, READY_DEFAULT_S * 1000);
	/* A point found on the screen (a grounded click on a dialog) lands on
	 * whatever top-level is there: that window is the one to be ready. */
	unsigned long there = 0;
	if (id && ksr_x11_point_covered(run->x, id, px, py, &there) == 1 && there) {
		char hex[32];
		snprintf(hex, sizeof hex, "0x%lx", there);
		cJSON_AddStringToObject(rd, "window_at_point", hex);
		id = there;
	}
	ksr_window win = {.id = id};
	ksr_err err = {0};
	if (id)
		ksr_x11_window_refresh(run->x, &win,
		                       &err); /* its title and origin, for the control */
	int pt[2] = {px, py};
	bool ok = !id || (ready_before(run, step, id, d, rd, res) &&
	                  ready_after(run, step, &win, pt, d, rd, res));
	ksr_run_window_release(&win);
	return ready_end(rd, start, ok, res);
}

bool ksr_step_ready(ksr_run *run, const ksr_step *step, ksr_step_target *t, ksr_step_result *res)
{
	ksr_err err = {0};
	ksr_window *w = &t->win;
	int64_t start = ksr_now_ms();
	cJSON *rd = cJSON_CreateObject();
	ksr_deadline d = bound(run, step, READY_DEFAULT_S * 1000);
	if (w->id && !ready_before(run, step, w->id, d, rd, res))
		return ready_end(rd, start, false, res);
	if (w->id && !activate(run, step, w, res))
		return ready_end(rd, start, false, res);
	if (w->id && ksr_x11_window_refresh(run->x, w, &err) < 0) {
		ksr_step_fail(res, KSR_STEP_FAILED, KSR_OUTCOME_WINDOW_LOST,
		              "the window 0x%lx went away before the input: %.300s", w->id,
		              err.msg);
		return ready_end(rd, start, false, res);
	}
	record_window(w, res);
	if (step->info->target == KSR_TARGET_POINT)
		resolve_point(step, t, res);
	int pt[2] = {t->px, t->py};
	bool ok = !w->id || ready_after(run, step, w, t->has_point ? pt : NULL, d, rd, res);
	return ready_end(rd, start, ok, res);
}
