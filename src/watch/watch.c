/* The watcher (ksr/watch.h): inotify on every run folder (and, for a folder
 * that does not exist yet, on its nearest existing ancestor; with recursive, on
 * the folder of runs), pidfds on the runtimes, and one wait for all of them.
 * Nothing is polled on a timer except the heartbeat, the no-run timeout and a
 * rare lock re-check: an idle watch sleeps in poll(2). */
#include "watch/watch_priv.h"

#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_TIMEOUT_MS 600000
#define RUN_MASK                                                                                   \
	(IN_CREATE | IN_MODIFY | IN_MOVED_TO | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF |         \
	 IN_ONLYDIR)
#define PARENT_MASK (IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

typedef struct root {
	char *dir; /* a folder of runs (recursive) */
	int wd;
	int64_t waiting_since;
	bool given_up;
} root;

struct ksr_watch {
	ksr_watch_opts o;
	int ifd;
	/* inotify and every runtime's pidfd, behind one descriptor: ksr_wait_fds
	 * takes few descriptors, and a watch may follow hundreds of runs. */
	int epfd;
	ksr_watch_run **runs;
	size_t n_runs;
	root *roots;
	size_t n_roots;
	cJSON *queue; /* lines not yet taken */
	int64_t last_line_ms;
	bool done_queued, interrupted;
	int errors; /* ERROR lines that count against the exit code */
};

cJSON *ksr_watch_line(const char *type, const char *event)
{
	cJSON *l = cJSON_CreateObject();
	cJSON_AddStringToObject(l, "type", type);
	if (event)
		cJSON_AddStringToObject(l, "event", event);
	return l;
}

void ksr_watch_emit(ksr_watch *w, cJSON *line)
{
	cJSON_AddItemToArray(w->queue, line);
	w->last_line_ms = ksr_now_ms();
}

static void emit_error(ksr_watch *w, const char *code, const char *path, const char *msg)
{
	cJSON *l = ksr_watch_line("ERROR", NULL);
	cJSON_AddStringToObject(l, "code", code);
	if (path)
		cJSON_AddStringToObject(l, "path", path);
	cJSON_AddStringToObject(l, "message", msg);
	ksr_watch_emit(w, l);
}

ksr_watch *ksr_watch_create(const ksr_watch_opts *opts, ksr_err *err)
{
	int ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (ifd < 0) {
		ksr_err_errno(err, "inotify_init1");
		return NULL;
	}
	int epfd = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
	if (epfd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, ifd, &ev) < 0) {
		ksr_err_errno(err, "epoll");
		if (epfd >= 0)
			close(epfd);
		close(ifd);
		return NULL;
	}
	ksr_watch *w = ksr_xcalloc(1, sizeof *w);
	w->epfd = epfd;
	w->o = *opts;
	if (w->o.timeout_ms <= 0)
		w->o.timeout_ms = DEFAULT_TIMEOUT_MS;
	w->ifd = ifd;
	w->queue = cJSON_CreateArray();
	w->last_line_ms = ksr_now_ms();
	return w;
}

void ksr_watch_free(ksr_watch *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->n_runs; i++)
		ksr_watch_run_free(w->runs[i]);
	free(w->runs);
	for (size_t i = 0; i < w->n_roots; i++)
		free(w->roots[i].dir);
	free(w->roots);
	cJSON_Delete(w->queue);
	close(w->epfd);
	close(w->ifd);
	free(w);
}

/* Watch dir itself, or else its nearest existing ancestor so that we hear of
 * it being created. Returns dir's own wd, or -1 while it is missing. */
static int arm(ksr_watch *w, const char *dir, uint32_t mask)
{
	int wd = inotify_add_watch(w->ifd, dir, mask);
	if (wd >= 0)
		return wd;
	char *copy = ksr_xstrdup(dir);
	for (;;) {
		char *parent = dirname(copy);
		if (inotify_add_watch(w->ifd, parent, PARENT_MASK) >= 0 ||
		    strcmp(parent, "/") == 0 || strcmp(parent, ".") == 0)
			break;
		memmove(copy, parent, strlen(parent) + 1);
	}
	free(copy);
	return -1;
}

static ksr_watch_run *find_run(const ksr_watch *w, const char *dir)
{
	for (size_t i = 0; i < w->n_runs; i++)
		if (strcmp(w->runs[i]->dir, dir) == 0)
			return w->runs[i];
	return NULL;
}

static void add_run(ksr_watch *w, const char *dir)
{
	if (find_run(w, dir))
		return;
	ksr_watch_run *r = ksr_xcalloc(1, sizeof *r);
	r->dir = ksr_xstrdup(dir);
	r->pidfd = -1;
	r->waiting_since = ksr_now_ms();
	r->wd = arm(w, dir, RUN_MASK);
	w->runs = ksr_xrealloc(w->runs, (w->n_runs + 1) * sizeof *w->runs);
	w->runs[w->n_runs++] = r;
	if (r->wd >= 0)
		ksr_watch_run_sync(w, r);
}

/* A folder of runs: every subfolder (not hidden) is a run's folder. */
static void scan_root(ksr_watch *w, root *rt)
{
	if (rt->wd < 0)
		rt->wd = arm(w, rt->dir, PARENT_MASK);
	DIR *d = rt->wd >= 0 ? opendir(rt->dir) : NULL;
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char *p = ksr_xasprintf("%s/%s", rt->dir, e->d_name);
		struct stat st;
		if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
			add_run(w, p);
		free(p);
	}
	closedir(d);
}

static char *normalise(const char *path)
{
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	return ksr_xstrndup(path, n);
}

int ksr_watch_add(ksr_watch *w, const char *path, ksr_err *err)
{
	if (!w || !path || !*path)
		return ksr_err_set(err, "an empty path cannot be watched");
	char *dir = normalise(path);
	if (w->o.recursive) {
		w->roots = ksr_xrealloc(w->roots, (w->n_roots + 1) * sizeof *w->roots);
		root *rt = &w->roots[w->n_roots++];
		*rt = (root){.dir = dir, .wd = -1, .waiting_since = ksr_now_ms()};
		scan_root(w, rt);
		return 0;
	}
	add_run(w, dir);
	free(dir);
	return 0;
}

/* A watched folder went away. A run that has not finished is reported and
 * waited for again, within the same bound as a folder that never got a run. */
static void on_deleted(ksr_watch *w, ksr_watch_run *r)
{
	r->wd = -1;
	if (r->terminal || r->given_up)
		return;
	char *msg = ksr_xasprintf("the evidence folder was deleted before its run finished; "
	                          "waiting up to %g s for it to come back",
	                          (double)w->o.timeout_ms / 1000.0);
	emit_error(w, "deleted", r->dir, msg);
	free(msg);
	if (r->pidfd >= 0)
		close(r->pidfd);
	*r = (ksr_watch_run){.dir = r->dir,
	                     .wd = arm(w, r->dir, RUN_MASK),
	                     .pidfd = -1,
	                     .waiting_since = ksr_now_ms(),
	                     .partial = r->partial,
	                     .run_id = r->run_id,
	                     .scenario = r->scenario};
	r->plen = 0;
}

static bool under_root(const ksr_watch_run *r, const root *rt)
{
	size_t n = strlen(rt->dir);
	return strncmp(r->dir, rt->dir, n) == 0 && r->dir[n] == '/';
}

static bool root_has_run(const ksr_watch *w, const root *rt)
{
	for (size_t i = 0; i < w->n_runs; i++)
		if (under_root(w->runs[i], rt))
			return true;
	return false;
}

static bool is_run_wd(const ksr_watch *w, int wd)
{
	for (size_t i = 0; i < w->n_runs; i++)
		if (w->runs[i]->wd == wd)
			return true;
	return false;
}

static void on_inotify_event(ksr_watch *w, const struct inotify_event *e, bool *other)
{
	bool gone = e->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED);
	bool mine = false;
	for (size_t i = 0; i < w->n_runs; i++) {
		ksr_watch_run *r = w->runs[i];
		if (r->wd != e->wd)
			continue;
		mine = true;
		if (gone)
			on_deleted(w, r);
		else
			ksr_watch_run_sync(w, r);
	}
	for (size_t i = 0; i < w->n_roots; i++)
		if (gone && w->roots[i].wd == e->wd)
			w->roots[i].wd = -1;
	if (!mine || gone)
		*other = true; /* an ancestor or a folder of runs: something appeared */
}

/* Read every queued inotify event; then retry the folders still missing. */
static int drain_inotify(ksr_watch *w)
{
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool other = false;
	for (;;) {
		ssize_t n = read(w->ifd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0)
			return -1;
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *e = (const struct inotify_event *)p;
			if (e->mask & IN_Q_OVERFLOW)
				other = true;
			on_inotify_event(w, e, &other);
			p += sizeof *e + e->len;
		}
	}
	if (!other)
		return 0;
	for (size_t i = 0; i < w->n_roots; i++)
		if (!w->roots[i].given_up && !is_run_wd(w, w->roots[i].wd))
			scan_root(w, &w->roots[i]);
	for (size_t i = 0; i < w->n_runs; i++) {
		ksr_watch_run *r = w->runs[i];
		if (r->wd < 0 && !r->terminal && !r->given_up) {
			r->wd = arm(w, r->dir, RUN_MASK);
			if (r->wd >= 0)
				ksr_watch_run_sync(w, r);
		}
	}
	return 0;
}

static bool run_open(const ksr_watch_run *r)
{
	return !r->terminal && !r->given_up;
}

static size_t n_blocked(const ksr_watch *w)
{
	size_t n = 0;
	for (size_t i = 0; i < w->n_runs; i++)
		n += run_open(w->runs[i]) && w->runs[i]->blocked;
	return n;
}

static void heartbeat(ksr_watch *w)
{
	size_t n = n_blocked(w);
	if (!n || w->o.heartbeat_ms <= 0 || ksr_now_ms() - w->last_line_ms < w->o.heartbeat_ms)
		return;
	cJSON *l = ksr_watch_line("WAITING", NULL);
	cJSON_AddNumberToObject(l, "blocked", (double)n);
	char runs[1024] = "";
	for (size_t i = 0; i < w->n_runs; i++) {
		const ksr_watch_run *r = w->runs[i];
		if (run_open(r) && r->blocked && r->run_id)
			snprintf(runs + strlen(runs), sizeof runs - strlen(runs), "%s%s",
			         runs[0] ? "," : "", r->run_id);
	}
	cJSON_AddStringToObject(l, "runs", runs);
	ksr_watch_emit(w, l);
}

static void give_up(ksr_watch *w, const char *dir, bool *given_up)
{
	*given_up = true;
	w->errors++;
	char *msg = ksr_xasprintf("no run started in %s within %g s", dir,
	                          (double)w->o.timeout_ms / 1000.0);
	emit_error(w, "no-run", dir, msg);
	free(msg);
}

static void timeouts(ksr_watch *w)
{
	int64_t now = ksr_now_ms();
	for (size_t i = 0; i < w->n_runs; i++) {
		ksr_watch_run *r = w->runs[i];
		if (run_open(r) && !r->ready && now - r->waiting_since >= w->o.timeout_ms)
			give_up(w, r->dir, &r->given_up);
		if (run_open(r) && r->pid_gone && (!r->lock_recheck || now >= r->lock_recheck))
			ksr_watch_run_check_died(w, r);
	}
	for (size_t i = 0; i < w->n_roots; i++) {
		root *rt = &w->roots[i];
		if (!rt->given_up && !root_has_run(w, rt) &&
		    now - rt->waiting_since >= w->o.timeout_ms)
			give_up(w, rt->dir, &rt->given_up);
	}
}

/* The earliest timer: heartbeat, a no-run timeout, a lock re-check. */
static ksr_deadline next_timer(const ksr_watch *w, ksr_deadline d)
{
	if (n_blocked(w) && w->o.heartbeat_ms > 0)
		d = ksr_deadline_min(d, (ksr_deadline){w->last_line_ms + w->o.heartbeat_ms});
	for (size_t i = 0; i < w->n_runs; i++) {
		const ksr_watch_run *r = w->runs[i];
		if (run_open(r) && !r->ready)
			d = ksr_deadline_min(d, (ksr_deadline){r->waiting_since + w->o.timeout_ms});
		if (run_open(r) && r->lock_recheck)
			d = ksr_deadline_min(d, (ksr_deadline){r->lock_recheck});
	}
	for (size_t i = 0; i < w->n_roots; i++)
		if (!w->roots[i].given_up)
			d = ksr_deadline_min(
			        d, (ksr_deadline){w->roots[i].waiting_since + w->o.timeout_ms});
	return d;
}

static bool all_settled(const ksr_watch *w)
{
	if (!w->n_runs && !w->n_roots)
		return false;
	for (size_t i = 0; i < w->n_runs; i++)
		if (run_open(w->runs[i]))
			return false;
	for (size_t i = 0; i < w->n_roots; i++)
		if (!root_has_run(w, &w->roots[i]) && !w->roots[i].given_up)
			return false;
	return true;
}

static void count(const ksr_watch_run *r, int tally[6])
{
	const char *ev =
	        r->terminal_line
	                ? cJSON_GetObjectItemCaseSensitive(r->terminal_line, "event")->valuestring
	                : "";
	static const char *const kinds[] = {"terminal_pass", "terminal_pass_with_concerns",
	                                    "terminal_app_failed", "terminal_test_error",
	                                    "terminal_died"};
	for (int k = 0; k < 5; k++)
		if (strcmp(ev, kinds[k]) == 0) {
			tally[k]++;
			return;
		}
	tally[5]++; /* given up, or a verdict word we do not know */
}

static void queue_done(ksr_watch *w)
{
	int tally[6] = {0};
	for (size_t i = 0; i < w->n_runs; i++)
		if (!w->runs[i]->given_up)
			count(w->runs[i], tally);
	cJSON *l = ksr_watch_line("DONE", NULL);
	size_t finished = 0;
	for (size_t i = 0; i < w->n_runs; i++)
		finished += w->runs[i]->terminal;
	cJSON_AddNumberToObject(l, "runs", (double)finished);
	static const char *const keys[] = {"pass", "pass_with_concerns", "app_failed", "test_error",
	                                   "died"};
	for (int k = 0; k < 5; k++)
		cJSON_AddNumberToObject(l, keys[k], tally[k]);
	cJSON_AddNumberToObject(l, "errors", w->errors + tally[5]);
	size_t blocked = 0;
	for (size_t i = 0; i < w->n_runs; i++)
		blocked += w->runs[i]->ended_blocked;
	cJSON_AddNumberToObject(l, "blocked", (double)blocked);
	cJSON_AddNumberToObject(l, "exit_code", ksr_watch_exit_code(w));
	ksr_watch_emit(w, l);
	w->done_queued = true;
}

static void after_wake(ksr_watch *w)
{
	timeouts(w);
	heartbeat(w);
	if (!w->done_queued && all_settled(w))
		queue_done(w);
}

/* New pidfds join the epoll set; a closed one leaves it by itself. */
static void poll_pidfds(ksr_watch *w)
{
	for (size_t i = 0; i < w->n_runs; i++) {
		ksr_watch_run *r = w->runs[i];
		if (r->pidfd < 0 || r->pidfd_polled)
			continue;
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = r};
		r->pidfd_polled = epoll_ctl(w->epfd, EPOLL_CTL_ADD, r->pidfd, &ev) == 0;
	}
}

/* Which runtimes exited: their pidfds are readable. */
static void on_exits(ksr_watch *w)
{
	struct epoll_event evs[64];
	int n;
	while ((n = epoll_wait(w->epfd, evs, 64, 0)) > 0) {
		bool any = false;
		for (int i = 0; i < n; i++) {
			ksr_watch_run *r = evs[i].data.ptr;
			if (!r || r->pidfd < 0)
				continue;
			r->pid_gone = true;
			epoll_ctl(w->epfd, EPOLL_CTL_DEL, r->pidfd, NULL);
			r->pidfd_polled = false;
			ksr_watch_run_check_died(w, r);
			any = true;
		}
		if (!any)
			break; /* only inotify: drained by the caller already */
	}
}

ksr_wait ksr_watch_step(ksr_watch *w, ksr_deadline d)
{
	if (w->done_queued)
		return KSR_WAIT_READY;
	after_wake(w); /* runs already finished when added */
	/* Lines queued since the last call (by ksr_watch_add) go out first. */
	if (w->done_queued || cJSON_GetArraySize(w->queue) > 0)
		return KSR_WAIT_READY;
	poll_pidfds(w);
	struct pollfd pfd = {.fd = w->epfd, .events = POLLIN};
	ksr_wait r = ksr_wait_fds(&pfd, 1, next_timer(w, d));
	if (r == KSR_WAIT_CANCELLED) {
		w->interrupted = true;
		emit_error(w, "interrupted", NULL, "the watch was interrupted; the runs go on");
		return r;
	}
	if (r == KSR_WAIT_ERROR) {
		w->interrupted = true;
		emit_error(w, "poll", NULL, "waiting for changes failed");
		return r;
	}
	if (drain_inotify(w) < 0) {
		w->interrupted = true;
		emit_error(w, "inotify", NULL, "reading inotify events failed");
		return KSR_WAIT_ERROR;
	}
	/* Inotify first: a runtime that wrote DONE and exited is not "died". */
	on_exits(w);
	after_wake(w);
	return r;
}

cJSON *ksr_watch_next(ksr_watch *w)
{
	return w ? cJSON_DetachItemFromArray(w->queue, 0) : NULL;
}

bool ksr_watch_finished(const ksr_watch *w)
{
	return w && w->done_queued;
}

int ksr_watch_exit_code(const ksr_watch *w)
{
	int worst = w->errors || w->interrupted ? 2 : 0;
	for (size_t i = 0; i < w->n_runs; i++) {
		const ksr_watch_run *r = w->runs[i];
		int c = r->given_up ? 2 : r->terminal ? r->exit_code : 0;
		worst = c > worst ? c : worst;
	}
	return worst;
}

size_t ksr_watch_n_runs(const ksr_watch *w)
{
	return w ? w->n_runs : 0;
}

const cJSON *ksr_watch_run_report(const ksr_watch *w, size_t i)
{
	return i < w->n_runs ? w->runs[i]->report : NULL;
}

const char *ksr_watch_run_dir(const ksr_watch *w, size_t i)
{
	return i < w->n_runs ? w->runs[i]->dir : NULL;
}

const cJSON *ksr_watch_run_terminal(const ksr_watch *w, size_t i)
{
	return i < w->n_runs ? w->runs[i]->terminal_line : NULL;
}
