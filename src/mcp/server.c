/* The MCP server core: one JSON-RPC message in, one reply out. Lifecycle
 * (initialize, ping), tools/list and tools/call over the table in tools.c,
 * resources/list and resources/read (the evidence folder, resources.c),
 * logging/setLevel, progress and cancellation. Transports (stdio.c, the HTTP
 * one) own the framing; nothing here reads or writes a descriptor. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/deadline.h"
#include "ksr/json.h"
#include "ksr/redact.h"
#include "mcp/mcp_priv.h"

static const char *const protocols[] = {KSR_MCP_PROTOCOL, "2025-06-18", "2025-03-26"};
static const char *const levels[] = {"debug", "info",     "notice", "warning",
                                     "error", "critical", "alert",  "emergency"};
#define N_LEVELS (sizeof levels / sizeof levels[0])

enum { RPC_PARSE = -32700, RPC_INVALID = -32600, RPC_NO_METHOD = -32601, RPC_PARAMS = -32602 };

ksr_mcp *ksr_mcp_create(const ksr_mcp_opts *o, ksr_err *err)
{
	ksr_mcp *m = ksr_xcalloc(1, sizeof *m);
	if (o)
		m->opts = *o;
	pthread_mutex_init(&m->lock, NULL);
	snprintf(m->protocol, sizeof m->protocol, "%s", KSR_MCP_PROTOCOL);
	m->log_level = 1; /* info */
	m->schemas = ksr_xcalloc(2 * mcp_n_tools, sizeof *m->schemas);
	for (size_t i = 0; i < 2 * mcp_n_tools; i++) {
		const mcp_tool *t = &mcp_tools[i / 2];
		m->schemas[i] = cJSON_Parse(i % 2 ? t->output_schema : t->input_schema);
		if (!m->schemas[i]) {
			ksr_err_set(err, "tool %s: its %s schema is not JSON", t->name,
			            i % 2 ? "output" : "input");
			goto fail;
		}
		if (i % 2 == 0)
			mcp_schema_add_common(m->schemas[i]);
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
	ksr_cdp_close(m->cdp);
	ksr_atspi_close(m->atspi);
	ksr_x11_close(m->x);
	ksr_session_stop(m->session);
	mcp_evidence_cleanup(m);
	for (size_t i = 0; m->schemas && i < 2 * mcp_n_tools; i++)
		cJSON_Delete(m->schemas[i]);
	free(m->schemas);
	free(m->inflight_id);
	pthread_mutex_destroy(&m->lock);
	free(m);
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
	if (level_index(level) < m->log_level)
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
		ksr_cancel_request();
	}
	pthread_mutex_unlock(&m->lock);
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
		ksr_cancel_reset(); /* the server goes on serving after a cancelled request */
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

static cJSON *do_initialize(ksr_mcp *m, const cJSON *params)
{
	const cJSON *asked = cJSON_GetObjectItemCaseSensitive(params, "protocolVersion");
	snprintf(m->protocol, sizeof m->protocol, "%s", KSR_MCP_PROTOCOL);
	for (size_t i = 0; cJSON_IsString(asked) && i < sizeof protocols / sizeof *protocols; i++)
		if (!strcmp(protocols[i], asked->valuestring))
			snprintf(m->protocol, sizeof m->protocol, "%s", protocols[i]);
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "protocolVersion", m->protocol);
	cJSON *caps = cJSON_AddObjectToObject(r, "capabilities");
	cJSON_AddBoolToObject(cJSON_AddObjectToObject(caps, "tools"), "listChanged", false);
	cJSON_AddObjectToObject(caps, "logging");
	/* Linked screenshots (screen_capture delivery link) are resources. */
	cJSON *res = cJSON_AddObjectToObject(caps, "resources");
	cJSON_AddBoolToObject(res, "subscribe", false);
	cJSON_AddBoolToObject(res, "listChanged", false);
	cJSON *info = cJSON_AddObjectToObject(r, "serverInfo");
	cJSON_AddStringToObject(info, "name", "kasm-session-runtime");
	cJSON_AddStringToObject(info, "title", "Kasm session runtime");
	cJSON_AddStringToObject(info, "version", KSR_VERSION);
	char text[256];
	snprintf(text, sizeof text,
	         "Desktop testing tools for an X11 session. Call %s first: input coordinates "
	         "are in the last screenshot's space. Wait with %s and %s instead of polling.",
	         m->opts.dotted_names ? "screen.capture" : "screen_capture",
	         m->opts.dotted_names ? "screen.wait" : "screen_wait",
	         m->opts.dotted_names ? "a11y.find" : "a11y_find");
	cJSON_AddStringToObject(r, "instructions", text);
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

static cJSON *result_json(mcp_result *res)
{
	cJSON *r = cJSON_CreateObject();
	cJSON_AddItemToObject(r, "content", res->content ? res->content : cJSON_CreateArray());
	if (res->structured && !res->is_error)
		cJSON_AddItemToObject(r, "structuredContent", res->structured);
	else
		cJSON_Delete(res->structured);
	cJSON_AddBoolToObject(r, "isError", res->is_error);
	return r;
}

/* tools/call: unknown tool -> -32602 (the spec's example); bad arguments or a
 * failed action -> an isError result the model can read and correct. */
static char *do_call(ksr_mcp *m, const cJSON *id, const cJSON *params)
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
	if (mcp_check_args(m->schemas[2 * i], given, why, sizeof why) < 0) {
		mcp_fail(&res, "invalid arguments for %s: %s", name->valuestring, why);
	} else {
		const cJSON *meta = cJSON_GetObjectItemCaseSensitive(params, "_meta");
		m->progress_token = cJSON_GetObjectItemCaseSensitive(meta, "progressToken");
		m->progress = 0;
		inflight_begin(m, id);
		mcp_tools[i].run(m, given, &res);
		m->progress_token = NULL;
		if (inflight_end(m)) {
			cJSON_Delete(result_json(&res));
			cJSON_Delete(given);
			return NULL; /* MCP: no response to a cancelled request */
		}
	}
	cJSON_Delete(given);
	mcp_cap_text(m, &res);
	return result_reply(id, result_json(&res));
}

/* resources/read: -32002 for a URI that is not one of the server's files. */
static char *do_read(ksr_mcp *m, const cJSON *id, const cJSON *params)
{
	const cJSON *uri = cJSON_GetObjectItemCaseSensitive(params, "uri");
	if (!cJSON_IsString(uri))
		return error_reply(id, RPC_PARAMS, "resources/read needs a uri");
	int code = 0;
	char why[300];
	cJSON *r = mcp_resource_read(m, uri->valuestring, &code, why, sizeof why);
	return r ? result_reply(id, r) : error_reply(id, code, why);
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

static char *do_request(ksr_mcp *m, const char *method, const cJSON *id, const cJSON *params)
{
	if (params && !cJSON_IsObject(params))
		return error_reply(id, RPC_INVALID, "params must be an object");
	if (!strcmp(method, "initialize"))
		return result_reply(id, do_initialize(m, params));
	if (!strcmp(method, "ping"))
		return result_reply(id, cJSON_CreateObject());
	if (!strcmp(method, "tools/list"))
		return result_reply(id, do_list(m));
	if (!strcmp(method, "tools/call"))
		return do_call(m, id, params);
	if (!strcmp(method, "resources/list"))
		return result_reply(id, mcp_resources_list(m));
	if (!strcmp(method, "resources/read"))
		return do_read(m, id, params);
	if (!strcmp(method, "resources/templates/list"))
		return result_reply(id, no_templates());
	if (!strcmp(method, "logging/setLevel"))
		return do_set_level(m, id, params);
	char msg[200];
	snprintf(msg, sizeof msg, "Method not found: %.120s", method);
	return error_reply(id, RPC_NO_METHOD, msg);
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

char *ksr_mcp_handle(ksr_mcp *m, const char *msg, size_t len,
                     void (*notify)(void *ud, const char *line), void *ud)
{
	if (!m)
		return NULL;
	cJSON *o = parse_len(msg, len);
	if (!o)
		return error_reply(NULL, RPC_PARSE, "Parse error");
	m->notify = notify;
	m->notify_ud = ud;
	char *reply = dispatch(m, o);
	m->notify = NULL;
	cJSON_Delete(o);
	return reply;
}
