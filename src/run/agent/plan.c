/* Plan replay and plan.yaml. Replay runs each step through the ordinary step
 * runner (the same executors, checks and step rows as steps:), then its post:
 * checks, so a plan step and a scripted step read the same in the report. */
#include "run/agent/plan.h"

#include "run/actions/runner.h"
#include "ksr/scenario_yaml.h"
#include "ksr/strbuf.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void emit_post(ksr_run *run, const ksr_step *step, const ksr_check *c, ksr_check_status st,
                      const char *detail)
{
	cJSON *f = cJSON_CreateObject();
	cJSON_AddNumberToObject(f, "plan_step", step->index);
	cJSON_AddNumberToObject(f, "line", c->pos.line);
	cJSON_AddStringToObject(f, "kind", c->info->name);
	cJSON_AddStringToObject(f, "status", ksr_check_status_word(st));
	cJSON_AddStringToObject(f, "detail", detail);
	ksr_run_emit(run, "plan.post", f);
}

static void emit_handover(ksr_run *run, const ksr_step *step, const ksr_check *c,
                          const char *detail)
{
	cJSON *f = cJSON_CreateObject();
	cJSON_AddNumberToObject(f, "plan_step", step->index);
	cJSON_AddNumberToObject(f, "line", step->pos.line);
	cJSON_AddStringToObject(f, "kind", step->info->name);
	cJSON_AddStringToObject(f, "check", c->info->name);
	cJSON_AddNumberToObject(f, "check_line", c->pos.line);
	cJSON_AddStringToObject(f, "detail", detail);
	cJSON_AddStringToObject(f, "to", "goal-loop");
	ksr_run_emit(run, "plan.handover", f);
}

/* The step's post: checks in order; the first that does not hold is returned
 * (NULL: all held; *ended: the run ended or a backend was missing, recorded). */
static const ksr_check *first_failed_post(ksr_run *run, const ksr_step *step, char *detail,
                                          size_t len, bool *ended)
{
	*ended = false;
	for (size_t i = 0; i < step->n_post; i++) {
		const ksr_check *c = &step->post[i];
		ksr_check_status st = ksr_run_check(run, c, detail, len);
		emit_post(run, step, c, st, detail);
		if (st == KSR_CHECK_HELD)
			continue;
		if (st == KSR_CHECK_ERROR && !run->failed)
			ksr_run_fail_setup(run, KSR_OUTCOME_BACKEND_UNAVAILABLE, c->pos.line,
			                   "plan step %d's post: %s could not be evaluated: %s",
			                   step->index, c->info->name, detail);
		*ended = st != KSR_CHECK_NOT_HELD;
		return c;
	}
	return NULL;
}

static ksr_plan_state post_failed(ksr_run *run, const ksr_step *step, const ksr_check *c,
                                  const char *detail, char *note, size_t len)
{
	if (run->sc->goal) {
		emit_handover(run, step, c, detail);
		snprintf(note, len,
		         "plan step %d (line %d): post: %s did not hold; handed over to "
		         "the goal loop",
		         step->index, step->pos.line, c->info->name);
		return KSR_PLAN_HANDED_OVER;
	}
	ksr_run_fail(run, KSR_OUTCOME_CHECK_FAILED, c->pos.line,
	             "plan step %d (line %d): post: %s did not hold: %s", step->index,
	             step->pos.line, c->info->name, detail);
	return KSR_PLAN_FAILED;
}

ksr_plan_state ksr_plan_replay(ksr_run *run, char *note, size_t len)
{
	const ksr_step_list *plan = &run->sc->plan;
	run->plan_state = KSR_PLAN_FAILED;
	for (size_t i = 0; i < plan->len; i++) {
		const ksr_step *step = &plan->items[i];
		/* One step at a time through the ordinary runner (checks:, rows). */
		ksr_step_list one = {.items = (ksr_step *)step, .len = 1};
		if (!ksr_steps_run(run, &one))
			return run->plan_state;
		char detail[400] = "";
		bool ended;
		const ksr_check *bad = first_failed_post(run, step, detail, sizeof detail, &ended);
		if (ended)
			return run->plan_state;
		if (bad)
			return run->plan_state = post_failed(run, step, bad, detail, note, len);
	}
	snprintf(note, len, "%zu plan step(s) replayed, every post: held", plan->len);
	return run->plan_state = KSR_PLAN_COMPLETED;
}

/* ---- plan.yaml ---------------------------------------------------------------- */

struct ksr_plan_out {
	cJSON *steps; /* [{action: [lines], post: [lines]}] */
};

ksr_plan_out *ksr_plan_out_new(void)
{
	ksr_plan_out *p = ksr_xmalloc(sizeof *p);
	p->steps = cJSON_CreateArray();
	return p;
}

void ksr_plan_out_free(ksr_plan_out *p)
{
	if (!p)
		return;
	cJSON_Delete(p->steps);
	free(p);
}

static cJSON *lines(const char *const *l, size_t n)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; i < n; i++)
		if (l[i])
			cJSON_AddItemToArray(a, cJSON_CreateString(l[i]));
	return a;
}

void ksr_plan_out_step(ksr_plan_out *p, const char *const *action, size_t n_action,
                       const char *const *post, size_t n_post)
{
	cJSON *s = cJSON_CreateObject();
	cJSON_AddItemToObject(s, "action", lines(action, n_action));
	cJSON_AddItemToObject(s, "post", lines(post, n_post));
	cJSON_AddItemToArray(p->steps, s);
}

size_t ksr_plan_out_len(const ksr_plan_out *p)
{
	return p ? (size_t)cJSON_GetArraySize(p->steps) : 0;
}

char *ksr_plan_quote(const char *s)
{
	return ksr_yaml_scalar(s);
}

static void put_comment(ksr_strbuf *b, const char *goal)
{
	ksr_strbuf_addf(
	        b, "# Compiled by kasm-session-runtime from a goal run that passed.\n# goal: ");
	for (const char *p = goal ? goal : ""; *p; p++)
		ksr_strbuf_addf(b, "%c", *p == '\n' ? ' ' : *p);
	ksr_strbuf_addf(
	        b, "\n# Paste the plan: below into the scenario (beside goal: and success:, which\n"
	           "# stay as they are): it replays without the planner, and a post: that no\n"
	           "# longer holds hands over to the goal loop.\n");
}

char *ksr_plan_out_render(const ksr_plan_out *p, const char *goal, bool needs_model)
{
	ksr_strbuf b = {0};
	put_comment(&b, goal);
	ksr_strbuf_addf(
	        &b, needs_model ? "# It has rung-3 steps (click_grounded): replaying them needs a "
	                          "grounder model.\n"
	                        : "# It needs no model to replay.\n");
	ksr_strbuf_addf(&b, "plan:\n");
	const cJSON *s;
	cJSON_ArrayForEach(s, p->steps)
	{
		const cJSON *l;
		bool first = true;
		cJSON_ArrayForEach(l, cJSON_GetObjectItem(s, "action"))
		{
			ksr_strbuf_addf(&b, "  %s %s\n", first ? "-" : " ", l->valuestring);
			first = false;
		}
		ksr_strbuf_addf(&b, "    post:\n");
		cJSON_ArrayForEach(l, cJSON_GetObjectItem(s, "post"))
		        ksr_strbuf_addf(&b, "      - %s\n", l->valuestring);
	}
	return ksr_strbuf_take(&b);
}

/* A success: check as a post: line, written by its row's shape
 * (ksr/scenario_yaml.h). A check that asks a model is left out: a plan
 * replays without one unless a step needs it. */
char *ksr_plan_check_line(const ksr_check *c)
{
	return c->info->needs_model ? NULL : ksr_check_yaml(c);
}
