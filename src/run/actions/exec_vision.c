/* Steps and checks that need a model: observe (a visual check), the screen:
 * check (also expect:), and click_grounded (rung 3). A model's "no" fails the
 * step (check-failed); a question it cannot answer ends the run test-error /
 * backend-unavailable, since the scenario asked for something only a model can
 * tell; the one exception is the confirmation after a grounded click: one
 * that cannot be had is an unverified-click concern (docs/vision-models.md). */
#include "run/actions/exec.h"
#include "run/actions/runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/actions/exec.h"
#include "run/vision/grounding_cache.h"
#include "run/vision/judge.h"

#define RECHECK_MS  1000 /* a screen that said "no" is asked again at most this often */
#define SAME_PLACE  8    /* screen pixels: a re-grounded location this close is the same */
#define ACTIVATE_MS 1000
#define MAX_CLICKS  2

/* The last screen: answer. ksr_run_check polls every 100 ms; a model is asked
 * at most once a second per check, and an expect: a grounded click already
 * answered is not asked again. One run per process, so one slot. */
static struct {
	const ksr_check *check;
	int answer;
	int64_t at_ms; /* INT64_MAX: final for this check */
	char why[400];
} last;

static void remember(const ksr_check *c, int answer, int64_t at, const char *why)
{
	last.check = c;
	last.answer = answer;
	last.at_ms = at;
	snprintf(last.why, sizeof last.why, "%s", why);
}

/* Cancelled or past the working deadline while a model was asked: recorded. */
static bool run_ended(ksr_run *run, int line, const char *what)
{
	if (!ksr_cancelled() && !ksr_deadline_passed(run->work))
		return false;
	ksr_run_wait_ended_run(run, ksr_cancelled() ? KSR_WAIT_CANCELLED : KSR_WAIT_TIMEOUT, line,
	                       what);
	return true;
}

static ksr_deadline call_deadline(const ksr_run *run, double timeout_s)
{
	double s = timeout_s > 0 ? timeout_s : KSR_JUDGE_CALL_S;
	return ksr_deadline_min(run->work, ksr_deadline_in_ms((int64_t)(s * 1000)));
}

/* Capture, ask the judge once; the reason (or why not) goes to why. */
static ksr_model_answer ask_judge(ksr_run *run, const ksr_model_config *cfg, const char *statement,
                                  const char *purpose, ksr_deadline d, char *why, size_t len)
{
	ksr_model_image img = {0};
	ksr_err err = {0};
	ksr_model_usage u = {0};
	char reason[400] = "";
	ksr_model_answer a = KSR_MODEL_INCONCLUSIVE;
	if (ksr_judge_capture(run, NULL, &img, &err) < 0) {
		snprintf(why, len, "the screen could not be captured: %.300s", err.msg);
		return a;
	}
	a = ksr_model_judge(cfg, &img, statement, d, reason, sizeof reason, &u);
	ksr_model_image_clear(&img);
	ksr_judge_emit_call(run, cfg, purpose, &u);
	ksr_model_redact(reason, sizeof reason, cfg->api_key);
	if (a == KSR_MODEL_INCONCLUSIVE)
		snprintf(why, len, "the judge could not answer: %.300s", u.error);
	else
		snprintf(why, len, "the judge answered %s: %.300s", ksr_model_answer_name(a),
		         reason);
	return a;
}

/* ---- observe -------------------------------------------------------------------- */

void ksr_exec_observe(ksr_run *run, const ksr_step *step, const ksr_step_target *t,
                      ksr_step_result *res)
{
	(void)t;
	ksr_model_config cfg;
	char why[480];
	if (ksr_judge_config(KSR_MODEL_JUDGE, &cfg, why, sizeof why) <= 0) {
		ksr_step_fail(res, KSR_STEP_ERROR, KSR_OUTCOME_BACKEND_UNAVAILABLE, "%s", why);
		return;
	}
	/* With timeout_s, a "no" is asked again until it passes (the screen may
	 * still be changing); without, one answer decides. */
	ksr_deadline until = call_deadline(run, step->timeout_s);
	ksr_model_answer a;
	for (;;) {
		a = ask_judge(run, &cfg, step->text, "observe", until, why, sizeof why);
		if (a != KSR_MODEL_NO || ksr_deadline_remaining_ms(until) < 2 * RECHECK_MS ||
		    ksr_sleep_ms(RECHECK_MS) != KSR_WAIT_TIMEOUT)
			break;
	}
	explicit_bzero(cfg.api_key, sizeof cfg.api_key);
	if (run_ended(run, step->pos.line, "observe")) {
		res->status = KSR_STEP_ERROR;
		return;
	}
	cJSON_AddStringToObject(ksr_step_extra(res), "answer", ksr_model_answer_name(a));
	if (a == KSR_MODEL_NO)
		ksr_step_fail(res, KSR_STEP_FAILED, KSR_OUTCOME_CHECK_FAILED,
		              "observe \"%.150s\": %s", step->text, why);
	else if (a == KSR_MODEL_INCONCLUSIVE)
		ksr_step_fail(res, KSR_STEP_ERROR, KSR_OUTCOME_BACKEND_UNAVAILABLE,
		              "observe \"%.150s\": %s", step->text, why);
	else
		cJSON_AddStringToObject(ksr_step_extra(res), "judge", why);
	res->acted = true;
}

/* ---- the screen: check ---------------------------------------------------------- */

int ksr_check_screen(ksr_run *run, const ksr_check *c, char *why, size_t len)
{
	int64_t now = ksr_now_ms();
	if (last.check == c && (last.at_ms == INT64_MAX || now - last.at_ms < RECHECK_MS)) {
		snprintf(why, len, "%s", last.why);
		return last.answer;
	}
	ksr_model_config cfg;
	if (ksr_judge_config(KSR_MODEL_JUDGE, &cfg, why, len) <= 0)
		return -1;
	/* One call may take longer than a check's default 5 s: a call is bounded
	 * by the usual call limit; timeout_s bounds how long "no" is asked again. */
	ksr_model_answer a =
	        ask_judge(run, &cfg, c->text, "screen", call_deadline(run, 0), why, len);
	explicit_bzero(cfg.api_key, sizeof cfg.api_key);
	int r = a == KSR_MODEL_YES ? 1 : a == KSR_MODEL_NO ? 0 : -1;
	if (run_ended(run, c->pos.line, "a screen check"))
		r = 0; /* ksr_run_check sees the cancellation on its next wait */
	remember(c, r, ksr_now_ms(), why);
	return r;
}

/* ---- click_grounded -------------------------------------------------------------- */

typedef struct grounded {
	ksr_model_config grounder, judge;
	bool have_judge;
	int clicks;
	int sx[MAX_CLICKS], sy[MAX_CLICKS];
	char why[480];
	char *cache_path;     /* the grounding cache (grounding_cache.h), or NULL */
	bool from_cache;      /* the last location came from the cache */
	ksr_gcache_geom geom; /* the app's window when the step began (else the screen) */
} grounded;

/* The cache, on the first try only: a hit is clicked without a grounder
 * call, and confirmed like any grounded click (a "no" grounds afresh). */
static bool cache_try(ksr_run *run, const ksr_step *step, grounded *g, const ksr_image *full,
                      ksr_model_image *img, int *ix, int *iy, int *sx, int *sy)
{
	char why[320] = "";
	g->from_cache = false;
	if (g->clicks > 0 || !g->cache_path || !full)
		return false;
	if (!g->geom.w)
		g->geom = (ksr_gcache_geom){0, 0, full->w, full->h};
	int r = ksr_gcache_lookup(g->cache_path, step->text, &g->geom, full, sx, sy, why,
	                          sizeof why);
	cJSON *f = cJSON_CreateObject();
	cJSON_AddNumberToObject(f, "step", step->index);
	cJSON_AddStringToObject(f, "asked", step->text);
	cJSON_AddBoolToObject(f, "hit", r > 0);
	cJSON_AddStringToObject(f, "reason", why);
	ksr_run_emit(run, "grounding_cache", f);
	if (r <= 0)
		return false;
	*ix = img->screen_w ? *sx * img->w / img->screen_w : *sx;
	*iy = img->screen_h ? *sy * img->h / img->screen_h : *sy;
	g->from_cache = true;
	return true;
}

/* A fresh location the judge confirmed: remembered for the next run. */
static void cache_store(ksr_run *run, const ksr_step *step, grounded *g,
                        const uint8_t fp[KSR_GCACHE_FP_CELLS], int sx, int sy)
{
	ksr_err err = {0};
	if (!g->cache_path || g->from_cache)
		return;
	if (ksr_gcache_store(g->cache_path, step->text, &g->geom, fp, sx, sy, &err) < 0) {
		cJSON *f = cJSON_CreateObject();
		cJSON_AddNumberToObject(f, "step", step->index);
		cJSON_AddStringToObject(f, "error", err.msg);
		ksr_run_emit(run, "grounding_cache", f);
	}
}

/* Best effort: the app's window on top before the screen is read. */
static void raise_app(ksr_run *run, ksr_step_result *res)
{
	ksr_err err = {0};
	if (run->sc->desktop || !run->have_window)
		return;
	ksr_window w = {.id = run->window.id};
	ksr_deadline d = ksr_deadline_min(run->work, ksr_deadline_in_ms(ACTIVATE_MS));
	ksr_x11_activate(run->x, w.id, d, &err);
	if (ksr_x11_window_refresh(run->x, &w, &err) == 0) {
		res->has_window = true;
		res->win_x = w.x, res->win_y = w.y, res->win_w = w.w, res->win_h = w.h;
	}
	ksr_run_window_release(&w);
}

static void save_grounding_shot(ksr_run *run, const ksr_step *step, ksr_image *full, int n, int sx,
                                int sy, char *name, size_t len)
{
	snprintf(name, len, "%02d-grounding-%d.png", step->index, n);
	char desc[160];
	snprintf(desc, sizeof desc, "where the grounder put step %d's target (line %d), try %d",
	         step->index, step->pos.line, n);
	ksr_image_mark(full, sx, sy);
	if (ksr_run_save_image(run, full, name, desc) < 0)
		name[0] = '\0';
}

static void emit_grounding(ksr_run *run, const ksr_step *step, const grounded *g, int ix, int iy,
                           const ksr_model_image *img, bool verified, const char *shot)
{
	int n = g->clicks - 1;
	cJSON *f = cJSON_CreateObject();
	cJSON_AddNumberToObject(f, "step", step->index);
	cJSON_AddStringToObject(f, "asked", step->text);
	cJSON *w = cJSON_AddObjectToObject(f, "where");
	cJSON_AddNumberToObject(w, "x", g->sx[n]);
	cJSON_AddNumberToObject(w, "y", g->sy[n]);
	cJSON_AddBoolToObject(f, "verified", verified);
	cJSON *i = cJSON_AddObjectToObject(f, "image");
	cJSON_AddNumberToObject(i, "x", ix);
	cJSON_AddNumberToObject(i, "y", iy);
	cJSON_AddNumberToObject(i, "w", img->w);
	cJSON_AddNumberToObject(i, "h", img->h);
	cJSON_AddStringToObject(f, "coords", ksr_model_coords_name(g->grounder.coords));
	cJSON_AddNumberToObject(f, "try", g->clicks);
	if (shot[0])
		cJSON_AddStringToObject(f, "annotated", shot);
	ksr_run_emit(run, "grounding", f);
}

/* Capture, ground. YES with the screen point; NO: not there; else why says. */
static ksr_model_answer locate(ksr_run *run, const ksr_step *step, grounded *g, ksr_image **full,
                               ksr_model_image *img, int *ix, int *iy, int *sx, int *sy)
{
	ksr_err err = {0};
	ksr_model_usage u = {0};
	if (ksr_judge_capture(run, full, img, &err) < 0) {
		snprintf(g->why, sizeof g->why, "the screen could not be captured: %.300s",
		         err.msg);
		return KSR_MODEL_INCONCLUSIVE;
	}
	if (cache_try(run, step, g, *full, img, ix, iy, sx, sy))
		return KSR_MODEL_YES;
	ksr_model_answer a =
	        ksr_model_ground(&g->grounder, img, step->text, call_deadline(run, step->timeout_s),
	                         ix, iy, sx, sy, &u);
	ksr_judge_emit_call(run, &g->grounder, "ground", &u);
	if (a == KSR_MODEL_INCONCLUSIVE)
		snprintf(g->why, sizeof g->why, "the grounder could not answer: %.300s", u.error);
	else if (a == KSR_MODEL_NO)
		snprintf(g->why, sizeof g->why,
		         "the grounder did not find \"%.150s\" on the screen", step->text);
	return a;
}

static bool same_place(const grounded *g, int sx, int sy)
{
	for (int i = 0; i < g->clicks; i++)
		if (abs(g->sx[i] - sx) <= SAME_PLACE && abs(g->sy[i] - sy) <= SAME_PLACE)
			return true;
	return false;
}

/* Ask the judge whether the expect: holds now. */
static ksr_model_answer confirm(ksr_run *run, const ksr_step *step, grounded *g)
{
	if (!g->have_judge)
		return KSR_MODEL_INCONCLUSIVE;
	return ask_judge(run, &g->judge, step->expect, "confirm",
	                 call_deadline(run, step->timeout_s), g->why, sizeof g->why);
}

/* The expect: check among the step's checks, answered here. */
static void settle_expect(const ksr_step *step, int answer, const char *why)
{
	for (size_t i = 0; i < step->n_checks; i++)
		if (step->checks[i].info->needs_model && step->expect && step->checks[i].text &&
		    !strcmp(step->checks[i].text, step->expect)) {
			remember(&step->checks[i], answer, INT64_MAX, why);
			return;
		}
}

/* One try: locate, click unless it is a place already clicked, confirm.
 * Returns the confirmation, or -1 when the try ended the step (res says). */
static int one_try(ksr_run *run, const ksr_step *step, grounded *g, ksr_step_result *res)
{
	ksr_image *full = NULL;
	ksr_model_image img = {0};
	int ix = 0, iy = 0, sx = 0, sy = 0, out = -1;
	ksr_err err = {0};
	ksr_model_answer a = locate(run, step, g, &full, &img, &ix, &iy, &sx, &sy);
	if (run_ended(run, step->pos.line, step->info->name)) {
		res->status = KSR_STEP_ERROR;
	} else if (a != KSR_MODEL_YES) {
		bool first = g->clicks == 0;
		if (a == KSR_MODEL_INCONCLUSIVE && first)
			ksr_step_fail(res, KSR_STEP_ERROR, KSR_OUTCOME_BACKEND_UNAVAILABLE, "%s",
			              g->why);
		else
			ksr_step_fail(res, KSR_STEP_FAILED,
			              first ? KSR_OUTCOME_STEP_FAILED : KSR_OUTCOME_CHECK_FAILED,
			              first ? "%s"
			                    : "expect \"%.150s\" did not hold after the click, and "
			                      "grounding again failed: %s",
			              first ? g->why : step->expect, g->why);
	} else if (same_place(g, sx, sy)) {
		ksr_step_fail(
		        res, KSR_STEP_FAILED, KSR_OUTCOME_CHECK_FAILED,
		        "expect \"%.150s\" did not hold after clicking (%d, %d); the grounder put "
		        "\"%.100s\" at the same place again (%d, %d), so it was not clicked twice",
		        step->expect, g->sx[0], g->sy[0], step->text, sx, sy);
	} else {
		char shot[64] = "";
		uint8_t fp[KSR_GCACHE_FP_CELLS];
		ksr_gcache_fingerprint(full, sx, sy, KSR_GCACHE_RADIUS, fp); /* before the mark */
		g->sx[g->clicks] = sx, g->sy[g->clicks] = sy;
		g->clicks++;
		res->has_pixel = true, res->px = sx, res->py = sy;
		save_grounding_shot(run, step, full, g->clicks, sx, sy, shot, sizeof shot);
		unsigned long app = run->sc->desktop || !run->have_window ? 0 : run->window.id;
		if (!ksr_step_ready_at(run, step, app, sx, sy, res)) {
			/* res says which condition never held */
		} else if (ksr_x11_click(run->x, sx, sy, 1, 1, &err) < 0) {
			ksr_step_fail(res, KSR_STEP_ERROR,
			              ksr_x11_alive(run->x) ? KSR_OUTCOME_BACKEND_UNAVAILABLE
			                                    : KSR_OUTCOME_NO_DISPLAY,
			              "the click could not be delivered: %.400s", err.msg);
		} else {
			ksr_x11_sync(run->x);
			out = confirm(run, step, g);
			emit_grounding(run, step, g, ix, iy, &img, out == KSR_MODEL_YES, shot);
			if (out == KSR_MODEL_YES)
				cache_store(run, step, g, fp, sx, sy);
		}
	}
	ksr_image_free(full);
	ksr_model_image_clear(&img);
	return out;
}

static void grounded_outcome(ksr_run *run, const ksr_step *step, grounded *g, int answer,
                             ksr_step_result *res)
{
	cJSON_AddNumberToObject(ksr_step_extra(res), "clicks", g->clicks);
	if (answer == KSR_MODEL_YES) {
		cJSON_AddBoolToObject(ksr_step_extra(res), "verified", true);
		settle_expect(step, 1, g->why);
	} else if (answer == KSR_MODEL_INCONCLUSIVE) {
		cJSON_AddBoolToObject(ksr_step_extra(res), "verified", false);
		ksr_run_concern(
		        run, KSR_CONCERN_UNVERIFIED_CLICK, step->pos.line,
		        "the grounded click on \"%.150s\" at (%d, %d) could not be confirmed "
		        "(%s)",
		        step->text, res->px, res->py, g->why);
		char why[600];
		snprintf(why, sizeof why, "unverified: %s", g->why);
		settle_expect(step, 1, why);
	} else if (answer == KSR_MODEL_NO) {
		ksr_step_fail(
		        res, KSR_STEP_FAILED, KSR_OUTCOME_CHECK_FAILED,
		        "expect \"%.150s\" did not hold after clicking \"%.100s\" %d time%s: %s",
		        step->expect, step->text, g->clicks, g->clicks == 1 ? "" : "s", g->why);
	}
	res->acted = true;
}

void ksr_exec_click_grounded(ksr_run *run, const ksr_step *step, const ksr_step_target *t,
                             ksr_step_result *res)
{
	(void)t;
	grounded g = {0};
	char why[480];
	res->rung = "grounded";
	if (ksr_judge_config(KSR_MODEL_GROUNDER, &g.grounder, why, sizeof why) <= 0) {
		ksr_step_fail(res, KSR_STEP_ERROR, KSR_OUTCOME_BACKEND_UNAVAILABLE, "%s", why);
		return;
	}
	g.have_judge = ksr_judge_config(KSR_MODEL_JUDGE, &g.judge, why, sizeof why) > 0;
	if (!g.have_judge)
		snprintf(g.why, sizeof g.why, "%s", why);
	raise_app(run, res);
	g.cache_path = ksr_gcache_path(run->sc);
	if (res->has_window)
		g.geom = (ksr_gcache_geom){res->win_x, res->win_y, res->win_w, res->win_h};
	int answer = KSR_MODEL_NO;
	/* Confirm; if the change is absent, ground again and click again only at
	 * a new place (docs/vision-models.md). */
	while (answer == KSR_MODEL_NO && g.clicks < MAX_CLICKS && res->status == KSR_STEP_OK) {
		answer = one_try(run, step, &g, res);
		if (answer < 0)
			break;
	}
	explicit_bzero(&g.grounder.api_key, sizeof g.grounder.api_key);
	explicit_bzero(&g.judge.api_key, sizeof g.judge.api_key);
	free(g.cache_path);
	if (res->status == KSR_STEP_OK && answer >= 0)
		grounded_outcome(run, step, &g, answer, res);
}
