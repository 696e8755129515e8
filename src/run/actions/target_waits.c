/* What the ready phase waits for in the window itself: viewable, its app
 * answering, the pixel uncovered, no repaint for the quiet interval. Each
 * waits on X events up to the step's bound, never a fixed sleep. */
#include "run/actions/target.h"

#include <stdio.h>

#define QUIET_BOUND_MS 1000 /* still repainting after this (without timeout_s): act */

bool ksr_step_run_ended(ksr_run *run, const ksr_step *step, ksr_wait w, ksr_step_result *res)
{
	if (!ksr_run_wait_ended_run(run, w, step->pos.line, step->info->name))
		return false;
	res->status = KSR_STEP_ERROR;
	return true;
}

double ksr_step_quiet_ms(const ksr_run *run, const ksr_step *step)
{
	return step->ready_quiet_set ? step->ready_quiet_ms : run->sc->ready_quiet_ms;
}

ksr_deadline ksr_ready_bound(const ksr_run *run, const ksr_step *step, int64_t dflt_ms)
{
	int64_t ms = step->timeout_s > 0 ? (int64_t)(step->timeout_s * 1000) : dflt_ms;
	return ksr_deadline_min(run->work, ksr_deadline_in_ms(ms));
}

double ksr_ready_bound_s(const ksr_step *step, int64_t dflt_ms)
{
	return step->timeout_s > 0 ? step->timeout_s : (double)dflt_ms / 1000;
}

/* A condition that never held: the step fails and the row's ready.never says which. */
bool ksr_ready_never(cJSON *rd, const char *never)
{
	cJSON_AddStringToObject(rd, "never", never);
	return false;
}

/* The run ended, the display went, or the condition timed out: false with res set. */
bool ksr_ready_wait_failed(ksr_run *run, const ksr_step *step, ksr_wait w, ksr_step_result *res)
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

/* ---- the conditions ------------------------------------------------------------------ */

bool ksr_ready_viewable(ksr_run *run, const ksr_step *step, unsigned long id, ksr_deadline d,
                        cJSON *rd, ksr_step_result *res)
{
	for (;;) {
		int v = ksr_x11_window_viewable(run->x, id);
		if (v > 0)
			return true;
		if (v < 0 && ksr_x11_alive(run->x)) {
			ksr_step_fail(res, KSR_STEP_FAILED, KSR_OUTCOME_WINDOW_LOST,
			              "the window 0x%lx went away before the input", id);
			return ksr_ready_never(rd, "viewable");
		}
		ksr_wait w = ksr_x11_wait_stacking(run->x, d);
		if (w == KSR_WAIT_READY)
			continue;
		if (!ksr_ready_wait_failed(run, step, w, res))
			ksr_step_fail(res, KSR_STEP_FAILED, KSR_OUTCOME_STEP_FAILED,
			              "not ready: the window 0x%lx stayed unmapped for %g s", id,
			              ksr_ready_bound_s(step, READY_DEFAULT_S * 1000));
		return ksr_ready_never(rd, "viewable");
	}
}

/* The app's event loop runs: it answers the window's _NET_WM_PING (a
 * stopped or hung app would take the input and never act on it). */
bool ksr_ready_answering(ksr_run *run, const ksr_step *step, unsigned long id, ksr_deadline d,
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
	if (!ksr_ready_wait_failed(run, step, w, res))
		ksr_step_fail(res, KSR_STEP_FAILED, KSR_OUTCOME_STEP_FAILED,
		              "not ready: the app did not answer a _NET_WM_PING on window 0x%lx "
		              "for %g s (stopped or hung)",
		              id, ksr_ready_bound_s(step, READY_DEFAULT_S * 1000));
	return ksr_ready_never(rd, "answering");
}

/* An override-redirect window of another client (the app's own never
 * counts): no window manager stacks it, so it stays over the app until its
 * client takes it down. */
static void covered_by_override(const ksr_step *step, int px, int py, const ksr_window *cover,
                                ksr_step_result *res)
{
	char pid[32] = "";
	if (cover->pid > 0)
		snprintf(pid, sizeof pid, ", pid %d", cover->pid);
	ksr_step_fail(res, KSR_STEP_FAILED, KSR_OUTCOME_STEP_FAILED,
	              "not ready: the point (%d, %d) stayed covered by another client's "
	              "override-redirect window 0x%lx (\"%.100s\"%s) for %g s: the input would "
	              "go to it, not the app",
	              px, py, cover->id, cover->title ? cover->title : "", pid,
	              ksr_ready_bound_s(step, READY_DEFAULT_S * 1000));
}

bool ksr_ready_uncovered(ksr_run *run, const ksr_step *step, unsigned long id, int px, int py,
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
			if (ksr_ready_wait_failed(run, step, w, res))
				return ksr_ready_never(rd, "uncovered");
		}
		ksr_err err = {0};
		ksr_window cover = {.id = by};
		ksr_x11_window_refresh(run->x, &cover, &err);
		if (c < 0)
			ksr_step_fail(res, KSR_STEP_FAILED, KSR_OUTCOME_WINDOW_LOST,
			              "the window 0x%lx went away before the input", id);
		else if (ksr_x11_override_redirect(run->x, by) == 1)
			covered_by_override(step, px, py, &cover, res);
		else
			ksr_step_fail(
			        res, KSR_STEP_FAILED, KSR_OUTCOME_STEP_FAILED,
			        "not ready: the point (%d, %d) stayed covered by window 0x%lx "
			        "(\"%.100s\") for %g s",
			        px, py, by, cover.title ? cover.title : "",
			        ksr_ready_bound_s(step, READY_DEFAULT_S * 1000));
		ksr_run_window_release(&cover);
		return ksr_ready_never(rd, "uncovered");
	}
}

/* No repaint for the quiet interval. An app that never stops (a clock, an
 * animation) is acted on when the bound runs out, with a note: never a hang,
 * never a failure by itself. */
bool ksr_ready_quiet(ksr_run *run, const ksr_step *step, unsigned long id, cJSON *rd,
                     ksr_step_result *res)
{
	double q = ksr_step_quiet_ms(run, step);
	cJSON_AddNumberToObject(rd, "quiet_ms", q);
	if (q <= 0)
		return true;
	ksr_x11_quiet spec = {.quiet_ms = (int)q};
	int64_t waited = 0;
	ksr_wait w = ksr_x11_quiet_wait(run->x, &id, 1, &spec,
	                                ksr_ready_bound(run, step, QUIET_BOUND_MS), &waited);
	cJSON_AddNumberToObject(rd, "quiet_waited_ms", (double)waited);
	if (w == KSR_WAIT_READY)
		return true;
	if (w == KSR_WAIT_ERROR && ksr_x11_alive(run->x)) {
		cJSON_AddStringToObject(rd, "note", "no DAMAGE extension: repaints not waited for");
		return true;
	}
	if (ksr_ready_wait_failed(run, step, w, res))
		return false;
	char note[160];
	snprintf(note, sizeof note, "the window kept repainting for %lld ms; acted anyway",
	         (long long)waited);
	cJSON_AddBoolToObject(rd, "repainting", true);
	cJSON_AddStringToObject(rd, "note", note);
	return true;
}
