/* libFuzzer target for the MCP server core (ksr_mcp_handle), the code every
 * transport hands client messages to. The input is up to 32 newline-separated
 * messages sent in order to one server made with no display: initialize,
 * tools/list, malformed JSON-RPC, and tools/call with any name and arguments.
 * Tools that need a display must fail cleanly. The contract checked: every
 * reply and notification is one line of JSON-RPC 2.0, never a crash.
 *
 * Lines that could name scenario.run or a page.* (cdp.*) tool are skipped: the first
 * runs a scenario (processes, files, shell steps), the second connects to
 * whatever listens on a local port; neither belongs in a fuzzing loop. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "ksr/mcp.h"

#define MAX_MESSAGES 32

/* Is any string in the tree (a key or a value) a risky tool name's part? The
 * server decodes escapes the same way (cJSON), so the check sees what it sees. */
static bool risky(const cJSON *o)
{
	for (; o; o = o->next) {
		const char *s[2] = {o->string, cJSON_IsString(o) ? o->valuestring : NULL};
		for (int i = 0; i < 2; i++)
			if (s[i] && (strcasestr(s[i], "scenario") || strcasestr(s[i], "cdp") ||
			             strcasestr(s[i], "page")))
				return true;
		if (risky(o->child))
			return true;
	}
	return false;
}

/* A reply or notification: one line of JSON, a JSON-RPC 2.0 object. */
static void check_line(const char *line)
{
	if (!line || strchr(line, '\n'))
		abort();
	cJSON *o = cJSON_Parse(line);
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "jsonrpc");
	if (!cJSON_IsString(v) || strcmp(v->valuestring, "2.0") != 0)
		abort();
	cJSON_Delete(o);
}

static void on_notify(void *ud, const char *line)
{
	(void)ud;
	check_line(line);
}

static void handle(ksr_mcp *m, const char *msg, size_t len)
{
	cJSON *o = cJSON_ParseWithLength(msg, len);
	bool skip = o && risky(o);
	cJSON_Delete(o);
	if (skip)
		return;
	free(ksr_mcp_cancelled_id(msg, len));
	(void)ksr_mcp_is_tool_call(msg, len);
	char *reply = ksr_mcp_handle(m, msg, len, on_notify, NULL);
	if (reply)
		check_line(reply);
	free(reply);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* No display, no bus, no model: tools that need one fail at once. */
	unsetenv("DISPLAY");
	unsetenv("WAYLAND_DISPLAY");
	setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/ksr-fuzz", 1);
	setenv("AT_SPI_BUS_ADDRESS", "unix:path=/nonexistent/ksr-fuzz", 1);
	for (;;) { /* the model's settings are all KASM_RUNTIME_* */
		char **e = environ;
		while (*e && strncmp(*e, "KASM_RUNTIME_", 13) != 0)
			e++;
		if (!*e)
			return 0;
		char *name = strndup(*e, strcspn(*e, "="));
		unsetenv(name);
		free(name);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ksr_err err = {0};
	ksr_mcp_opts o = {.dotted_names = size && (data[0] & 1)};
	ksr_mcp *m = ksr_mcp_create(&o, &err);
	if (!m)
		abort(); /* no display is not a reason to refuse to start */
	const char *p = (const char *)data, *end = p + size;
	for (int i = 0; i < MAX_MESSAGES && p < end; i++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		handle(m, p, len);
		p += len + 1;
	}
	ksr_mcp_destroy(m);
	return 0;
}
