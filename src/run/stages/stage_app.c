/* The app: waiting for it, letting it settle, and the final checks. */
#include "run/stages/stage.h"

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

static bool reap_launch(ksr_run *run, int wait_ms);
static void record_crash(ksr_run *run, const char *when);

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

/* /proc has no change events: rescan on every X event and on this slow timer. */
#define PROC_RESCAN_MS 250

/* The launch command died by a signal before any window: a crash, not a slow
 * start (a launcher that forks and exits 0 is normal, and the wait goes on). */
static bool launch_crashed(ksr_run *run)
{
	if (run->launched_pid <= 0 || !reap_launch(run, 0))
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
			record_crash(run, "before its window appeared");
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

/* ---- settle ------------------------------------------------------------- */

static double settle_limit(const ksr_run *run)
{
	return run->sc->settle_s;
}

static void describe_exit(int status, char *buf, size_t len)
{
	if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d (%s)%s", WTERMSIG(status),
		         sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status)) : "?",
		         WCOREDUMP(status) ? ", core dumped" : "");
	else if (WEXITSTATUS(status) > 128) /* sh reports a child killed by signal N as 128+N */
		snprintf(buf, len, "ended by signal %d (%s; the launch shell's exit status %d)",
		         WEXITSTATUS(status) - 128,
		         sigabbrev_np(WEXITSTATUS(status) - 128)
		                 ? sigabbrev_np(WEXITSTATUS(status) - 128)
		                 : "?",
		         WEXITSTATUS(status));
	else
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
}

/* Reap the launch command if it has ended, waiting briefly: when the app was a
 * child of the launch shell, the shell ends right after it. Not cancellable:
 * this is how the failure is described, and it is bounded. */
static bool reap_launch(ksr_run *run, int wait_ms)
{
	if (run->launched_pid <= 0 || run->launch_reaped)
		return run->launch_reaped;
	int fd = wait_ms > 0 ? ksr_proc_pidfd(run->launched_pid) : -1;
	struct pollfd p = {.fd = fd, .events = POLLIN};
	ksr_deadline d = ksr_deadline_in_ms(wait_ms);
	for (;;) {
		if (ksr_proc_reap(run->launched_pid, &run->launch_status) == 1) {
			run->launch_reaped = true;
			break;
		}
		if (ksr_deadline_passed(d))
			break;
		/* The pidfd turns readable when the command exits; without one (old
		 * kernels, valgrind) look again in 20 ms. A cancel ends the wait:
		 * the caller then reports what it knows. */
		ksr_wait w = fd >= 0 ? ksr_wait_fds(&p, 1, d)
		                     : ksr_sleep_until(ksr_deadline_min(d, ksr_deadline_in_ms(20)));
		if (w == KSR_WAIT_CANCELLED || w == KSR_WAIT_ERROR) {
			if (ksr_proc_reap(run->launched_pid, &run->launch_status) == 1)
				run->launch_reaped = true;
			break;
		}
	}
	if (fd >= 0)
		close(fd);
	return run->launch_reaped;
}

/* The app is gone: record a crash with whatever we know of how it ended. */
static void record_crash(ksr_run *run, const char *when)
{
	char how[128] = "exited";
	if (run->launched_pid > 0 && reap_launch(run, 300)) {
		int st = run->launch_status;
		if (run->app_pid == run->launched_pid || WIFSIGNALED(st) ||
		    (WIFEXITED(st) && WEXITSTATUS(st) > 128))
			describe_exit(st, how, sizeof how);
	}
	cJSON *f = cJSON_CreateObject();
	cJSON_AddNumberToObject(f, "pid", run->app_pid);
	cJSON_AddStringToObject(f, "how", how);
	ksr_run_emit(run, "app.exit", f);
	/* Held, not recorded: diagnosis tells a crash from a crash loop first. */
	char reason[256];
	snprintf(reason, sizeof reason, "the app (pid %d) %s %s", run->app_pid, how, when);
	ksr_diag_hold_crash(run, reason);
}

static bool app_alive(ksr_run *run)
{
	if (run->app_pid <= 0)
		return true; /* nothing known to watch: the window decides */
	if (run->app_pid == run->launched_pid) {
		reap_launch(run, 0);
		return !run->launch_reaped && ksr_proc_alive(run->app_pid);
	}
	return ksr_proc_alive(run->app_pid);
}

static ksr_stage_status stage_settle(ksr_run *run, char *note, size_t len)
{
	int pidfd = run->app_pid > 0 ? ksr_proc_pidfd(run->app_pid) : -1;
	ksr_stage_status st = KSR_STAGE_OK;
	for (;;) {
		if (!app_alive(run)) {
			record_crash(run, "during settle");
			st = KSR_STAGE_FAILED;
			break;
		}
		struct pollfd p = {.fd = pidfd, .events = POLLIN};
		ksr_deadline tick =
		        ksr_deadline_min(run->stage, ksr_deadline_in_ms(PROC_RESCAN_MS));
		ksr_wait w = ksr_wait_fds(&p, pidfd >= 0 ? 1 : 0, tick);
		if (w == KSR_WAIT_READY ||
		    (w == KSR_WAIT_TIMEOUT && !ksr_deadline_passed(run->stage)))
			continue;
		if (ksr_run_wait_ended_run(run, w, 0, "settle")) {
			st = KSR_STAGE_FAILED;
			break;
		}
		if (!app_alive(run)) {
			record_crash(run, "during settle");
			st = KSR_STAGE_FAILED;
		}
		break;
	}
	if (pidfd >= 0)
		close(pidfd);
	if (st == KSR_STAGE_OK) {
		snprintf(note, len, "settled %g s; the app is alive", run->sc->settle_s);
		ksr_dialogs_after_settle(run);
		ksr_run_watch_app(run); /* from here on its death ends every wait */
	}
	return st;
}

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

static const char *final_skip(const ksr_run *run)
{
	return run->sc->desktop ? "desktop mode: no app process or window to check" : NULL;
}

static ksr_stage_status stage_final_checks(ksr_run *run, char *note, size_t len)
{
	char detail[256];
	bool alive = app_alive(run);
	snprintf(detail, sizeof detail, alive ? "pid %d is running" : "pid %d is gone",
	         run->app_pid);
	final_check(run, "process", alive, detail);
	if (!alive) {
		record_crash(run, "before the end of the run");
		return KSR_STAGE_FAILED;
	}
	bool shown = window_still_there(run, detail, sizeof detail);
	final_check(run, "window", shown, detail);
	if (!shown) {
		ksr_run_fail(run, KSR_OUTCOME_WINDOW_LOST, run->sc->window_pos.line, "%s", detail);
		return KSR_STAGE_FAILED;
	}
	snprintf(note, len, "process and window present");
	ksr_diag_scan_logs_at_end(run);
	return KSR_STAGE_OK;
}

const ksr_stage_def ksr_stage_app_wait = {
        .name = "app-wait", .limit_s = app_limit, .skip = app_skip, .run = stage_app_wait};
const ksr_stage_def ksr_stage_settle = {
        .name = "settle", .limit_s = settle_limit, .run = stage_settle};
const ksr_stage_def ksr_stage_final_checks = {
        .name = "final-checks", .skip = final_skip, .run = stage_final_checks};
