/* The HTTP server (include/ksr/http_server.h) on libwebsockets' server role.
 *
 * Threads: the serving thread runs lws and owns every connection; a watcher
 * thread waits on the cancel descriptor (and the deadline) and wakes the loop
 * on SIGTERM/SIGINT. lws_cancel_service is the only lws call made off the
 * serving thread (it is the one lws documents as safe there): it is
 * ksr_http_server_wake, whose LWS_CALLBACK_EVENT_WAIT_CANCELLED calls on_wake;
 * what on_wake answers asks for a writeable callback on its connection. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libwebsockets.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "ksr/http_server.h"
#include "ksr/strbuf.h"

#define CHUNK 65536
/* A body this much over the cap is not read to the end: the connection closes. */
#define DISCARD_LIMIT (256u * 1024u * 1024u)
/* A request's head may not be longer (lws's max_http_header_data). */
#define MAX_HEAD               8192
#define DEFAULT_BODY_TIMEOUT_S 30

typedef struct hdr_spec {
	char *name;   /* as the caller listed it */
	int token;    /* an lws header token; -1: a custom header */
	char *custom; /* "name:" lower-case, for lws_hdr_custom_* */
} hdr_spec;

struct ksr_http_conn {
	ksr_http_server *srv;
	struct lws *wsi;
	void *user;
	/* the request */
	ksr_http_request req;
	char *path;
	char peer[64];         /* the client's numeric address */
	ksr_http_header *hdrs; /* the listed headers present, values owned */
	ksr_strbuf body;
	size_t body_seen;
	bool skip_body;
	bool body_done; /* on_request ran: later bytes are a pipelined request, never read */
	bool in_cb;     /* inside on_head/on_request: the caller sends what they answered */
	/* the response: status line, headers and body as one byte stream */
	ksr_strbuf out;
	size_t out_pos;
	bool responding, final, finishing, failed;
};

struct ksr_http_server {
	ksr_http_server_opts o;
	struct lws_context *ctx;
	hdr_spec *specs;
	size_t n_specs;
	int body_timeout_s;
	ksr_deadline deadline;
	atomic_bool stop;
	int stop_pipe[2];
	char hbuf[2 * MAX_HEAD]; /* a header value being copied (serving thread) */
	unsigned char scratch[LWS_PRE + CHUNK];
};

/* ---- the request ------------------------------------------------------------------ */

const char *ksr_http_request_header(const ksr_http_request *r, const char *name)
{
	for (size_t i = 0; r && name && i < r->n_headers; i++)
		if (!strcasecmp(r->headers[i].name, name))
			return r->headers[i].value;
	return NULL;
}

static const char *method_of(struct lws *wsi)
{
	static const struct {
		enum lws_token_indexes t;
		const char *name;
	} methods[] = {
	        {WSI_TOKEN_GET_URI, "GET"},         {WSI_TOKEN_POST_URI, "POST"},
	        {WSI_TOKEN_OPTIONS_URI, "OPTIONS"}, {WSI_TOKEN_PUT_URI, "PUT"},
	        {WSI_TOKEN_PATCH_URI, "PATCH"},     {WSI_TOKEN_DELETE_URI, "DELETE"},
	        {WSI_TOKEN_CONNECT, "CONNECT"},     {WSI_TOKEN_HEAD_URI, "HEAD"},
	};
	for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
		if (lws_hdr_total_length(wsi, methods[i].t) > 0)
			return methods[i].name;
	return "";
}

/* A listed header's value into s->hbuf; false when absent, empty or unreadable. */
static bool copy_header(ksr_http_server *s, struct lws *wsi, const hdr_spec *h)
{
	int len, n = (int)sizeof s->hbuf;
	if (h->token >= 0) {
		enum lws_token_indexes t = (enum lws_token_indexes)h->token;
		len = lws_hdr_total_length(wsi, t);
		return len > 0 && lws_hdr_copy(wsi, s->hbuf, n, t) >= 0;
	}
	int cn = (int)strlen(h->custom);
	len = lws_hdr_custom_length(wsi, h->custom, cn);
	return len > 0 && len < n && lws_hdr_custom_copy(wsi, s->hbuf, n, h->custom, cn) >= 0;
}

static void read_head(ksr_http_server *s, ksr_http_conn *c, const char *path)
{
	c->path = ksr_xstrdup(path);
	c->hdrs = ksr_xcalloc(s->n_specs ? s->n_specs : 1, sizeof *c->hdrs);
	size_t n = 0;
	for (size_t i = 0; i < s->n_specs; i++) {
		if (!copy_header(s, c->wsi, &s->specs[i]) || !s->hbuf[0])
			continue;
		c->hdrs[n].name = s->specs[i].name;
		c->hdrs[n].value = ksr_xstrdup(s->hbuf);
		n++;
	}
	if (!lws_get_peer_simple(c->wsi, c->peer, sizeof c->peer))
		c->peer[0] = '\0';
	c->req = (ksr_http_request){.method = method_of(c->wsi),
	                            .path = c->path,
	                            .peer = c->peer,
	                            .headers = c->hdrs,
	                            .n_headers = n};
}

/* ---- connections ------------------------------------------------------------------ */

static void conn_reset(ksr_http_conn *c)
{
	ksr_http_server *s = c->srv;
	if (c->user && s && s->o.on_close) {
		void *user = c->user;
		c->user = NULL;
		s->o.on_close(s->o.ud, c, user);
	}
	for (size_t i = 0; c->hdrs && i < c->req.n_headers; i++)
		free((char *)c->hdrs[i].value);
	free(c->hdrs);
	free(c->path);
	ksr_strbuf_free(&c->body);
	ksr_strbuf_free(&c->out);
	struct lws *wsi = c->wsi;
	memset(c, 0, sizeof *c);
	c->srv = s;
	c->wsi = wsi;
}

void ksr_http_conn_set_user(ksr_http_conn *c, void *user)
{
	if (!c)
		return;
	/* A connection has one user at a time: one it replaces is let go of now,
	 * so that nothing keeps a pointer to this connection past its close. */
	if (c->user && user && c->user != user && c->srv && c->srv->o.on_close) {
		void *old = c->user;
		c->user = NULL;
		c->srv->o.on_close(c->srv->o.ud, c, old);
	}
	c->user = user;
}

/* Outside on_head/on_request what was added goes out on a writeable callback. */
static void conn_kick(ksr_http_conn *c)
{
	if (!c->in_cb)
		lws_callback_on_writable(c->wsi);
}

static int conn_fail(ksr_http_conn *c)
{
	c->failed = true;
	conn_kick(c);
	return -1;
}

/* ---- responses -------------------------------------------------------------------- */

static int add_hdr(struct lws *wsi, const char *name, const char *v, unsigned char **p,
                   unsigned char *end)
{
	char n[128];
	snprintf(n, sizeof n, "%s:", name);
	return lws_add_http_header_by_name(wsi, (const unsigned char *)n, (const unsigned char *)v,
	                                   (int)strlen(v), p, end);
}

/* Status line and headers, appended to the connection's output. */
static int put_headers(ksr_http_conn *c, int status, const char *ctype, lws_filepos_t len,
                       const ksr_http_header *h, size_t n)
{
	unsigned char buf[1024], *p = buf, *end = buf + sizeof buf;
	if (c->responding || c->failed)
		return -1;
	c->responding = true;
	if (lws_add_http_common_headers(c->wsi, (unsigned)status, ctype, len, &p, end))
		return conn_fail(c);
	for (size_t i = 0; i < n; i++)
		if (add_hdr(c->wsi, h[i].name, h[i].value, &p, end))
			return conn_fail(c);
	bool stream = len == LWS_ILLEGAL_HTTP_CONTENT_LEN;
	if (!stream && add_hdr(c->wsi, "connection", "close", &p, end))
		return conn_fail(c);
	if (stream && add_hdr(c->wsi, "cache-control", "no-cache", &p, end))
		return conn_fail(c);
	if (lws_finalize_http_header(c->wsi, &p, end))
		return conn_fail(c);
	ksr_strbuf_addn(&c->out, buf, (size_t)(p - buf));
	return 0;
}

int ksr_http_respond(ksr_http_conn *c, int status, const char *ctype, const ksr_http_header *h,
                     size_t n, const char *body, size_t len)
{
	if (!c || put_headers(c, status, ctype, len, h, n))
		return -1;
	if (len)
		ksr_strbuf_addn(&c->out, body, len);
	c->final = true;
	conn_kick(c);
	return 0;
}

int ksr_http_stream_begin(ksr_http_conn *c, int status, const char *ctype, const ksr_http_header *h,
                          size_t n)
{
	if (!c || put_headers(c, status, ctype, LWS_ILLEGAL_HTTP_CONTENT_LEN, h, n))
		return -1;
	conn_kick(c);
	return 0;
}

int ksr_http_stream_write(ksr_http_conn *c, const void *p, size_t len)
{
	if (!c || !c->responding || c->final || c->failed)
		return -1;
	ksr_strbuf_addn(&c->out, p, len);
	conn_kick(c);
	return 0;
}

int ksr_http_stream_end(ksr_http_conn *c)
{
	if (!c || !c->responding || c->failed)
		return -1;
	c->final = true;
	conn_kick(c);
	return 0;
}

/* After on_head or on_request: send what it answered, or keep waiting (-1:
 * close the connection). Every response says "connection: close" and ends
 * its connection (after the request body was read). A next POST on a
 * kept-alive connection went wrong in earlier tests (its body never reached
 * LWS_CALLBACK_HTTP_BODY, or ..._BODY_COMPLETION came again and again):
 * nothing here calls lws_http_transaction_completed, so lws stays in its body
 * state with nothing left to read and hands the next request's bytes to the
 * body-complete path. Keep-alive would need that call after each response. A
 * loopback connect costs tens of microseconds. */
static int send_now(ksr_http_server *s, ksr_http_conn *c)
{
	if (c->failed)
		return -1;
	if (!c->responding)
		return 0; /* answered later, or not at all (on_head: then closed) */
	if (!c->final || c->out.len > CHUNK) { /* not for the short answers that come here */
		lws_callback_on_writable(c->wsi);
		return 0;
	}
	memcpy(s->scratch + LWS_PRE, c->out.p, c->out.len);
	if (lws_write(c->wsi, s->scratch + LWS_PRE, c->out.len, LWS_WRITE_HTTP) != (int)c->out.len)
		return -1;
	conn_reset(c);
	return -1;
}

/* Write the next piece of the response; finish the transaction after it. */
static int on_writeable(ksr_http_server *s, ksr_http_conn *c)
{
	if (c->failed)
		return -1;
	if (c->finishing) {
		conn_reset(c);
		return -1; /* every response ends its connection: see send_now */
	}
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

/* Bytes after a complete request on the same connection are a pipelined
 * request. Every response closes its connection ("connection: close"), and a
 * server that says so must not process further requests on it (RFC 9112,
 * 9.6); this one refuses pipelining by closing the connection at once: the
 * first request's answer is dropped (its handler still runs to its end, as
 * for a client that hangs up). lws, whose state after a body stays "body,
 * none left", would otherwise hand the bytes to the body-complete path again
 * on every turn of its loop (a busy loop, and a second on_request for one
 * connection while the first waits on its answer), and with its rx flow
 * control on (4.1.6) it sends no writeable callback either. */
static int on_pipelined(ksr_http_conn *c)
{
	(void)c;
	return -1;
}

static int on_http(ksr_http_server *s, ksr_http_conn *c, struct lws *wsi, const char *path)
{
	if (c->path) /* a request is under way on this connection */
		return on_pipelined(c);
	conn_reset(c);
	c->srv = s;
	c->wsi = wsi;
	read_head(s, c, path);
	c->in_cb = true;
	ksr_http_head_action a = s->o.on_head(s->o.ud, c, &c->req);
	c->in_cb = false;
	if (a == KSR_HTTP_ANSWERED)
		return c->responding ? send_now(s, c) : -1;
	c->skip_body = a == KSR_HTTP_SKIP_BODY;
	/* A body that stops coming ends its connection (lws re-arms this after each
	 * piece of it, and clears it when the body is complete). */
	lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, s->body_timeout_s);
	return 0;
}

static int on_body(ksr_http_server *s, ksr_http_conn *c, const char *in, size_t len)
{
	if (c->body_done)
		return on_pipelined(c);
	c->body_seen += len;
	if (c->body_seen > DISCARD_LIMIT)
		return -1;
	if (c->skip_body || c->req.body_too_large)
		return 0;
	if (c->body.len + len > s->o.max_body) { /* no Content-Length said so */
		c->req.body_too_large = true;
		ksr_strbuf_free(&c->body);
		return 0;
	}
	ksr_strbuf_addn(&c->body, in, len);
	return 0;
}

static int on_body_done(ksr_http_server *s, ksr_http_conn *c)
{
	if (c->body_done)
		return on_pipelined(c);
	c->body_done = true;
	/* Waiting on the handler is not idling: no lws timeout until the answer is
	 * out (lws clears it itself after a body, but not for "Content-Length: 0"). */
	lws_set_timeout(c->wsi, NO_PENDING_TIMEOUT, 0);
	c->req.body = c->body.p;
	c->req.body_len = c->body.len;
	c->in_cb = true;
	s->o.on_request(s->o.ud, c, &c->req);
	c->in_cb = false;
	return send_now(s, c);
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                    size_t len)
{
	struct lws_context *ctx = lws_get_context(wsi);
	ksr_http_server *s = ctx ? lws_context_user(ctx) : NULL;
	ksr_http_conn *c = user;
	switch (reason) {
	case LWS_CALLBACK_HTTP:
		return on_http(s, c, wsi, in ? in : "") ? -1 : 0;
	case LWS_CALLBACK_HTTP_BODY:
		return on_body(s, c, in, len);
	case LWS_CALLBACK_HTTP_BODY_COMPLETION:
		return on_body_done(s, c) ? -1 : 0;
	case LWS_CALLBACK_HTTP_WRITEABLE:
		return c ? on_writeable(s, c) : 0;
	case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
		if (s && s->o.on_wake)
			s->o.on_wake(s->o.ud);
		return 0;
	case LWS_CALLBACK_CLOSED_HTTP:
	case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
		if (c && s) {
			c->srv = s;
			conn_reset(c);
		}
		return 0;
	default:
		return lws_callback_http_dummy(wsi, reason, user, in, len);
	}
}

static const struct lws_protocols protocols[] = {
        {"ksr-http", callback, sizeof(ksr_http_conn), 0, 0, NULL, 0},
        {NULL, NULL, 0, 0, 0, NULL, 0},
};

/* ---- the server ------------------------------------------------------------------- */

/* The lws token whose name is "name:" (lower-case), or -1 (a custom header). */
static int token_of(const char *lname)
{
	for (int t = 0; t < (int)WSI_TOKEN_COUNT; t++) {
		const unsigned char *n = lws_token_to_string((enum lws_token_indexes)t);
		if (n && !strcmp((const char *)n, lname))
			return t;
	}
	return -1;
}

static void add_specs(ksr_http_server *s, const char *const *names)
{
	size_t n = 0;
	while (names && names[n])
		n++;
	s->specs = ksr_xcalloc(n ? n : 1, sizeof *s->specs);
	for (size_t i = 0; i < n; i++) {
		hdr_spec *h = &s->specs[s->n_specs++];
		h->name = ksr_xstrdup(names[i]);
		h->custom = ksr_xasprintf("%s:", names[i]);
		for (char *p = h->custom; *p; p++)
			*p = (char)tolower((unsigned char)*p);
		h->token = token_of(h->custom);
	}
}

ksr_http_server *ksr_http_server_create(const ksr_http_server_opts *opts, ksr_err *err)
{
	if (!opts || !opts->host || !opts->on_head || !opts->on_request) {
		ksr_err_set(err,
		            "ksr_http_server_create: host, on_head and on_request are required");
		return NULL;
	}
	ksr_http_server *s = ksr_xcalloc(1, sizeof *s);
	s->o = *opts;
	s->o.host = ksr_xstrdup(opts->host);
	s->o.headers = NULL; /* the names are kept in specs */
	s->body_timeout_s =
	        opts->body_timeout_s > 0 ? opts->body_timeout_s : DEFAULT_BODY_TIMEOUT_S;
	s->stop_pipe[0] = s->stop_pipe[1] = -1;
	add_specs(s, opts->headers);
	if (pipe2(s->stop_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
		ksr_err_errno(err, "pipe");
		ksr_http_server_destroy(s);
		return NULL;
	}
	struct in6_addr a6;
	struct lws_context_creation_info info;
	memset(&info, 0, sizeof info);
	info.port = opts->port;
	info.iface = s->o.host;
	info.protocols = protocols;
	info.user = s;
	info.max_http_header_data = MAX_HEAD;
	info.timeout_secs = (unsigned)s->body_timeout_s;
	if (inet_pton(AF_INET6, s->o.host, &a6) != 1)
		info.options |= LWS_SERVER_OPTION_DISABLE_IPV6;
	if (!strcmp(s->o.host, "0.0.0.0") || !strcmp(s->o.host, "::"))
		info.iface = NULL; /* every address */
	else if (!strcmp(s->o.host, "localhost"))
		info.iface = "127.0.0.1";
	lws_set_log_level(0, NULL); /* library code never prints */
	s->ctx = lws_create_context(&info);
	if (!s->ctx) {
		ksr_err_set(err, "cannot listen on %s:%d (address in use or not local?)", s->o.host,
		            opts->port);
		ksr_http_server_destroy(s);
		return NULL;
	}
	return s;
}

void ksr_http_server_destroy(ksr_http_server *s)
{
	if (!s)
		return;
	if (s->ctx)
		lws_context_destroy(s->ctx); /* closes connections: on_close for each with a user */
	for (size_t i = 0; i < s->n_specs; i++) {
		free(s->specs[i].name);
		free(s->specs[i].custom);
	}
	free(s->specs);
	for (int i = 0; i < 2; i++)
		if (s->stop_pipe[i] >= 0)
			close(s->stop_pipe[i]);
	free((char *)s->o.host);
	free(s);
}

int ksr_http_server_port(const ksr_http_server *s)
{
	if (!s)
		return -1;
	struct lws_vhost *vh = lws_get_vhost_by_name(s->ctx, "default");
	return vh ? lws_get_vhost_listen_port(vh) : s->o.port;
}

void ksr_http_server_wake(ksr_http_server *s)
{
	if (s && s->ctx)
		lws_cancel_service(s->ctx);
}

/* ---- the loop --------------------------------------------------------------------- */

/* Only a signal (or the deadline) ends the loop: the cancel descriptor is also
 * readable while an MCP cancellation is applied (ksr_mcp_cancel), and then the
 * wait is on our own stop pipe alone for a moment. */
static void *watcher(void *arg)
{
	ksr_http_server *s = arg;
	struct pollfd pfd = {.fd = s->stop_pipe[0], .events = POLLIN};
	for (;;) {
		if (ksr_cancel_signal() > 0 || ksr_deadline_passed(s->deadline))
			break;
		ksr_deadline slice = ksr_deadline_min(s->deadline, ksr_deadline_in_ms(1000));
		ksr_wait w = ksr_cancelled() ? KSR_WAIT_TIMEOUT : ksr_wait_fds(&pfd, 1, slice);
		if (w == KSR_WAIT_READY || w == KSR_WAIT_ERROR)
			return NULL; /* the server is stopping on its own */
		if (w == KSR_WAIT_TIMEOUT && ksr_cancelled() && poll(&pfd, 1, 50) > 0)
			return NULL;
	}
	atomic_store(&s->stop, true);
	lws_cancel_service(s->ctx);
	return NULL;
}

int ksr_http_server_serve(ksr_http_server *s, ksr_deadline d, ksr_err *err)
{
	if (!s)
		return ksr_err_set(err, "ksr_http_server_serve: no server");
	s->deadline = d;
	atomic_store(&s->stop, false);
	pthread_t wt;
	if (pthread_create(&wt, NULL, watcher, s) != 0)
		return ksr_err_set(err, "cannot start the HTTP transport's threads");
	while (!atomic_load(&s->stop))
		if (lws_service(s->ctx, 0) < 0)
			break;
	ssize_t n = write(s->stop_pipe[1], "x", 1);
	(void)n;
	pthread_join(wt, NULL);
	char drain[16];
	while (read(s->stop_pipe[0], drain, sizeof drain) > 0) /* for a next serve */
		;
	return 0;
}
