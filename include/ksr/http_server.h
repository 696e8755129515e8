/* A small HTTP/1.1 server (libwebsockets' server role, no TLS) for one
 * listening socket. It knows nothing of what it serves: a request's head
 * (method, path, the headers asked for) goes to on_head, which answers at once
 * or has the body read; the complete request then goes to on_request, which
 * answers at once or later (from on_wake, after ksr_http_server_wake from any
 * thread). An answer is a complete response (Content-Length) or a stream (no
 * length, ended by closing). Every response ends its connection, and bytes
 * after a request on its connection (a pipelined request) are never read:
 * on_request runs at most once a connection, and the client resends the rest
 * on a new one (RFC 9112, 9.6).
 *
 * Threads: every callback and every ksr_http_conn call runs on the thread in
 * ksr_http_server_serve; ksr_http_server_wake is the one call safe elsewhere.
 * A body that stalls (no byte for body_timeout_s), or whose head never ends,
 * drops its connection; a body over 256 MiB is not read to its end (the
 * connection closes). lws 4.1.6 cannot read a chunked body, nor a POST body
 * without Content-Length (it takes it as 100 MB long): answer those from
 * on_head. No printing. */
#ifndef KSR_HTTP_SERVER_H
#define KSR_HTTP_SERVER_H

#include <stdbool.h>
#include <stddef.h>

#include "ksr/deadline.h"
#include "ksr/error.h"

typedef struct ksr_http_server ksr_http_server;
/* One connection and its request; valid from on_head until on_close (or, with
 * no user pointer set, until the callback that answered it returns). */
typedef struct ksr_http_conn ksr_http_conn;

typedef struct ksr_http_header {
	const char *name; /* as listed in ksr_http_server_opts.headers */
	const char *value;
} ksr_http_header;

typedef struct ksr_http_request {
	const char *method; /* "GET", "POST", "DELETE", ...; "" when none is known */
	const char *path;   /* "/mcp" */
	const char *peer;   /* the client's numeric address ("127.0.0.1", "::1"); "" unknown */
	/* on_request only: the body as read (NULL when empty, or when dropped) */
	const char *body;
	size_t body_len;
	bool body_too_large; /* over max_body: read to its end and dropped */
	/* the listed headers the request has (value never NULL or empty) */
	const ksr_http_header *headers;
	size_t n_headers;
} ksr_http_request;

/* A listed header's value (name in any case); NULL when the request has none,
 * or an empty one. */
const char *ksr_http_request_header(const ksr_http_request *r, const char *name);

typedef enum ksr_http_head_action {
	KSR_HTTP_ANSWERED,  /* on_head answered: the body is not read, the connection ends */
	KSR_HTTP_READ_BODY, /* read the body (up to max_body), then on_request */
	KSR_HTTP_SKIP_BODY, /* read the body to its end and drop it, then on_request */
} ksr_http_head_action;

typedef struct ksr_http_server_opts {
	/* A numeric IPv4/IPv6 address (IPv6 without brackets), "localhost"
	 * (127.0.0.1), or "0.0.0.0" / "::" (every address). */
	const char *host;
	int port;           /* 0: any free one (ksr_http_server_port) */
	size_t max_body;    /* bodies over this are dropped (body_too_large) */
	int body_timeout_s; /* 0: 30 */
	/* The request headers the callbacks read, NULL-terminated ("Host",
	 * "Mcp-Session-Id"; any case); others are not kept. */
	const char *const *headers;
	/* The head is in: answer now (ksr_http_respond) and return ANSWERED, or
	 * have the body read or skipped. Required. */
	ksr_http_head_action (*on_head)(void *ud, ksr_http_conn *c, const ksr_http_request *r);
	/* The body is in: answer now, or set a user pointer and answer later.
	 * Required. */
	void (*on_request)(void *ud, ksr_http_conn *c, const ksr_http_request *r);
	/* After ksr_http_server_wake (possibly several wakes at once); may be NULL. */
	void (*on_wake)(void *ud);
	/* c's exchange ends (the response is out, the client left, or the server
	 * is destroyed) while it has a user pointer: let go of it. May be NULL. */
	void (*on_close)(void *ud, ksr_http_conn *c, void *user);
	void *ud;
} ksr_http_server_opts;

/* Bind and listen. NULL with err when the socket cannot be bound (address in
 * use, not a local address). opts is copied. */
ksr_http_server *ksr_http_server_create(const ksr_http_server_opts *opts, ksr_err *err);
void ksr_http_server_destroy(ksr_http_server *s); /* NULL-safe; closes every connection */

/* The port actually bound (for port 0). */
int ksr_http_server_port(const ksr_http_server *s);

/* Serve until SIGTERM/SIGINT (ksr_cancel_signal: a ksr_cancel_request alone,
 * as an MCP cancellation makes, does not end it), the deadline passes, or
 * libwebsockets' loop fails. 0 then; -1 with err when serving cannot start. */
int ksr_http_server_serve(ksr_http_server *s, ksr_deadline d, ksr_err *err);

/* From any thread: on_wake runs soon on the serving thread. */
void ksr_http_server_wake(ksr_http_server *s);

/* ---- answering (the serving thread) ----------------------------------------- */

/* One user pointer a connection; setting another lets go of the one before
 * (on_close). */
void ksr_http_conn_set_user(ksr_http_conn *c, void *user);

/* A complete response: status, Content-Type (NULL: none), Content-Length,
 * the extra headers in order (names as written, e.g. "allow"), then
 * "connection: close". The connection ends once it is out. -1 when the
 * headers do not fit (the connection is dropped) or a response was begun. */
int ksr_http_respond(ksr_http_conn *c, int status, const char *ctype, const ksr_http_header *h,
                     size_t n, const char *body, size_t len);

/* A streamed response: status, Content-Type, the extra headers, no length,
 * "cache-control: no-cache"; then ksr_http_stream_write, and
 * ksr_http_stream_end, which closes the connection once all is out. */
int ksr_http_stream_begin(ksr_http_conn *c, int status, const char *ctype, const ksr_http_header *h,
                          size_t n);
int ksr_http_stream_write(ksr_http_conn *c, const void *p, size_t len);
int ksr_http_stream_end(ksr_http_conn *c);

#endif
