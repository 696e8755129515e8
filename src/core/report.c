/* report.json: the recorded events folded into one document
 * (docs/report.md). Nothing here is assembled from anywhere but the events. */
#include "ksr/report.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/error.h"
#include "ksr/json.h"

#ifndef KSR_VERSION
#define KSR_VERSION "unknown"
#endif

/* The report under construction and what folding needs to remember. */
typedef struct fold {
	cJSON *stages, *steps, *grounding, *concerns, *final_checks, *log_tails, *artifacts;
	cJSON *output_errors, *failures, *model_words, *page_errors;
	cJSON *tools; /* desktop mode: one row per `tool` event (a spawned tool) */
	const cJSON *run_start, *app, *launch, *log_cut, *accessibility, *video;
	cJSON *goal; /* goal loop and plan hand-over (goal.*, plan.handover), NULL: none */
	int model_calls, model_failures;
	double model_ms;
	double last_t;
	/* The step rows still running, in start order: a step.end is matched
	 * here (steps nest a few deep at most), not by a scan of every row, so
	 * the report is linear in the steps (16,600 steps took 30 s). */
	cJSON **running;
	size_t n_running, cap_running;
} fold;

static const cJSON *jget(const cJSON *obj, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

static void add_str(cJSON *dst, const char *key, const char *s)
{
	if (s)
		cJSON_AddStringToObject(dst, key, s);
	else
		cJSON_AddNullToObject(dst, key);
}

/* A positive integer field (scenario lines, indexes, pids), or null. */
static void add_pos_int(cJSON *dst, const char *key, const cJSON *src, const char *skey)
{
	const cJSON *it = jget(src, skey);
	if (cJSON_IsNumber(it) && it->valuedouble >= 1)
		cJSON_AddNumberToObject(dst, key, it->valuedouble);
	else
		cJSON_AddNullToObject(dst, key);
}

static void add_ms(cJSON *dst, const char *key, double ms)
{
	cJSON_AddNumberToObject(dst, key, ms < 0 ? 0 : (double)(int64_t)ms);
}

/* A copy of src[skey] when it is of the wanted type, else null. */
static void add_copy(cJSON *dst, const char *key, const cJSON *src, const char *skey,
                     cJSON_bool (*is)(const cJSON *))
{
	const cJSON *it = jget(src, skey);
	if (it && is(it))
		cJSON_AddItemToObject(dst, key, cJSON_Duplicate(it, 1));
	else
		cJSON_AddNullToObject(dst, key);
}

static void add_bool(cJSON *dst, const char *key, const cJSON *src, const char *skey)
{
	cJSON_AddBoolToObject(dst, key, cJSON_IsTrue(jget(src, skey)));
}

/* {x, y[, w, h]} with integer members, or null when any is missing. */
static cJSON *geometry(const cJSON *src, bool size)
{
	static const char *const keys[] = {"x", "y", "w", "h"};
	if (!cJSON_IsObject(src))
		return cJSON_CreateNull();
	cJSON *g = cJSON_CreateObject();
	for (size_t i = 0; i < (size ? 4u : 2u); i++) {
		const cJSON *it = jget(src, keys[i]);
		if (!cJSON_IsNumber(it)) {
			cJSON_Delete(g);
			return cJSON_CreateNull();
		}
		cJSON_AddNumberToObject(g, keys[i], (double)(int64_t)it->valuedouble);
	}
	return g;
}

/* stage.start / stage.end */

static cJSON *find_running(cJSON *rows, const char *key, const cJSON *want)
{
	cJSON *row = NULL, *found = NULL;
	cJSON_ArrayForEach(row, rows)
	{
		if (strcmp(ksr_json_str(row, "status", ""), "running"))
			continue;
		const cJSON *have = jget(row, key);
		if (cJSON_Compare(have, want, 1))
			found = row;
	}
	return found;
}

static void on_stage_start(fold *f, const cJSON *e, double t)
{
	cJSON *row = cJSON_CreateObject();
	add_str(row, "name", ksr_json_str(e, "name", NULL));
	cJSON_AddStringToObject(row, "status", "running");
	cJSON_AddNullToObject(row, "reason");
	add_ms(row, "duration_ms", 0);
	add_ms(row, "start_ms", t);
	cJSON_AddNumberToObject(row, "_t0", t);
	cJSON_AddItemToArray(f->stages, row);
}

static void on_stage_end(fold *f, const cJSON *e, double t)
{
	const cJSON *name = jget(e, "name");
	cJSON *row = name ? find_running(f->stages, "name", name) : NULL;
	if (!row) { /* an end without a start: it began its duration ago */
		on_stage_start(f, e, t - ksr_json_num(e, "duration_ms", 0));
		row = cJSON_GetArrayItem(f->stages, cJSON_GetArraySize(f->stages) - 1);
	}
	double t0 = ksr_json_num(row, "_t0", t);
	cJSON_ReplaceItemInObjectCaseSensitive(
	        row, "status", cJSON_CreateString(ksr_json_str(e, "status", "failed")));
	const char *reason = ksr_json_str(e, "reason", NULL);
	cJSON_ReplaceItemInObjectCaseSensitive(
	        row, "reason", reason ? cJSON_CreateString(reason) : cJSON_CreateNull());
	double ms = ksr_json_num(e, "duration_ms", t - t0);
	cJSON_ReplaceItemInObjectCaseSensitive(
	        row, "duration_ms", cJSON_CreateNumber(ms < 0 ? 0 : (double)(int64_t)ms));
}

/* step.start / step.end */

static cJSON *check_rows(const cJSON *checks)
{
	cJSON *out = cJSON_CreateArray();
	const cJSON *c, *list = cJSON_IsArray(checks) ? checks : NULL;
	cJSON_ArrayForEach(c, list)
	{
		cJSON *row = cJSON_CreateObject();
		add_str(row, "kind", ksr_json_str(c, "kind", NULL));
		add_pos_int(row, "line", c, "line");
		add_str(row, "status", ksr_json_str(c, "status", "error"));
		add_str(row, "detail", ksr_json_str(c, "detail", NULL));
		if (ksr_json_str(c, "read", NULL)) /* text: what it read (docs/report.md) */
			add_str(row, "read", ksr_json_str(c, "read", NULL));
		cJSON_AddItemToArray(out, row);
	}
	return out;
}

/* Fields of a step.end that have no column of their own (the selector and box
 * of a CDP step, the focus note of an input step...) go into "details". */
static cJSON *step_details(const cJSON *e)
{
	static const char *const columns[] = {
	        "t_ms",      "event",  "stage",       "step",    "index",    "line",   "kind",
	        "backend",   "rung",   "window",      "pixel",   "checks",   "status", "screenshot",
	        "annotated", "reason", "duration_ms", "element", "start_ms",
	};
	cJSON *d = cJSON_CreateObject();
	const cJSON *f;
	cJSON_ArrayForEach(f, e)
	{
		bool known = false;
		for (size_t i = 0; i < sizeof columns / sizeof columns[0] && !known; i++)
			known = strcmp(f->string, columns[i]) == 0;
		if (!known)
			cJSON_AddItemToObject(d, f->string, cJSON_Duplicate(f, true));
	}
	return d;
}

static cJSON *step_row(const cJSON *e, const char *status, double t0, double ms)
{
	cJSON *row = cJSON_CreateObject();
	add_pos_int(row, "index", e, "index");
	add_pos_int(row, "line", e, "line");
	add_str(row, "kind", ksr_json_str(e, "kind", NULL));
	add_str(row, "backend", ksr_json_str(e, "backend", NULL));
	add_str(row, "rung", ksr_json_str(e, "rung", NULL));
	cJSON_AddItemToObject(row, "window", geometry(jget(e, "window"), true));
	cJSON_AddItemToObject(row, "pixel", geometry(jget(e, "pixel"), false));
	cJSON_AddItemToObject(row, "checks", check_rows(jget(e, "checks")));
	cJSON_AddStringToObject(row, "status", status);
	add_str(row, "screenshot", ksr_json_str(e, "screenshot", NULL));
	add_str(row, "annotated", ksr_json_str(e, "annotated", NULL));
	add_str(row, "reason", ksr_json_str(e, "reason", NULL));
	add_ms(row, "duration_ms", ms);
	add_ms(row, "start_ms", t0);
	add_copy(row, "element", e, "element", cJSON_IsObject);
	cJSON_AddItemToObject(row, "details", step_details(e));
	return row;
}

static void on_step_start(fold *f, const cJSON *e, double t)
{
	cJSON *row = step_row(e, "running", t, 0);
	cJSON_AddNumberToObject(row, "_t0", t);
	cJSON_AddItemToArray(f->steps, row);
	if (f->n_running == f->cap_running) {
		f->cap_running = f->cap_running ? 2 * f->cap_running : 8;
		f->running = ksr_xrealloc(f->running, f->cap_running * sizeof *f->running);
	}
	f->running[f->n_running++] = row;
}

/* The latest running step row with this index, taken off the running list. */
static cJSON *take_running_step(fold *f, const cJSON *index)
{
	for (size_t i = f->n_running; index && i-- > 0;) {
		cJSON *row = f->running[i];
		if (!cJSON_Compare(jget(row, "index"), index, 1))
			continue;
		memmove(f->running + i, f->running + i + 1,
		        (f->n_running - i - 1) * sizeof *f->running);
		f->n_running--;
		return row;
	}
	return NULL;
}

static void on_step_end(fold *f, const cJSON *e, double t)
{
	const cJSON *index = jget(e, "index");
	cJSON *old = take_running_step(f, index);
	double ms = ksr_json_num(e, "duration_ms", -1);
	double t0 = old ? ksr_json_num(old, "_t0", t) : t - (ms > 0 ? ms : 0);
	const char *status = ksr_json_str(e, "status", "error");
	cJSON *row = step_row(e, status, t0, ms >= 0 ? ms : t - t0);
	if (old)
		cJSON_ReplaceItemViaPointer(f->steps, old, row);
	else
		cJSON_AddItemToArray(f->steps, row);
}

/* The other row kinds. */

static void on_grounding(fold *f, const cJSON *e)
{
	cJSON *row = cJSON_CreateObject();
	add_pos_int(row, "step", e, "step");
	add_str(row, "asked", ksr_json_str(e, "asked", NULL));
	cJSON_AddItemToObject(row, "where", geometry(jget(e, "where"), false));
	add_bool(row, "verified", e, "verified");
	cJSON_AddItemToArray(f->grounding, row);
}

static void on_concern(fold *f, const cJSON *e)
{
	cJSON *row = cJSON_CreateObject();
	add_str(row, "code", ksr_json_str(e, "code", NULL));
	add_str(row, "message", ksr_json_str(e, "message", ""));
	add_pos_int(row, "line", e, "line");
	cJSON_AddItemToArray(f->concerns, row);
}

static void on_failure(fold *f, const cJSON *e)
{
	cJSON *row = cJSON_CreateObject();
	add_str(row, "outcome", ksr_json_str(e, "outcome", NULL));
	add_str(row, "reason", ksr_json_str(e, "reason", ""));
	add_pos_int(row, "line", e, "line");
	add_bool(row, "setup_fault", e, "setup_fault");
	cJSON_AddItemToArray(f->failures, row);
}

static void on_final_check(fold *f, const cJSON *e)
{
	cJSON *row = cJSON_CreateObject();
	add_str(row, "name", ksr_json_str(e, "name", ""));
	add_bool(row, "ok", e, "ok");
	add_str(row, "detail", ksr_json_str(e, "detail", NULL));
	cJSON_AddItemToArray(f->final_checks, row);
}

static void on_pair(cJSON *rows, const cJSON *e, const char *k1, const char *k2)
{
	cJSON *row = cJSON_CreateObject();
	add_str(row, k1, ksr_json_str(e, k1, ""));
	add_str(row, k2, ksr_json_str(e, k2, ""));
	cJSON_AddItemToArray(rows, row);
}

static void on_artifact(fold *f, const cJSON *e)
{
	cJSON *row = cJSON_CreateObject();
	add_str(row, "name", ksr_json_str(e, "name", ""));
	add_str(row, "kind", ksr_json_str(e, "kind", "other"));
	add_str(row, "description", ksr_json_str(e, "description", NULL));
	cJSON_AddItemToArray(f->artifacts, row);
}

/* What a model said in its own words: the judge's first-look reason and its
 * description of a failure screen, with the step it was said in. */
static void on_model_words(fold *f, const cJSON *e, const char *from, const char *key, double t)
{
	const char *text = ksr_json_str(e, key, NULL);
	if (!text || !*text)
		return;
	cJSON *row = cJSON_CreateObject();
	cJSON_AddStringToObject(row, "from", from);
	const cJSON *step = jget(e, "step");
	cJSON_AddNumberToObject(row, "step",
	                        cJSON_IsNumber(step) && step->valuedouble > 0
	                                ? (double)(int64_t)step->valuedouble
	                                : 0);
	add_ms(row, "t_ms", t);
	cJSON_AddStringToObject(row, "text", text);
	cJSON_AddItemToArray(f->model_words, row);
}

/* The page's own errors (rung 0), with the step they came in (0: outside
 * the steps) and that step's line. */
static void on_page_error(fold *f, const cJSON *e, double t)
{
	cJSON *row = cJSON_CreateObject();
	const cJSON *step = jget(e, "step");
	cJSON_AddNumberToObject(row, "step",
	                        cJSON_IsNumber(step) && step->valuedouble > 0
	                                ? (double)(int64_t)step->valuedouble
	                                : 0);
	add_pos_int(row, "line", e, "line");
	const char *kind = ksr_json_str(e, "kind", "console");
	cJSON_AddStringToObject(row, "kind", strcmp(kind, "exception") ? "console" : "exception");
	add_str(row, "text", ksr_json_str(e, "text", ""));
	add_str(row, "source", ksr_json_str(e, "source", NULL));
	add_ms(row, "t_ms", t);
	cJSON_AddItemToArray(f->page_errors, row);
}

static void on_model_call(fold *f, const cJSON *e)
{
	f->model_calls++;
	if (!cJSON_IsTrue(jget(e, "ok")))
		f->model_failures++;
	double ms = ksr_json_num(e, "ms", 0);
	f->model_ms += ms > 0 ? ms : 0;
}

/* The goal section: goal.start's fields, the plan hand-over, every turn, and
 * goal.end's verdict basis, each copied as recorded. */
static void on_goal(fold *f, const cJSON *e, const char *kind)
{
	static const char *const skip[] = {"t_ms", "event", "stage", "step"};
	if (!f->goal) {
		f->goal = cJSON_CreateObject();
		cJSON_AddItemToObject(f->goal, "turns", cJSON_CreateArray());
	}
	if (!strcmp(kind, "plan.handover")) {
		cJSON *h = cJSON_Duplicate(e, true);
		for (size_t i = 0; i < sizeof skip / sizeof skip[0]; i++)
			cJSON_DeleteItemFromObjectCaseSensitive(h, skip[i]);
		cJSON_AddItemToObject(f->goal, "handover", h);
		return;
	}
	if (!strcmp(kind, "goal.turn")) {
		cJSON *t = cJSON_Duplicate(e, true);
		for (size_t i = 0; i < sizeof skip / sizeof skip[0]; i++)
			cJSON_DeleteItemFromObjectCaseSensitive(t, skip[i]);
		cJSON_AddItemToArray(cJSON_GetObjectItem(f->goal, "turns"), t);
		return;
	}
	const cJSON *it;
	cJSON_ArrayForEach(it, e)
	{
		bool skipped = false;
		for (size_t i = 0; i < sizeof skip / sizeof skip[0]; i++)
			skipped = skipped || !strcmp(it->string, skip[i]);
		if (skipped || !strcmp(it->string, "turns"))
			continue; /* goal.end's count: the turns array says it */
		cJSON_DeleteItemFromObjectCaseSensitive(f->goal, it->string);
		cJSON_AddItemToObject(f->goal, it->string, cJSON_Duplicate(it, true));
	}
}

/* A spawned tool (desktop mode): what its spawn started, its window and what
 * the per-tool looks saw (docs/report.md, report.json's tools[]). */
static void on_tool(fold *f, const cJSON *e)
{
	const cJSON *w = jget(e, "window"), *probe = jget(e, "probe");
	cJSON *row = cJSON_CreateObject();
	add_str(row, "as", ksr_json_str(e, "as", NULL));
	add_pos_int(row, "pid", e, "pid");
	add_pos_int(row, "line", e, "line");
	add_str(row, "command", ksr_json_str(e, "command", NULL));
	add_str(row, "desktop_entry", ksr_json_str(e, "desktop_entry", NULL));
	cJSON *win = cJSON_AddObjectToObject(row, "window");
	add_copy(win, "id", w, "id", cJSON_IsString);
	add_str(win, "title", ksr_json_str(w, "title", NULL));
	add_str(win, "class", ksr_json_str(w, "class", NULL));
	add_pos_int(win, "pid", w, "pid");
	add_str(row, "paint", ksr_json_str(e, "paint", NULL));
	add_str(row, "probe", ksr_json_str(probe, "status", NULL));
	add_str(row, "toolkit", ksr_json_str(probe, "toolkit", NULL));
	add_copy(row, "nodes", probe, "nodes", cJSON_IsNumber);
	add_str(row, "atspi", ksr_json_str(probe, "artifact", NULL));
	add_str(row, "dialogs", ksr_json_str(e, "dialogs", NULL));
	if (ksr_json_str(e, "log", NULL))
		add_str(row, "log", ksr_json_str(e, "log", NULL));
	cJSON_AddItemToArray(f->tools, row);
}

/* A cut log (launch_log, at the end of the run): launch.log's goes to
 * launch.log_cut_at_bytes, a spawned tool's to its tools[] row. */
static void on_log_cut(fold *f, const cJSON *e)
{
	const char *name = ksr_json_str(e, "name", "launch.log");
	if (!strcmp(name, "launch.log")) {
		f->log_cut = e;
		return;
	}
	cJSON *row;
	cJSON_ArrayForEach(row, f->tools)
	{
		if (!strcmp(ksr_json_str(row, "log", ""), name) && !jget(row, "log_cut_at_bytes"))
			add_pos_int(row, "log_cut_at_bytes", e, "cut_at_bytes");
	}
}

static void fold_event(fold *f, const cJSON *e)
{
	const char *kind = ksr_json_str(e, "event", NULL);
	double t = ksr_json_num(e, "t_ms", f->last_t);
	f->last_t = t > f->last_t ? t : f->last_t;
	if (!kind)
		return;
	if (!strcmp(kind, "run.start") && !f->run_start)
		f->run_start = e;
	else if (!strcmp(kind, "stage.start"))
		on_stage_start(f, e, t);
	else if (!strcmp(kind, "stage.end"))
		on_stage_end(f, e, t);
	else if (!strcmp(kind, "step.start"))
		on_step_start(f, e, t);
	else if (!strcmp(kind, "step.end"))
		on_step_end(f, e, t);
	else if (!strcmp(kind, "launch"))
		f->launch = e;
	else if (!strcmp(kind, "launch_log"))
		on_log_cut(f, e);
	else if (!strcmp(kind, "app"))
		f->app = e;
	else if (!strcmp(kind, "accessibility"))
		f->accessibility = e;
	else if (!strcmp(kind, "tool"))
		on_tool(f, e);
	else if (!strcmp(kind, "grounding"))
		on_grounding(f, e);
	else if (!strcmp(kind, "concern"))
		on_concern(f, e);
	else if (!strcmp(kind, "failure"))
		on_failure(f, e);
	else if (!strcmp(kind, "artifact"))
		on_artifact(f, e);
	else if (!strcmp(kind, "final_check"))
		on_final_check(f, e);
	else if (!strcmp(kind, "log_tail"))
		on_pair(f->log_tails, e, "path", "text");
	else if (!strcmp(kind, "output_error"))
		on_pair(f->output_errors, e, "what", "error");
	else if (!strcmp(kind, "model_call"))
		on_model_call(f, e);
	else if (!strcmp(kind, "judgement"))
		on_model_words(f, e, "judgement", "reason", t);
	else if (!strcmp(kind, "screen_description"))
		on_model_words(f, e, "screen_description", "text", t);
	else if (!strcmp(kind, "video"))
		f->video = e;
	else if (!strcmp(kind, "page_error"))
		on_page_error(f, e, t);
	else if (!strncmp(kind, "goal.", 5) || !strcmp(kind, "plan.handover"))
		on_goal(f, e, kind);
}

/* Rows still running when the report is rendered: their time so far; the
 * private start time removed. */
static void close_running(cJSON *rows, double last_t)
{
	cJSON *row;
	cJSON_ArrayForEach(row, rows)
	{
		double t0 = ksr_json_num(row, "_t0", last_t);
		if (!strcmp(ksr_json_str(row, "status", ""), "running"))
			cJSON_ReplaceItemInObjectCaseSensitive(
			        row, "duration_ms",
			        cJSON_CreateNumber((double)(int64_t)(last_t - t0)));
		cJSON_DeleteItemFromObjectCaseSensitive(row, "_t0");
	}
}

static cJSON *scenario_obj(const cJSON *rs)
{
	const cJSON *sc = jget(rs, "scenario");
	cJSON *o = cJSON_CreateObject();
	add_str(o, "path", ksr_json_str(sc, "path", NULL));
	add_str(o, "name", ksr_json_str(sc, "name", NULL));
	add_str(o, "sha256", ksr_json_str(sc, "sha256", NULL));
	return o;
}

static cJSON *runtime_obj(const cJSON *rs)
{
	const char *v = ksr_json_str(jget(rs, "runtime"), "version", NULL);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "version", v ? v : KSR_VERSION);
	add_pos_int(o, "pid", rs, "pid");
	return o;
}

static cJSON *timings_obj(const fold *f)
{
	cJSON *o = cJSON_CreateObject();
	add_str(o, "started_at", ksr_json_str(f->run_start, "started_at", NULL));
	add_ms(o, "duration_ms", f->last_t);
	const cJSON *dl = jget(f->run_start, "deadline_s");
	if (cJSON_IsNumber(dl) && dl->valuedouble >= 0)
		cJSON_AddNumberToObject(o, "deadline_s", dl->valuedouble);
	else
		cJSON_AddNullToObject(o, "deadline_s");
	cJSON *per = cJSON_AddObjectToObject(o, "stages");
	const cJSON *row;
	cJSON_ArrayForEach(row, f->stages)
	{
		const char *name = ksr_json_str(row, "name", NULL);
		if (!name)
			continue;
		double ms = ksr_json_num(row, "duration_ms", 0);
		cJSON *have = cJSON_GetObjectItemCaseSensitive(per, name);
		if (have)
			cJSON_SetNumberValue(have, have->valuedouble + ms);
		else
			cJSON_AddNumberToObject(per, name, ms);
	}
	return o;
}

/* An X window id: a number, or a string such as "0x1a00003". */
static cJSON_bool is_id(const cJSON *it)
{
	return cJSON_IsNumber(it) || cJSON_IsString(it);
}

static cJSON *app_obj(const cJSON *e)
{
	if (!e)
		return cJSON_CreateNull();
	cJSON *o = cJSON_CreateObject();
	add_pos_int(o, "pid", e, "pid");
	add_str(o, "name", ksr_json_str(e, "name", NULL));
	add_str(o, "cmdline", ksr_json_str(e, "cmdline", NULL));
	add_bool(o, "launched", e, "launched");
	const cJSON *w = jget(e, "window");
	if (cJSON_IsObject(w)) {
		cJSON *win = cJSON_AddObjectToObject(o, "window");
		add_copy(win, "id", w, "id", is_id);
		add_str(win, "title", ksr_json_str(w, "title", NULL));
		add_str(win, "class", ksr_json_str(w, "class", NULL));
		static const char *const keys[] = {"x", "y", "w", "h"};
		for (size_t i = 0; i < 4; i++)
			add_copy(win, keys[i], w, keys[i], cJSON_IsNumber);
	} else {
		cJSON_AddNullToObject(o, "window");
	}
	return o;
}

static cJSON *launch_obj(const cJSON *e, const cJSON *cut)
{
	if (!e)
		return cJSON_CreateNull();
	cJSON *o = cJSON_CreateObject();
	add_str(o, "command", ksr_json_str(e, "command", NULL));
	add_pos_int(o, "pid", e, "pid");
	add_str(o, "log", ksr_json_str(e, "log", NULL));
	if (cut) /* the app's output past the cap is not in the log */
		add_pos_int(o, "log_cut_at_bytes", cut, "cut_at_bytes");
	return o;
}

/* The accessibility probe's summary: the event's fields, as recorded. */
static cJSON *accessibility_obj(const cJSON *e)
{
	if (!e)
		return cJSON_CreateNull();
	cJSON *o = cJSON_CreateObject();
	static const char *const skip[] = {"t_ms", "event", "stage", "step"};
	const cJSON *it;
	cJSON_ArrayForEach(it, e)
	{
		bool own = true;
		for (size_t i = 0; i < sizeof skip / sizeof *skip; i++)
			own &= strcmp(it->string, skip[i]) != 0;
		if (own)
			cJSON_AddItemToObject(o, it->string, cJSON_Duplicate(it, true));
	}
	return o;
}

/* The run's video (docs/report.md#the-runs-video): the video event's fields. */
static cJSON *video_obj(const cJSON *e)
{
	if (!e)
		return cJSON_CreateNull();
	cJSON *o = cJSON_CreateObject();
	add_str(o, "name", ksr_json_str(e, "name", NULL));
	add_ms(o, "start_ms", ksr_json_num(e, "start_ms", 0));
	add_ms(o, "duration_ms", ksr_json_num(e, "duration_ms", 0));
	static const char *const nums[] = {"frames", "max_fps", "width", "height", "bytes"};
	for (size_t i = 0; i < sizeof nums / sizeof *nums; i++)
		cJSON_AddNumberToObject(o, nums[i], (double)(int64_t)ksr_json_num(e, nums[i], 0));
	add_str(o, "codec", ksr_json_str(e, "codec", NULL));
	add_str(o, "error", ksr_json_str(e, "error", NULL));
	add_copy(o, "chapters", e, "chapters", cJSON_IsArray);
	return o;
}

static cJSON *model_obj(const fold *f)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "calls", f->model_calls);
	cJSON_AddNumberToObject(o, "failures", f->model_failures);
	add_ms(o, "total_ms", f->model_ms);
	return o;
}

static void add_decision(cJSON *r, const ksr_decision *d)
{
	cJSON_AddStringToObject(r, "verdict", ksr_verdict_name(d->verdict));
	cJSON_AddNumberToObject(r, "exit_code", d->exit_code);
	cJSON_AddStringToObject(r, "outcome", ksr_outcome_name(d->outcome));
	cJSON_AddStringToObject(r, "reason",
	                        d->reason && *d->reason ? d->reason
	                                                : ksr_outcome_default_reason(d->outcome));
	if (d->line > 0)
		cJSON_AddNumberToObject(r, "line", d->line);
	else
		cJSON_AddNullToObject(r, "line");
}

static void fold_init(fold *f)
{
	*f = (fold){0};
	f->stages = cJSON_CreateArray();
	f->steps = cJSON_CreateArray();
	f->grounding = cJSON_CreateArray();
	f->concerns = cJSON_CreateArray();
	f->final_checks = cJSON_CreateArray();
	f->log_tails = cJSON_CreateArray();
	f->artifacts = cJSON_CreateArray();
	f->output_errors = cJSON_CreateArray();
	f->failures = cJSON_CreateArray();
	f->model_words = cJSON_CreateArray();
	f->page_errors = cJSON_CreateArray();
	f->tools = cJSON_CreateArray();
}

cJSON *ksr_report_json(const cJSON *events, const ksr_decision *d)
{
	ksr_decision own;
	if (!d) {
		own = ksr_verdict_from_events(events);
		d = &own;
	}
	fold f;
	fold_init(&f);
	const cJSON *e, *list = cJSON_IsArray(events) ? events : NULL;
	cJSON_ArrayForEach(e, list)
	{
		fold_event(&f, e);
	}
	close_running(f.stages, f.last_t);
	close_running(f.steps, f.last_t);
	free(f.running);

	cJSON *r = cJSON_CreateObject();
	cJSON_AddNumberToObject(r, "schema_version", KSR_REPORT_SCHEMA_VERSION);
	add_str(r, "run_id", ksr_json_str(f.run_start, "run_id", NULL));
	add_decision(r, d);
	cJSON_AddItemToObject(r, "scenario", scenario_obj(f.run_start));
	cJSON_AddItemToObject(r, "runtime", runtime_obj(f.run_start));
	const cJSON *folder = jget(f.run_start, "evidence_folder");
	cJSON_AddItemToObject(r, "evidence_folder",
	                      folder ? cJSON_Duplicate(folder, true) : cJSON_CreateNull());
	cJSON_AddItemToObject(r, "timings", timings_obj(&f));
	cJSON_AddItemToObject(r, "stages", f.stages);
	cJSON_AddItemToObject(r, "steps", f.steps);
	cJSON_AddItemToObject(r, "grounding", f.grounding);
	cJSON_AddItemToObject(r, "concerns", f.concerns);
	cJSON_AddItemToObject(r, "failures", f.failures);
	cJSON_AddItemToObject(r, "final_checks", f.final_checks);
	cJSON_AddItemToObject(r, "launch", launch_obj(f.launch, f.log_cut));
	cJSON_AddItemToObject(r, "app", app_obj(f.app));
	cJSON_AddItemToObject(r, "tools", f.tools);
	cJSON_AddItemToObject(r, "accessibility", accessibility_obj(f.accessibility));
	cJSON_AddItemToObject(r, "goal", f.goal ? f.goal : cJSON_CreateNull());
	cJSON_AddItemToObject(r, "model_usage", model_obj(&f));
	cJSON_AddItemToObject(r, "model_words", f.model_words);
	cJSON_AddItemToObject(r, "page_errors", f.page_errors);
	cJSON_AddItemToObject(r, "video", video_obj(f.video));
	cJSON_AddItemToObject(r, "log_tails", f.log_tails);
	cJSON_AddItemToObject(r, "artifacts", f.artifacts);
	cJSON_AddItemToObject(r, "output_errors", f.output_errors);
	return r;
}
