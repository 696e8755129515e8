/* MCP server core: JSON-RPC 2.0 per MCP revision 2026-07-28 (stateless: a
 * request whose _meta carries its protocol version) and 2025-11-25 (an
 * initialize'd session; also 2025-06-18 and 2025-03-26), chosen per request,
 * transport-independent. A
 * transport (stdio, Streamable HTTP) hands complete messages to ksr_mcp_handle
 * and writes back what it returns. The tools act through the same backends a
 * run uses (x11, atspi, cdp, model, ksr_run_scenario). No printing. */
#ifndef KSR_MCP_H
#define KSR_MCP_H

#include <stdbool.h>
#include <stddef.h>

#include "ksr/error.h"
#include "ksr/session.h"

typedef struct ksr_mcp ksr_mcp;

typedef struct ksr_mcp_opts {
	bool dotted_names;   /* --tool-names dots: list input.click, not input_click */
	const char *display; /* NULL: $DISPLAY */
	bool xvfb;           /* start a private session (Xvfb + WM + D-Bus + AT-SPI) at create */
	ksr_server_kind display_server; /* its X server and window manager */
	ksr_wm_kind wm;
	const char *evidence_dir; /* --evidence: where linked screenshots go (kept); NULL: a
	                           * temporary folder made at the first link, removed at destroy */
} ksr_mcp_opts;

/* The longest message a transport should pass on; longer ones get an error
 * reply (ksr_mcp_error_reply) and the server keeps serving. */
#define KSR_MCP_MAX_MESSAGE (16u * 1024u * 1024u)

/* The newest session-based revision (the default answer to initialize). */
#define KSR_MCP_PROTOCOL "2025-11-25"
/* The stateless revision: no initialize, the version in every request's _meta. */
#define KSR_MCP_PROTOCOL_MODERN "2026-07-28"
#define KSR_MCP_META_VERSION    "io.modelcontextprotocol/protocolVersion"

ksr_mcp *ksr_mcp_create(const ksr_mcp_opts *o, ksr_err *err);
void ksr_mcp_destroy(ksr_mcp *m); /* NULL-safe; stops a private session */

/* Handle one complete JSON-RPC message (UTF-8 JSON text, not NUL-terminated).
 * Returns the reply as a compact one-line JSON string (caller frees) or NULL
 * when no reply is due: a notification, or a request cancelled while it ran
 * (MCP: no response to a cancelled request; an HTTP transport answers such a
 * POST with an empty 202 or closes its stream). While a tool runs, notify(ud, line)
 * may be called with notifications (progress, logging) to send to the client
 * (notify may be NULL). Thread-safe for one call at a time plus concurrent
 * ksr_mcp_cancel. */
char *ksr_mcp_handle(ksr_mcp *m, const char *msg, size_t len,
                     void (*notify)(void *ud, const char *line), void *ud);

/* ksr_mcp_handle, also telling an HTTP transport the status to answer with
 * (*http_status: 200, or 400/404 for the 2026-07-28 errors that call for one). */
char *ksr_mcp_handle_status(ksr_mcp *m, const char *msg, size_t len,
                            void (*notify)(void *ud, const char *line), void *ud, int *http_status);

/* ksr_mcp_handle_status for a message of the 2025 session named session (the
 * HTTP transport's Mcp-Session-Id, or the one being minted by an
 * initialize; NULL or "": the transport's one session, as on stdio). What a
 * 2025 session keeps between requests (its revision, its log level, its last
 * screenshot's view for coordinates) is kept per session: two HTTP sessions
 * never see each other's. The server keeps the state of the 257 sessions
 * used last. A 2026-07-28 request keeps nothing. */
char *ksr_mcp_handle_in(ksr_mcp *m, const char *session, const char *msg, size_t len,
                        void (*notify)(void *ud, const char *line), void *ud, int *http_status);

/* Cancel the in-flight request with this JSON-RPC id (compact JSON text of the
 * id, e.g. "7" or "\"abc\"", as in notifications/cancelled), from another
 * thread. A no-op when that request is not running. */
void ksr_mcp_cancel(ksr_mcp *m, const char *id_json);

/* A JSON-RPC error reply with a null id (for transports: an over-long message,
 * -32600; unreadable input, -32700). Caller frees. */
char *ksr_mcp_error_reply(int code, const char *message);

/* What a transport needs to apply a cancellation without going through
 * ksr_mcp_handle (which may be busy): when msg is a notifications/cancelled,
 * returns the compact id JSON of the request to cancel (caller frees), else
 * NULL. */
char *ksr_mcp_cancelled_id(const char *msg, size_t len);

/* Is this message a request that may run long (tools/call)? Transports run
 * such requests off their reader thread so cancellations can still be read. */
bool ksr_mcp_is_tool_call(const char *msg, size_t len);

/* The stdio transport: newline-delimited JSON-RPC read from in_fd, replies and
 * notifications written to out_fd as compact lines. Messages are handled in
 * order on a worker thread, so a notifications/cancelled is read and applied
 * while a tool runs. A line over KSR_MCP_MAX_MESSAGE gets an error reply and is
 * skipped. Returns 0 at EOF (after the queued requests are answered) or on
 * SIGTERM/SIGINT (ksr_cancel_install first), -1 with err on a read error. */
int ksr_mcp_serve_stdio(ksr_mcp *m, int in_fd, int out_fd, ksr_err *err);

#endif
