/* The event record: key order, context, trace lines written through at once,
 * a full disk remembered while recording goes on. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "ksr/event.h"
#include "tap.h"

static const char *key_at(const cJSON *obj, int i)
{
	const cJSON *it = cJSON_GetArrayItem(obj, i);
	return it ? it->string : NULL;
}

static void test_order_and_context(void)
{
	ksr_events *ev = ksr_events_create();
	ok(ev != NULL, "create");
	is_int(ksr_events_elapsed_ms(ev), 0, "no events: elapsed 0");
	cJSON *f = cJSON_CreateObject();
	cJSON_AddNumberToObject(f, "pid", 42);
	cJSON_AddStringToObject(f, "run_id", "r1");
	const cJSON *e = ksr_events_emit(ev, "run.start", f);
	is_str(key_at(e, 0), "t_ms", "t_ms first");
	is_str(key_at(e, 1), "event", "event second");
	is_str(key_at(e, 2), "stage", "stage third");
	is_str(key_at(e, 3), "step", "step fourth");
	is_str(key_at(e, 4), "pid", "then the fields in order");
	is_str(key_at(e, 5), "run_id", "in order");
	ok(cJSON_IsNull(cJSON_GetObjectItem(e, "stage")), "no stage: null");
	is_int(cJSON_GetObjectItem(e, "step")->valueint, 0, "no step: 0");
	is_int(cJSON_GetObjectItem(e, "t_ms")->valueint, 0, "first event at t 0");

	ksr_events_set_stage(ev, "steps");
	ksr_events_set_step(ev, 3);
	e = ksr_events_emit_kv(ev, "launch", "command", "mousepad", "log", NULL, NULL);
	is_str(cJSON_GetObjectItem(e, "stage")->valuestring, "steps", "stage context");
	is_int(cJSON_GetObjectItem(e, "step")->valueint, 3, "step context");
	is_str(cJSON_GetObjectItem(e, "command")->valuestring, "mousepad", "kv string");
	ok(cJSON_IsNull(cJSON_GetObjectItem(e, "log")), "kv NULL value -> null");

	cJSON *g = cJSON_CreateObject();
	cJSON_AddNumberToObject(g, "step", 2);
	cJSON_AddStringToObject(g, "asked", "the OK button");
	e = ksr_events_emit(ev, "grounding", g);
	is_int(cJSON_GetObjectItem(e, "step")->valueint, 2,
	       "a field named step replaces the context");
	is_str(key_at(e, 3), "step", "in place");
	is_int(cJSON_GetArraySize(e), 5, "no duplicate key");

	ksr_events_set_stage(ev, NULL);
	e = ksr_events_emit(ev, "run.end", NULL);
	ok(cJSON_IsNull(cJSON_GetObjectItem(e, "stage")), "stage cleared");
	is_int(cJSON_GetArraySize(ksr_events_all(ev)), 4, "four recorded");
	double last = -1;
	bool mono = true;
	const cJSON *it;
	cJSON_ArrayForEach(it, ksr_events_all(ev))
	{
		double t = cJSON_GetObjectItem(it, "t_ms")->valuedouble;
		mono = mono && t >= last;
		last = t;
	}
	ok(mono, "t_ms never goes back");
	ksr_events_free(ev);
	ksr_events_free(NULL);
	ok(ksr_events_emit(NULL, "x", cJSON_CreateObject()) == NULL, "emit on NULL is safe");
}

/* Each event is readable from the pipe as soon as emit returns. */
static void test_trace_pipe(void)
{
	int p[2];
	if (pipe(p) != 0) {
		ok(0, "pipe: %s", strerror(errno));
		return;
	}
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	ksr_events *ev = ksr_events_create();
	ksr_events_attach_trace(ev, p[1]);
	char buf[4096];
	for (int i = 1; i <= 3; i++) {
		char v[16];
		snprintf(v, sizeof v, "%d", i);
		ksr_events_emit_kv(ev, "stage.start", "name", v, NULL);
		ssize_t n = read(p[0], buf, sizeof buf - 1);
		ok(n > 0, "line %d there at once", i);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		ok(buf[n - 1] == '\n' && strchr(buf, '\n') == buf + n - 1, "exactly one line");
		ok(strncmp(buf, "{\"t_ms\":", 8) == 0, "compact, t_ms first: %.40s", buf);
		cJSON *j = cJSON_Parse(buf);
		ok(j && !strcmp(cJSON_GetObjectItem(j, "name")->valuestring, v), "valid JSON");
		cJSON_Delete(j);
	}
	ksr_events_attach_trace(ev, -1);
	ksr_events_emit_kv(ev, "run.end", NULL);
	ok(read(p[0], buf, sizeof buf) < 0 && errno == EAGAIN, "detached: nothing written");
	is_int(ksr_events_trace_errno(ev), 0, "no trace error");
	close(p[0]);
	close(p[1]);
	ksr_events_free(ev);
}

static void test_full_disk(void)
{
	int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		skip_unless_installable("/dev/full: %s", strerror(errno));
		return;
	}
	ksr_events *ev = ksr_events_create();
	ksr_events_attach_trace(ev, fd);
	ksr_events_emit_kv(ev, "run.start", NULL);
	ksr_events_emit_kv(ev, "stage.start", "name", "boot wait", NULL);
	is_int(ksr_events_trace_errno(ev), ENOSPC, "full disk remembered");
	is_int(cJSON_GetArraySize(ksr_events_all(ev)), 2, "still recorded in memory");
	close(fd);
	ksr_events_free(ev);
}

/* A write cut short (file size limit) leaves whole lines only. */
static void test_partial_write(void)
{
	char path[] = "/tmp/ksr-test-events-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0) {
		ok(0, "mkstemp: %s", strerror(errno));
		return;
	}
	int afd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	struct rlimit old, lim = {.rlim_cur = 150, .rlim_max = RLIM_INFINITY};
	getrlimit(RLIMIT_FSIZE, &old);
	lim.rlim_max = old.rlim_max;
	signal(SIGXFSZ, SIG_IGN);
	setrlimit(RLIMIT_FSIZE, &lim);
	ksr_events *ev = ksr_events_create();
	ksr_events_attach_trace(ev, afd);
	for (int i = 0; i < 5; i++)
		ksr_events_emit_kv(ev, "log_tail", "path", "/tmp/x.log", "text", "0123456789",
		                   NULL);
	setrlimit(RLIMIT_FSIZE, &old);
	is_int(ksr_events_trace_errno(ev), EFBIG, "the size limit remembered");
	is_int(cJSON_GetArraySize(ksr_events_all(ev)), 5, "all recorded in memory");
	char buf[512] = {0};
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
	ok(n > 0 && buf[n - 1] == '\n', "the trace ends with a whole line (%zd bytes)", n);
	int lines = 0;
	for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n")) {
		cJSON *j = cJSON_Parse(l);
		lines += j != NULL;
		cJSON_Delete(j);
	}
	ok(lines >= 1, "every line parses (%d)", lines);
	ksr_events_free(ev);
	close(afd);
	close(fd);
	unlink(path);
}

int main(void)
{
	test_order_and_context();
	test_trace_pipe();
	test_full_disk();
	test_partial_write();
	return tap_done();
}
