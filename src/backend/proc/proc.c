/* Processes: detached launch, /proc scans by program name, liveness, stopping a
 * process group, and bounded short commands with captured output.
 *
 * Children are spawned with every signal blocked across fork(), so a SIGTERM
 * aimed at the new child before it execs cannot run our cancel handler (which
 * writes to the inherited cancel pipe and would cancel the runtime). Between
 * fork and exec the child only makes async-signal-safe system calls. */
#include "ksr/evidence.h"
#include "ksr/proc.h"
#include "ksr/redact.h"
#include "ksr/strbuf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

enum {
	CMDLINE_MAX = 4096,
	STAT_MAX = 1024,
	KILL_WAIT_MS = 2000, /* after SIGKILL, how long a group may take to go */
};

/* ---- spawning ---- */

enum child_stage { STAGE_SESSION = 1, STAGE_DUP, STAGE_EXEC };

struct child_fail {
	int stage;
	int err;
};

struct spawn_spec {
	const char *command;
	int out_fd;       /* becomes stdout and stderr */
	bool new_session; /* setsid(), else setpgid(0, 0) */
	char **envp;      /* the child's environment (child_environ) */
	const char *tag;  /* KSR_PROC_RUN_TAG=<run id>, or NULL */
};

/* Is this environment entry a credential of the runtime's own (a model API
 * key, the MCP bearer token)? The app, shell steps and spawned tools never
 * get one: an app that prints its environment would put it into launch.log. */
static bool runtime_secret(const char *entry)
{
	return ksr_redact_is_credential(entry, strcspn(entry, "="));
}

static bool is_run_tag(const char *entry)
{
	size_t n = strlen(KSR_PROC_RUN_TAG);
	return strncmp(entry, KSR_PROC_RUN_TAG, n) == 0 && entry[n] == '=';
}

/* The environment without the runtime's credentials, and with tag (the
 * run's KSR_PROC_RUN_TAG entry, first, where a reader of a large environment
 * finds it, in place of one inherited; NULL: the inherited one, if any), built before fork (no
 * allocation after it); the other strings are environ's own. */
static char **child_environ(const char *tag)
{
	size_t n = 0;
	while (environ[n])
		n++;
	char **e = ksr_xcalloc(n + 2, sizeof *e);
	size_t k = 0;
	if (tag)
		e[k++] = (char *)tag;
	for (size_t i = 0; i < n; i++)
		if (!runtime_secret(environ[i]) && !(tag && is_run_tag(environ[i])))
			e[k++] = environ[i];
	return e;
}

char **ksr_proc_child_environ(void)
{
	return child_environ(NULL);
}

/* Move a descriptor above 2 so the child's dup2() onto 0..2 cannot clobber it. */
static int fd_high(int fd)
{
	if (fd < 0 || fd > 2)
		return fd;
	int nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	int saved = errno;
	close(fd);
	errno = saved;
	return nfd;
}

static int open_high(const char *path, int flags, mode_t mode)
{
	return fd_high(open(path, flags | O_CLOEXEC, mode));
}

/* Child side: async-signal-safe calls only. Everything above 2 is marked
 * close-on-exec rather than closed, so the failure pipe stays usable. */
static void mark_cloexec_from_3(long max_fd)
{
#ifdef SYS_close_range
	if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
		return;
#endif
	for (long fd = 3; fd < max_fd; fd++)
		fcntl((int)fd, F_SETFD, FD_CLOEXEC);
}

static void reset_signals(void)
{
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	for (int sig = 1; sig < NSIG; sig++)
		sigaction(sig, &dfl, NULL); /* SIGKILL, SIGSTOP and reserved ones fail: fine */
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

static void child_fail(int fail_fd, int stage)
{
	struct child_fail f = {.stage = stage, .err = errno};
	ssize_t r = write(fail_fd, &f, sizeof f);
	(void)r;
	_exit(127);
}

static void child_exec(const struct spawn_spec *s, int devnull, int fail_fd, long max_fd)
{
	if (s->new_session ? setsid() < 0 : setpgid(0, 0) < 0)
		child_fail(fail_fd, STAGE_SESSION);
	if (dup2(devnull, 0) < 0 || dup2(s->out_fd, 1) < 0 || dup2(s->out_fd, 2) < 0)
		child_fail(fail_fd, STAGE_DUP);
	mark_cloexec_from_3(max_fd);
	reset_signals();
	char *const argv[] = {"sh", "-c", (char *)s->command, NULL};
	execve("/bin/sh", argv, s->envp);
	child_fail(fail_fd, STAGE_EXEC);
}

static const char *stage_name(int stage)
{
	switch (stage) {
	case STAGE_SESSION:
		return "new session/process group";
	case STAGE_DUP:
		return "redirecting stdin/stdout/stderr";
	case STAGE_EXEC:
		return "exec /bin/sh";
	}
	return "child setup";
}

static long max_fd_guess(void)
{
	long n = sysconf(_SC_OPEN_MAX);
	if (n < 0 || n > 65536)
		n = 65536;
	return n;
}

/* Wait for the child to exec (the failure pipe closes) or to report why not. */
static int await_exec(int pid, int fail_rd, const char *command, ksr_err *err)
{
	struct child_fail f;
	ssize_t r;
	do
		r = read(fail_rd, &f, sizeof f);
	while (r < 0 && errno == EINTR);
	if (r <= 0)
		return 0; /* exec happened (or the read failed: treat as started) */
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	if (r != (ssize_t)sizeof f)
		return ksr_err_set(err, "starting `%s`: child setup failed", command);
	return ksr_err_set(err, "starting `%s`: %s: %s", command, stage_name(f.stage),
	                   strerror(f.err));
}

/* Fork and exec `sh -c command`. On success *pid is the child, already in its
 * own process group (and session when asked) and past exec. */
static int spawn(const struct spawn_spec *s, int *pid, ksr_err *err)
{
	int rc = -1, fail[2] = {-1, -1};
	int devnull = open_high("/dev/null", O_RDONLY, 0);
	if (devnull < 0)
		return ksr_err_errno(err, "open /dev/null");
	if (pipe2(fail, O_CLOEXEC) < 0) {
		ksr_err_errno(err, "pipe");
		goto cleanup;
	}
	long max_fd = max_fd_guess();
	struct spawn_spec spec = *s;
	spec.envp = child_environ(s->tag);
	sigset_t all, old;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	int child = fork();
	if (child == 0)
		child_exec(&spec, devnull, fail[1], max_fd);
	int fork_errno = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	free(spec.envp);
	close(fail[1]);
	fail[1] = -1;
	if (child < 0) {
		errno = fork_errno;
		ksr_err_errno(err, "fork");
		goto cleanup;
	}
	rc = await_exec(child, fail[0], s->command, err);
	if (rc == 0)
		*pid = child;
cleanup:
	close(devnull);
	if (fail[0] >= 0)
		close(fail[0]);
	if (fail[1] >= 0)
		close(fail[1]);
	return rc;
}

uint64_t ksr_proc_log_cap(void)
{
	const char *v = getenv("KASM_RUNTIME_APP_LOG_MAX_BYTES");
	char *end = NULL;
	unsigned long long n = v && *v ? strtoull(v, &end, 10) : 0;
	return n > 0 && end && !*end ? (uint64_t)n : KSR_PROC_LOG_CAP_DEFAULT;
}

/* A log's copier: the app writes into a pipe; a detached thread keeps the
 * first cap bytes in the file, says where it cut, and reads the rest to its
 * end (the app never blocks on a full pipe) without keeping it. Each read and
 * its write happen under the copier's lock, so ksr_proc_logs_drain can tell
 * when everything the app wrote is in the file (its readers run after the app
 * ended: a crash's last words must be there). */
#define LOG_CHUNK   65536
#define MAX_COPIERS 64
/* How long a reaped process's log may take to catch up. */
#define LOG_DRAIN_MS 500

typedef struct log_copier {
	int in, out;
	uint64_t cap, kept;
	bool cut;
	pthread_mutex_t lock;
} log_copier;

static pthread_mutex_t copiers_lock = PTHREAD_MUTEX_INITIALIZER;
static log_copier *copiers[MAX_COPIERS];

static void write_all_fd(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

/* One read and its write; false at the end of the output. */
static bool copy_some(log_copier *c, char *b)
{
	ssize_t n = read(c->in, b, LOG_CHUNK);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0)
		return false;
	uint64_t room = c->cap - c->kept;
	size_t keep = (uint64_t)n < room ? (size_t)n : (size_t)room;
	write_all_fd(c->out, b, keep);
	c->kept += keep;
	if ((size_t)n > keep && !c->cut) {
		char note[160];
		int len = snprintf(note, sizeof note,
		                   KSR_PROC_LOG_CUT_NOTE "%llu bytes; the rest is not kept]\n",
		                   (unsigned long long)c->cap);
		write_all_fd(c->out, note, (size_t)len);
		c->cut = true;
	}
	return true;
}

static void *copy_log(void *arg)
{
	log_copier *c = arg;
	char *b = ksr_xmalloc(LOG_CHUNK);
	for (bool more = true; more;) {
		struct pollfd p = {.fd = c->in, .events = POLLIN};
		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			break;
		pthread_mutex_lock(&c->lock);
		more = copy_some(c, b);
		pthread_mutex_unlock(&c->lock);
	}
	pthread_mutex_lock(&copiers_lock);
	for (size_t i = 0; i < MAX_COPIERS; i++)
		if (copiers[i] == c)
			copiers[i] = NULL;
	pthread_mutex_unlock(&copiers_lock);
	free(b);
	close(c->in);
	close(c->out);
	pthread_mutex_destroy(&c->lock);
	free(c);
	return NULL;
}

/* Has c copied all that is in its pipe? */
static bool copier_idle(log_copier *c)
{
	int pending = 0;
	pthread_mutex_lock(&c->lock);
	if (ioctl(c->in, FIONREAD, &pending) < 0)
		pending = 0;
	pthread_mutex_unlock(&c->lock);
	return pending == 0;
}

void ksr_proc_logs_drain(int ms)
{
	ksr_deadline d = ksr_deadline_in_ms(ms);
	for (;;) {
		bool idle = true;
		pthread_mutex_lock(&copiers_lock);
		for (size_t i = 0; i < MAX_COPIERS && idle; i++)
			if (copiers[i] && !copier_idle(copiers[i]))
				idle = false;
		pthread_mutex_unlock(&copiers_lock);
		if (idle || ksr_deadline_passed(d))
			return;
		poll(NULL, 0, 2); /* a copier is mid-chunk: bounded by d */
	}
}

/* A pipe whose read end a detached copier drains into log_fd (taken); the
 * write end for the child, or -1. */
static int capped_log(int log_fd)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	log_copier *c = ksr_xcalloc(1, sizeof *c);
	*c = (log_copier){.in = p[0], .out = log_fd, .cap = ksr_proc_log_cap()};
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_lock(&copiers_lock);
	for (size_t i = 0; i < MAX_COPIERS; i++)
		if (!copiers[i]) {
			copiers[i] = c;
			break;
		}
	pthread_mutex_unlock(&copiers_lock);
	pthread_attr_t a;
	pthread_t t;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	int rc = pthread_create(&t, &a, copy_log, c);
	pthread_attr_destroy(&a);
	if (rc != 0) {
		pthread_mutex_lock(&copiers_lock);
		for (size_t i = 0; i < MAX_COPIERS; i++)
			if (copiers[i] == c)
				copiers[i] = NULL;
		pthread_mutex_unlock(&copiers_lock);
		pthread_mutex_destroy(&c->lock);
		close(p[0]);
		close(p[1]);
		free(c);
		return -1;
	}
	return fd_high(p[1]);
}

int ksr_proc_launch(const char *command, const char *log_path, int *pid, ksr_err *err)
{
	return ksr_proc_launch_tagged(command, log_path, NULL, pid, err);
}

int ksr_proc_launch_tagged(const char *command, const char *log_path, const char *run_id, int *pid,
                           ksr_err *err)
{
	const char *path = log_path ? log_path : "/dev/null";
	/* Never through a link: the log is evidence in OUT, opened as every
	 * file there is (a link planted at the name is replaced, not followed). */
	int log_fd = strcmp(path, "/dev/null")
	                     ? fd_high(ksr_evidence_open_path(path, KSR_EVIDENCE_APPEND))
	                     : open_high(path, O_WRONLY, 0);
	if (log_fd < 0)
		return ksr_err_set(err, "launch `%s`: open log %s: %s", command, path,
		                   strerror(errno));
	int out_fd = log_fd;
	if (log_path && strcmp(log_path, "/dev/null")) {
		/* The output is capped (ksr_proc_log_cap): a pipe to a copier. */
		int dup_fd = fcntl(log_fd, F_DUPFD_CLOEXEC, 3);
		out_fd = dup_fd >= 0 ? capped_log(dup_fd) : -1;
		if (out_fd < 0) {
			if (dup_fd >= 0)
				close(dup_fd);
			close(log_fd);
			return ksr_err_set(err, "launch `%s`: cannot start the log's copier",
			                   command);
		}
	}
	char *tag = run_id ? ksr_xasprintf("%s=%s", KSR_PROC_RUN_TAG, run_id) : NULL;
	struct spawn_spec s = {
	        .command = command, .out_fd = out_fd, .new_session = true, .tag = tag};
	int rc = spawn(&s, pid, err);
	free(tag);
	if (out_fd != log_fd)
		close(out_fd);
	close(log_fd);
	return rc;
}

/* ---- /proc ---- */

/* Read a small /proc file whole (up to cap-1 bytes), NUL-terminated. -1 when it
 * cannot be read (the process may have gone: that is normal). */
static ssize_t read_small(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t len = 0;
	while (len < cap - 1) {
		ssize_t r = read(fd, buf + len, cap - 1 - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r < 0)
				len = 0;
			break;
		}
		len += (size_t)r;
	}
	close(fd);
	buf[len] = '\0';
	return (ssize_t)len;
}

/* State letter and process group from /proc/PID/stat. comm (field 2) may hold
 * spaces and parentheses, so parse after the last ')'. */
static int read_stat(int pid, char *state, int *pgrp)
{
	char path[64], buf[STAT_MAX];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	if (read_small(path, buf, sizeof buf) <= 0)
		return -1;
	char *p = strrchr(buf, ')');
	int ppid, grp;
	char st;
	if (!p || sscanf(p + 1, " %c %d %d", &st, &ppid, &grp) != 3)
		return -1;
	*state = st;
	if (pgrp)
		*pgrp = grp;
	return 0;
}

static bool state_dead(char st)
{
	return st == 'Z' || st == 'X' || st == 'x';
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static char *exe_name(int pid)
{
	char path[64], target[4096];
	snprintf(path, sizeof path, "/proc/%d/exe", pid);
	ssize_t n = readlink(path, target, sizeof target - 1);
	if (n <= 0)
		return NULL;
	target[n] = '\0';
	static const char deleted[] = " (deleted)";
	size_t dl = sizeof deleted - 1;
	if ((size_t)n > dl && strcmp(target + n - dl, deleted) == 0)
		target[n - dl] = '\0';
	const char *b = base_name(target);
	return *b ? ksr_xstrdup(b) : NULL;
}

/* argv[0]'s base name and argv joined with spaces, from /proc/PID/cmdline.
 * -1 for kernel threads and zombies (empty cmdline) or a vanished process. */
static int read_cmdline(int pid, char **argv0, char **cmdline)
{
	char path[64], buf[CMDLINE_MAX + 1];
	snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
	ssize_t n = read_small(path, buf, sizeof buf);
	while (n > 0 && (buf[n - 1] == '\0' || buf[n - 1] == ' '))
		n--;
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	size_t first_len = strlen(buf);
	char *first = ksr_xstrndup(buf, first_len);
	/* A process that rewrote its title (setproctitle) leaves one string with
	 * spaces: its first word is the program. */
	if ((ssize_t)first_len == n && strchr(first, ' '))
		*strchr(first, ' ') = '\0';
	*argv0 = ksr_xstrdup(base_name(first));
	free(first);
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	*cmdline = ksr_xstrdup(buf);
	return 0;
}

static bool pattern_ok(const ksr_pattern *re, const char *s)
{
	return !re || ksr_pattern_match(re, s);
}

/* Fill p for pid when it is a live user process matching both patterns. */
static bool proc_matches(int pid, const ksr_pattern *name_re, const ksr_pattern *cmdline_re,
                         ksr_proc *p)
{
	char st;
	if (read_stat(pid, &st, NULL) < 0 || state_dead(st))
		return false;
	char *argv0 = NULL, *cmdline = NULL;
	if (read_cmdline(pid, &argv0, &cmdline) < 0)
		return false;
	char *name = exe_name(pid);
	if (!name)
		name = ksr_xstrdup(argv0);
	bool match =
	        (pattern_ok(name_re, name) || (name_re && ksr_pattern_match(name_re, argv0))) &&
	        pattern_ok(cmdline_re, cmdline);
	if (!match) {
		free(name);
		free(argv0);
		free(cmdline);
		return false;
	}
	*p = (ksr_proc){.pid = pid, .name = name, .argv0 = argv0, .cmdline = cmdline};
	return true;
}

static int parse_pid(const char *s)
{
	long v = 0;
	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > 0x3fffffff)
			return -1;
		v = v * 10 + (*s - '0');
	}
	return (int)v;
}

int ksr_proc_find(const ksr_pattern *name_re, const ksr_pattern *cmdline_re, ksr_proc_list *out,
                  ksr_err *err)
{
	*out = (ksr_proc_list){0};
	DIR *dir = opendir("/proc");
	if (!dir)
		return ksr_err_errno(err, "open /proc");
	size_t cap = 0;
	int self = getpid();
	struct dirent *de;
	while ((de = readdir(dir))) {
		int pid = parse_pid(de->d_name);
		if (pid <= 0 || pid == self)
			continue;
		ksr_proc p;
		if (!proc_matches(pid, name_re, cmdline_re, &p))
			continue;
		if (out->len == cap) {
			cap = cap ? cap * 2 : 8;
			out->items = ksr_xrealloc(out->items, cap * sizeof *out->items);
		}
		out->items[out->len++] = p;
	}
	closedir(dir);
	return 0;
}

void ksr_proc_list_clear(ksr_proc_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->len; i++) {
		free(l->items[i].name);
		free(l->items[i].argv0);
		free(l->items[i].cmdline);
	}
	free(l->items);
	*l = (ksr_proc_list){0};
}

bool ksr_proc_alive(int pid)
{
	if (pid <= 0)
		return false;
	if (kill(pid, 0) < 0 && errno != EPERM)
		return false;
	char st;
	return read_stat(pid, &st, NULL) == 0 && !state_dead(st);
}

int ksr_proc_pidfd(int pid)
{
#ifdef SYS_pidfd_open
	if (pid <= 0)
		return -1;
	long fd = syscall(SYS_pidfd_open, pid, 0);
	return fd < 0 ? -1 : (int)fd; /* pidfds are always close-on-exec */
#else
	(void)pid;
	return -1;
#endif
}

int ksr_proc_reap(int pid, int *status)
{
	if (pid <= 0)
		return -1;
	int st = 0, r;
	do
		r = waitpid(pid, &st, WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -1;
	if (r == 0)
		return 0;
	if (status)
		*status = st;
	ksr_proc_logs_drain(LOG_DRAIN_MS); /* its last words are in its log */
	return 1;
}

/* ---- stopping a group ---- */

/* Does any non-zombie member of process group pgid remain? Zombies (orphans an
 * init that does not reap, our own unreaped child) still answer kill(-pgid, 0). */
static bool group_alive(int pgid)
{
	if (kill(-pgid, 0) < 0 && errno == ESRCH)
		return false;
	DIR *dir = opendir("/proc");
	if (!dir)
		return true;
	bool alive = false;
	struct dirent *de;
	while (!alive && (de = readdir(dir))) {
		int pid = parse_pid(de->d_name), grp;
		char st;
		if (pid > 0 && read_stat(pid, &st, &grp) == 0 && grp == pgid && !state_dead(st))
			alive = true;
	}
	closedir(dir);
	return alive;
}

bool ksr_proc_group_alive(int pgid)
{
	return pgid > 1 && group_alive(pgid);
}

static void reap_into(int pid, int *status)
{
	int st;
	if (ksr_proc_reap(pid, &st) == 1 && status)
		*status = st;
}

/* Wait until no live member of the group is left, reaping the leader when it
 * is our child (its wait status into *status, when given). Not cancellable on
 * purpose: this runs during cleanup after SIGTERM. The leader's pidfd wakes the
 * wait as it exits; the other members have no descriptor to wait on, so the
 * group is re-checked on a short back-off (2 ms doubling to 64 ms) as well. */
static bool wait_group_gone(int pgid, int64_t ms, int *status)
{
	ksr_deadline end = ksr_deadline_in_ms(ms);
	int64_t step = 2;
	int pidfd = ksr_proc_pidfd(pgid); /* -1: gone already, or no pidfds here */
	bool gone = false;
	for (;;) {
		reap_into(pgid, status);
		if (!group_alive(pgid)) {
			reap_into(pgid, status); /* it may have died since the first try */
			gone = true;
			break;
		}
		if (ksr_deadline_passed(end))
			break;
		struct pollfd p = {.fd = pidfd, .events = POLLIN};
		ksr_deadline tick = ksr_deadline_min(end, ksr_deadline_in_ms(step));
		ksr_wait w = ksr_wait_fds_uncancellable(&p, pidfd >= 0 ? 1 : 0, tick);
		if (w != KSR_WAIT_TIMEOUT && pidfd >= 0) {
			/* The leader exited; an unreaped zombie stays readable, so
			 * the rest of the group is waited for on the back-off alone. */
			close(pidfd);
			pidfd = -1;
		}
		if (step < 50)
			step *= 2;
	}
	if (pidfd >= 0)
		close(pidfd);
	return gone;
}

int ksr_proc_stop_group(int pgid, int grace_ms)
{
	if (pgid <= 1) /* kill(-1) would signal every process we may signal */
		return -1;
	int rc = -1;
	if (grace_ms > 0 && kill(-pgid, SIGTERM) == 0 && wait_group_gone(pgid, grace_ms, NULL))
		rc = 0;
	else if (kill(-pgid, SIGKILL), wait_group_gone(pgid, KILL_WAIT_MS, NULL))
		rc = 0;
	ksr_proc_logs_drain(LOG_DRAIN_MS); /* what the group said last is in its logs */
	return rc;
}

/* ---- bounded commands ---- */

struct capture {
	ksr_strbuf buf;
	size_t max;
	bool keep;
};

/* Read what is there without blocking, at most 1 MiB a call (a background
 * writer must not keep us here). Returns false at EOF or on error. */
static bool drain(int fd, struct capture *c)
{
	char chunk[16384];
	for (int i = 0; i < 64; i++) {
		ssize_t r = read(fd, chunk, sizeof chunk);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK;
		if (r == 0)
			return false;
		size_t room = c->keep && c->buf.len < c->max ? c->max - c->buf.len : 0;
		size_t take = (size_t)r < room ? (size_t)r : room;
		if (take)
			ksr_strbuf_addn(&c->buf, chunk, take);
	}
	return true;
}

static int exit_code_of(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return -1;
}

static int reap_blocking(int pid)
{
	int st = 0;
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR)
			return -1;
	}
	return exit_code_of(st);
}

/* Wait for the shell to exit while draining its output. Output written after
 * the shell exits by background children that kept the pipe is not awaited. */
static ksr_wait run_wait(int pid, int out_rd, ksr_deadline d, struct capture *cap, int *code)
{
	int pidfd = ksr_proc_pidfd(pid);
	bool open_pipe = true;
	ksr_wait w = KSR_WAIT_READY;
	for (;;) {
		int st;
		if (ksr_proc_reap(pid, &st) == 1) {
			if (open_pipe)
				drain(out_rd, cap);
			*code = exit_code_of(st);
			/* w may still hold the last tick's timeout (no pidfd: valgrind,
			 * a seccomp filter, an old kernel): the command did finish. */
			w = KSR_WAIT_READY;
			break;
		}
		struct pollfd fds[2];
		int n = 0;
		if (open_pipe)
			fds[n++] = (struct pollfd){.fd = out_rd, .events = POLLIN};
		if (pidfd >= 0)
			fds[n++] = (struct pollfd){.fd = pidfd, .events = POLLIN};
		/* Without a pidfd, re-check the child on a short tick. */
		ksr_deadline tick = pidfd < 0 ? ksr_deadline_in_ms(20) : KSR_DEADLINE_NEVER;
		w = ksr_wait_fds(fds, n, ksr_deadline_min(d, tick));
		if (w == KSR_WAIT_TIMEOUT && !ksr_deadline_passed(d))
			continue;
		if (w != KSR_WAIT_READY)
			break;
		if (open_pipe && fds[0].revents)
			open_pipe = drain(out_rd, cap);
	}
	if (pidfd >= 0)
		close(pidfd);
	return w;
}

static ksr_wait run_refuse(ksr_wait w, const char *command, ksr_err *err)
{
	ksr_err_set(err, "`%s` not run: %s", command, ksr_wait_name(w));
	return w;
}

ksr_wait ksr_proc_run(const char *command, ksr_deadline d, int *exit_code, char **output,
                      size_t out_max, ksr_err *err)
{
	struct capture cap = {.max = out_max, .keep = output != NULL};
	int pipefd[2], pid = -1, code = -1, unused;
	if (!exit_code)
		exit_code = &unused;
	*exit_code = -1;
	if (output)
		*output = NULL;
	if (ksr_cancelled())
		return run_refuse(KSR_WAIT_CANCELLED, command, err);
	if (ksr_deadline_passed(d))
		return run_refuse(KSR_WAIT_TIMEOUT, command, err);
	if (pipe2(pipefd, O_CLOEXEC | O_NONBLOCK) < 0) {
		ksr_err_errno(err, "pipe");
		return KSR_WAIT_ERROR;
	}
	pipefd[0] = fd_high(pipefd[0]);
	pipefd[1] = fd_high(pipefd[1]);
	int wflags = fcntl(pipefd[1], F_GETFL);
	fcntl(pipefd[1], F_SETFL, wflags & ~O_NONBLOCK); /* the child writes blocking */
	struct spawn_spec s = {.command = command, .out_fd = pipefd[1], .new_session = false};
	int rc = spawn(&s, &pid, err);
	close(pipefd[1]);
	if (rc < 0) {
		close(pipefd[0]);
		return KSR_WAIT_ERROR;
	}
	ksr_wait w = run_wait(pid, pipefd[0], d, &cap, &code);
	if (w != KSR_WAIT_READY) {
		int saved = errno;
		int st = -1; /* no wait status is -1 */
		kill(-pid, SIGKILL);
		wait_group_gone(pid, KILL_WAIT_MS, &st);
		code = st != -1 ? exit_code_of(st) : reap_blocking(pid);
		drain(pipefd[0], &cap);
		if (w == KSR_WAIT_ERROR)
			ksr_err_set(err, "`%s`: waiting: %s", command, strerror(saved));
		else
			ksr_err_set(err, "`%s`: %s, process group killed", command,
			            ksr_wait_name(w));
	}
	close(pipefd[0]);
	*exit_code = code;
	if (output)
		*output = ksr_strbuf_take(&cap.buf);
	else
		ksr_strbuf_free(&cap.buf);
	return w;
}

int ksr_proc_maps_any(int pid, const char *const *names)
{
	char path[64], line[4096];
	snprintf(path, sizeof path, "/proc/%d/maps", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	int found = 0;
	while (!found && fgets(line, sizeof line, f)) {
		const char *file = strrchr(line, '/');
		for (size_t i = 0; file && names[i] && !found; i++)
			found = strstr(file, names[i]) != NULL;
	}
	fclose(f);
	return found;
}
