/* Whose process is it (proc.h): a process tied to a launch by descent (its
 * session, or a parent chain that reaches the launch) or by the run's tag in
 * its environment, told apart from an older instance of the same program and
 * from another party's; and the processes carrying a run's tag, found and
 * stopped at the end of a run even when they left the launch's group. */
#include "ksr/proc.h"
#include "backend/proc/priv.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Parents followed up from a process before giving up: deeper chains than
 * this are no launcher's. */
#define ANCESTORS_MAX 64
#define KILL_WAIT_MS  2000

bool ksr_proc_read_stat(int pid, ksr_proc_stat *st)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* comm (field 2) may hold spaces and parentheses: parse after the last ')'. */
	const char *p = strrchr(buf, ')');
	/* state ppid pgrp session (fields 3-6), utime stime (14, 15), starttime
	 * (22). */
	unsigned long long utime = 0, stime = 0;
	bool ok = p && sscanf(p + 1,
	                      " %c %d %d %d %*s %*s %*s %*s %*s %*s %*s %llu %llu %*s %*s %*s "
	                      "%*s %*s %*s %llu",
	                      &st->state, &st->ppid, &st->pgrp, &st->sid, &utime, &stime,
	                      &st->start_ticks) == 7;
	st->cpu_ticks = utime + stime;
	return ok;
}

static bool dead(char state)
{
	return state == 'Z' || state == 'X' || state == 'x';
}

unsigned long long ksr_proc_start_ticks(int pid)
{
	ksr_proc_stat st;
	return pid > 0 && ksr_proc_read_stat(pid, &st) ? st.start_ticks : 0;
}

/* Started by the launch: in its session (the launch is a session leader, and
 * a session outlives the parents, so an orphan reparented to init is still
 * in it), in its group, or with a parent chain that reaches the launch or
 * one of its session's processes (a child that called setsid). */
static bool descends(int pid, const ksr_proc_stat *st, const ksr_launch_tie *t)
{
	ksr_proc_stat cur = *st;
	for (int depth = 0; depth < ANCESTORS_MAX; depth++) {
		if (pid == t->pid || cur.sid == t->pid || cur.pgrp == t->pid)
			return true;
		if (cur.ppid <= 1 || cur.start_ticks < t->start_ticks)
			return false; /* init, or a parent older than the launch */
		pid = cur.ppid;
		if (!ksr_proc_read_stat(pid, &cur))
			return false;
	}
	return false;
}

/* 1: the environment carries the run's tag; 0: it is readable and names
 * DISPLAY but no tag of this run (another party's process); -1: it tells
 * nothing (not ours to read, or written over: neither DISPLAY nor the tag,
 * as Chromium's process title leaves it). */
static int tagged(int pid, const char *run_id)
{
	char value[128];
	int t = ksr_proc_environ_value(pid, KSR_PROC_RUN_TAG, value, sizeof value);
	if (t < 0)
		return -1;
	if (t > 0)
		return run_id && strcmp(value, run_id) == 0 ? 1 : 0;
	char display[256];
	return ksr_proc_environ_value(pid, "DISPLAY", display, sizeof display) == 1 ? 0 : -1;
}

ksr_proc_origin ksr_proc_origin_of(int pid, const ksr_launch_tie *t)
{
	ksr_proc_stat st;
	if (pid <= 0 || !ksr_proc_read_stat(pid, &st) || dead(st.state))
		return KSR_ORIGIN_GONE;
	if (!t || t->pid <= 0)
		return KSR_ORIGIN_ATTACHED;
	if (st.start_ticks < t->start_ticks)
		return KSR_ORIGIN_OLDER;
	if (descends(pid, &st, t))
		return KSR_ORIGIN_DESCENDANT;
	switch (tagged(pid, t->run_id)) {
	case 1:
		return KSR_ORIGIN_TAGGED;
	case 0:
		return KSR_ORIGIN_OTHER;
	default:
		return KSR_ORIGIN_UNTOLD;
	}
}

bool ksr_proc_origin_is_launch(ksr_proc_origin o)
{
	return o == KSR_ORIGIN_ATTACHED || o == KSR_ORIGIN_DESCENDANT || o == KSR_ORIGIN_TAGGED ||
	       o == KSR_ORIGIN_UNTOLD;
}

const char *ksr_proc_origin_name(ksr_proc_origin o)
{
	switch (o) {
	case KSR_ORIGIN_GONE:
		return "gone";
	case KSR_ORIGIN_ATTACHED:
		return "attached";
	case KSR_ORIGIN_OLDER:
		return "older";
	case KSR_ORIGIN_DESCENDANT:
		return "descendant";
	case KSR_ORIGIN_TAGGED:
		return "tagged";
	case KSR_ORIGIN_UNTOLD:
		return "started-after";
	case KSR_ORIGIN_OTHER:
		return "other";
	}
	return "unknown";
}

/* ---- the run's tagged processes ------------------------------------------ */

static int parse_pid(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);
	return *s && !*end && v > 0 && v < 0x40000000 ? (int)v : -1;
}

size_t ksr_proc_find_tagged(const char *run_id, int **pids)
{
	*pids = NULL;
	if (!run_id || !*run_id)
		return 0;
	DIR *dir = opendir("/proc");
	if (!dir)
		return 0;
	size_t n = 0, cap = 0;
	int self = getpid();
	struct dirent *de;
	while ((de = readdir(dir))) {
		int pid = parse_pid(de->d_name);
		ksr_proc_stat st;
		char value[128];
		if (pid <= 0 || pid == self || !ksr_proc_read_stat(pid, &st) || dead(st.state) ||
		    ksr_proc_environ_value(pid, KSR_PROC_RUN_TAG, value, sizeof value) != 1 ||
		    strcmp(value, run_id) != 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			*pids = ksr_xrealloc(*pids, cap * sizeof **pids);
		}
		(*pids)[n++] = pid;
	}
	closedir(dir);
	return n;
}

static size_t signal_tagged(const char *run_id, int sig)
{
	int *pids = NULL;
	size_t n = ksr_proc_find_tagged(run_id, &pids);
	for (size_t i = 0; i < n; i++)
		kill(pids[i], sig);
	free(pids);
	return n;
}

/* Until none is left, re-checked on a short back-off (the processes are
 * nobody's children here: nothing to wait on). Not cancellable: cleanup. */
static bool tagged_gone_within(const char *run_id, int ms)
{
	ksr_deadline end = ksr_deadline_in_ms(ms);
	for (int step = 2;; step = step < 64 ? step * 2 : step) {
		int *pids = NULL;
		size_t n = ksr_proc_find_tagged(run_id, &pids);
		free(pids);
		if (!n)
			return true;
		if (ksr_deadline_passed(end))
			return false;
		ksr_wait_fds_uncancellable(NULL, 0,
		                           ksr_deadline_min(end, ksr_deadline_in_ms(step)));
	}
}

size_t ksr_proc_stop_listed(const char *run_id, const int *pids, size_t n, int grace_ms,
                            bool *ended_first)
{
	size_t signalled = 0;
	for (size_t i = 0; i < n; i++) {
		/* ESRCH: it ended by itself between the scan and now (a shell whose
		 * terminal just closed), which the caller reports apart. */
		bool gone = kill(pids[i], SIGTERM) < 0 && errno == ESRCH;
		if (ended_first)
			ended_first[i] = gone;
		signalled += !gone;
	}
	if (signalled && !tagged_gone_within(run_id, grace_ms)) {
		signal_tagged(run_id, SIGKILL);
		tagged_gone_within(run_id, KILL_WAIT_MS);
	}
	return signalled;
}

size_t ksr_proc_stop_tagged(const char *run_id, int grace_ms)
{
	int *pids = NULL;
	size_t n = ksr_proc_find_tagged(run_id, &pids);
	size_t signalled = ksr_proc_stop_listed(run_id, pids, n, grace_ms, NULL);
	free(pids);
	return signalled;
}
