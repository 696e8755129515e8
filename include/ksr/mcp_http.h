/* The Streamable HTTP transport for the MCP server (MCP 2025-11-25, "Streamable
 * HTTP"), on the backend's HTTP server (ksr/http_server.h): one endpoint, POST
 * /mcp with one JSON-RPC message per request, answered as application/json, or
 * as a text/event-stream when the client accepts one and a tool sends
 * notifications (progress, logging) before its result. No standalone SSE stream: GET is 405.
 * Mcp-Session-Id is issued at initialize and required after; DELETE ends it.
 *
 * Security: loopback by default; on a loopback bind the Host header must name
 * loopback (DNS rebinding); a present Origin must be a loopback origin (403);
 * any other bind needs a bearer token (refused at start without one), checked
 * on every request (401). Bodies over max_body get 413 after the body is read
 * (the client is not cut off mid-send); every response closes its connection
 * (docs/mcp.md, "Streamable HTTP"). No printing. */
#ifndef KSR_MCP_HTTP_H
#define KSR_MCP_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "ksr/error.h"
#include "ksr/mcp.h"

typedef struct ksr_mcp_http_opts {
	const char *listen; /* "HOST:PORT", "[::1]:PORT" or ":PORT" (= 127.0.0.1); port 0: any */
	const char *token;  /* bearer token; NULL or "" = none (loopback binds only) */
	size_t max_body;    /* 0: KSR_MCP_MAX_MESSAGE */
	/* Called once the socket listens, with the port actually bound (for port 0). */
	void (*on_listen)(void *ud, const char *host, int port);
	void *ud;
} ksr_mcp_http_opts;

/* Serve until SIGTERM/SIGINT (ksr_cancel_install first; an MCP cancellation,
 * which also uses the cancel descriptor, does not end the server). Returns 0
 * after a signal, -1 with err when the address is bad, a token is missing for
 * a non-loopback bind, or the socket cannot be bound. */
int ksr_mcp_serve_http(ksr_mcp *m, const ksr_mcp_http_opts *o, ksr_err *err);

/* ---- pure parts, exposed for the unit tests ---------------------------------- */

typedef struct ksr_mcp_http_addr {
	char host[256]; /* without brackets */
	int port;
	bool ipv6;
	bool loopback;
} ksr_mcp_http_addr;

/* Parse "HOST:PORT" ("[v6]:PORT", ":PORT"). -1 with err on a malformed value. */
int ksr_mcp_http_parse_addr(const char *s, ksr_mcp_http_addr *a, ksr_err *err);

/* Is this host (a Host header value, port allowed) a loopback name: localhost,
 * 127.0.0.0/8, [::1]? */
bool ksr_mcp_http_host_is_loopback(const char *host);

/* Is this Origin header value a loopback origin (http(s)://loopback[:port])?
 * "null" and anything unparsable are not. */
bool ksr_mcp_http_origin_is_loopback(const char *origin);

/* Does the Authorization header value carry exactly this bearer token? The
 * comparison does not stop at the first differing byte. */
bool ksr_mcp_http_bearer_ok(const char *authorization, const char *token);

/* Does an Accept header value admit this media type ("a/b"), directly or
 * through "a/ *" or "* / *" (without spaces)? A NULL or empty header admits all. */
bool ksr_mcp_http_accepts(const char *accept, const char *type);

/* A 2026-07-28 mirrored header's value (Mcp-Name, Mcp-Param-*) as the body
 * would carry it: "=?base64?...?=" decoded (the transport's sentinel for a
 * value that is not plain visible ASCII), anything else as it is. false for a
 * malformed sentinel, a value with control characters, or one too long for
 * out (n bytes, NUL-terminated). */
bool ksr_mcp_http_header_value(const char *v, char *out, size_t n);

#endif
