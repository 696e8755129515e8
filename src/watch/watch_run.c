/* One run's evidence folder, read incrementally: new trace.jsonl lines become
 * READY and EVENT lines, DONE + report.json the terminal line; a runtime that
 * exited without DONE is terminal_died. */
#include "watch/watch_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ksr/json.h"
#include "ksr/verdict.h"

#define TRACE_CHUNK     65536
#define LOCK_RECHECK_MS 1000

static char *path_in(const ksr_watch_run *r, const char *name)
{
	return ksr_xasprintf("%s/%s", r->dir, name);
}

static bool file_exists(const ksr_watch_run *r, const char *name)
{
	char *p = path_in(r, name);
	struct stat st;
	bool ok = stat(p, &st) == 0 && S_ISREG(st.st_mode);
	free(p);
	return ok;
}

/* A whole small file (DONE, report.json), NUL-ended; NULL when unreadable. */
static char *slurp(const ksr_watch_run *r, const char *name, size_t max)
{
	char *p = path_in(r, name);
	FILE *f = fopen(p, "rb");
	free(p);
	if (!f)
		return NULL;
	char *buf = ksr_xmalloc(max + 1);
	size_t n = fread(buf, 1, max, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static void copy_str(cJSON *dst, const char *key, const cJSON *src, const char *skey)
{
	const char *s = ksr_json_str(src, skey, NULL);
	if (s)
		cJSON_AddStringToObject(dst, key, s);
}

static void copy_num(cJSON *dst, const char *key, const cJSON *src, const char *skey)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(src, skey);
	if (cJSON_IsNumber(v))
		cJSON_AddNumberToObject(dst, key, v->valuedouble);
}

static cJSON *event_line(const ksr_watch_run *r, const char *event)
{
	cJSON *l = ksr_watch_line("EVENT", event);
	cJSON_AddStringToObject(l, "run", r->run_id ? r->run_id : r->dir);
	return l;
}

static int pidfd_open_pid(int pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static void on_run_start(ksr_watch *w, ksr_watch_run *r, const cJSON *ev)
{
	free(r->run_id);
	free(r->scenario);
	const char *id = ksr_json_str(ev, "run_id", NULL);
	const char *name =
	        ksr_json_str(cJSON_GetObjectItemCaseSensitive(ev, "scenario"), "name", NULL);
	r->run_id = ksr_xstrdup(id ? id : r->dir);
	r->scenario = ksr_xstrdup(name ? name : "");
	const cJSON *pid = cJSON_GetObjectItemCaseSensitive(ev, "pid");
	r->pid = cJSON_IsNumber(pid) ? pid->valueint : 0;
	r->ready = true;
	cJSON *l = ksr_watch_line("READY", NULL);
	cJSON_AddStringToObject(l, "run", r->run_id);
	cJSON_AddStringToObject(l, "scenario", r->scenario);
	cJSON_AddNumberToObject(l, "pid", r->pid);
	cJSON_AddStringToObject(l, "out", r->dir);
	ksr_watch_emit(w, l);
	if (r->history || r->pid <= 0)
		return;
	/* A pidfd tells us the moment the runtime exits, DONE or not. */
	r->pidfd = pidfd_open_pid(r->pid);
	if (r->pidfd < 0)
		r->pid_gone = errno == ESRCH;
}

static void on_stage_end(ksr_watch *w, ksr_watch_run *r, const cJSON *ev)
{
	cJSON *l = event_line(r, "stage");
	copy_str(l, "name", ev, "name");
	copy_str(l, "status", ev, "status");
	copy_num(l, "duration_ms", ev, "duration_ms");
	copy_str(l, "reason", ev, "reason");
	ksr_watch_emit(w, l);
}

static void on_step_end(ksr_watch *w, ksr_watch_run *r, const cJSON *ev)
{
	cJSON *l = event_line(r, "step");
	copy_num(l, "index", ev, "index");
	copy_num(l, "line", ev, "line");
	copy_str(l, "kind", ev, "kind");
	copy_str(l, "status", ev, "status");
	copy_num(l, "duration_ms", ev, "duration_ms");
	copy_str(l, "reason", ev, "reason");
	ksr_watch_emit(w, l);
}

static void on_concern(ksr_watch *w, ksr_watch_run *r, const cJSON *ev)
{
	cJSON *l = event_line(r, "concern");
	copy_str(l, "code", ev, "code");
	copy_num(l, "line", ev, "line");
	copy_str(l, "message", ev, "message");
	ksr_watch_emit(w, l);
}

static void on_blocked(ksr_watch *w, ksr_watch_run *r, const cJSON *ev, bool resumed)
{
	cJSON *l = event_line(r, resumed ? "resumed" : "blocked");
	copy_str(l, "what", ev, "what");
	copy_num(l, "line", ev, "line");
	copy_str(l, "where", ev, "where");
	if (resumed) {
		copy_num(l, "blocked_ms", ev, "blocked_ms");
	} else {
		copy_str(l, "until", ev, "until");
		copy_str(l, "session_url", ev, "session_url");
	}
	ksr_watch_emit(w, l);
}

static void on_trace_event(ksr_watch *w, ksr_watch_run *r, const cJSON *ev)
{
	const char *name = ksr_json_str(ev, "event", NULL);
	if (!name)
		return;
	if (strcmp(name, "run.start") == 0) {
		on_run_start(w, r, ev);
		return;
	}
	/* A run that had finished before we looked: its terminal line says it all. */
	if (!r->ready || r->history || r->terminal)
		return;
	if (strcmp(name, "stage.end") == 0)
		on_stage_end(w, r, ev);
	else if (strcmp(name, "step.end") == 0)
		on_step_end(w, r, ev);
	else if (strcmp(name, "concern") == 0)
		on_concern(w, r, ev);
	else if (strcmp(name, "blocked") == 0 || strcmp(name, "resumed") == 0)
		on_blocked(w, r, ev, name[0] == 'r');
}

static void on_trace_line(ksr_watch *w, ksr_watch_run *r, const char *text)
{
	cJSON *ev = cJSON_Parse(text);
	if (cJSON_IsObject(ev))
		on_trace_event(w, r, ev);
	cJSON_Delete(ev);
}

/* Split what was read into lines; keep an incomplete last line for later. */
static void take_lines(ksr_watch *w, ksr_watch_run *r, const char *buf, size_t n)
{
	r->partial = ksr_xrealloc(r->partial, r->plen + n + 1);
	memcpy(r->partial + r->plen, buf, n);
	r->plen += n;
	r->partial[r->plen] = '\0';
	char *start = r->partial, *nl;
	while ((nl = memchr(start, '\n', r->plen - (size_t)(start - r->partial)))) {
		*nl = '\0';
		on_trace_line(w, r, start);
		start = nl + 1;
	}
	r->plen -= (size_t)(start - r->partial);
	memmove(r->partial, start, r->plen);
}

static void read_trace(ksr_watch *w, ksr_watch_run *r)
{
	char *p = path_in(r, "trace.jsonl");
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	free(p);
	if (fd < 0)
		return;
	struct stat st;
	if (fstat(fd, &st) == 0 && st.st_size < r->off) {
		/* trace.jsonl was started afresh: a new run in the same folder. */
		r->off = 0;
		r->plen = 0;
	}
	char *buf = ksr_xmalloc(TRACE_CHUNK);
	ssize_t n;
	while ((n = pread(fd, buf, TRACE_CHUNK, r->off)) > 0) {
		r->off += n;
		take_lines(w, r, buf, (size_t)n);
	}
	free(buf);
	close(fd);
}

/* A prompt nobody answered: declared (blocked, test-error) or not
 * (blocked-by-prompt, app-failed). Either stops the run; neither is a pass. */
static bool blocker_outcome(const char *outcome)
{
	return outcome &&
	       (strcmp(outcome, "blocked") == 0 || strcmp(outcome, "blocked-by-prompt") == 0);
}

static void count_report(ksr_watch_run *r, cJSON *l, const char *verdict)
{
	const cJSON *ec = cJSON_GetObjectItemCaseSensitive(r->report, "exit_code");
	int v = ksr_verdict_from_name(verdict);
	r->exit_code = cJSON_IsNumber(ec) ? ec->valueint
	               : v >= 0           ? ksr_verdict_exit_code((ksr_verdict)v)
	                                  : 2;
	cJSON_AddNumberToObject(l, "exit_code", r->exit_code);
}

static void finish(ksr_watch *w, ksr_watch_run *r, cJSON *l)
{
	r->terminal = true;
	r->blocked = false;
	r->terminal_line = cJSON_Duplicate(l, true);
	if (r->pidfd >= 0)
		close(r->pidfd);
	r->pidfd = -1;
	ksr_watch_emit(w, l);
}

/* DONE exists: the terminal line from report.json (DONE's word if unreadable). */
static void on_done(ksr_watch *w, ksr_watch_run *r)
{
	char *done = slurp(r, "DONE", 64);
	char *json = slurp(r, "report.json", 64 << 20);
	r->report = json ? cJSON_Parse(json) : NULL;
	free(json);
	if (done)
		done[strcspn(done, "\r\n")] = '\0';
	const char *verdict = ksr_json_str(r->report, "verdict", NULL);
	if (!verdict)
		verdict = done && ksr_verdict_from_name(done) >= 0 ? done : "test-error";
	char event[64];
	snprintf(event, sizeof event, "terminal_%s", verdict);
	for (char *c = event; *c; c++)
		*c = *c == '-' ? '_' : *c;
	cJSON *l = event_line(r, event);
	cJSON_AddStringToObject(l, "verdict", verdict);
	const char *outcome = ksr_json_str(r->report, "outcome", NULL),
	           *reason = ksr_json_str(r->report, "reason", NULL);
	cJSON_AddStringToObject(l, "outcome", outcome ? outcome : "unknown");
	if (blocker_outcome(outcome)) {
		cJSON_AddStringToObject(l, "blocker", outcome);
		r->ended_blocked = true;
	}
	count_report(r, l, verdict);
	cJSON_AddStringToObject(l, "reason",
	                        reason ? reason : "report.json is missing or not valid JSON");
	char *md = path_in(r, "report.md");
	cJSON_AddStringToObject(l, "report", md);
	free(md);
	char *html = path_in(r, "report.html");
	cJSON_AddStringToObject(l, "report_html", html);
	free(html);
	free(done);
	finish(w, r, l);
}

/* The runtime holds .lock for the whole run (flock, close-on-exec): a lock
 * that can be taken means no runtime is writing here, whatever PID namespace
 * the watcher is in or whichever process reuses the PID. */
static bool lock_free(const ksr_watch_run *r)
{
	char *p = path_in(r, ".lock");
	int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	free(p);
	if (fd < 0)
		return true;
	bool free_ = flock(fd, LOCK_SH | LOCK_NB) == 0;
	close(fd); /* releases it at once */
	return free_;
}

void ksr_watch_run_check_died(ksr_watch *w, ksr_watch_run *r)
{
	if (!r->ready || r->terminal || !r->pid_gone)
		return;
	ksr_watch_run_sync(w, r); /* DONE may have come just before the exit */
	if (r->terminal)
		return;
	if (!lock_free(r)) {
		r->lock_recheck = ksr_now_ms() + LOCK_RECHECK_MS;
		return;
	}
	r->lock_recheck = 0;
	r->exit_code = 2;
	cJSON *l = event_line(r, "terminal_died");
	cJSON_AddStringToObject(l, "verdict", "test-error");
	cJSON_AddStringToObject(l, "outcome", "died");
	cJSON_AddNumberToObject(l, "exit_code", 2);
	char *why = ksr_xasprintf("the runtime (pid %d) exited without writing DONE", r->pid);
	cJSON_AddStringToObject(l, "reason", why);
	free(why);
	finish(w, r, l);
}

void ksr_watch_run_sync(ksr_watch *w, ksr_watch_run *r)
{
	if (r->terminal || r->given_up)
		return;
	if (!r->seen) {
		r->seen = true;
		r->history = file_exists(r, "DONE");
	}
	read_trace(w, r);
	if (!r->ready)
		return;
	if (file_exists(r, "DONE")) {
		on_done(w, r);
		return;
	}
	r->blocked = file_exists(r, "BLOCKED");
}

void ksr_watch_run_free(ksr_watch_run *r)
{
	if (!r)
		return;
	if (r->pidfd >= 0)
		close(r->pidfd);
	free(r->dir);
	free(r->partial);
	free(r->run_id);
	free(r->scenario);
	cJSON_Delete(r->report);
	cJSON_Delete(r->terminal_line);
	free(r);
}
