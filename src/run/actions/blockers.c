/* Blockers (docs/watch.md): scenario checks that, when they hold, mean
 * a person has to act (a login page, an OTP prompt, a licence dialog). A blocker
 * is never a pass. With live remediation off the run ends at once, test-error /
 * blocked; with it on the run pauses, writes BLOCKED in OUT, waits for the
 * blocker to be gone and resumes, or ends blocked when nobody cleared it in
 * time. The run deadline bounds the pause like everything else. */
#include "run/actions/runner.h"
#include "ksr/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Re-evaluate a blocker at least this often; window blockers also on every
 * X change, so a closed dialog resumes the run within milliseconds. */
#define BLOCKER_TICK_MS 500

typedef struct blocker_pause {
	const ksr_check *c;
	const char *where;
	char what[300];   /* "window ^Sign in$" */
	char detail[400]; /* what the evaluator saw */
	int64_t since_ms; /* monotonic */
	ksr_deadline until;
} blocker_pause;

static bool live_remediation(void)
{
	const char *v = getenv("KASM_RUNTIME_LIVE_REMEDIATION");
	return v && (strcmp(v, "1") == 0 || strcmp(v, "true") == 0 || strcmp(v, "yes") == 0);
}

static const char *check_subject(const ksr_check *c)
{
	if (c->re)
		return ksr_pattern_source(c->re);
	if (c->text)
		return c->text;
	if (c->name.text)
		return c->name.text;
	return c->selector ? c->selector : "";
}

static void describe(const ksr_check *c, char *buf, size_t len)
{
	snprintf(buf, len, "%s %s", c->info->name, check_subject(c));
}

/* Wall-clock ISO-8601 time of a monotonic instant (BLOCKED is read by people
 * and by other machines, which know nothing of this process's clock). */
static void iso_at(int64_t mono_ms, char *buf, size_t len)
{
	time_t t = time(NULL) + (time_t)((mono_ms - ksr_now_ms()) / 1000);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static cJSON *pause_fields(const blocker_pause *p)
{
	char since[32], until[32];
	iso_at(p->since_ms, since, sizeof since);
	iso_at(p->until.at_ms, until, sizeof until);
	const char *url = getenv("KASM_RUNTIME_SESSION_URL");
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "what", p->what);
	cJSON_AddStringToObject(f, "detail", p->detail);
	cJSON_AddNumberToObject(f, "line", p->c->pos.line);
	cJSON_AddStringToObject(f, "where", p->where);
	cJSON_AddStringToObject(f, "since", since);
	cJSON_AddStringToObject(f, "until", until);
	if (url && *url)
		cJSON_AddStringToObject(f, "session_url", url);
	else
		cJSON_AddNullToObject(f, "session_url");
	return f;
}

/* BLOCKED tells whoever watches OUT what to clear, where, and by when. */
static void write_blocked_file(ksr_run *run, const blocker_pause *p)
{
	cJSON *f = pause_fields(p);
	cJSON_AddStringToObject(f, "run_id", run->run_id);
	char *text = ksr_json_print(f, true);
	size_t n = strlen(text);
	char *body = ksr_xmalloc(n + 2);
	memcpy(body, text, n);
	memcpy(body + n, "\n", 2);
	ksr_err err = {0};
	ksr_evidence_write_text(run->out, "BLOCKED", body, n + 1, &err);
	free(body);
	cJSON_free(text);
	cJSON_Delete(f);
}

static void end_pause(ksr_run *run, const blocker_pause *p, bool cleared)
{
	ksr_err err = {0};
	ksr_evidence_remove(run->out, "BLOCKED", &err);
	if (!cleared)
		return;
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "what", p->what);
	cJSON_AddNumberToObject(f, "line", p->c->pos.line);
	cJSON_AddStringToObject(f, "where", p->where);
	cJSON_AddNumberToObject(f, "blocked_ms", (double)(ksr_now_ms() - p->since_ms));
	ksr_run_emit(run, "resumed", f);
}

static ksr_wait wait_change(ksr_run *run, const ksr_check *c, ksr_deadline d)
{
	ksr_deadline tick = ksr_deadline_min(d, ksr_deadline_in_ms(BLOCKER_TICK_MS));
	if (c->info->backend == KSR_BACKEND_X11 && run->x) {
		ksr_wait w = ksr_x11_wait_change(run->x, tick);
		if (w != KSR_WAIT_ERROR)
			return w;
	}
	return ksr_sleep_until(tick);
}

/* Wait for the blocker to be gone. true: cleared; false: the run ended. */
static bool wait_cleared(ksr_run *run, blocker_pause *p)
{
	for (;;) {
		ksr_wait w = wait_change(run, p->c, p->until);
		if (w == KSR_WAIT_CANCELLED) {
			ksr_run_wait_ended_run(run, w, p->c->pos.line, "a pause on a blocker");
			return false;
		}
		char detail[400] = "";
		if (ksr_check_once(run, p->c, detail, sizeof detail) == 0)
			return true;
		if (ksr_deadline_passed(p->until)) {
			ksr_run_fail_setup(
			        run, KSR_OUTCOME_BLOCKED, p->c->pos.line,
			        "blocked by %s (%s), seen at %s, not cleared within %.0f s",
			        p->what, p->detail, p->where,
			        (double)(p->until.at_ms - p->since_ms) / 1000.0);
			return false;
		}
	}
}

static bool pause_for_person(ksr_run *run, blocker_pause *p)
{
	p->since_ms = ksr_now_ms();
	p->until = ksr_deadline_min(
	        run->work, ksr_deadline_in_ms((int64_t)(run->sc->remediation_timeout_s * 1000)));
	write_blocked_file(run, p);
	ksr_run_emit(run, "blocked", pause_fields(p));
	bool cleared = wait_cleared(run, p);
	end_pause(run, p, cleared);
	return cleared;
}

bool ksr_blockers_check(ksr_run *run, const char *where)
{
	if (!run || !run->sc || run->failed)
		return run && !run->failed;
	const ksr_check_list *bl = &run->sc->blockers;
	for (size_t i = 0; i < bl->len; i++) {
		blocker_pause p = {.c = &bl->items[i], .where = where};
		/* A blocker that cannot be evaluated (no model for screen:) is not
		 * seen: it can only stop a run, never let one pass. */
		if (ksr_check_once(run, p.c, p.detail, sizeof p.detail) <= 0)
			continue;
		describe(p.c, p.what, sizeof p.what);
		if (!live_remediation()) {
			ksr_run_fail_setup(
			        run, KSR_OUTCOME_BLOCKED, p.c->pos.line,
			        "blocked by %s (%s), seen at %s; live remediation is off", p.what,
			        p.detail, where);
			return false;
		}
		if (!pause_for_person(run, &p))
			return false;
	}
	return true;
}

bool ksr_blockers_before_step(ksr_run *run, const ksr_step *step)
{
	char where[64];
	snprintf(where, sizeof where, "step %d (line %d)", step->index, step->pos.line);
	return ksr_blockers_check(run, where);
}
