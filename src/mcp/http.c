/* The Streamable HTTP transport (include/ksr/mcp_http.h) on the backend's
 * HTTP server (include/ksr/http_server.h); docs/mcp.md, "Streamable HTTP".
 * This file holds the transport's rules: the endpoint, Host/Origin/token,
 * media types and protocol revision, sessions, 202/405/411/413, JSON-RPC
 * classification and SSE event framing. A 2026-07-28 request (its _meta names
 * the version) is stateless: no session is looked up or minted, its mirrored
 * headers (MCP-Protocol-Version, Mcp-Method, Mcp-Name) must match its body
 * (400 -32020 otherwise), and a client closing its response before the reply
 * cancels it.
 *
 * Threads: the server's serving thread owns every connection; one worker
 * thread runs ksr_mcp_handle for the queued messages in order (a tool may run
 * for minutes, and the core takes one call at a time). The worker posts output
 * into the job and wakes the serving loop (ksr_http_server_wake), whose on_wake
 * moves it into the response of each connection with a job. A job is shared
 * by its connection and the worker and freed by whichever lets go last, so a
 * client that hangs up mid-call costs nothing (a disconnect is not a
 * cancellation). A job carries its 2025 session's id, under which the core
 * keeps that session's state (ksr_mcp_handle_in). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include <cJSON.h>

#include "ksr/deadline.h"
#include "ksr/json.h"
#include "ksr/http_server.h"
#include "ksr/mcp_http.h"
#include "ksr/strbuf.h"

/* Sessions: at most MAX_SESSIONS in all and MAX_PEER_SESSIONS from one client
 * address (docs/mcp.md, "Sessions"); a new one past either bound evicts an
 * idle one first (see session_victim). */
#define MAX_SESSIONS      256
#define MAX_PEER_SESSIONS 32
#define SID_LEN           32
#define PEER_LEN          64
/* A request whose body stalls this long (no byte for this many seconds; or its
 * headers never end) is dropped (the server's body_timeout_s). */
#define BODY_TIMEOUT_S 30

typedef struct http_srv http_srv;

typedef struct job {
	struct job *next; /* worker queue */
	http_srv *srv;
	char *msg;
	size_t len;
	bool sse_ok;       /* the client accepts text/event-stream: notifications go out */
	int refs;          /* the connection and the worker; under srv->lock */
	ksr_strbuf events; /* framed SSE events not yet taken by the connection */
	char *reply;       /* the reply (NULL: a notification, or a cancelled request) */
	int status;        /* the HTTP status the core asked for (200, 400, 404) */
	bool modern;       /* 2026-07-28: not run once its client has gone */
	bool done;
	char sid[SID_LEN + 1]; /* the 2025 session it belongs to ("": none, 2026) */
} job;

/* A request waiting on its job: the connection's user pointer (serving thread). */
typedef struct waiter {
	struct waiter *prev, *next;
	ksr_http_conn *hc;
	job *job;
	bool sse;                  /* the response is a stream */
	char new_sid[SID_LEN + 1]; /* issued when this is an initialize */
	char peer[PEER_LEN];       /* the client's address, for the session's bound */
	char *cancel_id;           /* 2026-07-28: the request's id (compact JSON); a close
	                              before the reply cancels it */
} waiter;

typedef struct session {
	char sid[SID_LEN + 1]; /* "" = a free slot */
	char peer[PEER_LEN];
	uint64_t created, used; /* ticks of http_srv.clock; used 0 = never since initialize */
} session;

struct http_srv {
	ksr_mcp *m;
	ksr_http_server *hs;
	const ksr_mcp_http_opts *o;
	ksr_mcp_http_addr addr;
	size_t max_body;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	job *head, *tail;
	bool quit;
	waiter *waiters;
	session sessions[MAX_SESSIONS];
	uint64_t clock; /* counts session events: an order, not a time */
};

/* ---- jobs (shared with the worker) ------------------------------------------------ */

static void job_release_locked(job *j)
{
	if (--j->refs > 0)
		return;
	free(j->msg);
	free(j->reply);
	ksr_strbuf_free(&j->events);
	free(j);
}

static void job_release(http_srv *s, job *j)
{
	pthread_mutex_lock(&s->lock);
	job_release_locked(j);
	pthread_mutex_unlock(&s->lock);
}

static job *job_queue(http_srv *s, const char *msg, size_t len, bool sse_ok, bool modern,
                      const char *sid)
{
	job *j = ksr_xcalloc(1, sizeof *j);
	j->srv = s;
	j->modern = modern;
	snprintf(j->sid, sizeof j->sid, "%s", sid);
	j->msg = ksr_xstrndup(msg, len);
	j->len = len;
	j->sse_ok = sse_ok;
	j->refs = 2;
	pthread_mutex_lock(&s->lock);
	if (s->tail)
		s->tail->next = j;
	else
		s->head = j;
	s->tail = j;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
	return j;
}

static void sse_frame(ksr_strbuf *b, const char *line)
{
	ksr_strbuf_add(b, "event: message\ndata: ");
	ksr_strbuf_add(b, line);
	ksr_strbuf_add(b, "\n\n");
}

/* From the worker, while a tool runs. */
static void job_notify(void *ud, const char *line)
{
	job *j = ud;
	pthread_mutex_lock(&j->srv->lock);
	bool send = j->sse_ok && j->refs > 1; /* nobody to stream to once the client left */
	if (send)
		sse_frame(&j->events, line);
	pthread_mutex_unlock(&j->srv->lock);
	if (send)
		ksr_http_server_wake(j->srv->hs);
}

static void *worker(void *arg)
{
	http_srv *s = arg;
	for (;;) {
		pthread_mutex_lock(&s->lock);
		while (!s->head && !s->quit)
			pthread_cond_wait(&s->cond, &s->lock);
		job *j = s->quit ? NULL : s->head;
		if (j && !(s->head = j->next))
			s->tail = NULL;
		/* A 2026 request whose client closed its stream is cancelled: not run. */
		bool gone = j && j->modern && j->refs < 2;
		pthread_mutex_unlock(&s->lock);
		if (!j)
			return NULL;
		int status = 200;
		char *reply = gone ? NULL
		                   : ksr_mcp_handle_in(s->m, j->sid, j->msg, j->len, job_notify, j,
		                                       &status);
		pthread_mutex_lock(&s->lock);
		j->reply = reply;
		j->status = status;
		j->done = true;
		job_release_locked(j);
		pthread_mutex_unlock(&s->lock);
		ksr_http_server_wake(s->hs);
	}
}

/* ---- sessions (service thread) ---------------------------------------------------- */

static void session_new(char out[SID_LEN + 1])
{
	unsigned char r[SID_LEN / 2];
	if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) /* never short for 16 bytes */
		memset(r, 0, sizeof r);
	for (size_t i = 0; i < sizeof r; i++)
		snprintf(out + 2 * i, 3, "%02x", r[i]);
}

/* Is a better eviction victim than b (NULL: none yet)? A session never used
 * after its initialize goes first (what a flood of initializes leaves), the
 * oldest of those; then the least recently used. A client that works with its
 * session keeps it while others initialize. */
static bool evict_before(const session *a, const session *b)
{
	if (!b)
		return true;
	if (!a->used != !b->used)
		return !a->used;
	return a->used ? a->used < b->used : a->created < b->created;
}

/* The slot a new session from peer takes: a free one, unless the peer is at
 * its bound (then one of its own is evicted); with no free slot, the best
 * victim of all. */
static session *session_victim(http_srv *s, const char *peer)
{
	session *free_slot = NULL, *own = NULL, *any = NULL;
	unsigned n_own = 0;
	for (unsigned i = 0; i < MAX_SESSIONS; i++) {
		session *x = &s->sessions[i];
		if (!x->sid[0]) {
			if (!free_slot)
				free_slot = x;
			continue;
		}
		if (!strcmp(x->peer, peer)) {
			n_own++;
			if (evict_before(x, own))
				own = x;
		}
		if (evict_before(x, any))
			any = x;
	}
	if (n_own >= MAX_PEER_SESSIONS)
		return own;
	return free_slot ? free_slot : any;
}

/* An evicted client gets 404 and, as the transport says it must, initializes
 * again. */
static void session_add(http_srv *s, const char *sid, const char *peer)
{
	session *x = session_victim(s, peer);
	*x = (session){.created = ++s->clock};
	snprintf(x->sid, sizeof x->sid, "%s", sid);
	snprintf(x->peer, sizeof x->peer, "%s", peer);
}

static session *session_find(http_srv *s, const char *sid)
{
	for (unsigned i = 0; i < MAX_SESSIONS; i++)
		if (s->sessions[i].sid[0] && !strcmp(s->sessions[i].sid, sid))
			return &s->sessions[i];
	return NULL;
}

/* ---- responses -------------------------------------------------------------------- */

static void waiter_free(http_srv *s, waiter *w)
{
	if (w->prev)
		w->prev->next = w->next;
	else
		s->waiters = w->next;
	if (w->next)
		w->next->prev = w->prev;
	if (w->job)
		job_release(s, w->job);
	free(w->cancel_id);
	free(w);
}

typedef struct hdrs {
	int status;
	const char *sid;
	const char *allow;
	bool auth;
} hdrs;

/* A complete response with a JSON (or empty) body; the connection ends after
 * it (the server's rule: see src/backend/http/server.c, send_now). */
static int respond(ksr_http_conn *hc, hdrs h, const char *body)
{
	ksr_http_header x[3];
	size_t n = 0;
	if (h.sid)
		x[n++] = (ksr_http_header){"mcp-session-id", h.sid};
	if (h.allow)
		x[n++] = (ksr_http_header){"allow", h.allow};
	if (h.auth)
		x[n++] = (ksr_http_header){"www-authenticate", "Bearer"};
	return ksr_http_respond(hc, h.status, "application/json", x, n, body,
	                        body ? strlen(body) : 0);
}

/* An error the transport answers itself: id_json the request's id (NULL: null
 * id); takes data (may be NULL). */
static int respond_error_id(ksr_http_conn *hc, hdrs h, const char *id_json, int code,
                            const char *msg, cJSON *data)
{
	cJSON *o = cJSON_CreateObject(), *e = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "jsonrpc", "2.0");
	cJSON *id = id_json ? cJSON_Parse(id_json) : NULL;
	cJSON_AddItemToObject(o, "id", id ? id : cJSON_CreateNull());
	cJSON_AddNumberToObject(e, "code", code);
	cJSON_AddStringToObject(e, "message", msg);
	if (data)
		cJSON_AddItemToObject(e, "data", data);
	cJSON_AddItemToObject(o, "error", e);
	char *body = ksr_json_print(o, false);
	cJSON_Delete(o);
	h.auth = h.status == 401;
	int rc = respond(hc, h, body);
	free(body);
	return rc;
}

static int respond_error_data(ksr_http_conn *hc, hdrs h, int code, const char *msg, cJSON *data)
{
	return respond_error_id(hc, h, NULL, code, msg, data);
}

static int respond_error(ksr_http_conn *hc, int status, int code, const char *msg)
{
	hdrs h = {.status = status};
	if (status == 405)
		h.allow = "POST, DELETE";
	return respond_error_data(hc, h, code, msg, NULL);
}

/* Did an initialize succeed (a result, not an error)? */
static bool reply_is_result(const char *reply)
{
	cJSON *r = cJSON_Parse(reply);
	bool ok = cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(r, "result"));
	cJSON_Delete(r);
	return ok;
}

/* Move what the worker produced into the response. */
static void take_job(http_srv *s, waiter *w)
{
	job *j = w->job;
	pthread_mutex_lock(&s->lock);
	ksr_strbuf ev = j->events;
	j->events = (ksr_strbuf){0};
	bool done = j->done;
	int status = j->status ? j->status : 200;
	char *reply = j->reply;
	j->reply = NULL;
	pthread_mutex_unlock(&s->lock);
	int rc = 0;
	if (ev.len && !w->sse) { /* a notification before the result: stream from now on */
		w->sse = true;
		rc = ksr_http_stream_begin(w->hc, 200, "text/event-stream", NULL, 0);
	}
	if (ev.len && !rc)
		ksr_http_stream_write(w->hc, ev.p, ev.len);
	ksr_strbuf_free(&ev);
	if (done) {
		ksr_http_conn *hc = w->hc;
		bool sse = w->sse;
		char sid[SID_LEN + 1];
		if (w->new_sid[0] && reply && reply_is_result(reply))
			session_add(s, w->new_sid, w->peer);
		else
			w->new_sid[0] = '\0';
		memcpy(sid, w->new_sid, sizeof sid);
		ksr_http_conn_set_user(hc, NULL);
		waiter_free(s, w); /* lets go of the job */
		if (sse) {
			if (reply) {
				ksr_strbuf b = {0};
				sse_frame(&b, reply);
				ksr_http_stream_write(hc, b.p, b.len);
				ksr_strbuf_free(&b);
			}
			ksr_http_stream_end(hc);
		} else if (!rc) {
			/* No reply is due (a request cancelled while it ran): 202, no body. */
			respond(hc,
			        (hdrs){.status = reply ? status : 202, .sid = sid[0] ? sid : NULL},
			        reply);
		}
	}
	free(reply);
}

/* ---- requests --------------------------------------------------------------------- */

/* The request headers read below. */
static const char *const wanted_headers[] = {
        "host",
        "origin",
        "authorization",
        "content-length",
        "content-type",
        "accept",
        "transfer-encoding",
        "mcp-session-id",
        "mcp-protocol-version",
        "mcp-method",
        "mcp-name",
        NULL,
};

/* A header's value without the optional whitespace around it (RFC 9110 5.5:
 * OWS is no part of a field value; the conformance suite sends "  name  ");
 * NULL when absent. */
static const char *hdr_trimmed(const ksr_http_request *r, const char *name, size_t *len)
{
	const char *v = ksr_http_request_header(r, name);
	*len = 0;
	if (!v)
		return NULL;
	while (*v == ' ' || *v == '\t')
		v++;
	size_t n = strlen(v);
	while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	*len = n;
	return v;
}

/* A header into buf, trimmed: "" when absent, or too long for buf (an
 * overlong value counts as none, as it did when this file copied lws's
 * headers itself). */
static void copy_hdr(const ksr_http_request *r, const char *name, char *buf, size_t n)
{
	size_t len;
	const char *v = hdr_trimmed(r, name, &len);
	if (!v || len >= n)
		len = 0;
	memcpy(buf, v ? v : "", len);
	buf[len] = '\0';
}

/* A header, trimmed, as a string of its own (NULL when absent). */
static char *dup_hdr(const ksr_http_request *r, const char *name)
{
	size_t len;
	const char *v = hdr_trimmed(r, name, &len);
	if (!v)
		return NULL;
	char *t = ksr_xmalloc(len + 1);
	memcpy(t, v, len);
	t[len] = '\0';
	return t;
}

static const char *const versions[] = {KSR_MCP_PROTOCOL_MODERN, KSR_MCP_PROTOCOL, "2025-06-18",
                                       "2025-03-26"};

/* No header: a 2025-03-26 client (the transport allows it). */
static bool version_ok(const char *v)
{
	for (size_t i = 0; v[0] && i < sizeof versions / sizeof *versions; i++)
		if (!strcmp(v, versions[i]))
			return true;
	return !v[0];
}

/* The answer to an unknown MCP-Protocol-Version (2026-07-28's
 * UnsupportedProtocolVersionError: a dual-era client retries with one listed). */
static const char bad_version[] = "Unsupported protocol version (MCP-Protocol-Version)";

static int respond_unsupported(ksr_http_conn *hc, const char *asked, const char *id_json)
{
	cJSON *data = cJSON_CreateObject();
	cJSON *sup = cJSON_AddArrayToObject(data, "supported");
	for (size_t i = 0; i < sizeof versions / sizeof *versions; i++)
		cJSON_AddItemToArray(sup, cJSON_CreateString(versions[i]));
	cJSON_AddStringToObject(data, "requested", asked);
	return respond_error_id(hc, (hdrs){.status = 400}, id_json, -32022, bad_version, data);
}

static bool modern_header(const ksr_http_request *r)
{
	char v[64];
	copy_hdr(r, "mcp-protocol-version", v, sizeof v);
	return !strcmp(v, KSR_MCP_PROTOCOL_MODERN);
}

/* Host/Origin/token: the checks every method passes first. 0 = allowed. */
static int check_access(http_srv *s, const ksr_http_request *r, const char **why)
{
	char buf[1024];
	if (s->addr.loopback) { /* DNS rebinding: a page's name resolving to us */
		copy_hdr(r, "host", buf, sizeof buf);
		if (buf[0] && !ksr_mcp_http_host_is_loopback(buf))
			return *why = "Host is not a loopback name", 403;
	}
	copy_hdr(r, "origin", buf, sizeof buf);
	if (ksr_http_request_header(r, "origin") && !ksr_mcp_http_origin_is_loopback(buf))
		return *why = "Origin not allowed", 403;
	if (s->o->token && s->o->token[0]) {
		copy_hdr(r, "authorization", buf, sizeof buf);
		if (!ksr_mcp_http_bearer_ok(buf, s->o->token))
			return *why = "missing or wrong bearer token", 401;
	}
	return 0;
}

/* POST headers: size, media types, protocol revision. 0 = go on. */
static int check_post(http_srv *s, const ksr_http_request *r, const char **why, bool *sse_ok)
{
	char buf[512];
	copy_hdr(r, "content-length", buf, sizeof buf);
	unsigned long long clen = buf[0] ? strtoull(buf, NULL, 10) : 0;
	if (clen > s->max_body)
		return *why = "request body too large", 413;
	copy_hdr(r, "content-type", buf, sizeof buf);
	if (buf[0] && strncasecmp(buf, "application/json", 16))
		return *why = "Content-Type must be application/json", 415;
	copy_hdr(r, "accept", buf, sizeof buf);
	*sse_ok = buf[0] && ksr_mcp_http_accepts(buf, "text/event-stream");
	if (!ksr_mcp_http_accepts(buf, "application/json") && !*sse_ok)
		return *why = "Accept must admit application/json or text/event-stream", 406;
	copy_hdr(r, "mcp-protocol-version", buf, sizeof buf);
	if (!version_ok(buf))
		return *why = bad_version, 400;
	return 0;
}

/* What the request's head earns, in order: 404, 403/401, 405, 411, then the
 * POST checks (413 by Content-Length, 415, 406, 400). 0 = go on. The same
 * head gives the same answer in on_head and on_request. */
static int head_status(http_srv *s, const ksr_http_request *r, const char **why, bool *sse_ok)
{
	int st = strcmp(r->path, "/mcp") ? 404 : check_access(s, r, why);
	if (st == 404)
		*why = "not found (the endpoint is /mcp)";
	bool post = !strcmp(r->method, "POST"), del = !strcmp(r->method, "DELETE");
	if (!st && !post && !del)
		st = 405, *why = "POST JSON-RPC messages; no standalone SSE stream (GET)";
	if (!st && del && modern_header(r)) /* 2026-07-28 has no sessions to end */
		st = 405, *why = "2026-07-28 has no sessions: nothing to DELETE";
	/* lws 4.1.6 (under the backend's server) does not decode a chunked request
	 * body (its bytes would come as the body, framing and all, and it would wait
	 * for 100 MB of them); a POST without Content-Length it takes as 100 MB long
	 * too. Either is refused at once and the connection closed without reading
	 * on: its end cannot be found. */
	bool unframed = post && (ksr_http_request_header(r, "transfer-encoding") ||
	                         !ksr_http_request_header(r, "content-length"));
	if (!st && unframed)
		st = 411, *why = "a POST needs Content-Length (no Transfer-Encoding: chunked)";
	if (!st && post)
		st = check_post(s, r, why, sse_ok);
	return st;
}

static void on_delete(http_srv *s, ksr_http_conn *hc, const ksr_http_request *r)
{
	char sid[SID_LEN + 8];
	copy_hdr(r, "mcp-session-id", sid, sizeof sid);
	if (!sid[0]) {
		respond_error(hc, 400, -32000, "Mcp-Session-Id header is required");
		return;
	}
	session *x = session_find(s, sid);
	if (!x) {
		respond_error(hc, 404, -32001, "session not found");
		return;
	}
	x->sid[0] = '\0';
	respond(hc, (hdrs){.status = 200}, NULL);
}

static ksr_http_head_action on_head(void *ud, ksr_http_conn *hc, const ksr_http_request *r)
{
	http_srv *s = ud;
	const char *why = NULL;
	bool sse_ok = false;
	int st = head_status(s, r, &why, &sse_ok);
	if (strcmp(r->method, "POST") || st == 411) {
		if (st == 405 && modern_header(r))
			respond_error_data(hc, (hdrs){.status = 405, .allow = "POST"}, -32000, why,
			                   NULL);
		else if (st)
			respond_error(hc, st, -32000, why);
		else
			on_delete(s, hc, r);
		return KSR_HTTP_ANSWERED;
	}
	/* A POST is answered once its body is in (read; dropped when refused, but
	 * for an unknown version: its error carries the request's id). */
	return st && why != bad_version ? KSR_HTTP_SKIP_BODY : KSR_HTTP_READ_BODY;
}

/* What classify needs from a message, read before the parsed body is freed
 * (keeping a pointer into it past cJSON_Delete once answered tools/call 202:
 * the reparse in ksr_mcp_cancelled_id reuses the freed nodes). */
typedef struct msg_info {
	bool obj, request, init, modern;
	char method[128];
	char meta_version[64];
	const char *name_key; /* the params member Mcp-Name mirrors, or NULL */
	char *name;           /* its value (a string), or NULL */
	char *id_json;        /* a request's id, compact JSON */
} msg_info;

/* The member Mcp-Name mirrors for a method (2026-07-28's transport and the
 * tasks extension's routing rule); NULL: none. */
static const char *name_key_of(const char *method)
{
	if (!strcmp(method, "tools/call") || !strcmp(method, "prompts/get"))
		return "name";
	if (!strcmp(method, "resources/read"))
		return "uri";
	/* The tasks methods served; tasks/list and tasks/result (gone from the
	 * extension) expect no Mcp-Name and end -32601. */
	if (!strcmp(method, "tasks/get") || !strcmp(method, "tasks/cancel") ||
	    !strcmp(method, "tasks/update"))
		return "taskId";
	return NULL;
}

static void read_info(const cJSON *msg, msg_info *in)
{
	in->obj = cJSON_IsObject(msg);
	const cJSON *method = cJSON_GetObjectItemCaseSensitive(msg, "method");
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(msg, "params");
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(params, "_meta");
	const cJSON *ver = cJSON_GetObjectItemCaseSensitive(meta, KSR_MCP_META_VERSION);
	if (!cJSON_IsString(method))
		return;
	in->request = id != NULL;
	in->init = !strcmp(method->valuestring, "initialize");
	in->modern = ver != NULL; /* as the core decides (server.c, is_modern) */
	snprintf(in->method, sizeof in->method, "%s", method->valuestring);
	if (cJSON_IsString(ver))
		snprintf(in->meta_version, sizeof in->meta_version, "%s", ver->valuestring);
	in->name_key = name_key_of(method->valuestring);
	const cJSON *name =
	        in->name_key ? cJSON_GetObjectItemCaseSensitive(params, in->name_key) : NULL;
	if (cJSON_IsString(name))
		in->name = ksr_xstrdup(name->valuestring);
	in->id_json = id ? ksr_json_print(id, false) : NULL;
}

/* Does Mcp-Name (base64 sentinel decoded) name the body's target? */
static bool same_name(const ksr_http_request *r, const msg_info *in)
{
	char *name = dup_hdr(r, "mcp-name");
	size_t len = name ? strlen(name) + 1 : 1;
	char *decoded = ksr_xmalloc(len);
	bool same = name && ksr_mcp_http_header_value(name, decoded, len) && in->name &&
	            !strcmp(decoded, in->name);
	free(decoded);
	free(name);
	return same;
}

/* The 2026-07-28 mirrored headers against the body: NULL when they match,
 * else what does not, with its code: HeaderMismatch -32020, or -32602 for the
 * 2026 header on a body whose _meta names no version (a 2026 request missing
 * a required field: basic/index, "Invalid params", as the conformance suite
 * checks). Either is HTTP 400. */
static const char *header_mismatch(const ksr_http_request *r, const msg_info *in, int *code,
                                   char *why, size_t n)
{
	char ver[64], method[160];
	copy_hdr(r, "mcp-protocol-version", ver, sizeof ver);
	copy_hdr(r, "mcp-method", method, sizeof method);
	*code = -32020;
	if (!in->modern) {
		*code = -32602;
		return modern_header(r) ? "Invalid params: the MCP-Protocol-Version header is "
		                          "2026-07-28 but _meta has no "
		                          "io.modelcontextprotocol/protocolVersion"
		                        : NULL;
	}
	if (strcmp(ver, in->meta_version))
		return "Header mismatch: MCP-Protocol-Version is missing or differs from "
		       "_meta io.modelcontextprotocol/protocolVersion";
	if (in->request && strcmp(method, in->method)) {
		snprintf(why, n, "Header mismatch: Mcp-Method is missing or differs from '%.100s'",
		         in->method);
		return why;
	}
	if (!in->request || !in->name_key || same_name(r, in))
		return NULL;
	snprintf(why, n, "Header mismatch: Mcp-Name is missing or differs from params.%s",
	         in->name_key);
	return why;
}

/* The session a 2025 request belongs to, into key (an initialize's is the
 * one it mints, new_sid; a 2026-07-28 request's is ""): 0, or the error
 * answered. */
static int check_session(http_srv *s, ksr_http_conn *hc, const ksr_http_request *r,
                         const msg_info *in, char new_sid[SID_LEN + 1], char key[SID_LEN + 1])
{
	char sid[SID_LEN + 8];
	copy_hdr(r, "mcp-session-id", sid, sizeof sid);
	key[0] = '\0';
	if (in->modern) /* stateless: an inbound session header is ignored */
		return 0;
	if (in->init) {
		session_new(new_sid);
		memcpy(key, new_sid, SID_LEN + 1);
		return 0;
	}
	if (!sid[0])
		return respond_error(hc, 400, -32000, "Mcp-Session-Id header is required"), -1;
	session *x = session_find(s, sid);
	if (!x)
		return respond_error(hc, 404, -32001, "session not found"), -1;
	x->used = ++s->clock;
	memcpy(key, x->sid, SID_LEN + 1);
	return 0;
}

static void info_clear(msg_info *in)
{
	free(in->name);
	free(in->id_json);
}

/* One complete POST body: classify, check headers or the session, queue or
 * answer (an answer now, or a queued job with a waiter as the connection's
 * user). */
static void classify(http_srv *s, ksr_http_conn *hc, const ksr_http_request *r, bool sse_ok)
{
	cJSON *msg = r->body ? cJSON_ParseWithLength(r->body, r->body_len) : NULL;
	if (!msg) {
		respond_error(hc, 400, -32700, "parse error: the body is not JSON");
		return;
	}
	msg_info in = {0};
	read_info(msg, &in);
	cJSON_Delete(msg);
	char new_sid[SID_LEN + 1] = "", key[SID_LEN + 1] = "", why[200];
	int code = 0;
	const char *mismatch = in.obj ? header_mismatch(r, &in, &code, why, sizeof why) : NULL;
	if (!in.obj)
		respond_error(hc, 400, -32600, "one JSON-RPC message per POST (no batches)");
	else if (mismatch)
		respond_error_id(hc, (hdrs){.status = 400}, in.id_json, code, mismatch, NULL);
	if (!in.obj || mismatch || check_session(s, hc, r, &in, new_sid, key) < 0) {
		info_clear(&in);
		return;
	}
	char *cancel = ksr_mcp_cancelled_id(r->body, r->body_len);
	if (cancel) { /* applied now: the worker may be busy with that very request */
		ksr_mcp_cancel(s->m, cancel);
		free(cancel);
		respond(hc, (hdrs){.status = 202}, NULL);
		info_clear(&in);
		return;
	}
	job *j = job_queue(s, r->body, r->body_len, sse_ok, in.modern, key);
	if (!in.request) {
		/* A notification or a client's response: accepted now, handled in order. */
		job_release(s, j);
		respond(hc, (hdrs){.status = 202}, NULL);
		info_clear(&in);
		return;
	}
	waiter *w = ksr_xcalloc(1, sizeof *w);
	w->hc = hc;
	w->job = j;
	if (in.modern)
		w->cancel_id = in.id_json, in.id_json = NULL;
	memcpy(w->new_sid, new_sid, sizeof w->new_sid);
	snprintf(w->peer, sizeof w->peer, "%s", r->peer ? r->peer : "");
	w->next = s->waiters;
	if (s->waiters)
		s->waiters->prev = w;
	s->waiters = w;
	ksr_http_conn_set_user(hc, w);
	info_clear(&in);
}

/* A request body's id as compact JSON (NULL: none, or not JSON). */
static char *body_id_json(const ksr_http_request *r)
{
	cJSON *msg = r->body ? cJSON_ParseWithLength(r->body, r->body_len) : NULL;
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
	char *out = cJSON_IsString(id) || cJSON_IsNumber(id) ? ksr_json_print(id, false) : NULL;
	cJSON_Delete(msg);
	return out;
}

static void on_request(void *ud, ksr_http_conn *hc, const ksr_http_request *r)
{
	http_srv *s = ud;
	const char *why = NULL;
	bool sse_ok = false;
	int st = head_status(s, r, &why, &sse_ok);
	if (!st && r->body_too_large) /* no Content-Length said so */
		st = 413, why = "request body too large";
	if (why == bad_version) {
		char v[64];
		copy_hdr(r, "mcp-protocol-version", v, sizeof v);
		char *id = body_id_json(r);
		respond_unsupported(hc, v, id);
		free(id);
	} else if (st)
		respond_error(hc, st, st == 413 ? -32600 : -32000, why);
	else
		classify(s, hc, r, sse_ok);
}

static void on_wake(void *ud)
{
	http_srv *s = ud;
	for (waiter *w = s->waiters, *next; w; w = next) {
		next = w->next;
		take_job(s, w);
	}
}

/* The client left (or the server is going): a 2025 request's job is let go,
 * not cancelled; a 2026-07-28 one's is cancelled (its transport: closing the
 * response stream is the cancellation). */
static void on_close(void *ud, ksr_http_conn *hc, void *user)
{
	(void)hc;
	http_srv *s = ud;
	waiter *w = user;
	pthread_mutex_lock(&s->lock);
	bool running = w->cancel_id && w->job && !w->job->done;
	pthread_mutex_unlock(&s->lock);
	if (running)
		ksr_mcp_cancel(s->m, w->cancel_id);
	waiter_free(s, w);
}

/* ---- the loop --------------------------------------------------------------------- */

static void stop_worker(http_srv *s, pthread_t *wk)
{
	pthread_mutex_lock(&s->lock);
	s->quit = true;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	if (wk)
		pthread_join(*wk, NULL);
}

static int check_opts(http_srv *s, const ksr_mcp_http_opts *o, ksr_err *err)
{
	if (ksr_mcp_http_parse_addr(o->listen, &s->addr, err))
		return -1;
	if (!s->addr.loopback && !(o->token && o->token[0]))
		return ksr_err_set(
		        err,
		        "--http %s is not a loopback address: a bearer token is required "
		        "(KASM_RUNTIME_MCP_TOKEN or --token)",
		        o->listen);
	s->max_body = o->max_body ? o->max_body : KSR_MCP_MAX_MESSAGE;
	return 0;
}

int ksr_mcp_serve_http(ksr_mcp *m, const ksr_mcp_http_opts *o, ksr_err *err)
{
	http_srv *s = ksr_xcalloc(1, sizeof *s);
	s->m = m;
	s->o = o;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	pthread_t wk;
	bool have_wk = false;
	int rc = -1;
	if (!m || !o || check_opts(s, o, err))
		goto cleanup;
	ksr_http_server_opts so = {
	        .host = s->addr.host,
	        .port = s->addr.port,
	        .max_body = s->max_body,
	        .body_timeout_s = BODY_TIMEOUT_S,
	        .headers = wanted_headers,
	        .on_head = on_head,
	        .on_request = on_request,
	        .on_wake = on_wake,
	        .on_close = on_close,
	        .ud = s,
	};
	if (!(s->hs = ksr_http_server_create(&so, err)))
		goto cleanup;
	have_wk = pthread_create(&wk, NULL, worker, s) == 0;
	if (!have_wk) {
		ksr_err_set(err, "cannot start the HTTP transport's threads");
		goto cleanup;
	}
	if (o->on_listen)
		o->on_listen(o->ud, s->addr.host, ksr_http_server_port(s->hs));
	/* Until SIGTERM/SIGINT: an MCP cancellation does not end the server. */
	if (ksr_http_server_serve(s->hs, KSR_DEADLINE_NEVER, err) == 0)
		rc = 0;
cleanup:
	stop_worker(s, have_wk ? &wk : NULL);
	ksr_http_server_destroy(s->hs); /* closes connections: their jobs are let go */
	while (s->head) {
		job *j = s->head;
		s->head = j->next;
		job_release_locked(j); /* the worker never took it */
	}
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s);
	return rc;
}
