/* The runner's resolve phase for the rows whose target is a window or a
 * point of one (ksr/vocabulary.def): which window the input goes to. The
 * ready phase (target_ready.c) then makes it ready and finds the pixel. */
#include "run/actions/target.h"

#include <stdio.h>

#define TARGET_WAIT_DEFAULT_S 10 /* target: window "RE" may take this long to appear */

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

/* Desktop mode: the most recently spawned tool's window (or the dialog it has
 * open over it), or with none, the screen itself (id 0: fractions of the
 * screen, no activation). */
static bool tool_window(ksr_run *run, ksr_window *out, ksr_step_result *res)
{
	ksr_err err = {0};
	const ksr_tool *named = run->a11y_tool ? ksr_tools_a11y(run) : NULL;
	if (named && named->stopped) {
		ksr_step_fail(res, KSR_STEP_FAILED, KSR_OUTCOME_WINDOW_LOST,
		              "the tool '%s' (spawned at line %d) was killed before this step",
		              named->as, named->line);
		return false;
	}
	out->id = named ? named->window : ksr_tools_current_window(run);
	if (!out->id) {
		ksr_x11_screen_size(run->x, &out->w, &out->h);
		return true;
	}
	if (ksr_x11_window_refresh(run->x, out, &err) == 0) {
		open_dialog(run, out,
		            res); /* a tool's modal dialog takes the input, as the app's */
		return true;
	}
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

bool ksr_step_resolve(ksr_run *run, const ksr_step *step, ksr_step_target *t, ksr_step_result *res)
{
	if (!resolve_window(run, step, &t->win, res))
		return false;
	ksr_err err = {0};
	if (t->win.id) /* from now on its repaints are known (ksr_x11_quiet_wait) */
		ksr_x11_damage_track(run->x, t->win.id, &err);
	return true;
}
