/* The page's errors from CDP's Runtime domain (enabled at attach): an
 * uncaught exception (Runtime.exceptionThrown) and console.error or a failed
 * console.assert (Runtime.consoleAPICalled), kept on the wire as they arrive
 * (ksr_cdp_page_error_add), so a navigation that drops the queued events does
 * not drop them; the press listener's reports (Runtime.bindingCalled) alike. The domain's other
 * events (console.log, execution contexts) are dropped: nothing waits for them. */
#include "backend/cdp/page_common.h"
#include "backend/cdp/wire.h"
#include "ksr/json.h"
#include "ksr/strbuf.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *str(const cJSON *o, const char *k)
{
	return cJSON_GetStringValue(cJSON_GetObjectItem(o, k));
}

/* The first line of s (a description's stack follows it). */
static void add_first_line(ksr_strbuf *b, const char *s)
{
	size_t n = strcspn(s, "\n");
	char *line = ksr_xasprintf("%.*s", (int)n, s);
	ksr_strbuf_add(b, line);
	free(line);
}

/* One remote object as the console prints it: a string as is, a primitive
 * as JSON, an object by its description's first line ("Error: boom"). */
static void add_remote(ksr_strbuf *b, const cJSON *r)
{
	const cJSON *v = cJSON_GetObjectItem(r, "value");
	const char *u = str(r, "unserializableValue"), *d = str(r, "description");
	if (cJSON_IsString(v)) {
		ksr_strbuf_add(b, v->valuestring);
	} else if (v && !cJSON_IsNull(v) && !d) {
		char *j = ksr_json_print(v, false);
		ksr_strbuf_add(b, j);
		free(j);
	} else if (u || d) {
		add_first_line(b, u ? u : d);
	} else {
		ksr_strbuf_add(b, str(r, "subtype") ? str(r, "subtype") : str(r, "type"));
	}
}

/* "URL:LINE" of a stack's first frame, or of url and a 0-based line. */
static char *source_of(const char *url, const cJSON *line, const cJSON *stack)
{
	const cJSON *top = cJSON_GetArrayItem(cJSON_GetObjectItem(stack, "callFrames"), 0);
	if ((!url || !*url) && top) {
		url = str(top, "url");
		line = cJSON_GetObjectItem(top, "lineNumber");
	}
	if (!url || !*url)
		return NULL;
	if (!cJSON_IsNumber(line))
		return ksr_xstrdup(url);
	return ksr_xasprintf("%s:%d", url, line->valueint + 1);
}

static void exception_thrown(ksr_cdp *c, const cJSON *params)
{
	const cJSON *ed = cJSON_GetObjectItem(params, "exceptionDetails");
	const cJSON *ex = cJSON_GetObjectItem(ed, "exception");
	ksr_strbuf b = {0};
	ksr_strbuf_add(&b, str(ed, "text") ? str(ed, "text") : "Uncaught");
	if (ex) { /* "Uncaught" + " Error: boom" */
		ksr_strbuf_add(&b, " ");
		add_remote(&b, ex);
	}
	char *src = source_of(str(ed, "url"), cJSON_GetObjectItem(ed, "lineNumber"),
	                      cJSON_GetObjectItem(ed, "stackTrace"));
	ksr_cdp_page_error_add(c, "exception", b.p ? b.p : "", src);
	free(src);
	ksr_strbuf_free(&b);
}

static void console_called(ksr_cdp *c, const cJSON *params)
{
	const char *type = str(params, "type");
	if (!type || (strcmp(type, "error") && strcmp(type, "assert")))
		return;
	ksr_strbuf b = {0};
	const cJSON *a;
	if (!strcmp(type, "assert"))
		ksr_strbuf_add(&b, "Assertion failed:");
	cJSON_ArrayForEach(a, cJSON_GetObjectItem(params, "args"))
	{
		if (b.len)
			ksr_strbuf_add(&b, " ");
		add_remote(&b, a);
	}
	char *src = source_of(NULL, NULL, cJSON_GetObjectItem(params, "stackTrace"));
	ksr_cdp_page_error_add(c, "console", b.p ? b.p : "", src);
	free(src);
	ksr_strbuf_free(&b);
}

bool ksr_cdp_runtime_hook(void *ud, ksr_cdp *c, const char *method, const cJSON *params)
{
	(void)ud;
	if (!strcmp(method, "Runtime.exceptionThrown"))
		exception_thrown(c, params);
	else if (!strcmp(method, "Runtime.consoleAPICalled"))
		console_called(c, params);
	else if (!strcmp(method, "Runtime.bindingCalled") && str(params, "name") &&
	         !strcmp(str(params, "name"), KSR_PRESS_BINDING))
		ksr_cdp_press_add(c, str(params, "payload"));
	return !strncmp(method, "Runtime.", 8);
}
