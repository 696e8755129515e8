/* The runner's last phases for rows that act on the screen
 * (KSR_AFTER_SHOTS): settled (the app has reacted to the input) and evidence
 * (NN-step.png, and NN-step-annotated.png with a marker where the pointer
 * went). */
#include "run/actions/exec.h"

#include <stdio.h>

#define SETTLE_QUIET_MS 50 /* no window change for this long: the screen is settled */
#define SETTLE_MAX_MS   150

/* Let the app react: wait until no window change has come for SETTLE_QUIET_MS,
 * at most SETTLE_MAX_MS (a new dialog or title change extends it). Returns on
 * cancel too; the step's checks then see the cancellation. */
void ksr_step_settle(ksr_run *run)
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

void ksr_step_shots(ksr_run *run, const ksr_step *step, ksr_step_result *res)
{
	ksr_err err = {0};
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
