/* The tasks extension (io.modelcontextprotocol/tasks, with 2026-07-28): a
 * tool row with run_task, called by a client that declares the extension,
 * runs on a thread of its own; the call answers at once with the task's
 * handle (CreateTaskResult), tasks/get polls it (the stage as its status
 * message, the CallToolResult once completed), tasks/cancel interrupts it
 * through the same cancel request a cancelled call uses. docs/mcp.md, "Tasks".
 *
 * The table lives in the server (m->tasks, under m->lock): the last
 * MCP_TASKS tasks, each kept TASK_TTL_MS after it was created. One task of a
 * row works at a time (a scenario run owns the process's cancel request and
 * its run-layer state): a second call of that row, as a task or not, is a
 * tool error naming the task that works. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "ksr/deadline.h"
#include "mcp/mcp_priv.h"

#define TASK_TTL_MS      3600000
#define TASK_POLL_MS     500
#define TASK_MESSAGE_LEN 240

typedef enum task_state { TASK_WORKING, TASK_COMPLETED, TASK_CANCELLED } task_state;

struct mcp_task {
	ksr_mcp *m;
	char id[MCP_TASK_ID];
	size_t row;
	cJSON *args;
	task_state state;
	char message[TASK_MESSAGE_LEN];
	char created[32], updated[32];
	int64_t created_ms;
	cJSON *result;     /* the CallToolResult, once completed */
	bool cancel_asked; /* tasks/cancel came while it worked: it holds a cancel */
	pthread_t th;
};

static const char *state_name(task_state s)
{
	static const char *const names[] = {"working", "completed", "cancelled"};
	return names[s];
}

static void stamp(char out[32])
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	gmtime_r(&ts.tv_sec, &tm);
	char base[24];
	strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, 32, "%s.%03ldZ", base, ts.tv_nsec / 1000000);
}

/* Unguessable: a task id is the bearer name of its run (the extension's
 * security considerations). */
static void task_id(char out[MCP_TASK_ID])
{
	unsigned char r[16];
	if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
		memset(r, 0, sizeof r);
	int n = snprintf(out, MCP_TASK_ID, "task-");
	for (size_t i = 0; i < sizeof r; i++)
		n += snprintf(out + n, (size_t)(MCP_TASK_ID - n), "%02x", r[i]);
}

/* The task as tasks/get shows it (under m->lock). */
static cJSON *task_json(const mcp_task *t)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "taskId", t->id);
	cJSON_AddStringToObject(o, "status", state_name(t->state));
	if (t->message[0])
		cJSON_AddStringToObject(o, "statusMessage", t->message);
	cJSON_AddStringToObject(o, "createdAt", t->created);
	cJSON_AddStringToObject(o, "lastUpdatedAt", t->updated);
	cJSON_AddNumberToObject(o, "ttlMs", TASK_TTL_MS);
	cJSON_AddNumberToObject(o, "pollIntervalMs", TASK_POLL_MS);
	if (t->state == TASK_COMPLETED && t->result)
		cJSON_AddItemToObject(o, "result", cJSON_Duplicate(t->result, 1));
	return o;
}

void mcp_task_status(mcp_task *t, const char *message)
{
	pthread_mutex_lock(&t->m->lock);
	snprintf(t->message, sizeof t->message, "%s", message);
	stamp(t->updated);
	pthread_mutex_unlock(&t->m->lock);
}

static const char *structured_str(const cJSON *result, const char *key)
{
	const cJSON *sc = cJSON_GetObjectItemCaseSensitive(result, "structuredContent");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(sc, key);
	return cJSON_IsString(v) ? v->valuestring : "";
}

/* How the work ended, under m->lock. A cancel that came too late to stop the
 * run (it passed, or failed on its own) leaves the task completed. */
static void task_finish_locked(mcp_task *t, cJSON *result)
{
	bool interrupted = !strcmp(structured_str(result, "outcome"), "interrupted");
	if (t->cancel_asked && interrupted) {
		t->state = TASK_CANCELLED;
		snprintf(t->message, sizeof t->message,
		         "cancelled: the run was interrupted (verdict %s, outcome interrupted); "
		         "its evidence, DONE written, is in %s",
		         structured_str(result, "verdict"), structured_str(result, "evidence"));
		cJSON_Delete(result);
	} else {
		t->state = TASK_COMPLETED;
		t->result = result;
		snprintf(t->message, sizeof t->message, "done: verdict %s, outcome %s",
		         structured_str(result, "verdict"), structured_str(result, "outcome"));
	}
	stamp(t->updated);
	if (t->cancel_asked)
		mcp_cancel_release_locked(t->m);
}

static void *task_main(void *arg)
{
	mcp_task *t = arg;
	mcp_result res = {0};
	mcp_tools[t->row].run_task(t->m, t, t->args, &res);
	cJSON *result = mcp_call_result_json(&res, true);
	pthread_mutex_lock(&t->m->lock);
	task_finish_locked(t, result);
	pthread_mutex_unlock(&t->m->lock);
	return NULL;
}

static void task_free(mcp_task *t)
{
	pthread_join(t->th, NULL);
	cJSON_Delete(t->args);
	cJSON_Delete(t->result);
	free(t);
}

static bool expired(const mcp_task *t)
{
	return t->state != TASK_WORKING && ksr_now_ms() - t->created_ms > TASK_TTL_MS;
}

/* A slot for a new task (under m->lock): a free one, else the oldest ended
 * task's (freed; its thread has returned). -1 when every task works. */
static int free_slot_locked(ksr_mcp *m)
{
	int oldest = -1;
	for (int i = 0; i < MCP_TASKS; i++) {
		mcp_task *t = m->tasks[i];
		if (!t)
			return i;
		if (t->state != TASK_WORKING &&
		    (oldest < 0 || t->created_ms < m->tasks[oldest]->created_ms))
			oldest = i;
	}
	if (oldest >= 0) {
		task_free(m->tasks[oldest]);
		m->tasks[oldest] = NULL;
	}
	return oldest;
}

bool mcp_task_busy(ksr_mcp *m, size_t i, char *id)
{
	bool busy = false;
	pthread_mutex_lock(&m->lock);
	for (int k = 0; k < MCP_TASKS && !busy; k++) {
		mcp_task *t = m->tasks[k];
		if (t && t->row == i && t->state == TASK_WORKING) {
			busy = true;
			snprintf(id, MCP_TASK_ID, "%s", t->id);
		}
	}
	pthread_mutex_unlock(&m->lock);
	return busy;
}

cJSON *mcp_task_start(ksr_mcp *m, size_t i, cJSON *args, char *why, size_t len)
{
	char busy[MCP_TASK_ID];
	if (mcp_task_busy(m, i, busy)) {
		snprintf(why, len,
		         "%s is already running as task %s: poll it with tasks/get or cancel it "
		         "with tasks/cancel first",
		         mcp_tools[i].name, busy);
		cJSON_Delete(args);
		return NULL;
	}
	mcp_task *t = ksr_xcalloc(1, sizeof *t);
	*t = (mcp_task){.m = m, .row = i, .args = args, .created_ms = ksr_now_ms()};
	task_id(t->id);
	stamp(t->created);
	memcpy(t->updated, t->created, sizeof t->updated);
	snprintf(t->message, sizeof t->message, "starting");
	pthread_mutex_lock(&m->lock);
	int slot = free_slot_locked(m);
	/* Created (and findable by tasks/get) before the handle goes out. */
	bool ok = slot >= 0 && pthread_create(&t->th, NULL, task_main, t) == 0;
	if (ok)
		m->tasks[slot] = t;
	cJSON *r = ok ? task_json(t) : NULL;
	pthread_mutex_unlock(&m->lock);
	if (!ok) {
		snprintf(why, len, "cannot start a task now (%d tasks at work)", MCP_TASKS);
		cJSON_Delete(args);
		free(t);
		return NULL;
	}
	cJSON_AddStringToObject(r, "resultType", "task");
	return r;
}

static mcp_task *find_locked(ksr_mcp *m, const cJSON *params)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(params, "taskId");
	for (int i = 0; cJSON_IsString(id) && i < MCP_TASKS; i++) {
		mcp_task *t = m->tasks[i];
		if (t && !strcmp(t->id, id->valuestring) && !expired(t))
			return t;
	}
	return NULL;
}

/* tasks/cancel: cooperative, as the extension says; a working task's run is
 * interrupted (its waits end at once), the task ends cancelled. */
static void cancel_locked(mcp_task *t)
{
	if (t->state != TASK_WORKING || t->cancel_asked)
		return;
	t->cancel_asked = true;
	snprintf(t->message, sizeof t->message, "cancelling: the run is being interrupted");
	stamp(t->updated);
	mcp_cancel_hold_locked(t->m);
}

cJSON *mcp_task_request(ksr_mcp *m, const char *method, const cJSON *params, int *code, char *why,
                        size_t len)
{
	pthread_mutex_lock(&m->lock);
	mcp_task *t = find_locked(m, params);
	cJSON *r = NULL;
	if (!t) {
		*code = -32602;
		snprintf(why, len, "Failed to retrieve task: Task not found (or expired)");
	} else if (!strcmp(method, "tasks/get")) {
		r = task_json(t);
	} else {
		if (!strcmp(method, "tasks/cancel"))
			cancel_locked(t);
		/* tasks/update: this server never asks for input; responses are ignored. */
		r = cJSON_CreateObject();
	}
	pthread_mutex_unlock(&m->lock);
	return r;
}

void mcp_tasks_stop(ksr_mcp *m)
{
	pthread_mutex_lock(&m->lock);
	for (int i = 0; i < MCP_TASKS; i++)
		if (m->tasks[i])
			cancel_locked(m->tasks[i]);
	pthread_mutex_unlock(&m->lock);
	for (int i = 0; i < MCP_TASKS; i++) {
		if (m->tasks[i])
			task_free(m->tasks[i]);
		m->tasks[i] = NULL;
	}
}
