/* Final checks: the app's process and window are still there at the end, and
 * no error dialog is (the windows classified as at first look). */
#include "run/stages/stage.h"
#include "run/stages/app.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ksr/proc.h"
#include "run/diagnosis/diagnose.h"
#include "run/diagnosis/dialogs.h"

/* ---- final checks ------------------------------------------------------- */

static void final_check(ksr_run *run, const char *name, bool ok, const char *detail)
{
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "name", name);
	cJSON_AddBoolToObject(f, "ok", ok);
	cJSON_AddStringToObject(f, "detail", detail);
	ksr_run_emit(run, "final_check", f);
}

static bool window_still_there(ksr_run *run, char *detail, size_t len)
{
	ksr_err err = {0};
	ksr_window w = run->window;
	w.title = w.res_name = w.res_class = NULL;
	if (ksr_x11_window_refresh(run->x, &w, &err) == 0) {
		snprintf(detail, len, "window 0x%lx \"%s\" is mapped", w.id,
		         w.title ? w.title : "");
		ksr_run_window_release(&w);
		return true;
	}
	/* The app may have replaced its window (a splash, then the main one). */
	ksr_window found = {0};
	if (ksr_run_find_window(run, run->sc->window, run->sc->window_class, &found)) {
		snprintf(detail, len, "window 0x%lx \"%s\" is mapped", found.id,
		         found.title ? found.title : "");
		ksr_run_window_release(&found);
		return true;
	}
	snprintf(detail, len, "the app's window (0x%lx) is gone", run->window.id);
	return false;
}

/* A tool still running: not killed, with a window, and its process group
 * alive (a tool that ended by itself, zenity answered, is not). */
static bool tool_running(const ksr_run *run)
{
	for (size_t i = 0; i < run->n_tools; i++) {
		const ksr_tool *t = &run->tools[i];
		if (!t->stopped && t->window && ksr_proc_group_alive(t->pid))
			return true;
	}
	return false;
}

static const char *final_skip(const ksr_run *run)
{
	if (!run->sc->desktop || tool_running(run))
		return NULL;
	return "desktop mode: no app, and no spawned tool is still running";
}

/* Desktop mode: no app to check, but a spawned tool still running is judged
 * as the app is: an error dialog it left up fails the run. */
static ksr_stage_status tools_final_checks(ksr_run *run, char *note, size_t len)
{
	char detail[256];
	bool clean = ksr_dialogs_tools_at_end(run, detail, sizeof detail);
	final_check(run, "dialogs", clean, detail);
	snprintf(note, len, "the spawned tools still running: %s", detail);
	return clean ? KSR_STAGE_OK : KSR_STAGE_FAILED;
}

static ksr_stage_status stage_final_checks(ksr_run *run, char *note, size_t len)
{
	char detail[256];
	if (run->sc->desktop)
		return tools_final_checks(run, note, len);
	bool alive = ksr_app_alive(run);
	snprintf(detail, sizeof detail, alive ? "pid %d is running" : "pid %d is gone",
	         run->app_pid);
	final_check(run, "process", alive, detail);
	if (!alive) {
		ksr_app_record_crash(run, "before the end of the run");
		return KSR_STAGE_FAILED;
	}
	bool shown = window_still_there(run, detail, sizeof detail);
	final_check(run, "window", shown, detail);
	if (!shown) {
		ksr_run_fail(run, KSR_OUTCOME_WINDOW_LOST, run->sc->window_pos.line, "%s", detail);
		return KSR_STAGE_FAILED;
	}
	/* A dialog that opened during the steps and is still up: what the
	 * first look would have failed or raised a concern for. */
	bool clean = ksr_dialogs_at_end(run, detail, sizeof detail);
	final_check(run, "dialogs", clean, detail);
	if (!clean)
		return KSR_STAGE_FAILED;
	snprintf(note, len, "process and window present; %s", detail);
	ksr_diag_scan_logs_at_end(run);
	return KSR_STAGE_OK;
}

const ksr_stage_def ksr_stage_final_checks = {
        .name = "final-checks", .skip = final_skip, .run = stage_final_checks};
