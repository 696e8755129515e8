/* The last condition before X11 input: no other client holds an active grab
 * of the device the step uses (the keyboard for key and type, the pointer for
 * the others). Under another client's grab every XTest event goes to that
 * client, and a step that said `ok` would have typed into nothing (issue 31).
 * A grab the app's own client holds (its menu is open) takes the input as
 * the app and is no failure. A grab by anyone else fails the step as the
 * session's fault: test-error / backend-unavailable. */
#include "run/actions/target.h"

#include <stdio.h>
#include <string.h>

/* A grab that ends by itself (a window manager's move, another client's
 * click) gets this long, asked again every POLL_MS: X sends nobody an event
 * when another client's grab ends. */
#define GRACE_MS 500
#define POLL_MS  50

static void grabbed_fail(const ksr_step *step, ksr_x11_device dev, const ksr_x11_grab *g,
                         ksr_step_result *res)
{
	char hint[256] = "";
	if (g->popup)
		snprintf(
		        hint, sizeof hint,
		        "; on top is another client's override-redirect window 0x%lx (\"%.100s\"%s",
		        g->popup, g->popup_title, g->popup_pid > 0 ? ", pid " : "");
	if (g->popup && g->popup_pid > 0)
		snprintf(hint + strlen(hint), sizeof hint - strlen(hint), "%d)", g->popup_pid);
	else if (g->popup)
		snprintf(hint + strlen(hint), sizeof hint - strlen(hint), ")");
	ksr_step_fail(res, KSR_STEP_ERROR, KSR_OUTCOME_BACKEND_UNAVAILABLE,
	              "the %s is grabbed by another client (X does not say which)%s: the %s "
	              "step's input would go to it, not the app",
	              dev == KSR_X11_KEYBOARD ? "keyboard" : "pointer", hint, step->info->name);
}

static void record_app_grab(cJSON *rd, const ksr_x11_grab *g)
{
	char note[96];
	snprintf(note, sizeof note, "grabbed by the app (its override-redirect window 0x%lx)",
	         g->popup);
	cJSON_AddStringToObject(rd, "input", note);
}

bool ksr_ready_input(ksr_run *run, const ksr_step *step, ksr_x11_device dev,
                     unsigned long app_window, ksr_deadline d, cJSON *rd, ksr_step_result *res)
{
	ksr_deadline grace = ksr_deadline_min(d, ksr_deadline_in_ms(GRACE_MS));
	for (;;) {
		ksr_x11_grab g;
		ksr_err err = {0};
		if (ksr_x11_grab_probe(run->x, dev, app_window, &g, &err) < 0) {
			ksr_ready_wait_failed(run, step, KSR_WAIT_ERROR, res);
			return ksr_ready_never(rd, "input");
		}
		if (!g.grabbed) {
			cJSON_AddStringToObject(rd, "input", "free");
			return true;
		}
		if (g.by_app) {
			record_app_grab(rd, &g);
			return true;
		}
		if (!ksr_deadline_passed(grace)) {
			ksr_wait w = ksr_sleep_until(
			        ksr_deadline_min(grace, ksr_deadline_in_ms(POLL_MS)));
			if (w != KSR_WAIT_CANCELLED)
				continue;
			ksr_ready_wait_failed(run, step, w, res);
		} else if (!ksr_ready_wait_failed(run, step, KSR_WAIT_TIMEOUT, res)) {
			grabbed_fail(step, dev, &g, res);
		}
		cJSON_AddStringToObject(rd, "input", "grabbed by another client");
		return ksr_ready_never(rd, "input");
	}
}
