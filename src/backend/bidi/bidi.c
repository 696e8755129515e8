/* WebDriver BiDi session: discovery from the browser's command line or
 * profile, the WebSocket (the CDP backend's transport, backend/cdp/wire.h),
 * session.new, the browsing context, commands with a deadline, remote values
 * into JSON, console entries. See docs/cdp.md. */
#include "ksr/bidi.h"

#include "backend/bidi/priv.h"
#include "backend/cdp/page_common.h"
#include "backend/cdp/wire.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CLOSE_MS     1000 /* session.end on close: a bounded courtesy */
#define PROFILE_JSON "WebDriverBiDiServer.json"

/* ---- discovery ------------------------------------------------------------ */

/* The argument after the word key (or after "key="), NUL- or space-separated. */
static bool arg_after(const char *s, size_t len, const char *key, char *buf, size_t buflen)
{
	size_t klen = strlen(key);
	for (size_t i = 0; i + klen <= len; i++) {
		if ((i > 0 && s[i - 1] != ' ' && s[i - 1] != '\0') || memcmp(s + i, key, klen))
			continue;
		size_t j = i + klen;
		if (j < len && s[j] != '=' && s[j] != ' ' && s[j] != '\0')
			continue; /* a longer flag */
		j++;
		size_t n = 0;
		while (j < len && s[j] && s[j] != ' ' && n + 1 < buflen)
			buf[n++] = s[j++];
		buf[n] = '\0';
		return n > 0;
	}
	return false;
}

static int profile_port(const char *dir)
{
	char path[4096], text[512];
	snprintf(path, sizeof path, "%s/" PROFILE_JSON, dir);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	size_t n = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	text[n] = '\0';
	cJSON *j = cJSON_Parse(text);
	double port = cJSON_GetNumberValue(cJSON_GetObjectItem(j, "ws_port"));
	cJSON_Delete(j);
	return port > 0 && port < 65536 ? (int)port : 0;
}

/* cwd: where a relative --profile is (the browser's working directory;
 * Tor Browser's start script passes a relative one), or NULL. */
static int port_of(const char *cmdline, size_t len, const char *cwd)
{
	char val[4096], dir[8192];
	if (!cmdline)
		return 0;
	if (arg_after(cmdline, len, "--remote-debugging-port", val, sizeof val)) {
		int port = atoi(val);
		if (port > 0 && port < 65536)
			return port;
	}
	if (!arg_after(cmdline, len, "--profile", val, sizeof val) &&
	    !arg_after(cmdline, len, "-profile", val, sizeof val))
		return 0;
	if (val[0] != '/' && cwd)
		snprintf(dir, sizeof dir, "%s/%s", cwd, val);
	else
		snprintf(dir, sizeof dir, "%s", val);
	return profile_port(dir);
}

int ksr_bidi_port_of_cmdline(const char *cmdline, size_t len)
{
	return port_of(cmdline, len, NULL);
}

static ssize_t read_cmdline(int pid, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
	int fd = pid > 0 ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, len);
	close(fd);
	return n;
}

int ksr_bidi_port_of_pid(int pid)
{
	char buf[16384], cwd[64];
	ssize_t n = read_cmdline(pid, buf, sizeof buf);
	snprintf(cwd, sizeof cwd, "/proc/%d/cwd", pid);
	return n > 0 ? port_of(buf, (size_t)n, cwd) : 0;
}

bool ksr_bidi_is_firefox_cmdline(const char *cmdline, size_t len)
{
	if (!cmdline || !len)
		return false;
	size_t n = strnlen(cmdline, len);
	const char *exe = cmdline, *slash = memrchr(cmdline, '/', n);
	if (slash)
		exe = slash + 1;
	return !strncmp(exe, "firefox", 7);
}

bool ksr_bidi_is_firefox_pid(int pid)
{
	char buf[4096];
	ssize_t n = read_cmdline(pid, buf, sizeof buf);
	return n > 0 && ksr_bidi_is_firefox_cmdline(buf, (size_t)n);
}

/* ---- page errors ------------------------------------------------------------- */

/* log.entryAdded at level error, as it arrives: a "javascript" entry is an
 * uncaught exception, a "console" one console.error (or assert); where from,
 * the first frame of its stack. Other levels are dropped. */
static void log_entry(ksr_cdp *c, const cJSON *params)
{
	const char *level = cJSON_GetStringValue(cJSON_GetObjectItem(params, "level"));
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(params, "type"));
	if (!level || strcmp(level, "error"))
		return;
	const cJSON *top = cJSON_GetArrayItem(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(params, "stackTrace"), "callFrames"), 0);
	const char *url = cJSON_GetStringValue(cJSON_GetObjectItem(top, "url"));
	const cJSON *line = cJSON_GetObjectItem(top, "lineNumber");
	char *src = !url || !*url          ? NULL
	            : cJSON_IsNumber(line) ? ksr_xasprintf("%s:%d", url, line->valueint + 1)
	                                   : ksr_xstrdup(url);
	ksr_cdp_page_error_add(c, type && !strcmp(type, "javascript") ? "exception" : "console",
	                       cJSON_GetStringValue(cJSON_GetObjectItem(params, "text")), src);
	free(src);
}

/* The events kept as they arrive: page errors, and the press listener's
 * reports (script.message on its channel, the data a string). */
static bool events_hook(void *ud, ksr_cdp *c, const char *method, const cJSON *params)
{
	(void)ud;
	if (!strcmp(method, "log.entryAdded")) {
		log_entry(c, params);
		return true;
	}
	const char *channel = cJSON_GetStringValue(cJSON_GetObjectItem(params, "channel"));
	if (strcmp(method, "script.message") || !channel || strcmp(channel, KSR_PRESS_CHANNEL))
		return false;
	const cJSON *data = cJSON_GetObjectItem(params, "data");
	ksr_cdp_press_add(c, cJSON_GetStringValue(cJSON_GetObjectItem(data, "value")));
	return true;
}

cJSON *ksr_bidi_take_page_errors(ksr_bidi *b, int *dropped)
{
	return ksr_cdp_take_page_errors(b ? b->wire : NULL, dropped);
}

/* ---- the session ------------------------------------------------------------ */

ksr_page_status ksr_bidi_call(ksr_bidi *b, const char *method, cJSON *params, ksr_deadline d,
                              cJSON **result, ksr_err *err)
{
	if (result)
		*result = NULL;
	if (!b) {
		cJSON_Delete(params);
		return ksr_err_set(err, "no browser is attached"), KSR_PAGE_CLOSED;
	}
	return ksr_cdp_call(b->wire, method, params, d, result, err);
}

cJSON *bidi_target(const ksr_bidi *b)
{
	cJSON *t = cJSON_CreateObject();
	cJSON_AddStringToObject(t, "context", b->context);
	return t;
}

static ksr_page_status new_session(ksr_bidi *b, ksr_deadline d, ksr_err *err)
{
	cJSON *p = cJSON_CreateObject(), *res = NULL;
	cJSON_AddObjectToObject(p, "capabilities");
	ksr_page_status st = ksr_bidi_call(b, "session.new", p, d, &res, err);
	const char *sid = cJSON_GetStringValue(cJSON_GetObjectItem(res, "sessionId"));
	if (st == KSR_PAGE_OK && !sid)
		st = (ksr_err_set(err, "session.new gave no sessionId"), KSR_PAGE_ERROR);
	if (sid)
		b->session_id = ksr_xstrdup(sid);
	cJSON_Delete(res);
	if (st != KSR_PAGE_OK)
		return st;
	p = cJSON_CreateObject();
	cJSON *ev = cJSON_AddArrayToObject(p, "events");
	cJSON_AddItemToArray(ev, cJSON_CreateString("log.entryAdded"));
	/* A new document's: it ends a script call the old one never answers. */
	cJSON_AddItemToArray(ev, cJSON_CreateString("browsingContext.domContentLoaded"));
	return ksr_bidi_call(b, "session.subscribe", p, d, NULL, err);
}

static ksr_page_status pick_context(ksr_bidi *b, ksr_deadline d, ksr_err *err)
{
	cJSON *p = cJSON_CreateObject(), *res = NULL;
	cJSON_AddNumberToObject(p, "maxDepth", 0);
	ksr_page_status st = ksr_bidi_call(b, "browsingContext.getTree", p, d, &res, err);
	cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItem(res, "contexts"), 0);
	const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(first, "context"));
	if (id) {
		b->context = ksr_xstrdup(id);
		ksr_cdp_wire_set_url(b->wire,
		                     cJSON_GetStringValue(cJSON_GetObjectItem(first, "url")));
	}
	cJSON_Delete(res);
	if (st != KSR_PAGE_OK || b->context)
		return st;
	p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "type", "tab");
	st = ksr_bidi_call(b, "browsingContext.create", p, d, &res, err);
	id = cJSON_GetStringValue(cJSON_GetObjectItem(res, "context"));
	if (st == KSR_PAGE_OK && !id)
		st = (ksr_err_set(err, "browsingContext.create gave no context"), KSR_PAGE_ERROR);
	if (id) {
		b->context = ksr_xstrdup(id);
		ksr_cdp_wire_set_url(b->wire, "about:blank");
	}
	cJSON_Delete(res);
	return st;
}

ksr_bidi *ksr_bidi_connect(const char *host, int port, ksr_deadline d, ksr_page_status *st,
                           ksr_err *err)
{
	ksr_page_status dummy;
	st = st ? st : &dummy;
	ksr_bidi *b = ksr_xcalloc(1, sizeof *b);
	int64_t t0 = ksr_now_ms();
	b->wire = ksr_cdp_wire_open(host ? host : "127.0.0.1", port, "/session", d, st, err);
	if (b->wire) /* before session.subscribe: no entry is queued unread */
		ksr_cdp_set_event_hook(b->wire, events_hook, b);
	if (b->wire)
		*st = new_session(b, d, err);
	if (*st == KSR_PAGE_OK)
		*st = pick_context(b, d, err);
	b->connect_ms = (double)(ksr_now_ms() - t0);
	if (*st == KSR_PAGE_OK)
		return b;
	ksr_bidi_close(b);
	return NULL;
}

void ksr_bidi_close(ksr_bidi *b)
{
	if (!b)
		return;
	if (b->wire && b->session_id) { /* Firefox holds one session at a time: free it */
		ksr_err ignored = {0};
		ksr_bidi_call(b, "session.end", NULL, ksr_deadline_in_ms(CLOSE_MS), NULL, &ignored);
	}
	ksr_cdp_close(b->wire);
	free(b->session_id);
	free(b->context);
	free(b);
}

const char *ksr_bidi_context(const ksr_bidi *b)
{
	return b ? b->context : NULL;
}

const char *ksr_bidi_page_url(const ksr_bidi *b)
{
	return b ? ksr_cdp_page_url(b->wire) : NULL;
}

double ksr_bidi_connect_ms(const ksr_bidi *b)
{
	return b ? b->connect_ms : 0;
}

ksr_cdp *ksr_bidi_wire(ksr_bidi *b)
{
	return b ? b->wire : NULL;
}

/* ---- either protocol ----------------------------------------------------------- */

ksr_page *ksr_page_connect(const char *host, int port, ksr_page_browser browser, ksr_deadline d,
                           ksr_cdp **transport, ksr_page_status *st, ksr_err *err)
{
	ksr_cdp *dummy;
	transport = transport ? transport : &dummy;
	*transport = NULL;
	if (browser != KSR_PAGE_BROWSER_FIREFOX) {
		ksr_cdp *c = ksr_cdp_connect(host, port, d, st, err);
		if (c || browser == KSR_PAGE_BROWSER_CHROMIUM || *st == KSR_PAGE_CANCELLED)
			return (*transport = c) ? ksr_cdp_page_open(c) : NULL;
	}
	/* Firefox, or no DevTools endpoint answered there (Firefox answers
	 * /json/version with 404): WebDriver BiDi on the same port. */
	ksr_err bidi_err = {0};
	ksr_page_status bst = KSR_PAGE_OK;
	ksr_bidi *b = ksr_bidi_connect(host, port, d, &bst, &bidi_err);
	if (b || browser == KSR_PAGE_BROWSER_FIREFOX || bst == KSR_PAGE_CANCELLED) {
		*st = bst;
		*err = bidi_err;
	}
	*transport = ksr_bidi_wire(b);
	return ksr_bidi_page_open(b);
}

int ksr_page_port_of_pid(int pid, ksr_page_browser *browser)
{
	bool firefox = ksr_bidi_is_firefox_pid(pid);
	*browser = firefox ? KSR_PAGE_BROWSER_FIREFOX : KSR_PAGE_BROWSER_ANY;
	return firefox ? ksr_bidi_port_of_pid(pid) : ksr_cdp_port_of_pid(pid);
}

/* ---- remote values -------------------------------------------------------------- */

static bool number_truthy(const cJSON *v)
{
	if (cJSON_IsNumber(v))
		return v->valuedouble != 0 && !isnan(v->valuedouble);
	const char *s = cJSON_GetStringValue(v); /* "NaN", "-0", "Infinity", "-Infinity" */
	return s && strcmp(s, "NaN") && strcmp(s, "-0");
}

static cJSON *object_to_json(const cJSON *pairs)
{
	cJSON *o = cJSON_CreateObject(), *pair;
	cJSON_ArrayForEach(pair, pairs)
	{
		const cJSON *k = cJSON_GetArrayItem(pair, 0);
		const char *key = cJSON_IsString(k)
		                          ? k->valuestring
		                          : cJSON_GetStringValue(cJSON_GetObjectItem(k, "value"));
		if (key)
			cJSON_AddItemToObject(
			        o, key, ksr_bidi_remote_to_json(cJSON_GetArrayItem(pair, 1), NULL));
	}
	return o;
}

cJSON *ksr_bidi_remote_to_json(const cJSON *r, bool *truthy)
{
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(r, "type"));
	const cJSON *v = cJSON_GetObjectItem(r, "value");
	bool t = true, dummy;
	truthy = truthy ? truthy : &dummy;
	cJSON *out;
	if (!type || !strcmp(type, "undefined") || !strcmp(type, "null")) {
		t = false;
		out = cJSON_CreateNull();
	} else if (!strcmp(type, "boolean")) {
		t = cJSON_IsTrue(v);
		out = cJSON_CreateBool(t);
	} else if (!strcmp(type, "number")) {
		t = number_truthy(v);
		out = cJSON_IsNumber(v) ? cJSON_CreateNumber(v->valuedouble)
		                        : cJSON_CreateString(cJSON_GetStringValue(v));
	} else if (!strcmp(type, "string") || !strcmp(type, "bigint") || !strcmp(type, "date")) {
		const char *s = cJSON_GetStringValue(v);
		t = !strcmp(type, "string")   ? s && *s
		    : !strcmp(type, "bigint") ? s && strcmp(s, "0")
		                              : t;
		out = cJSON_CreateString(s ? s : "");
	} else if (!strcmp(type, "array") || !strcmp(type, "set")) {
		out = cJSON_CreateArray();
		const cJSON *item;
		cJSON_ArrayForEach(item, v)
		        cJSON_AddItemToArray(out, ksr_bidi_remote_to_json(item, NULL));
	} else if ((!strcmp(type, "object") || !strcmp(type, "map")) && cJSON_IsArray(v)) {
		out = object_to_json(v);
	} else {
		out = cJSON_CreateObject(); /* a node, a function, a window...: as CDP's by-value {}
		                             */
	}
	*truthy = t;
	return out;
}
