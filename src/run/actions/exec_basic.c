/* Executors that need no input backend: shell, sleep, wait_window. */
#include "run/actions/exec.h"
#include "run/actions/runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/proc.h"
#include "run/actions/exec.h"

#define SHELL_DEFAULT_S       30
#define WAIT_WINDOW_DEFAULT_S 10
#define OUTPUT_MAX            4096

static ksr_deadline step_deadline(const ksr_run *run, const ksr_step *step, double dflt)
{
	double s = step->timeout_s > 0 ? step->timeout_s : dflt;
	return ksr_deadline_min(run->work, ksr_deadline_in_ms((int64_t)(s * 1000)));
}

static void ended(ksr_run *run, const ksr_step *step, ksr_wait w, ksr_step_result *res)
{
	ksr_run_wait_ended_run(run, w, step->pos.line, step->info->name);
	res->status = KSR_STEP_ERROR;
}

void ksr_exec_shell(ksr_run *run, const ksr_step *step, const ksr_step_target *t,
                    ksr_step_result *res)
{
	(void)t;
	ksr_err err = {0};
	int code = -1;
	char *output = NULL;
	ksr_deadline d = step_deadline(run, step, SHELL_DEFAULT_S);
	ksr_wait w = ksr_proc_run(step->text, d, &code, &output, OUTPUT_MAX, &err);
	res->extra = cJSON_CreateObject();
	cJSON_AddStringToObject(res->extra, "output", output ? output : "");
	free(output);
	if (w == KSR_WAIT_CANCELLED || (w == KSR_WAIT_TIMEOUT && ksr_deadline_passed(run->work))) {
		ended(run, step, w, res);
		return;
	}
	cJSON_AddNumberToObject(res->extra, "exit_code", code);
	if (w == KSR_WAIT_ERROR) {
		res->status = KSR_STEP_ERROR;
		res->outcome = KSR_OUTCOME_STEP_FAILED;
		snprintf(res->reason, sizeof res->reason,
		         "the shell command could not be run: %.400s", err.msg);
	} else if (w == KSR_WAIT_TIMEOUT) {
		res->status = KSR_STEP_FAILED;
		res->outcome = KSR_OUTCOME_STEP_FAILED;
		snprintf(res->reason, sizeof res->reason,
		         "the shell command did not finish within its %g s timeout",
		         step->timeout_s > 0 ? step->timeout_s : SHELL_DEFAULT_S);
	} else if (code == 126 || code == 127) {
		/* The scenario's setup is wrong (command missing), not the app. */
		res->status = KSR_STEP_ERROR;
		res->outcome = KSR_OUTCOME_STEP_FAILED;
		snprintf(res->reason, sizeof res->reason,
		         "the shell command could not be executed (exit %d: %s)", code,
		         code == 127 ? "command not found" : "not executable");
	} else if (code != 0) {
		res->status = KSR_STEP_FAILED;
		res->outcome = KSR_OUTCOME_STEP_FAILED;
		snprintf(res->reason, sizeof res->reason, "the shell command exited with %d", code);
	}
}

void ksr_exec_sleep(ksr_run *run, const ksr_step *step, const ksr_step_target *t,
                    ksr_step_result *res)
{
	(void)t;
	ksr_deadline d = ksr_deadline_in_ms((int64_t)(step->seconds * 1000));
	ksr_wait w = ksr_sleep_until(ksr_deadline_min(d, run->work));
	if (w == KSR_WAIT_CANCELLED || ksr_deadline_passed(run->work))
		ended(run, step, w, res);
}

void ksr_exec_wait_window(ksr_run *run, const ksr_step *step, const ksr_step_target *t,
                          ksr_step_result *res)
{
	(void)t;
	ksr_deadline d = step_deadline(run, step, WAIT_WINDOW_DEFAULT_S);
	ksr_window found = {0};
	for (;;) {
		if (ksr_run_find_window(run, step->re, NULL, &found)) {
			res->has_window = true;
			res->win_x = found.x, res->win_y = found.y;
			res->win_w = found.w, res->win_h = found.h;
			ksr_run_window_release(&found);
			return;
		}
		ksr_wait w = ksr_x11_wait_change(run->x, d);
		if (w == KSR_WAIT_READY)
			continue;
		if (w == KSR_WAIT_CANCELLED || ksr_deadline_passed(run->work)) {
			ended(run, step, w, res);
			return;
		}
		if (w == KSR_WAIT_ERROR || ksr_deadline_passed(d)) {
			if (ksr_run_find_window(run, step->re, NULL, NULL))
				return;
			res->status = KSR_STEP_FAILED;
			res->outcome = KSR_OUTCOME_CHECK_FAILED;
			snprintf(res->reason, sizeof res->reason,
			         "no window matching %s appeared within %g s",
			         ksr_pattern_source(step->re),
			         step->timeout_s > 0 ? step->timeout_s : WAIT_WINDOW_DEFAULT_S);
			return;
		}
	}
}
