/* App wait: the app's process and window (docs/scenario.md). */
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

/* ---- app wait ----------------------------------------------------------- */

static const char *app_skip(const ksr_run *run)
{
	return run->sc->desktop ? "desktop mode: there is no app to wait for" : NULL;
}

static double app_limit(const ksr_run *run)
{
	return run->sc->launch_timeout_s;
}

typedef struct app_match {
	bool process_seen, window_seen;
	int pid;
	ksr_window window;
} app_match;

static bool pid_in(const ksr_proc_list *procs, int pid)
{
	for (size_t i = 0; pid > 0 && i < procs->len; i++)
		if (procs->items[i].pid == pid)
			return true;
	return false;
}

static bool window_matches(const ksr_scenario *sc, const ksr_window *w)
{
	if (sc->window && !ksr_pattern_match(sc->window, w->title))
		return false;
	if (sc->window_class && !ksr_pattern_match(sc->window_class, w->res_name) &&
	    !ksr_pattern_match(sc->window_class, w->res_class))
		return false;
	return true;
}

static void keep_window(app_match *m, const ksr_window *w, int pid)
{
	m->window = *w;
	m->window.title = ksr_xstrdup(w->title);
	m->window.res_name = ksr_xstrdup(w->res_name);
	m->window.res_class = ksr_xstrdup(w->res_class);
	m->window_seen = true;
	m->pid = pid;
}

/* docs/architecture.md: the window is tied to the process by _NET_WM_PID when it matches;
 * otherwise (a launcher that forks) any matching process and any matching
 * window satisfy the wait. With no window: pattern, a window of a matching
 * process is required. */
static bool some_window_matches(const ksr_scenario *sc, const ksr_window_list *wins)
{
	for (size_t i = 0; i < wins->len; i++)
		if (window_matches(sc, &wins->items[i]))
			return true;
	return false;
}

/* Windows first: while no window matches, the /proc scan (the slow part, a
 * few ms) is skipped, so a window is seen within ~1 ms of its map. full
 * forces the scan, for the final word on what is missing. */
static bool app_present(ksr_run *run, app_match *m, bool full)
{
	const ksr_scenario *sc = run->sc;
	bool want_proc = sc->process || sc->process_cmdline;
	ksr_proc_list procs = {0};
	ksr_window_list wins = {0};
	ksr_err err = {0};
	ksr_x11_list_windows(run->x, &wins, &err);
	if (!full && (sc->window || sc->window_class) && !some_window_matches(sc, &wins)) {
		m->window_seen = false;
		ksr_window_list_clear(&wins);
		return false;
	}
	if (want_proc)
		ksr_proc_find(sc->process, sc->process_cmdline, &procs, &err);
	m->process_seen = !want_proc || procs.len > 0;
	const ksr_window *tied = NULL, *any = NULL;
	for (size_t i = 0; i < wins.len; i++) {
		const ksr_window *w = &wins.items[i];
		bool of_proc = pid_in(&procs, w->pid);
		if (!sc->window && !sc->window_class) {
			if (of_proc && !tied)
				tied = w;
			continue;
		}
		if (!window_matches(sc, w))
			continue;
		if (of_proc && !tied)
			tied = w;
		if (!any)
			any = w;
	}
	const ksr_window *pick = tied ? tied : (!want_proc || procs.len ? any : NULL);
	if (pick)
		keep_window(m, pick,
		            tied ? pick->pid : (want_proc ? procs.items[0].pid : pick->pid));
	else
		m->window_seen = any != NULL;
	ksr_proc_list_clear(&procs);
	ksr_window_list_clear(&wins);
	return m->process_seen && pick != NULL;
}

static void record_app(ksr_run *run, app_match *m)
{
	ksr_run_window_release(&run->window);
	run->window = m->window;
	run->have_window = true;
	run->app_pid = m->pid;
	cJSON *f = cJSON_CreateObject();
	cJSON_AddNumberToObject(f, "pid", m->pid);
	ksr_proc_list procs = {0};
	ksr_err err = {0};
	if (m->pid > 0 && ksr_proc_find(NULL, NULL, &procs, &err) == 0) {
		for (size_t i = 0; i < procs.len; i++)
			if (procs.items[i].pid == m->pid) {
				cJSON_AddStringToObject(f, "name", procs.items[i].name);
				cJSON_AddStringToObject(f, "cmdline", procs.items[i].cmdline);
			}
	}
	ksr_proc_list_clear(&procs);
	cJSON_AddBoolToObject(f, "launched", run->launched_pid > 0);
	cJSON *w = cJSON_AddObjectToObject(f, "window");
	char id[32];
	snprintf(id, sizeof id, "0x%lx", m->window.id);
	cJSON_AddStringToObject(w, "id", id);
	cJSON_AddStringToObject(w, "title", m->window.title ? m->window.title : "");
	cJSON_AddStringToObject(w, "class", m->window.res_class ? m->window.res_class : "");
	cJSON_AddNumberToObject(w, "x", m->window.x);
	cJSON_AddNumberToObject(w, "y", m->window.y);
	cJSON_AddNumberToObject(w, "w", m->window.w);
	cJSON_AddNumberToObject(w, "h", m->window.h);
	ksr_run_emit(run, "app", f);
}

/* The launch command died by a signal before any window: a crash, not a slow
 * start (a launcher that forks and exits 0 is normal, and the wait goes on). */
static bool launch_crashed(ksr_run *run)
{
	if (run->launched_pid <= 0 || !ksr_app_reap_launch(run, 0))
		return false;
	int st = run->launch_status;
	return WIFSIGNALED(st) || (WIFEXITED(st) && WEXITSTATUS(st) > 128);
}

static ksr_stage_status stage_app_wait(ksr_run *run, char *note, size_t len)
{
	const ksr_scenario *sc = run->sc;
	app_match m = {0};
	for (;;) {
		if (app_present(run, &m, false)) {
			record_app(run, &m);
			snprintf(note, len, "pid %d, window \"%s\"", m.pid,
			         run->window.title ? run->window.title : "");
			return KSR_STAGE_OK;
		}
		if (launch_crashed(run)) {
			run->app_pid = run->launched_pid;
			ksr_app_record_crash(run, "before its window appeared");
			return KSR_STAGE_FAILED;
		}
		ksr_deadline tick =
		        ksr_deadline_min(run->stage, ksr_deadline_in_ms(PROC_RESCAN_MS));
		ksr_wait w = ksr_x11_wait_change(run->x, tick);
		if (w == KSR_WAIT_ERROR) {
			ksr_run_fail(run, KSR_OUTCOME_NO_DISPLAY, 0,
			             "the X display connection was lost during the app wait");
			return KSR_STAGE_FAILED;
		}
		if (w == KSR_WAIT_TIMEOUT && !ksr_deadline_passed(run->stage))
			continue;
		if (w == KSR_WAIT_READY)
			continue;
		if (ksr_run_wait_ended_run(run, w, 0, "the app wait"))
			return KSR_STAGE_FAILED;
		break;
	}
	if (ksr_x11_alive(run->x) && app_present(run, &m, true)) { /* a last look, /proc too */
		record_app(run, &m);
		snprintf(note, len, "pid %d, window \"%s\" (at the limit)", m.pid,
		         run->window.title ? run->window.title : "");
		return KSR_STAGE_OK;
	}
	const char *missing = !m.process_seen && !m.window_seen ? "neither a process nor a window"
	                      : !m.process_seen                 ? "no process"
	                                                        : "no window";
	ksr_run_fail(run, KSR_OUTCOME_NEVER_APPEARED,
	             sc->process ? sc->process_pos.line : sc->window_pos.line,
	             "the app never appeared: %s matching (process %s, window %s) within %g s",
	             missing, sc->process ? ksr_pattern_source(sc->process) : "any",
	             sc->window ? ksr_pattern_source(sc->window) : "of that process",
	             sc->launch_timeout_s);
	return KSR_STAGE_FAILED;
}

const ksr_stage_def ksr_stage_app_wait = {
        .name = "app-wait", .limit_s = app_limit, .skip = app_skip, .run = stage_app_wait};
