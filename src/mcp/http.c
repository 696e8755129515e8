/* The Streamable HTTP transport (include/ksr/mcp_http.h) on libwebsockets'
 * HTTP server.
 *
 * Threads: the service thread runs lws and owns every connection; one worker
 * thread runs ksr_mcp_handle for the queued messages in order (a tool may run
 * for minutes, and the core takes one call at a time); a watcher thread waits
 * on the cancel descriptor and wakes the service loop on SIGTERM/SIGINT.
 * lws_cancel_service is the only lws call made off the service thread (it is
 * the one lws documents as safe there): the worker posts output into the job
 * and wakes the loop, whose LWS_CALLBACK_EVENT_WAIT_CANCELLED asks for a
 * writeable callback on each connection with a job. A job is shared by its
 * connection and the worker and freed by whichever lets go last, so a client
 * that hangs up mid-call costs nothing (a disconnect is not a cancellation). */
#include <errno.h>
#include <fcntl.h>
#include <libwebsockets.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <unistd.h>

#include <cJSON.h>

#include "ksr/strbuf.h"
#include "ksr/deadline.h"
#include "ksr/mcp_http.h"

#define CHUNK        65536
#define MAX_SESSIONS 256
#define SID_LEN      32
/* A body this much over the cap is not read to the end: the connection closes. */
#define DISCARD_LIMIT (256u * 1024u * 1024u)
/* A request whose body stalls this long (no byte for this many seconds; or its
 * headers never end) is dropped: lws's PENDING_TIMEOUT_HTTP_CONTENT. */
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
	bool done;
} job;

typedef struct conn {
	struct conn *prev, *next; /* connections with a job (service thread only) */
	bool listed;
	struct lws *wsi;
	/* the request */
	int reject; /* HTTP status to answer once the body is in (0: none) */
	const char *reject_msg;
	ksr_strbuf body;
	size_t body_seen;
	bool post, sse_ok;
	char sid[SID_LEN + 8];     /* Mcp-Session-Id sent by the client */
	char new_sid[SID_LEN + 1]; /* issued when this is an initialize */
	job *job;
	/* the response: status line, headers and body as one byte stream */
	ksr_strbuf out;
	size_t out_pos;
	bool responding, sse, final, finishing;
} conn;

struct http_srv {
	ksr_mcp *m;
	struct lws_context *ctx;
	const ksr_mcp_http_opts *o;
	ksr_mcp_http_addr addr;
	size_t max_body;
	atomic_bool stop;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	job *head, *tail;
	bool quit;
	conn *conns;
	char sessions[MAX_SESSIONS][SID_LEN + 1];
	unsigned n_sessions, next_session;
	unsigned char scratch[LWS_PRE + CHUNK];
	int stop_pipe[2];
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

static job *job_queue(http_srv *s, const char *msg, size_t len, bool sse_ok)
{
	job *j = ksr_xcalloc(1, sizeof *j);
	j->srv = s;
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
		lws_cancel_service(j->srv->ctx);
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
		pthread_mutex_unlock(&s->lock);
		if (!j)
			return NULL;
		char *reply = ksr_mcp_handle(s->m, j->msg, j->len, job_notify, j);
		pthread_mutex_lock(&s->lock);
		j->reply = reply;
		j->done = true;
		job_release_locked(j);
		pthread_mutex_unlock(&s->lock);
		lws_cancel_service(s->ctx);
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

static void session_add(http_srv *s, const char *sid)
{
	/* A full table forgets its oldest session: that client gets 404 and, as
	 * the transport says it must, initializes again. */
	snprintf(s->sessions[s->next_session], SID_LEN + 1, "%s", sid);
	s->next_session = (s->next_session + 1) % MAX_SESSIONS;
	if (s->n_sessions < MAX_SESSIONS)
		s->n_sessions++;
}

static int session_find(http_srv *s, const char *sid)
{
	for (unsigned i = 0; i < MAX_SESSIONS; i++)
		if (s->sessions[i][0] && !strcmp(s->sessions[i], sid))
			return (int)i;
	return -1;
}

/* ---- responses -------------------------------------------------------------------- */

static void conn_list(http_srv *s, conn *c, bool on)
{
	if (on == c->listed)
		return;
	if (on) {
		c->prev = NULL;
		c->next = s->conns;
		if (s->conns)
			s->conns->prev = c;
		s->conns = c;
	} else {
		if (c->prev)
			c->prev->next = c->next;
		else
			s->conns = c->next;
		if (c->next)
			c->next->prev = c->prev;
	}
	c->listed = on;
}

typedef struct hdrs {
	int status;
	const char *ctype;
	lws_filepos_t len; /* LWS_ILLEGAL_HTTP_CONTENT_LEN: a stream, then close */
	const char *sid;
	const char *allow;
	bool auth;
	bool close; /* the connection ends after this response */
} hdrs;

static int add_hdr(struct lws *wsi, const char *name, const char *v, unsigned char **p,
                   unsigned char *end)
{
	return lws_add_http_header_by_name(wsi, (const unsigned char *)name,
	                                   (const unsigned char *)v, (int)strlen(v), p, end);
}

/* Status line and headers, appended to the connection's output. */
static int put_headers(conn *c, const hdrs *h)
{
	unsigned char buf[1024], *p = buf, *end = buf + sizeof buf;
	if (lws_add_http_common_headers(c->wsi, (unsigned)h->status, h->ctype, h->len, &p, end))
		return -1;
	if (h->sid && add_hdr(c->wsi, "mcp-session-id:", h->sid, &p, end))
		return -1;
	if (h->allow && add_hdr(c->wsi, "allow:", h->allow, &p, end))
		return -1;
	if (h->auth && add_hdr(c->wsi, "www-authenticate:", "Bearer", &p, end))
		return -1;
	if (h->close && add_hdr(c->wsi, "connection:", "close", &p, end))
		return -1;
	if (h->len == LWS_ILLEGAL_HTTP_CONTENT_LEN &&
	    add_hdr(c->wsi, "cache-control:", "no-cache", &p, end))
		return -1;
	if (lws_finalize_http_header(c->wsi, &p, end))
		return -1;
	ksr_strbuf_addn(&c->out, buf, (size_t)(p - buf));
	c->responding = true;
	return 0;
}

/* A complete response with a JSON (or empty) body. */
static int respond(conn *c, hdrs h, const char *body)
{
	size_t n = body ? strlen(body) : 0;
	h.ctype = h.ctype ? h.ctype : "application/json";
	h.close = true;
	h.len = n;
	if (put_headers(c, &h))
		return -1;
	if (n)
		ksr_strbuf_addn(&c->out, body, n);
	c->final = true;
	return 0;
}

static int respond_error(conn *c, int status, int code, const char *msg)
{
	cJSON *o = cJSON_CreateObject(), *e = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "jsonrpc", "2.0");
	cJSON_AddNullToObject(o, "id");
	cJSON_AddNumberToObject(e, "code", code);
	cJSON_AddStringToObject(e, "message", msg);
	cJSON_AddItemToObject(o, "error", e);
	char *body = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	hdrs h = {.status = status, .auth = status == 401};
	if (status == 405)
		h.allow = "POST, DELETE";
	int rc = respond(c, h, body);
	free(body);
	return rc;
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
static int take_job(http_srv *s, conn *c)
{
	job *j = c->job;
	pthread_mutex_lock(&s->lock);
	ksr_strbuf ev = j->events;
	j->events = (ksr_strbuf){0};
	bool done = j->done;
	char *reply = j->reply;
	j->reply = NULL;
	pthread_mutex_unlock(&s->lock);
	int rc = 0;
	if (ev.len && !c->sse) { /* a notification before the result: stream from now on */
		c->sse = true;
		rc = put_headers(c, &(hdrs){.status = 200,
		                            .ctype = "text/event-stream",
		                            .len = LWS_ILLEGAL_HTTP_CONTENT_LEN});
	}
	if (ev.len)
		ksr_strbuf_addn(&c->out, ev.p, ev.len);
	ksr_strbuf_free(&ev);
	if (done) {
		job_release(s, j);
		c->job = NULL;
		conn_list(s, c, false);
		if (c->new_sid[0] && reply && reply_is_result(reply))
			session_add(s, c->new_sid);
		else
			c->new_sid[0] = '\0';
		if (c->sse) {
			if (reply)
				sse_frame(&c->out, reply);
			c->final = true;
		} else if (!rc) {
			/* No reply is due (a request cancelled while it ran): 202, no body. */
			rc = respond(c,
			             (hdrs){.status = reply ? 200 : 202,
			                    .sid = c->new_sid[0] ? c->new_sid : NULL},
			             reply);
		}
	}
	free(reply);
	return rc;
}

static void conn_reset(http_srv *s, conn *c)
{
	if (c->job) {
		job_release(s, c->job);
		c->job = NULL;
	}
	conn_list(s, c, false);
	ksr_strbuf_free(&c->body);
	ksr_strbuf_free(&c->out);
	struct lws *wsi = c->wsi;
	memset(c, 0, sizeof *c);
	c->wsi = wsi;
}

/* Answer inside LWS_CALLBACK_HTTP or ..._BODY_COMPLETION (rejections, 202s, DELETE),
 * then close the connection. Every response says "connection: close" and ends its
 * connection (after the request body was read). A next POST on a kept-alive
 * connection went wrong in earlier tests (its body never reached
 * LWS_CALLBACK_HTTP_BODY, or ..._BODY_COMPLETION came again and again): nothing
 * here calls lws_http_transaction_completed, so lws stays in its body state with
 * nothing left to read and hands the next request's bytes to the body-complete
 * path. Keep-alive would need that call after each response. A loopback connect
 * costs tens of microseconds. */
static int send_now(http_srv *s, conn *c, int rc)
{
	if (rc)
		return -1;
	if (c->out.len > CHUNK) { /* not for the short answers that come here */
		lws_callback_on_writable(c->wsi);
		return 0;
	}
	memcpy(s->scratch + LWS_PRE, c->out.p, c->out.len);
	if (lws_write(c->wsi, s->scratch + LWS_PRE, c->out.len, LWS_WRITE_HTTP) != (int)c->out.len)
		return -1;
	conn_reset(s, c);
	return -1;
}

/* Write the next piece of the response; finish the transaction after it. */
static int on_writeable(http_srv *s, conn *c)
{
	if (c->finishing) {
		conn_reset(s, c);
		return -1; /* every response ends its connection: see send_now */
	}
	if (c->job && take_job(s, c))
		return -1;
	size_t left = c->out.len - c->out_pos;
	if (left) {
		size_t n = left > CHUNK ? CHUNK : left;
		memcpy(s->scratch + LWS_PRE, c->out.p + c->out_pos, n);
		if (lws_write(c->wsi, s->scratch + LWS_PRE, n, LWS_WRITE_HTTP) != (int)n)
			return -1;
		c->out_pos += n;
		left -= n;
	}
	if (!left && c->out_pos) { /* all sent so far: drop it */
		c->out.len = c->out_pos = 0;
	}
	if (left)
		lws_callback_on_writable(c->wsi);
	else if (c->final) {
		c->finishing = true; /* next writeable: lws has flushed what it buffered */
		lws_callback_on_writable(c->wsi);
	}
	return 0;
}

/* ---- requests --------------------------------------------------------------------- */

static void copy_hdr(struct lws *wsi, enum lws_token_indexes t, char *buf, int n)
{
	if (lws_hdr_total_length(wsi, t) <= 0 || lws_hdr_copy(wsi, buf, n, t) < 0)
		buf[0] = '\0';
}

static void copy_custom(struct lws *wsi, const char *name, char *buf, int n)
{
	int len = lws_hdr_custom_length(wsi, name, (int)strlen(name));
	if (len <= 0 || len >= n || lws_hdr_custom_copy(wsi, buf, n, name, (int)strlen(name)) < 0)
		buf[0] = '\0';
}

static bool version_ok(const char *v)
{
	return !v[0] || !strcmp(v, KSR_MCP_PROTOCOL) || !strcmp(v, "2025-06-18") ||
	       !strcmp(v, "2025-03-26");
}

/* Host/Origin/token: the checks every method passes first. 0 = allowed. */
static int check_access(http_srv *s, struct lws *wsi, const char **why)
{
	char buf[1024];
	if (s->addr.loopback) { /* DNS rebinding: a page's name resolving to us */
		copy_hdr(wsi, WSI_TOKEN_HOST, buf, sizeof buf);
		if (buf[0] && !ksr_mcp_http_host_is_loopback(buf))
			return *why = "Host is not a loopback name", 403;
	}
	copy_hdr(wsi, WSI_TOKEN_ORIGIN, buf, sizeof buf);
	if (lws_hdr_total_length(wsi, WSI_TOKEN_ORIGIN) > 0 &&
	    !ksr_mcp_http_origin_is_loopback(buf))
		return *why = "Origin not allowed", 403;
	if (s->o->token && s->o->token[0]) {
		copy_hdr(wsi, WSI_TOKEN_HTTP_AUTHORIZATION, buf, sizeof buf);
		if (!ksr_mcp_http_bearer_ok(buf, s->o->token))
			return *why = "missing or wrong bearer token", 401;
	}
	return 0;
}

/* POST headers: size, media types, protocol revision. 0 = go on. */
static int check_post(http_srv *s, conn *c, struct lws *wsi, const char **why)
{
	char buf[512];
	copy_hdr(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH, buf, sizeof buf);
	unsigned long long clen = buf[0] ? strtoull(buf, NULL, 10) : 0;
	if (clen > s->max_body)
		return *why = "request body too large", 413;
	copy_hdr(wsi, WSI_TOKEN_HTTP_CONTENT_TYPE, buf, sizeof buf);
	if (buf[0] && strncasecmp(buf, "application/json", 16))
		return *why = "Content-Type must be application/json", 415;
	copy_hdr(wsi, WSI_TOKEN_HTTP_ACCEPT, buf, sizeof buf);
	c->sse_ok = buf[0] && ksr_mcp_http_accepts(buf, "text/event-stream");
	if (!ksr_mcp_http_accepts(buf, "application/json") && !c->sse_ok)
		return *why = "Accept must admit application/json or text/event-stream", 406;
	copy_custom(wsi, "mcp-protocol-version:", buf, sizeof buf);
	if (!version_ok(buf))
		return *why = "unsupported MCP-Protocol-Version", 400;
	return 0;
}

static int on_delete(http_srv *s, conn *c)
{
	if (!c->sid[0])
		return send_now(s, c,
		                respond_error(c, 400, -32000, "Mcp-Session-Id header is required"));
	int i = session_find(s, c->sid);
	if (i < 0)
		return send_now(s, c, respond_error(c, 404, -32001, "session not found"));
	s->sessions[i][0] = '\0';
	return send_now(s, c, respond(c, (hdrs){.status = 200}, NULL));
}

static int on_http(http_srv *s, conn *c, struct lws *wsi, const char *path)
{
	conn_reset(s, c);
	c->wsi = wsi;
	copy_custom(wsi, "mcp-session-id:", c->sid, sizeof c->sid);
	const char *why = NULL;
	int st = strcmp(path, "/mcp") ? 404 : check_access(s, wsi, &why);
	if (st == 404)
		why = "not found (the endpoint is /mcp)";
	c->post = lws_hdr_total_length(wsi, WSI_TOKEN_POST_URI) > 0;
	bool del = lws_hdr_total_length(wsi, WSI_TOKEN_DELETE_URI) > 0;
	if (!st && !c->post && !del)
		st = 405, why = "POST JSON-RPC messages; no standalone SSE stream (GET)";
	/* lws 4.1.6 does not decode a chunked request body (its bytes would come as the
	 * body, framing and all, and it would wait for 100 MB of them); a POST without
	 * Content-Length it takes as 100 MB long too. Either is refused at once and the
	 * connection closed without reading on: its end cannot be found. */
	bool unframed =
	        c->post && (lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING) > 0 ||
	                    lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH) <= 0);
	if (!st && unframed)
		st = 411, why = "a POST needs Content-Length (no Transfer-Encoding: chunked)";
	if (!st && c->post)
		st = check_post(s, c, wsi, &why);
	if (!c->post || st == 411)
		return st ? send_now(s, c, respond_error(c, st, -32000, why)) : on_delete(s, c);
	c->reject = st; /* a POST is answered once its body is in (read, then dropped) */
	c->reject_msg = why;
	/* A body that stops coming ends its connection (lws re-arms this after each
	 * piece of it, and clears it when the body is complete). */
	lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, BODY_TIMEOUT_S);
	return 0;
}

static int on_body(http_srv *s, conn *c, const char *in, size_t len)
{
	c->body_seen += len;
	if (c->body_seen > DISCARD_LIMIT)
		return -1;
	if (c->reject)
		return 0;
	if (c->body.len + len > s->max_body) { /* no Content-Length said so (chunked) */
		c->reject = 413, c->reject_msg = "request body too large";
		ksr_strbuf_free(&c->body);
		return 0;
	}
	ksr_strbuf_addn(&c->body, in, len);
	return 0;
}

/* One complete POST body: classify, check the session, queue or answer (an
 * answer now: 0 with the response in c->out; a queued job: 0, c->job set). */
static int classify(http_srv *s, conn *c)
{
	if (c->reject)
		return respond_error(c, c->reject, c->reject == 413 ? -32600 : -32000,
		                     c->reject_msg);
	cJSON *msg = c->body.p ? cJSON_ParseWithLength(c->body.p, c->body.len) : NULL;
	if (!msg)
		return respond_error(c, 400, -32700, "parse error: the body is not JSON");
	/* Everything needed from the parsed message is read here, before it is freed
	 * (keeping a pointer into it past cJSON_Delete once answered tools/call 202:
	 * the reparse in ksr_mcp_cancelled_id reuses the freed nodes). */
	bool obj = cJSON_IsObject(msg);
	const cJSON *method = cJSON_GetObjectItemCaseSensitive(msg, "method");
	bool request = cJSON_IsString(method) && cJSON_GetObjectItemCaseSensitive(msg, "id");
	bool init = cJSON_IsString(method) && !strcmp(method->valuestring, "initialize");
	cJSON_Delete(msg);
	if (!obj)
		return respond_error(c, 400, -32600, "one JSON-RPC message per POST (no batches)");
	if (init)
		session_new(c->new_sid);
	else if (!c->sid[0])
		return respond_error(c, 400, -32000, "Mcp-Session-Id header is required");
	else if (session_find(s, c->sid) < 0)
		return respond_error(c, 404, -32001, "session not found");
	char *cancel = ksr_mcp_cancelled_id(c->body.p, c->body.len);
	if (cancel) { /* applied now: the worker may be busy with that very request */
		ksr_mcp_cancel(s->m, cancel);
		free(cancel);
		return respond(c, (hdrs){.status = 202}, NULL);
	}
	job *j = job_queue(s, c->body.p, c->body.len, c->sse_ok);
	if (!request) {
		/* A notification or a client's response: accepted now, handled in order. */
		job_release(s, j);
		return respond(c, (hdrs){.status = 202}, NULL);
	}
	c->job = j;
	conn_list(s, c, true);
	return 0;
}

static int on_message(http_srv *s, conn *c)
{
	/* Waiting on a tool is not idling: no lws timeout until the answer is out
	 * (lws clears it itself after a body, but not for "Content-Length: 0"). */
	lws_set_timeout(c->wsi, NO_PENDING_TIMEOUT, 0);
	int rc = classify(s, c);
	return c->job && !rc ? 0 : send_now(s, c, rc);
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                    size_t len)
{
	struct lws_context *ctx = lws_get_context(wsi);
	http_srv *s = ctx ? lws_context_user(ctx) : NULL;
	conn *c = user;
	switch (reason) {
	case LWS_CALLBACK_HTTP:
		return on_http(s, c, wsi, in ? in : "") ? -1 : 0;
	case LWS_CALLBACK_HTTP_BODY:
		return on_body(s, c, in, len);
	case LWS_CALLBACK_HTTP_BODY_COMPLETION:
		return on_message(s, c) ? -1 : 0;
	case LWS_CALLBACK_HTTP_WRITEABLE:
		return c ? on_writeable(s, c) : 0;
	case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
		for (conn *k = s ? s->conns : NULL; k; k = k->next)
			lws_callback_on_writable(k->wsi);
		return 0;
	case LWS_CALLBACK_CLOSED_HTTP:
	case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
		if (c && s)
			conn_reset(s, c);
		return 0;
	default:
		return lws_callback_http_dummy(wsi, reason, user, in, len);
	}
}

static const struct lws_protocols protocols[] = {
        {"ksr-mcp-http", callback, sizeof(conn), 0, 0, NULL, 0},
        {NULL, NULL, 0, 0, 0, NULL, 0},
};

/* ---- the loop --------------------------------------------------------------------- */

/* Only a signal ends the server: the cancel descriptor is also readable while
 * an MCP cancellation is applied (ksr_mcp_cancel), and then the wait is on our
 * own stop pipe alone for a moment. */
static void *watcher(void *arg)
{
	http_srv *s = arg;
	struct pollfd pfd = {.fd = s->stop_pipe[0], .events = POLLIN};
	for (;;) {
		if (ksr_cancel_signal() > 0)
			break;
		ksr_wait w = ksr_cancelled() ? KSR_WAIT_TIMEOUT
		                             : ksr_wait_fds(&pfd, 1, ksr_deadline_in_ms(1000));
		if (w == KSR_WAIT_READY || w == KSR_WAIT_ERROR)
			return NULL; /* the server is stopping on its own */
		if (w == KSR_WAIT_TIMEOUT && ksr_cancelled() && poll(&pfd, 1, 50) > 0)
			return NULL;
	}
	atomic_store(&s->stop, true);
	lws_cancel_service(s->ctx);
	return NULL;
}

static int make_context(http_srv *s, ksr_err *err)
{
	struct lws_context_creation_info info;
	memset(&info, 0, sizeof info);
	info.port = s->addr.port;
	info.iface = s->addr.host;
	info.protocols = protocols;
	info.user = s;
	info.max_http_header_data = 8192;
	info.timeout_secs = BODY_TIMEOUT_S;
	if (!s->addr.ipv6)
		info.options |= LWS_SERVER_OPTION_DISABLE_IPV6;
	if (!strcmp(s->addr.host, "0.0.0.0") || !strcmp(s->addr.host, "::"))
		info.iface = NULL; /* every address */
	else if (!strcmp(s->addr.host, "localhost"))
		info.iface = "127.0.0.1";
	lws_set_log_level(0, NULL); /* library code never prints */
	s->ctx = lws_create_context(&info);
	if (!s->ctx)
		return ksr_err_set(err, "cannot listen on %s:%d (address in use or not local?)",
		                   s->addr.host, s->addr.port);
	return 0;
}

static void stop_threads(http_srv *s, pthread_t *wk, pthread_t *wt)
{
	pthread_mutex_lock(&s->lock);
	s->quit = true;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	if (wk)
		pthread_join(*wk, NULL);
	if (wt) {
		ssize_t n = write(s->stop_pipe[1], "x", 1);
		(void)n;
		pthread_join(*wt, NULL);
	}
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
	s->stop_pipe[0] = s->stop_pipe[1] = -1;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	pthread_t wk, wt;
	bool have_wk = false, have_wt = false;
	int rc = -1;
	if (!m || !o || check_opts(s, o, err) || make_context(s, err))
		goto cleanup;
	if (pipe2(s->stop_pipe, O_CLOEXEC) < 0) {
		ksr_err_errno(err, "pipe");
		goto cleanup;
	}
	have_wk = pthread_create(&wk, NULL, worker, s) == 0;
	have_wt = have_wk && pthread_create(&wt, NULL, watcher, s) == 0;
	if (!have_wt) {
		ksr_err_set(err, "cannot start the HTTP transport's threads");
		goto cleanup;
	}
	struct lws_vhost *vh = lws_get_vhost_by_name(s->ctx, "default");
	if (o->on_listen)
		o->on_listen(o->ud, s->addr.host,
		             vh ? lws_get_vhost_listen_port(vh) : s->addr.port);
	while (!atomic_load(&s->stop))
		if (lws_service(s->ctx, 0) < 0)
			break;
	rc = 0;
cleanup:
	stop_threads(s, have_wk ? &wk : NULL, have_wt ? &wt : NULL);
	if (s->ctx)
		lws_context_destroy(s->ctx); /* closes connections: their jobs are let go */
	while (s->head) {
		job *j = s->head;
		s->head = j->next;
		job_release_locked(j); /* the worker never took it */
	}
	for (int i = 0; i < 2; i++)
		if (s->stop_pipe[i] >= 0)
			close(s->stop_pipe[i]);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s);
	return rc;
}
