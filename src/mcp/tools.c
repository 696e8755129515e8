/* The tools table, one row a tool (like the ladder): name, description,
 * schemas, annotations, handler. Schemas are JSON text, parsed once at create
 * and used both for tools/list and to check a call's arguments, so what is
 * advertised is what is enforced. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/mcp_priv.h"
#include "ksr/json.h"

#define XY_IN                                                                                      \
	"\"x\":{\"type\":\"number\",\"description\":\"screenshot x (from the last "                \
	"screen_capture)\"},"                                                                      \
	"\"y\":{\"type\":\"number\",\"description\":\"screenshot y\"}"
#define POINT_OUT                                                                                  \
	"{\"type\":\"object\",\"properties\":{\"screen_x\":{\"type\":\"integer\"},"                \
	"\"screen_y\":{\"type\":\"integer\"}},\"required\":[\"screen_x\",\"screen_y\"]}"
#define DONE_OUT                                                                                   \
	"{\"type\":\"object\",\"properties\":{\"ok\":{\"type\":\"boolean\"}},\"required\":["       \
	"\"ok\"]}"
/* The locator arguments of a11y.click, a11y.state and a11y.text (docs/mcp.md). */
#define LOCATOR_IN                                                                                 \
	",\"label\":{\"type\":\"string\",\"description\":\"the control this label labels\"},"      \
	"\"in\":{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"object\",\"properties\":{\"name\":"  \
	"{\"type\":\"string\"},\"role\":{\"type\":\"string\"}}}],\"description\":\"an ancestor: "  \
	"its name, or {name, "                                                                     \
	"role}\"},\"nth\":{\"type\":\"integer\",\"minimum\":1,\"description\":"                    \
	"\"1-based among the matches, in reading order\"}"
#define APP_IN                                                                                     \
	"\"pid\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"the app's process\"},"      \
	"\"window\":{\"type\":\"string\",\"description\":\"a window title pattern (PCRE); its "    \
	"process\"},"                                                                              \
	"\"app\":{\"type\":\"string\",\"description\":\"the AT-SPI application name\"}"
#define PORT_IN                                                                                    \
	"\"port\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":65535,\"description\":"          \
	"\"the browser's debugging port; default: found from the windows' processes\"}"
/* The page handle every page tool returns and takes back (docs/mcp.md, "Handles"). */
#define PAGE_IN                                                                                    \
	"\"page\":{\"type\":\"string\",\"description\":\"the page handle a page tool "             \
	"returned: its connection (and the ids its page_list_interactive gave) again; without "    \
	"it a 2026-07-28 call connects anew\"}"
#define PAGE_DONE_OUT                                                                              \
	"{\"type\":\"object\",\"properties\":{\"ok\":{\"type\":\"boolean\"},\"page\":{\"type\":"   \
	"\"string\"}},\"required\":[\"ok\",\"page\"]}"
#define REF_IN                                                                                     \
	"\"ref\":{\"type\":\"string\",\"description\":\"a CSS selector or an id from "             \
	"page_list_interactive (@e123)\"}"

/* When a row runs as a task for a client that can take one (mcp_tool.task_when). */
static bool task_always(const cJSON *a)
{
	(void)a;
	return true;
}

/* a11y.find with timeout_s 0 looks once: no wait, no task. */
static bool task_if_waiting(const cJSON *a)
{
	return mcp_arg_num(a, "timeout_s", 1) > 0;
}

const mcp_tool mcp_tools[] = {
        {"screen.capture", "Capture the screen",
         "Screenshot of the whole screen, a window (id or title pattern) or a region, as PNG. "
         "Downscaled by default (long edge <= 1280); max_width, max_edge or scale bound it "
         "otherwise, zoom keeps full resolution. Later coordinates are in this screenshot's "
         "space. delivery: inline (image content), link (a resource_link to a file in the "
         "server's evidence folder, fetched with resources/read) or auto (the default: inline "
         "when the base64 PNG is at most inline_max_bytes, else a link).",
         "{\"type\":\"object\",\"properties\":{\"window_id\":{\"type\":\"integer\",\"minimum\":1},"
         "\"window\":{\"type\":\"string\",\"description\":\"title pattern (PCRE)\"},"
         "\"region\":{\"type\":\"object\",\"description\":\"in the last screenshot's space\","
         "\"properties\":{\"x\":{\"type\":\"number\"},\"y\":{\"type\":\"number\"},"
         "\"width\":{\"type\":\"number\",\"exclusiveMinimum\":0},"
         "\"height\":{\"type\":\"number\",\"exclusiveMinimum\":0}},"
         "\"required\":[\"x\",\"y\",\"width\",\"height\"]},"
         "\"zoom\":{\"type\":\"boolean\",\"description\":\"full resolution (no downscale)\"},"
         "\"max_edge\":{\"type\":\"integer\",\"minimum\":16,\"maximum\":8192,\"description\":"
         "\"the long edge at most this (default 1280)\"},"
         "\"max_width\":{\"type\":\"integer\",\"minimum\":16,\"maximum\":8192,\"description\":"
         "\"the image width at most this\"},"
         "\"scale\":{\"type\":\"number\",\"exclusiveMinimum\":0,\"maximum\":1,\"description\":"
         "\"screenshot pixels per screen pixel, at most this\"},"
         "\"delivery\":{\"type\":\"string\",\"enum\":[\"auto\",\"inline\",\"link\"]},"
         "\"inline_max_bytes\":{\"type\":\"integer\",\"minimum\":1024,\"maximum\":10000000,"
         "\"description\":\"auto: inline up to this many base64 bytes (default 1000000)\"}}}",
         "{\"type\":\"object\",\"properties\":{\"width\":{\"type\":\"integer\"},"
         "\"height\":{\"type\":\"integer\"},\"scale\":{\"type\":\"number\"},"
         "\"origin_x\":{\"type\":\"integer\"},\"origin_y\":{\"type\":\"integer\"},"
         "\"screen_width\":{\"type\":\"integer\"},\"screen_height\":{\"type\":\"integer\"},"
         "\"png_bytes\":{\"type\":\"integer\"},\"delivery\":{\"type\":\"string\",\"enum\":["
         "\"inline\",\"link\"]},\"uri\":{\"type\":\"string\"},\"view\":{\"type\":\"string\"}},"
         "\"required\":[\"width\",\"height\","
         "\"scale\",\"origin_x\",\"origin_y\",\"screen_width\",\"screen_height\",\"png_bytes\","
         "\"delivery\"]}",
         true, false, false, mcp_tool_capture, .takes_view = true},
        {"screen.wait", "Wait for the screen",
         "Wait, instead of polling, until a window whose title matches a pattern appears "
         "(until: appears) or is gone (until: gone), or until the screen or one window stops "
         "repainting for quiet_ms (until: quiet; X DAMAGE). Bounded by timeout_s: a wait that "
         "times out is an isError result. Cancellable; a task (tasks/get, tasks/cancel) for a "
         "client with the tasks extension.",
         "{\"type\":\"object\",\"properties\":{\"until\":{\"type\":\"string\",\"enum\":["
         "\"appears\",\"gone\",\"quiet\"]},"
         "\"window\":{\"type\":\"string\",\"minLength\":1,\"description\":\"title pattern (PCRE)"
         "; for quiet: that window, else the whole screen\"},"
         "\"window_id\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"for quiet\"},"
         "\"quiet_ms\":{\"type\":\"integer\",\"minimum\":10,\"maximum\":60000,\"description\":"
         "\"default 300\"},"
         "\"timeout_s\":{\"type\":\"number\",\"minimum\":0,\"maximum\":600,\"description\":"
         "\"default 10\"}},\"required\":[\"until\"]}",
         "{\"type\":\"object\",\"properties\":{\"until\":{\"type\":\"string\"},\"waited_ms\":{"
         "\"type\":\"integer\"},\"window\":{\"type\":\"object\",\"properties\":{\"id\":{\"type\":"
         "\"integer\"},\"title\":{\"type\":\"string\"},\"pid\":{\"type\":\"integer\"},\"x\":{"
         "\"type\":\"integer\"},\"y\":{\"type\":\"integer\"},\"width\":{\"type\":\"integer\"},"
         "\"height\":{\"type\":\"integer\"}}}},\"required\":[\"until\",\"waited_ms\"]}",
         true, false, false, mcp_tool_screen_wait, .task_when = task_always},
        {"screen.ground", "Locate a described element",
         "Ask the configured grounding model (KASM_RUNTIME_MODEL...) where the described element "
         "is; returns a point in the new screenshot's space (and its view). A task for a client "
         "with the tasks extension.",
         "{\"type\":\"object\",\"properties\":{\"description\":{\"type\":\"string\",\"minLength\":"
         "1}},"
         "\"required\":[\"description\"]}",
         "{\"type\":\"object\",\"properties\":{\"found\":{\"type\":\"boolean\"},"
         "\"x\":{\"type\":\"number\"},\"y\":{\"type\":\"number\"},\"scale\":{\"type\":\"number\"},"
         "\"screen_x\":{\"type\":\"integer\"},\"screen_y\":{\"type\":\"integer\"},"
         "\"view\":{\"type\":\"string\"}},\"required\":[\"found\"]}",
         true, false, true, mcp_tool_ground, .task_when = task_always},
        {"input.click", "Click", "Click at a point in screenshot space (XTest).",
         "{\"type\":\"object\",\"properties\":{" XY_IN ",\"button\":{\"type\":\"string\","
         "\"enum\":[\"left\",\"middle\",\"right\"]},\"count\":{\"type\":\"integer\",\"minimum\":1,"
         "\"maximum\":3}},\"required\":[\"x\",\"y\"]}",
         POINT_OUT, false, true, false, mcp_tool_click, .takes_view = true},
        {"input.move", "Move the pointer", "Move the pointer to a point in screenshot space.",
         "{\"type\":\"object\",\"properties\":{" XY_IN "},\"required\":[\"x\",\"y\"]}", POINT_OUT,
         false, true, false, mcp_tool_move, .takes_view = true},
        {"input.drag", "Drag", "Press at (x1, y1), move to (x2, y2), release; screenshot space.",
         "{\"type\":\"object\",\"properties\":{\"x1\":{\"type\":\"number\"},\"y1\":{\"type\":"
         "\"number\"},\"x2\":{\"type\":\"number\"},\"y2\":{\"type\":\"number\"},\"button\":{"
         "\"type\":\"string\",\"enum\":[\"left\",\"middle\",\"right\"]}},"
         "\"required\":[\"x1\",\"y1\",\"x2\",\"y2\"]}",
         DONE_OUT, false, true, false, mcp_tool_drag, .takes_view = true},
        {"input.scroll", "Scroll",
         "Scroll at a point in screenshot space: amount wheel clicks, negative up.",
         "{\"type\":\"object\",\"properties\":{" XY_IN ",\"amount\":{\"type\":\"integer\","
         "\"minimum\":-50,\"maximum\":50}},\"required\":[\"x\",\"y\",\"amount\"]}",
         POINT_OUT, false, true, false, mcp_tool_scroll, .takes_view = true},
        {"input.type", "Type text", "Type UTF-8 text into the focused window (\\n is Return).",
         "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},"
         "\"required\":[\"text\"]}",
         DONE_OUT, false, true, false, mcp_tool_type},
        {"input.key", "Press keys",
         "Space-separated key chords, e.g. \"ctrl+s\", \"alt+F4 Return\".",
         "{\"type\":\"object\",\"properties\":{\"keys\":{\"type\":\"string\",\"minLength\":1}},"
         "\"required\":[\"keys\"]}",
         DONE_OUT, false, true, false, mcp_tool_key},
        {"window.list", "List windows",
         "Top-level windows: id, title, class, process, geometry (screen pixels).",
         "{\"type\":\"object\",\"properties\":{}}",
         "{\"type\":\"object\",\"properties\":{\"windows\":{\"type\":\"array\",\"items\":{"
         "\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\"},\"title\":{\"type\":"
         "\"string\"},\"class\":{\"type\":\"string\"},\"pid\":{\"type\":\"integer\"},\"x\":{"
         "\"type\":\"integer\"},\"y\":{\"type\":\"integer\"},\"width\":{\"type\":\"integer\"},"
         "\"height\":{\"type\":\"integer\"},\"dialog\":{\"type\":\"boolean\"}}}},"
         "\"truncated\":{\"type\":\"boolean\"},\"total\":{\"type\":\"integer\"}},"
         "\"required\":[\"windows\"]}",
         true, false, false, mcp_tool_window_list},
        {"window.focus", "Focus a window", "Activate a window by id or title pattern.",
         "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\",\"minimum\":1},"
         "\"title\":{\"type\":\"string\"}}}",
         "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\"},\"title\":{\"type\":"
         "\"string\"}},\"required\":[\"id\",\"title\"]}",
         false, true, false, mcp_tool_window_focus},
        {"a11y.tree", "Accessibility tree",
         "An app's AT-SPI controls, bounded: role, name, states, actions, screen extents, path. "
         "max_nodes (default 300) and depth bound it; name/role pick a subtree (its root the "
         "control found as a11y_click finds it). truncated says whether anything was left "
         "out, truncated_by by which bound.",
         "{\"type\":\"object\",\"properties\":{" APP_IN ",\"max_nodes\":{\"type\":\"integer\","
         "\"minimum\":1,\"maximum\":5000},\"depth\":{\"type\":\"integer\",\"minimum\":0,"
         "\"maximum\":32,\"description\":\"levels below the root (the app, or the subtree's)\"},"
         "\"name\":{\"type\":\"string\",\"description\":\"subtree root: exact name or "
         "/pattern/\"},\"role\":{\"type\":\"string\",\"description\":\"subtree root's role\"}}}",
         "{\"type\":\"object\",\"properties\":{\"app\":{\"type\":\"string\"},\"pid\":{\"type\":"
         "\"integer\"},\"root\":{\"type\":\"string\"},\"truncated\":{\"type\":\"boolean\"},"
         "\"truncated_by\":{\"type\":\"string\"},\"total\":{\"type\":\"integer\"},"
         "\"nodes\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}}},"
         "\"required\":[\"app\",\"pid\",\"truncated\",\"nodes\"]}",
         true, false, false, mcp_tool_a11y_tree},
        {"a11y.click", "Click a control",
         "Find a control by name (exact, or /pattern/), role, label, in (an ancestor) and nth, "
         "and perform its click action "
         "(as the scenario step click_element); an XTest click at its centre when it has none.",
         "{\"type\":\"object\",\"properties\":{" APP_IN ",\"name\":{\"type\":\"string\"},"
         "\"role\":{\"type\":\"string\"}" LOCATOR_IN "}}",
         "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},\"backend\":{"
         "\"type\":\"string\"},\"action\":{\"type\":\"string\"}},\"required\":[\"path\","
         "\"backend\"]}",
         false, true, false, mcp_tool_a11y_click},
        {"a11y.state", "Control state", "A control's current AT-SPI states, read now.",
         "{\"type\":\"object\",\"properties\":{" APP_IN ",\"name\":{\"type\":\"string\"},"
         "\"role\":{\"type\":\"string\"}" LOCATOR_IN "}}",
         "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},\"name\":{\"type\":"
         "\"string\"},\"states\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}},"
         "\"required\":[\"path\",\"name\",\"states\"]}",
         true, false, false, mcp_tool_a11y_state},
        {"a11y.find", "Find a control",
         "Wait until a control matching name (exact, or /pattern/), role, label, in (an "
         "ancestor), nth and states is in the app's accessibility tree, and return it: role, name, "
         "states, extents (screen "
         "pixels), actions and their key bindings, its shortcut. Bounded by timeout_s "
         "(default 5; 0: look once); not found by then is an isError result. Cancellable; "
         "when it waits, a task for a client with the tasks extension.",
         "{\"type\":\"object\",\"properties\":{" APP_IN ",\"name\":{\"type\":\"string\"},"
         "\"role\":{\"type\":\"string\"},\"states\":{\"type\":\"array\",\"items\":{\"type\":"
         "\"string\"},\"description\":\"all of these AT-SPI states (e.g. enabled, checked)\"},"
         "\"timeout_s\":{\"type\":\"number\",\"minimum\":0,\"maximum\":600}" LOCATOR_IN "}}",
         "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},\"role\":{\"type\":"
         "\"string\"},\"name\":{\"type\":\"string\"},\"description\":{\"type\":\"string\"},"
         "\"states\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},\"showing\":{\"type\":"
         "\"boolean\"},\"extents\":{\"type\":\"object\",\"description\":\"screen pixels; "
         "absent when the control has none\",\"properties\":{\"x\":{\"type\":\"integer\"},"
         "\"y\":{\"type\":\"integer\"},\"w\":{\"type\":\"integer\"},\"h\":{\"type\":"
         "\"integer\"}},\"required\":[\"x\",\"y\",\"w\",\"h\"]},\"actions\":{\"type\":"
         "\"array\",\"items\":{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},"
         "\"key_binding\":{\"type\":\"string\"}}}},\"shortcut\":{\"type\":\"string\","
         "\"description\":\"absent when no action has one\"},\"mnemonic\":{\"type\":\"string\","
         "\"description\":\"absent when no action has one\"},\"waited_ms\":{\"type\":"
         "\"integer\"}},\"required\":[\"path\",\"role\",\"name\",\"states\",\"actions\","
         "\"waited_ms\"]}",
         true, false, false, mcp_tool_a11y_find, .task_when = task_if_waiting},
        {"a11y.text", "Control text",
         "What a person reads in a control: its text (AT-SPI Text), else its value (Value: "
         "sliders, progress bars), else a label's name (Qt), read now, as the scenario check "
         "text: reads it; from says which. Without name, label, in or nth: the focused "
         "control, else the first showing one with text or a value (of role, when given).",
         "{\"type\":\"object\",\"properties\":{" APP_IN ",\"name\":{\"type\":\"string\","
         "\"description\":\"exact, or /pattern/\"},\"role\":{\"type\":\"string\"}" LOCATOR_IN "}}",
         "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},\"role\":{"
         "\"type\":\"string\"},\"name\":{\"type\":\"string\"},\"from\":{\"type\":\"string\","
         "\"enum\":[\"text\",\"value\",\"name\"]},\"text\":{\"type\":\"string\"}},\"required\":["
         "\"path\",\"role\",\"name\",\"from\",\"text\"]}",
         true, false, false, mcp_tool_a11y_text},
        {"page.list_interactive", "Page elements",
         "The browser page's interactive elements with ids for page_click and page_fill: "
         "Chromium over CDP (its accessibility tree), Firefox over WebDriver BiDi (found in "
         "the page). The cdp_* names of the page tools still work.",
         "{\"type\":\"object\",\"properties\":{" PORT_IN "," PAGE_IN "}}",
         "{\"type\":\"object\",\"properties\":{\"url\":{\"type\":\"string\"},"
         "\"protocol\":{\"type\":\"string\",\"enum\":[\"cdp\",\"bidi\"]},\"elements\":{"
         "\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{\"id\":{\"type\":"
         "\"string\"},\"role\":{\"type\":\"string\"},\"name\":{\"type\":\"string\"}}}},"
         "\"truncated\":{\"type\":\"boolean\"},\"total\":{\"type\":\"integer\"},\"page\":{"
         "\"type\":\"string\"}},\"required\":[\"url\",\"elements\",\"page\"]}",
         true, false, false, mcp_tool_cdp_list},
        {"page.click", "Click a page element",
         "Click an element once it is actionable (visible, enabled, stable, not covered).",
         "{\"type\":\"object\",\"properties\":{" PORT_IN "," PAGE_IN "," REF_IN
         "},\"required\":[\"ref\"]}",
         PAGE_DONE_OUT, false, true, false, mcp_tool_cdp_click},
        {"page.fill", "Fill a page field", "Focus an editable element and replace its text.",
         "{\"type\":\"object\",\"properties\":{" PORT_IN "," PAGE_IN "," REF_IN
         ",\"text\":{\"type\":"
         "\"string\"}},\"required\":[\"ref\",\"text\"]}",
         PAGE_DONE_OUT, false, true, false, mcp_tool_cdp_fill},
        {"page.navigate", "Navigate the page", "Load a URL and wait for the load event.",
         "{\"type\":\"object\",\"properties\":{" PORT_IN "," PAGE_IN
         ",\"url\":{\"type\":\"string\","
         "\"minLength\":1}},\"required\":[\"url\"]}",
         "{\"type\":\"object\",\"properties\":{\"url\":{\"type\":\"string\"},\"page\":{"
         "\"type\":\"string\"}},\"required\":[\"url\",\"page\"]}",
         false, true, true, mcp_tool_cdp_navigate},
        {"scenario.run", "Run a scenario",
         "Run a scenario (a file path or inline YAML) as `kasm-session-runtime run` does; "
         "returns the verdict, outcome, reason and the evidence folder. Progress per stage; "
         "a 2026-07-28 client with the tasks extension gets a task to poll (tasks/get, the "
         "stage as its status) and may cancel it (tasks/cancel: outcome interrupted).",
         "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},\"yaml\":{\"type\":"
         "\"string\"},\"out\":{\"type\":\"string\",\"description\":\"evidence folder; default a "
         "new temporary one\"},\"xvfb\":{\"type\":\"boolean\"},\"deadline_s\":{\"type\":"
         "\"integer\",\"minimum\":1,\"maximum\":86400}}}",
         "{\"type\":\"object\",\"properties\":{\"verdict\":{\"type\":\"string\",\"enum\":[\"pass\","
         "\"pass-with-concerns\",\"app-failed\",\"test-error\"]},\"exit_code\":{\"type\":"
         "\"integer\"},\"outcome\":{\"type\":\"string\"},\"reason\":{\"type\":\"string\"},"
         "\"evidence\":{\"type\":\"string\"},\"report\":{\"type\":\"string\",\"description\":"
         "\"the run's report.json as a resource (resources/read)\"}},\"required\":[\"verdict\","
         "\"exit_code\",\"outcome\",\"reason\",\"evidence\"]}",
         false, true, true, mcp_tool_scenario_run, .run_task = mcp_task_scenario_run},
};
const size_t mcp_n_tools = sizeof mcp_tools / sizeof mcp_tools[0];

/* Names compare with '_' and '.' as one: input_click (listed by default, the
 * spelling every client accepts) and input_click both call the same row, and
 * no two tool names differ only there (tests/unit/test_mcp.c checks). */
static bool same_name(const char *a, const char *b)
{
	for (; *a && *b; a++, b++) {
		bool sep_a = *a == '.' || *a == '_', sep_b = *b == '.' || *b == '_';
		if (sep_a != sep_b || (!sep_a && *a != *b))
			return false;
	}
	return *a == *b;
}

int mcp_tool_find(const char *name)
{
	if (!name)
		return -1;
	for (size_t i = 0; i < mcp_n_tools; i++)
		if (same_name(mcp_tools[i].name, name))
			return (int)i;
	/* The page tools' older names (cdp_click...), kept for every client
	 * written before Firefox's page rung. */
	char page[64];
	if ((!strncmp(name, "cdp.", 4) || !strncmp(name, "cdp_", 4)) &&
	    snprintf(page, sizeof page, "page.%s", name + 4) < (int)sizeof page)
		return mcp_tool_find(page);
	return -1;
}

const char *mcp_tool_listed_name(const mcp_tool *t, bool dotted, char *buf, size_t len)
{
	snprintf(buf, len, "%s", t->name);
	for (char *p = buf; !dotted && *p; p++)
		if (*p == '.')
			*p = '_';
	return buf;
}

cJSON *mcp_tool_json(const ksr_mcp *m, size_t i)
{
	const mcp_tool *t = &mcp_tools[i];
	char name[64];
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name",
	                        mcp_tool_listed_name(t, m->opts.dotted_names, name, sizeof name));
	cJSON_AddStringToObject(o, "title", t->title);
	cJSON_AddStringToObject(o, "description", t->description);
	cJSON_AddItemToObject(o, "inputSchema", cJSON_Duplicate(m->schemas[2 * i], 1));
	cJSON_AddItemToObject(o, "outputSchema", cJSON_Duplicate(m->schemas[2 * i + 1], 1));
	cJSON *an = cJSON_AddObjectToObject(o, "annotations");
	cJSON_AddStringToObject(an, "title", t->title);
	cJSON_AddBoolToObject(an, "readOnlyHint", t->read_only);
	cJSON_AddBoolToObject(an, "destructiveHint", t->destructive);
	cJSON_AddBoolToObject(an, "idempotentHint", t->read_only);
	cJSON_AddBoolToObject(an, "openWorldHint", t->open_world);
	return o;
}

/* ---- argument checks against the inputSchema --------------------------------- */

static bool type_ok(const char *type, const cJSON *v)
{
	if (!strcmp(type, "string"))
		return cJSON_IsString(v);
	if (!strcmp(type, "boolean"))
		return cJSON_IsBool(v);
	if (!strcmp(type, "object"))
		return cJSON_IsObject(v);
	if (!strcmp(type, "array"))
		return cJSON_IsArray(v);
	if (!strcmp(type, "number"))
		return cJSON_IsNumber(v) && isfinite(v->valuedouble);
	if (!strcmp(type, "integer"))
		return cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) &&
		       fabs(v->valuedouble) < 2147483647.0;
	return true;
}

static int check_bounds(const cJSON *s, const cJSON *v, const char *name, char *why, size_t len)
{
	const cJSON *b;
	if (cJSON_IsNumber(v)) {
		if ((b = cJSON_GetObjectItem(s, "minimum")) && v->valuedouble < b->valuedouble)
			return snprintf(why, len, "%s must be >= %g", name, b->valuedouble), -1;
		if ((b = cJSON_GetObjectItem(s, "maximum")) && v->valuedouble > b->valuedouble)
			return snprintf(why, len, "%s must be <= %g", name, b->valuedouble), -1;
		if ((b = cJSON_GetObjectItem(s, "exclusiveMinimum")) &&
		    v->valuedouble <= b->valuedouble)
			return snprintf(why, len, "%s must be > %g", name, b->valuedouble), -1;
	}
	if (cJSON_IsString(v) && (b = cJSON_GetObjectItem(s, "minLength")) &&
	    strlen(v->valuestring) < (size_t)b->valueint)
		return snprintf(why, len, "%s must not be empty", name), -1;
	const cJSON *en = cJSON_GetObjectItem(s, "enum"), *e;
	if (!en || !cJSON_IsString(v))
		return 0;
	cJSON_ArrayForEach(e, en) if (cJSON_IsString(e) &&
	                              !strcmp(e->valuestring, v->valuestring)) return 0;
	return snprintf(why, len, "%s must be one of the schema's enum values", name), -1;
}

static int check_value(const cJSON *s, const cJSON *v, const char *name, char *why, size_t len);

static bool is_required(const cJSON *s, const char *prop)
{
	const cJSON *req;
	cJSON_ArrayForEach(req, cJSON_GetObjectItem(s, "required"))
	{
		if (cJSON_IsString(req) && !strcmp(req->valuestring, prop))
			return true;
	}
	return false;
}

/* A required argument given as null (optional ones were dropped before):
 * named, with what it must be. */
static int null_required(const cJSON *ps, const char *name, const char *member, char *why,
                         size_t len)
{
	const cJSON *type = cJSON_GetObjectItem(ps, "type");
	const char *t = cJSON_IsString(type) ? type->valuestring : "a value";
	return snprintf(why, len, "required argument %s%s%s is null: it must be %s%s", name,
	                *name ? "." : "", member,
	                !cJSON_IsString(type)   ? ""
	                : strchr("aeiou", t[0]) ? "an "
	                                        : "a ",
	                t),
	       -1;
}

static int check_object(const cJSON *s, const cJSON *v, const char *name, char *why, size_t len)
{
	const cJSON *props = cJSON_GetObjectItem(s, "properties"), *req, *it;
	cJSON_ArrayForEach(req, cJSON_GetObjectItem(s, "required"))
	{
		if (!cJSON_GetObjectItemCaseSensitive(v, req->valuestring))
			return snprintf(why, len, "missing required argument %s%s%s", name,
			                *name ? "." : "", req->valuestring),
			       -1;
	}
	cJSON_ArrayForEach(it, v)
	{
		const cJSON *ps = cJSON_GetObjectItemCaseSensitive(props, it->string);
		if (!ps)
			return snprintf(why, len, "unknown argument %s%s%s", name, *name ? "." : "",
			                it->string),
			       -1;
		if (cJSON_IsNull(it))
			return null_required(ps, name, it->string, why, len);
		if (check_value(ps, it, it->string, why, len) < 0)
			return -1;
	}
	return 0;
}

/* anyOf (the locators' in: a name, or {name, role}): the value fits one of
 * the forms; else the last form's complaint. */
static int check_any(const cJSON *any, const cJSON *v, const char *name, char *why, size_t len)
{
	const cJSON *form;
	cJSON_ArrayForEach(form, any)
	{
		if (check_value(form, v, name, why, len) == 0)
			return 0;
	}
	return -1;
}

static int check_value(const cJSON *s, const cJSON *v, const char *name, char *why, size_t len)
{
	const cJSON *any = cJSON_GetObjectItem(s, "anyOf");
	if (cJSON_IsArray(any))
		return check_any(any, v, name, why, len);
	const cJSON *type = cJSON_GetObjectItem(s, "type");
	if (cJSON_IsString(type) && !type_ok(type->valuestring, v))
		return snprintf(why, len, "%s must be %s %s", *name ? name : "arguments",
		                strchr("aeiou", type->valuestring[0]) ? "an" : "a",
		                type->valuestring),
		       -1;
	if (cJSON_IsObject(v))
		return check_object(s, v, name, why, len);
	return check_bounds(s, v, name, why, len);
}

int mcp_check_args(const cJSON *schema, const cJSON *args, char *why, size_t len)
{
	return check_value(schema, args, "", why, len);
}

/* Null for an optional argument means "not given": OpenAI's strict mode makes
 * every optional argument required-but-nullable, so its models send all of
 * them, null where they mean none. Dropped here, once, at every level of an
 * object argument, so no handler sees one; a null for a required argument
 * stays, for the check to name. */
/* A schema's object form: itself, or its anyOf's object alternative. */
static const cJSON *object_form(const cJSON *s)
{
	const cJSON *form;
	cJSON_ArrayForEach(form, cJSON_GetObjectItem(s, "anyOf"))
	{
		if (cJSON_GetObjectItem(form, "properties"))
			return form;
	}
	return s;
}

static void drop_optional_nulls(const cJSON *s, cJSON *v)
{
	s = object_form(s);
	const cJSON *props = cJSON_GetObjectItem(s, "properties");
	for (cJSON *it = v->child, *next; it; it = next) {
		next = it->next;
		const cJSON *ps = cJSON_GetObjectItemCaseSensitive(props, it->string);
		if (!ps)
			continue; /* an unknown argument, null or not, is refused by the check */
		if (cJSON_IsNull(it) && !is_required(s, it->string))
			cJSON_Delete(cJSON_DetachItemViaPointer(v, it));
		else if (cJSON_IsObject(it))
			drop_optional_nulls(ps, it);
	}
}

cJSON *mcp_args_without_nulls(const cJSON *schema, const cJSON *args)
{
	if (!args || cJSON_IsNull(args))
		return cJSON_CreateObject(); /* "arguments": null is no arguments */
	cJSON *copy = cJSON_Duplicate(args, 1);
	if (cJSON_IsObject(copy))
		drop_optional_nulls(schema, copy);
	return copy;
}

/* ---- results and arguments ---------------------------------------------------- */

static void add_text(mcp_result *r, const char *text)
{
	if (!r->content)
		r->content = cJSON_CreateArray();
	cJSON *b = cJSON_CreateObject();
	cJSON_AddStringToObject(b, "type", "text");
	cJSON_AddStringToObject(b, "text", text);
	cJSON_AddItemToArray(r->content, b);
}

int mcp_text(mcp_result *r, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	add_text(r, buf);
	return 0;
}

int mcp_fail(mcp_result *r, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	r->is_error = true;
	add_text(r, buf);
	return 0;
}

int mcp_structured(mcp_result *r, cJSON *obj)
{
	char *text = ksr_json_print(obj, false);
	add_text(r, text ? text : "{}");
	cJSON_free(text);
	cJSON_Delete(r->structured);
	r->structured = obj;
	return 0;
}

int mcp_arg_int(const cJSON *args, const char *name, int def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, name);
	return cJSON_IsNumber(v) ? (int)v->valuedouble : def;
}

double mcp_arg_num(const cJSON *args, const char *name, double def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, name);
	return cJSON_IsNumber(v) ? v->valuedouble : def;
}

const char *mcp_arg_str(const cJSON *args, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, name);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

bool mcp_arg_bool(const cJSON *args, const char *name, bool def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, name);
	return cJSON_IsBool(v) ? cJSON_IsTrue(v) : def;
}

/* ---- size caps ------------------------------------------------------------------ */

/* The view argument of the tools whose coordinates are in a screenshot's space. */
static void add_view_arg(cJSON *props)
{
	cJSON *p = cJSON_AddObjectToObject(props, "view");
	cJSON_AddStringToObject(p, "type", "string");
	cJSON_AddStringToObject(
	        p, "description",
	        "the view handle a screen_capture returned: coordinates are in that "
	        "screenshot's space (default: the last screenshot's in a 2025 session, screen "
	        "pixels under 2026-07-28)");
}

void mcp_schema_add_common(cJSON *in, bool takes_view)
{
	cJSON *props = cJSON_GetObjectItemCaseSensitive(in, "properties");
	if (!cJSON_IsObject(props) || cJSON_GetObjectItemCaseSensitive(props, "max_text"))
		return;
	if (takes_view)
		add_view_arg(props);
	cJSON *p = cJSON_AddObjectToObject(props, "max_text");
	cJSON_AddStringToObject(p, "type", "integer");
	cJSON_AddNumberToObject(p, "minimum", 256);
	cJSON_AddNumberToObject(p, "maximum", 16000000);
	cJSON_AddStringToObject(
	        p, "description",
	        "the most characters of text this result may carry (default 40000); "
	        "lists are cut to fit and say so");
}

static size_t json_len(const cJSON *o)
{
	char *t = ksr_json_print(o, false);
	size_t n = t ? strlen(t) : 0;
	cJSON_free(t);
	return n;
}

int mcp_structured_list(ksr_mcp *m, mcp_result *r, cJSON *obj, const char *key)
{
	cJSON *arr = cJSON_GetObjectItemCaseSensitive(obj, key);
	size_t cap = (size_t)(m->text_cap > 0 ? m->text_cap : MCP_DEFAULT_TEXT_CAP);
	int total = cJSON_GetArraySize(arr);
	if (!cJSON_IsArray(arr) || json_len(obj) <= cap)
		return mcp_structured(r, obj);
	/* Room for the markers added below, then drop items from the end: halve
	 * the count while far over, then one at a time. */
	cJSON_DeleteItemFromObject(obj, "truncated");
	cJSON_AddBoolToObject(obj, "truncated", true);
	cJSON_DeleteItemFromObject(obj, "truncated_by");
	cJSON_AddStringToObject(obj, "truncated_by", "max_text");
	cJSON_DeleteItemFromObject(obj, "total");
	cJSON_AddNumberToObject(obj, "total", total);
	for (size_t len = json_len(obj); len > cap && cJSON_GetArraySize(arr) > 0;
	     len = json_len(obj)) {
		int n = cJSON_GetArraySize(arr);
		int drop = len > 2 * cap && n > 1 ? n / 2 : 1;
		for (int i = 0; i < drop; i++)
			cJSON_DeleteItemFromArray(arr, cJSON_GetArraySize(arr) - 1);
	}
	return mcp_structured(r, obj);
}

static size_t text_chars(const cJSON *content)
{
	size_t n = 0;
	const cJSON *b;
	cJSON_ArrayForEach(b, content)
	{
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(b, "text");
		if (cJSON_IsString(t))
			n += strlen(t->valuestring);
	}
	return n;
}

void mcp_cap_text(ksr_mcp *m, mcp_result *r)
{
	size_t cap = (size_t)(m->text_cap > 0 ? m->text_cap : MCP_DEFAULT_TEXT_CAP);
	size_t n = text_chars(r->content);
	if (n <= cap)
		return;
	if (r->structured && !r->is_error) {
		/* Structured content must match the outputSchema whole: no cutting it. */
		cJSON_Delete(r->structured);
		cJSON_Delete(r->content);
		*r = (mcp_result){0};
		mcp_fail(r,
		         "the result is %zu characters, over max_text (%zu): narrow the request "
		         "(a window, a region, a subtree, fewer nodes) or raise max_text",
		         n, cap);
		return;
	}
	cJSON *b;
	size_t left = cap;
	cJSON_ArrayForEach(b, r->content)
	{
		cJSON *t = cJSON_GetObjectItemCaseSensitive(b, "text");
		if (!cJSON_IsString(t))
			continue;
		size_t len = strlen(t->valuestring);
		if (len <= left) {
			left -= len;
			continue;
		}
		size_t keep = left;
		while (keep > 0 && ((unsigned char)t->valuestring[keep] & 0xC0) == 0x80)
			keep--; /* not inside a UTF-8 character */
		char *cut = ksr_xasprintf("%.*s\n[truncated: %zu of %zu characters shown; raise "
		                          "max_text for more]",
		                          (int)keep, t->valuestring, keep, len);
		cJSON_SetValuestring(t, cut);
		free(cut);
		left = 0;
	}
}

char *mcp_base64(const unsigned char *d, size_t n)
{
	static const char tab[] =
	        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = ksr_xmalloc(4 * ((n + 2) / 3) + 1), *o = out;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)d[i] << 16 | (i + 1 < n ? (unsigned)d[i + 1] << 8 : 0) |
		             (i + 2 < n ? d[i + 2] : 0);
		*o++ = tab[v >> 18 & 63];
		*o++ = tab[v >> 12 & 63];
		*o++ = i + 1 < n ? tab[v >> 6 & 63] : '=';
		*o++ = i + 2 < n ? tab[v & 63] : '=';
	}
	*o = '\0';
	return out;
}
