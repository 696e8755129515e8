/* The tasks extension (io.modelcontextprotocol/tasks, with 2026-07-28): a
 * tool row that may run long, called by a client that declares the
 * extension, runs on a thread of its own; the call answers at once with the
 * task's handle (CreateTaskResult), tasks/get polls it (a status message,
 * the CallToolResult once completed), tasks/cancel interrupts it.
 * docs/mcp.md, "Tasks".
 *
 * Two kinds. scenario.run (the row's run_task) reports its stages and is
 * interrupted through the process's cancel request, as a cancelled call is;
 * one works at a time (it owns that request and the run layer's state): a
 * second call of the row, as a task or not, is a tool error naming it. The
 * waits and grounding (the row's task_when) run their plain handler in a
 * context of their own (mcp_context_new: their own X and AT-SPI
 * connections, since the server's belong to the request loop's thread), and
 * every wait of the task's thread also watches the task's eventfd (a
 * deadline.h guard): tasks/cancel writes it and ends that task's waits at
 * once, no one else's; any number of them work side by side.
 *
 * The table lives in the server (m->tasks, under m->lock): the last
 * MCP_TASKS tasks, each kept TASK_TTL_MS after it was created. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <unistd.h>
#include <time.h>

#include "ksr/deadline.h"
#include "mcp/mcp_priv.h"

#define TASK_TTL_MS      3600000
#define TASK_POLL_MS     500
#define TASK_MESSAGE_LEN 600
/* A cancelled task has no result in the extension: what the interrupted run
 * left goes into the task's _meta under this key (docs/mcp.md, "Tasks"). */
#define RUN_META "kasm-session-runtime/run"

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
	cJSON *meta;       /* the task's _meta: a cancelled run's verdict, or NULL */
	bool cancel_asked; /* tasks/cancel came while it worked (a scenario's holds a cancel) */
	ksr_mcp *ctx;      /* a tool task's context; NULL for scenario.run */
	int efd;           /* a tool task's cancel: an eventfd its waits watch; -1 */
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
	if (t->meta)
		cJSON_AddItemToObject(o, "_meta", cJSON_Duplicate(t->meta, 1));
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

/* The first text block of a CallToolResult ("" when none). */
static const char *first_text(const cJSON *result)
{
	const cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(result, "content"), 0);
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "text");
	return cJSON_IsString(t) ? t->valuestring : "";
}

/* A scenario run that tasks/cancel interrupted: cancelled, and since a
 * cancelled task carries no result, what the run left (verdict, outcome,
 * reason, evidence folder, the report's resource URI) goes into the
 * statusMessage (for a model) and the task's _meta (for a program). */
static void run_cancelled_locked(mcp_task *t, cJSON *result)
{
	const cJSON *sc = cJSON_GetObjectItemCaseSensitive(result, "structuredContent");
	t->state = TASK_CANCELLED;
	snprintf(t->message, sizeof t->message,
	         "cancelled: the run was interrupted (verdict %s, outcome interrupted); "
	         "its evidence, DONE written, is in %s; its report: %s",
	         structured_str(result, "verdict"), structured_str(result, "evidence"),
	         *structured_str(result, "report") ? structured_str(result, "report")
	                                           : "report.json there");
	t->meta = cJSON_CreateObject();
	cJSON_AddItemToObject(t->meta, RUN_META, cJSON_Duplicate(sc, 1));
	cJSON_Delete(result);
}

/* How the work ended, under m->lock. A cancel that came too late to stop the
 * work (a run that passed or failed on its own, a wait that had its answer)
 * leaves the task completed. */
static void task_finish_locked(mcp_task *t, cJSON *result, bool interrupted)
{
	bool run = t->efd < 0;
	if (run)
		interrupted = !strcmp(structured_str(result, "outcome"), "interrupted");
	if (t->cancel_asked && interrupted && run) {
		run_cancelled_locked(t, result);
	} else if (t->cancel_asked && interrupted) {
		t->state = TASK_CANCELLED;
		snprintf(t->message, sizeof t->message, "cancelled: %s", first_text(result));
		cJSON_Delete(result);
	} else {
		t->state = TASK_COMPLETED;
		t->result = result;
		if (run)
			snprintf(t->message, sizeof t->message, "done: verdict %s, outcome %s",
			         structured_str(result, "verdict"),
			         structured_str(result, "outcome"));
		else
			snprintf(t->message, sizeof t->message, "done%s",
			         cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(result, "isError"))
			                 ? " (isError: the result says why)"
			                 : "");
	}
	stamp(t->updated);
	if (t->cancel_asked && run)
		mcp_cancel_release_locked(t->m);
}

/* A tool row on the task's thread, in the task's context, its waits
 * watching the task's eventfd. *interrupted: tasks/cancel ended them. */
static cJSON *run_tool(mcp_task *t, bool *interrupted)
{
	mcp_result res = {0};
	bool watched = ksr_guard_add(t->efd, NULL, NULL) == 0; /* a fresh thread: room */
	mcp_tools[t->row].run(t->ctx, t->args, &res);
	*interrupted = watched && ksr_guard_fired() == t->efd;
	ksr_guard_remove(t->efd);
	mcp_cap_text(t->ctx, &res);
	return mcp_call_result_json(&res, true);
}

static void *task_main(void *arg)
{
	mcp_task *t = arg;
	bool interrupted = false;
	cJSON *result;
	if (t->ctx) {
		result = run_tool(t, &interrupted);
	} else {
		mcp_result res = {0};
		mcp_tools[t->row].run_task(t->m, t, t->args, &res);
		result = mcp_call_result_json(&res, true);
	}
	pthread_mutex_lock(&t->m->lock);
	task_finish_locked(t, result, interrupted);
	pthread_mutex_unlock(&t->m->lock);
	return NULL;
}

/* After its thread ended (or never started). */
static void task_free_parts(mcp_task *t)
{
	mcp_context_free(t->ctx);
	if (t->efd >= 0)
		close(t->efd);
	cJSON_Delete(t->args);
	cJSON_Delete(t->result);
	cJSON_Delete(t->meta);
	free(t);
}

static void task_free(mcp_task *t)
{
	pthread_join(t->th, NULL);
	task_free_parts(t);
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

/* A new task of row i, not started: a tool task gets its context (the
 * request's era, made here on the loop's thread) and its cancel eventfd.
 * NULL when no eventfd can be had. */
static mcp_task *task_new(ksr_mcp *m, size_t i, cJSON *args)
{
	mcp_task *t = ksr_xcalloc(1, sizeof *t);
	*t = (mcp_task){.m = m, .row = i, .args = args, .created_ms = ksr_now_ms(), .efd = -1};
	task_id(t->id);
	stamp(t->created);
	memcpy(t->updated, t->created, sizeof t->updated);
	if (mcp_tools[i].run_task) {
		snprintf(t->message, sizeof t->message, "starting");
		return t;
	}
	t->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (t->efd < 0) {
		free(t);
		return NULL;
	}
	t->ctx = mcp_context_new(m);
	snprintf(t->message, sizeof t->message, "running %s (tasks/cancel ends it at once)",
	         mcp_tools[i].name);
	return t;
}

cJSON *mcp_task_start(ksr_mcp *m, size_t i, cJSON *args, char *why, size_t len)
{
	char busy[MCP_TASK_ID];
	if (mcp_tools[i].run_task && mcp_task_busy(m, i, busy)) {
		snprintf(why, len,
		         "%s is already running as task %s: poll it with tasks/get or cancel it "
		         "with tasks/cancel first",
		         mcp_tools[i].name, busy);
		cJSON_Delete(args);
		return NULL;
	}
	mcp_task *t = task_new(m, i, args);
	pthread_mutex_lock(&m->lock);
	int slot = t ? free_slot_locked(m) : -1;
	/* Created (and findable by tasks/get) before the handle goes out. */
	bool ok = slot >= 0 && pthread_create(&t->th, NULL, task_main, t) == 0;
	if (ok)
		m->tasks[slot] = t;
	cJSON *r = ok ? task_json(t) : NULL;
	pthread_mutex_unlock(&m->lock);
	if (!ok) {
		snprintf(why, len, "cannot start a task now (%d tasks at work)", MCP_TASKS);
		if (t)
			task_free_parts(t);
		else
			cJSON_Delete(args);
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
	stamp(t->updated);
	if (t->efd >= 0) { /* this task's waits alone */
		uint64_t one = 1;
		ssize_t w = write(t->efd, &one, sizeof one);
		(void)w; /* an eventfd's counter does not fill up with one write */
		snprintf(t->message, sizeof t->message, "cancelling: %s is being interrupted",
		         mcp_tools[t->row].name);
		return;
	}
	snprintf(t->message, sizeof t->message, "cancelling: the run is being interrupted");
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
