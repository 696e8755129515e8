/* Steps, plan and goal loop. */
#include "run/stages/stage.h"
#include "run/actions/runner.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ksr/proc.h"
#include "run/agent/goal.h"
#include "run/agent/plan.h"

/* ---- steps, plan, goal loop --------------------------------------------- */

static const char *steps_skip(const ksr_run *run)
{
	return run->sc->steps.len ? NULL : "the scenario has no steps:";
}

/* The steps to run: all, or (inspect --after --line N) those that start at
 * or before line N, a prefix since steps are in file order. */
static ksr_step_list steps_to_run(const ksr_run *run)
{
	ksr_step_list l = run->sc->steps;
	int until = run->opts->steps_until_line;
	if (until > 0)
		while (l.len && l.items[l.len - 1].pos.line > until)
			l.len--;
	return l;
}

static ksr_stage_status stage_steps(ksr_run *run, char *note, size_t len)
{
	ksr_step_list l = steps_to_run(run);
	if (!ksr_steps_run(run, &l))
		return KSR_STAGE_FAILED;
	snprintf(note, len, "%zu step(s) passed", l.len);
	if (l.len < run->sc->steps.len)
		snprintf(note + strlen(note), len - strlen(note), " (%zu after line %d not run)",
		         run->sc->steps.len - l.len, run->opts->steps_until_line);
	return KSR_STAGE_OK;
}

static const char *plan_skip(const ksr_run *run)
{
	if (run->opts->steps_only)
		return "inspect --after runs the steps: only";
	return run->sc->plan.len ? NULL : "the scenario has no plan:";
}

static ksr_stage_status stage_plan(ksr_run *run, char *note, size_t len)
{
	ksr_plan_state st = ksr_plan_replay(run, note, len);
	return st == KSR_PLAN_FAILED || run->failed ? KSR_STAGE_FAILED : KSR_STAGE_OK;
}

static const char *goal_skip(const ksr_run *run)
{
	if (run->opts->steps_only)
		return "inspect --after runs the steps: only";
	return run->sc->goal ? NULL : "the scenario has no goal:";
}

static ksr_stage_status stage_goal(ksr_run *run, char *note, size_t len)
{
	return ksr_goal_stage(run, note, len) ? KSR_STAGE_OK : KSR_STAGE_FAILED;
}

const ksr_stage_def ksr_stage_steps = {.name = "steps", .skip = steps_skip, .run = stage_steps};
const ksr_stage_def ksr_stage_plan = {.name = "plan", .skip = plan_skip, .run = stage_plan};
const ksr_stage_def ksr_stage_goal_loop = {
        .name = "goal-loop", .skip = goal_skip, .run = stage_goal};
