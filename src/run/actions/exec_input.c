/* Acting through X11 (XTest, in process): key, type, click, double_click,
 * right_click, scroll, drag and hover. The runner has resolved the window and made
 * it ready (target_ready.c) and, for pointer steps, worked out the pixel; after the
 * act it settles and saves the shots (evidence.c). */
#include "run/actions/exec.h"

#include <stdio.h>
#include <string.h>

/* A lost display is the setup's fault; anything else the input backend could
 * not do (no XTest, a key the keymap cannot take) is an unavailable backend. */
static void input_failed(ksr_run *run, const char *what, const ksr_err *err, ksr_step_result *res)
{
	bool lost = !run->x || !ksr_x11_alive(run->x);
	ksr_step_fail(res, KSR_STEP_ERROR,
	              lost ? KSR_OUTCOME_NO_DISPLAY : KSR_OUTCOME_BACKEND_UNAVAILABLE,
	              "the %s could not be delivered: %.400s", what, err->msg);
}

static void delivered(ksr_run *run, int rc, const char *what, const ksr_err *err,
                      ksr_step_result *res)
{
	if (rc < 0)
		input_failed(run, what, err, res);
	else
		res->acted = true;
}

void ksr_exec_key(ksr_run *run, const ksr_step *step, const ksr_step_target *t,
                  ksr_step_result *res)
{
	(void)t;
	ksr_err err = {0};
	/* The chords the step was made with (parsed at load time), not its text again. */
	delivered(run, ksr_x11_key_press(run->x, step->chords, step->n_chords, &err), "key chord",
	          &err, res);
}

void ksr_exec_type(ksr_run *run, const ksr_step *step, const ksr_step_target *t,
                   ksr_step_result *res)
{
	(void)t;
	ksr_err err = {0};
	delivered(run, ksr_x11_type(run->x, step->text, &err), "text", &err, res);
}

/* The click variants differ only in their row's data: button and count. */
static void click_at(ksr_run *run, const ksr_step_target *t, int button, int count,
                     ksr_step_result *res)
{
	ksr_err err = {0};
	delivered(run, ksr_x11_click(run->x, t->px, t->py, button, count, &err), "click", &err,
	          res);
}

void ksr_exec_click(ksr_run *run, const ksr_step *step, const ksr_step_target *t,
                    ksr_step_result *res)
{
	(void)step;
	click_at(run, t, 1, 1, res);
}

void ksr_exec_double_click(ksr_run *run, const ksr_step *step, const ksr_step_target *t,
                           ksr_step_result *res)
{
	(void)step;
	click_at(run, t, 1, 2, res);
}

void ksr_exec_right_click(ksr_run *run, const ksr_step *step, const ksr_step_target *t,
                          ksr_step_result *res)
{
	(void)step;
	click_at(run, t, 3, 1, res);
}

void ksr_exec_scroll(ksr_run *run, const ksr_step *step, const ksr_step_target *t,
                     ksr_step_result *res)
{
	ksr_err err = {0};
	delivered(run, ksr_x11_scroll(run->x, t->px, t->py, step->scroll_dy, &err), "scroll", &err,
	          res);
}

static void add_pixel(cJSON *o, const char *key, int x, int y)
{
	cJSON *p = cJSON_AddObjectToObject(o, key);
	cJSON_AddNumberToObject(p, "x", x);
	cJSON_AddNumberToObject(p, "y", y);
}

/* Button 1 pressed at from: (the point the runner made ready), moved in
 * steps to to:, released there. The row keeps both ends in root pixels. */
void ksr_exec_drag(ksr_run *run, const ksr_step *step, const ksr_step_target *t,
                   ksr_step_result *res)
{
	ksr_err err = {0};
	cJSON *d = cJSON_AddObjectToObject(ksr_step_extra(res), "drag");
	add_pixel(d, "from", t->px, t->py);
	add_pixel(d, "to", t->to_x, t->to_y);
	if (step->drag_to.declared)
		cJSON_AddStringToObject(d, "to_target", step->drag_to.declared->name);
	delivered(run, ksr_x11_drag(run->x, t->px, t->py, t->to_x, t->to_y, 1, &err), "drag", &err,
	          res);
}
