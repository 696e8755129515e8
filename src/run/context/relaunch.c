/* Launcher restarts (docs/scenario.md#launcher-restarts). A launcher may end
 * the app's first process and start another on purpose: LibreOffice's
 * oosplash restarts soffice.bin (exit status 81) when it has made a new
 * profile; an app may fork and let its first process exit. That is no crash.
 * So the app's process is read while it lives (its parent, session and start
 * time, and a pidfd that keeps its exit status), and when it is gone without
 * a signal, a new instance from the same launcher that comes up (with its
 * window) becomes the app: `app.relaunched`, once a run. A second end, or an
 * end by a signal, is a crash: diagnosis tells `crashed` from `crash-loop`
 * with the same match (ksr_run_app_instances, ksr_run_instance_is_new). */
#include "run/context/context.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ksr/proc.h"

#define RELAUNCH_MS      3000 /* a launcher restarts within a second or two */
#define RELAUNCH_TICK_MS 100
#define MAX_RELAUNCHES   1 /* one restart is a launcher's; two ends are a loop */

/* PIDFD_GET_INFO (Linux 6.13; the exit status since 6.15). Debian 12's headers
 * predate it; the layout is the kernel's stable first version (64 bytes). */
struct pidfd_info_v0 {
	uint64_t mask, cgroupid;
	uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
	int32_t exit_code;
};
#define KSR_PIDFD_INFO_EXIT (1ULL << 3)
#define KSR_PIDFD_GET_INFO  _IOWR(0xFF, 11, struct pidfd_info_v0)

typedef struct lineage {
	int ppid, sid;
	unsigned long long start;
} lineage;

static unsigned long long boot_ticks_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	long hz = sysconf(_SC_CLK_TCK);
	return (unsigned long long)ts.tv_sec * (unsigned long long)hz +
	       (unsigned long long)ts.tv_nsec / (1000000000ULL / (unsigned long long)hz);
}

static int64_t ticks_to_ms(long long ticks)
{
	return ticks * 1000 / sysconf(_SC_CLK_TCK);
}

/* Parent, session and start time (ksr_proc_read_stat). */
static bool read_lineage(int pid, lineage *out)
{
	ksr_proc_stat st;
	if (!ksr_proc_read_stat(pid, &st))
		return false;
	*out = (lineage){.ppid = st.ppid, .sid = st.sid, .start = st.start_ticks};
	return true;
}

static void life_close_fd(ksr_app_life *l)
{
	if (l->has_fd)
		close(l->pidfd);
	l->has_fd = false;
}

void ksr_run_app_seen_alive(ksr_run *run)
{
	ksr_app_life *l = &run->life;
	if (run->app_pid <= 0)
		return;
	if (l->pid == run->app_pid) {
		l->seen_ticks = boot_ticks_now();
		return;
	}
	lineage lin;
	if (!read_lineage(run->app_pid, &lin))
		return;
	life_close_fd(l);
	l->pid = run->app_pid;
	l->ppid = lin.ppid;
	l->sid = lin.sid;
	l->start_ticks = lin.start;
	l->seen_ticks = boot_ticks_now();
	int fd = ksr_proc_pidfd(run->app_pid);
	if (fd >= 0 && ksr_proc_alive(run->app_pid)) {
		l->pidfd = fd;
		l->has_fd = true;
	} else if (fd >= 0) {
		close(fd); /* gone between the two looks: the fd may name nothing */
	}
}

/* The exit status the kernel keeps for a pidfd once its process is reaped. */
static bool pidfd_exit_status(int fd, int *status)
{
	struct pidfd_info_v0 info = {.mask = KSR_PIDFD_INFO_EXIT};
	if (ioctl(fd, KSR_PIDFD_GET_INFO, &info) < 0 || !(info.mask & KSR_PIDFD_INFO_EXIT))
		return false;
	*status = info.exit_code;
	return true;
}

bool ksr_run_app_exit_status(ksr_run *run, int *status)
{
	int pid = run->app_pid;
	if (pid <= 0)
		return false;
	if (pid == run->launched_pid && run->launch_reaped) {
		*status = run->launch_status;
		return true;
	}
	siginfo_t si = {0};
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid) {
		*status = si.si_code == CLD_EXITED
		                  ? (si.si_status & 0xff) << 8
		                  : (si.si_status | (si.si_code == CLD_DUMPED ? 0x80 : 0));
		return true;
	}
	return run->life.pid == pid && run->life.has_fd &&
	       pidfd_exit_status(run->life.pidfd, status);
}

/* A signal ended it: its own status, or a shell's 128+N. */
static bool by_signal(int status)
{
	return WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) > 128);
}

/* ---- the instances -------------------------------------------------------- */

/* The app wait's window match (window:, window_class:). */
static bool window_matches(const ksr_scenario *sc, const ksr_window *w)
{
	return ksr_run_window_matches(sc->window, sc->window_class, w);
}

static bool window_is_apps(const ksr_scenario *sc, const ksr_window *w)
{
	return !w->is_dialog && (sc->window || sc->window_class) && window_matches(sc, w);
}

/* The app wait's process match, on the run's display, of the run's launch. */
static void find_processes(ksr_run *run, ksr_proc_list *out)
{
	ksr_err err = {0};
	ksr_proc_find(run->sc->process, run->sc->process_cmdline, out, &err);
	ksr_proc_list_drop_other_displays(out, run->x ? ksr_x11_display_name(run->x) : NULL);
	ksr_run_keep_launched(run, out, NULL); /* with launch:, the launch's only (origin.c) */
}

size_t ksr_run_app_instances(ksr_run *run, bool by_window, unsigned long **out)
{
	size_t n = 0;
	if (!by_window) {
		ksr_proc_list procs = {0};
		find_processes(run, &procs);
		*out = ksr_xcalloc(procs.len + 1, sizeof **out);
		for (size_t i = 0; i < procs.len; i++)
			(*out)[n++] = (unsigned long)procs.items[i].pid;
		ksr_proc_list_clear(&procs);
		return n;
	}
	ksr_err err = {0};
	ksr_window_list wins = {0};
	if (run->x)
		ksr_x11_list_windows(run->x, &wins, &err);
	*out = ksr_xcalloc(wins.len + 1, sizeof **out);
	for (size_t i = 0; i < wins.len; i++)
		if (window_is_apps(run->sc, &wins.items[i]))
			(*out)[n++] = wins.items[i].id;
	ksr_window_list_clear(&wins);
	return n;
}

/* The app's own launcher: its parent, unless that is init or the runtime
 * (an orphan's new parent, never a launcher that restarts it). */
static bool same_parent(const ksr_app_life *l, const lineage *lin)
{
	return l->ppid > 1 && l->ppid != getpid() && lin->ppid == l->ppid;
}

static bool same_session(const ksr_app_life *l, const lineage *lin)
{
	return l->sid > 1 && l->sid != getsid(0) && lin->sid == l->sid;
}

bool ksr_run_instance_is_new(const ksr_run *run, int pid, int64_t *after_ms)
{
	const ksr_app_life *l = &run->life;
	lineage lin;
	if (l->pid <= 0 || l->pid != run->app_pid || pid == l->pid || !read_lineage(pid, &lin))
		return false;
	bool is_new =
	        lin.start > l->seen_ticks || (lin.start >= l->start_ticks && same_parent(l, &lin));
	if (is_new && after_ms) {
		long long d = (long long)lin.start - (long long)l->seen_ticks;
		*after_ms = d > 0 ? ticks_to_ms(d) : 0;
	}
	return is_new;
}

/* ---- following a restart ------------------------------------------------- */

typedef struct successor {
	int pid;
	bool by_parent;
	char *name, *cmdline;
	ksr_window window; /* its window (strings owned), when found */
	bool have_window;
} successor;

static void successor_clear(successor *s)
{
	free(s->name);
	free(s->cmdline);
	ksr_run_window_release(&s->window);
	*s = (successor){0};
}

/* A new instance from the app's launcher: the newest, by parent before session. */
static bool find_successor(ksr_run *run, successor *s)
{
	const ksr_app_life *l = &run->life;
	ksr_proc_list procs = {0};
	find_processes(run, &procs);
	int best = -1;
	bool best_parent = false;
	unsigned long long best_start = 0;
	for (size_t i = 0; i < procs.len; i++) {
		lineage lin;
		int pid = procs.items[i].pid;
		if (pid == l->pid || !read_lineage(pid, &lin) || lin.start < l->start_ticks)
			continue;
		bool parent = same_parent(l, &lin);
		if (!parent && !same_session(l, &lin))
			continue;
		if (best < 0 || (parent && !best_parent) ||
		    (parent == best_parent && lin.start >= best_start)) {
			best = (int)i;
			best_parent = parent;
			best_start = lin.start;
		}
	}
	if (best >= 0 && s->pid != procs.items[best].pid) {
		successor_clear(s);
		s->pid = procs.items[best].pid;
		s->by_parent = best_parent;
		s->name = ksr_xstrdup(procs.items[best].name);
		s->cmdline = ksr_xstrdup(procs.items[best].cmdline);
	}
	ksr_proc_list_clear(&procs);
	return best >= 0;
}

static void keep_window(successor *s, const ksr_window *w)
{
	ksr_run_window_release(&s->window);
	ksr_run_window_copy(&s->window, w);
	s->have_window = true;
}

/* Its window, as the app wait takes one: a matching window of its own, else
 * any matching window (a launcher's); with no window pattern, one of its own. */
static bool find_window(ksr_run *run, successor *s)
{
	const ksr_scenario *sc = run->sc;
	bool patterns = sc->window || sc->window_class;
	ksr_err err = {0};
	ksr_window_list wins = {0};
	ksr_x11_list_windows(run->x, &wins, &err);
	const ksr_window *tied = NULL, *any = NULL;
	for (size_t i = 0; i < wins.len; i++) {
		const ksr_window *w = &wins.items[i];
		if (patterns && !window_matches(sc, w))
			continue;
		if (w->pid == s->pid && !tied)
			tied = w;
		if (patterns && !any)
			any = w;
	}
	if (tied || any)
		keep_window(s, tied ? tied : any);
	ksr_window_list_clear(&wins);
	return tied || any;
}

static void emit_relaunched(ksr_run *run, const successor *s, const char *how, int64_t after)
{
	const ksr_app_life *l = &run->life;
	cJSON *f = cJSON_CreateObject();
	cJSON_AddNumberToObject(f, "old_pid", l->pid);
	cJSON_AddNumberToObject(f, "new_pid", s->pid);
	cJSON_AddStringToObject(f, "by", s->by_parent ? "parent" : "session");
	if (s->by_parent)
		cJSON_AddNumberToObject(f, "launcher_pid", l->ppid);
	else
		cJSON_AddNumberToObject(f, "session", l->sid);
	cJSON_AddStringToObject(f, "old_exit", how);
	cJSON_AddNumberToObject(f, "after_ms", (double)after);
	ksr_run_emit(run, "app.relaunched", f);
}

cJSON *ksr_run_window_fields(const ksr_window *w)
{
	cJSON *o = cJSON_CreateObject();
	char id[32];
	snprintf(id, sizeof id, "0x%lx", w->id);
	cJSON_AddStringToObject(o, "id", id);
	cJSON_AddStringToObject(o, "title", w->title ? w->title : "");
	cJSON_AddStringToObject(o, "class", w->res_class ? w->res_class : "");
	cJSON_AddStringToObject(o, "type", w->type ? w->type : "");
	cJSON_AddNumberToObject(o, "x", w->x);
	cJSON_AddNumberToObject(o, "y", w->y);
	cJSON_AddNumberToObject(o, "w", w->w);
	cJSON_AddNumberToObject(o, "h", w->h);
	return o;
}

/* The new instance is the app now: the same `app` event the app wait records
 * (the latest is the report's app). */
static void emit_app(ksr_run *run, const successor *s, int old_pid)
{
	cJSON *f = cJSON_CreateObject();
	cJSON_AddNumberToObject(f, "pid", s->pid);
	cJSON_AddStringToObject(f, "name", s->name ? s->name : "");
	cJSON_AddStringToObject(f, "cmdline", s->cmdline ? s->cmdline : "");
	cJSON_AddBoolToObject(f, "launched", run->launched_pid > 0);
	cJSON_AddNumberToObject(f, "relaunched_from", old_pid);
	cJSON_AddItemToObject(f, "window", ksr_run_window_fields(&s->window));
	ksr_run_emit(run, "app", f);
}

static void adopt(ksr_run *run, successor *s, const char *how, int64_t after)
{
	ksr_app_life *l = &run->life;
	int old = run->app_pid;
	emit_relaunched(run, s, how, after);
	emit_app(run, s, old);
	if (!l->relaunches++) {
		l->first_pid = old;
		snprintf(l->first_exit, sizeof l->first_exit, "%s", how);
	}
	ksr_run_window_release(&run->window);
	run->window = s->window;
	s->window = (ksr_window){0};
	run->have_window = true;
	run->app_pid = s->pid;
	ksr_run_app_seen_alive(run); /* the new one's launcher and pidfd */
	ksr_run_rewatch_app(run);
}

/* Wait a tick without the cancellable waits: this runs inside guard checks. */
static bool tick(ksr_deadline end)
{
	if (ksr_cancel_signal() || ksr_deadline_passed(end))
		return false;
	ksr_wait_fds_uncancellable(NULL, 0,
	                           ksr_deadline_min(end, ksr_deadline_in_ms(RELAUNCH_TICK_MS)));
	return !ksr_cancel_signal();
}

bool ksr_run_follow_relaunch(ksr_run *run)
{
	static _Thread_local bool busy; /* a guard check polled again from inside this one */
	ksr_app_life *l = &run->life;
	const ksr_scenario *sc = run->sc;
	if (busy || !sc || run->app_pid <= 0 || l->pid != run->app_pid ||
	    l->relaunches >= MAX_RELAUNCHES || (!sc->process && !sc->process_cmdline) || !run->x)
		return false;
	busy = true;
	int64_t gone_ms = ksr_now_ms();
	ksr_deadline appear = ksr_deadline_min(run->work, ksr_deadline_in_ms(RELAUNCH_MS));
	ksr_deadline up = ksr_deadline_min(
	        run->work, ksr_deadline_in_ms((int64_t)(sc->launch_timeout_s * 1000)));
	successor s = {0};
	int status = 0;
	bool known = false, followed = false;
	for (;;) {
		known = known || ksr_run_app_exit_status(run, &status);
		if (known && by_signal(status))
			break; /* a crash, even if it comes back: diagnosis */
		bool found = find_successor(run, &s);
		if (found && find_window(run, &s) && ksr_proc_alive(s.pid)) {
			followed = true;
			break;
		}
		if (!tick(found ? up : appear))
			break;
	}
	known = known || ksr_run_app_exit_status(run, &status);
	if (followed && !(known && by_signal(status))) {
		char how[96] = "ended (its exit status is not known)";
		if (known)
			ksr_run_describe_status(status, false, how, sizeof how);
		adopt(run, &s, how, ksr_now_ms() - gone_ms);
	} else {
		followed = false;
	}
	successor_clear(&s);
	busy = false;
	return followed;
}
