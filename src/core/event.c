/* The one event record: every fact of a run is an event, kept in memory in order
 * and, when a trace descriptor is attached, written through as one JSON line with
 * one write(2) so that a watcher sees it the moment it happens. */
#include "ksr/event.h"
#include "ksr/json.h"
#include "ksr/redact.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ksr/deadline.h"
#include "ksr/error.h"

struct ksr_events {
	cJSON *all;
	int trace_fd;
	int trace_errno;
	bool started;
	int64_t t0_ms;
	char *stage;
	int step;
};

ksr_events *ksr_events_create(void)
{
	ksr_events *ev = ksr_xcalloc(1, sizeof *ev);
	ev->all = cJSON_CreateArray();
	if (!ev->all) {
		free(ev);
		return NULL;
	}
	ev->trace_fd = -1;
	ksr_redact_from_env();
	return ev;
}

void ksr_events_free(ksr_events *ev)
{
	if (!ev)
		return;
	cJSON_Delete(ev->all);
	free(ev->stage);
	free(ev);
}

void ksr_events_attach_trace(ksr_events *ev, int fd)
{
	if (ev)
		ev->trace_fd = fd;
}

int ksr_events_trace_errno(const ksr_events *ev)
{
	return ev ? ev->trace_errno : 0;
}

void ksr_events_set_stage(ksr_events *ev, const char *stage)
{
	if (!ev)
		return;
	free(ev->stage);
	ev->stage = stage ? ksr_xstrdup(stage) : NULL;
}

void ksr_events_set_step(ksr_events *ev, int step)
{
	if (ev)
		ev->step = step;
}

int64_t ksr_events_elapsed_ms(const ksr_events *ev)
{
	if (!ev || !ev->started)
		return 0;
	return ksr_now_ms() - ev->t0_ms;
}

/* Write all of buf; on failure cut the file back to where the line began so the
 * trace never ends in half a line. Returns 0 or an errno. */
static int write_line(int fd, const char *buf, size_t len)
{
	off_t start = lseek(fd, 0, SEEK_END);
	size_t done = 0;
	while (done < len) {
		ssize_t n = write(fd, buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? errno : EIO;
			if (done > 0 && start >= 0)
				(void)!ftruncate(fd, start); /* best effort; e is what counts */
			return e;
		}
		done += (size_t)n;
	}
	return 0;
}

static void trace(ksr_events *ev, const cJSON *obj)
{
	if (ev->trace_fd < 0 || ev->trace_errno)
		return;
	char *line = ksr_json_print(obj, false);
	if (!line) {
		ev->trace_errno = ENOMEM;
		return;
	}
	size_t len = strlen(line);
	char *buf = ksr_xmalloc(len + 1);
	memcpy(buf, line, len);
	buf[len] = '\n';
	cJSON_free(line);
	ev->trace_errno = write_line(ev->trace_fd, buf, len + 1);
	free(buf);
}

static bool is_context_key(const char *k)
{
	return !strcmp(k, "t_ms") || !strcmp(k, "event") || !strcmp(k, "stage") ||
	       !strcmp(k, "step");
}

/* Move fields' members into obj: context keys replace in place, others append. */
static void merge_fields(cJSON *obj, cJSON *fields)
{
	if (!cJSON_IsObject(fields))
		return;
	cJSON *item;
	while ((item = fields->child) != NULL) {
		cJSON_DetachItemViaPointer(fields, item);
		if (!item->string) {
			cJSON_Delete(item);
			continue;
		}
		cJSON *have = is_context_key(item->string)
		                      ? cJSON_GetObjectItemCaseSensitive(obj, item->string)
		                      : NULL;
		if (have)
			cJSON_ReplaceItemViaPointer(obj, have, item); /* item keeps its key */
		else
			cJSON_AddItemToObject(obj, item->string, item);
	}
}

const cJSON *ksr_events_emit(ksr_events *ev, const char *event, cJSON *fields)
{
	if (!ev) {
		cJSON_Delete(fields);
		return NULL;
	}
	int64_t now = ksr_now_ms();
	if (!ev->started) {
		ev->started = true;
		ev->t0_ms = now;
	}
	cJSON *obj = cJSON_CreateObject();
	cJSON_AddNumberToObject(obj, "t_ms", (double)(now - ev->t0_ms));
	cJSON_AddStringToObject(obj, "event", event ? event : "");
	if (ev->stage)
		cJSON_AddStringToObject(obj, "stage", ev->stage);
	else
		cJSON_AddNullToObject(obj, "stage");
	cJSON_AddNumberToObject(obj, "step", ev->step);
	merge_fields(obj, fields);
	cJSON_Delete(fields);
	/* The one place every recorded word passes: secrets end here. */
	ksr_redact_json(obj->child);
	/* ... and bytes that are not UTF-8 (a title, a shell's output) are
	 * repaired, so every report and renderer built from the events reads
	 * valid text. */
	ksr_json_repair(obj->child);
	cJSON_AddItemToArray(ev->all, obj);
	trace(ev, obj);
	return obj;
}

const cJSON *ksr_events_emit_kv(ksr_events *ev, const char *event, ...)
{
	cJSON *fields = cJSON_CreateObject();
	va_list ap;
	va_start(ap, event);
	const char *k;
	while ((k = va_arg(ap, const char *)) != NULL) {
		const char *v = va_arg(ap, const char *);
		if (v)
			cJSON_AddStringToObject(fields, k, v);
		else
			cJSON_AddNullToObject(fields, k);
	}
	va_end(ap);
	return ksr_events_emit(ev, event, fields);
}

const cJSON *ksr_events_all(const ksr_events *ev)
{
	return ev ? ev->all : NULL;
}
