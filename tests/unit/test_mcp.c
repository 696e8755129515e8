/* The MCP server core without a display: JSON-RPC framing and errors,
 * protocol revisions, the tools list (schemas, annotations, names in both
 * forms), argument checks against the inputSchema, and the stdio transport's
 * line handling (an over-long line, EOF). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "ksr/mcp.h"
#include "tap.h"

static cJSON *call(ksr_mcp *m, const char *msg)
{
	char *r = ksr_mcp_handle(m, msg, strlen(msg), NULL, NULL);
	if (!r)
		return NULL;
	ok(!strchr(r, '\n'), "reply is one line: %.60s", r);
	cJSON *o = cJSON_Parse(r);
	free(r);
	return o;
}

static int error_code(const cJSON *o)
{
	const cJSON *c = cJSON_GetObjectItem(cJSON_GetObjectItem(o, "error"), "code");
	return cJSON_IsNumber(c) ? c->valueint : 0;
}

static const cJSON *result(const cJSON *o)
{
	return cJSON_GetObjectItem(o, "result");
}

static bool is_error_result(const cJSON *o, const char *needle)
{
	const cJSON *r = result(o);
	const cJSON *text = cJSON_GetObjectItem(
	        cJSON_GetArrayItem(cJSON_GetObjectItem(r, "content"), 0), "text");
	return cJSON_IsTrue(cJSON_GetObjectItem(r, "isError")) && cJSON_IsString(text) &&
	       strstr(text->valuestring, needle) != NULL;
}

static void test_initialize(ksr_mcp *m)
{
	static const char *const asked[][2] = {{"2025-11-25", "2025-11-25"},
	                                       {"2025-06-18", "2025-06-18"},
	                                       {"2025-03-26", "2025-03-26"},
	                                       {"1999-01-01", "2025-11-25"}};
	for (size_t i = 0; i < 4; i++) {
		char msg[256];
		snprintf(msg, sizeof msg,
		         "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
		         "\"protocolVersion\":\"%s\",\"capabilities\":{},\"clientInfo\":{\"name\":"
		         "\"t\",\"version\":\"1\"}}}",
		         asked[i][0]);
		cJSON *o = call(m, msg);
		const cJSON *v = cJSON_GetObjectItem(result(o), "protocolVersion");
		is_str(cJSON_IsString(v) ? v->valuestring : "", asked[i][1], asked[i][0]);
		ok(cJSON_GetObjectItem(cJSON_GetObjectItem(result(o), "capabilities"), "tools") !=
		           NULL,
		   "tools capability announced");
		ok(cJSON_GetObjectItem(cJSON_GetObjectItem(result(o), "capabilities"),
		                       "resources") != NULL,
		   "resources capability announced");
		cJSON_Delete(o);
	}
	ok(call(m, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}") == NULL,
	   "a notification gets no reply");
}

static void expect_error(ksr_mcp *m, const char *msg, int code, bool null_id, const char *what)
{
	cJSON *o = call(m, msg);
	is_int(error_code(o), code, what);
	if (null_id)
		ok(cJSON_IsNull(cJSON_GetObjectItem(o, "id")), "%s: id is null", what);
	cJSON_Delete(o);
}

static void test_errors(ksr_mcp *m)
{
	expect_error(m, "{\"jsonrpc\":\"2.0\",\"id\":", -32700, true, "malformed JSON");
	expect_error(m, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", -32600, true,
	             "a batch is rejected");
	expect_error(m, "{\"id\":1,\"method\":\"ping\"}", -32600, false, "no jsonrpc member");
	expect_error(m, "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", -32600, true,
	             "an object id");
	expect_error(m, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"server/discover\"}", -32601,
	             false, "server/discover is an unknown method");
	expect_error(m, "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"prompts/list\"}", -32601,
	             false, "prompts/list is unknown");
	expect_error(m,
	             "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/read\",\"params\":{"
	             "\"uri\":\"file:///etc/passwd\"}}",
	             -32002, false, "resources/read of a file the server did not write");
	expect_error(m, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/read\"}", -32602,
	             false, "resources/read without a uri");
	expect_error(m,
	             "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
	             "\"no.such\"}}",
	             -32602, false, "unknown tool");
	expect_error(m,
	             "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"logging/setLevel\",\"params\":{"
	             "\"level\":\"loud\"}}",
	             -32602, false, "unknown log level");
	cJSON *o = call(m, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"resources/list\"}");
	is_int(cJSON_GetArraySize(cJSON_GetObjectItem(result(o), "resources")), 0,
	       "resources/list: no evidence files yet");
	cJSON_Delete(o);
	o = call(m, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"resources/templates/list\"}");
	ok(cJSON_IsArray(cJSON_GetObjectItem(result(o), "resourceTemplates")),
	   "resources/templates/list answers an empty list");
	cJSON_Delete(o);
	o = call(m, "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}");
	ok(cJSON_IsObject(result(o)), "ping answers {}");
	is_str(cJSON_GetObjectItem(o, "id")->valuestring, "p", "ping keeps a string id");
	cJSON_Delete(o);
	o = call(m, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"logging/setLevel\",\"params\":{"
	            "\"level\":\"debug\"}}");
	ok(cJSON_IsObject(result(o)), "logging/setLevel debug accepted");
	cJSON_Delete(o);
}

/* The tool-name rules of the clients (docs/mcp.md): Claude Desktop / claude.ai
 * ^[a-zA-Z0-9_-]{1,64}$, Claude Code and Copilot CLI the same up to 128,
 * Codex ^[a-zA-Z0-9_-]+$, Cursor letters, digits and underscores. */
static bool name_ok(const char *n, size_t max_len, bool hyphen)
{
	size_t len = strlen(n);
	if (len < 1 || len > max_len)
		return false;
	for (const char *p = n; *p; p++) {
		bool alnum = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		             (*p >= '0' && *p <= '9');
		if (!alnum && *p != '_' && !(hyphen && *p == '-'))
			return false;
	}
	return true;
}

static bool every_client_takes(const char *n)
{
	return name_ok(n, 64, true) && name_ok(n, 128, true) && name_ok(n, (size_t)-1, true) &&
	       name_ok(n, (size_t)-1, false);
}

static bool valid_tool(const cJSON *t, bool dotted)
{
	const cJSON *name = cJSON_GetObjectItem(t, "name");
	const cJSON *in = cJSON_GetObjectItem(t, "inputSchema");
	const cJSON *out = cJSON_GetObjectItem(t, "outputSchema");
	const cJSON *an = cJSON_GetObjectItem(t, "annotations");
	if (!cJSON_IsString(name) || !cJSON_IsString(cJSON_GetObjectItem(t, "description")))
		return false;
	if (!dotted && !every_client_takes(name->valuestring))
		return false;
	if (dotted && (!strchr(name->valuestring, '.') ||
	               (strchr(name->valuestring, '_') &&
	                strcmp(name->valuestring, "page.list_interactive"))))
		return false;
	/* Every tool takes max_text, the cap on its text result. */
	if (!cJSON_GetObjectItem(cJSON_GetObjectItem(in, "properties"), "max_text"))
		return false;
	return !strcmp(cJSON_GetObjectItem(in, "type")->valuestring, "object") &&
	       !strcmp(cJSON_GetObjectItem(out, "type")->valuestring, "object") &&
	       cJSON_IsObject(cJSON_GetObjectItem(out, "properties")) &&
	       cJSON_IsBool(cJSON_GetObjectItem(an, "readOnlyHint")) &&
	       cJSON_IsBool(cJSON_GetObjectItem(an, "destructiveHint"));
}

static const cJSON *find_tool(const cJSON *tools, const char *name)
{
	const cJSON *t;
	cJSON_ArrayForEach(
	        t, tools) if (!strcmp(cJSON_GetObjectItem(t, "name")->valuestring, name)) return t;
	return NULL;
}

static void test_list(bool dotted)
{
	bool underscore = !dotted;
	ksr_err err = {0};
	ksr_mcp_opts o = {.dotted_names = dotted};
	ksr_mcp *m = ksr_mcp_create(&o, &err);
	cJSON *r = call(m, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
	const cJSON *tools = cJSON_GetObjectItem(result(r), "tools"), *t;
	ok(cJSON_GetArraySize(tools) >= 18, "%d tools listed", cJSON_GetArraySize(tools));
	int bad = 0;
	cJSON_ArrayForEach(t, tools) bad += !valid_tool(t, dotted);
	is_int(bad, 0,
	       dotted ? "every tool valid, dotted names"
	              : "every tool valid, names every client's rule accepts");
	/* No two names the same once '.' and '_' are one (calls accept both). */
	int same = 0;
	const cJSON *u;
	cJSON_ArrayForEach(t, tools) cJSON_ArrayForEach(u, tools)
	{
		char a[128], b[128];
		snprintf(a, sizeof a, "%s", cJSON_GetObjectItem(t, "name")->valuestring);
		snprintf(b, sizeof b, "%s", cJSON_GetObjectItem(u, "name")->valuestring);
		for (char *p = a; *p; p++)
			*p = *p == '.' ? '_' : *p;
		for (char *p = b; *p; p++)
			*p = *p == '.' ? '_' : *p;
		same += t != u && !strcmp(a, b);
	}
	is_int(same, 0, "no two tools differ only by '.' and '_'");
	for (const char *const *n = (const char *const[]){"screen_wait", "a11y_find", NULL}; *n;
	     n++) {
		char want[64];
		snprintf(want, sizeof want, "%s", *n);
		if (dotted)
			*strchr(want, '_') = '.';
		ok(find_tool(tools, want) != NULL, "%s is listed", want);
	}
	const char *click = underscore ? "input_click" : "input.click";
	const char *cap = underscore ? "screen_capture" : "screen.capture";
	const cJSON *ic = find_tool(tools, click), *sc = find_tool(tools, cap);
	ok(ic && cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(ic, "annotations"),
	                                          "destructiveHint")),
	   "%s is listed and destructive", click);
	ok(sc && cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(sc, "annotations"),
	                                          "readOnlyHint")),
	   "%s is listed and read-only", cap);
	const cJSON *req = cJSON_GetObjectItem(cJSON_GetObjectItem(ic, "inputSchema"), "required");
	is_int(cJSON_GetArraySize(req), 2, "input.click requires x and y");
	cJSON_Delete(r);
	ksr_mcp_destroy(m);
}

static void call_tool(ksr_mcp *m, const char *name, const char *args, const char *needle,
                      const char *what)
{
	char msg[1024];
	snprintf(msg, sizeof msg,
	         "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/"
	         "call\",\"params\":{\"name\":\"%s\","
	         "\"arguments\":%s}}",
	         name, args);
	cJSON *o = call(m, msg);
	ok(is_error_result(o, needle), "%s", what);
	cJSON_Delete(o);
}

static void test_arguments(ksr_mcp *m)
{
	call_tool(m, "input.click", "{\"x\":\"10\",\"y\":5}", "x must be a number",
	          "x as a string");
	call_tool(m, "input_click", "{\"x\":1.5,\"y\":true}", "y must be a number",
	          "underscore form is accepted, y as a boolean");
	call_tool(m, "input.click", "{\"x\":1}", "missing required argument y", "y missing");
	call_tool(m, "input.click", "{\"x\":1,\"y\":1,\"z\":1}", "unknown argument z",
	          "an unknown argument");
	call_tool(m, "input.click", "{\"x\":1,\"y\":1,\"count\":9}", "count must be <= 3",
	          "count over its maximum");
	call_tool(m, "input.click", "{\"x\":1,\"y\":1,\"count\":1.5}", "count must be an integer",
	          "a fractional count");
	call_tool(m, "input.click", "{\"x\":1,\"y\":1,\"button\":\"fourth\"}", "enum",
	          "a button outside the enum");
	call_tool(m, "input.type", "[1]", "arguments must be an object", "arguments as an array");
	call_tool(m, "screen.capture", "{\"region\":{\"x\":0}}",
	          "missing required argument region.y", "a nested required member");
	call_tool(m, "input.click", "{\"x\":1,\"y\":1}", "no X display",
	          "a valid click without a display is an isError result");
	call_tool(m, "screen.ground", "{\"description\":\"the OK button\"}", "no model configured",
	          "screen.ground without a model");
	call_tool(m, "scenario.run", "{}", "exactly one of path and yaml",
	          "scenario.run without a scenario");
	call_tool(m, "screen_wait", "{}", "missing required argument until", "screen_wait: until");
	call_tool(m, "screen.wait", "{\"until\":\"soon\"}", "enum", "screen.wait: until's enum");
	call_tool(m, "screen_wait", "{\"until\":\"appears\",\"window\":\"x\",\"timeout_s\":-1}",
	          "timeout_s must be >= 0", "screen_wait: a negative timeout");
	call_tool(m, "screen_wait", "{\"until\":\"appears\",\"window\":\"x\"}", "no X display",
	          "screen_wait without a display");
	call_tool(m, "a11y_find", "{\"timeout_s\":0}", "name, label, in or role",
	          "a11y_find needs a name or a locator");
	call_tool(m, "a11y_find", "{\"role\":\"x\",\"in\":{\"role\":\"x\",\"nme\":\"y\"}}",
	          "unknown argument in.nme", "a11y_find: in's object form is checked");
	call_tool(m, "a11y.find", "{\"name\":\"OK\",\"states\":[\"shiny\"]}",
	          "shiny is not an AT-SPI state", "a11y.find: an unknown state");
	call_tool(m, "screen_capture", "{\"delivery\":\"email\"}", "enum",
	          "screen_capture: delivery's enum");
	call_tool(m, "screen_capture", "{\"scale\":0}", "scale must be > 0",
	          "screen_capture: scale 0");
	call_tool(m, "a11y_tree", "{\"max_text\":10}", "max_text must be >= 256",
	          "max_text below its minimum");
	/* A text result over max_text is cut and says so. */
	char args[400];
	snprintf(args, sizeof args, "{\"x\":1,\"y\":1,\"max_text\":256,\"%0300d\":1}", 7);
	call_tool(m, "input_click", args, "[truncated: ", "a text result over max_text is cut");
	cJSON *o = call(m, "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"ping\"}");
	ok(cJSON_IsObject(result(o)), "still serving after failed calls");
	cJSON_Delete(o);
}

/* ---- lenient where clients are (issue 33): null as "not given", portable
 * schemas, a stable tools order ------------------------------------------------- */

static cJSON *list_tools(ksr_mcp *m)
{
	cJSON *r = call(m, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
	cJSON *tools = cJSON_DetachItemFromObject(cJSON_GetObjectItem(r, "result"), "tools");
	cJSON_Delete(r);
	return tools;
}

static bool is_required(const cJSON *schema, const char *prop)
{
	const cJSON *q;
	cJSON_ArrayForEach(q, cJSON_GetObjectItem(schema, "required"))
	{
		if (cJSON_IsString(q) && !strcmp(q->valuestring, prop))
			return true;
	}
	return false;
}

/* A value the schema accepts: its enum's first, its minimum, an object of its
 * required members. */
static cJSON *sample_value(const cJSON *s)
{
	const cJSON *en = cJSON_GetObjectItem(s, "enum"), *min = cJSON_GetObjectItem(s, "minimum");
	const cJSON *type = cJSON_GetObjectItem(s, "type"), *p;
	const char *t = cJSON_IsString(type) ? type->valuestring : "";
	if (cJSON_IsArray(en))
		return cJSON_Duplicate(cJSON_GetArrayItem(en, 0), 1);
	if (!strcmp(t, "integer") || !strcmp(t, "number"))
		return cJSON_CreateNumber(cJSON_IsNumber(min) ? min->valuedouble : 1);
	if (!strcmp(t, "boolean"))
		return cJSON_CreateFalse();
	if (!strcmp(t, "array"))
		return cJSON_CreateArray();
	if (!strcmp(t, "object")) {
		cJSON *o = cJSON_CreateObject();
		cJSON_ArrayForEach(p, cJSON_GetObjectItem(s, "properties"))
		{
			if (is_required(s, p->string))
				cJSON_AddItemToObject(o, p->string, sample_value(p));
		}
		return o;
	}
	return cJSON_CreateString("x");
}

/* tools/call name with args (taken); the result object (free it). */
static cJSON *call_json(ksr_mcp *m, const char *name, cJSON *args)
{
	cJSON *req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "jsonrpc", "2.0");
	cJSON_AddNumberToObject(req, "id", 11);
	cJSON_AddStringToObject(req, "method", "tools/call");
	cJSON *params = cJSON_AddObjectToObject(req, "params");
	cJSON_AddStringToObject(params, "name", name);
	cJSON_AddItemToObject(params, "arguments", args);
	char *msg = cJSON_PrintUnformatted(req);
	cJSON_Delete(req);
	cJSON *o = call(m, msg);
	cJSON_free(msg);
	return o;
}

static const char *first_text(const cJSON *o)
{
	const cJSON *t = cJSON_GetObjectItem(
	        cJSON_GetArrayItem(cJSON_GetObjectItem(result(o), "content"), 0), "text");
	return cJSON_IsString(t) ? t->valuestring : "";
}

/* Every tool, its optional arguments all null (as OpenAI strict mode sends
 * them), answers as the same call without them. */
static void test_null_optional(ksr_mcp *m)
{
	cJSON *tools = list_tools(m);
	const cJSON *t, *p;
	cJSON_ArrayForEach(t, tools)
	{
		const char *name = cJSON_GetObjectItem(t, "name")->valuestring;
		const cJSON *in = cJSON_GetObjectItem(t, "inputSchema");
		cJSON *plain = sample_value(in), *nulls = sample_value(in);
		int n_null = 0;
		cJSON_ArrayForEach(p, cJSON_GetObjectItem(in, "properties"))
		{
			if (!is_required(in, p->string)) {
				cJSON_AddNullToObject(nulls, p->string);
				n_null++;
			}
		}
		char *args = cJSON_PrintUnformatted(nulls);
		cJSON *a = call_json(m, name, plain), *b = call_json(m, name, nulls);
		ok(n_null > 0 && !strstr(first_text(b), "must be ") &&
		           cJSON_IsTrue(cJSON_GetObjectItem(result(a), "isError")) ==
		                   cJSON_IsTrue(cJSON_GetObjectItem(result(b), "isError")) &&
		           !strcmp(first_text(a), first_text(b)),
		   "%s %s answers as without its %d nulls: %.120s", name, args, n_null,
		   first_text(b));
		free(args);
		cJSON_Delete(a);
		cJSON_Delete(b);
	}
	cJSON_Delete(tools);
}

/* A required argument given as null is an error that names it. */
static void test_null_required(ksr_mcp *m)
{
	cJSON *tools = list_tools(m);
	const cJSON *t, *q;
	int checked = 0;
	cJSON_ArrayForEach(t, tools)
	{
		const char *name = cJSON_GetObjectItem(t, "name")->valuestring;
		const cJSON *in = cJSON_GetObjectItem(t, "inputSchema");
		cJSON_ArrayForEach(q, cJSON_GetObjectItem(in, "required"))
		{
			cJSON *args = sample_value(in);
			cJSON_ReplaceItemInObject(args, q->valuestring, cJSON_CreateNull());
			char want[96];
			snprintf(want, sizeof want, "required argument %s is null", q->valuestring);
			cJSON *o = call_json(m, name, args);
			ok(cJSON_IsTrue(cJSON_GetObjectItem(result(o), "isError")) &&
			           strstr(first_text(o), want),
			   "%s with %s null: %.120s", name, q->valuestring, first_text(o));
			cJSON_Delete(o);
			checked++;
		}
	}
	ok(checked >= 10, "%d required arguments checked as null", checked);
	cJSON_Delete(tools);
	/* Inside an object argument too: optional null dropped, required null named. */
	call_tool(m, "screen_capture", "{\"region\":{\"x\":0,\"y\":0,\"width\":null,\"height\":1}}",
	          "required argument region.width is null", "a nested required member as null");
	call_tool(m, "input_click", "{\"x\":1,\"y\":1,\"button\":null,\"count\":null}",
	          "no X display", "input_click with button and count null");
}

/* Type arrays (["object","null"]) are not portable (Gemini's OpenAPI subset,
 * the Inspector's --strict): a nullable field is optional instead. */
static int type_arrays(const cJSON *s, const char *tool, const char *where)
{
	int n = 0;
	const cJSON *c;
	cJSON_ArrayForEach(c, s)
	{
		if (c->string && !strcmp(c->string, "type") && !cJSON_IsString(c) &&
		    !cJSON_IsObject(c)) {
			printf("# %s %s: a type that is not one name\n", tool, where);
			n++;
		}
		if (cJSON_IsObject(c) || cJSON_IsArray(c))
			n += type_arrays(c, tool, where);
	}
	return n;
}

static void test_portable_schemas(ksr_mcp *m)
{
	cJSON *tools = list_tools(m);
	const cJSON *t;
	int bad = 0;
	cJSON_ArrayForEach(t, tools)
	{
		const char *name = cJSON_GetObjectItem(t, "name")->valuestring;
		bad += type_arrays(cJSON_GetObjectItem(t, "inputSchema"), name, "inputSchema");
		bad += type_arrays(cJSON_GetObjectItem(t, "outputSchema"), name, "outputSchema");
	}
	is_int(bad, 0, "no type arrays in any tool's inputSchema or outputSchema");
	cJSON_Delete(tools);
}

static char *tool_names(ksr_mcp *m)
{
	cJSON *tools = list_tools(m), *names = cJSON_CreateArray();
	const cJSON *t;
	cJSON_ArrayForEach(t, tools)
	{
		cJSON_AddItemToArray(names, cJSON_Duplicate(cJSON_GetObjectItem(t, "name"), 0));
	}
	char *s = cJSON_PrintUnformatted(names);
	cJSON_Delete(names);
	cJSON_Delete(tools);
	return s;
}

/* tools/list is the table's order: the same on every call and every start. */
static void test_stable_order(ksr_mcp *m)
{
	ksr_err err = {0};
	char *first = tool_names(m), *again = tool_names(m);
	ksr_mcp *m2 = ksr_mcp_create(NULL, &err);
	char *other = tool_names(m2);
	ksr_mcp_destroy(m2);
	is_str(again, first, "tools/list: the same order on a second call");
	is_str(other, first, "tools/list: the same order from a second server");
	ok(!strncmp(first, "[\"screen_capture\",\"screen_wait\",", 32),
	   "the table's order, screen_capture first: %.60s", first);
	free(first);
	free(again);
	free(other);
}

static void test_helpers(void)
{
	const char *c = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{"
	                "\"requestId\":\"ab\",\"reason\":\"x\"}}";
	char *id = ksr_mcp_cancelled_id(c, strlen(c));
	is_str(id, "\"ab\"", "cancelled id as compact JSON");
	free(id);
	const char *p = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"}";
	ok(ksr_mcp_cancelled_id(p, strlen(p)) == NULL, "a call is not a cancellation");
	ok(ksr_mcp_is_tool_call(p, strlen(p)), "tools/call is a tool call");
	ok(!ksr_mcp_is_tool_call("{", 1), "malformed is not a tool call");
}

/* Input: ping, a 17 MiB line, malformed JSON, ping without a final newline. */
static void test_stdio(void)
{
	FILE *in = tmpfile(), *out = tmpfile();
	fputs("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n\n", in);
	fputs("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\",\"params\":{\"pad\":\"", in);
	for (int i = 0; i < 17 * 1024; i++)
		fprintf(in, "%01024d", 0);
	fputs("\"}}\n{oops\n{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}", in);
	fflush(in);
	rewind(in);
	ksr_err err = {0};
	ksr_mcp *m = ksr_mcp_create(NULL, &err);
	is_int(ksr_mcp_serve_stdio(m, fileno(in), fileno(out), &err), 0, "serve returns 0 at EOF");
	ksr_mcp_destroy(m);
	rewind(out);
	char line[4096];
	int codes[8] = {0}, ids[8] = {0}, n = 0;
	while (n < 8 && fgets(line, sizeof line, out)) {
		cJSON *o = cJSON_Parse(line);
		codes[n] = error_code(o);
		const cJSON *id = cJSON_GetObjectItem(o, "id");
		ids[n++] = cJSON_IsNumber(id) ? id->valueint : -1;
		cJSON_Delete(o);
	}
	is_int(n, 4, "four replies");
	ok(ids[0] == 1 && codes[0] == 0, "first ping answered");
	ok(ids[1] == -1 && codes[1] == -32600, "the over-long line gets -32600 with a null id");
	ok(codes[2] == -32700, "malformed JSON gets -32700");
	ok(ids[3] == 3 && codes[3] == 0, "ping after them, without a final newline, answered");
	fclose(in);
	fclose(out);
}

int main(void)
{
	unsetenv("DISPLAY");
	unsetenv("KASM_RUNTIME_MODEL");
	unsetenv("KASM_RUNTIME_GROUNDER_MODEL");
	ksr_err err = {0};
	ksr_mcp *m = ksr_mcp_create(NULL, &err);
	ok(m != NULL, "create: %s", err.msg);
	test_initialize(m);
	test_errors(m);
	test_arguments(m);
	test_null_optional(m);
	test_null_required(m);
	test_portable_schemas(m);
	test_stable_order(m);
	ksr_mcp_destroy(m);
	test_list(false); /* the default: portable names */
	test_list(true);  /* --tool-names dots */
	test_helpers();
	test_stdio();
	ksr_mcp_destroy(NULL);
	return tap_done();
}
