/* The goal-loop stage: budgets, the turn (describe, plan, guard, act),
 * success: checks deciding the verdict, and plan.yaml for a run that passed.
 * The planner's word never passes a run: success: checks do (docs/agentic.md). */
#include "run/agent/goal.h"
#include "ksr/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/page.h"
#include "run/vision/judge.h"
#include "ksr/scenario_yaml.h"
#include "ksr/strbuf.h"
#include "run/actions/runner.h"
#include "run/agent/plan.h"

#define PLAN_CALL_MS 60000
#define HISTORY_MAX  12 /* turns quoted back to the planner */
#define UNUSABLE_MAX 2  /* planner answers in a row that were no answer */
#define PAGE_MAX     60
#define POSTS_MAX    8

typedef struct loop {
	ksr_run *run;
	ksr_model_config planner, judge;
	bool have_judge;
	ksr_goal_offer offer;
	cJSON *history; /* strings, one a turn */
	int turn, unusable;
	size_t calls_at_start; /* events before the loop: model_call counting starts after */
	ksr_deadline until;    /* goal_budget seconds, inside the working deadline */
	bool claimed, success;
	char claim[600];
	const char *ended_by; /* "done", "turns", "seconds", "model_calls" */
	ksr_plan_out *plan;
	bool plan_needs_model;
	cJSON *turns; /* the goal.turn events' fields, for goal.end */
} loop;

/* ---- the offer --------------------------------------------------------------- */

static void offer_probe_names(loop *l)
{
	/* The probe's recorded summary: what the run saw, not a new walk. */
	const cJSON *e;
	cJSON_ArrayForEach(e, ksr_events_all(l->run->ev))
	{
		const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(e, "event"));
		if (!kind || strcmp(kind, "accessibility"))
			continue;
		const cJSON *c;
		cJSON_ArrayForEach(c, cJSON_GetObjectItem(e, "controls"))
		{
			if (cJSON_GetArraySize(cJSON_GetObjectItem(c, "actions")) > 0)
				ksr_goal_offer_add(
				        &l->offer.elements, &l->offer.n_elements,
				        cJSON_GetStringValue(cJSON_GetObjectItem(c, "name")));
		}
	}
}

static void offer_page(loop *l)
{
	ksr_page_element_list els = {0};
	ksr_err err = {0};
	ksr_run *run = l->run;
	for (size_t i = 0; i < run->sc->n_cdp_targets; i++)
		ksr_goal_offer_add(&l->offer.cdp_targets, &l->offer.n_cdp_targets,
		                   run->sc->cdp_targets[i].name);
	ksr_deadline d = ksr_deadline_min(run->work, ksr_deadline_in_ms(5000));
	if (ksr_page_list_interactive(run->page, d, &els, &err) != KSR_PAGE_OK)
		return;
	for (size_t i = 0; i < els.len && l->offer.n_page < PAGE_MAX; i++) {
		size_t n = l->offer.n_page;
		ksr_goal_offer_add(&l->offer.page_ids, &l->offer.n_page, els.items[i].id);
		if (l->offer.n_page == n)
			continue;
		l->offer.page_labels = ksr_xrealloc(l->offer.page_labels,
		                                    l->offer.n_page * sizeof *l->offer.page_labels);
		l->offer.page_labels[n] =
		        ksr_xasprintf("%s %s", els.items[i].role ? els.items[i].role : "",
		                      els.items[i].name ? els.items[i].name : "");
	}
	ksr_page_element_list_clear(&els);
}

static void build_offer(loop *l)
{
	ksr_goal_offer_clear(&l->offer);
	for (size_t i = 0; i < l->run->sc->n_targets; i++)
		ksr_goal_offer_add(&l->offer.targets, &l->offer.n_targets,
		                   l->run->sc->targets[i].name);
	offer_probe_names(l);
	if (l->run->page)
		offer_page(l);
	ksr_model_config g;
	char why[300];
	l->offer.grounded = ksr_judge_config(KSR_MODEL_GROUNDER, &g, why, sizeof why) > 0;
	explicit_bzero(g.api_key, sizeof g.api_key);
}

/* ---- budgets ------------------------------------------------------------------ */

static int model_calls(const loop *l)
{
	int n = 0;
	const cJSON *e;
	size_t i = 0;
	cJSON_ArrayForEach(e, ksr_events_all(l->run->ev))
	{
		const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(e, "event"));
		if (i++ >= l->calls_at_start && kind && !strcmp(kind, "model_call"))
			n++;
	}
	return n;
}

/* The budget that is spent, or NULL. A turn needs two calls (describe, plan). */
static const char *budget_spent(loop *l)
{
	const ksr_scenario *sc = l->run->sc;
	if (l->turn >= sc->goal_turns)
		return "turns";
	if (ksr_deadline_passed(l->until))
		return "seconds";
	if (model_calls(l) + (l->have_judge ? 2 : 1) > sc->goal_model_calls)
		return "model_calls";
	return NULL;
}

/* ---- one turn ------------------------------------------------------------------- */

static void describe(loop *l, char *saw, size_t len)
{
	ksr_model_image img = {0};
	ksr_err err = {0};
	ksr_model_usage u = {0};
	if (!l->have_judge) {
		snprintf(saw, len, "(no judge model is configured: the screen was not described)");
		return;
	}
	ksr_deadline d = ksr_deadline_min(l->until, ksr_deadline_in_ms(KSR_JUDGE_CALL_S * 1000));
	if (ksr_judge_capture(l->run, NULL, &img, &err) < 0) {
		snprintf(saw, len, "(the screen could not be captured: %.300s)", err.msg);
		return;
	}
	if (ksr_model_describe_screen(&l->judge, &img, d, saw, len, &u) < 0)
		snprintf(saw, len, "(the judge could not describe the screen: %.300s)", u.error);
	ksr_judge_emit_call(l->run, &l->judge, "goal-describe", &u);
	ksr_model_redact(saw, len, l->judge.api_key);
	ksr_model_image_clear(&img);
}

static char *prompt_for(const loop *l, const char *saw)
{
	char *tools = ksr_goal_offer_text(&l->offer);
	ksr_strbuf hb = {0};
	int n = cJSON_GetArraySize(l->history);
	for (int i = n > HISTORY_MAX ? n - HISTORY_MAX : 0; i < n; i++)
		ksr_strbuf_addf(&hb, "%s\n", cJSON_GetArrayItem(l->history, i)->valuestring);
	char *hist = ksr_strbuf_take(&hb);
	char *p = ksr_xasprintf(
	        "You operate a desktop application under test, one action a turn, to reach "
	        "this goal:\n%s\n\nThe screen now (described by another model; you do not see "
	        "it):\n%s\n\nHistory:\n%s\nTools (turn %d of at most %d):\n%s\n"
	        "Answer with one JSON object {\"tool\": ..., and the tool's fields}. Name targets "
	        "and elements exactly as listed. Never give coordinates, pixel positions or CSS "
	        "selectors: they are rejected. Call done when the goal is reached (outcome "
	        "\"success\") or cannot be reached (\"failure\"), with a one-sentence claim.",
	        l->run->sc->goal, saw, n ? hist : "(none yet)\n", l->turn, l->run->sc->goal_turns,
	        tools);
	free(tools);
	free(hist);
	return p;
}

static cJSON *ask_planner(loop *l, const char *saw)
{
	ksr_model_usage u = {0};
	char *prompt = prompt_for(l, saw);
	ksr_deadline d = ksr_deadline_min(l->until, ksr_deadline_in_ms(PLAN_CALL_MS));
	const char *tools[KSR_GOAL_TOOL_COUNT];
	size_t n_tools;
	ksr_goal_tool_names(tools, &n_tools);
	cJSON *a = ksr_model_plan_turn(&l->planner, prompt, tools, n_tools, d, &u);
	free(prompt);
	ksr_judge_emit_call(l->run, &l->planner, "plan", &u);
	l->unusable = a ? 0 : l->unusable + 1;
	if (!a)
		cJSON_AddItemToArray(l->history,
		                     cJSON_CreateString("(your last answer was unusable: answer "
		                                        "with one JSON object naming a tool)"));
	return a;
}

static void history_add(loop *l, const char *chose, const char *result)
{
	char *h = ksr_xasprintf("turn %d: %s -> %s", l->turn, chose, result);
	cJSON_AddItemToArray(l->history, cJSON_CreateString(h));
	free(h);
}

static void emit_turn(loop *l, const char *saw, const cJSON *chose, const char *status,
                      const char *reason, cJSON *details)
{
	cJSON *f = cJSON_CreateObject();
	cJSON_AddNumberToObject(f, "turn", l->turn);
	cJSON_AddStringToObject(f, "saw", saw);
	cJSON_AddItemToObject(f, "chose",
	                      chose ? cJSON_Duplicate(chose, true) : cJSON_CreateNull());
	cJSON *r = cJSON_AddObjectToObject(f, "result");
	cJSON_AddStringToObject(r, "status", status);
	cJSON_AddStringToObject(r, "reason", reason);
	if (details)
		cJSON_AddItemToObject(r, "details", details);
	cJSON_AddItemToArray(l->turns, cJSON_Duplicate(f, true));
	ksr_run_emit(l->run, "goal.turn", f);
}

/* ---- acting: a transient step through the step runner --------------------------- */

/* A title as an anchored, escaped pattern. */
static char *title_pattern(const char *title)
{
	size_t n = strlen(title);
	char *out = ksr_xmalloc(2 * n + 3), *o = out;
	*o++ = '^';
	for (const char *p = title; *p; p++) {
		if (strchr("\\^$.|?*+()[]{}", *p))
			*o++ = '\\';
		*o++ = *p;
	}
	*o++ = '$';
	*o = '\0';
	return out;
}

static cJSON *window_titles(ksr_run *run)
{
	cJSON *t = cJSON_CreateArray();
	ksr_window_list wl = {0};
	ksr_err err = {0};
	if (run->x && ksr_x11_list_windows(run->x, &wl, &err) == 0)
		for (size_t i = 0; i < wl.len; i++)
			if (wl.items[i].title && *wl.items[i].title)
				cJSON_AddItemToArray(t, cJSON_CreateString(wl.items[i].title));
	ksr_window_list_clear(&wl);
	return t;
}

static bool has_title(const cJSON *titles, const char *s)
{
	const cJSON *e;
	cJSON_ArrayForEach(e, titles) if (!strcmp(e->valuestring, s)) return true;
	return false;
}

/* Which success: checks hold now (one evaluation each; model checks never). */
static unsigned long success_now(ksr_run *run)
{
	unsigned long bits = 0;
	for (size_t i = 0; i < run->sc->success.len && i < 8 * sizeof bits; i++) {
		const ksr_check *c = &run->sc->success.items[i];
		char why[300];
		if (!c->info->needs_model && ksr_check_once(run, c, why, sizeof why) > 0)
			bits |= 1ul << i;
	}
	return bits;
}

static void add_post(char **post, size_t *n, char *line)
{
	if (line && *n < POSTS_MAX)
		post[(*n)++] = line;
	else
		free(line);
}

static char *kv(const char *key, const char *value)
{
	char *q = ksr_plan_quote(value);
	char *s = ksr_xasprintf("%s: %s", key, q);
	free(q);
	return s;
}

/* The deterministic postconditions observed after the action: a window that
 * appeared or went away, a success: check that now holds; else the app's
 * window is still there. */
static void compile_step(loop *l, char **action, size_t n_action, const cJSON *before,
                         unsigned long ok_before)
{
	ksr_run *run = l->run;
	char *post[POSTS_MAX];
	size_t n = 0;
	cJSON *after = window_titles(run);
	const cJSON *e;
	cJSON_ArrayForEach(e, after) if (!has_title(before, e->valuestring))
	{
		char *re = title_pattern(e->valuestring);
		add_post(post, &n, kv("window", re));
		free(re);
	}
	cJSON_ArrayForEach(e, before) if (!has_title(after, e->valuestring))
	{
		char *re = title_pattern(e->valuestring);
		add_post(post, &n, kv("no_window", re));
		free(re);
	}
	unsigned long ok_after = success_now(run);
	for (size_t i = 0; i < run->sc->success.len && i < 8 * sizeof ok_after; i++)
		if ((ok_after & ~ok_before) >> i & 1)
			add_post(post, &n, ksr_plan_check_line(&run->sc->success.items[i]));
	if (n == 0 && run->sc->window)
		add_post(post, &n, kv("window", ksr_pattern_source(run->sc->window)));
	else if (n == 0)
		add_post(post, &n, kv("window", "."));
	ksr_plan_out_step(l->plan, (const char *const *)action, n_action, (const char *const *)post,
	                  n);
	for (size_t i = 0; i < n; i++)
		free(post[i]);
	cJSON_Delete(after);
}

/* The transient step a choice becomes (a key choice's chords parsed here,
 * once, as the loader does for a scenario's step; the guard accepted them). */
static void make_step(loop *l, const ksr_goal_choice *c, ksr_step *st)
{
	const ksr_scenario *sc = l->run->sc;
	st->index = l->turn;
	st->pos = sc->goal_pos;
	st->info = ksr_step_kind_info(ksr_goal_tools(&(size_t){0})[c->tool].step);
	switch (c->tool) {
	case KSR_GOAL_CLICK_TARGET: {
		const ksr_target *t = ksr_scenario_find_target(sc, c->name);
		st->point = (ksr_point){
		        .kind = KSR_POINT_DECLARED, .fx = t->fx, .fy = t->fy, .declared = t};
		st->target_window = t->window;
		break;
	}
	case KSR_GOAL_PAGE_CLICK:
	case KSR_GOAL_PAGE_ELEMENT:
		st->text = (char *)c->name;
		break;
	case KSR_GOAL_CLICK_ELEMENT:
		st->name.text = (char *)c->name; /* exact: the name as the probe read it */
		break;
	case KSR_GOAL_KEY:
		st->text = (char *)c->text;
		ksr_keys_parse(c->text, &st->chords, &st->n_chords, &(ksr_err){0});
		break;
	case KSR_GOAL_TYPE:
		st->text = (char *)c->text;
		break;
	default: /* click_grounded */
		st->text = (char *)c->text;
		st->expect = (char *)c->expect;
		l->plan_needs_model = true;
	}
}

static const char *status_word(ksr_step_status s)
{
	return s == KSR_STEP_OK ? "ok" : s == KSR_STEP_FAILED ? "failed" : "error";
}

static cJSON *result_details(const ksr_step *st, ksr_step_result *res)
{
	cJSON *d = res->extra ? res->extra : cJSON_CreateObject();
	res->extra = NULL;
	cJSON_AddStringToObject(d, "kind", st->info->name);
	cJSON_AddStringToObject(d, "backend", ksr_backend_name(st->info->backend));
	if (res->rung)
		cJSON_AddStringToObject(d, "rung", res->rung);
	if (res->has_pixel) {
		cJSON *p = cJSON_AddObjectToObject(d, "pixel");
		cJSON_AddNumberToObject(p, "x", res->px);
		cJSON_AddNumberToObject(p, "y", res->py);
	}
	return d;
}

static void act_wait(loop *l, const ksr_goal_choice *c, const char *saw, const cJSON *a)
{
	ksr_deadline d =
	        ksr_deadline_min(l->until, ksr_deadline_in_ms((int64_t)(c->seconds * 1000)));
	if (ksr_sleep_until(d) == KSR_WAIT_CANCELLED) {
		ksr_run_wait_ended_run(l->run, KSR_WAIT_CANCELLED, l->run->sc->goal_pos.line,
		                       "the goal loop");
		return;
	}
	char what[64];
	snprintf(what, sizeof what, "waited %g s", c->seconds);
	history_add(l, "wait", what);
	emit_turn(l, saw, a, "ok", what, NULL);
}

static void act(loop *l, const ksr_goal_choice *c, const char *saw, const cJSON *a)
{
	if (c->tool == KSR_GOAL_WAIT) {
		act_wait(l, c, saw, a);
		return;
	}
	ksr_run *run = l->run;
	ksr_step st = {0};
	make_step(l, c, &st);
	size_t n_action = 0;
	char **action = ksr_step_yaml(&st, &n_action); /* its plan.yaml form */
	cJSON *before = window_titles(run);
	unsigned long ok_before = success_now(run);
	ksr_step_result res = {.extra = cJSON_CreateObject()};
	ksr_step_run(run, &st, &res, NULL);
	const char *reason = res.status == KSR_STEP_OK ? "done" : res.reason;
	char *chose = ksr_json_print(a, false);
	history_add(l, chose, res.status == KSR_STEP_OK ? "done" : res.reason);
	free(chose);
	if (res.status == KSR_STEP_OK && !run->failed)
		compile_step(l, action, n_action, before, ok_before);
	emit_turn(l, saw, a, status_word(res.status), reason, result_details(&st, &res));
	cJSON_Delete(before);
	ksr_yaml_lines_free(action, n_action);
	ksr_keys_free(st.chords);
}

static bool one_turn(loop *l)
{
	char saw[1500] = "", why[400] = "";
	describe(l, saw, sizeof saw);
	if (l->run->failed)
		return false;
	cJSON *a = ask_planner(l, saw);
	if (l->run->failed) {
		cJSON_Delete(a);
		return false;
	}
	ksr_goal_choice c;
	if (!a) {
		emit_turn(l, saw, NULL, "unusable", "the planner gave no usable answer", NULL);
	} else if (ksr_goal_validate(&l->offer, a, &c, why, sizeof why) < 0) {
		char *chose = ksr_json_print(a, false);
		history_add(l, chose, why);
		emit_turn(l, saw, a, "rejected", why, NULL);
		free(chose);
	} else if (c.tool == KSR_GOAL_DONE) {
		l->claimed = true, l->success = c.success, l->ended_by = "done";
		snprintf(l->claim, sizeof l->claim, "%s", c.claim);
		emit_turn(l, saw, a, "done",
		          c.success ? "the planner claims success" : "the planner claims failure",
		          NULL);
	} else {
		act(l, &c, saw, a);
	}
	cJSON_Delete(a);
	return !l->claimed && !l->run->failed;
}

/* ---- deciding ------------------------------------------------------------------- */

static void write_plan(loop *l)
{
	ksr_run *run = l->run;
	if (!ksr_plan_out_len(l->plan))
		return;
	char *text = ksr_plan_out_render(l->plan, run->sc->goal, l->plan_needs_model);
	ksr_err err = {0};
	if (ksr_evidence_write_text(run->out, "plan.yaml", text, strlen(text), &err) == 0) {
		cJSON *a = cJSON_CreateObject();
		cJSON_AddStringToObject(a, "name", "plan.yaml");
		cJSON_AddStringToObject(a, "kind", "other");
		cJSON_AddStringToObject(
		        a, "description",
		        "the goal run's steps with postconditions, to paste as plan:");
		ksr_run_emit(run, "artifact", a);
	}
	free(text);
}

/* Every success: check in order; the first that does not hold is returned in
 * *failed (-1: all held). false: the run ended or a check could not run. */
static bool run_success_checks(ksr_run *run, cJSON *rows, int *failed, char *detail, size_t len)
{
	*failed = -1;
	for (size_t i = 0; i < run->sc->success.len; i++) {
		const ksr_check *c = &run->sc->success.items[i];
		char d[400] = "";
		ksr_check_status st = ksr_run_check_row(run, c, rows, d, sizeof d);
		if (st == KSR_CHECK_ENDED)
			return false;
		if (st == KSR_CHECK_ERROR) {
			ksr_run_fail_setup(run, KSR_OUTCOME_BACKEND_UNAVAILABLE, c->pos.line,
			                   "success: %s could not be evaluated: %s", c->info->name,
			                   d);
			return false;
		}
		if (st == KSR_CHECK_NOT_HELD && *failed < 0) {
			*failed = (int)i;
			snprintf(detail, len, "%s", d);
		}
	}
	return true;
}

static void emit_end(loop *l, cJSON *checks)
{
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "claim", l->success ? "success" : "failure");
	cJSON_AddStringToObject(f, "claim_text", l->claim);
	cJSON_AddStringToObject(f, "ended_by", l->ended_by ? l->ended_by : "run-ended");
	cJSON_AddNumberToObject(f, "turns", l->turn);
	cJSON_AddNumberToObject(f, "model_calls", model_calls(l));
	cJSON_AddItemToObject(f, "success_checks", checks ? checks : cJSON_CreateArray());
	ksr_run_emit(l->run, "goal.end", f);
}

static bool decide(loop *l, char *note, size_t len)
{
	ksr_run *run = l->run;
	cJSON *rows = cJSON_CreateArray();
	char detail[400] = "";
	int bad;
	bool ran = run_success_checks(run, rows, &bad, detail, sizeof detail);
	emit_end(l, rows);
	if (!ran)
		return false;
	if (bad >= 0) {
		const ksr_check *c = &run->sc->success.items[bad];
		if (l->success)
			ksr_run_fail(
			        run, KSR_OUTCOME_CHECK_FAILED, c->pos.line,
			        "the planner claimed success (\"%.200s\"), but success: %s did "
			        "not hold: %.200s",
			        l->claim, c->info->name, detail);
		else
			ksr_run_fail(run, KSR_OUTCOME_CHECK_FAILED, c->pos.line,
			             "the goal was not reached (%.200s), and success: %s did not "
			             "hold: %.200s",
			             l->claim, c->info->name, detail);
		return false;
	}
	if (!l->success)
		ksr_run_concern(run, KSR_CONCERN_UNCONFIRMED_CLAIM, run->sc->goal_pos.line,
		                "the planner ended with failure (%.200s), but every success: "
		                "check holds",
		                l->claim);
	write_plan(l);
	snprintf(note, len, "goal reached in %d turn(s); every success: check holds", l->turn);
	return true;
}

/* After a completed plan: the success: checks alone decide (no model). */
static bool plan_completed(ksr_run *run, char *note, size_t len)
{
	cJSON *rows = cJSON_CreateArray();
	char detail[400] = "";
	int bad;
	bool ran = run_success_checks(run, rows, &bad, detail, sizeof detail);
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "ended_by", "plan-completed");
	cJSON_AddNumberToObject(f, "turns", 0);
	cJSON_AddNumberToObject(f, "model_calls", 0);
	cJSON_AddItemToObject(f, "success_checks", rows);
	ksr_run_emit(run, "goal.end", f);
	if (!ran)
		return false;
	if (bad >= 0) {
		const ksr_check *c = &run->sc->success.items[bad];
		ksr_run_fail(run, KSR_OUTCOME_CHECK_FAILED, c->pos.line,
		             "the plan ran through, but success: %s did not hold: %.200s",
		             c->info->name, detail);
		return false;
	}
	snprintf(note, len, "the plan reached the goal; no planner was needed");
	return true;
}

/* ---- the stage ---------------------------------------------------------------------- */

static bool configure(loop *l)
{
	ksr_run *run = l->run;
	ksr_err err = {0};
	int rc = ksr_model_config_load(KSR_MODEL_PLANNER, NULL, NULL, &l->planner, &err);
	if (rc <= 0) {
		ksr_run_fail_setup(
		        run, KSR_OUTCOME_BACKEND_UNAVAILABLE, run->sc->goal_pos.line,
		        "the goal loop needs a planner model: %s",
		        rc < 0 ? err.msg
		               : "none is configured (set KASM_RUNTIME_MODEL and "
		                 "KASM_RUNTIME_MODEL_URL, or KASM_RUNTIME_PLANNER_MODEL)");
		return false;
	}
	if (!run->sc->success.len) {
		ksr_run_fail_setup(run, KSR_OUTCOME_INVALID_SCENARIO, run->sc->goal_pos.line,
		                   "goal: has no success: checks; the planner's own claim can "
		                   "never pass a run, so this run cannot be decided");
		return false;
	}
	char why[300];
	l->have_judge = ksr_judge_config(KSR_MODEL_JUDGE, &l->judge, why, sizeof why) > 0;
	return true;
}

static void emit_start(loop *l)
{
	const ksr_scenario *sc = l->run->sc;
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "goal", sc->goal);
	cJSON *b = cJSON_AddObjectToObject(f, "budget");
	cJSON_AddNumberToObject(b, "turns", sc->goal_turns);
	cJSON_AddNumberToObject(b, "seconds", sc->goal_seconds);
	cJSON_AddNumberToObject(b, "model_calls", sc->goal_model_calls);
	cJSON_AddBoolToObject(f, "handed_over", l->run->plan_state == KSR_PLAN_HANDED_OVER);
	cJSON_AddStringToObject(f, "planner", l->planner.model);
	cJSON_AddBoolToObject(f, "judge", l->have_judge);
	cJSON_AddBoolToObject(f, "grounder", l->offer.grounded);
	ksr_run_emit(l->run, "goal.start", f);
}

/* Why the loop stops before a turn, or NULL to go on. */
static bool stop_before_turn(loop *l)
{
	ksr_run *run = l->run;
	if (!ksr_blockers_check(run, "goal loop") || run->failed)
		return true;
	if (ksr_deadline_passed(run->work) || ksr_cancelled()) {
		ksr_run_wait_ended_run(run, ksr_cancelled() ? KSR_WAIT_CANCELLED : KSR_WAIT_TIMEOUT,
		                       run->sc->goal_pos.line, "the goal loop");
		return true;
	}
	if (l->unusable >= UNUSABLE_MAX) {
		ksr_run_fail_setup(run, KSR_OUTCOME_BACKEND_UNAVAILABLE, run->sc->goal_pos.line,
		                   "the planner gave no usable answer %d times in a row",
		                   l->unusable);
		return true;
	}
	const char *spent = budget_spent(l);
	if (spent) {
		l->ended_by = spent, l->success = false;
		snprintf(l->claim, sizeof l->claim,
		         "the %s budget was spent before the planner reached the goal", spent);
		return true;
	}
	return false;
}

bool ksr_goal_stage(ksr_run *run, char *note, size_t len)
{
	if (run->plan_state == KSR_PLAN_COMPLETED)
		return plan_completed(run, note, len);
	loop l = {.run = run};
	if (!configure(&l))
		return false;
	l.until = ksr_deadline_min(run->work,
	                           ksr_deadline_in_ms((int64_t)(run->sc->goal_seconds * 1000)));
	l.calls_at_start = (size_t)cJSON_GetArraySize(ksr_events_all(run->ev));
	l.history = cJSON_CreateArray();
	l.turns = cJSON_CreateArray();
	l.plan = ksr_plan_out_new();
	build_offer(&l);
	emit_start(&l);
	while (!stop_before_turn(&l)) {
		l.turn++;
		if (l.turn > 1)
			build_offer(&l); /* the page's elements change as the loop acts */
		if (!one_turn(&l))
			break;
	}
	bool st = false;
	if (!run->failed)
		st = decide(&l, note, len);
	else
		emit_end(&l, NULL);
	explicit_bzero(l.planner.api_key, sizeof l.planner.api_key);
	explicit_bzero(l.judge.api_key, sizeof l.judge.api_key);
	ksr_goal_offer_clear(&l.offer);
	cJSON_Delete(l.history);
	cJSON_Delete(l.turns);
	ksr_plan_out_free(l.plan);
	return st;
}
