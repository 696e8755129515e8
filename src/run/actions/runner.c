/* The step runner: one step through its phases (resolve -> ready -> act ->
 * settled -> checks -> evidence) for scripted steps, plan steps and the goal
 * loop alike; and scripted step lists with their step rows. */
#include "run/actions/runner.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ksr/verdict.h"
#include "ksr/x11.h"
#include "run/actions/exec.h"

void ksr_step_fail(ksr_step_result *res, ksr_step_status st, ksr_outcome outcome, const char *fmt,
                   ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(res->reason, sizeof res->reason, fmt, ap);
	va_end(ap);
	res->status = st;
	res->outcome = outcome;
}

cJSON *ksr_step_extra(ksr_step_result *res)
{
	if (!res->extra)
		res->extra = cJSON_CreateObject();
	return res->extra;
}

const char *ksr_check_status_word(ksr_check_status st)
{
	switch (st) {
	case KSR_CHECK_HELD:
		return "held";
	case KSR_CHECK_NOT_HELD:
		return "failed";
	default:
		return "error";
	}
}

/* The row of the check being evaluated on this thread, for ksr_check_note:
 * an evaluator's facts besides its sentence (text's "read") reach its row
 * without a parameter every evaluator would carry. Per thread, as the
 * guards are; NULL outside ksr_run_check_row. */
static _Thread_local cJSON *noting;

void ksr_check_note(const char *key, const char *value)
{
	if (!noting || !value)
		return;
	cJSON_DeleteItemFromObjectCaseSensitive(noting, key); /* the last evaluation's */
	cJSON_AddStringToObject(noting, key, value);
}

ksr_check_status ksr_run_check_row(ksr_run *run, const ksr_check *c, cJSON *rows, char *detail,
                                   size_t len)
{
	cJSON *notes = cJSON_CreateObject();
	cJSON *outer = noting;
	noting = notes;
	ksr_check_status st = ksr_run_check(run, c, detail, len);
	noting = outer;
	cJSON *row = cJSON_CreateObject();
	cJSON_AddStringToObject(row, "kind", c->info->name);
	cJSON_AddNumberToObject(row, "line", c->pos.line);
	cJSON_AddStringToObject(row, "status", ksr_check_status_word(st));
	cJSON_AddStringToObject(row, "detail", detail);
	cJSON *note;
	while ((note = notes->child)) {
		cJSON_DetachItemViaPointer(notes, note);
		cJSON_AddItemToObject(row, note->string, note);
	}
	cJSON_Delete(notes);
	cJSON_AddItemToArray(rows, row);
	return st;
}

/* Run the step's checks in order; the first that does not hold fails the step. */
static void run_checks(ksr_run *run, const ksr_step *step, ksr_step_result *res, cJSON *rows)
{
	for (size_t i = 0; i < step->n_checks && res->status == KSR_STEP_OK; i++) {
		const ksr_check *c = &step->checks[i];
		char detail[400] = "";
		ksr_check_status st = ksr_run_check_row(run, c, rows, detail, sizeof detail);
		if (st == KSR_CHECK_HELD)
			continue;
		res->status = st == KSR_CHECK_NOT_HELD ? KSR_STEP_FAILED : KSR_STEP_ERROR;
		res->outcome = st == KSR_CHECK_NOT_HELD ? KSR_OUTCOME_CHECK_FAILED
		                                        : KSR_OUTCOME_BACKEND_UNAVAILABLE;
		snprintf(res->reason, sizeof res->reason, "check %s (line %d) %s", c->info->name,
		         c->pos.line, detail);
	}
}

static void add_rect(cJSON *o, const char *key, int x, int y, int w, int h)
{
	cJSON *r = cJSON_AddObjectToObject(o, key);
	cJSON_AddNumberToObject(r, "x", x);
	cJSON_AddNumberToObject(r, "y", y);
	cJSON_AddNumberToObject(r, "w", w);
	cJSON_AddNumberToObject(r, "h", h);
}

static const char *status_word(const ksr_step_result *res)
{
	return res->status == KSR_STEP_OK       ? "ok"
	       : res->status == KSR_STEP_FAILED ? "failed"
	                                        : "error";
}

static void emit_step_end(ksr_run *run, const ksr_step *step, ksr_step_result *res, cJSON *checks,
                          int64_t started)
{
	cJSON *f = cJSON_CreateObject();
	cJSON_AddNumberToObject(f, "index", step->index);
	cJSON_AddNumberToObject(f, "line", step->pos.line);
	cJSON_AddStringToObject(f, "kind", step->info->name);
	cJSON_AddStringToObject(f, "backend", ksr_backend_name(step->info->backend));
	if (res->rung)
		cJSON_AddStringToObject(f, "rung", res->rung);
	if (res->has_window)
		add_rect(f, "window", res->win_x, res->win_y, res->win_w, res->win_h);
	if (res->has_pixel) {
		cJSON *p = cJSON_AddObjectToObject(f, "pixel");
		cJSON_AddNumberToObject(p, "x", res->px);
		cJSON_AddNumberToObject(p, "y", res->py);
	}
	cJSON_AddItemToObject(f, "checks", checks);
	cJSON_AddStringToObject(f, "status", status_word(res));
	if (res->reason[0])
		cJSON_AddStringToObject(f, "reason", res->reason);
	cJSON_AddNumberToObject(f, "duration_ms", (double)(ksr_now_ms() - started));
	/* An executor's field replaces a default one (click_element's backend is
	 * xtest when it clicked a position). */
	for (cJSON *e = res->extra ? res->extra->child : NULL; e; e = e->next)
		if (cJSON_GetObjectItemCaseSensitive(f, e->string))
			cJSON_ReplaceItemInObjectCaseSensitive(f, e->string,
			                                       cJSON_Duplicate(e, true));
		else
			cJSON_AddItemToObject(f, e->string, cJSON_Duplicate(e, true));
	cJSON_Delete(res->extra);
	res->extra = NULL;
	ksr_run_emit(run, "step.end", f);
}

static void record_step_failure(ksr_run *run, const ksr_step *step, const ksr_step_result *res)
{
	if (run->failed || res->status == KSR_STEP_OK)
		return; /* already recorded (interrupted, deadline) */
	if (run->x && !ksr_x11_alive(run->x)) {
		/* The step failed because the display went away (a window never
		 * "appeared" on a dead X server): the environment's fault, not the app's. */
		ksr_run_fail_setup(run, KSR_OUTCOME_NO_DISPLAY, step->pos.line,
		                   "the X display connection was lost during the %s step",
		                   step->info->name);
		return;
	}
	ksr_outcome o =
	        res->outcome != KSR_OUTCOME_COMPLETED ? res->outcome : KSR_OUTCOME_STEP_FAILED;
	if (res->status == KSR_STEP_ERROR)
		ksr_run_fail_setup(run, o, step->pos.line, "%s", res->reason);
	else
		ksr_run_fail(run, o, step->pos.line, "%s", res->reason);
}

/* resolve and ready, for the rows whose target the runner resolves itself:
 * a window, or a point of one. The other rows' executors find their target
 * as they act (an accessibility walk, CDP's actionability, a model). */
static bool resolve_and_ready(ksr_run *run, const ksr_step *step, ksr_step_target *t,
                              ksr_step_result *res)
{
	ksr_target_kind k = step->info->target;
	if (k != KSR_TARGET_WINDOW && k != KSR_TARGET_POINT)
		return true;
	return ksr_step_resolve(run, step, t, res) && ksr_step_ready(run, step, t, res);
}

void ksr_step_run(ksr_run *run, const ksr_step *step, ksr_step_result *res, cJSON *check_rows)
{
	ksr_step_target t = {0};
	bool shots = step->info->after == KSR_AFTER_SHOTS;
	const char *was = run->a11y_tool;
	run->a11y_tool = step->tool; /* desktop mode: the tool this step names, or the newest */
	ksr_effect_watch effect = {0};
	if (resolve_and_ready(run, step, &t, res)) {
		ksr_effect_begin(run, step, t.win.id, &effect);
		ksr_executor(step->info->kind)(run, step, &t, res); /* act */
	}
	unsigned long window = t.win.id;
	ksr_run_window_release(&t.win);
	if (run->failed && res->status == KSR_STEP_OK)
		res->status = KSR_STEP_ERROR; /* the run ended inside the step */
	if (shots && res->acted)
		ksr_step_settle(run, step, window, "settled", res);
	if (res->status == KSR_STEP_OK)
		ksr_effect_end(run, step, &effect, res);
	if (res->status == KSR_STEP_OK && step->n_checks) {
		cJSON *rows = check_rows ? check_rows : cJSON_CreateArray();
		run_checks(run, step, res, rows);
		if (rows != check_rows)
			cJSON_Delete(rows);
		/* A check that held on a title may have come before the window
		 * repainted: the picture is taken once it is drawn. */
		if (shots && res->acted && res->status == KSR_STEP_OK)
			ksr_step_settle(run, step, window, "settled_after_checks", res);
	}
	if (shots && res->acted)
		ksr_step_shots(run, step, res);
	run->a11y_tool = was;
}

static bool run_one(ksr_run *run, const ksr_step *step)
{
	ksr_events_set_step(run->ev, step->index);
	cJSON *s = cJSON_CreateObject();
	cJSON_AddNumberToObject(s, "index", step->index);
	cJSON_AddNumberToObject(s, "line", step->pos.line);
	cJSON_AddStringToObject(s, "kind", step->info->name);
	ksr_run_emit(run, "step.start", s);
	int64_t started = ksr_now_ms();
	run->step_index = step->index, run->step_line = step->pos.line;
	run->step_started_ms = started;
	ksr_step_result res = {0};
	cJSON *checks = cJSON_CreateArray();
	ksr_step_run(run, step, &res, checks);
	char during[32];
	snprintf(during, sizeof during, "step %d", step->index);
	ksr_run_page_errors(run, during, step->pos.line); /* before step.end: the step's own */
	if (ksr_run_alive_check(run) || run->lost_reason[0]) {
		res.status = KSR_STEP_ERROR; /* the app (or a tool) died inside the step */
		snprintf(res.reason, sizeof res.reason, "%s", run->lost_reason);
	}
	emit_step_end(run, step, &res, checks, started);
	char where[64];
	snprintf(where, sizeof where, "the end of step %d, line %d", step->index, step->pos.line);
	ksr_run_wm_check(run, where, step->pos.line);
	/* Still this step's: a death that recording its failure notices (a
	 * browser whose last threads were still exiting when the step saw the
	 * connection close) is told as in this step. */
	record_step_failure(run, step, &res);
	run->step_index = 0;
	ksr_events_set_step(run->ev, 0);
	return res.status == KSR_STEP_OK && !run->failed;
}

bool ksr_steps_run(ksr_run *run, const ksr_step_list *steps)
{
	for (size_t i = 0; i < steps->len; i++)
		if (!ksr_blockers_before_step(run, &steps->items[i]) ||
		    !run_one(run, &steps->items[i]))
			return false;
	return true;
}
