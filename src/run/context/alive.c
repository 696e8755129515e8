/* The app is watched during every stage after settle, and a spawned tool once
 * its window is there (docs/architecture.md, "The app is watched"): their pidfds
 * are in every wait (ksr_guard_add), and so are their windows' DestroyNotify,
 * so a death ends the current wait at once,
 * whatever it waits for (an X event, a file, a shell step, a sleep, D-Bus),
 * through the path a cancel takes. Here the death becomes the run's failure:
 * `crashed` with how and when, the app's held for diagnosis to tell a crash
 * loop. */
#include "run/context/context.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ksr/proc.h"

/* The launch shell reports the app's end a moment after the app ends. */
#define SHELL_GRACE_MS 300

static void read_comm(int pid, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/comm", pid);
	buf[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/* A child's end without reaping it (the stages reap it later), as a wait
 * status; false when pid is not our child or has not ended. */
static bool peek_exit(int pid, int *status)
{
	siginfo_t si = {0};
	if (pid <= 0 || waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0 ||
	    si.si_pid != pid)
		return false;
	*status = si.si_code == CLD_EXITED ? (si.si_status & 0xff) << 8
	                                   : (si.si_status | (si.si_code == CLD_DUMPED ? 0x80 : 0));
	return true;
}

void ksr_run_describe_status(int status, bool via_shell, char *buf, size_t len)
{
	int sig = WIFSIGNALED(status)                              ? WTERMSIG(status)
	          : WIFEXITED(status) && WEXITSTATUS(status) > 128 ? WEXITSTATUS(status) - 128
	                                                           : 0;
	const char *abbrev = sig ? sigabbrev_np(sig) : NULL;
	if (sig && WIFSIGNALED(status))
		snprintf(buf, len, "was killed by SIG%s (signal %d%s)", abbrev ? abbrev : "?", sig,
		         WCOREDUMP(status) ? ", core dumped" : "");
	else if (sig) /* sh reports a child killed by signal N as 128+N */
		snprintf(buf, len, "was killed by SIG%s (signal %d; %s exit status %d)",
		         abbrev ? abbrev : "?", sig, via_shell ? "the launch shell's" : "its",
		         WEXITSTATUS(status));
	else
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
}

/* How the app ended: its own status when it is our child, else the launch
 * shell's (it ends right after the app), else only that it is gone. */
static void app_how(ksr_run *run, char *how, size_t len)
{
	int st = 0;
	snprintf(how, len, "exited");
	if (peek_exit(run->app_pid, &st)) {
		ksr_run_describe_status(st, false, how, len);
		return;
	}
	if (ksr_run_app_exit_status(run, &st)) { /* not our child: the pidfd kept it */
		ksr_run_describe_status(st, false, how, len);
		return;
	}
	if (run->launched_pid <= 0 || run->launch_reaped)
		return;
	int fd = ksr_proc_pidfd(run->launched_pid);
	struct pollfd p = {.fd = fd, .events = POLLIN};
	ksr_wait_fds_uncancellable(&p, fd >= 0 ? 1 : 0, ksr_deadline_in_ms(SHELL_GRACE_MS));
	if (fd >= 0)
		close(fd);
	if (peek_exit(run->launched_pid, &st) &&
	    (WIFSIGNALED(st) || (WIFEXITED(st) && WEXITSTATUS(st) > 128)))
		ksr_run_describe_status(st, true, how, len);
}

/* "4.1 s into step 2, line 9", or into the stage when no step runs. */
static void describe_when(const ksr_run *run, int64_t now, char *buf, size_t len)
{
	if (run->step_index > 0)
		snprintf(buf, len, "%.1f s into step %d, line %d",
		         (double)(now - run->step_started_ms) / 1000.0, run->step_index,
		         run->step_line);
	else
		snprintf(buf, len, "%.1f s into the %s stage",
		         (double)(now - run->stage_started_ms) / 1000.0,
		         run->current_stage ? run->current_stage : "current");
}

static ksr_tool *tool_of_fd(ksr_run *run, int fd)
{
	for (size_t i = 0; i < run->n_tools; i++)
		if (run->tools[i].watched && run->tools[i].watch_fd == fd)
			return &run->tools[i];
	return NULL;
}

static ksr_tool *tool_of_window_fd(ksr_run *run, int fd)
{
	for (size_t i = 0; i < run->n_tools; i++)
		if (run->tools[i].window_watch &&
		    ksr_x11_watch_fd(run->tools[i].window_watch) == fd)
			return &run->tools[i];
	return NULL;
}

/* A window gone while its process is dying (the pidfd fires next, as
 * `crashed`) or still has another window (a dialog closed, a window
 * replaced) is no loss; one whose process lives on with none is. */
static ksr_guard_verdict judge_window_gone(ksr_x11_watch *w, int pid_fd, int pid)
{
	int gone = ksr_x11_watch_gone(w);
	if (gone < 0)
		return KSR_GUARD_DROP; /* the X server went: every X wait says so */
	if (gone == 0)
		return KSR_GUARD_QUIET;
	if (pid_fd >= 0) {
		struct pollfd p = {.fd = pid_fd, .events = POLLIN};
		if (ksr_wait_fds_uncancellable(&p, 1, ksr_deadline_in_ms(KSR_WINDOW_GRACE_MS)) ==
		    KSR_WAIT_READY)
			return KSR_GUARD_QUIET; /* dying: its pidfd fires next */
	}
	if (pid > 0 && ksr_x11_watch_pid_windows(w, pid) > 0)
		return KSR_GUARD_QUIET;
	return KSR_GUARD_FIRED;
}

static ksr_guard_verdict tool_window_check(int fd, void *ud)
{
	ksr_tool *t = tool_of_window_fd(ud, fd);
	if (!t || !t->watched)
		return KSR_GUARD_DROP; /* not watched: it ended with status 0, as it should */
	return judge_window_gone(t->window_watch, t->watched ? t->watch_fd : -1,
	                         t->window_pid > 0 ? t->window_pid : t->pid);
}

/* A tool that exits 0 ended as it should (a launcher handing over, a `key:
 * ctrl+q`): stop watching it. Anything else ends the waits. */
static ksr_guard_verdict tool_check(int fd, void *ud)
{
	ksr_tool *t = tool_of_fd(ud, fd);
	int st = 0;
	if (!t)
		return KSR_GUARD_DROP;
	bool known = t->reaped ? (st = t->status, true) : peek_exit(t->pid, &st);
	if (known && WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		t->watched = false;
		close(fd);
		return KSR_GUARD_DROP;
	}
	return KSR_GUARD_FIRED;
}

static void unwatch_window(ksr_run *run)
{
	if (!run->window_watch)
		return;
	ksr_guard_remove(ksr_x11_watch_fd(run->window_watch));
	ksr_x11_watch_close(run->window_watch);
	run->window_watch = NULL;
	run->watched_window = 0;
}

/* The app's window went: judged as a tool's is (judge_window_gone). */
static ksr_guard_verdict window_check(int fd, void *ud)
{
	ksr_run *run = ud;
	(void)fd;
	return judge_window_gone(run->window_watch, run->app_watched ? run->app_watch_fd : -1,
	                         run->app_pid);
}

static void watch_window(ksr_run *run)
{
	ksr_err err = {0};
	if (!run->have_window || !run->window.id || !run->x)
		return;
	ksr_x11_watch *w = ksr_x11_watch_open(run->x, run->window.id, &err);
	if (!w)
		return; /* the next X look finds the window gone, as before */
	if (ksr_guard_add(ksr_x11_watch_fd(w), window_check, run) < 0) {
		ksr_x11_watch_close(w);
		return;
	}
	run->window_watch = w;
	run->watched_window = run->window.id;
}

void ksr_run_rewatch_window(ksr_run *run)
{
	if (!run->window_watch || run->watched_window == run->window.id)
		return;
	unwatch_window(run);
	watch_window(run);
}

/* The app's process ended: a launcher restarting it is followed
 * (relaunch.c; the watch moves to the new pid and the wait goes on), anything
 * else ends the waits. */
static ksr_guard_verdict app_check(int fd, void *ud)
{
	ksr_run *run = ud;
	if (!run->app_watched || fd != run->app_watch_fd)
		return KSR_GUARD_QUIET; /* the fd of a pid already replaced */
	return ksr_run_follow_relaunch(run) ? KSR_GUARD_QUIET : KSR_GUARD_FIRED;
}

static int watch_pid(ksr_run *run)
{
	int fd = ksr_proc_pidfd(run->app_pid);
	if (fd < 0)
		return -1; /* no pidfd (old kernel): the next X event or final checks see it */
	if (ksr_guard_add(fd, app_check, run) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

void ksr_run_watch_app(ksr_run *run)
{
	if (!run->window_watch)
		watch_window(run);
	if (run->app_watched || run->app_pid <= 0)
		return;
	ksr_run_app_seen_alive(run);
	int fd = watch_pid(run);
	if (fd < 0)
		return;
	read_comm(run->app_pid, run->app_name, sizeof run->app_name);
	run->app_watched = true;
	run->app_watch_fd = fd;
}

void ksr_run_rewatch_app(ksr_run *run)
{
	/* Always a new window watch: the old one saw its window destroyed, and
	 * the new instance's window may well have the same id (the X server
	 * hands the next client the closed one's resource ids). */
	if (run->window_watch) {
		unwatch_window(run);
		watch_window(run);
	}
	if (!run->app_watched)
		return;
	/* The new pidfd first: its number differs from the old one's, which a
	 * poll still running may report (app_check ignores it). */
	int old = run->app_watch_fd;
	int fd = watch_pid(run);
	ksr_guard_remove(old);
	close(old);
	run->app_watched = fd >= 0;
	run->app_watch_fd = fd;
	read_comm(run->app_pid, run->app_name, sizeof run->app_name);
}

static void watch_tool_window(ksr_run *run, ksr_tool *t)
{
	ksr_err err = {0};
	if (t->window_watch || !t->window || !run->x)
		return;
	ksr_x11_watch *w = ksr_x11_watch_open(run->x, t->window, &err);
	if (!w)
		return; /* the next X look finds the window gone */
	if (ksr_guard_add(ksr_x11_watch_fd(w), tool_window_check, run) < 0) {
		ksr_x11_watch_close(w);
		return;
	}
	t->window_watch = w;
}

void ksr_run_watch_tool(ksr_run *run, ksr_tool *t)
{
	watch_tool_window(run, t);
	int fd = t->watched ? -1 : ksr_proc_pidfd(t->pid);
	if (fd < 0)
		return;
	if (ksr_guard_add(fd, tool_check, run) < 0) {
		close(fd);
		return;
	}
	t->watched = true;
	t->watch_fd = fd;
}

void ksr_run_unwatch_tool(ksr_run *run, ksr_tool *t)
{
	(void)run;
	if (t->window_watch) {
		ksr_guard_remove(ksr_x11_watch_fd(t->window_watch));
		ksr_x11_watch_close(t->window_watch);
		t->window_watch = NULL;
	}
	if (!t->watched)
		return;
	ksr_guard_remove(t->watch_fd);
	close(t->watch_fd);
	t->watched = false;
}

void ksr_run_unwatch_all(ksr_run *run)
{
	for (size_t i = 0; i < run->n_tools; i++)
		ksr_run_unwatch_tool(run, &run->tools[i]);
	if (run->app_watched) {
		ksr_guard_remove(run->app_watch_fd);
		close(run->app_watch_fd);
		run->app_watched = false;
	}
	unwatch_window(run);
	ksr_guard_clear();
	if (run->life.has_fd) /* how the app ended has been read, if it has */
		close(run->life.pidfd);
	run->life.has_fd = false;
}

static void emit_exit(ksr_run *run, int pid, const char *how, const char *when, const char *as)
{
	cJSON *f = cJSON_CreateObject();
	cJSON_AddNumberToObject(f, "pid", pid);
	if (as)
		cJSON_AddStringToObject(f, "tool", as);
	cJSON_AddStringToObject(f, "how", how);
	cJSON_AddStringToObject(f, "when", when);
	if (run->step_index > 0)
		cJSON_AddNumberToObject(f, "line", run->step_line);
	ksr_run_emit(run, "app.exit", f);
}

static void lost_tool(ksr_run *run, ksr_tool *t, const char *when)
{
	char how[128] = "ended";
	int st = 0;
	if (t->reaped ? (st = t->status, true) : peek_exit(t->pid, &st))
		ksr_run_describe_status(st, true, how, sizeof how);
	emit_exit(run, t->pid, how, when, t->as);
	snprintf(run->lost_reason, sizeof run->lost_reason,
	         "the tool '%s' (pid %d, spawned at line %d) %s %s", t->as ? t->as : "", t->pid,
	         t->line, how, when);
	ksr_run_unwatch_all(run);
	ksr_run_fail(run, KSR_OUTCOME_CRASHED, 0, "%s", run->lost_reason);
}

static void lost_tool_window(ksr_run *run, ksr_tool *t, const char *when)
{
	snprintf(run->lost_reason, sizeof run->lost_reason,
	         "the tool '%s' (pid %d, spawned at line %d): its window 0x%lx was destroyed %s; "
	         "the tool lives on without a window",
	         t->as ? t->as : "", t->pid, t->line, t->window, when);
	ksr_run_unwatch_all(run);
	ksr_run_fail(run, KSR_OUTCOME_WINDOW_LOST, 0, "%s", run->lost_reason);
}

static void lost_app(ksr_run *run, const char *when)
{
	char how[128];
	app_how(run, how, sizeof how);
	emit_exit(run, run->app_pid, how, when, NULL);
	snprintf(run->lost_reason, sizeof run->lost_reason, "the app %s%s(pid %d) %s %s",
	         run->app_name, run->app_name[0] ? " " : "", run->app_pid, how, when);
	ksr_run_unwatch_all(run);
	if (run->hold_crash && !run->failed)
		run->hold_crash(run, run->lost_reason); /* diagnosis records it */
	else
		ksr_run_fail(run, KSR_OUTCOME_CRASHED, 0, "%s", run->lost_reason);
}

static void lost_window(ksr_run *run, const char *when)
{
	snprintf(run->lost_reason, sizeof run->lost_reason,
	         "the app's window 0x%lx (\"%.80s\") was destroyed %s; the app %s%s(pid %d) "
	         "lives on without a window",
	         run->watched_window, run->window.title ? run->window.title : "", when,
	         run->app_name, run->app_name[0] ? " " : "", run->app_pid);
	ksr_run_unwatch_all(run);
	ksr_run_fail(run, KSR_OUTCOME_WINDOW_LOST, 0, "%s", run->lost_reason);
}

bool ksr_run_alive_check(ksr_run *run)
{
	int fd = ksr_guard_fired();
	if (fd < 0)
		return false;
	char when[96];
	describe_when(run, ksr_now_ms(), when, sizeof when);
	ksr_tool *t = tool_of_fd(run, fd), *tw = t ? NULL : tool_of_window_fd(run, fd);
	if (t)
		lost_tool(run, t, when);
	else if (tw)
		lost_tool_window(run, tw, when);
	else if (run->window_watch && fd == ksr_x11_watch_fd(run->window_watch))
		lost_window(run, when);
	else
		lost_app(run, when);
	return true;
}
