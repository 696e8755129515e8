/* Diagnosis after a failure, and stopping the app at the end. */
#include "run/stage.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ksr/proc.h"

/* ---- diagnosis and the end ---------------------------------------------- */

static bool diagnosis_applies(const ksr_run *run)
{
	switch (run->failure_outcome) {
	case KSR_OUTCOME_INTERRUPTED:
	case KSR_OUTCOME_INVALID_SCENARIO:
	case KSR_OUTCOME_NO_DISPLAY:
	case KSR_OUTCOME_OUTPUT_UNWRITABLE:
		return false;
	default:
		return true;
	}
}

static void tail_launch_log(ksr_run *run)
{
	if (!run->launched_pid)
		return;
	char *path = ksr_evidence_path(run->out, "launch.log");
	FILE *f = fopen(path, "r");
	free(path);
	if (!f)
		return;
	enum { TAIL = 4096 };
	char buf[TAIL + 1];
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	fseek(f, size > TAIL ? size - TAIL : 0, SEEK_SET);
	size_t n = fread(buf, 1, TAIL, f);
	fclose(f);
	buf[n] = '\0';
	cJSON *t = cJSON_CreateObject();
	cJSON_AddStringToObject(t, "path", "launch.log");
	cJSON_AddStringToObject(t, "text", buf);
	ksr_run_emit(run, "log_tail", t);
}

void ksr_stages_diagnose(ksr_run *run)
{
	if (!run->sc || !diagnosis_applies(run) || ksr_cancelled())
		return;
	ksr_events_set_stage(run->ev, "diagnosis");
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "name", "diagnosis");
	ksr_run_emit(run, "stage.start", f);
	int64_t started = ksr_now_ms();
	if (run->x && ksr_x11_alive(run->x))
		ksr_run_screenshot(run, "99-failure.png", "the screen when the run failed");
	tail_launch_log(run);
	ksr_stage_emit_end(
	        run, "diagnosis", "ok",
	        "failure screenshot and launch log tail; crash-loop and log forensics are "
	        "not built yet (issue #3)",
	        started);
	ksr_events_set_stage(run->ev, NULL);
}

void ksr_stages_stop_app(ksr_run *run)
{
	if (run->launched_pid <= 0 || !run->sc)
		return;
	if (run->sc->keep_running)
		return;
	ksr_proc_stop_group(run->launched_pid, 3000);
	run->launch_reaped = true;
}
