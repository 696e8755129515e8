/* Process backend against real processes: detached launch, /proc search by
 * long program names, liveness and pidfd, stopping stubborn groups, and
 * bounded commands with timeout and cancellation (cancellation last: it is
 * permanent for the process). */
#include "ksr/proc.h"
#include "tap.h"

#include <dirent.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/ksr-test-proc-XXXXXX";

static void msleep(int ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static char *slurp(const char *path)
{
	static char buf[8192];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* Poll a file until it has exactly want (up to ms). */
static bool file_becomes(const char *path, const char *want, int ms)
{
	for (int t = 0; t < ms; t += 10) {
		if (strcmp(slurp(path), want) == 0)
			return true;
		msleep(10);
	}
	return false;
}

/* A live (non-zombie) process in group pgid? Orphans PID 1 has not reaped yet
 * still answer kill(-pgid, 0), so look at /proc. */
static bool group_has_live(int pgid)
{
	if (kill(-pgid, 0) < 0 && errno == ESRCH)
		return false;
	DIR *dir = opendir("/proc");
	struct dirent *de;
	bool live = false;
	while (dir && !live && (de = readdir(dir))) {
		char path[300], *buf, *p;
		snprintf(path, sizeof path, "/proc/%s/stat", de->d_name);
		buf = slurp(path);
		p = strrchr(buf, ')');
		char st;
		int ppid, grp;
		if (p && sscanf(p + 1, " %c %d %d", &st, &ppid, &grp) == 3 && grp == pgid &&
		    st != 'Z' && st != 'X')
			live = true;
	}
	if (dir)
		closedir(dir);
	return live;
}

static bool group_gone(int pgid)
{
	for (int t = 0; t < 2000; t += 10) {
		if (!group_has_live(pgid))
			return true;
		msleep(10);
	}
	return false;
}

static unsigned long long status_mask(int pid, const char *key)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%d/status", pid);
	FILE *f = fopen(path, "re");
	unsigned long long v = ~0ULL;
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, key, strlen(key)) == 0)
			v = strtoull(line + strlen(key), NULL, 16);
	if (f)
		fclose(f);
	return v;
}

static int count_fds(int pid)
{
	char cmd[96];
	snprintf(cmd, sizeof cmd, "exit $(ls /proc/%d/fd | wc -l)", pid);
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_launch(void)
{
	char log[256];
	snprintf(log, sizeof log, "%s/launch.log", tmpdir);
	FILE *f = fopen(log, "w");
	fputs("pre\n", f);
	fclose(f);
	int leak = open("/dev/null", O_RDONLY); /* not CLOEXEC: must not reach the child */
	ksr_err err = {0};
	int pid = 0;
	int rc = ksr_proc_launch("echo hi; echo err >&2; exec sleep 30", log, &pid, &err);
	close(leak);
	is_int(rc, 0, "launch returns 0");
	ok(pid > 0, "launch gives a pid (%s)", err.msg);
	is_int(getpgid(pid), pid, "launched process leads its own process group");
	is_int(getsid(pid), pid, "launched process leads its own session");
	ok(file_becomes(log, "pre\nhi\nerr\n", 3000), "log appended with stdout and stderr: %s",
	   slurp(log));
	is_int((long long)status_mask(pid, "SigIgn:"), 0,
	       "child ignores no signal (SIGPIPE reset)");
	is_int((long long)status_mask(pid, "SigBlk:"), 0, "child blocks no signal");
	is_int(count_fds(pid), 3, "child has only fds 0, 1, 2");
	ok(ksr_proc_alive(pid), "launched process alive");
	int64_t t0 = ksr_now_ms();
	is_int(ksr_proc_stop_group(pid, 5000), 0, "stop_group stops a polite group");
	/* Liveness, from the configured grace: SIGTERM sufficed, no SIGKILL after 5 s. */
	ok(ksr_now_ms() - t0 < 5000, "polite group gone within the grace (%lld ms)",
	   (long long)(ksr_now_ms() - t0));
	ok(!ksr_proc_alive(pid), "stopped process not alive");
	is_int(ksr_proc_reap(pid, NULL), -1, "stop_group reaped our child");

	rc = ksr_proc_launch("true", "/nonexistent-dir/x.log", &pid, &err);
	is_int(rc, -1, "launch with an unwritable log fails");
	ok(strstr(err.msg, "/nonexistent-dir/x.log") != NULL, "error names the log: %s", err.msg);
}

static ksr_pattern *re(const char *s)
{
	ksr_err err = {0};
	ksr_pattern *p = ksr_pattern_compile(s, &err);
	if (!p)
		fprintf(stderr, "# bad pattern %s: %s\n", s, err.msg);
	return p;
}

static bool find_one(const char *name_re, const char *cmd_re, int want_pid, ksr_proc *got)
{
	ksr_pattern *n = name_re ? re(name_re) : NULL, *c = cmd_re ? re(cmd_re) : NULL;
	bool found = false;
	for (int t = 0; t < 3000 && !found; t += 20) {
		ksr_proc_list l;
		ksr_err err = {0};
		if (ksr_proc_find(n, c, &l, &err) == 0) {
			for (size_t i = 0; i < l.len; i++) {
				if (l.items[i].pid != want_pid)
					continue;
				found = true;
				if (got) {
					got->pid = want_pid;
					got->name = strdup(l.items[i].name);
					got->argv0 = strdup(l.items[i].argv0);
					got->cmdline = strdup(l.items[i].cmdline);
				}
			}
			ksr_proc_list_clear(&l);
		}
		if (!found && want_pid > 0)
			msleep(20);
		if (want_pid <= 0)
			break;
	}
	ksr_pattern_free(n);
	ksr_pattern_free(c);
	return found;
}

static void free_proc(ksr_proc *p)
{
	free(p->name);
	free(p->argv0);
	free(p->cmdline);
}

static int find_count(const char *name_re, const char *cmd_re, int pid)
{
	ksr_pattern *n = name_re ? re(name_re) : NULL, *c = cmd_re ? re(cmd_re) : NULL;
	ksr_proc_list l;
	ksr_err err = {0};
	int count = 0;
	if (ksr_proc_find(n, c, &l, &err) == 0)
		for (size_t i = 0; i < l.len; i++)
			count += l.items[i].pid == pid;
	ksr_proc_list_clear(&l);
	ksr_pattern_free(n);
	ksr_pattern_free(c);
	return count;
}

static void test_find(void)
{
	char prog[256], cmd[600], want_cmdline[300];
	snprintf(prog, sizeof prog, "%s/ksr-very-long-program-name", tmpdir);
	snprintf(cmd, sizeof cmd, "cp /bin/sleep '%s' && chmod 755 '%s'", prog, prog);
	ok(system(cmd) == 0, "copied sleep to %s", prog);
	snprintf(cmd, sizeof cmd, "exec '%s' 31", prog);
	snprintf(want_cmdline, sizeof want_cmdline, "%s 31", prog);
	int pid = 0;
	ksr_err err = {0};
	is_int(ksr_proc_launch(cmd, NULL, &pid, &err), 0, "launch long-named program");

	ksr_proc p = {0};
	ok(find_one("^ksr-very-long-program-name$", NULL, pid, &p), "found by full name");
	is_str(p.name, "ksr-very-long-program-name", "name is the executable's base name");
	is_str(p.argv0, "ksr-very-long-program-name", "argv0 base name");
	is_str(p.cmdline, want_cmdline, "cmdline joined with spaces");
	free_proc(&p);
	is_int(find_count("^ksr-very-long-p$", NULL, pid), 0, "comm's 15-char cut never matches");
	ok(find_one(NULL, "ksr-very-long-program-name 31$", pid, NULL), "found by cmdline");
	ok(find_one("(?i)^KSR-VERY", "program-name 31", pid, NULL), "name and cmdline together");
	is_int(find_count("^ksr-very-long-program-name$", "no-such-arg", pid), 0,
	       "cmdline pattern must match too");
	is_int(find_count(NULL, NULL, getpid()), 0, "never lists itself");
	is_int(find_count(NULL, NULL, 2), 0, "kernel threads (kthreadd) never match");
	is_int(ksr_proc_stop_group(pid, 2000), 0, "stopped");

	/* argv[0] differs from the executable: either one matches. */
	int pid2 = 0;
	ksr_proc_launch("exec perl -e 'exec {\"/bin/sleep\"} \"ksr-alias-zz\", \"33\"'", NULL,
	                &pid2, &err);
	ok(find_one("^ksr-alias-zz$", NULL, pid2, &p), "found by argv[0]");
	is_str(p.name, "sleep", "name from the executable");
	is_str(p.argv0, "ksr-alias-zz", "argv0 as given");
	free_proc(&p);
	ok(find_one("^sleep$", "^ksr-alias-zz 33$", pid2, NULL), "found by executable name");
	ksr_proc_stop_group(pid2, 2000);
}

static void test_alive_pidfd(void)
{
	int pid = 0;
	ksr_err err = {0};
	ksr_proc_launch("exec sleep 30", NULL, &pid, &err);
	int fd = ksr_proc_pidfd(pid);
	ok(fd >= 0, "pidfd available");
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	is_int(poll(&pfd, 1, 0), 0, "pidfd not readable while running");
	int st = 0;
	is_int(ksr_proc_reap(pid, &st), 0, "reap: still running");
	kill(pid, SIGKILL);
	is_int(poll(&pfd, 1, 2000), 1, "pidfd readable after exit");
	ok(!ksr_proc_alive(pid), "unreaped zombie is not alive");
	is_int(ksr_proc_reap(pid, &st), 1, "reaped");
	ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "status says SIGKILL");
	is_int(ksr_proc_reap(pid, &st), -1, "reap again: not our child");
	is_int(ksr_proc_reap(1, &st), -1, "reap init: not our child");
	ok(ksr_proc_alive(getpid()), "we are alive");
	ok(!ksr_proc_alive(0) && !ksr_proc_alive(-1), "0 and -1 are not processes");
	close(fd);
	is_int(ksr_proc_stop_group(1, 100), -1, "stop_group refuses pgid 1");
	is_int(ksr_proc_stop_group(0, 100), -1, "stop_group refuses pgid 0");
}

/* A group where everyone ignores SIGTERM; returns the leader once the trap is set. */
static int launch_stubborn(void)
{
	char log[256];
	snprintf(log, sizeof log, "%s/stubborn-%lld.log", tmpdir, (long long)ksr_now_ms());
	int pid = 0;
	ksr_err err = {0};
	ksr_proc_launch("trap '' TERM; sleep 60 & sleep 60 & echo ready; wait", log, &pid, &err);
	ok(file_becomes(log, "ready\n", 3000), "stubborn group ready");
	return pid;
}

static void test_stop_group(void)
{
	int pid = launch_stubborn();
	int64_t t0 = ksr_now_ms();
	is_int(ksr_proc_stop_group(pid, 500), 0, "stop_group kills a group ignoring SIGTERM");
	int64_t took = ksr_now_ms() - t0;
	/* It waited the grace (500 ms), then SIGKILL ended it: bounded by grace + 2 s. */
	ok(took >= 490 && took < 500 + 2000, "after the grace, bounded (%lld ms)", (long long)took);
	ok(group_gone(pid), "no member of the group left");
	is_int(ksr_proc_reap(pid, NULL), -1, "leader reaped");
}

static void test_run(void)
{
	ksr_err err = {0};
	int code = -5;
	char *out = NULL;
	ksr_deadline d = ksr_deadline_in_ms(10000);
	is_int(ksr_proc_run("exit 0", d, &code, NULL, 0, &err), KSR_WAIT_READY, "run exit 0");
	is_int(code, 0, "exit code 0");
	is_int(ksr_proc_run("exit 3", d, &code, NULL, 0, &err), KSR_WAIT_READY, "run exit 3");
	is_int(code, 3, "exit code 3");
	ksr_proc_run("ksr-no-such-command-xyz", d, &code, &out, 4096, &err);
	is_int(code, 127, "not found: 127");
	ok(out && strstr(out, "not found"), "shell says not found: %s", out);
	free(out);
	ksr_proc_run("kill -9 $$", d, &code, NULL, 0, &err);
	is_int(code, 128 + 9, "killed by a signal: 128+N");

	is_int(ksr_proc_run("echo out; echo err >&2", d, &code, &out, 4096, &err), KSR_WAIT_READY,
	       "run with output");
	is_str(out, "out\nerr\n", "stdout and stderr captured");
	free(out);

	/* A child that is not drained would block on the pipe until d: READY, not
	 * TIMEOUT, is the proof (its speed is bench/bench_proc.c's). */
	is_int(ksr_proc_run("head -c 1000000 /dev/zero | tr '\\0' x; exit 4", d, &code, &out, 1000,
	                    &err),
	       KSR_WAIT_READY, "big output: the child was drained before the deadline");
	is_int(code, 4, "big output: the child was drained and finished");
	ok(out && strlen(out) == 1000, "capture capped at out_max (%zu)", out ? strlen(out) : 0);
	free(out);
	is_int(ksr_proc_run("head -c 1000000 /dev/zero", d, &code, NULL, 0, &err), KSR_WAIT_READY,
	       "big output without capture: drained before the deadline");
	is_int(code, 0, "big output without capture");

	/* The shell exits while a background child keeps the pipe: do not wait for
	 * it (liveness: back before the background sleep's 5 s). */
	int64_t t0 = ksr_now_ms();
	ksr_proc_run("sleep 5 & echo $!", d, &code, &out, 64, &err);
	ok(ksr_now_ms() - t0 < 5000, "returns when the shell exits (%lld ms)",
	   (long long)(ksr_now_ms() - t0));
	int bg = out ? atoi(out) : 0;
	if (bg > 1)
		kill(bg, SIGKILL);
	free(out);

	/* ...even when it writes without pause (it dies of SIGPIPE once we close). */
	t0 = ksr_now_ms();
	ksr_proc_run("yes & exit 5", d, &code, &out, 100, &err);
	is_int(code, 5, "exit code despite a background writer");
	ok(ksr_now_ms() - t0 < 1500, "not held by a background writer (%lld ms)",
	   (long long)(ksr_now_ms() - t0));
	free(out);

	t0 = ksr_now_ms();
	ksr_wait w = ksr_proc_run("sleep 30 & echo $!; wait", ksr_deadline_in_ms(300), &code, &out,
	                          64, &err);
	int64_t took = ksr_now_ms() - t0;
	is_int(w, KSR_WAIT_TIMEOUT, "timeout");
	ok(took >= 290 && took < 1500, "timeout prompt (%lld ms)", (long long)took);
	is_int(code, 128 + 9, "timed-out shell killed");
	bg = out ? atoi(out) : 0;
	ok(bg > 1 && !ksr_proc_alive(bg), "background child in the group killed too (%d)", bg);
	free(out);

	w = ksr_proc_run("exit 0", ksr_deadline_in_ms(0), &code, NULL, 0, &err);
	is_int(w, KSR_WAIT_TIMEOUT, "deadline already passed: not run");
}

static void *cancel_later(void *arg)
{
	(void)arg;
	msleep(300);
	ksr_cancel_request();
	return NULL;
}

static void test_cancel(void)
{
	pthread_t th;
	pthread_create(&th, NULL, cancel_later, NULL);
	ksr_err err = {0};
	int code = -5;
	char *out = NULL;
	int64_t t0 = ksr_now_ms();
	ksr_wait w =
	        ksr_proc_run("sleep 30 & echo $!; wait", KSR_DEADLINE_NEVER, &code, &out, 64, &err);
	int64_t took = ksr_now_ms() - t0;
	pthread_join(th, NULL);
	is_int(w, KSR_WAIT_CANCELLED, "cancel ends a run");
	ok(took >= 250 && took < 1500, "cancel prompt (%lld ms)", (long long)took);
	is_int(code, 128 + 9, "cancelled shell killed");
	int bg = out ? atoi(out) : 0;
	ok(bg > 1 && !ksr_proc_alive(bg), "its group killed too");
	free(out);
	is_int(ksr_proc_run("exit 0", KSR_DEADLINE_NEVER, &code, NULL, 0, &err), KSR_WAIT_CANCELLED,
	       "after cancel, runs are refused");

	/* Cleanup after SIGTERM still gets its whole grace period. */
	int pid = launch_stubborn();
	t0 = ksr_now_ms();
	is_int(ksr_proc_stop_group(pid, 400), 0, "stop_group works after cancel");
	took = ksr_now_ms() - t0;
	ok(took >= 390 && took < 2000, "grace not cut short by cancel (%lld ms)", (long long)took);
	ok(group_gone(pid), "group gone");
}

/* Where pidfd_open is refused (valgrind, a container's seccomp filter, an old
 * kernel) run_wait re-checks the child on a tick. A command that closes its
 * output and then runs past a few ticks must still be "finished, exit 0", not
 * the last tick's timeout (what valgrind showed on every shell step). The
 * refusal is made real with a seccomp filter, in a child process. */
static int run_refused_pidfd(void)
{
	struct sock_filter f[] = {
	        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pidfd_open, 0, 1),
	        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
	        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof f / sizeof *f, .filter = f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
		return 3;
	if (ksr_proc_pidfd(getpid()) >= 0)
		return 4; /* the filter did not take */
	for (int i = 0; i < 3; i++) {
		int code = -1;
		ksr_err err = {0};
		ksr_wait w = ksr_proc_run("exec >/dev/null 2>&1; sleep 0.1",
		                          ksr_deadline_in_ms(30000), &code, NULL, 0, &err);
		if (w != KSR_WAIT_READY || code != 0)
			return 1;
	}
	return 0;
}

static void test_run_without_pidfd(void)
{
	pid_t child = fork();
	if (child == 0)
		_exit(run_refused_pidfd());
	int st = 0;
	waitpid(child, &st, 0);
	is_int(WIFEXITED(st) ? WEXITSTATUS(st) : -1, 0,
	       "without pidfds a command that ends after some ticks is finished, exit 0");
}

/* A process's display from its environment: another session's instance is
 * told apart; one without DISPLAY, or on the same display, is not ruled out. */
static void test_display(void)
{
	ksr_err err = {0};
	int on99 = 0, none = 0;
	ksr_proc_launch("DISPLAY=:99 exec sleep 30", NULL, &on99, &err);
	ksr_proc_launch("unset DISPLAY; exec sleep 30", NULL, &none, &err);
	ksr_proc_list l = {0};
	/* The environment is the exec'd process's: wait until sleep runs. */
	for (int i = 0;
	     i < 200 && find_count("^sleep$", NULL, on99) + find_count("^sleep$", NULL, none) < 2;
	     i++)
		usleep(10000);
	ok(!ksr_proc_may_be_on_display(on99, ":1"), "DISPLAY=:99 is not on :1");
	ok(ksr_proc_may_be_on_display(on99, ":99.0"), ":99 and :99.0 are one display");
	ok(ksr_proc_may_be_on_display(on99, "unix:99"), "unix:99 is the local :99");
	ok(!ksr_proc_may_be_on_display(on99, "otherhost:99"),
	   "another host's :99 is another display");
	ok(ksr_proc_may_be_on_display(none, ":1"),
	   "no DISPLAY (an overwritten environment): not ruled out");
	ok(!ksr_proc_may_be_on_display(1 << 30, ":1"), "gone: not an app on the display");
	ksr_proc_find(NULL, NULL, &l, &err);
	size_t before = l.len;
	ksr_proc_list_drop_other_displays(&l, ":7");
	bool kept_none = false, kept_99 = false;
	for (size_t i = 0; i < l.len; i++) {
		kept_none |= l.items[i].pid == none;
		kept_99 |= l.items[i].pid == on99;
	}
	ok(before >= 2 && kept_none && !kept_99, "the list drops :99, keeps the DISPLAY-less one");
	ksr_proc_list_clear(&l);
	ksr_proc_find(NULL, NULL, &l, &err);
	ksr_proc_list_drop_other_displays(&l, ":99");
	kept_99 = false;
	for (size_t i = 0; i < l.len; i++)
		kept_99 |= l.items[i].pid == on99;
	ok(kept_99, "and keeps :99's own on :99");
	ksr_proc_list_clear(&l);
	ksr_proc_stop_group(on99, 2000);
	ksr_proc_stop_group(none, 2000);
}

/* How long a boot-clock reading is, in clock ticks (the unit of /proc's start times). */
static unsigned long long boot_ticks(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	long hz = sysconf(_SC_CLK_TCK);
	return (unsigned long long)ts.tv_sec * (unsigned long long)hz +
	       (unsigned long long)ts.tv_nsec / (1000000000ULL / (unsigned long long)hz);
}

/* Fields 4 (ppid) and 6 (session) of /proc/PID/stat; false when gone. */
static bool stat_ids(int pid, int *ppid, int *sid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *rp = strrchr(buf, ')'); /* the name may hold spaces */
	return rp && sscanf(rp + 2, "%*c %d %*d %d", ppid, sid) == 2;
}

/* Whether pid has left the launch's session and lost it as an ancestor:
 * its own session's leader, no longer a child or grandchild of launch. */
static bool orphaned(int pid, int launch)
{
	int ppid = 0, sid = 0, pppid = 0, psid = 0;
	if (pid == launch || !stat_ids(pid, &ppid, &sid))
		return false;
	bool grandchild = stat_ids(ppid, &pppid, &psid) && pppid == launch;
	return sid == pid && ppid != launch && !grandchild;
}

/* The orphan of `setsid -f`, found by the run's tag in /proc. Others carry
 * the tag for a moment too (setsid itself, its child before it has left
 * the session and while setsid has not exited): wait for the orphan as it
 * is for the rest of its life. */
static int wait_tagged_orphan(const char *run_id, int launch, int ms)
{
	for (int t = 0; t < ms; t += 10) {
		int *pids = NULL;
		size_t n = ksr_proc_find_tagged(run_id, &pids);
		int found = 0;
		for (size_t i = 0; i < n && !found; i++)
			if (orphaned(pids[i], launch))
				found = pids[i];
		free(pids);
		if (found)
			return found;
		msleep(10);
	}
	return 0;
}

/* origin.c: start times are /proc's field 22 (a reading of field 21,
 * itrealvalue, is always 0), the launch's descendants and what carries its
 * tag count, an older process does not, and the tagged ones are stopped. */
static void test_origin(void)
{
	unsigned long long now = boot_ticks(), mine = ksr_proc_start_ticks(getpid());
	long hz = sysconf(_SC_CLK_TCK);
	ok(mine > 0 && mine <= now, "this process's start time (%llu) is before now (%llu)", mine,
	   now);
	int pid = 0;
	ksr_err err = {0};
	const char *id = "unit-origin-1";
	ok(ksr_proc_launch_tagged("setsid -f sleep 30; exec sleep 30", "/dev/null", id, &pid,
	                          &err) == 0,
	   "tagged launch: %s", err.msg);
	unsigned long long started = ksr_proc_start_ticks(pid);
	ok(started >= now && started <= boot_ticks() + (unsigned long long)hz,
	   "the launch started now (%llu, now %llu)", started, now);
	ksr_launch_tie t = {.pid = pid, .start_ticks = started, .run_id = id};
	is_str(ksr_proc_origin_name(ksr_proc_origin_of(pid, &t)), "descendant",
	       "the launch itself");
	is_str(ksr_proc_origin_name(ksr_proc_origin_of(getpid(), &t)), "older",
	       "a process older than the launch");
	is_str(ksr_proc_origin_name(ksr_proc_origin_of(getpid(), NULL)), "attached",
	       "with no launch anything counts");
	int orphan = wait_tagged_orphan(id, pid, 5000);
	ok(orphan > 0, "the process that left the launch's session carries its tag");
	is_str(ksr_proc_origin_name(ksr_proc_origin_of(orphan, &t)), "tagged",
	       "it is the launch's by its tag");
	t.run_id = "another-run";
	is_str(ksr_proc_origin_name(ksr_proc_origin_of(orphan, &t)), "other",
	       "another run's tag is not this one's");
	ok(ksr_proc_stop_group(pid, 1000) == 0, "the launch's group stopped");
	ok(ksr_proc_alive(orphan), "what left the group outlives the group's stop");
	ok(ksr_proc_stop_tagged(id, 1000) >= 1, "the tagged ones stopped");
	int *left = NULL;
	is_int((long long)ksr_proc_find_tagged(id, &left), 0, "none carries the tag after");
	free(left);
}

int main(void)
{
	if (ksr_cancel_install() < 0 || !mkdtemp(tmpdir)) {
		perror("setup");
		return 1;
	}
	test_launch();
	test_find();
	test_display();
	test_alive_pidfd();
	test_stop_group();
	test_origin();
	test_run();
	test_run_without_pidfd();
	test_cancel();
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "# could not remove %s\n", tmpdir);
	return tap_done();
}
