/* Replays every input under tests/data/mcp-fuzz-regressions/ (what fuzz_mcp
 * found) through the MCP server core the way the fuzzer does: one server with
 * no display, one message a line. Under ASan+UBSan (the CI build) a
 * regression aborts; every reply must be one line of JSON-RPC 2.0. Then the
 * finding's rule directly: an id that is a number outside long long's range
 * is not an id (-32600 with a null id), not undefined behaviour. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "ksr/mcp.h"
#include "tap.h"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = calloc(1, (size_t)(n > 0 ? n : 0) + 1);
	*len = n > 0 ? fread(buf, 1, (size_t)n, f) : 0;
	fclose(f);
	return buf;
}

static bool one_rpc_line(const char *reply)
{
	if (!reply)
		return true; /* a notification or a response: nothing due */
	cJSON *o = cJSON_Parse(reply);
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "jsonrpc");
	bool good = !strchr(reply, '\n') && cJSON_IsString(v) && !strcmp(v->valuestring, "2.0");
	cJSON_Delete(o);
	return good;
}

static void replay(ksr_mcp *m, const char *path)
{
	size_t len = 0;
	char *text = slurp(path, &len);
	if (!ok(text != NULL, "%s: readable", path))
		return;
	bool all = true;
	for (const char *p = text, *end = text + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char *reply = ksr_mcp_handle(m, p, n, NULL, NULL);
		all = all && one_rpc_line(reply);
		free(reply);
		p += n + 1;
	}
	ok(all, "%s: every reply one line of JSON-RPC 2.0", path);
	free(text);
}

static int keep_input(const struct dirent *d)
{
	return d->d_name[0] != '.' && strcmp(d->d_name, "README.md") != 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* The reply's error code and whether its id is null. */
static int error_code(ksr_mcp *m, const char *msg, bool *null_id)
{
	char *reply = ksr_mcp_handle(m, msg, strlen(msg), NULL, NULL);
	cJSON *o = cJSON_Parse(reply);
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(o, "error"), "code");
	*null_id = cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "id"));
	int c = cJSON_IsNumber(code) ? code->valueint : 0;
	cJSON_Delete(o);
	free(reply);
	return c;
}

static void test_huge_ids(ksr_mcp *m)
{
	static const char *const ids[] = {"1e300", "-1e300", "1e400", "9.3e18"};
	for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) {
		char msg[128];
		snprintf(msg, sizeof msg, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"ping\"}",
		         ids[i]);
		bool null_id = false;
		is_int(error_code(m, msg, &null_id), -32600, ids[i]);
		ok(null_id, "id %s is answered with a null id", ids[i]);
	}
	bool null_id = false;
	is_int(error_code(m, "{\"jsonrpc\":\"2.0\",\"id\":9007199254740993,\"method\":\"ping\"}",
	                  &null_id),
	       0, "a large integer id within range is still an id");
}

int main(void)
{
	unsetenv("DISPLAY");
	ksr_err err = {0};
	ksr_mcp *m = ksr_mcp_create(&(ksr_mcp_opts){0}, &err);
	if (!ok(m != NULL, "server made without a display (%s)", err.msg))
		return tap_done();
	const char *src = getenv("KSR_SOURCE_DIR");
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/tests/data/mcp-fuzz-regressions", src ? src : ".");
	struct dirent **names = NULL;
	int n = scandir(dir, &names, keep_input, by_name);
	ok(n > 0, "inputs found in %s", dir);
	for (int i = 0; i < n; i++) {
		char path[4400];
		snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
		replay(m, path);
		free(names[i]);
	}
	free(names);
	test_huge_ids(m);
	ksr_mcp_destroy(m);
	return tap_done();
}
