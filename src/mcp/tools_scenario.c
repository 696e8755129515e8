/* scenario.run: the whole staged run (ksr_run_scenario), as the run command
 * does it, with a progress notification per stage; or, as a task (2026-07-28
 * with the tasks extension), on the task's thread with the stage as the
 * task's status message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ksr/evidence.h"
#include "ksr/json.h"
#include "ksr/run.h"
#include "mcp/mcp_priv.h"

typedef struct scn_ctx {
	ksr_mcp *m;
	mcp_task *task; /* NULL: a plain call, progress goes on the request */
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
		if (c->task)
			mcp_task_status(c->task, msg);
		else
			mcp_progress(c->m, 0, msg);
	}
}

static void on_report(void *ud, const cJSON *report)
{
	scn_ctx *c = ud;
	cJSON_Delete(c->report);
	c->report = cJSON_Duplicate(report, 1);
}

/* A task sends no notifications (the extension has none on tasks): its
 * messages are in the run's evidence. */
static void on_message(void *ud, const char *message)
{
	scn_ctx *c = ud;
	if (!c->task)
		mcp_log(c->m, "warning", "%s", message);
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
	/* Beside the evidence, opened as its files are: never through a link. */
	FILE *f = ksr_evidence_fopen_path(path, KSR_EVIDENCE_NEW);
	bool ok = f && fputs(yaml, f) >= 0;
	if (f && fclose(f) != 0)
		ok = false;
	if (!ok) {
		mcp_fail(r, "cannot write %s", path);
		free(path);
		return NULL;
	}
	return path;
}

/* The run's report as one of the server's resources (resources/read), so a
 * client on another machine reaches it too, and a cancelled task, which has
 * no result, can still name it. Its URI, or NULL when none was written. */
static char *report_resource(scn_ctx *c)
{
	if (!c->report)
		return NULL;
	char *json = ksr_json_print(c->report, true);
	mcp_result scratch = {0};
	char *uri = json ? mcp_evidence_write(c->m, "run-report", "json", "application/json", json,
	                                      strlen(json), &scratch)
	                 : NULL;
	cJSON_free(json);
	cJSON_Delete(scratch.content);
	return uri;
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
	char *report = report_resource(c);
	if (report)
		cJSON_AddStringToObject(o, "report", report);
	free(report);
	mcp_structured(r, o);
}

static int scenario_run(ksr_mcp *m, mcp_task *task, const cJSON *a, mcp_result *r)
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
	scn_ctx c = {.m = m, .task = task};
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
	if (!task)
		mcp_log(m, "info", "scenario.run: %s -> %s", o.scenario_path, out);
	int code = ksr_run_scenario(&o);
	answer(&c, code, out, r);
	cJSON_Delete(c.report);
	free(written);
	return 0;
}

int mcp_tool_scenario_run(ksr_mcp *m, const cJSON *a, mcp_result *r)
{
	return scenario_run(m, NULL, a, r);
}

int mcp_task_scenario_run(ksr_mcp *m, mcp_task *t, const cJSON *a, mcp_result *r)
{
	return scenario_run(m, t, a, r);
}
