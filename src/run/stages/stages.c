/* The stage machine (docs/architecture.md): every stage in order, each under its own
 * limit and the run's working deadline. A stage that fails records the failure
 * signal and the run jumps to diagnosis and the report. */
#include "run/stages/stage.h"

#include <stdio.h>
#include <string.h>

#include "run/diagnosis/diagnose.h"

/* ---- the machine -------------------------------------------------------- */

static const ksr_stage_def *const stages[] = {
        &ksr_stage_boot_wait, &ksr_stage_launch,     &ksr_stage_app_wait,       &ksr_stage_settle,
        &ksr_stage_probe,     &ksr_stage_first_look, &ksr_stage_browser_attach, &ksr_stage_steps,
        &ksr_stage_plan,      &ksr_stage_goal_loop,  &ksr_stage_final_checks,
};

static const char *failed_status(const ksr_run *run)
{
	if (run->failure_outcome == KSR_OUTCOME_INTERRUPTED)
		return "interrupted";
	if (run->failure_outcome == KSR_OUTCOME_DEADLINE)
		return "timeout";
	return "failed";
}

static void run_stage(ksr_run *run, const ksr_stage_def *s)
{
	ksr_events_set_stage(run->ev, s->name);
	run->current_stage = s->name;
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "name", s->name);
	ksr_run_emit(run, "stage.start", f);
	int64_t started = ksr_now_ms();
	run->stage_started_ms = started;
	const char *skip = s->skip ? s->skip(run) : NULL;
	if (skip) {
		ksr_run_emit_stage_end(run, s->name, "skipped", skip, started);
		return;
	}
	/* A stage with a limit gets it even when it is 0 (settle_s: 0 = no settle). */
	run->stage = run->work;
	if (s->limit_s)
		run->stage = ksr_deadline_min(
		        run->work, ksr_deadline_in_ms((int64_t)(s->limit_s(run) * 1000)));
	char note[512] = "";
	ksr_stage_status st = s->run(run, note, sizeof note);
	/* The app died in a wait whose caller did not ask why it ended. */
	if (ksr_run_alive_check(run) && st == KSR_STAGE_OK)
		st = KSR_STAGE_FAILED;
	const char *status = st == KSR_STAGE_OK        ? "ok"
	                     : st == KSR_STAGE_SKIPPED ? "skipped"
	                                               : failed_status(run);
	ksr_run_emit_stage_end(run, s->name, status, note, started);
}

static void skip_rest(ksr_run *run, size_t from)
{
	for (size_t i = from; i < sizeof stages / sizeof stages[0]; i++) {
		ksr_events_set_stage(run->ev, stages[i]->name);
		ksr_run_emit_stage_end(run, stages[i]->name, "skipped", "an earlier stage failed",
		                       ksr_now_ms());
	}
}

void ksr_stages_run(ksr_run *run)
{
	run->hold_crash = ksr_diag_hold_crash;
	for (size_t i = 0; i < sizeof stages / sizeof stages[0]; i++) {
		run_stage(run, stages[i]);
		if (run->failed) {
			skip_rest(run, i + 1);
			break;
		}
		if (ksr_cancelled() && !run->failed) {
			ksr_run_wait_ended_run(run, KSR_WAIT_CANCELLED, 0, stages[i]->name);
			skip_rest(run, i + 1);
			break;
		}
	}
	ksr_run_unwatch_all(run); /* the verdict is decided; the stop must not fire */
	ksr_events_set_stage(run->ev, NULL);
}
