/* The MCP server core: one JSON-RPC message in, one reply out. Two eras on
 * the same endpoint, chosen per request (docs/mcp.md, "Protocol revisions"):
 * a request whose _meta carries io.modelcontextprotocol/protocolVersion is
 * served statelessly under 2026-07-28 (server/discover, resultType, cache
 * hints, tasks: tasks.c); anything else as the initialize'd 2025 session it
 * always was (initialize, ping, logging/setLevel). Both: tools/list and
 * tools/call over the table in tools.c, resources/list and resources/read (the
 * evidence folder, resources.c), progress and cancellation. Transports
 * (stdio.c, the HTTP one) own the framing; nothing here reads or writes a
 * descriptor. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/deadline.h"
#include "ksr/json.h"
#include "ksr/redact.h"
#include "mcp/mcp_priv.h"

static const char *const protocols[] = {KSR_MCP_PROTOCOL, "2025-06-18", "2025-03-26"};
/* What server/discover and an unsupported-version error list, newest first. */
static const char *const all_protocols[] = {KSR_MCP_PROTOCOL_MODERN, KSR_MCP_PROTOCOL, "2025-06-18",
                                            "2025-03-26"};
#define TASKS_EXT "io.modelcontextprotocol/tasks"
static const char *const levels[] = {"debug", "info",     "notice", "warning",
                                     "error", "critical", "alert",  "emergency"};
#define N_LEVELS (sizeof levels / sizeof levels[0])

enum { RPC_PARSE = -32700, RPC_INVALID = -32600, RPC_NO_METHOD = -32601, RPC_PARAMS = -32602 };
/* 2026-07-28's codes (basic/index, "Error codes"). */
enum { RPC_MISSING_CAPABILITY = -32021, RPC_UNSUPPORTED_VERSION = -32022 };
/* Cache hints (server/utilities/caching): the table never changes while the
 * server runs; the evidence folder's list does at every linked screenshot; a
 * file, once written, does not. */
#define TTL_STATIC_MS 3600000
#define TTL_FILE_MS   3600000

ksr_mcp *ksr_mcp_create(const ksr_mcp_opts *o, ksr_err *err)
{
	ksr_mcp *m = ksr_xcalloc(1, sizeof *m);
	if (o)
		m->opts = *o;
	pthread_mutex_init(&m->lock, NULL);
	pthread_mutex_init(&m->ev_lock, NULL);
	snprintf(m->protocol, sizeof m->protocol, "%s", KSR_MCP_PROTOCOL);
	m->log_level = 1; /* info */
	m->schemas = ksr_xcalloc(2 * mcp_n_tools, sizeof *m->schemas);
	m->sessions = ksr_xcalloc(MCP_SESSIONS, sizeof *m->sessions);
	for (size_t i = 0; i < 2 * mcp_n_tools; i++) {
		const mcp_tool *t = &mcp_tools[i / 2];
		m->schemas[i] = cJSON_Parse(i % 2 ? t->output_schema : t->input_schema);
		if (!m->schemas[i]) {
			ksr_err_set(err, "tool %s: its %s schema is not JSON", t->name,
			            i % 2 ? "output" : "input");
			goto fail;
		}
		if (i % 2 == 0)
			mcp_schema_add_common(m->schemas[i], t->takes_view);
	}
	ksr_session_opts so = {.server = m->opts.display_server, .wm = m->opts.wm};
	if (m->opts.xvfb && ksr_session_start(&so, ksr_deadline_in_ms(30000), &m->session, err) < 0)
		goto fail;
	if (m->session)
		m->opts.display = ksr_session_display(m->session);
	return m;
fail:
	ksr_mcp_destroy(m);
	return NULL;
}

void ksr_mcp_destroy(ksr_mcp *m)
{
	if (!m)
		return;
	/* The tasks first: they work on the session stopped below. */
	mcp_tasks_stop(m);
	mcp_pages_close(m);
	ksr_atspi_close(m->atspi);
	ksr_x11_close(m->x);
	ksr_session_stop(m->session);
	mcp_evidence_cleanup(m);
	for (size_t i = 0; m->schemas && i < 2 * mcp_n_tools; i++)
		cJSON_Delete(m->schemas[i]);
	free(m->schemas);
	free(m->sessions);
	free(m->inflight_id);
	pthread_mutex_destroy(&m->ev_lock);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

ksr_mcp *mcp_context_new(ksr_mcp *m)
{
	ksr_mcp *c = ksr_xcalloc(1, sizeof *c);
	c->opts = m->opts;
	c->parent = m;
	c->schemas = m->schemas; /* borrowed: read only */
	c->req = m->req;
	c->text_cap = m->text_cap;
	c->log_level = m->log_level;
	memcpy(c->protocol, m->protocol, sizeof c->protocol);
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->ev_lock, NULL);
	return c;
}

void mcp_context_free(ksr_mcp *c)
{
	if (!c)
		return;
	mcp_pages_close(c);
	ksr_atspi_close(c->atspi);
	ksr_x11_close(c->x);
	free(c->inflight_id);
	pthread_mutex_destroy(&c->ev_lock);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

bool mcp_tool_tasks(size_t i, const cJSON *args)
{
	const mcp_tool *t = &mcp_tools[i];
	return t->run_task || (t->task_when && t->task_when(args));
}

/* ---- replies -------------------------------------------------------------------- */

/* Every reply and notification: secrets (include/ksr/redact.h) end here, as
 * they do in a run's events. */
static char *print_take(cJSON *o)
{
	ksr_redact_from_env();
	ksr_redact_json(o);
	char *s = ksr_json_print(o, false);
	cJSON_Delete(o);
	return s ? s : ksr_xstrdup("{}");
}

static cJSON *envelope(const cJSON *id)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "jsonrpc", "2.0");
	cJSON_AddItemToObject(o, "id", id ? cJSON_Duplicate(id, 1) : cJSON_CreateNull());
	return o;
}

static char *error_reply(const cJSON *id, int code, const char *message)
{
	cJSON *o = envelope(id);
	cJSON *e = cJSON_AddObjectToObject(o, "error");
	cJSON_AddNumberToObject(e, "code", code);
	cJSON_AddStringToObject(e, "message", message);
	return print_take(o);
}

static char *error_reply_data(const cJSON *id, int code, const char *message, cJSON *data)
{
	cJSON *o = envelope(id);
	cJSON *e = cJSON_AddObjectToObject(o, "error");
	cJSON_AddNumberToObject(e, "code", code);
	cJSON_AddStringToObject(e, "message", message);
	cJSON_AddItemToObject(e, "data", data);
	return print_take(o);
}

char *ksr_mcp_error_reply(int code, const char *message)
{
	return error_reply(NULL, code, message);
}

static char *result_reply(const cJSON *id, cJSON *result)
{
	cJSON *o = envelope(id);
	cJSON_AddItemToObject(o, "result", result);
	return print_take(o);
}

static void send_notification(ksr_mcp *m, const char *method, cJSON *params)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "jsonrpc", "2.0");
	cJSON_AddStringToObject(o, "method", method);
	cJSON_AddItemToObject(o, "params", params);
	char *line = print_take(o);
	if (m->notify)
		m->notify(m->notify_ud, line);
	free(line);
}

void mcp_progress(ksr_mcp *m, double total, const char *message)
{
	if (!m->progress_token)
		return;
	cJSON *p = cJSON_CreateObject();
	cJSON_AddItemToObject(p, "progressToken", cJSON_Duplicate(m->progress_token, 1));
	cJSON_AddNumberToObject(p, "progress", ++m->progress);
	if (total > 0)
		cJSON_AddNumberToObject(p, "total", total);
	if (message)
		cJSON_AddStringToObject(p, "message", message);
	send_notification(m, "notifications/progress", p);
}

static int level_index(const char *name)
{
	for (size_t i = 0; name && i < N_LEVELS; i++)
		if (!strcmp(levels[i], name))
			return (int)i;
	return -1;
}

void mcp_log(ksr_mcp *m, const char *level, const char *fmt, ...)
{
	/* 2026-07-28: only when the request asked, at the level it asked for. */
	if (level_index(level) < (m->req.modern ? m->req.log_level : m->log_level))
		return;
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	cJSON *p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "level", level);
	cJSON_AddStringToObject(p, "logger", "kasm-session-runtime");
	cJSON_AddStringToObject(p, "data", buf);
	send_notification(m, "notifications/message", p);
}

/* ---- cancellation ---------------------------------------------------------------- */

/* The id as compact JSON, the form both sides compare. */
static char *id_text(const cJSON *id)
{
	char *s = ksr_json_print(id, false);
	char *copy = ksr_xstrdup(s ? s : "null");
	cJSON_free(s);
	return copy;
}

void ksr_mcp_cancel(ksr_mcp *m, const char *id_json)
{
	if (!m || !id_json)
		return;
	pthread_mutex_lock(&m->lock);
	if (m->inflight_id && !strcmp(m->inflight_id, id_json) && !m->cancel_hit) {
		m->cancel_hit = true;
		/* Every wait in the backends polls the cancel descriptor, so a running
		 * scenario or action ends at once; reset after the request. */
		mcp_cancel_hold_locked(m);
	}
	pthread_mutex_unlock(&m->lock);
}

void mcp_cancel_hold_locked(ksr_mcp *m)
{
	m->cancel_holds++;
	ksr_cancel_request();
}

/* The cancel request is process-wide (every wait polls one descriptor): it is
 * undone only when neither a cancelled call nor a cancelled task still needs
 * it, so one ending does not un-cancel the other. */
void mcp_cancel_release_locked(ksr_mcp *m)
{
	if (m->cancel_holds > 0 && --m->cancel_holds == 0)
		ksr_cancel_reset();
}

bool mcp_cancel_hit(ksr_mcp *m)
{
	pthread_mutex_lock(&m->lock);
	bool hit = m->cancel_hit;
	pthread_mutex_unlock(&m->lock);
	return hit;
}

static void inflight_begin(ksr_mcp *m, const cJSON *id)
{
	pthread_mutex_lock(&m->lock);
	free(m->inflight_id);
	m->inflight_id = id_text(id);
	m->cancel_hit = false;
	pthread_mutex_unlock(&m->lock);
}

static bool inflight_end(ksr_mcp *m)
{
	pthread_mutex_lock(&m->lock);
	bool hit = m->cancel_hit;
	free(m->inflight_id);
	m->inflight_id = NULL;
	m->cancel_hit = false;
	if (hit)
		mcp_cancel_release_locked(
		        m); /* the server goes on serving after a cancelled request */
	pthread_mutex_unlock(&m->lock);
	return hit;
}

static cJSON *parse_len(const char *msg, size_t len)
{
	return msg ? cJSON_ParseWithLength(msg, len) : NULL;
}

char *ksr_mcp_cancelled_id(const char *msg, size_t len)
{
	cJSON *o = parse_len(msg, len);
	const cJSON *method = cJSON_GetObjectItemCaseSensitive(o, "method");
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(o, "params");
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(params, "requestId");
	char *out = NULL;
	if (cJSON_IsString(method) && !strcmp(method->valuestring, "notifications/cancelled") && id)
		out = id_text(id);
	cJSON_Delete(o);
	return out;
}

bool ksr_mcp_is_tool_call(const char *msg, size_t len)
{
	cJSON *o = parse_len(msg, len);
	const cJSON *method = cJSON_GetObjectItemCaseSensitive(o, "method");
	bool yes = cJSON_IsString(method) && !strcmp(method->valuestring, "tools/call");
	cJSON_Delete(o);
	return yes;
}

/* ---- methods ------------------------------------------------------------------ */

static void add_capabilities(cJSON *r, bool modern)
{
	cJSON *caps = cJSON_AddObjectToObject(r, "capabilities");
	cJSON_AddBoolToObject(cJSON_AddObjectToObject(caps, "tools"), "listChanged", false);
	cJSON_AddObjectToObject(caps, "logging");
	/* Linked screenshots (screen_capture delivery link) are resources. */
	cJSON *res = cJSON_AddObjectToObject(caps, "resources");
	cJSON_AddBoolToObject(res, "subscribe", false);
	cJSON_AddBoolToObject(res, "listChanged", false);
	if (modern) /* scenario_run, the waits and grounding as tasks (tasks.c) */
		cJSON_AddObjectToObject(cJSON_AddObjectToObject(caps, "extensions"), TASKS_EXT);
}

static void add_server_info(cJSON *o)
{
	cJSON_AddStringToObject(o, "name", "kasm-session-runtime");
	cJSON_AddStringToObject(o, "title", "Kasm session runtime");
	cJSON_AddStringToObject(o, "version", KSR_VERSION);
}

static void add_instructions(const ksr_mcp *m, cJSON *r, bool modern)
{
	bool d = m->opts.dotted_names;
	char text[400];
	snprintf(text, sizeof text,
	         "Desktop testing tools for an X11 session. Call %s first: input coordinates "
	         "are in %s. Wait with %s and %s instead of polling.",
	         d ? "screen.capture" : "screen_capture",
	         modern ? "the space of the screenshot whose view handle you pass as 'view'"
	                : "the last screenshot's space",
	         d ? "screen.wait" : "screen_wait", d ? "a11y.find" : "a11y_find");
	cJSON_AddStringToObject(r, "instructions", text);
}

static cJSON *do_initialize(ksr_mcp *m, const cJSON *params)
{
	const cJSON *asked = cJSON_GetObjectItemCaseSensitive(params, "protocolVersion");
	snprintf(m->protocol, sizeof m->protocol, "%s", KSR_MCP_PROTOCOL);
	for (size_t i = 0; cJSON_IsString(asked) && i < sizeof protocols / sizeof *protocols; i++)
		if (!strcmp(protocols[i], asked->valuestring))
			snprintf(m->protocol, sizeof m->protocol, "%s", protocols[i]);
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "protocolVersion", m->protocol);
	add_capabilities(r, false);
	add_server_info(cJSON_AddObjectToObject(r, "serverInfo"));
	add_instructions(m, r, false);
	/* A new session, or one that starts over: nothing of before carries on. */
	m->session_view = (mcp_view){0};
	m->log_level = 1;
	return r;
}

/* server/discover (2026-07-28): versions, capabilities, identity. */
static cJSON *do_discover(ksr_mcp *m)
{
	cJSON *r = cJSON_CreateObject();
	cJSON *v = cJSON_AddArrayToObject(r, "supportedVersions");
	for (size_t i = 0; i < sizeof all_protocols / sizeof *all_protocols; i++)
		cJSON_AddItemToArray(v, cJSON_CreateString(all_protocols[i]));
	add_capabilities(r, true);
	add_instructions(m, r, true);
	return r;
}

static cJSON *do_list(ksr_mcp *m)
{
	cJSON *r = cJSON_CreateObject();
	cJSON *tools = cJSON_AddArrayToObject(r, "tools");
	for (size_t i = 0; i < mcp_n_tools; i++)
		cJSON_AddItemToArray(tools, mcp_tool_json(m, i));
	return r;
}

cJSON *mcp_call_result_json(mcp_result *res, bool modern)
{
	cJSON *r = cJSON_CreateObject();
	if (modern)
		cJSON_AddStringToObject(r, "resultType", "complete");
	cJSON_AddItemToObject(r, "content", res->content ? res->content : cJSON_CreateArray());
	if (res->structured && !res->is_error)
		cJSON_AddItemToObject(r, "structuredContent", res->structured);
	else
		cJSON_Delete(res->structured);
	cJSON_AddBoolToObject(r, "isError", res->is_error);
	*res = (mcp_result){0};
	return r;
}

/* The view a call's coordinates are in: the handle it names (either era); else
 * a 2025 session's last screenshot; else (2026-07-28, stateless) the screen.
 * -1 with r's error for a handle that is not (or no longer) known. */
static int select_view(ksr_mcp *m, const cJSON *args, mcp_result *r)
{
	const char *id = mcp_arg_str(args, "view");
	mcp_view v = {0};
	bool named = id && mcp_view_find(m, id, &v);
	if (id && !named)
		return mcp_fail(r,
		                "unknown or expired view handle '%.40s' (the server keeps the "
		                "last %d): call screen_capture again and pass its view",
		                id, MCP_VIEWS),
		       -1;
	m->view = named ? v : m->req.modern ? (mcp_view){0} : m->session_view;
	return 0;
}

/* Run row i on this thread, as a plain call. */
static void run_call(ksr_mcp *m, size_t i, const cJSON *id, const cJSON *params, const cJSON *given,
                     mcp_result *res)
{
	if (select_view(m, given, res) < 0)
		return;
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(params, "_meta");
	m->progress_token = cJSON_GetObjectItemCaseSensitive(meta, "progressToken");
	m->progress = 0;
	inflight_begin(m, id);
	mcp_tools[i].run(m, given, res);
	m->progress_token = NULL;
	if (!m->req.modern) /* the session's implicit state, as in 2025 */
		m->session_view = m->view;
}

/* tools/call: unknown tool -> -32602 (the spec's example); bad arguments or a
 * failed action -> an isError result the model can read and correct. Under
 * 2026-07-28 a row that runs as a task does so when the client declared the
 * tasks extension: the task's handle comes back at once. */
static char *do_call(ksr_mcp *m, const cJSON *id, const cJSON *params, cJSON **result)
{
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(params, "name");
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(params, "arguments");
	int i = mcp_tool_find(cJSON_IsString(name) ? name->valuestring : NULL);
	if (i < 0) {
		char msg[200];
		snprintf(msg, sizeof msg, "Unknown tool: %.120s",
		         cJSON_IsString(name) ? name->valuestring : "(no name)");
		return error_reply(id, RPC_PARAMS, msg);
	}
	cJSON *given = mcp_args_without_nulls(m->schemas[2 * i], args);
	mcp_result res = {0};
	char why[300];
	int cap = mcp_arg_int(given, "max_text", MCP_DEFAULT_TEXT_CAP);
	m->text_cap = cap < 256 ? 256 : cap; /* as checked: a bad value is refused below */
	char busy[MCP_TASK_ID];
	if (mcp_check_args(m->schemas[2 * i], given, why, sizeof why) < 0) {
		mcp_fail(&res, "invalid arguments for %s: %s", name->valuestring, why);
	} else if (mcp_tools[i].run_task && mcp_task_busy(m, (size_t)i, busy)) {
		mcp_fail(&res,
		         "%s is running as task %s: poll it with tasks/get or cancel it first",
		         name->valuestring, busy);
	} else if (m->req.modern && m->req.tasks_ok && mcp_tool_tasks((size_t)i, given)) {
		*result = mcp_task_start(m, (size_t)i, given, why, sizeof why);
		if (*result)
			return NULL;
		given = NULL; /* taken */
		mcp_fail(&res, "%s", why);
	} else {
		run_call(m, (size_t)i, id, params, given, &res);
		if (inflight_end(m)) {
			cJSON_Delete(mcp_call_result_json(&res, false));
			cJSON_Delete(given);
			return NULL; /* MCP: no response to a cancelled request */
		}
	}
	cJSON_Delete(given);
	mcp_cap_text(m, &res);
	*result = mcp_call_result_json(&res, false);
	return NULL;
}

/* resources/read: a URI that is not one of the server's files is -32002 in
 * 2025, -32602 in 2026-07-28 (its changelog). */
static char *do_read(ksr_mcp *m, const cJSON *id, const cJSON *params, cJSON **result)
{
	const cJSON *uri = cJSON_GetObjectItemCaseSensitive(params, "uri");
	if (!cJSON_IsString(uri))
		return error_reply(id, RPC_PARAMS, "resources/read needs a uri");
	int code = 0;
	char why[300];
	*result = mcp_resource_read(m, uri->valuestring, &code, why, sizeof why);
	if (*result)
		return NULL;
	if (code != -32002)
		return error_reply(id, code, why);
	/* Not found: both eras name the URI in data (2026-07-28's resources page
	 * asks for it; 2025 allows it). */
	cJSON *data = cJSON_CreateObject();
	cJSON_AddStringToObject(data, "uri", uri->valuestring);
	return error_reply_data(id, m->req.modern ? RPC_PARAMS : code, why, data);
}

static cJSON *no_templates(void)
{
	cJSON *r = cJSON_CreateObject();
	cJSON_AddArrayToObject(r, "resourceTemplates");
	return r;
}

static char *do_set_level(ksr_mcp *m, const cJSON *id, const cJSON *params)
{
	const cJSON *lv = cJSON_GetObjectItemCaseSensitive(params, "level");
	int i = level_index(cJSON_IsString(lv) ? lv->valuestring : NULL);
	if (i < 0)
		return error_reply(id, RPC_PARAMS, "level must be one of the RFC 5424 level names");
	m->log_level = i;
	return result_reply(id, cJSON_CreateObject());
}

static char *no_method(const cJSON *id, const char *method)
{
	char msg[200];
	snprintf(msg, sizeof msg, "Method not found: %.120s", method);
	return error_reply(id, RPC_NO_METHOD, msg);
}

/* The methods both eras share; NULL result and NULL reply: not one of them. */
static char *shared_method(ksr_mcp *m, const char *method, const cJSON *id, const cJSON *params,
                           cJSON **result)
{
	if (!strcmp(method, "tools/list"))
		*result = do_list(m);
	else if (!strcmp(method, "tools/call"))
		return do_call(m, id, params, result);
	else if (!strcmp(method, "resources/list"))
		*result = mcp_resources_list(m);
	else if (!strcmp(method, "resources/read"))
		return do_read(m, id, params, result);
	else if (!strcmp(method, "resources/templates/list"))
		*result = no_templates();
	return NULL;
}

static char *legacy_request(ksr_mcp *m, const char *method, const cJSON *id, const cJSON *params)
{
	if (!strcmp(method, "initialize"))
		return result_reply(id, do_initialize(m, params));
	if (!strcmp(method, "ping"))
		return result_reply(id, cJSON_CreateObject());
	if (!strcmp(method, "logging/setLevel"))
		return do_set_level(m, id, params);
	cJSON *result = NULL;
	char *reply = shared_method(m, method, id, params, &result);
	if (result)
		return result_reply(id, result);
	return reply || !strcmp(method, "tools/call") ? reply : no_method(id, method);
}

/* ---- 2026-07-28 ------------------------------------------------------------------- */

/* The cache hints a method's result carries (caching.mdx lists them); 0 none. */
static bool cache_hint(const char *method, int *ttl, const char **scope)
{
	*scope = "public";
	*ttl = TTL_STATIC_MS;
	if (!strcmp(method, "resources/list"))
		*ttl = 0, *scope = "private"; /* grows at every linked screenshot */
	else if (!strcmp(method, "resources/read"))
		*ttl = TTL_FILE_MS, *scope = "private";
	else if (strcmp(method, "server/discover") && strcmp(method, "tools/list") &&
	         strcmp(method, "resources/templates/list"))
		return false;
	return true;
}

/* Every 2026 result: resultType (unless a task's, set already), the server's
 * identity in _meta, and the cache hints where the method has them. */
static cJSON *modern_result(const char *method, cJSON *r)
{
	if (!cJSON_GetObjectItemCaseSensitive(r, "resultType"))
		cJSON_AddStringToObject(r, "resultType", "complete");
	cJSON *meta = cJSON_GetObjectItemCaseSensitive(r, "_meta");
	if (!meta)
		meta = cJSON_AddObjectToObject(r, "_meta");
	add_server_info(cJSON_AddObjectToObject(meta, "io.modelcontextprotocol/serverInfo"));
	int ttl;
	const char *scope;
	if (cache_hint(method, &ttl, &scope)) {
		cJSON_AddNumberToObject(r, "ttlMs", ttl);
		cJSON_AddStringToObject(r, "cacheScope", scope);
	}
	return r;
}

static char *unsupported_version(const cJSON *id, const char *asked)
{
	cJSON *data = cJSON_CreateObject();
	cJSON *sup = cJSON_AddArrayToObject(data, "supported");
	for (size_t i = 0; i < sizeof all_protocols / sizeof *all_protocols; i++)
		cJSON_AddItemToArray(sup, cJSON_CreateString(all_protocols[i]));
	cJSON_AddStringToObject(data, "requested", asked);
	/* The 2025 revisions are served after an initialize, not per request. */
	return error_reply_data(id, RPC_UNSUPPORTED_VERSION,
	                        "Unsupported protocol version (per-request _meta carries "
	                        "2026-07-28; 2025 revisions begin with initialize)",
	                        data);
}

static bool declares_tasks(const cJSON *caps)
{
	const cJSON *ext = cJSON_GetObjectItemCaseSensitive(caps, "extensions");
	return cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(ext, TASKS_EXT));
}

/* Read what a 2026 request's _meta declares into m->req; an error reply when
 * it is malformed or names a version not served this way. */
static char *read_modern_meta(ksr_mcp *m, const cJSON *id, const cJSON *meta)
{
	const cJSON *ver = cJSON_GetObjectItemCaseSensitive(meta, KSR_MCP_META_VERSION);
	const cJSON *caps = cJSON_GetObjectItemCaseSensitive(
	        meta, "io.modelcontextprotocol/clientCapabilities");
	const cJSON *lv =
	        cJSON_GetObjectItemCaseSensitive(meta, "io.modelcontextprotocol/logLevel");
	m->req.http_status = 400;
	if (!cJSON_IsString(ver) || !cJSON_IsObject(caps))
		return error_reply(id, RPC_PARAMS,
		                   "_meta needs io.modelcontextprotocol/protocolVersion (a string) "
		                   "and io.modelcontextprotocol/clientCapabilities (an object)");
	if (strcmp(ver->valuestring, KSR_MCP_PROTOCOL_MODERN))
		return unsupported_version(id, ver->valuestring);
	if (lv && level_index(cJSON_IsString(lv) ? lv->valuestring : NULL) < 0)
		return error_reply(
		        id, RPC_PARAMS,
		        "io.modelcontextprotocol/logLevel must be an RFC 5424 level name");
	m->req.http_status = 0;
	m->req.tasks_ok = declares_tasks(caps);
	m->req.log_level = lv ? level_index(lv->valuestring) : (int)N_LEVELS;
	return NULL;
}

static char *missing_tasks(const cJSON *id)
{
	cJSON *data = cJSON_CreateObject();
	cJSON *req = cJSON_AddObjectToObject(data, "requiredCapabilities");
	cJSON_AddObjectToObject(cJSON_AddObjectToObject(req, "extensions"), TASKS_EXT);
	return error_reply_data(id, RPC_MISSING_CAPABILITY, "Missing required client capability",
	                        data);
}

static char *task_method(ksr_mcp *m, const char *method, const cJSON *id, const cJSON *params)
{
	if (!m->req.tasks_ok) {
		m->req.http_status = 400;
		return missing_tasks(id);
	}
	int code = 0;
	char why[300];
	cJSON *r = mcp_task_request(m, method, params, &code, why, sizeof why);
	return r ? result_reply(id, modern_result(method, r)) : error_reply(id, code, why);
}

static char *modern_request(ksr_mcp *m, const char *method, const cJSON *id, const cJSON *params)
{
	char *bad = read_modern_meta(m, id, cJSON_GetObjectItemCaseSensitive(params, "_meta"));
	if (bad)
		return bad;
	if (!strcmp(method, "server/discover"))
		return result_reply(id, modern_result(method, do_discover(m)));
	if (!strcmp(method, "tasks/get") || !strcmp(method, "tasks/cancel") ||
	    !strcmp(method, "tasks/update"))
		return task_method(m, method, id, params);
	cJSON *result = NULL;
	char *reply = shared_method(m, method, id, params, &result);
	if (result)
		return result_reply(id, modern_result(method, result));
	if (reply || !strcmp(method, "tools/call"))
		return reply; /* an error, or a cancelled call (no reply) */
	/* initialize, ping, logging/setLevel, subscriptions/listen...: not in this revision (or
	 * not offered: nothing here changes to subscribe to). */
	m->req.http_status = 404;
	return no_method(id, method);
}

/* A request is 2026-07-28 when its _meta names a protocol version, whatever
 * its method: an initialize that carries it is a 2026 request for a method
 * that revision does not have (-32601, HTTP 404, as the conformance suite's
 * server-stateless checks); a 2025 client's initialize names no such _meta. */
static bool is_modern(const cJSON *params)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(params, "_meta");
	return cJSON_GetObjectItemCaseSensitive(meta, KSR_MCP_META_VERSION) != NULL;
}

static char *do_request(ksr_mcp *m, const char *method, const cJSON *id, const cJSON *params)
{
	if (params && !cJSON_IsObject(params))
		return error_reply(id, RPC_INVALID, "params must be an object");
	m->req = (mcp_req){.modern = is_modern(params)};
	return m->req.modern ? modern_request(m, method, id, params)
	                     : legacy_request(m, method, id, params);
}

/* An integer id. The range test comes first: converting a double outside
 * long long's range (1e300, inf; found by fuzz_mcp) is undefined behaviour. */
static bool valid_id(const cJSON *id)
{
	if (cJSON_IsString(id))
		return true;
	if (!cJSON_IsNumber(id))
		return false;
	double v = id->valuedouble;
	return v >= -9.2e18 && v <= 9.2e18 && v == (double)(long long)v;
}

static char *dispatch(ksr_mcp *m, const cJSON *o)
{
	if (cJSON_IsArray(o))
		return error_reply(NULL, RPC_INVALID, "batches are not supported");
	const cJSON *ver = cJSON_GetObjectItemCaseSensitive(o, "jsonrpc");
	const cJSON *method = cJSON_GetObjectItemCaseSensitive(o, "method");
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
	if (!cJSON_IsObject(o) || !cJSON_IsString(ver) || strcmp(ver->valuestring, "2.0"))
		return error_reply(valid_id(id) ? id : NULL, RPC_INVALID,
		                   "not a JSON-RPC 2.0 message");
	if (!method) /* a response (we send no requests): nothing to answer */
		return NULL;
	if (!cJSON_IsString(method) || (id && !valid_id(id)))
		return error_reply(valid_id(id) ? id : NULL, RPC_INVALID, "invalid request");
	if (!id) { /* notifications: initialized, cancelled (applied by the transport) */
		const char *mv = method->valuestring;
		if (!strcmp(mv, "notifications/cancelled")) {
			const cJSON *rid = cJSON_GetObjectItemCaseSensitive(
			        cJSON_GetObjectItemCaseSensitive(o, "params"), "requestId");
			char *t = rid ? id_text(rid) : NULL;
			ksr_mcp_cancel(m, t);
			free(t);
		}
		return NULL;
	}
	return do_request(m, method->valuestring, id,
	                  cJSON_GetObjectItemCaseSensitive(o, "params"));
}

/* ---- 2025 sessions' state ---------------------------------------------------------- */

/* The slot of a session key: its own, else a free one, else the least
 * recently used one's (that session starts over: no view, the defaults). */
static mcp_sess *session_slot(ksr_mcp *m, const char *key)
{
	mcp_sess *victim = &m->sessions[0];
	for (size_t i = 0; i < MCP_SESSIONS; i++) {
		mcp_sess *x = &m->sessions[i];
		if (x->used && !strcmp(x->key, key))
			return x;
		if (x->used < victim->used)
			victim = x;
	}
	*victim = (mcp_sess){.log_level = 1};
	snprintf(victim->key, sizeof victim->key, "%s", key);
	snprintf(victim->protocol, sizeof victim->protocol, "%s", KSR_MCP_PROTOCOL);
	return victim;
}

/* Swap a session's state in before its message and out after (the
 * messages are handled one at a time). */
static mcp_sess *session_enter(ksr_mcp *m, const char *key)
{
	mcp_sess *x = session_slot(m, key ? key : "");
	x->used = ++m->sess_clock;
	m->session_view = x->view;
	m->log_level = x->log_level;
	memcpy(m->protocol, x->protocol, sizeof m->protocol);
	return x;
}

static void session_leave(ksr_mcp *m, mcp_sess *x)
{
	x->view = m->session_view;
	x->log_level = m->log_level;
	memcpy(x->protocol, m->protocol, sizeof x->protocol);
}

char *ksr_mcp_handle_status(ksr_mcp *m, const char *msg, size_t len,
                            void (*notify)(void *ud, const char *line), void *ud, int *http_status)
{
	return ksr_mcp_handle_in(m, NULL, msg, len, notify, ud, http_status);
}

char *ksr_mcp_handle_in(ksr_mcp *m, const char *session, const char *msg, size_t len,
                        void (*notify)(void *ud, const char *line), void *ud, int *http_status)
{
	if (http_status)
		*http_status = 200;
	if (!m)
		return NULL;
	cJSON *o = parse_len(msg, len);
	if (!o)
		return error_reply(NULL, RPC_PARSE, "Parse error");
	m->notify = notify;
	m->notify_ud = ud;
	m->req = (mcp_req){0};
	mcp_sess *sess = session_enter(m, session);
	char *reply = dispatch(m, o);
	session_leave(m, sess);
	if (http_status && m->req.http_status)
		*http_status = m->req.http_status;
	m->req = (mcp_req){0};
	m->notify = NULL;
	cJSON_Delete(o);
	return reply;
}

char *ksr_mcp_handle(ksr_mcp *m, const char *msg, size_t len,
                     void (*notify)(void *ud, const char *line), void *ud)
{
	return ksr_mcp_handle_status(m, msg, len, notify, ud, NULL);
}
