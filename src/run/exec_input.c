/* Acting through X11 (XTest, in process): key, type, click, double_click,
 * right_click and scroll. Each step resolves the window it acts on, activates
 * it, reads its geometry at that moment (a moved or resized window still gets
 * the right pixel), acts, lets the screen settle and saves NN-step.png; pointer
 * steps also save NN-step-annotated.png with a marker where the pointer went. */
#include "run/run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/exec.h"

#define TARGET_WAIT_DEFAULT_S 10 /* target: window "RE" may take this long to appear */
#define ACTIVATE_MS           1000
#define SETTLE_QUIET_MS       50 /* no window change for this long: the screen is settled */
#define SETTLE_MAX_MS         150

/* A lost display is the setup's fault; anything else the input backend could
 * not do (no XTest, a key the keymap cannot take) is an unavailable backend. */
static void input_failed(ksr_run *run, const char *what, const ksr_err *err, ksr_step_result *res)
{
	bool lost = !run->x || !ksr_x11_alive(run->x);
	ksr_step_fail(res, KSR_STEP_ERROR, lost ? "no-display" : "backend-unavailable",
	              "the %s could not be delivered: %.400s", what, err->msg);
}

/* The run ended (cancelled, deadline) while the step waited: already recorded. */
static bool run_ended(ksr_run *run, const ksr_step *step, ksr_wait w, ksr_step_result *res)
{
	if (!ksr_run_wait_ended_run(run, w, step->pos.line, step->info->name))
		return false;
	res->status = KSR_STEP_ERROR;
	return true;
}

/* ---- which window ---------------------------------------------------------- */

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
		if (run_ended(run, step, w, res))
			return false;
		if (ksr_run_find_window(run, step->target_window, NULL, out))
			return true; /* one last look: it may have come with the last event */
		if (w == KSR_WAIT_ERROR)
			ksr_step_fail(res, KSR_STEP_ERROR, "no-display",
			              "the X display connection was lost");
		else
			ksr_step_fail(res, KSR_STEP_FAILED, "step-failed",
			              "no window matching %s appeared within %g s",
			              ksr_pattern_source(step->target_window), s);
		return false;
	}
}

/* The app's window; when it is gone, a window matching the scenario's window:
 * (the app may have replaced it: a splash, then the main window), which later
 * steps then follow too. */
static bool app_window(ksr_run *run, ksr_window *out, ksr_step_result *res)
{
	ksr_err err = {0};
	out->id = run->window.id;
	if (run->have_window && ksr_x11_window_refresh(run->x, out, &err) == 0)
		return true;
	bool by_pattern = run->sc->window || run->sc->window_class;
	if (run->have_window && by_pattern &&
	    ksr_run_find_window(run, run->sc->window, run->sc->window_class, out)) {
		ksr_run_window_release(&run->window);
		run->window = *out;
		run->window.title = ksr_xstrdup(out->title);
		run->window.res_name = ksr_xstrdup(out->res_name);
		run->window.res_class = ksr_xstrdup(out->res_class);
		return true;
	}
	ksr_step_fail(res, KSR_STEP_FAILED, "window-lost", "the app's window (0x%lx) is gone",
	              run->window.id);
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
	ksr_step_fail(res, KSR_STEP_FAILED, "window-lost",
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
		return !run_ended(run, step,
		                  ksr_cancelled() ? KSR_WAIT_CANCELLED : KSR_WAIT_TIMEOUT, res);
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

/* Resolve and activate the window, then read its geometry now, after any
 * raise or move the activation caused. false: res says why. */
static bool prepare(ksr_run *run, const ksr_step *step, ksr_window *w, ksr_step_result *res)
{
	ksr_err err = {0};
	if (!resolve_window(run, step, w, res))
		return false;
	if (w->id && !activate(run, step, w, res))
		return false;
	if (w->id && ksr_x11_window_refresh(run->x, w, &err) < 0) {
		ksr_step_fail(res, KSR_STEP_FAILED, "window-lost",
		              "the window 0x%lx went away before the input: %.300s", w->id,
		              err.msg);
		return false;
	}
	record_window(w, res);
	return true;
}

/* ---- after the input: settle and screenshots ------------------------------- */

/* Let the app react: wait until no window change has come for SETTLE_QUIET_MS,
 * at most SETTLE_MAX_MS (a new dialog or title change extends it). Returns on
 * cancel too; the step's checks then see the cancellation. */
static void settle(ksr_run *run)
{
	ksr_x11_sync(run->x);
	ksr_deadline cap = ksr_deadline_min(run->work, ksr_deadline_in_ms(SETTLE_MAX_MS));
	while (!ksr_deadline_passed(cap)) {
		ksr_deadline quiet = ksr_deadline_min(cap, ksr_deadline_in_ms(SETTLE_QUIET_MS));
		if (ksr_x11_wait_change(run->x, quiet) != KSR_WAIT_READY)
			return;
	}
}

/* NN: the step's index while it is free, so 03-step.png is step 3's; a later
 * list (a plan) continues after the highest number used. */
static int shot_number(ksr_run *run, const ksr_step *step)
{
	int n = step->index > run->next_shot ? step->index : run->next_shot;
	run->next_shot = n + 1;
	return n;
}

static void save_shot(ksr_run *run, const ksr_step *step, const ksr_image *img, const char *name,
                      const char *field, const char *what, ksr_step_result *res)
{
	char desc[128];
	snprintf(desc, sizeof desc, "%s after step %d (line %d)", what, step->index,
	         step->pos.line);
	if (ksr_run_save_image(run, img, name, desc) == 0)
		cJSON_AddStringToObject(ksr_step_extra(res), field, name);
}

void ksr_exec_step_shots(ksr_run *run, const ksr_step *step, ksr_step_result *res)
{
	ksr_err err = {0};
	settle(run);
	ksr_image *img = run->x ? ksr_x11_capture(run->x, 0, &err) : NULL;
	if (!img) {
		cJSON_AddStringToObject(ksr_step_extra(res), "screenshot_error", err.msg);
		return;
	}
	char name[48];
	int n = shot_number(run, step);
	snprintf(name, sizeof name, "%02d-step.png", n);
	save_shot(run, step, img, name, "screenshot", "the screen", res);
	if (res->has_pixel) {
		ksr_image_mark(img, res->px, res->py);
		snprintf(name, sizeof name, "%02d-step-annotated.png", n);
		save_shot(run, step, img, name, "annotated", "where the pointer went", res);
	}
	ksr_image_free(img);
}

/* ---- executors ------------------------------------------------------------- */

static void keyboard(ksr_run *run, const ksr_step *step, ksr_step_result *res, bool chords)
{
	ksr_window w = {0};
	ksr_err err = {0};
	if (prepare(run, step, &w, res)) {
		int rc = chords ? ksr_x11_key_chords(run->x, step->text, &err)
		                : ksr_x11_type(run->x, step->text, &err);
		if (rc < 0)
			input_failed(run, chords ? "key chord" : "text", &err, res);
		else
			ksr_exec_step_shots(run, step, res);
	}
	ksr_run_window_release(&w);
}

void ksr_exec_key(ksr_run *run, const ksr_step *step, ksr_step_result *res)
{
	keyboard(run, step, res, true);
}

void ksr_exec_type(ksr_run *run, const ksr_step *step, ksr_step_result *res)
{
	keyboard(run, step, res, false);
}

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

static void pointer(ksr_run *run, const ksr_step *step, ksr_step_result *res, int button, int count,
                    int dy)
{
	ksr_window w = {0};
	ksr_err err = {0};
	if (prepare(run, step, &w, res)) {
		res->rung = rung_word(step->point.kind);
		res->px = fraction_to_pixel(w.x, w.w, step->point.fx);
		res->py = fraction_to_pixel(w.y, w.h, step->point.fy);
		res->has_pixel = true;
		if (step->point.declared)
			cJSON_AddStringToObject(ksr_step_extra(res), "target",
			                        step->point.declared->name);
		int rc = dy ? ksr_x11_scroll(run->x, res->px, res->py, dy, &err)
		            : ksr_x11_click(run->x, res->px, res->py, button, count, &err);
		if (rc < 0)
			input_failed(run, dy ? "scroll" : "click", &err, res);
		else
			ksr_exec_step_shots(run, step, res);
	}
	ksr_run_window_release(&w);
}

void ksr_exec_click(ksr_run *run, const ksr_step *step, ksr_step_result *res)
{
	const char *kind = step->info->name;
	pointer(run, step, res, strcmp(kind, "right_click") ? 1 : 3,
	        strcmp(kind, "double_click") ? 1 : 2, 0);
}

void ksr_exec_scroll(ksr_run *run, const ksr_step *step, ksr_step_result *res)
{
	pointer(run, step, res, 0, 0, step->scroll_dy);
}
