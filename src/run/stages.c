/* The stage machine (DESIGN §3): every stage in order, each under its own
 * limit and the run's working deadline. A stage that fails records the failure
 * signal and the run jumps to diagnosis and the report. */
#include "run/run.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ksr/proc.h"

typedef enum stage_status {
	STAGE_OK,
	STAGE_FAILED,
	STAGE_SKIPPED,
} stage_status;

typedef struct stage_def {
	const char *name;
	/* Seconds this stage may take (0: only the run deadline bounds it). */
	double (*limit_s)(const ksr_run *run);
	/* NULL when the stage runs; else why it is skipped. */
	const char *(*skip)(const ksr_run *run);
	stage_status (*run)(ksr_run *run, char *note, size_t len);
} stage_def;

/* ---- boot wait ---------------------------------------------------------- */

static double boot_limit(const ksr_run *run)
{
	return run->sc->boot_timeout_s;
}

static stage_status start_private_display(ksr_run *run, char *note, size_t len)
{
	ksr_session_opts so = {.width = 1280, .height = 720};
	if (run->opts->xvfb_size &&
	    ksr_session_parse_size(run->opts->xvfb_size, &so.width, &so.height) < 0) {
		ksr_run_fail_setup(run, KSR_OUTCOME_NO_DISPLAY, 0,
				   "KASM_RUNTIME_XVFB_SIZE '%s' is not WIDTHxHEIGHT",
				   run->opts->xvfb_size);
		return STAGE_FAILED;
	}
	ksr_err err = {0};
	if (ksr_session_start(&so, run->stage, &run->session, &err) < 0) {
		if (!ksr_run_wait_ended_run(run, ksr_cancelled() ? KSR_WAIT_CANCELLED
								  : KSR_WAIT_TIMEOUT,
					    0, "the start of the private Xvfb"))
			ksr_run_fail(run, KSR_OUTCOME_NO_DISPLAY, 0,
				     "the private Xvfb display could not be started: %s", err.msg);
		return STAGE_FAILED;
	}
	snprintf(note, len, "private display %s (%dx%d)", ksr_session_display(run->session),
		 so.width, so.height);
	return STAGE_OK;
}

static stage_status stage_boot_wait(ksr_run *run, char *note, size_t len)
{
	if (run->opts->xvfb && start_private_display(run, note, len) != STAGE_OK)
		return STAGE_FAILED;
	ksr_err err = {0};
	ksr_wait w = ksr_x11_open_wait(NULL, run->stage, &run->x, &err);
	if (w == KSR_WAIT_READY) {
		if (!run->session)
			snprintf(note, len, "display %s", ksr_x11_display_name(run->x));
		return STAGE_OK;
	}
	if (w == KSR_WAIT_ERROR) {
		ksr_run_fail(run, KSR_OUTCOME_NO_DISPLAY, 0,
			     "%s; set DISPLAY to the session's display or pass --xvfb", err.msg);
		return STAGE_FAILED;
	}
	if (!ksr_run_wait_ended_run(run, w, 0, "the wait for the X display")) {
		const char *d = getenv("DISPLAY");
		ksr_run_fail(run, KSR_OUTCOME_NO_DISPLAY, 0,
			     "the X display %s did not accept a connection within %g s",
			     d ? d : "(unset)", run->sc->boot_timeout_s);
	}
	return STAGE_FAILED;
}

/* ---- launch ------------------------------------------------------------- */

static const char *launch_skip(const ksr_run *run)
{
	return run->sc->launch ? NULL : "the scenario has no launch: command";
}

static stage_status stage_launch(ksr_run *run, char *note, size_t len)
{
	ksr_err err = {0};
	char *log = ksr_evidence_path(run->out, "launch.log");
	int rc = ksr_proc_launch(run->sc->launch, log, &run->launched_pid, &err);
	if (rc < 0) {
		free(log);
		ksr_run_fail_setup(run, KSR_OUTCOME_STEP_FAILED, run->sc->launch_pos.line,
				   "the launch command could not be started: %s", err.msg);
		return STAGE_FAILED;
	}
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "command", run->sc->launch);
	cJSON_AddNumberToObject(f, "pid", run->launched_pid);
	cJSON_AddStringToObject(f, "log", "launch.log");
	ksr_run_emit(run, "launch", f);
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "name", "launch.log");
	cJSON_AddStringToObject(a, "kind", "log");
	cJSON_AddStringToObject(a, "description", "output of the launch command");
	ksr_run_emit(run, "artifact", a);
	snprintf(note, len, "pid %d", run->launched_pid);
	free(log);
	return STAGE_OK;
}

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

/* DESIGN §3: the window is tied to the process by _NET_WM_PID when it matches;
 * otherwise (a launcher that forks) any matching process and any matching
 * window satisfy the wait. With no window: pattern, a window of a matching
 * process is required. */
static bool app_present(ksr_run *run, app_match *m)
{
	const ksr_scenario *sc = run->sc;
	bool want_proc = sc->process || sc->process_cmdline;
	ksr_proc_list procs = {0};
	ksr_window_list wins = {0};
	ksr_err err = {0};
	if (want_proc)
		ksr_proc_find(sc->process, sc->process_cmdline, &procs, &err);
	ksr_x11_list_windows(run->x, &wins, &err);
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
		keep_window(m, pick, tied ? pick->pid : (want_proc ? procs.items[0].pid : pick->pid));
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

static stage_status stage_app_wait(ksr_run *run, char *note, size_t len)
{
	const ksr_scenario *sc = run->sc;
	app_match m = {0};
	for (;;) {
		if (app_present(run, &m)) {
			record_app(run, &m);
			snprintf(note, len, "pid %d, window \"%s\"", m.pid,
				 run->window.title ? run->window.title : "");
			return STAGE_OK;
		}
		ksr_deadline tick = ksr_deadline_min(run->stage, ksr_deadline_in_ms(PROC_RESCAN_MS));
		ksr_wait w = ksr_x11_wait_change(run->x, tick);
		if (w == KSR_WAIT_ERROR) {
			ksr_run_fail(run, KSR_OUTCOME_NO_DISPLAY, 0,
				     "the X display connection was lost during the app wait");
			return STAGE_FAILED;
		}
		if (w == KSR_WAIT_TIMEOUT && !ksr_deadline_passed(run->stage))
			continue;
		if (w == KSR_WAIT_READY)
			continue;
		if (ksr_run_wait_ended_run(run, w, 0, "the app wait"))
			return STAGE_FAILED;
		break;
	}
	const char *missing = !m.process_seen && !m.window_seen ? "neither a process nor a window"
			      : !m.process_seen ? "no process"
						 : "no window";
	ksr_run_fail(run, KSR_OUTCOME_NEVER_APPEARED,
		     sc->process ? sc->process_pos.line : sc->window_pos.line,
		     "the app never appeared: %s matching (process %s, window %s) within %g s",
		     missing, sc->process ? ksr_pattern_source(sc->process) : "any",
		     sc->window ? ksr_pattern_source(sc->window) : "of that process",
		     sc->launch_timeout_s);
	return STAGE_FAILED;
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
	else
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
}

/* Reap the launch command if it has ended, waiting briefly: when the app was a
 * child of the launch shell, the shell ends right after it. Not cancellable:
 * this is how the failure is described, and it is bounded. */
static bool reap_launch(ksr_run *run, int wait_ms)
{
	for (int waited = 0; run->launched_pid > 0 && !run->launch_reaped; waited += 20) {
		if (ksr_proc_reap(run->launched_pid, &run->launch_status) == 1)
			run->launch_reaped = true;
		else if (waited >= wait_ms)
			break;
		else
			usleep(20 * 1000);
	}
	return run->launch_reaped;
}

/* The app is gone: record a crash with whatever we know of how it ended. */
static void record_crash(ksr_run *run, const char *when)
{
	char how[128] = "exited";
	if (run->launched_pid > 0 && reap_launch(run, 300)) {
		int st = run->launch_status;
		if (run->app_pid == run->launched_pid)
			describe_exit(st, how, sizeof how);
		else if (WIFEXITED(st) && WEXITSTATUS(st) > 128)
			/* sh reports a child killed by signal N as exit 128+N. */
			snprintf(how, sizeof how, "ended (the launch shell reported signal %d, %s)",
				 WEXITSTATUS(st) - 128,
				 sigabbrev_np(WEXITSTATUS(st) - 128) ? sigabbrev_np(WEXITSTATUS(st) - 128) : "?");
	}
	cJSON *f = cJSON_CreateObject();
	cJSON_AddNumberToObject(f, "pid", run->app_pid);
	cJSON_AddStringToObject(f, "how", how);
	ksr_run_emit(run, "app.exit", f);
	ksr_run_fail(run, KSR_OUTCOME_CRASHED, 0, "the app (pid %d) %s %s", run->app_pid, how,
		     when);
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

static stage_status stage_settle(ksr_run *run, char *note, size_t len)
{
	int pidfd = run->app_pid > 0 ? ksr_proc_pidfd(run->app_pid) : -1;
	stage_status st = STAGE_OK;
	for (;;) {
		if (!app_alive(run)) {
			record_crash(run, "during settle");
			st = STAGE_FAILED;
			break;
		}
		struct pollfd p = {.fd = pidfd, .events = POLLIN};
		ksr_deadline tick = ksr_deadline_min(run->stage, ksr_deadline_in_ms(PROC_RESCAN_MS));
		ksr_wait w = ksr_wait_fds(&p, pidfd >= 0 ? 1 : 0, tick);
		if (w == KSR_WAIT_READY || (w == KSR_WAIT_TIMEOUT && !ksr_deadline_passed(run->stage)))
			continue;
		if (ksr_run_wait_ended_run(run, w, 0, "settle")) {
			st = STAGE_FAILED;
			break;
		}
		if (!app_alive(run)) {
			record_crash(run, "during settle");
			st = STAGE_FAILED;
		}
		break;
	}
	if (pidfd >= 0)
		close(pidfd);
	if (st == STAGE_OK)
		snprintf(note, len, "settled %g s; the app is alive", run->sc->settle_s);
	return st;
}

/* ---- accessibility probe, first look, browser attach -------------------- */

static const char *probe_skip(const ksr_run *run)
{
	if (!run->sc->atspi)
		return "atspi: false in the scenario";
	return "the accessibility backend is not built yet (issue #5)";
}

static stage_status stage_probe(ksr_run *run, char *note, size_t len)
{
	(void)run, (void)note, (void)len;
	return STAGE_SKIPPED;
}

/* --update-baseline: the first-look screenshot becomes the scenario's baseline. */
static void update_baseline(ksr_run *run, const unsigned char *png, size_t len, char *note,
			    size_t note_len)
{
	const char *path = run->sc->baseline;
	if (!path) {
		snprintf(note, note_len, "--update-baseline given but the scenario has no baseline:");
		return;
	}
	FILE *f = fopen(path, "wb");
	bool ok = f && fwrite(png, 1, len, f) == len;
	if (f && fclose(f) != 0)
		ok = false;
	snprintf(note, note_len, ok ? "baseline %s updated" : "baseline %s could not be written",
		 path);
	cJSON *b = cJSON_CreateObject();
	cJSON_AddStringToObject(b, "path", path);
	cJSON_AddBoolToObject(b, "written", ok);
	ksr_run_emit(run, "baseline.update", b);
}

static stage_status stage_first_look(ksr_run *run, char *note, size_t len)
{
	unsigned char *png = NULL;
	size_t png_len = 0;
	if (ksr_run_screenshot_keep(run, "00-first-look.png", "the screen after settle", &png,
				    &png_len) < 0 &&
	    !ksr_x11_alive(run->x)) {
		ksr_run_fail(run, KSR_OUTCOME_NO_DISPLAY, 0,
			     "the X display connection was lost before the first look");
		return STAGE_FAILED;
	}
	char extra[256] = "";
	if (png && run->opts->update_baseline)
		update_baseline(run, png, png_len, extra, sizeof extra);
	free(png);
	snprintf(note, len,
		 "screenshot 00-first-look.png%s%s; baseline comparison and dialog detection are "
		 "not built yet (issue #3)",
		 extra[0] ? "; " : "", extra);
	return STAGE_OK;
}

static const char *attach_skip(const ksr_run *run)
{
	return run->sc->cdp ? NULL : "not a CDP scenario";
}

static int first_cdp_line(const ksr_scenario *sc)
{
	for (size_t i = 0; i < sc->steps.len; i++)
		if (sc->steps.items[i].info->backend == KSR_BACKEND_CDP)
			return sc->steps.items[i].pos.line;
	return 0;
}

static stage_status stage_browser_attach(ksr_run *run, char *note, size_t len)
{
	(void)note, (void)len;
	ksr_run_fail_setup(run, KSR_OUTCOME_BACKEND_UNAVAILABLE, first_cdp_line(run->sc),
			   "the scenario needs the CDP backend (browser pages), which this build "
			   "does not have yet");
	return STAGE_FAILED;
}

/* ---- steps, plan, goal loop --------------------------------------------- */

static const char *steps_skip(const ksr_run *run)
{
	return run->sc->steps.len ? NULL : "the scenario has no steps:";
}

static stage_status stage_steps(ksr_run *run, char *note, size_t len)
{
	if (!ksr_steps_run(run, &run->sc->steps))
		return STAGE_FAILED;
	snprintf(note, len, "%zu step(s) passed", run->sc->steps.len);
	return STAGE_OK;
}

static const char *plan_skip(const ksr_run *run)
{
	return run->sc->plan.len ? NULL : "the scenario has no plan:";
}

static stage_status stage_plan(ksr_run *run, char *note, size_t len)
{
	(void)note, (void)len;
	ksr_run_fail_setup(run, KSR_OUTCOME_BACKEND_UNAVAILABLE, run->sc->plan.items[0].pos.line,
			   "plan replay is not built yet (issue #8); the plan was not run");
	return STAGE_FAILED;
}

static const char *goal_skip(const ksr_run *run)
{
	return run->sc->goal ? NULL : "the scenario has no goal:";
}

static stage_status stage_goal(ksr_run *run, char *note, size_t len)
{
	(void)note, (void)len;
	ksr_run_fail_setup(run, KSR_OUTCOME_BACKEND_UNAVAILABLE, run->sc->goal_pos.line,
			   "the goal loop needs a planner model, and the model backend is not "
			   "built yet (issue #7/#8)");
	return STAGE_FAILED;
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
		snprintf(detail, len, "window 0x%lx \"%s\" is mapped", w.id, w.title ? w.title : "");
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

static stage_status stage_final_checks(ksr_run *run, char *note, size_t len)
{
	char detail[256];
	bool alive = app_alive(run);
	snprintf(detail, sizeof detail, alive ? "pid %d is running" : "pid %d is gone",
		 run->app_pid);
	final_check(run, "process", alive, detail);
	if (!alive) {
		record_crash(run, "before the end of the run");
		return STAGE_FAILED;
	}
	bool shown = window_still_there(run, detail, sizeof detail);
	final_check(run, "window", shown, detail);
	if (!shown) {
		ksr_run_fail(run, KSR_OUTCOME_WINDOW_LOST, run->sc->window_pos.line, "%s", detail);
		return STAGE_FAILED;
	}
	snprintf(note, len, "process and window present");
	return STAGE_OK;
}

/* ---- the machine -------------------------------------------------------- */

static const stage_def stages[] = {
	{.name = "boot-wait", .limit_s = boot_limit, .run = stage_boot_wait},
	{.name = "launch", .skip = launch_skip, .run = stage_launch},
	{.name = "app-wait", .limit_s = app_limit, .skip = app_skip, .run = stage_app_wait},
	{.name = "settle", .limit_s = settle_limit, .run = stage_settle},
	{.name = "accessibility-probe", .skip = probe_skip, .run = stage_probe},
	{.name = "first-look", .run = stage_first_look},
	{.name = "browser-attach", .skip = attach_skip, .run = stage_browser_attach},
	{.name = "steps", .skip = steps_skip, .run = stage_steps},
	{.name = "plan", .skip = plan_skip, .run = stage_plan},
	{.name = "goal-loop", .skip = goal_skip, .run = stage_goal},
	{.name = "final-checks", .skip = final_skip, .run = stage_final_checks},
};

static void emit_stage_end(ksr_run *run, const char *name, const char *status, const char *why,
			   int64_t started)
{
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "name", name);
	cJSON_AddStringToObject(f, "status", status);
	if (why && *why)
		cJSON_AddStringToObject(f, "reason", why);
	cJSON_AddNumberToObject(f, "duration_ms", (double)(ksr_now_ms() - started));
	ksr_run_emit(run, "stage.end", f);
}

static const char *failed_status(const ksr_run *run)
{
	if (run->failure_outcome == KSR_OUTCOME_INTERRUPTED)
		return "interrupted";
	if (run->failure_outcome == KSR_OUTCOME_DEADLINE)
		return "timeout";
	return "failed";
}

static void run_stage(ksr_run *run, const stage_def *s)
{
	ksr_events_set_stage(run->ev, s->name);
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "name", s->name);
	ksr_run_emit(run, "stage.start", f);
	int64_t started = ksr_now_ms();
	const char *skip = s->skip ? s->skip(run) : NULL;
	if (skip) {
		emit_stage_end(run, s->name, "skipped", skip, started);
		return;
	}
	double limit = s->limit_s ? s->limit_s(run) : 0;
	run->stage = limit > 0 ? ksr_deadline_min(run->work, ksr_deadline_in_ms((int64_t)(limit * 1000)))
			       : run->work;
	char note[512] = "";
	stage_status st = s->run(run, note, sizeof note);
	const char *status = st == STAGE_OK ? "ok" : st == STAGE_SKIPPED ? "skipped" : failed_status(run);
	emit_stage_end(run, s->name, status, note, started);
}

static void skip_rest(ksr_run *run, size_t from)
{
	for (size_t i = from; i < sizeof stages / sizeof stages[0]; i++) {
		ksr_events_set_stage(run->ev, stages[i].name);
		emit_stage_end(run, stages[i].name, "skipped", "an earlier stage failed", ksr_now_ms());
	}
}

void ksr_stages_run(ksr_run *run)
{
	for (size_t i = 0; i < sizeof stages / sizeof stages[0]; i++) {
		run_stage(run, &stages[i]);
		if (run->failed) {
			skip_rest(run, i + 1);
			break;
		}
		if (ksr_cancelled() && !run->failed) {
			ksr_run_wait_ended_run(run, KSR_WAIT_CANCELLED, 0, stages[i].name);
			skip_rest(run, i + 1);
			break;
		}
	}
	ksr_events_set_stage(run->ev, NULL);
}

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
	emit_stage_end(run, "diagnosis", "ok",
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
