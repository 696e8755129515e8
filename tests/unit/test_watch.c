/* The watcher over evidence folders written by the test itself: already
 * finished runs, a live run line by line (a partial trace line, a blocker with
 * heartbeats, resumed, DONE), a runtime that dies, a folder that never gets a
 * run, a folder created later, a folder of runs; and the line format. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ksr/watch.h"
#include "tap.h"

static char root[] = "/tmp/ksr-test-watch-XXXXXX";

static void append(const char *dir, const char *name, const char *text)
{
	char p[512];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	int fd = open(p, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		abort();
	close(fd);
}

static void put_file(const char *dir, const char *name, const char *text)
{
	char p[512], tmp[520];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	snprintf(tmp, sizeof tmp, "%s/.%s.tmp", dir, name);
	unlink(tmp);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		abort();
	close(fd);
	rename(tmp, p); /* as the runtime does: DONE appears whole */
}

static char *sub(const char *name)
{
	char *p = malloc(512);
	snprintf(p, 512, "%s/%s", root, name);
	return p;
}

static void run_start(const char *dir, const char *id, int pid)
{
	char line[512];
	snprintf(line, sizeof line,
	         "{\"t_ms\":0,\"event\":\"run.start\",\"stage\":null,\"step\":0,\"pid\":%d,"
	         "\"run_id\":\"%s\",\"scenario\":{\"name\":\"demo app\"}}\n",
	         pid, id);
	append(dir, "trace.jsonl", line);
}

static void finish(const char *dir, const char *verdict, int code, const char *outcome)
{
	char rep[512];
	snprintf(rep, sizeof rep,
	         "{\"verdict\":\"%s\",\"exit_code\":%d,\"outcome\":\"%s\","
	         "\"reason\":\"it said \\\"no\\\" = bad\",\"steps\":[]}",
	         verdict, code, outcome);
	put_file(dir, "report.json", rep);
	char done[64];
	snprintf(done, sizeof done, "%s\n", verdict);
	put_file(dir, "DONE", done);
}

/* Collected text lines of one watch session. */
static char seen[16384];

static void take(ksr_watch *w)
{
	cJSON *l;
	while ((l = ksr_watch_next(w))) {
		char *t = ksr_watch_format(l, false);
		strncat(seen, t, sizeof seen - strlen(seen) - 2);
		strcat(seen, "\n");
		free(t);
		cJSON_Delete(l);
	}
}

/* Step until needle shows up in the lines (or 3 s pass). */
static bool until_seen(ksr_watch *w, const char *needle)
{
	ksr_deadline end = ksr_deadline_in_ms(3000);
	while (!strstr(seen, needle) && !ksr_deadline_passed(end)) {
		ksr_watch_step(w, ksr_deadline_min(end, ksr_deadline_in_ms(200)));
		take(w);
	}
	return strstr(seen, needle) != NULL;
}

static size_t count(const char *needle)
{
	size_t n = 0;
	for (const char *p = seen; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static ksr_watch *start(bool recursive, int64_t timeout_ms, int64_t heartbeat_ms)
{
	seen[0] = '\0';
	ksr_watch_opts o = {
	        .recursive = recursive, .timeout_ms = timeout_ms, .heartbeat_ms = heartbeat_ms};
	ksr_err err = {0};
	ksr_watch *w = ksr_watch_create(&o, &err);
	ok(w != NULL, "watch created (%s)", err.msg);
	return w;
}

static void test_format(void)
{
	cJSON *l = cJSON_CreateObject();
	cJSON_AddStringToObject(l, "type", "EVENT");
	cJSON_AddStringToObject(l, "event", "step");
	cJSON_AddStringToObject(l, "run", "abc-1");
	cJSON_AddNumberToObject(l, "index", 3);
	cJSON_AddStringToObject(l, "reason", "a \"b\" = c\nd");
	cJSON_AddStringToObject(l, "empty", "");
	cJSON_AddNullToObject(l, "gone");
	char *t = ksr_watch_format(l, false);
	is_str(t, "EVENT step run=abc-1 index=3 reason=\"a \\\"b\\\" = c\\nd\" empty=\"\"",
	       "text: bare tokens, quoted values with escapes, null left out");
	free(t);
	t = ksr_watch_format(l, true);
	cJSON *back = cJSON_Parse(t);
	ok(back && strcmp(cJSON_GetObjectItem(back, "reason")->valuestring, "a \"b\" = c\nd") == 0,
	   "json: one object that round-trips");
	cJSON_Delete(back);
	free(t);
	cJSON_Delete(l);
}

static void test_already_finished(void)
{
	char *dir = sub("finished");
	mkdir(dir, 0755);
	run_start(dir, "run-f", 1);
	append(dir, "trace.jsonl",
	       "{\"event\":\"stage.end\",\"name\":\"launch\",\"status\":\"ok\"}\n");
	finish(dir, "app-failed", 1, "crashed");
	ksr_watch *w = start(false, 5000, 0);
	ksr_watch_add(w, dir, NULL);
	ok(until_seen(w, "DONE "), "DONE at once for a finished run");
	ok(strstr(seen, "READY run=run-f scenario=\"demo app\"") != NULL, "READY names the run");
	ok(strstr(seen, "EVENT terminal_app_failed run=run-f verdict=app-failed outcome=crashed "
	                "exit_code=1 reason=\"it said \\\"no\\\" = bad\"") != NULL,
	   "terminal line from report.json:\n%s", seen);
	is_int((long long)count("EVENT stage"), 0, "no history replayed for a finished run");
	is_int(ksr_watch_exit_code(w), 1, "exit code is the run's");
	ok(ksr_watch_finished(w), "finished");
	ksr_watch_free(w);
	free(dir);
}

static void test_live_run(void)
{
	char *dir = sub("live");
	mkdir(dir, 0755);
	ksr_watch *w = start(false, 5000, 150);
	ksr_watch_add(w, dir, NULL);
	ksr_watch_step(w, ksr_deadline_in_ms(50));
	take(w);
	is_str(seen, "", "nothing printed while nothing happened");
	run_start(dir, "run-l", getpid());
	ok(until_seen(w, "READY run=run-l"), "READY when run.start is written");
	append(dir, "trace.jsonl", "{\"event\":\"step.end\",\"index\":1,\"kind\":\"key\",");
	ksr_watch_step(w, ksr_deadline_in_ms(100));
	take(w);
	is_int((long long)count("EVENT step"), 0, "half a trace line is not an event yet");
	append(dir, "trace.jsonl", "\"status\":\"ok\"}\n");
	ok(until_seen(w, "EVENT step run=run-l index=1 kind=key status=ok"), "the whole line is");
	put_file(dir, "BLOCKED", "{}\n");
	append(dir, "trace.jsonl",
	       "{\"event\":\"blocked\",\"what\":\"window ^Sign in$\",\"where\":\"first-look\"}\n");
	ok(until_seen(w, "EVENT blocked run=run-l what=\"window ^Sign in$\" where=first-look"),
	   "blocked");
	ok(until_seen(w, "WAITING blocked=1 runs=run-l"), "heartbeat while blocked");
	ok(until_seen(w, "WAITING blocked=1 runs=run-l\nWAITING"), "and again");
	char blocked[600];
	snprintf(blocked, sizeof blocked, "%s/BLOCKED", dir);
	unlink(blocked);
	append(dir, "trace.jsonl", "{\"event\":\"resumed\",\"what\":\"w\",\"blocked_ms\":5}\n");
	ok(until_seen(w, "EVENT resumed run=run-l what=w blocked_ms=5"), "resumed");
	size_t waiting = count("WAITING");
	ksr_watch_step(w, ksr_deadline_in_ms(400));
	take(w);
	is_int((long long)count("WAITING"), (long long)waiting, "no heartbeat once resumed");
	finish(dir, "pass", 0, "completed");
	ok(until_seen(w, "DONE runs=1 pass=1"), "terminal and DONE:\n%s", seen);
	ok(strstr(seen, "EVENT terminal_pass run=run-l") != NULL, "terminal_pass");
	is_int(ksr_watch_exit_code(w), 0, "exit 0");
	ok(ksr_watch_run_report(w, 0) != NULL, "report kept for JUnit");
	ksr_watch_free(w);
	free(dir);
}

static void test_died(void)
{
	char *dir = sub("died");
	mkdir(dir, 0755);
	pid_t child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	run_start(dir, "run-d", child);
	ksr_watch *w = start(false, 5000, 0);
	ksr_watch_add(w, dir, NULL);
	ok(until_seen(w, "READY run=run-d"), "READY");
	ksr_watch_step(w, ksr_deadline_in_ms(100));
	take(w);
	is_int((long long)count("terminal"), 0, "a live runtime is not reported dead");
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	ok(until_seen(w, "EVENT terminal_died run=run-d"), "terminal_died:\n%s", seen);
	ok(until_seen(w,
	              "DONE runs=1 pass=0 pass_with_concerns=0 app_failed=0 test_error=0 died=1"),
	   "DONE counts it");
	is_int(ksr_watch_exit_code(w), 2, "a died runtime is exit 2");
	ksr_watch_free(w);
	free(dir);
}

static void test_no_run_and_created_later(void)
{
	char *never = sub("never/here"), *later = sub("later");
	ksr_watch *w = start(false, 400, 0);
	ksr_watch_add(w, never, NULL);
	ksr_watch_add(w, later, NULL);
	ksr_watch_step(w, ksr_deadline_in_ms(50));
	mkdir(later, 0755);
	run_start(later, "run-late", 1);
	finish(later, "pass", 0, "completed");
	ok(until_seen(w, "EVENT terminal_pass run=run-late"), "a folder created later is followed");
	ok(until_seen(w, "ERROR no-run path="), "ERROR for a folder that never got a run");
	ok(until_seen(w, "DONE "), "then DONE:\n%s", seen);
	is_int(ksr_watch_exit_code(w), 2, "a folder without a run is exit 2");
	ksr_watch_free(w);
	free(never);
	free(later);
}

static void test_recursive(void)
{
	char *runs = sub("runs"), *a = sub("runs/a"), *b = sub("runs/b"), *c = sub("runs/c");
	mkdir(runs, 0755);
	mkdir(a, 0755);
	mkdir(b, 0755);
	run_start(a, "run-a", 1);
	finish(a, "pass", 0, "completed");
	run_start(b, "run-b", getpid());
	ksr_watch *w = start(true, 5000, 0);
	ksr_watch_add(w, runs, NULL);
	is_int(ksr_watch_step(w, ksr_deadline_in_ms(1500)), KSR_WAIT_READY,
	       "lines queued by add come out without waiting for a change");
	take(w);
	ok(strstr(seen, "READY run=run-b") != NULL, "READY of the live run among them");
	ok(until_seen(w, "EVENT terminal_pass run=run-a"), "existing finished run");
	ok(until_seen(w, "READY run=run-b"), "existing live run");
	mkdir(c, 0755);
	run_start(c, "run-c", getpid());
	ok(until_seen(w, "READY run=run-c"), "a run folder created later is picked up");
	finish(b, "pass-with-concerns", 0, "completed");
	ksr_watch_step(w, ksr_deadline_in_ms(100));
	take(w);
	is_int((long long)count("DONE "), 0, "not DONE while run-c goes on");
	finish(c, "test-error", 2, "blocked");
	ok(until_seen(w, "DONE runs=3 pass=1 pass_with_concerns=1 app_failed=0 test_error=1"),
	   "DONE with the tally:\n%s", seen);
	is_int(ksr_watch_exit_code(w), 2, "worst exit code");
	is_int((long long)ksr_watch_n_runs(w), 3, "three runs for JUnit");
	ksr_watch_free(w);
	free(runs);
	free(a);
	free(b);
	free(c);
}

/* The soak's case in small: a recursive watch started over one finished run
 * and four empty folders (runs about to start) stays open while any folder
 * has no finished run, though every run it has READ has finished. */
static void test_recursive_empty_folders(void)
{
	char *runs = sub("later"), *done = sub("later/done");
	mkdir(runs, 0755);
	mkdir(done, 0755);
	run_start(done, "early", 1);
	finish(done, "pass", 0, "completed");
	char dirs[4][600];
	for (int i = 0; i < 4; i++) {
		snprintf(dirs[i], sizeof dirs[i], "%s/r%d", runs, i);
		mkdir(dirs[i], 0755);
	}
	ksr_watch *w = start(true, 5000, 0);
	ksr_watch_add(w, runs, NULL);
	ok(until_seen(w, "EVENT terminal_pass run=early"), "the run finished before the watch");
	for (int i = 0; i < 4; i++) {
		ksr_watch_step(w, ksr_deadline_in_ms(100));
		take(w);
		ok(count("DONE ") == 0, "no DONE while %d folder(s) have no run", 4 - i);
		char id[16], needle[64];
		snprintf(id, sizeof id, "late%d", i);
		run_start(dirs[i], id, getpid());
		finish(dirs[i], "pass", 0, "completed");
		snprintf(needle, sizeof needle, "EVENT terminal_pass run=%s", id);
		ok(until_seen(w, needle), "%s followed to its end", id);
	}
	ok(until_seen(w, "DONE runs=5 pass=5"), "DONE once all five finished:\n%s", seen);
	is_int((long long)count("EVENT terminal_"), 5, "one terminal line a run");
	ksr_watch_free(w);
	free(runs);
	free(done);
}

/* More live runtimes than one poll(2) set in ksr_wait_fds takes (32). */
static void test_many_runs(void)
{
	char *runs = sub("many");
	mkdir(runs, 0755);
	char dirs[40][600];
	for (int i = 0; i < 40; i++) {
		snprintf(dirs[i], sizeof dirs[i], "%s/r%02d", runs, i);
		mkdir(dirs[i], 0755);
		char id[16];
		snprintf(id, sizeof id, "m%02d", i);
		run_start(dirs[i], id, getpid());
	}
	ksr_watch *w = start(true, 5000, 0);
	ksr_watch_add(w, runs, NULL);
	ok(until_seen(w, "READY run=m39") && count("READY") == 40, "40 READY lines");
	ksr_watch_step(w, ksr_deadline_in_ms(100));
	take(w);
	ok(strstr(seen, "ERROR") == NULL, "no error with 40 live runs:\n%s", seen);
	for (int i = 0; i < 40; i++)
		finish(dirs[i], "pass", 0, "completed");
	ok(until_seen(w, "DONE runs=40 pass=40"), "all 40 terminal, then DONE");
	ksr_watch_free(w);
	free(runs);
}

int main(void)
{
	if (!mkdtemp(root))
		return 1;
	test_format();
	test_already_finished();
	test_live_run();
	test_died();
	test_no_run_and_created_later();
	test_recursive();
	test_recursive_empty_folders();
	test_many_runs();
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	if (system(cmd) != 0)
		ok(0, "cleanup");
	return tap_done();
}
