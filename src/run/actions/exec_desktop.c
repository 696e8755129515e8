/* Desktop mode (docs/acting.md, docs/scenario.md): `spawn` launches a tool detached and waits for
 * its window; `kill` ends its process group and confirms it is gone; tools the
 * scenario did not kill are stopped at the end of the run. */
#include "run/actions/exec.h"
#include "run/actions/runner.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ksr/atspi.h"
#include "ksr/proc.h"
#include "run/actions/exec.h"

#define SPAWN_DEFAULT_S 30
#define KILL_DEFAULT_S  5 /* the window may outlive the process by a moment */
#define STOP_GRACE_MS   3000
/* /proc has no change events: while a window is awaited, the tool's exit is
 * looked at on every X event and at least this often. */
#define EXIT_TICK_MS 100
#define LOG_TAIL     4096

/* ---- the tool table -------------------------------------------------------- */

static ksr_tool *add_tool(ksr_run *run, const ksr_step *step, int pid)
{
	run->tools = ksr_xrealloc(run->tools, (run->n_tools + 1) * sizeof *run->tools);
	ksr_tool *t = &run->tools[run->n_tools++];
	*t = (ksr_tool){.pid = pid, .line = step->pos.line};
	t->as = step->spawn.as ? ksr_xstrdup(step->spawn.as) : NULL;
	return t;
}

static ksr_tool *find_tool(ksr_run *run, const char *as)
{
	for (size_t i = run->n_tools; as && i-- > 0;)
		if (run->tools[i].as && !strcmp(run->tools[i].as, as))
			return &run->tools[i];
	return NULL;
}

/* Is any process of the group still running? kill(-pgid, 0) alone is not
 * enough: orphaned zombies answer it where init does not reap (containers). */
static bool group_alive(int pgid)
{
	if (kill(-pgid, 0) < 0 && errno == ESRCH)
		return false;
	DIR *dir = opendir("/proc");
	bool alive = false;
	for (struct dirent *e; dir && !alive && (e = readdir(dir));) {
		char path[288], buf[512], state = 0;
		int pgrp = 0;
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
		FILE *f = fopen(path, "re");
		size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
		if (f)
			fclose(f);
		buf[n] = '\0';
		const char *rp = strrchr(buf, ')'); /* comm may hold spaces and ')' */
		if (rp && sscanf(rp + 1, " %c %*d %d", &state, &pgrp) == 2)
			alive = pgrp == pgid && state != 'Z' && state != 'X';
	}
	if (dir)
		closedir(dir);
	return alive;
}

/* The tool has ended: its launch shell is reaped and its group is empty. */
static bool tool_ended(ksr_tool *t)
{
	if (!t->reaped && ksr_proc_reap(t->pid, &t->status) != 0)
		t->reaped = true; /* 1 reaped; -1 not our child (already reaped) */
	return t->reaped && !group_alive(t->pid);
}

static bool ended_badly(const ksr_tool *t)
{
	return WIFSIGNALED(t->status) || (WIFEXITED(t->status) && WEXITSTATUS(t->status) != 0);
}

static void describe_exit(int status, char *buf, size_t len)
{
	/* sh reports a child killed by signal N as exit 128+N. */
	int sig = WIFSIGNALED(status)                              ? WTERMSIG(status)
	          : WIFEXITED(status) && WEXITSTATUS(status) > 128 ? WEXITSTATUS(status) - 128
	                                                           : 0;
	if (sig)
		snprintf(buf, len, "was killed by signal %d (%s)", sig,
		         sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
	else
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
}

static void tool_row(const ksr_tool *t, const char *log, ksr_step_result *res)
{
	cJSON *o = cJSON_AddObjectToObject(ksr_step_extra(res), "tool");
	if (t->as)
		cJSON_AddStringToObject(o, "as", t->as);
	cJSON_AddNumberToObject(o, "pid", t->pid);
	if (log)
		cJSON_AddStringToObject(o, "log", log);
	if (t->window) {
		char id[32];
		snprintf(id, sizeof id, "0x%lx", t->window);
		cJSON_AddStringToObject(o, "window_id", id);
	}
}

/* The end of a tool's log, as a log_tail event (the report shows it). */
static void tail_log(ksr_run *run, const char *name)
{
	char *path = ksr_evidence_path(run->out, name);
	FILE *f = fopen(path, "r");
	free(path);
	if (!f)
		return;
	char buf[LOG_TAIL + 1];
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	fseek(f, size > LOG_TAIL ? size - LOG_TAIL : 0, SEEK_SET);
	size_t n = fread(buf, 1, LOG_TAIL, f);
	fclose(f);
	buf[n] = '\0';
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "path", name);
	cJSON_AddStringToObject(o, "text", buf);
	ksr_run_emit(run, "log_tail", o);
}

/* ---- spawn ----------------------------------------------------------------- */

typedef struct idset {
	unsigned long *ids;
	size_t len;
} idset;

static void mapped_before(ksr_run *run, idset *pre)
{
	ksr_window_list wins = {0};
	ksr_err err = {0};
	if (ksr_x11_list_windows(run->x, &wins, &err) < 0)
		return;
	pre->ids = ksr_xcalloc(wins.len + 1, sizeof *pre->ids);
	for (size_t i = 0; i < wins.len; i++)
		pre->ids[pre->len++] = wins.items[i].id;
	ksr_window_list_clear(&wins);
}

static bool id_in(const idset *s, unsigned long id)
{
	for (size_t i = 0; i < s->len; i++)
		if (s->ids[i] == id)
			return true;
	return false;
}

static bool pid_in(const ksr_proc_list *procs, int pid)
{
	for (size_t i = 0; pid > 0 && i < procs->len; i++)
		if (procs->items[i].pid == pid)
			return true;
	return false;
}

/* The tool's window: one matching `window` whose _NET_WM_PID is in the tool's
 * process group or matches `process`; else (no _NET_WM_PID, a launcher that
 * hands over) one matching `window` that was not mapped before the spawn, once
 * a `process` match runs when one is asked for. A window that was already on
 * the desktop and is not tied to the tool never counts. */
static bool find_tool_window(ksr_run *run, const ksr_step *step, const ksr_tool *t,
                             const idset *pre, ksr_window *found)
{
	ksr_window_list wins = {0};
	ksr_proc_list procs = {0};
	ksr_err err = {0};
	if (step->spawn.process)
		ksr_proc_find(step->spawn.process, NULL, &procs, &err);
	if (ksr_x11_list_windows(run->x, &wins, &err) < 0)
		wins.len = 0;
	const ksr_window *tied = NULL, *fresh = NULL;
	for (size_t i = 0; i < wins.len && !tied; i++) {
		const ksr_window *w = &wins.items[i];
		if (!ksr_pattern_match(step->spawn.window, w->title))
			continue;
		if (w->pid > 0 && (getpgid(w->pid) == t->pid || pid_in(&procs, w->pid)))
			tied = w;
		else if (!fresh && !id_in(pre, w->id) && (!step->spawn.process || procs.len))
			fresh = w;
	}
	const ksr_window *pick = tied ? tied : fresh;
	if (pick) {
		*found = *pick;
		found->title = ksr_xstrdup(pick->title);
		found->res_name = ksr_xstrdup(pick->res_name);
		found->res_class = ksr_xstrdup(pick->res_class);
	}
	ksr_window_list_clear(&wins);
	ksr_proc_list_clear(&procs);
	return pick != NULL;
}

/* Why the wait for the tool's window ended without one; false: keep waiting. */
static bool spawn_gave_up(ksr_run *run, const ksr_step *step, ksr_tool *t, ksr_wait w,
                          ksr_deadline d, ksr_step_result *res)
{
	char how[96];
	bool ended = tool_ended(t);
	if (ended)
		describe_exit(t->status, how, sizeof how);
	if (ended && ended_badly(t)) {
		ksr_step_fail(res, KSR_STEP_FAILED, KSR_OUTCOME_STEP_FAILED,
		              "the spawned command %s before a window matching %s appeared", how,
		              ksr_pattern_source(step->spawn.window));
		return true;
	}
	if (w == KSR_WAIT_READY || (w == KSR_WAIT_TIMEOUT && !ksr_deadline_passed(d)))
		return false;
	if (ksr_step_run_ended(run, step, w, res))
		return true;
	if (w == KSR_WAIT_ERROR) {
		ksr_step_fail(res, KSR_STEP_ERROR, KSR_OUTCOME_NO_DISPLAY,
		              "the X display connection was lost");
		return true;
	}
	ksr_step_fail(res, KSR_STEP_FAILED, KSR_OUTCOME_STEP_FAILED,
	              "no window matching %s appeared within %g s%s%s",
	              ksr_pattern_source(step->spawn.window),
	              step->timeout_s > 0 ? step->timeout_s : SPAWN_DEFAULT_S,
	              ended ? "; the spawned command " : "", ended ? how : "");
	return true;
}

static bool await_tool_window(ksr_run *run, const ksr_step *step, ksr_tool *t, const idset *pre,
                              ksr_window *found, ksr_step_result *res)
{
	double s = step->timeout_s > 0 ? step->timeout_s : SPAWN_DEFAULT_S;
	ksr_deadline d = ksr_deadline_min(run->work, ksr_deadline_in_ms((int64_t)(s * 1000)));
	for (;;) {
		if (find_tool_window(run, step, t, pre, found))
			return true;
		ksr_deadline tick = ksr_deadline_min(d, ksr_deadline_in_ms(EXIT_TICK_MS));
		ksr_wait w = ksr_x11_wait_change(run->x, tick);
		if (spawn_gave_up(run, step, t, w, d, res))
			return find_tool_window(run, step, t, pre, found) &&
			       res->status != KSR_STEP_ERROR; /* it came with the last event */
	}
}

static int launch_tool(ksr_run *run, const ksr_step *step, char *log, size_t log_len,
                       ksr_step_result *res)
{
	ksr_err err = {0};
	int pid = 0;
	snprintf(log, log_len, "spawn-%02zu.log", run->n_tools + 1);
	char *path = ksr_evidence_log_path(run->out, log);
	/* As the launch stage does: Qt 5 tools join the bus only where the X root
	 * names it (a desktop-mode run has no launch stage). */
	if (run->x)
		ksr_atspi_publish_root(
		        run->x, ksr_deadline_min(run->stage, ksr_deadline_in_ms(3000)), NULL, NULL);
	int rc = ksr_proc_launch_tagged(step->spawn.command, path, run->run_id, &pid, &err);
	free(path);
	if (rc < 0) {
		ksr_step_fail(res, KSR_STEP_ERROR, KSR_OUTCOME_STEP_FAILED,
		              "the tool could not be launched: %.400s", err.msg);
		return 0;
	}
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "name", log);
	cJSON_AddStringToObject(a, "kind", "log");
	cJSON_AddStringToObject(a, "description", "output of a spawned tool");
	ksr_run_emit(run, "artifact", a);
	return pid;
}

void ksr_exec_spawn(ksr_run *run, const ksr_step *step, const ksr_step_target *tgt,
                    ksr_step_result *res)
{
	(void)tgt;
	idset pre = {0};
	ksr_window found = {0};
	char log[32];
	mapped_before(run, &pre);
	int pid = launch_tool(run, step, log, sizeof log, res);
	if (pid > 0) {
		ksr_tool *t = add_tool(run, step, pid);
		if (await_tool_window(run, step, t, &pre, &found, res)) {
			res->status = KSR_STEP_OK, res->outcome = KSR_OUTCOME_COMPLETED,
			res->reason[0] = '\0';
			t->window = found.id;
			t->window_pid = found.pid;
			ksr_run_watch_tool(run, t); /* its death ends every wait from now */
			res->has_window = true;
			res->win_x = found.x, res->win_y = found.y;
			res->win_w = found.w, res->win_h = found.h;
			cJSON_AddStringToObject(ksr_step_extra(res), "window_title",
			                        found.title ? found.title : "");
			tool_row(t, log, res);
			res->acted = true;
		} else {
			tool_row(t, log, res);
			tail_log(run, log);
		}
	}
	ksr_run_window_release(&found);
	free(pre.ids);
}

/* ---- kill ------------------------------------------------------------------ */

/* Wait (X events) until the tool's window is no longer mapped. */
static bool window_gone(ksr_run *run, unsigned long id, ksr_deadline d, ksr_wait *why)
{
	for (;;) {
		ksr_window w = {.id = id};
		ksr_err err = {0};
		bool mapped = ksr_x11_window_refresh(run->x, &w, &err) == 0;
		ksr_run_window_release(&w);
		if (!mapped)
			return ksr_x11_alive(run->x);
		*why = ksr_x11_wait_change(run->x, d);
		if (*why != KSR_WAIT_READY)
			return false;
	}
}

/* A tool that ended on its own before the kill: a clean exit (a `key: ctrl+q`
 * closed it) is what kill wanted; a signal or failure status is a crash. */
static bool ended_before_kill(ksr_tool *t, ksr_step_result *res)
{
	if (!tool_ended(t))
		return false;
	char how[96];
	describe_exit(t->status, how, sizeof how);
	cJSON_AddStringToObject(ksr_step_extra(res), "ended_before_kill", how);
	if (ended_badly(t))
		ksr_step_fail(res, KSR_STEP_FAILED, KSR_OUTCOME_CRASHED,
		              "the tool '%s' (pid %d, spawned at line %d) %s before it was killed",
		              t->as, t->pid, t->line, how);
	return true;
}

static void confirm_gone(ksr_run *run, const ksr_step *step, ksr_tool *t, ksr_step_result *res)
{
	double s = step->timeout_s > 0 ? step->timeout_s : KILL_DEFAULT_S;
	ksr_deadline d = ksr_deadline_min(run->work, ksr_deadline_in_ms((int64_t)(s * 1000)));
	ksr_wait why = KSR_WAIT_READY;
	if (group_alive(t->pid)) {
		ksr_step_fail(res, KSR_STEP_FAILED, KSR_OUTCOME_STEP_FAILED,
		              "the tool '%s' (process group %d) survived SIGTERM and SIGKILL",
		              t->as, t->pid);
	} else if (t->window && !window_gone(run, t->window, d, &why)) {
		if (ksr_step_run_ended(run, step, why, res))
			return;
		ksr_step_fail(res, KSR_STEP_FAILED, KSR_OUTCOME_STEP_FAILED,
		              "the tool '%s' window 0x%lx is still mapped %g s after its process "
		              "group ended",
		              t->as, t->window, s);
	}
}

void ksr_exec_kill(ksr_run *run, const ksr_step *step, const ksr_step_target *tgt,
                   ksr_step_result *res)
{
	(void)tgt;
	ksr_tool *t = find_tool(run, step->text);
	if (!t || t->stopped) {
		ksr_step_fail(res, KSR_STEP_ERROR, KSR_OUTCOME_INVALID_SCENARIO,
		              t ? "kill: the tool '%s' was already killed"
		                : "kill: no running tool was spawned as '%s'",
		              step->text);
		return;
	}
	tool_row(t, NULL, res);
	ksr_run_unwatch_tool(run, t); /* the kill is no crash */
	bool ended = ended_before_kill(t, res);
	if (!ended)
		ksr_proc_stop_group(t->pid, STOP_GRACE_MS); /* bounded; not cancellable */
	t->stopped = true;
	if (res->status == KSR_STEP_OK)
		confirm_gone(run, step, t, res);
}
