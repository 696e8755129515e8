/* The step runner: every step (scripted, a plan's, the goal loop's) goes
 * through the same phases: resolve the target -> wait until it is ready ->
 * act -> wait until the app settled -> checks -> evidence (docs/design.md).
 * Also the checks' polling and the blockers evaluated before each step. */
#ifndef KSR_RUN_RUNNER_H
#define KSR_RUN_RUNNER_H

#include <cjson/cJSON.h>

#include "run/context/context.h"

/* One step through every phase. res starts zeroed (res->extra may already
 * hold fields); check_rows (may be NULL) gets one row per check. The caller
 * records the step (a step row, a goal turn) and frees res->extra. */
void ksr_step_run(ksr_run *run, const ksr_step *step, ksr_step_result *res, cJSON *check_rows);

/* Scripted steps (steps:, a plan step): for each, the blockers, the runner, a
 * step.start and step.end row and the failure it means. false when a step
 * failed or the run ended. */
bool ksr_steps_run(ksr_run *run, const ksr_step_list *steps);

/* Poll a check until it holds, its timeout passes or the run ends. */
typedef enum ksr_check_status {
	KSR_CHECK_HELD,
	KSR_CHECK_NOT_HELD,
	KSR_CHECK_ERROR, /* backend unavailable */
	KSR_CHECK_ENDED, /* cancelled or the run deadline: already recorded */
} ksr_check_status;
ksr_check_status ksr_run_check(ksr_run *run, const ksr_check *c, char *detail, size_t len);
/* The same, appending {kind, line, status, detail} to rows (a step's or the
 * success: checks' list). */
ksr_check_status ksr_run_check_row(ksr_run *run, const ksr_check *c, cJSON *rows, char *detail,
                                   size_t len);
/* A check evaluated once (no polling): 1 holds, 0 not, -1 cannot be evaluated. */
int ksr_check_once(ksr_run *run, const ksr_check *c, char *why, size_t len);
const char *ksr_check_status_word(ksr_check_status st); /* "held", "failed", "error" */

/* Blockers (blockers.c): evaluate each of the scenario's blockers once; where
 * ("first-look", "goal-loop"...) is named in the report. With live remediation
 * off a blocker that holds ends the run (test-error / blocked); on, the run
 * pauses (BLOCKED in OUT) until it is gone. false when the run ended. */
bool ksr_blockers_check(ksr_run *run, const char *where);
bool ksr_blockers_before_step(ksr_run *run, const ksr_step *step);

#endif
