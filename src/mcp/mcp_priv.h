/* The MCP server's insides, shared by server.c (JSON-RPC), tools.c (the table
 * and argument checks) and the tool handlers (tools_*.c). */
#ifndef KSR_MCP_PRIV_H
#define KSR_MCP_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "ksr/atspi.h"
#include "ksr/cdp.h"
#include "ksr/mcp.h"
#include "ksr/session.h"
#include "ksr/x11.h"

/* A file the server wrote into its evidence folder, served by resources/read. */
typedef struct mcp_file {
	char *name; /* plain file name in the folder */
	char *mime;
	size_t size;
} mcp_file;

/* How a screenshot maps to the screen: screen = origin + shot / scale. */
typedef struct mcp_view {
	int origin_x, origin_y; /* screen pixels of the screenshot's top-left */
	int w, h;               /* the screenshot's size (its coordinate space) */
	double scale;           /* screenshot pixels per screen pixel (<= 1 when downscaled) */
	bool have;              /* a capture was made; else the whole screen at scale 1 */
} mcp_view;

/* A view kept under a handle (docs/mcp.md, "Handles"): screen_capture and
 * screen_ground return its id, the coordinate tools take it back as "view". */
#define MCP_VIEWS 64
typedef struct mcp_view_slot {
	char id[24]; /* "view-" and 16 hex digits; "" = free */
	mcp_view v;
} mcp_view_slot;

/* What the request being handled declared: the era it is served under and,
 * for 2026-07-28 (stateless), what its _meta carried. */
typedef struct mcp_req {
	bool modern;     /* 2026-07-28: per-request _meta, no session state */
	bool tasks_ok;   /* its clientCapabilities name io.modelcontextprotocol/tasks */
	int log_level;   /* modern: its _meta logLevel; N levels (none) when absent */
	int http_status; /* for an HTTP transport: 0 (200), 400 or 404 */
} mcp_req;

/* What a 2025 session keeps between its requests, one per session the
 * transport tells apart (HTTP: its Mcp-Session-Id; stdio: the one, key ""):
 * swapped into the server around each of its messages (server.c). */
#define MCP_SESSIONS 257 /* the HTTP transport's 256 and stdio's */
typedef struct mcp_sess {
	char key[40];  /* used 0: a free slot */
	uint64_t used; /* m->sess_clock when last used: the least recent goes first */
	mcp_view view; /* the last screenshot's, for coordinates without a view handle */
	char protocol[16];
	int log_level;
} mcp_sess;

/* A browser page connection kept under a handle (tools_cdp.c, docs/mcp.md
 * "Handles"): the page tools return its id and take it back as "page". */
#define MCP_PAGES 8
typedef struct mcp_page_slot {
	char id[24]; /* "page-" and 16 hex digits; "" = free */
	ksr_page *page;
	ksr_cdp *cdp; /* its connection; closing it closes page */
	int port;
	uint64_t used; /* the least recently used goes first */
} mcp_page_slot;

typedef struct mcp_task mcp_task; /* tasks.c */
#define MCP_TASKS 32

struct ksr_mcp {
	ksr_mcp_opts opts;
	/* A task's context (mcp_context_new): the server it works for, which
	 * keeps the views and the evidence folder; NULL for the server itself. */
	ksr_mcp *parent;
	ksr_session *session;
	ksr_x11 *x;
	ksr_atspi *atspi;
	/* Page connections (tools_cdp.c): a 2026 call names its own by handle;
	 * a 2025 session works on the current one, as it always did. */
	mcp_page_slot pages[MCP_PAGES];
	int page_current; /* index in pages + 1; 0: none */
	uint64_t page_clock;
	mcp_view view;         /* the view the current call works in */
	mcp_view session_view; /* the 2025 session's last screenshot's (implicit state) */
	mcp_sess *sessions;    /* MCP_SESSIONS, see mcp_sess */
	uint64_t sess_clock;
	mcp_view_slot views[MCP_VIEWS]; /* under lock: a task keeps its views here too */
	unsigned next_view;
	char view_id[24]; /* the handle of the view the current call kept */
	mcp_req req;      /* the request being handled (one at a time) */
	char protocol[16];
	int log_level;   /* index into the syslog-style levels; messages below are dropped */
	cJSON **schemas; /* parsed input/output schemas, two per tool row */
	int text_cap;    /* the current call's max_text (characters of text content) */
	/* The evidence folder (linked screenshots): opts.evidence_dir, or a
	 * temporary one made at the first link (ev_temp: removed at destroy). */
	char *ev_dir;
	bool ev_temp;
	pthread_mutex_t ev_lock; /* the folder's files: written by tasks, served by the loop */
	mcp_file *files;
	size_t n_files, files_cap;
	unsigned next_file;
	/* The request running now, for ksr_mcp_cancel from another thread. */
	pthread_mutex_t lock;
	char *inflight_id;
	bool cancel_hit;
	int cancel_holds; /* cancel requests not yet over (a call's, tasks'): reset at 0 */
	/* Tasks (tasks.c): scenario runs on their own threads, polled with tasks/get. */
	mcp_task *tasks[MCP_TASKS];
	/* Where notifications go during ksr_mcp_handle. */
	void (*notify)(void *ud, const char *line);
	void *notify_ud;
	cJSON *progress_token; /* the current call's, or NULL */
	double progress;
};

/* A tool call's answer: content blocks, structuredContent, isError. */
typedef struct mcp_result {
	cJSON *content;    /* array */
	cJSON *structured; /* object or NULL */
	bool is_error;
} mcp_result;

typedef int (*mcp_tool_fn)(ksr_mcp *m, const cJSON *args, mcp_result *r);
/* The same tool run as a task, on the task's own thread: it reports to t and
 * touches none of m's per-call state. */
typedef int (*mcp_task_fn)(ksr_mcp *m, mcp_task *t, const cJSON *args, mcp_result *r);

typedef struct mcp_tool {
	const char *name; /* with dots: "input.click" (listed as input_click unless --tool-names
	                     dots) */
	const char *title;
	const char *description;
	const char *input_schema;  /* JSON text */
	const char *output_schema; /* JSON text */
	bool read_only;
	bool destructive;
	bool open_world;
	mcp_tool_fn run;
	bool takes_view; /* its coordinates are in a screenshot's space: "view" argument */
	/* scenario.run as a task: its own thread, one at a time (it owns the
	 * process's cancel request and the run layer's state). */
	mcp_task_fn run_task;
	/* A tool that may run past a few seconds (a wait, the grounding model):
	 * for a 2026-07-28 client that declares the tasks extension, a call for
	 * which this says yes runs as a task, its plain handler on the task's
	 * thread in a context of its own (tasks.c). NULL: never. */
	bool (*task_when)(const cJSON *args);
} mcp_tool;

extern const mcp_tool mcp_tools[];
extern const size_t mcp_n_tools;

/* The row for a name in either form ("input.click" or "input_click"); -1. */
int mcp_tool_find(const char *name);
/* The name as listed: underscores (portable, the default), or dots when asked. Writes into buf. */
const char *mcp_tool_listed_name(const mcp_tool *t, bool dotted, char *buf, size_t len);
/* Add the max_text argument every tool takes to a parsed inputSchema (and
 * view, for a row that takes_view). */
void mcp_schema_add_common(cJSON *input_schema, bool takes_view);
/* Check args against a tool's inputSchema (type, required, enum, bounds, no
 * unknown properties). 0, or -1 with why. */
int mcp_check_args(const cJSON *schema, const cJSON *args, char *why, size_t len);
/* A call's arguments as the tools see them (free it): a copy without the
 * optional members given as null ("not given"), at every level; absent or
 * null arguments are {}. */
cJSON *mcp_args_without_nulls(const cJSON *schema, const cJSON *args);
/* The tools/list entry for row i. */
cJSON *mcp_tool_json(const ksr_mcp *m, size_t i);

/* Result helpers: a text block, an error (isError with a text block). Both return 0. */
int mcp_text(mcp_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int mcp_fail(mcp_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Structured content plus its compact JSON as a text block (for clients
 * without structuredContent support). Takes obj. */
int mcp_structured(mcp_result *r, cJSON *obj);
/* mcp_structured for an object with an array member (key): when its JSON is
 * over the call's max_text, items are dropped from the end until it fits, and
 * "truncated": true, "truncated_by": "max_text", "total": N are set. */
int mcp_structured_list(ksr_mcp *m, mcp_result *r, cJSON *obj, const char *key);
/* After a tool ran: a text block over max_text is cut (and says so); a
 * structured result over it becomes an isError telling how to narrow it. */
void mcp_cap_text(ksr_mcp *m, mcp_result *r);
#define MCP_DEFAULT_TEXT_CAP 40000

/* The CallToolResult object for a finished call (takes res's parts); modern
 * adds resultType. */
cJSON *mcp_call_result_json(mcp_result *res, bool modern);

/* ---- views as handles (tools_screen.c) ---- */

/* A new unguessable handle "PREFIX-<16 hex>" (views, pages); prefix at most 7
 * characters. */
void mcp_handle_id(const char *prefix, char out[24]);

/* Make v the current call's view and keep it under a new handle (in the
 * server's table, a task's too); its id (m->view_id). */
const char *mcp_view_keep(ksr_mcp *m, mcp_view v);
/* The view a call names by handle into *out; false when unknown or expired. */
bool mcp_view_find(ksr_mcp *m, const char *id, mcp_view *out);

/* ---- a task's context (server.c) ---- */

/* What a tool run as a task works in: the server's options and the calling
 * request's era and bounds, with connections of its own (X, AT-SPI: the
 * server's belong to the request loop's thread). Made on the loop's thread
 * at the call. */
ksr_mcp *mcp_context_new(ksr_mcp *m);
void mcp_context_free(ksr_mcp *c);
/* Whether row i runs as a task for this call (the client declared the
 * extension: the caller checks). */
bool mcp_tool_tasks(size_t i, const cJSON *args);

/* ---- tasks (tasks.c) ---- */

/* Start tool row i as a task: its CreateTaskResult, or NULL with why (a tool
 * error the client can read). Takes args. Called on the request loop's
 * thread, in the call (the task's context copies the request's era). */
cJSON *mcp_task_start(ksr_mcp *m, size_t i, cJSON *args, char *why, size_t len);
/* tasks/get, tasks/cancel, tasks/update: the result, or NULL with *code and why. */
cJSON *mcp_task_request(ksr_mcp *m, const char *method, const cJSON *params, int *code, char *why,
                        size_t len);
/* Cancel every running task and wait for them (at destroy). */
void mcp_tasks_stop(ksr_mcp *m);
/* A task reports its stage (from its thread). */
void mcp_task_status(mcp_task *t, const char *message);
/* Is a task of row i working? Its id into id (MCP_TASK_ID bytes). */
bool mcp_task_busy(ksr_mcp *m, size_t i, char *id);
#define MCP_TASK_ID 40
/* Cancellation that may outlive a call: the process-wide cancel request is
 * reset only when the last holder lets go (server.c). Under m->lock. */
void mcp_cancel_hold_locked(ksr_mcp *m);
void mcp_cancel_release_locked(ksr_mcp *m);

/* Base64 (RFC 4648), NUL-terminated; free it. */
char *mcp_base64(const unsigned char *d, size_t n);

/* ---- the evidence folder and resources (resources.c) ---- */

/* Write data as a new file (prefix-NNNN.ext) in the evidence folder; its
 * file:// URI (free it), or NULL with r's error set. */
char *mcp_evidence_write(ksr_mcp *m, const char *prefix, const char *ext, const char *mime,
                         const void *data, size_t len, mcp_result *r);
void mcp_evidence_cleanup(ksr_mcp *m);
/* resources/list and resources/read results; NULL with *code and why set. */
cJSON *mcp_resources_list(ksr_mcp *m);
cJSON *mcp_resource_read(ksr_mcp *m, const char *uri, int *code, char *why, size_t len);

/* Close every page connection (at destroy). */
void mcp_pages_close(ksr_mcp *m);

/* Lazily connected backends. -1 with r's error set. */
int mcp_need_x11(ksr_mcp *m, mcp_result *r);
/* Screenshot coordinates to screen pixels; -1 (error set) when outside. */
int mcp_to_screen(ksr_mcp *m, double sx, double sy, int *px, int *py, mcp_result *r);
/* Send a progress notification when the client asked for them. */
void mcp_progress(ksr_mcp *m, double total, const char *message);
/* A notifications/message at level ("info", "warning"...) when not filtered. */
void mcp_log(ksr_mcp *m, const char *level, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* The current request was cancelled (by ksr_mcp_cancel). */
bool mcp_cancel_hit(ksr_mcp *m);

/* Argument helpers: the member's value, or def when absent. */
int mcp_arg_int(const cJSON *args, const char *name, int def);
double mcp_arg_num(const cJSON *args, const char *name, double def);
const char *mcp_arg_str(const cJSON *args, const char *name);
bool mcp_arg_bool(const cJSON *args, const char *name, bool def);

/* The accessibility tools' shared steps (tools_a11y.c): connect, find the app
 * the arguments name and walk it (find mode when find is set). -1 with r's
 * error set; -2 (r's error set) when the app is not on the accessibility bus
 * (yet: a wait asks again). */
int mcp_a11y_walk(ksr_mcp *m, const cJSON *a, const ksr_atspi_walk_opts *wo, ksr_atspi_app *app,
                  ksr_atspi_tree *tree, mcp_result *r);

/* The locator arguments of a11y.click, a11y.state and a11y.text (name,
 * role, label, in: a name or {name, role}, nth), as a scenario writes them
 * (docs/scenario.md#locators). */
typedef struct mcp_locator {
	ksr_name_match name, label, in_name;
	ksr_atspi_locator l;
} mcp_locator;
/* 0, or -1 with r's error set (a bad pattern); clear it either way. */
int mcp_locator_args(const cJSON *a, mcp_locator *ml, mcp_result *r);
void mcp_locator_clear(mcp_locator *ml);
/* Whether a locator beyond name and role was asked. */
bool mcp_locator_given(const cJSON *a);

/* Handlers, by family. */
int mcp_tool_capture(ksr_mcp *m, const cJSON *a, mcp_result *r);
int mcp_tool_ground(ksr_mcp *m, const cJSON *a, mcp_result *r);
int mcp_tool_click(ksr_mcp *m, const cJSON *a, mcp_result *r);
int mcp_tool_move(ksr_mcp *m, const cJSON *a, mcp_result *r);
int mcp_tool_drag(ksr_mcp *m, const cJSON *a, mcp_result *r);
int mcp_tool_scroll(ksr_mcp *m, const cJSON *a, mcp_result *r);
int mcp_tool_type(ksr_mcp *m, const cJSON *a, mcp_result *r);
int mcp_tool_key(ksr_mcp *m, const cJSON *a, mcp_result *r);
int mcp_tool_window_list(ksr_mcp *m, const cJSON *a, mcp_result *r);
int mcp_tool_window_focus(ksr_mcp *m, const cJSON *a, mcp_result *r);
int mcp_tool_a11y_tree(ksr_mcp *m, const cJSON *a, mcp_result *r);
int mcp_tool_a11y_click(ksr_mcp *m, const cJSON *a, mcp_result *r);
int mcp_tool_a11y_state(ksr_mcp *m, const cJSON *a, mcp_result *r);
int mcp_tool_a11y_find(ksr_mcp *m, const cJSON *a, mcp_result *r);
int mcp_tool_screen_wait(ksr_mcp *m, const cJSON *a, mcp_result *r);
int mcp_tool_a11y_text(ksr_mcp *m, const cJSON *a, mcp_result *r); /* tools_text.c */
int mcp_tool_cdp_list(ksr_mcp *m, const cJSON *a, mcp_result *r);
int mcp_tool_cdp_click(ksr_mcp *m, const cJSON *a, mcp_result *r);
int mcp_tool_cdp_fill(ksr_mcp *m, const cJSON *a, mcp_result *r);
int mcp_tool_cdp_navigate(ksr_mcp *m, const cJSON *a, mcp_result *r);
int mcp_tool_scenario_run(ksr_mcp *m, const cJSON *a, mcp_result *r);
/* scenario.run as a task: the same run, its stages reported to the task. */
int mcp_task_scenario_run(ksr_mcp *m, mcp_task *t, const cJSON *a, mcp_result *r);

#endif
