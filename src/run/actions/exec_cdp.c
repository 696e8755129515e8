/* Rung 0: the page_* steps (cdp_* their older names) and the page: check,
 * on the page handle the browser-attach stage made (run->page), whichever
 * protocol it speaks (CDP, WebDriver BiDi: ksr/page.h). One executor per
 * kind (the element kinds over one helper); each step row records backend
 * cdp, the protocol it took, the selector (or list id) and the box the
 * element resolved to. */
#include "run/actions/exec.h"
#include "ksr/json.h"
#include "run/actions/runner.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ksr/page.h"
#include "ksr/proc.h"
#include "run/actions/exec.h"

#define CDP_STEP_DEFAULT_S 10
#define EVAL_VALUE_MAX     300
#define APP_EXIT_GRACE_MS  1000

static ksr_deadline step_deadline(const ksr_run *run, const ksr_step *step, double *secs)
{
	*secs = step->timeout_s > 0 ? step->timeout_s : CDP_STEP_DEFAULT_S;
	return ksr_deadline_min(run->work, ksr_deadline_in_ms((int64_t)(*secs * 1000)));
}

static void add_box(ksr_step_result *res, const ksr_page_hit *hit)
{
	if (!hit->has_box)
		return;
	cJSON *b = cJSON_AddObjectToObject(res->extra, "box");
	cJSON_AddNumberToObject(b, "x", hit->box.x);
	cJSON_AddNumberToObject(b, "y", hit->box.y);
	cJSON_AddNumberToObject(b, "w", hit->box.w);
	cJSON_AddNumberToObject(b, "h", hit->box.h);
	if (!isnan(hit->x)) { /* a click point */
		cJSON *p = cJSON_AddObjectToObject(res->extra, "point");
		cJSON_AddNumberToObject(p, "x", hit->x);
		cJSON_AddNumberToObject(p, "y", hit->y);
	}
}

/* The selector a step names: a cdp_targets name wins over a selector that
 * reads the same. Recorded in the row with the name when there was one. */
static const char *step_ref(ksr_run *run, const ksr_step *step, ksr_step_result *res)
{
	const char *sel = ksr_scenario_cdp_selector(run->sc, step->text);
	if (sel != step->text)
		cJSON_AddStringToObject(res->extra, "target", step->text);
	cJSON_AddStringToObject(res->extra, sel[0] == '@' ? "element_id" : "selector", sel);
	return sel;
}

/* The connection closes while the browser is still exiting: give its exit a
 * moment (pidfd, bounded by the run) before calling the loss a crash or not. */
static bool app_exited(ksr_run *run)
{
	if (run->app_pid <= 0)
		return false;
	int fd = ksr_proc_pidfd(run->app_pid);
	struct pollfd p = {.fd = fd, .events = POLLIN};
	ksr_deadline d = ksr_deadline_min(run->work, ksr_deadline_in_ms(APP_EXIT_GRACE_MS));
	while (ksr_proc_alive(run->app_pid) && !ksr_deadline_passed(d))
		if (ksr_wait_fds(&p, fd >= 0 ? 1 : 0,
		                 fd >= 0 ? d : ksr_deadline_min(d, ksr_deadline_in_ms(20))) ==
		    KSR_WAIT_CANCELLED)
			break;
	if (fd >= 0)
		close(fd);
	return !ksr_proc_alive(run->app_pid);
}

/* Turn a page status into the step's result. */
static void finish(ksr_run *run, const ksr_step *step, ksr_page_status st, const ksr_err *err,
                   double secs, ksr_step_result *res)
{
	char t[32];
	snprintf(t, sizeof t, "%g", secs);
	switch (st) {
	case KSR_PAGE_OK:
		return;
	case KSR_PAGE_CANCELLED:
		ksr_run_wait_ended_run(run, KSR_WAIT_CANCELLED, step->pos.line, step->info->name);
		res->status = KSR_STEP_ERROR;
		return;
	case KSR_PAGE_TIMEOUT:
	case KSR_PAGE_NOT_READY:
		if (ksr_deadline_passed(run->work)) {
			ksr_run_wait_ended_run(run, KSR_WAIT_TIMEOUT, step->pos.line,
			                       step->info->name);
			res->status = KSR_STEP_ERROR;
			return;
		}
		ksr_step_fail(res, KSR_STEP_FAILED, KSR_OUTCOME_STEP_FAILED, "%.400s (after %s s)",
		              err->msg, t);
		return;
	case KSR_PAGE_CRASHED:
		ksr_step_fail(res, KSR_STEP_FAILED, KSR_OUTCOME_CRASHED,
		              "the page's renderer crashed: %.400s%s", err->msg, "");
		return;
	case KSR_PAGE_CLOSED:
		if (app_exited(run)) {
			ksr_step_fail(res, KSR_STEP_FAILED, KSR_OUTCOME_CRASHED,
			              "the browser exited during the step: %.400s%s", err->msg, "");
			return;
		}
		ksr_step_fail(res, KSR_STEP_FAILED, KSR_OUTCOME_STEP_FAILED,
		              "the connection to the browser was lost: %.400s%s", err->msg, "");
		return;
	default:
		ksr_step_fail(res, KSR_STEP_FAILED, KSR_OUTCOME_STEP_FAILED, "%.480s%s", err->msg,
		              "");
	}
}

static bool attached(ksr_run *run, ksr_step_result *res)
{
	if (run->page)
		return true;
	ksr_step_fail(res, KSR_STEP_ERROR, KSR_OUTCOME_BACKEND_UNAVAILABLE, "%s%s",
	              "no browser is attached (CDP or WebDriver BiDi)", "");
	return false;
}

/* Every cdp_* step starts the same way: rung page, a row for its fields and
 * a browser to talk to. */
static bool begin(ksr_run *run, ksr_step_result *res)
{
	res->rung = "page";
	if (!res->extra)
		res->extra = cJSON_CreateObject();
	if (!attached(run, res))
		return false;
	/* The step's backend is the page rung's ("cdp"); the wire it took is here. */
	cJSON_AddStringToObject(res->extra, "protocol", ksr_page_protocol(run->page));
	return true;
}

/* The steps with a plain text value (a URL, chords): record it, call. */
typedef ksr_page_status (*text_op)(ksr_page *p, const char *text, ksr_deadline d, ksr_err *err);

static void on_text(ksr_run *run, const ksr_step *step, ksr_step_result *res, const char *field,
                    text_op op)
{
	double secs;
	ksr_err err = {0};
	if (!begin(run, res))
		return;
	ksr_deadline d = step_deadline(run, step, &secs);
	cJSON_AddStringToObject(res->extra, field, step->text);
	finish(run, step, op(run->page, step->text, d, &err), &err, secs, res);
}

void ksr_exec_cdp_navigate(ksr_run *run, const ksr_step *step, const ksr_step_target *t,
                           ksr_step_result *res)
{
	(void)t;
	on_text(run, step, res, "url", ksr_page_navigate);
}

/* The element steps share one shape: resolve the selector (or list id), act
 * on it within the step's timeout, record its box. */
typedef ksr_page_status (*element_op)(ksr_run *run, const ksr_step *step, const char *ref,
                                      ksr_deadline d, ksr_page_hit *hit, ksr_err *err);

static void on_element(ksr_run *run, const ksr_step *step, ksr_step_result *res, element_op op,
                       bool click_point)
{
	double secs;
	ksr_err err = {0};
	ksr_page_hit hit = {.x = NAN};
	if (!begin(run, res))
		return;
	ksr_deadline d = step_deadline(run, step, &secs);
	const char *ref = step_ref(run, step, res);
	ksr_page_status st = op(run, step, ref, d, &hit, &err);
	if (!click_point)
		hit.x = NAN;
	add_box(res, &hit);
	if (hit.attempts > 1) /* the page received none before the last */
		cJSON_AddNumberToObject(res->extra, "click_attempts", hit.attempts);
	finish(run, step, st, &err, secs, res);
}

static ksr_page_status op_click(ksr_run *run, const ksr_step *step, const char *ref, ksr_deadline d,
                                ksr_page_hit *hit, ksr_err *err)
{
	(void)step;
	return ksr_page_click(run->page, ref, d, hit, err);
}

static ksr_page_status op_fill(ksr_run *run, const ksr_step *step, const char *ref, ksr_deadline d,
                               ksr_page_hit *hit, ksr_err *err)
{
	return ksr_page_fill(run->page, ref, step->fill_text, d, hit, err);
}

static ksr_page_status op_type(ksr_run *run, const ksr_step *step, const char *ref, ksr_deadline d,
                               ksr_page_hit *hit, ksr_err *err)
{
	return ksr_page_type(run->page, ref, step->fill_text, d, hit, err);
}

static ksr_page_status op_wait(ksr_run *run, const ksr_step *step, const char *ref, ksr_deadline d,
                               ksr_page_hit *hit, ksr_err *err)
{
	return ksr_page_wait_for(run->page, ref, step->wait_state, d, hit, err);
}

static ksr_page_status op_hover(ksr_run *run, const ksr_step *step, const char *ref, ksr_deadline d,
                                ksr_page_hit *hit, ksr_err *err)
{
	(void)step;
	return ksr_page_hover(run->page, ref, d, hit, err);
}

void ksr_cdp_step_hover(ksr_run *run, const ksr_step *step, ksr_step_result *res)
{
	on_element(run, step, res, op_hover, true);
	cJSON_AddStringToObject(res->extra, "backend", "cdp"); /* the page's mouse, not XTest */
	res->acted = res->status == KSR_STEP_OK;
}

void ksr_exec_cdp_click(ksr_run *run, const ksr_step *step, const ksr_step_target *t,
                        ksr_step_result *res)
{
	(void)t;
	on_element(run, step, res, op_click, true);
}

void ksr_exec_cdp_fill(ksr_run *run, const ksr_step *step, const ksr_step_target *t,
                       ksr_step_result *res)
{
	(void)t;
	on_element(run, step, res, op_fill, false);
}

void ksr_exec_cdp_type(ksr_run *run, const ksr_step *step, const ksr_step_target *t,
                       ksr_step_result *res)
{
	(void)t;
	on_element(run, step, res, op_type, false);
}

void ksr_exec_cdp_wait(ksr_run *run, const ksr_step *step, const ksr_step_target *t,
                       ksr_step_result *res)
{
	(void)t;
	if (!res->extra)
		res->extra = cJSON_CreateObject();
	cJSON_AddStringToObject(res->extra, "state",
	                        step->wait_state ? step->wait_state : "visible");
	on_element(run, step, res, op_wait, false);
}

void ksr_exec_cdp_press(ksr_run *run, const ksr_step *step, const ksr_step_target *t,
                        ksr_step_result *res)
{
	(void)t;
	on_text(run, step, res, "keys", ksr_page_press);
}

void ksr_exec_cdp_eval(ksr_run *run, const ksr_step *step, const ksr_step_target *t,
                       ksr_step_result *res)
{
	(void)t;
	double secs;
	ksr_err err = {0};
	bool truthy = false;
	cJSON *v = NULL;
	if (!begin(run, res))
		return;
	ksr_deadline d = step_deadline(run, step, &secs);
	ksr_page_status st = ksr_page_eval(run->page, step->text, d, &truthy, &v, &err);
	char *text = v ? ksr_json_print(v, false) : NULL;
	cJSON_Delete(v);
	if (text && strlen(text) > EVAL_VALUE_MAX)
		strcpy(text + EVAL_VALUE_MAX - 3, "...");
	if (text)
		cJSON_AddStringToObject(res->extra, "value", text);
	if (st == KSR_PAGE_OK && !truthy)
		ksr_step_fail(res, KSR_STEP_FAILED, KSR_OUTCOME_CHECK_FAILED,
		              "the expression's value is falsy (%.300s)%s",
		              text ? text : "undefined", "");
	free(text);
	finish(run, step, st, &err, secs, res);
}

/* ---- the page's errors ------------------------------------------------------ */

#define PAGE_ERROR_QUOTE 300 /* bytes of the first error's text in the concern */

static void emit_page_error(ksr_run *run, const cJSON *e, int line)
{
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "kind", ksr_json_str(e, "kind", "console"));
	cJSON_AddStringToObject(f, "text", ksr_json_str(e, "text", ""));
	if (ksr_json_str(e, "source", NULL))
		cJSON_AddStringToObject(f, "source", ksr_json_str(e, "source", NULL));
	if (line > 0)
		cJSON_AddNumberToObject(f, "line", line);
	cJSON_AddStringToObject(f, "protocol", ksr_page_protocol(run->page));
	ksr_run_emit(run, "page_error", f);
}

/* A page error is not a failure (a deterministic check decides that): it is
 * worth a person's look, so a concern, one for all that came at once. */
void ksr_run_page_errors(ksr_run *run, const char *during, int line)
{
	if (!run->page)
		return;
	int dropped = 0;
	cJSON *errs = ksr_page_take_errors(run->page, &dropped), *e;
	int n = cJSON_GetArraySize(errs);
	cJSON_ArrayForEach(e, errs) emit_page_error(run, e, line);
	if (n > 0) {
		const cJSON *first = cJSON_GetArrayItem(errs, 0);
		bool exception = !strcmp(ksr_json_str(first, "kind", ""), "exception");
		char more[64] = "";
		if (n + dropped > 1)
			snprintf(more, sizeof more, " (%d errors in all%s)", n + dropped,
			         dropped ? ", not all kept" : "");
		ksr_run_concern(run, KSR_CONCERN_PAGE_ERROR, line,
		                "the page reported %s during %s%s: %.*s",
		                exception ? "an uncaught exception" : "a console error", during,
		                more, PAGE_ERROR_QUOTE, ksr_json_str(first, "text", ""));
	}
	cJSON_Delete(errs);
}

/* ---- page: ---------------------------------------------------------------- */

static int page_verdict(const ksr_check *c, const ksr_page_info *p, char *why, size_t len)
{
	if (!p->found) {
		snprintf(why, len, "no element matches %s", c->selector);
		return 0;
	}
	if (c->page_text && (!p->text || !strstr(p->text, c->page_text))) {
		snprintf(why, len, "%s's text \"%.120s\" does not contain \"%s\"", c->selector,
		         p->text ? p->text : "", c->page_text);
		return 0;
	}
	if (c->url && !ksr_pattern_match(c->url, p->url)) {
		snprintf(why, len, "the URL %.200s does not match %s", p->url ? p->url : "",
		         ksr_pattern_source(c->url));
		return 0;
	}
	if (c->title && !ksr_pattern_match(c->title, p->title)) {
		snprintf(why, len, "the title \"%.200s\" does not match %s",
		         p->title ? p->title : "", ksr_pattern_source(c->title));
		return 0;
	}
	snprintf(why, len, "%s matches on %.200s", c->selector ? c->selector : "the page",
	         p->url ? p->url : "");
	return 1;
}

int ksr_check_page(ksr_run *run, const ksr_check *c, char *why, size_t len)
{
	if (!run->page) {
		snprintf(why, len, "no browser is attached (CDP or WebDriver BiDi)");
		return -1;
	}
	ksr_err err = {0};
	ksr_page_info p = {0};
	ksr_deadline d =
	        ksr_deadline_min(run->work, ksr_deadline_in_ms((int64_t)(c->timeout_s * 1000)));
	ksr_page_status st = ksr_page_state(run->page, c->selector, d, &p, &err);
	int r = 0;
	if (st == KSR_PAGE_OK)
		r = page_verdict(c, &p, why, len);
	else if (st == KSR_PAGE_CRASHED) {
		ksr_run_fail(run, KSR_OUTCOME_CRASHED, c->pos.line, "the page's renderer crashed");
		snprintf(why, len, "the page's renderer crashed");
		r = -1;
	} else if (st == KSR_PAGE_CLOSED || st == KSR_PAGE_CANCELLED) {
		snprintf(why, len, "%s", err.msg);
		r = -1;
	} else
		snprintf(why, len, "%s", err.msg);
	ksr_page_info_clear(&p);
	return r;
}
