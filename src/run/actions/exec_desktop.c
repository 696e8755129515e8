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
#include "ksr/desktop.h"
#include "ksr/proc.h"
#include "run/actions/exec.h"
#include "run/actions/exec_atspi.h"
#include "run/diagnosis/dialogs.h"

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

/* What a spawn waits for: the step's window:/process: patterns, or with
 * desktop_entry: the entry's defaults (its StartupWMClass, its Exec's
 * program) where the step gives none. */
typedef struct wanted {
	const ksr_pattern *title;   /* NULL: any title */
	const ksr_pattern *process; /* NULL: none asked for */
	char *wm_class;             /* StartupWMClass: WM_CLASS instance or class, exactly */
	ksr_pattern *own_process;   /* the default process pattern, owned */
	char *command;              /* what runs: the step's command or the entry's, owned */
	char *entry_file;           /* the desktop entry read, owned */
} wanted;

static void wanted_clear(wanted *wt)
{
	ksr_pattern_free(wt->own_process);
	free(wt->wm_class);
	free(wt->command);
	free(wt->entry_file);
}

static bool window_wanted(const wanted *wt, const ksr_window *w)
{
	if (wt->title && !ksr_pattern_match(wt->title, w->title))
		return false;
	return !wt->wm_class || (w->res_name && !strcmp(w->res_name, wt->wm_class)) ||
	       (w->res_class && !strcmp(w->res_class, wt->wm_class));
}

/* The tool's window: one wanted whose _NET_WM_PID is in the tool's process
 * group or matches `process`; else (no _NET_WM_PID, a launcher that hands
 * over) one wanted that was not mapped before the spawn, once a `process`
 * match runs when one is asked for. A window that was already on the desktop
 * and is not tied to the tool never counts. */
static bool find_tool_window(ksr_run *run, const wanted *wt, const ksr_tool *t, const idset *pre,
                             ksr_window *found)
{
	ksr_window_list wins = {0};
	ksr_proc_list procs = {0};
	ksr_err err = {0};
	if (wt->process)
		ksr_proc_find(wt->process, NULL, &procs, &err);
	if (ksr_x11_list_windows(run->x, &wins, &err) < 0)
		wins.len = 0;
	const ksr_window *tied = NULL, *fresh = NULL;
	for (size_t i = 0; i < wins.len && !tied; i++) {
		const ksr_window *w = &wins.items[i];
		if (!window_wanted(wt, w))
			continue;
		if (w->pid > 0 && (getpgid(w->pid) == t->pid || pid_in(&procs, w->pid)))
			tied = w;
		else if (!fresh && !id_in(pre, w->id) && (!wt->process || procs.len) &&
		         (wt->title || wt->wm_class))
			fresh = w; /* with neither, only a window tied to the tool is its */
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

/* How the wait names what it waited for. */
static const char *wanted_text(const wanted *wt, char *buf, size_t len)
{
	if (wt->title)
		snprintf(buf, len, "matching %s", ksr_pattern_source(wt->title));
	else if (wt->wm_class)
		snprintf(buf, len, "of class %s (the entry's StartupWMClass)", wt->wm_class);
	else
		snprintf(buf, len, "of the tool's processes");
	return buf;
}

/* Why the wait for the tool's window ended without one; false: keep waiting. */
static bool spawn_gave_up(ksr_run *run, const ksr_step *step, const wanted *wt, ksr_tool *t,
                          ksr_wait w, ksr_deadline d, ksr_step_result *res)
{
	char how[96], what[200];
	wanted_text(wt, what, sizeof what);
	bool ended = tool_ended(t);
	if (ended)
		describe_exit(t->status, how, sizeof how);
	if (ended && ended_badly(t)) {
		ksr_step_fail(res, KSR_STEP_FAILED, KSR_OUTCOME_STEP_FAILED,
		              "the spawned command %s before a window %s appeared", how, what);
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
	              "no window %s appeared within %g s%s%s", what,
	              step->timeout_s > 0 ? step->timeout_s : SPAWN_DEFAULT_S,
	              ended ? "; the spawned command " : "", ended ? how : "");
	return true;
}

static bool await_tool_window(ksr_run *run, const ksr_step *step, const wanted *wt, ksr_tool *t,
                              const idset *pre, ksr_window *found, ksr_step_result *res)
{
	double s = step->timeout_s > 0 ? step->timeout_s : SPAWN_DEFAULT_S;
	ksr_deadline d = ksr_deadline_min(run->work, ksr_deadline_in_ms((int64_t)(s * 1000)));
	for (;;) {
		if (find_tool_window(run, wt, t, pre, found))
			return true;
		ksr_deadline tick = ksr_deadline_min(d, ksr_deadline_in_ms(EXIT_TICK_MS));
		ksr_wait w = ksr_x11_wait_change(run->x, tick);
		if (spawn_gave_up(run, step, wt, t, w, d, res))
			return find_tool_window(run, wt, t, pre, found) &&
			       res->status != KSR_STEP_ERROR; /* it came with the last event */
	}
}

/* The base name as a whole-name pattern (PCRE2 \Q...\E quotes it). */
static ksr_pattern *exact_name(const char *name)
{
	if (strstr(name, "\\E"))
		return NULL; /* cannot be quoted this way: no default then */
	size_t n = strlen(name) + 8;
	char *src = ksr_xmalloc(n);
	snprintf(src, n, "^\\Q%s\\E$", name);
	ksr_pattern *p = ksr_pattern_compile(src, NULL);
	free(src);
	return p;
}

/* What to run and wait for: the step's command and patterns, or the desktop
 * entry's Exec, with its defaults where the step gives none. false: res says
 * why the entry cannot be started. */
static bool spawn_wanted(const ksr_step *step, wanted *wt, ksr_step_result *res)
{
	*wt = (wanted){.title = step->spawn.window, .process = step->spawn.process};
	if (!step->spawn.desktop_entry) {
		wt->command = ksr_xstrdup(step->spawn.command);
		return true;
	}
	ksr_desktop_entry e;
	ksr_err err = {0};
	if (ksr_desktop_entry_find(step->spawn.desktop_entry, &e, &err) < 0) {
		ksr_step_fail(res, KSR_STEP_FAILED, KSR_OUTCOME_STEP_FAILED, "spawn: %s", err.msg);
		return false;
	}
	wt->command = ksr_xstrdup(e.command);
	wt->entry_file = ksr_xstrdup(e.file);
	if (!wt->title && e.wm_class)
		wt->wm_class = ksr_xstrdup(e.wm_class);
	if (!wt->process)
		wt->process = wt->own_process = exact_name(e.program);
	cJSON *o = cJSON_AddObjectToObject(ksr_step_extra(res), "desktop_entry");
	cJSON_AddStringToObject(o, "id", e.id);
	cJSON_AddStringToObject(o, "file", e.file);
	cJSON_AddStringToObject(o, "command", e.command);
	if (e.wm_class)
		cJSON_AddStringToObject(o, "startup_wm_class", e.wm_class);
	if (e.work_dir)
		cJSON_AddStringToObject(o, "path", e.work_dir);
	ksr_desktop_entry_clear(&e);
	return true;
}

static int launch_tool(ksr_run *run, const char *command, char *log, size_t log_len,
                       ksr_step_result *res)
{
	ksr_err err = {0};
	int pid = 0;
	ksr_tool_log_name(run->n_tools, log, log_len);
	char *path = ksr_evidence_log_path(run->out, log);
	/* As the launch stage does: Qt 5 tools join the bus only where the X root
	 * names it (a desktop-mode run has no launch stage). */
	if (run->x)
		ksr_atspi_publish_root(
		        run->x, ksr_deadline_min(run->stage, ksr_deadline_in_ms(3000)), NULL, NULL);
	int rc = ksr_proc_launch_tagged(command, path, run->run_id, &pid, &err);
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
	wanted wt;
	char log[32];
	if (!spawn_wanted(step, &wt, res)) {
		wanted_clear(&wt);
		return;
	}
	mapped_before(run, &pre);
	int pid = launch_tool(run, wt.command, log, sizeof log, res);
	if (pid > 0) {
		ksr_tool *t = add_tool(run, step, pid);
		if (wt.entry_file)
			t->desktop_entry = ksr_xstrdup(wt.entry_file);
		if (await_tool_window(run, step, &wt, t, &pre, &found, res)) {
			res->status = KSR_STEP_OK, res->outcome = KSR_OUTCOME_COMPLETED,
			res->reason[0] = '\0';
			t->window = found.id;
			t->window_pid = found.pid;
			t->window_res_name = found.res_name ? ksr_xstrdup(found.res_name) : NULL;
			ksr_run_watch_tool(run, t); /* its death ends every wait from now */
			res->has_window = true;
			res->win_x = found.x, res->win_y = found.y;
			res->win_w = found.w, res->win_h = found.h;
			cJSON_AddStringToObject(ksr_step_extra(res), "window_title",
			                        found.title ? found.title : "");
			tool_row(t, log, res);
			res->acted = true;
			ksr_tool_looks(run, step, t, &found, wt.command, res);
		} else {
			tool_row(t, log, res);
			tail_log(run, log);
		}
	}
	ksr_run_window_release(&found);
	free(pre.ids);
	wanted_clear(&wt);
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
