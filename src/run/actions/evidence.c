/* The runner's last phases for rows that act on the screen
 * (KSR_AFTER_SHOTS): settled (the app has reacted to the input) and evidence
 * (NN-step.png, and NN-step-annotated.png with a marker where the pointer
 * went). */
#include "run/actions/exec.h"

#include <stdio.h>

#define SETTLE_QUIET_MS 50   /* without the quiet wait: no window change for this long */
#define SETTLE_MIN_MS   150  /* ... at most this long (the behaviour before DAMAGE) */
#define SETTLE_MAX_MS   1000 /* the app's windows still repainting after this: go on */

/* ready_quiet_ms: 0: wait until no window change has come for
 * SETTLE_QUIET_MS, at most SETTLE_MIN_MS (a new dialog or title change
 * extends it). */
static int64_t settle_changes(ksr_run *run)
{
	int64_t start = ksr_now_ms();
	ksr_deadline cap = ksr_deadline_min(run->work, ksr_deadline_in_ms(SETTLE_MIN_MS));
	while (!ksr_deadline_passed(cap)) {
		ksr_deadline quiet = ksr_deadline_min(cap, ksr_deadline_in_ms(SETTLE_QUIET_MS));
		if (ksr_x11_wait_change(run->x, quiet) != KSR_WAIT_READY)
			break;
	}
	return ksr_now_ms() - start;
}

/* Let the app take the input in: the window that got it and the app's own
 * are quiet for the quiet interval counted from the input, and no window has
 * come, gone or changed its title meanwhile; at most SETTLE_MAX_MS. Returns
 * on cancel too; the step's checks then see the cancellation. */
void ksr_step_settle(ksr_run *run, const ksr_step *step, unsigned long window, const char *field,
                     ksr_step_result *res)
{
	ksr_x11_sync(run->x);
	cJSON *st = cJSON_AddObjectToObject(ksr_step_extra(res), field);
	double q = ksr_step_quiet_ms(run, step);
	cJSON_AddNumberToObject(st, "quiet_ms", q);
	if (q <= 0) {
		cJSON_AddNumberToObject(st, "waited_ms", (double)settle_changes(run));
		return;
	}
	unsigned long wins[2] = {window, run->have_window ? run->window.id : 0};
	ksr_x11_quiet spec = {.quiet_ms = (int)q, .since_ms = ksr_now_ms(), .window_changes = true};
	int64_t waited = 0;
	ksr_deadline cap = ksr_deadline_min(run->work, ksr_deadline_in_ms(SETTLE_MAX_MS));
	/* The app has dequeued the input: it answers a _NET_WM_PING sent after it
	 * only once its event loop has read what came before (a busy app may not
	 * repaint for longer than the quiet interval while keys wait in its
	 * queue). */
	bool pings = false;
	int64_t t0 = ksr_now_ms();
	if (window && ksr_x11_ping_wait(run->x, window, cap, &pings) == KSR_WAIT_READY && pings)
		cJSON_AddNumberToObject(st, "answered_ms", (double)(ksr_now_ms() - t0));
	ksr_wait w = ksr_x11_quiet_wait(run->x, wins, 2, &spec, cap, &waited);
	waited = ksr_now_ms() - t0 > waited ? ksr_now_ms() - t0 : waited;
	if (w == KSR_WAIT_ERROR && ksr_x11_alive(run->x))
		waited += settle_changes(run); /* no DAMAGE: window changes only */
	cJSON_AddNumberToObject(st, "waited_ms", (double)waited);
	if (w == KSR_WAIT_TIMEOUT)
		cJSON_AddBoolToObject(st, "repainting", true);
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

/* Without a point to mark, the screen goes straight into the PNG: no RGB
 * copy of the screen is held. */
static void plain_shot(ksr_run *run, const ksr_step *step, ksr_step_result *res)
{
	ksr_err err = {0};
	char name[48], desc[128];
	snprintf(name, sizeof name, "%02d-step.png", shot_number(run, step));
	snprintf(desc, sizeof desc, "the screen after step %d (line %d)", step->index,
	         step->pos.line);
	if (ksr_run_screenshot(run, name, desc, &err) == 0)
		cJSON_AddStringToObject(ksr_step_extra(res), "screenshot", name);
	else
		cJSON_AddStringToObject(ksr_step_extra(res), "screenshot_error", err.msg);
}

void ksr_step_shots(ksr_run *run, const ksr_step *step, ksr_step_result *res)
{
	if (!res->has_pixel) {
		plain_shot(run, step, res);
		return;
	}
	ksr_err err = {0};
	ksr_image *img = ksr_run_capture(run, &err);
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

/* The run's last picture (99-final.png), after the final checks and once the
 * app's window is quiet (bounded as a step's settle is): a passing run's
 * evidence ends with the state it passed in, drawn. A failed run has
 * diagnosis's 99-failure.png instead. */
void ksr_run_final_shot(ksr_run *run)
{
	if (!run->x || !ksr_x11_alive(run->x) || ksr_cancelled())
		return;
	unsigned long win = run->have_window ? run->window.id : 0;
	ksr_x11_quiet spec = {
	        .quiet_ms = SETTLE_QUIET_MS, .since_ms = ksr_now_ms(), .window_changes = true};
	int64_t waited = 0;
	if (win)
		(void)ksr_x11_quiet_wait(
		        run->x, &win, 1, &spec,
		        ksr_deadline_min(run->work, ksr_deadline_in_ms(SETTLE_MAX_MS)), &waited);
	ksr_err err = {0};
	(void)ksr_run_screenshot(run, "99-final.png", "the screen after the final checks", &err);
}
