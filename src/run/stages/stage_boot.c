/* Boot wait (the X display, or a private Xvfb) and launch. */
#include "run/stages/stage.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ksr/atspi.h"
#include "ksr/proc.h"

/* Asking the session bus for the accessibility bus: one round trip, or an
 * activation of its launcher. */
#define PUBLISH_BUS_MS 3000

/* ---- boot wait ---------------------------------------------------------- */

static double boot_limit(const ksr_run *run)
{
	return run->sc->boot_timeout_s;
}

static ksr_stage_status start_private_display(ksr_run *run, char *note, size_t len)
{
	ksr_session_opts so = {.width = 1280,
	                       .height = 720,
	                       .server = run->opts->display_server,
	                       .wm = run->opts->wm,
	                       .private_home = run->opts->private_home};
	if (run->opts->xvfb_size &&
	    ksr_session_parse_size(run->opts->xvfb_size, &so.width, &so.height) < 0) {
		ksr_run_fail_setup(run, KSR_OUTCOME_NO_DISPLAY, 0,
		                   "KASM_RUNTIME_XVFB_SIZE '%s' is not WIDTHxHEIGHT",
		                   run->opts->xvfb_size);
		return KSR_STAGE_FAILED;
	}
	ksr_err err = {0};
	if (ksr_session_start(&so, run->stage, &run->session, &err) < 0) {
		if (!ksr_run_wait_ended_run(run,
		                            ksr_cancelled() ? KSR_WAIT_CANCELLED : KSR_WAIT_TIMEOUT,
		                            0, "the start of the private display"))
			ksr_run_fail(run, KSR_OUTCOME_NO_DISPLAY, 0,
			             "the private display could not be started: %s", err.msg);
		return KSR_STAGE_FAILED;
	}
	/* Its parts' times, for what a run's start costs (bench/demo.sh). */
	int64_t server_ms, buses_ms, wm_ms;
	ksr_session_start_times(run->session, &server_ms, &buses_ms, &wm_ms);
	cJSON *e = cJSON_CreateObject();
	cJSON_AddNumberToObject(e, "server_ms", (double)server_ms);
	cJSON_AddNumberToObject(e, "buses_ms", (double)buses_ms);
	cJSON_AddNumberToObject(e, "wm_ms", (double)wm_ms);
	ksr_run_emit(run, "session", e);
	snprintf(note, len, "private display %s (%dx%d, %s + %s, %s)",
	         ksr_session_display(run->session), so.width, so.height,
	         ksr_session_server_name(run->session), ksr_session_wm_name(run->session),
	         ksr_session_folders_name(run->session));
	return KSR_STAGE_OK;
}

/* Qt 5 apps join the accessibility bus reliably only when the X root names it
 * (AT_SPI_BUS): a session whose at-spi-bus-launcher ran without DISPLAY (a
 * Kasm image's: dbus-launch, then Xvnc), or whose X server reset after the
 * launcher set it, lacks it (docs/accessibility.md). Published as soon as the
 * display answers, so every app that starts after this (the launch, or the
 * session's own start) joins; an `a11y_bus` event says what was done. */
static void publish_a11y_bus(ksr_run *run, char *note, size_t len)
{
	char *addr = NULL;
	ksr_err err = {0};
	ksr_deadline d = ksr_deadline_min(run->stage, ksr_deadline_in_ms(PUBLISH_BUS_MS));
	int rc = ksr_atspi_publish_root(run->x, d, &addr, &err);
	if (rc == 0)
		return; /* the root names a bus already (or AT_SPI_BUS_ADDRESS is ours) */
	cJSON *e = cJSON_CreateObject();
	if (rc > 0) {
		cJSON_AddStringToObject(e, "published", addr);
		size_t n = strlen(note);
		snprintf(note + n, len - n,
		         "; published the accessibility bus on the X root "
		         "(AT_SPI_BUS), which the session lacked");
	} else {
		cJSON_AddStringToObject(e, "not_published", err.msg);
	}
	ksr_run_emit(run, "a11y_bus", e);
	free(addr);
}

static ksr_stage_status stage_boot_wait(ksr_run *run, char *note, size_t len)
{
	if (run->opts->xvfb && start_private_display(run, note, len) != KSR_STAGE_OK)
		return KSR_STAGE_FAILED;
	ksr_err err = {0};
	ksr_wait w = ksr_x11_open_wait(NULL, run->stage, &run->x, &err);
	if (w == KSR_WAIT_READY) {
		if (!run->session)
			snprintf(note, len, "display %s", ksr_x11_display_name(run->x));
		publish_a11y_bus(run, note, len);
		ksr_run_wm_watch_start(run); /* its death mid-run is a concern */
		ksr_run_video_start(run);
		return KSR_STAGE_OK;
	}
	if (w == KSR_WAIT_ERROR) {
		ksr_run_fail(run, KSR_OUTCOME_NO_DISPLAY, 0,
		             "%s; set DISPLAY to the session's display or pass --xvfb", err.msg);
		return KSR_STAGE_FAILED;
	}
	if (!ksr_run_wait_ended_run(run, w, 0, "the wait for the X display")) {
		const char *d = getenv("DISPLAY");
		ksr_run_fail(run, KSR_OUTCOME_NO_DISPLAY, 0,
		             "the X display %s did not accept a connection within %g s",
		             d ? d : "(unset)", run->sc->boot_timeout_s);
	}
	return KSR_STAGE_FAILED;
}

/* ---- launch ------------------------------------------------------------- */

static const char *launch_skip(const ksr_run *run)
{
	return run->sc->launch ? NULL : "the scenario has no launch: command";
}

static ksr_stage_status stage_launch(ksr_run *run, char *note, size_t len)
{
	ksr_err err = {0};
	cJSON *f = cJSON_CreateObject();
	char *log = ksr_evidence_log_path(run->out, "launch.log");
	/* What is on the display now is not the app this run launches (origin.c). */
	ksr_run_note_windows_before_launch(run);
	int rc =
	        ksr_proc_launch_tagged(run->sc->launch, log, run->run_id, &run->launched_pid, &err);
	if (rc < 0) {
		free(log);
		cJSON_Delete(f);
		ksr_run_fail_setup(run, KSR_OUTCOME_STEP_FAILED, run->sc->launch_pos.line,
		                   "the launch command could not be started: %s", err.msg);
		return KSR_STAGE_FAILED;
	}
	ksr_run_note_launch_started(run);
	cJSON_AddStringToObject(f, "command", run->sc->launch);
	cJSON_AddNumberToObject(f, "pid", run->launched_pid);
	char tag[80];
	snprintf(tag, sizeof tag, "%s=%s", KSR_PROC_RUN_TAG, run->run_id);
	cJSON_AddStringToObject(f, "tag", tag);
	cJSON_AddStringToObject(f, "log", "launch.log");
	ksr_run_emit(run, "launch", f);
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "name", "launch.log");
	cJSON_AddStringToObject(a, "kind", "log");
	cJSON_AddStringToObject(a, "description", "output of the launch command");
	ksr_run_emit(run, "artifact", a);
	snprintf(note, len, "pid %d", run->launched_pid);
	free(log);
	return KSR_STAGE_OK;
}

const ksr_stage_def ksr_stage_boot_wait = {
        .name = "boot-wait", .limit_s = boot_limit, .run = stage_boot_wait};
const ksr_stage_def ksr_stage_launch = {.name = "launch", .skip = launch_skip, .run = stage_launch};
