/* The runner's ready phase for the rows whose target is a window or a point
 * of one: the window viewable and its app answering, activated, its geometry
 * read at that moment (a moved or resized window still gets the right pixel),
 * the pixel worked out, then the conditions at the pixel and the quiet
 * (target_waits.c, target_controls.c). */
#include "run/actions/target.h"

#include <math.h>
#include <stdio.h>

#define ACTIVATE_MS 1000

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

/* ---- the pixel: the step's fractions in the window as it is now ---------------- */

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

/* ---- the order of the conditions --------------------------------------------------- */

/* Keys and text go to the keyboard's holder, everything else to the pointer's. */
static ksr_x11_device device_of(const ksr_step *step)
{
	return step->info->target == KSR_TARGET_WINDOW ? KSR_X11_KEYBOARD : KSR_X11_POINTER;
}

/* The checks before the window's activation (it must be there and its app
 * alive to take the focus) and after (the point, the repaints). */
static bool ready_before(ksr_run *run, const ksr_step *step, unsigned long id, ksr_deadline d,
                         cJSON *rd, ksr_step_result *res)
{
	if (!ksr_ready_viewable(run, step, id, d, rd, res))
		return false;
	return ksr_step_quiet_ms(run, step) <= 0 || ksr_ready_answering(run, step, id, d, rd, res);
}

static bool ready_after(ksr_run *run, const ksr_step *step, const ksr_window *w, const int *pt,
                        ksr_deadline d, cJSON *rd, ksr_step_result *res)
{
	if (pt && !ksr_ready_uncovered(run, step, w->id, pt[0], pt[1], d, rd, res))
		return false;
	if (pt && !ksr_ready_control(run, step, w, pt[0], pt[1], d, rd, res))
		return false;
	if (!pt && !ksr_ready_default(run, step, w, d, rd, res))
		return false;
	return ksr_ready_quiet(run, step, w->id, rd, res);
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
	ksr_deadline d = ksr_ready_bound(run, step, READY_DEFAULT_S * 1000);
	/* A point found on the screen (a grounded click on a dialog) lands on
	 * whatever top-level is there: that window is the one to be ready. */
	unsigned long there = 0;
	/* Not another client's override-redirect window (an overlay, a
	 * notification): that is a cover, which the uncovered wait tells. */
	if (id && ksr_x11_point_covered(run->x, id, px, py, &there) == 1 && there &&
	    ksr_x11_override_redirect(run->x, there) == 0) {
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
	bool ok = (!id || (ready_before(run, step, id, d, rd, res) &&
	                   ready_after(run, step, &win, pt, d, rd, res))) &&
	          ksr_ready_input(run, step, KSR_X11_POINTER, id, d, rd, res);
	ksr_run_window_release(&win);
	return ready_end(rd, start, ok, res);
}

bool ksr_step_ready(ksr_run *run, const ksr_step *step, ksr_step_target *t, ksr_step_result *res)
{
	ksr_err err = {0};
	ksr_window *w = &t->win;
	int64_t start = ksr_now_ms();
	cJSON *rd = cJSON_CreateObject();
	ksr_deadline d = ksr_ready_bound(run, step, READY_DEFAULT_S * 1000);
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
	bool ok = (!w->id || ready_after(run, step, w, t->has_point ? pt : NULL, d, rd, res)) &&
	          ksr_ready_input(run, step, device_of(step), w->id, d, rd, res);
	return ready_end(rd, start, ok, res);
}
