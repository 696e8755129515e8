/* scenario.run: the whole staged run (ksr_run_scenario), as the run command
 * does it, with a progress notification per stage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ksr/run.h"
#include "mcp/mcp_priv.h"

typedef struct scn_ctx {
	ksr_mcp *m;
	cJSON *report;
} scn_ctx;

static void on_event(void *ud, const cJSON *ev)
{
	scn_ctx *c = ud;
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(ev, "event");
	const cJSON *stage = cJSON_GetObjectItemCaseSensitive(ev, "name");
	if (!cJSON_IsString(name) || !cJSON_IsString(stage))
		return;
	if (!strcmp(name->valuestring, "stage.start")) {
		char msg[160];
		snprintf(msg, sizeof msg, "stage %s", stage->valuestring);
		mcp_progress(c->m, 0, msg);
	}
}

static void on_report(void *ud, const cJSON *report)
{
	scn_ctx *c = ud;
	cJSON_Delete(c->report);
	c->report = cJSON_Duplicate(report, 1);
}

static void on_message(void *ud, const char *message)
{
	mcp_log(((scn_ctx *)ud)->m, "warning", "%s", message);
}

static const char *str_of(const cJSON *o, const char *k, const char *def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsString(v) ? v->valuestring : def;
}

/* Inline YAML goes to a file beside the evidence (the loader reads paths). */
static char *write_yaml(const char *dir, const char *yaml, mcp_result *r)
{
	char *path = ksr_xasprintf("%s.scenario.yaml", dir);
	FILE *f = fopen(path, "w");
	if (!f || fputs(yaml, f) < 0 || fclose(f) != 0) {
		if (f)
			fclose(f);
		mcp_fail(r, "cannot write %s", path);
		free(path);
		return NULL;
	}
	return path;
}

static void answer(scn_ctx *c, int code, const char *out, mcp_result *r)
{
	cJSON *o = cJSON_CreateObject();
	static const char *const by_code[] = {"pass", "app-failed", "test-error"};
	cJSON_AddStringToObject(
	        o, "verdict",
	        str_of(c->report, "verdict", by_code[code < 0 || code > 2 ? 2 : code]));
	cJSON_AddNumberToObject(o, "exit_code", code);
	cJSON_AddStringToObject(o, "outcome", str_of(c->report, "outcome", "output-unwritable"));
	cJSON_AddStringToObject(o, "reason", str_of(c->report, "reason", "no report was written"));
	cJSON_AddStringToObject(o, "evidence", out);
	mcp_structured(r, o);
}

int mcp_tool_scenario_run(ksr_mcp *m, const cJSON *a, mcp_result *r)
{
	const char *path = mcp_arg_str(a, "path"), *yaml = mcp_arg_str(a, "yaml");
	if (!path == !yaml)
		return mcp_fail(r, "give exactly one of path and yaml");
	char tmp[] = "/tmp/ksr-mcp-XXXXXX";
	const char *out = mcp_arg_str(a, "out");
	if (!out && !(out = mkdtemp(tmp)))
		return mcp_fail(r, "cannot make a temporary evidence folder");
	char *written = yaml ? write_yaml(out, yaml, r) : NULL;
	if (yaml && !written)
		return 0;
	scn_ctx c = {.m = m};
	ksr_run_opts o = {.scenario_path = written ? written : path,
	                  .out_dir = out,
	                  .xvfb = mcp_arg_bool(a, "xvfb", false),
	                  .display_server = m->opts.display_server,
	                  .wm = m->opts.wm,
	                  .deadline_s = mcp_arg_int(a, "deadline_s", 600),
	                  .on_event = on_event,
	                  .on_event_ud = &c,
	                  .on_report = on_report,
	                  .on_report_ud = &c,
	                  .on_message = on_message,
	                  .on_message_ud = &c};
	mcp_log(m, "info", "scenario.run: %s -> %s", o.scenario_path, out);
	int code = ksr_run_scenario(&o);
	answer(&c, code, out, r);
	cJSON_Delete(c.report);
	free(written);
	return 0;
}
