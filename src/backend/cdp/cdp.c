/* CDP transport: discovery over HTTP with libcurl, one libwebsockets client
 * connection to the browser endpoint, a flattened session on a page target.
 * One command is in flight at a time (the API is synchronous); a reply whose
 * id is not the awaited one is late and dropped. See docs/cdp.md. */
#include "ksr/cdp.h"
#include "ksr/json.h"

#include "backend/cdp/fuzz.h"
#include "backend/cdp/page_common.h"
#include "backend/cdp/wire.h"
#include "backend/http/curl.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <libwebsockets.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RX_BUFFER       65536
#define MESSAGE_MAX     (64u << 20) /* a reply larger than this closes the connection */
#define EVENTS_MAX      512         /* oldest events are dropped beyond this */
#define PAGE_ERRORS_MAX 100         /* kept between takes; later ones are counted */
#define PAGE_ERROR_TEXT 1000        /* bytes of an error's text kept */
#define SERVICE_ROUNDS  16          /* ksr_cdp_take_page_errors: reads while messages come */
#define WAKE_MAX_MS     60000       /* a far deadline is re-armed every minute */
#define NO_PIPE_TICK_MS 50          /* cancel checks when the pipe cannot be polled */
#define DISCOVERY_MAX   (1u << 20)
#define DEFAULT_CALL_MS 10000

typedef struct out_msg {
	struct out_msg *next;
	size_t len;
	unsigned char buf[]; /* LWS_PRE bytes, then the message */
} out_msg;

struct ksr_cdp {
	struct lws_context *ctx;
	struct lws *wsi;
	struct lws *cancel_wsi; /* the cancel pipe in lws's poll set, NULL until adopted */
	lws_sorted_usec_list_t sul;
	bool connected, closed, crashed;
	bool wire; /* a bare connection (ksr_cdp_wire_open): no page session */
	char close_why[256];

	out_msg *out_head, *out_tail;
	ksr_strbuf rx; /* the message being received */

	int next_id, want_id;
	cJSON *reply;
	cJSON *events; /* array, oldest first */

	char *session_id, *target_id, *url;
	char host_hdr[300], path[512];
	ksr_cdp_timing timing;

	/* ksr_cdp_wire_call_unless: the event (for one context) that ends the
	 * call in flight, whether it came, the URL it named. */
	const char *end_method, *end_context;
	bool end_seen;
	char end_url[512];
	/* Page errors (ksr_cdp_page_error_add), oldest first, until taken; the
	 * protocol's hook picks them out of the events as they arrive, before
	 * anything (a navigation's ksr_cdp_drop_events) can drop them. */
	cJSON *page_errors;
	int page_errors_dropped;
	cJSON *presses; /* ksr_cdp_presses: NULL until a report came or was asked for */
	ksr_cdp_event_hook hook;
	void *hook_ud;
	unsigned long received; /* messages handled so far */
	/* ksr_cdp_set_closer: what ksr_cdp_close runs instead, once. */
	void (*closer)(void *ud);
	void *closer_ud;
};

const char *ksr_page_status_name(ksr_page_status s)
{
	static const char *const names[] = {
	        [KSR_CDP_OK] = "ok",
	        [KSR_CDP_ERROR] = "error",
	        [KSR_CDP_NOT_READY] = "not-ready",
	        [KSR_CDP_TIMEOUT] = "timeout",
	        [KSR_CDP_CANCELLED] = "cancelled",
	        [KSR_CDP_CLOSED] = "closed",
	        [KSR_CDP_CRASHED] = "crashed",
	};
	return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "error";
}

/* ---- discovery ------------------------------------------------------------ */

static long word_value(const char *s, size_t len, const char *key, char *buf, size_t buflen)
{
	size_t klen = strlen(key);
	for (size_t i = 0; i + klen <= len; i++) {
		if ((i > 0 && s[i - 1] != ' ' && s[i - 1] != '\0') || memcmp(s + i, key, klen))
			continue;
		size_t j = i + klen, n = 0;
		if (j < len && (s[j] == '"' || s[j] == '\''))
			j++;
		while (j < len && s[j] && s[j] != ' ' && s[j] != '"' && s[j] != '\'' &&
		       n + 1 < buflen)
			buf[n++] = s[j++];
		buf[n] = '\0';
		return (long)n;
	}
	return -1;
}

static int read_active_port(const char *dir)
{
	char path[4096], line[32] = "";
	snprintf(path, sizeof path, "%s/DevToolsActivePort", dir);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	int port = fgets(line, sizeof line, f) ? atoi(line) : 0;
	fclose(f);
	return port > 0 && port < 65536 ? port : 0;
}

int ksr_cdp_port_of_cmdline(const char *cmdline, size_t len)
{
	char val[4096];
	if (!cmdline)
		return 0;
	if (word_value(cmdline, len, "--remote-debugging-port=", val, sizeof val) > 0) {
		int port = atoi(val);
		if (port > 0 && port < 65536)
			return port;
	}
	if (word_value(cmdline, len, "--user-data-dir=", val, sizeof val) > 0)
		return read_active_port(val);
	return 0;
}

int ksr_cdp_port_of_pid(int pid)
{
	char path[64], buf[16384];
	snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
	int fd = pid > 0 ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf);
	close(fd);
	return n > 0 ? ksr_cdp_port_of_cmdline(buf, (size_t)n) : 0;
}

static int curl_progress(void *ud, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	(void)ud, (void)a, (void)b, (void)c, (void)d;
	return ksr_cancelled(); /* non-zero aborts the transfer */
}

/* GET http://host:port/json/version and return webSocketDebuggerUrl's path. */
static ksr_cdp_status discover(const char *host, int port, ksr_deadline d, char *path, size_t len,
                               ksr_err *err)
{
	char url[400];
	ksr_curl_body b = {.max = DISCOVERY_MAX};
	snprintf(url, sizeof url, "http://%s:%d/json/version", host, port);
	const ksr_curl_api *cu = ksr_curl(err);
	if (!cu)
		return KSR_CDP_ERROR;
	CURL *h = cu->easy_init();
	if (!h)
		return ksr_err_set(err, "cannot start libcurl"), KSR_CDP_ERROR;
	long ms = (long)ksr_deadline_remaining_ms(d);
	cu->easy_setopt(h, CURLOPT_URL, url);
	cu->easy_setopt(h, CURLOPT_NOPROXY, "*"); /* a proxy must never see the debug port */
	cu->easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	cu->easy_setopt(h, CURLOPT_TIMEOUT_MS, ms > 0 ? ms : 1L);
	cu->easy_setopt(h, CURLOPT_WRITEFUNCTION, ksr_curl_body_cb);
	cu->easy_setopt(h, CURLOPT_WRITEDATA, &b);
	cu->easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	cu->easy_setopt(h, CURLOPT_XFERINFOFUNCTION, curl_progress);
	CURLcode rc = cu->easy_perform(h);
	long status = 0;
	cu->easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	cu->easy_cleanup(h);
	ksr_cdp_status st = KSR_CDP_OK;
	if (ksr_cancelled())
		st = KSR_CDP_CANCELLED;
	else if (rc != CURLE_OK)
		st = (ksr_err_set(err, "%s: %s", url, cu->easy_strerror(rc)), KSR_CDP_CLOSED);
	else if (status != 200)
		st = (ksr_err_set(err, "%s answered HTTP %ld", url, status), KSR_CDP_CLOSED);
	cJSON *j = st == KSR_CDP_OK ? cJSON_Parse(b.buf.p) : NULL;
	const char *ws = cJSON_GetStringValue(cJSON_GetObjectItem(j, "webSocketDebuggerUrl"));
	const char *p = ws && !strncmp(ws, "ws://", 5) ? strchr(ws + 5, '/') : NULL;
	if (st == KSR_CDP_OK && !p)
		st = (ksr_err_set(err, "%s has no webSocketDebuggerUrl", url), KSR_CDP_ERROR);
	if (p)
		snprintf(path, len, "%s", p); /* the host in the URL is ignored: loopback stays */
	cJSON_Delete(j);
	ksr_strbuf_free(&b.buf);
	return st;
}

/* ---- the WebSocket -------------------------------------------------------- */

static void note_closed(ksr_cdp *c, const char *why)
{
	if (!c->closed)
		snprintf(c->close_why, sizeof c->close_why, "%s", why);
	c->closed = true;
	c->connected = false;
}

static void queue_event(ksr_cdp *c, cJSON *msg)
{
	const char *m = cJSON_GetStringValue(cJSON_GetObjectItem(msg, "method"));
	const char *sid = cJSON_GetStringValue(cJSON_GetObjectItem(msg, "sessionId"));
	cJSON *params = cJSON_GetObjectItem(msg, "params");
	bool ours = sid && c->session_id && !strcmp(sid, c->session_id);
	const char *tid = cJSON_GetStringValue(cJSON_GetObjectItem(params, "targetId"));
	const char *dsid = cJSON_GetStringValue(cJSON_GetObjectItem(params, "sessionId"));
	if ((ours && !strcmp(m, "Inspector.targetCrashed")) ||
	    (!strcmp(m, "Target.targetCrashed") && tid && c->target_id &&
	     !strcmp(tid, c->target_id)))
		c->crashed = true;
	if (!strcmp(m, "Target.detachedFromTarget") && dsid && c->session_id &&
	    !strcmp(dsid, c->session_id))
		note_closed(c, "the page target was closed");
	const char *ctx = cJSON_GetStringValue(cJSON_GetObjectItem(params, "context"));
	if (c->end_method && !strcmp(m, c->end_method) && ctx && c->end_context &&
	    !strcmp(ctx, c->end_context)) {
		const char *url = cJSON_GetStringValue(cJSON_GetObjectItem(params, "url"));
		snprintf(c->end_url, sizeof c->end_url, "%s", url ? url : "");
		c->end_seen = true;
	}
	if (c->hook && (ours || c->wire) && c->hook(c->hook_ud, c, m, params)) {
		cJSON_Delete(msg); /* the protocol's hook kept what it needed */
		return;
	}
	if (cJSON_GetArraySize(c->events) >= EVENTS_MAX)
		cJSON_DeleteItemFromArray(c->events, 0);
	cJSON_AddItemToArray(c->events, msg);
}

static void on_message(ksr_cdp *c)
{
	cJSON *msg = cJSON_ParseWithLength(c->rx.p, c->rx.len);
	c->rx.len = 0; /* the allocation is kept for the next message */
	c->received++;
	if (!msg)
		return;
	cJSON *id = cJSON_GetObjectItem(msg, "id");
	if (cJSON_IsNumber(id)) {
		/* Only the awaited reply is kept; anything else is late. */
		if (id->valueint == c->want_id && !c->reply)
			c->reply = msg;
		else
			cJSON_Delete(msg);
		return;
	}
	if (cJSON_IsString(cJSON_GetObjectItem(msg, "method")))
		queue_event(c, msg);
	else
		cJSON_Delete(msg); /* e.g. -32700 without an id: nobody can match it */
}

/* One fragment of a message: len bytes now, more still announced by the frame
 * header; the message is handled when its final fragment is complete. Apart
 * from on_receive so that the fuzzer (ksr_cdp_fuzz_frames) goes through it. */
static void rx_fragment(ksr_cdp *c, const void *in, size_t len, size_t more, bool final)
{
	if (c->rx.len + len + more > MESSAGE_MAX) {
		note_closed(c, "the browser sent a message over the 64 MiB cap");
		return;
	}
	ksr_strbuf_addn(&c->rx, in, len);
	if (final && more == 0)
		on_message(c);
}

static void on_receive(ksr_cdp *c, struct lws *wsi, const void *in, size_t len)
{
	rx_fragment(c, in, len, lws_remaining_packet_payload(wsi), lws_is_final_fragment(wsi));
}

static int on_writeable(ksr_cdp *c, struct lws *wsi)
{
	out_msg *m = c->out_head;
	if (!m)
		return 0;
	c->out_head = m->next;
	if (!c->out_head)
		c->out_tail = NULL;
	int n = lws_write(wsi, m->buf + LWS_PRE, m->len, LWS_WRITE_TEXT);
	free(m);
	if (n < 0)
		return -1;
	if (c->out_head)
		lws_callback_on_writable(wsi);
	return 0;
}

static int ws_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                       size_t len)
{
	ksr_cdp *c = user;
	if (!c)
		return 0;
	switch (reason) {
	case LWS_CALLBACK_CLIENT_ESTABLISHED:
		c->connected = true;
		if (c->out_head)
			lws_callback_on_writable(wsi);
		break;
	case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
		note_closed(c, in && len ? (const char *)in : "the WebSocket connection failed");
		c->wsi = NULL;
		break;
	case LWS_CALLBACK_CLIENT_RECEIVE:
		on_receive(c, wsi, in, len);
		if (c->closed)
			return -1;
		break;
	case LWS_CALLBACK_CLIENT_WRITEABLE:
		return on_writeable(c, wsi);
	case LWS_CALLBACK_CLIENT_CLOSED:
	case LWS_CALLBACK_WSI_DESTROY:
		if (wsi == c->wsi) {
			note_closed(c, "the browser closed the connection");
			c->wsi = NULL;
		}
		break;
	default:
		break;
	}
	return 0;
}

/* The cancel pipe, adopted as a raw file: readable once the run is cancelled,
 * it wakes lws's poll. Nothing is read from it (the pipe stays readable for
 * every other wait); lws_service returns and the pump sees ksr_cancelled(). */
static int cancel_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                           size_t len)
{
	(void)user, (void)in, (void)len;
	ksr_cdp *c = wsi ? lws_get_opaque_user_data(wsi) : NULL;
	if (c && reason == LWS_CALLBACK_RAW_CLOSE_FILE && c->cancel_wsi == wsi)
		c->cancel_wsi = NULL;
	return 0;
}

static const struct lws_protocols protocols[] = {
        {"ksr-cdp", ws_callback, 0, RX_BUFFER, 0, NULL, 0},
        {"ksr-cancel", cancel_callback, 0, 0, 0, NULL, 0},
        {NULL, NULL, 0, 0, 0, NULL, 0},
};

/* Put the cancel pipe into lws's poll set, once the pipe exists. lws closes
 * what it adopts, so it gets a duplicate of the descriptor. */
static void watch_cancel(ksr_cdp *c)
{
	if (c->cancel_wsi || ksr_cancel_fd() < 0)
		return;
	lws_adopt_desc_t a = {
	        .vh = lws_get_vhost_by_name(c->ctx, "default"),
	        .type = LWS_ADOPT_RAW_FILE_DESC,
	        .vh_prot_name = "ksr-cancel",
	        .opaque = c,
	};
	if (!a.vh)
		return;
	a.fd.filefd = fcntl(ksr_cancel_fd(), F_DUPFD_CLOEXEC, 3);
	if (a.fd.filefd < 0)
		return;
	/* On failure lws has closed the duplicate; the next pump tries again. */
	c->cancel_wsi = lws_adopt_descriptor_vhost_via_info(&a);
}

static void wake_cb(lws_sorted_usec_list_t *sul)
{
	ksr_cdp *c = lws_container_of(sul, ksr_cdp, sul);
	/* lws_service ignores its timeout: only this (or a descriptor) wakes its poll. */
	lws_cancel_service(c->ctx);
}

typedef bool (*done_fn)(ksr_cdp *c, void *ud);

/* Service the connection until done(), the deadline, a cancel, a crash or a
 * close. lws's poll wakes for the socket, for the cancel pipe (adopted into
 * its poll set) and for the timer set at the deadline. */
static ksr_cdp_status pump(ksr_cdp *c, ksr_deadline d, done_fn done, void *ud)
{
	if (c->ctx)
		watch_cancel(c);
	for (;;) {
		if (done && done(c, ud))
			return KSR_CDP_OK;
		if (c->crashed)
			return KSR_CDP_CRASHED;
		if (c->closed || !c->ctx)
			return KSR_CDP_CLOSED;
		if (ksr_cancelled())
			return KSR_CDP_CANCELLED;
		int64_t left = ksr_deadline_remaining_ms(d);
		if (left <= 0)
			return KSR_CDP_TIMEOUT;
		int64_t wait = left < WAKE_MAX_MS ? left : WAKE_MAX_MS;
		/* Only when the pipe is not in the poll set (not installed yet, or
		 * lws refused it) does a short tick stand in for it. */
		if (!c->cancel_wsi && wait > NO_PIPE_TICK_MS)
			wait = NO_PIPE_TICK_MS;
		lws_sul_schedule(c->ctx, 0, &c->sul, wake_cb, (lws_usec_t)wait * 1000);
		lws_service(c->ctx, 0);
	}
}

static bool is_connected(ksr_cdp *c, void *ud)
{
	(void)ud;
	return c->connected;
}

static ksr_cdp_status open_socket(ksr_cdp *c, const char *host, int port, ksr_deadline d,
                                  ksr_err *err)
{
	struct lws_context_creation_info info;
	memset(&info, 0, sizeof info);
	info.port = CONTEXT_PORT_NO_LISTEN;
	info.protocols = protocols;
	info.gid = -1;
	info.uid = -1;
	info.fd_limit_per_thread = 16; /* lws sizes its tables from this, not ulimit -n */
	lws_set_log_level(0, NULL);    /* library code never prints */
	c->ctx = lws_create_context(&info);
	if (!c->ctx)
		return ksr_err_set(err, "cannot create a libwebsockets context"), KSR_CDP_ERROR;
	struct lws_client_connect_info ci;
	memset(&ci, 0, sizeof ci);
	snprintf(c->host_hdr, sizeof c->host_hdr, "%s:%d", host, port);
	ci.context = c->ctx;
	ci.address = host;
	ci.port = port;
	ci.path = c->path;
	ci.host = c->host_hdr; /* unset, lws sends "Host: (null)", which Chromium refuses */
	ci.origin = NULL;      /* Chromium refuses an Origin it was not told to allow */
	ci.ietf_version_or_minus_one = -1;
	ci.userdata = c;
	ci.pwsi = &c->wsi;
	ci.protocol = NULL;
	if (!lws_client_connect_via_info(&ci) && !c->closed)
		note_closed(c, "libwebsockets could not start the connection");
	ksr_cdp_status st = pump(c, d, is_connected, NULL);
	if (st == KSR_CDP_TIMEOUT)
		ksr_err_set(err, "the WebSocket handshake with %s did not finish in time",
		            c->host_hdr);
	else if (st != KSR_CDP_OK)
		ksr_err_set(err, "WebSocket to ws://%s%s: %s", c->host_hdr, c->path,
		            c->closed ? c->close_why : ksr_cdp_status_name(st));
	return st;
}

/* ---- commands ------------------------------------------------------------- */

static void enqueue(ksr_cdp *c, const char *text)
{
	size_t len = strlen(text);
	out_msg *m = ksr_xmalloc(sizeof *m + LWS_PRE + len);
	m->next = NULL;
	m->len = len;
	memcpy(m->buf + LWS_PRE, text, len);
	if (c->out_tail)
		c->out_tail->next = m;
	else
		c->out_head = m;
	c->out_tail = m;
	if (c->wsi && c->connected)
		lws_callback_on_writable(c->wsi);
}

static bool have_reply(ksr_cdp *c, void *ud)
{
	(void)ud;
	return c->reply != NULL;
}

static ksr_cdp_status reply_result(ksr_cdp *c, const char *method, cJSON **result, ksr_err *err)
{
	cJSON *e = cJSON_GetObjectItem(c->reply, "error");
	ksr_cdp_status st = KSR_CDP_OK;
	if (e) {
		/* CDP: error {code, message}; WebDriver BiDi: error "code", message beside it. */
		const char *m = cJSON_GetStringValue(
		        cJSON_GetObjectItem(cJSON_IsString(e) ? c->reply : e, "message"));
		ksr_err_set(err, "%s: %s", method, m ? m : "error");
		st = KSR_CDP_ERROR;
	} else if (result) {
		*result = cJSON_DetachItemFromObject(c->reply, "result");
		if (!*result)
			*result = cJSON_CreateObject();
	}
	cJSON_Delete(c->reply);
	c->reply = NULL;
	return st;
}

/* Queue a command with a fresh id; returns the id. */
static int send_cmd(ksr_cdp *c, bool session, const char *method, cJSON *params)
{
	cJSON *msg = cJSON_CreateObject();
	int id = ++c->next_id;
	cJSON_AddNumberToObject(msg, "id", id);
	cJSON_AddStringToObject(msg, "method", method);
	cJSON_AddItemToObject(msg, "params", params ? params : cJSON_CreateObject());
	if (session && c->session_id)
		cJSON_AddStringToObject(msg, "sessionId", c->session_id);
	char *text = ksr_json_print(msg, false);
	cJSON_Delete(msg);
	enqueue(c, text);
	free(text);
	return id;
}

ksr_cdp_status ksr_cdp_send(ksr_cdp *c, const char *method, cJSON *params, ksr_err *err)
{
	if (!c || c->closed || c->crashed) {
		cJSON_Delete(params);
		return ksr_err_set(err, "no browser is attached"), KSR_CDP_CLOSED;
	}
	send_cmd(c, true, method, params); /* nobody waits: its reply reads as late */
	return KSR_CDP_OK;
}

/* What a command that got no reply says: why the wait for it ended. */
static ksr_cdp_status call_failed(ksr_cdp *c, const char *method, ksr_cdp_status st, ksr_err *err)
{
	if (st == KSR_CDP_TIMEOUT)
		ksr_err_set(err, "the browser did not answer %s in time", method);
	else if (st == KSR_CDP_CLOSED)
		ksr_err_set(err, "%s failed: %s", method, c->close_why);
	else if (st == KSR_CDP_CRASHED)
		ksr_err_set(err, "the page's renderer crashed during %s", method);
	else
		ksr_err_set(err, "%s was cancelled", method);
	return st;
}

static ksr_cdp_status call(ksr_cdp *c, bool session, const char *method, cJSON *params,
                           ksr_deadline d, cJSON **result, ksr_err *err)
{
	if (result)
		*result = NULL;
	if (!c) {
		cJSON_Delete(params);
		return ksr_err_set(err, "no browser is attached"), KSR_CDP_CLOSED;
	}
	cJSON_Delete(c->reply);
	c->reply = NULL;
	c->want_id = send_cmd(c, session, method, params);
	ksr_cdp_status st = pump(c, d, have_reply, NULL);
	c->want_id = 0; /* from now on its reply is late */
	if (st == KSR_CDP_OK)
		return reply_result(c, method, result, err);
	return call_failed(c, method, st, err);
}

ksr_cdp_status ksr_cdp_call(ksr_cdp *c, const char *method, cJSON *params, ksr_deadline d,
                            cJSON **result, ksr_err *err)
{
	return call(c, true, method, params, d, result, err);
}

static bool have_reply_or_end(ksr_cdp *c, void *ud)
{
	(void)ud;
	return c->reply != NULL || c->end_seen;
}

ksr_cdp_status ksr_cdp_wire_call_unless(ksr_cdp *c, const char *method, cJSON *params,
                                        ksr_deadline d, const char *event, const char *context,
                                        cJSON **result, bool *ended, ksr_err *err)
{
	*ended = false;
	if (result)
		*result = NULL;
	if (!c || c->closed || c->crashed) {
		cJSON_Delete(params);
		return ksr_err_set(err, "no browser is attached"), KSR_CDP_CLOSED;
	}
	cJSON_Delete(c->reply);
	c->reply = NULL;
	c->end_method = event;
	c->end_context = context;
	c->end_seen = false;
	c->want_id = send_cmd(c, true, method, params);
	ksr_cdp_status st = pump(c, d, have_reply_or_end, NULL);
	c->want_id = 0;
	c->end_method = c->end_context = NULL;
	if (st == KSR_CDP_OK && c->reply)
		return reply_result(c, method, result, err);
	if (st == KSR_CDP_OK) {
		*ended = true;
		return ksr_err_set(err, "the page loaded a new document (%.300s) during %s",
		                   c->end_url, method),
		       KSR_CDP_ERROR;
	}
	return call_failed(c, method, st, err);
}

/* ksr_cdp_call on the browser connection (Target.*, Browser.*). */
static ksr_cdp_status ksr_cdp_call_browser(ksr_cdp *c, const char *method, cJSON *params,
                                           ksr_deadline d, cJSON **result, ksr_err *err)
{
	return call(c, false, method, params, d, result, err);
}

/* ---- events --------------------------------------------------------------- */

static cJSON *take_event(ksr_cdp *c, const char *method)
{
	cJSON *e;
	cJSON_ArrayForEach(e, c->events)
	{
		const char *m = cJSON_GetStringValue(cJSON_GetObjectItem(e, "method"));
		const char *sid = cJSON_GetStringValue(cJSON_GetObjectItem(e, "sessionId"));
		bool ours = c->wire || (sid && c->session_id && !strcmp(sid, c->session_id));
		if (m && !strcmp(m, method) && ours)
			return cJSON_DetachItemViaPointer(c->events, e);
	}
	return NULL;
}

typedef struct ev_wait {
	const char *method;
	cJSON *got;
} ev_wait;

static bool have_event(ksr_cdp *c, void *ud)
{
	ev_wait *w = ud;
	if (!w->got)
		w->got = take_event(c, w->method);
	return w->got != NULL;
}

ksr_cdp_status ksr_cdp_wait_event(ksr_cdp *c, const char *method, ksr_deadline d, cJSON **ev,
                                  ksr_err *err)
{
	ev_wait w = {.method = method};
	if (ev)
		*ev = NULL;
	if (!c)
		return ksr_err_set(err, "no browser is attached"), KSR_CDP_CLOSED;
	ksr_cdp_status st = pump(c, d, have_event, &w);
	if (st == KSR_CDP_TIMEOUT)
		ksr_err_set(err, "no %s event came in time", method);
	else if (st == KSR_CDP_CLOSED)
		ksr_err_set(err, "%s", c->close_why);
	else if (st == KSR_CDP_CRASHED)
		ksr_err_set(err, "the page's renderer crashed");
	if (ev)
		*ev = w.got;
	else
		cJSON_Delete(w.got);
	return st;
}

/* ---- page errors ------------------------------------------------------------ */

void ksr_cdp_set_event_hook(ksr_cdp *c, ksr_cdp_event_hook fn, void *ud)
{
	c->hook = fn;
	c->hook_ud = ud;
}

/* At most max bytes of s, not cutting a UTF-8 sequence. */
static char *cut_text(const char *s, size_t max)
{
	size_t n = strlen(s);
	if (n <= max)
		return ksr_xstrdup(s);
	while (n > 0 && max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
		max--;
	return ksr_xasprintf("%.*s...", (int)max, s);
}

void ksr_cdp_page_error_add(ksr_cdp *c, const char *kind, const char *text, const char *source)
{
	if (cJSON_GetArraySize(c->page_errors) >= PAGE_ERRORS_MAX) {
		c->page_errors_dropped++;
		return;
	}
	cJSON *e = cJSON_CreateObject();
	char *t = cut_text(text ? text : "", PAGE_ERROR_TEXT);
	cJSON_AddStringToObject(e, "kind", kind);
	cJSON_AddStringToObject(e, "text", t);
	free(t);
	if (source && *source)
		cJSON_AddStringToObject(e, "source", source);
	cJSON_AddItemToArray(c->page_errors, e);
}

/* Read what has already arrived, without waiting for more: a round of the
 * loop whose timer fires at once, again while messages keep coming. */
static void service_now(ksr_cdp *c)
{
	for (int i = 0; i < SERVICE_ROUNDS && c->ctx && !c->closed; i++) {
		unsigned long before = c->received;
		lws_sul_schedule(c->ctx, 0, &c->sul, wake_cb, 1);
		lws_service(c->ctx, 0);
		if (c->received == before)
			break;
	}
}

cJSON *ksr_cdp_take_page_errors(ksr_cdp *c, int *dropped)
{
	int none;
	dropped = dropped ? dropped : &none;
	*dropped = 0;
	if (!c)
		return cJSON_CreateArray();
	service_now(c);
	cJSON *taken = c->page_errors;
	c->page_errors = cJSON_CreateArray();
	*dropped = c->page_errors_dropped;
	c->page_errors_dropped = 0;
	return taken;
}

cJSON *ksr_cdp_presses(ksr_cdp *c)
{
	if (!c->presses)
		c->presses = cJSON_CreateObject();
	return c->presses;
}

ksr_cdp_status ksr_cdp_pump_until(ksr_cdp *c, ksr_deadline d, bool (*done)(ksr_cdp *c, void *ud),
                                  void *ud)
{
	return c ? pump(c, d, done, ud) : KSR_CDP_CLOSED;
}

void ksr_cdp_drop_events(ksr_cdp *c)
{
	while (c && cJSON_GetArraySize(c->events) > 0)
		cJSON_DeleteItemFromArray(c->events, 0);
}

ksr_cdp_status ksr_cdp_idle(ksr_cdp *c, ksr_deadline d, ksr_err *err)
{
	if (!c)
		return ksr_err_set(err, "no browser is attached"), KSR_CDP_CLOSED;
	ksr_cdp_status st = pump(c, d, NULL, NULL);
	if (st == KSR_CDP_TIMEOUT)
		return KSR_CDP_OK;
	if (st == KSR_CDP_CLOSED)
		ksr_err_set(err, "%s", c->close_why);
	else if (st == KSR_CDP_CRASHED)
		ksr_err_set(err, "the page's renderer crashed");
	return st;
}

/* ---- attach --------------------------------------------------------------- */

static bool usable_page(const cJSON *t)
{
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(t, "type"));
	const char *url = cJSON_GetStringValue(cJSON_GetObjectItem(t, "url"));
	return type && !strcmp(type, "page") && url && strncmp(url, "devtools://", 11) &&
	       strncmp(url, "chrome-extension://", 19);
}

static ksr_cdp_status pick_target(ksr_cdp *c, ksr_deadline d, ksr_err *err)
{
	cJSON *res = NULL, *t;
	ksr_cdp_status st = ksr_cdp_call_browser(c, "Target.getTargets", NULL, d, &res, err);
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(res, "targetInfos"))
	{
		if (!usable_page(t))
			continue;
		c->target_id =
		        ksr_xstrdup(cJSON_GetStringValue(cJSON_GetObjectItem(t, "targetId")));
		c->url = ksr_xstrdup(cJSON_GetStringValue(cJSON_GetObjectItem(t, "url")));
		break;
	}
	cJSON_Delete(res);
	if (st != KSR_CDP_OK || c->target_id)
		return st;
	cJSON *p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "url", "about:blank");
	st = ksr_cdp_call_browser(c, "Target.createTarget", p, d, &res, err);
	const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(res, "targetId"));
	if (st == KSR_CDP_OK && id) {
		c->target_id = ksr_xstrdup(id);
		c->url = ksr_xstrdup("about:blank");
	}
	cJSON_Delete(res);
	return st;
}

static ksr_cdp_status attach(ksr_cdp *c, ksr_deadline d, ksr_err *err)
{
	ksr_cdp_status st = pick_target(c, d, err);
	if (st != KSR_CDP_OK)
		return st;
	cJSON *p = cJSON_CreateObject(), *res = NULL;
	cJSON_AddStringToObject(p, "targetId", c->target_id);
	cJSON_AddBoolToObject(p, "flatten", true);
	st = ksr_cdp_call_browser(c, "Target.attachToTarget", p, d, &res, err);
	const char *sid = cJSON_GetStringValue(cJSON_GetObjectItem(res, "sessionId"));
	if (st == KSR_CDP_OK && !sid)
		st = (ksr_err_set(err, "Target.attachToTarget gave no sessionId"), KSR_CDP_ERROR);
	if (sid)
		c->session_id = ksr_xstrdup(sid);
	cJSON_Delete(res);
	/* Page: load events; Inspector: targetCrashed. */
	if (st == KSR_CDP_OK)
		st = ksr_cdp_call(c, "Page.enable", NULL, d, NULL, err);
	if (st == KSR_CDP_OK)
		st = ksr_cdp_call(c, "Inspector.enable", NULL, d, NULL, err);
	/* Runtime: the page's uncaught exceptions and console errors (the hook
	 * keeps them; Chromium replays those from before the attach). */
	if (st == KSR_CDP_OK)
		st = ksr_cdp_call(c, "Runtime.enable", NULL, d, NULL, err);
	return st;
}

ksr_cdp *ksr_cdp_connect(const char *host, int port, ksr_deadline d, ksr_cdp_status *st,
                         ksr_err *err)
{
	ksr_cdp_status dummy;
	st = st ? st : &dummy;
	ksr_cdp *c = ksr_xcalloc(1, sizeof *c);
	c->events = cJSON_CreateArray();
	c->page_errors = cJSON_CreateArray();
	ksr_cdp_set_event_hook(c, ksr_cdp_runtime_hook, NULL);
	int64_t t0 = ksr_now_ms();
	*st = discover(host ? host : "127.0.0.1", port, d, c->path, sizeof c->path, err);
	int64_t t1 = ksr_now_ms();
	if (*st == KSR_CDP_OK)
		*st = open_socket(c, host ? host : "127.0.0.1", port, d, err);
	int64_t t2 = ksr_now_ms();
	if (*st == KSR_CDP_OK)
		*st = attach(c, d, err);
	c->timing.discover_ms = (double)(t1 - t0);
	c->timing.handshake_ms = (double)(t2 - t1);
	c->timing.attach_ms = (double)(ksr_now_ms() - t2);
	if (*st == KSR_CDP_OK)
		return c;
	ksr_cdp_close(c);
	return NULL;
}

ksr_cdp *ksr_cdp_wire_open(const char *host, int port, const char *path, ksr_deadline d,
                           ksr_cdp_status *st, ksr_err *err)
{
	ksr_cdp *c = ksr_xcalloc(1, sizeof *c);
	c->events = cJSON_CreateArray();
	c->page_errors = cJSON_CreateArray();
	c->wire = true;
	snprintf(c->path, sizeof c->path, "%s", path);
	int64_t t0 = ksr_now_ms();
	*st = open_socket(c, host, port, d, err);
	c->timing.handshake_ms = (double)(ksr_now_ms() - t0);
	if (*st == KSR_CDP_OK)
		return c;
	ksr_cdp_close(c);
	return NULL;
}

void ksr_cdp_wire_set_url(ksr_cdp *c, const char *url)
{
	free(c->url);
	c->url = url ? ksr_xstrdup(url) : NULL;
}

void ksr_cdp_set_closer(ksr_cdp *c, void (*closer)(void *ud), void *ud)
{
	if (!c)
		return;
	c->closer = closer;
	c->closer_ud = ud;
}

void ksr_cdp_close(ksr_cdp *c)
{
	if (!c)
		return;
	if (c->closer) { /* the handle built over c closes it whole (and c again, plainly) */
		void (*closer)(void *) = c->closer;
		c->closer = NULL;
		closer(c->closer_ud);
		return;
	}
	note_closed(c, "the connection was closed by the runtime");
	if (c->ctx) {
		lws_sul_cancel(&c->sul);
		lws_context_destroy(c->ctx); /* closes the socket; callbacks see closed */
	}
	for (out_msg *m = c->out_head, *next; m; m = next) {
		next = m->next;
		free(m);
	}
	cJSON_Delete(c->reply);
	cJSON_Delete(c->events);
	cJSON_Delete(c->page_errors);
	cJSON_Delete(c->presses);
	ksr_strbuf_free(&c->rx);
	free(c->session_id);
	free(c->target_id);
	free(c->url);
	free(c);
}

const ksr_cdp_timing *ksr_cdp_timings(const ksr_cdp *c)
{
	return c ? &c->timing : NULL;
}

const char *ksr_cdp_page_url(const ksr_cdp *c)
{
	return c ? c->url : NULL;
}

bool ksr_cdp_crashed(const ksr_cdp *c)
{
	return c && c->crashed;
}

/* ---- fuzzing entry (backend/cdp/fuzz.h) ------------------------------------ */

/* The frames are [flags][len hi][len lo][payload]: bit 0 of flags ends the
 * message, bit 1 claims 1 KiB more is coming in the frame, bit 2 makes the
 * next message the awaited reply. Between frames the caller-side paths that
 * read what arrived (a reply, an event by method, a press report, the crash
 * flag) run too. */
void ksr_cdp_fuzz_frames(const unsigned char *data, size_t size)
{
	ksr_cdp *c = ksr_xcalloc(1, sizeof *c);
	c->events = cJSON_CreateArray();
	c->page_errors = cJSON_CreateArray();
	c->session_id = ksr_xstrdup("S1");
	c->target_id = ksr_xstrdup("T1");
	ksr_cdp_set_event_hook(c, ksr_cdp_runtime_hook, NULL);
	while (size >= 3) {
		unsigned flags = data[0];
		size_t n = ((size_t)data[1] << 8) | data[2];
		data += 3, size -= 3;
		n = n < size ? n : size;
		if (flags & 4)
			c->want_id = ++c->next_id;
		rx_fragment(c, data, n, flags & 2 ? 1024 : 0, flags & 1);
		data += n, size -= n;
		if (c->reply) {
			cJSON *result = NULL;
			ksr_err err = {0};
			reply_result(c, "Fuzz.method", &result, &err);
			cJSON_Delete(result);
		}
		cJSON_Delete(take_event(c, "Page.loadEventFired"));
		ksr_page_pressed pr; /* the press reports kept (Runtime.bindingCalled) */
		ksr_err ignored = {0};
		ksr_page_wire_take_press(c, 100, 100, ksr_deadline_in_ms(0), &pr, &ignored);
		ksr_page_pressed_clear(&pr);
	}
	cJSON_Delete(ksr_cdp_take_page_errors(c, NULL));
	ksr_cdp_drop_events(c);
	ksr_cdp_close(c);
}
