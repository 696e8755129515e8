/* report.json and report.md from a synthetic run with every event kind; the JSON
 * is validated against docs/report.schema.json by python3-jsonschema. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ksr/event.h"
#include "ksr/report.h"
#include "tap.h"

static cJSON *obj(const char *json)
{
	cJSON *o = cJSON_Parse(json);
	if (!o) {
		fprintf(stderr, "bad test JSON: %s\n", json);
		abort();
	}
	return o;
}

static ksr_events *synthetic_run(void)
{
	ksr_events *ev = ksr_events_create();
	ksr_events_emit(
	        ev, "run.start",
	        obj("{\"pid\":4242,\"run_id\":\"20260101T000000Z-4242\","
	            "\"started_at\":\"2026-01-01T00:00:00.123Z\","
	            "\"scenario\":{\"path\":\"/s/mousepad.yaml\",\"name\":\"mousepad-smoke\","
	            "\"sha256\":"
	            "\"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\"},"
	            "\"runtime\":{\"version\":\"0.1.0\"},\"deadline_s\":600,\"out\":\"/o\"}"));
	ksr_events_set_stage(ev, "boot wait");
	ksr_events_emit_kv(ev, "stage.start", "name", "boot wait", NULL);
	ksr_events_emit(ev, "stage.end",
	                obj("{\"name\":\"boot wait\",\"status\":\"ok\",\"duration_ms\":12}"));
	ksr_events_set_stage(ev, "launch");
	ksr_events_emit_kv(ev, "stage.start", "name", "launch", NULL);
	ksr_events_emit(ev, "launch",
	                obj("{\"command\":\"mousepad\",\"pid\":100,\"log\":\"launch.log\"}"));
	ksr_events_emit(ev, "stage.end",
	                obj("{\"name\":\"launch\",\"status\":\"ok\",\"duration_ms\":3}"));
	ksr_events_set_stage(ev, "app wait");
	ksr_events_emit_kv(ev, "stage.start", "name", "app wait", NULL);
	ksr_events_emit(
	        ev, "app",
	        obj("{\"pid\":100,\"name\":\"mousepad\",\"cmdline\":\"mousepad\","
	            "\"launched\":true,\"window\":{\"id\":20971523,"
	            "\"title\":\"<script>alert(1)</script> | Untitled\",\"class\":\"Mousepad\","
	            "\"x\":10,\"y\":20,\"w\":800,\"h\":600}}"));
	ksr_events_emit(ev, "stage.end",
	                obj("{\"name\":\"app wait\",\"status\":\"ok\",\"duration_ms\":250}"));
	ksr_events_set_stage(ev, "first look");
	ksr_events_emit_kv(ev, "stage.start", "name", "first look", NULL);
	ksr_events_emit(ev, "artifact",
	                obj("{\"name\":\"00-first-look.png\",\"kind\":\"screenshot\","
	                    "\"description\":\"First look\"}"));
	ksr_events_emit(
	        ev, "artifact",
	        obj("{\"name\":\"baseline-candidate.png\",\"kind\":\"baseline-candidate\"}"));
	ksr_events_emit(ev, "concern",
	                obj("{\"code\":\"unexpected-dialog\",\"message\":\"A dialog [x](http://e) "
	                    "showed\",\"line\":4}"));
	ksr_events_emit(ev, "model_call", obj("{\"role\":\"judge\",\"ok\":true,\"ms\":800}"));
	ksr_events_emit(ev, "model_call", obj("{\"role\":\"judge\",\"ok\":false,\"ms\":200}"));
	ksr_events_emit(ev, "stage.end",
	                obj("{\"name\":\"first look\",\"status\":\"ok\",\"duration_ms\":40}"));
	ksr_events_set_stage(ev, "steps");
	ksr_events_emit_kv(ev, "stage.start", "name", "steps", NULL);
	ksr_events_set_step(ev, 1);
	ksr_events_emit(ev, "step.start", obj("{\"index\":1,\"line\":12,\"kind\":\"click\"}"));
	ksr_events_emit(
	        ev, "step.end",
	        obj("{\"index\":1,\"line\":12,\"kind\":\"click\",\"backend\":\"xtest\","
	            "\"rung\":\"declared\",\"window\":{\"x\":10,\"y\":20,\"w\":800,\"h\":600},"
	            "\"pixel\":{\"x\":34,\"y\":44},\"checks\":[{\"kind\":\"window\",\"line\":13,"
	            "\"status\":\"held\",\"detail\":\"Save As | mapped\"}],\"status\":\"ok\","
	            "\"duration_ms\":120,\"screenshot\":\"01-step.png\","
	            "\"annotated\":\"01-step-annotated.png\"}"));
	/* A page's error, recorded after the step's act: its text is the page's. */
	ksr_events_emit(ev, "page_error",
	                obj("{\"kind\":\"exception\",\"text\":\"Uncaught <script>x</script> | "
	                    "[y](http://e)\",\"source\":\"http://p/a.js:3\",\"line\":12,"
	                    "\"protocol\":\"cdp\"}"));
	ksr_events_set_step(ev, 2);
	ksr_events_emit(ev, "step.start",
	                obj("{\"index\":2,\"line\":14,\"kind\":\"click_grounded\"}"));
	ksr_events_emit(ev, "grounding",
	                obj("{\"step\":2,\"asked\":\"the OK button\",\"where\":{\"x\":400,"
	                    "\"y\":300},\"verified\":false}"));
	ksr_events_emit(ev, "failure",
	                obj("{\"outcome\":\"check-failed\",\"reason\":\"Line 14: the file was "
	                    "not saved.\",\"line\":14}"));
	ksr_events_emit(
	        ev, "step.end",
	        obj("{\"index\":2,\"line\":14,\"kind\":\"click_grounded\",\"backend\":"
	            "\"xtest\",\"rung\":\"grounded\",\"checks\":[{\"kind\":\"file\",\"line\":15,"
	            "\"status\":\"failed\",\"detail\":\"missing\\nfile\"}],\"status\":\"failed\","
	            "\"reason\":\"the file was not saved\",\"duration_ms\":900}"));
	ksr_events_set_step(ev, 0);
	ksr_events_emit(
	        ev, "stage.end",
	        obj("{\"name\":\"steps\",\"status\":\"failed\",\"reason\":\"step 2 failed\","
	            "\"duration_ms\":1020}"));
	ksr_events_set_stage(ev, "final checks");
	ksr_events_emit_kv(ev, "stage.start", "name", "final checks", NULL);
	ksr_events_emit(ev, "final_check",
	                obj("{\"name\":\"process\",\"ok\":true,\"detail\":\"mousepad runs\"}"));
	ksr_events_emit(
	        ev, "stage.end",
	        obj("{\"name\":\"final checks\",\"status\":\"skipped\",\"duration_ms\":0}"));
	ksr_events_set_stage(ev, "report");
	ksr_events_emit_kv(ev, "stage.start", "name", "report", NULL);
	ksr_events_emit(
	        ev, "log_tail",
	        obj("{\"path\":\"launch.log\",\"text\":\"started\\n```\\nnot a fence\\n\"}"));
	ksr_events_emit(ev, "output_error",
	                obj("{\"what\":\"report.md\",\"error\":\"Permission denied\"}"));
	ksr_events_emit(ev, "artifact", obj("{\"name\":\"launch.log\",\"kind\":\"log\"}"));
	ksr_events_emit(
	        ev, "verdict",
	        obj("{\"verdict\":\"app-failed\",\"exit_code\":1,\"outcome\":\"check-failed\","
	            "\"reason\":\"x\",\"line\":14}"));
	return ev;
}

static const cJSON *get(const cJSON *o, const char *path)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", path);
	const cJSON *cur = o;
	for (char *k = strtok(buf, "."); k && cur; k = strtok(NULL, "."))
		cur = cJSON_IsArray(cur) ? cJSON_GetArrayItem(cur, atoi(k))
		                         : cJSON_GetObjectItemCaseSensitive(cur, k);
	return cur;
}

static const char *gs(const cJSON *o, const char *path)
{
	const cJSON *it = get(o, path);
	return cJSON_IsString(it) ? it->valuestring : NULL;
}

static long long gi(const cJSON *o, const char *path)
{
	const cJSON *it = get(o, path);
	return cJSON_IsNumber(it) ? (long long)it->valuedouble : -999;
}

static void check_json(const cJSON *r)
{
	is_int(gi(r, "schema_version"), KSR_REPORT_SCHEMA_VERSION, "schema_version");
	is_str(gs(r, "run_id"), "20260101T000000Z-4242", "run_id");
	is_str(gs(r, "verdict"), "app-failed", "verdict");
	is_int(gi(r, "exit_code"), 1, "exit_code");
	is_str(gs(r, "outcome"), "check-failed", "outcome");
	is_str(gs(r, "reason"), "Line 14: the file was not saved.", "reason");
	is_int(gi(r, "line"), 14, "line");
	is_str(gs(r, "scenario.name"), "mousepad-smoke", "scenario.name");
	is_str(gs(r, "scenario.path"), "/s/mousepad.yaml", "scenario.path");
	is_str(gs(r, "runtime.version"), "0.1.0", "runtime.version");
	is_int(gi(r, "runtime.pid"), 4242, "runtime.pid");
	is_str(gs(r, "timings.started_at"), "2026-01-01T00:00:00.123Z", "started_at");
	is_int(gi(r, "timings.deadline_s"), 600, "deadline_s");
	is_int(gi(r, "timings.stages.app wait"), 250, "timings per stage");
	is_int(cJSON_GetArraySize(get(r, "stages")), 7, "seven stages");
	is_str(gs(r, "stages.0.name"), "boot wait", "stages in order");
	is_str(gs(r, "stages.4.status"), "failed", "stage status");
	is_str(gs(r, "stages.4.reason"), "step 2 failed", "stage reason");
	is_str(gs(r, "stages.6.name"), "report", "the unfinished stage");
	is_str(gs(r, "stages.6.status"), "running", "is running");
	is_int(cJSON_GetArraySize(get(r, "steps")), 2, "two steps");
	is_str(gs(r, "steps.0.rung"), "declared", "step rung");
	is_int(gi(r, "steps.0.pixel.x"), 34, "step pixel");
	is_int(gi(r, "steps.0.window.w"), 800, "step window");
	is_str(gs(r, "steps.0.checks.0.status"), "held", "check status");
	is_str(gs(r, "steps.0.screenshot"), "01-step.png", "step screenshot");
	is_str(gs(r, "steps.1.status"), "failed", "step 2 failed");
	ok(cJSON_IsNull(get(r, "steps.1.pixel")), "no pixel -> null");
	is_int(gi(r, "grounding.0.where.x"), 400, "grounding where");
	is_int(gi(r, "grounding.0.step"), 2, "grounding step");
	is_str(gs(r, "concerns.0.code"), "unexpected-dialog", "concern code");
	is_int(gi(r, "concerns.0.line"), 4, "concern line");
	is_str(gs(r, "failures.0.outcome"), "check-failed", "failures listed");
	is_str(gs(r, "final_checks.0.name"), "process", "final check");
	is_str(gs(r, "launch.command"), "mousepad", "launch");
	is_str(gs(r, "app.window.class"), "Mousepad", "app window");
	ok(cJSON_IsTrue(get(r, "app.launched")), "app launched");
	is_int(gi(r, "model_usage.calls"), 2, "model calls");
	is_int(gi(r, "model_usage.failures"), 1, "model failures");
	is_int(gi(r, "model_usage.total_ms"), 1000, "model time");
	is_str(gs(r, "log_tails.0.path"), "launch.log", "log tail");
	is_int(cJSON_GetArraySize(get(r, "artifacts")), 3, "three artifacts");
	is_str(gs(r, "output_errors.0.what"), "report.md", "output error");
	is_int(cJSON_GetArraySize(get(r, "page_errors")), 1, "one page error");
	is_int(gi(r, "page_errors.0.step"), 1, "in step 1 (the trace's step)");
	is_int(gi(r, "page_errors.0.line"), 12, "at its line");
	is_str(gs(r, "page_errors.0.kind"), "exception", "an uncaught exception");
	is_str(gs(r, "page_errors.0.source"), "http://p/a.js:3", "where the page threw");
}

static char *write_temp(const char *text)
{
	char *path = strdup("/tmp/ksr-test-report-XXXXXX");
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		free(path);
		return NULL;
	}
	close(fd);
	return path;
}

/* 0 when python3-jsonschema accepts the document, else nonzero. */
static int validate(const cJSON *report, bool quiet)
{
	const char *src = getenv("KSR_SOURCE_DIR");
	char schema[1024];
	snprintf(schema, sizeof schema, "%s/docs/report.schema.json", src && *src ? src : ".");
	char *text = cJSON_Print(report);
	char *path = write_temp(text);
	cJSON_free(text);
	if (!path)
		return -1;
	char cmd[2048];
	snprintf(cmd, sizeof cmd,
	         "/usr/bin/python3 -c 'import json, sys, jsonschema\n"
	         "s = json.load(open(sys.argv[1]))\n"
	         "jsonschema.validators.validator_for(s).check_schema(s)\n"
	         "jsonschema.validate(json.load(open(sys.argv[2])), s)' '%s' '%s' 1>&2 %s",
	         schema, path, quiet ? "2>/dev/null" : "");
	int st = system(cmd);
	unlink(path);
	free(path);
	return st == 0 ? 0 : 1;
}

static void check_schema(const cJSON *r)
{
	is_int(validate(r, false), 0, "report.json is valid against docs/report.schema.json");
	cJSON *bad = cJSON_Duplicate(r, 1);
	cJSON_ReplaceItemInObject(bad, "verdict", cJSON_CreateString("fail"));
	ok(validate(bad, true) != 0, "the schema rejects an unknown verdict");
	cJSON_Delete(bad);
	bad = cJSON_Duplicate(r, 1);
	cJSON_AddStringToObject(bad, "extra", "x");
	ok(validate(bad, true) != 0, "the schema rejects an unknown top-level key");
	cJSON_Delete(bad);
	bad = cJSON_Duplicate(r, 1);
	cJSON_DeleteItemFromObject(bad, "outcome");
	ok(validate(bad, true) != 0, "the schema rejects a missing outcome");
	cJSON_Delete(bad);

	cJSON *empty = ksr_report_json(NULL, NULL);
	is_str(gs(empty, "verdict"), "pass", "no events: pass");
	is_int(validate(empty, false), 0, "an empty run's report is valid too");
	cJSON_Delete(empty);
}

static void check_markdown(const cJSON *r)
{
	char *md = ksr_report_markdown(r);
	ok(md != NULL, "markdown rendered");
	if (!md)
		return;
	ok(!strncmp(md, "# app-failed: mousepad-smoke\n\n", 30),
	   "first line is the verdict and the scenario name");
	ok(!strncmp(md + 30, "Line 14: the file was not saved. (scenario line 14)\n", 52),
	   "the reason is the first paragraph, with its line");
	ok(strstr(md, "![First look](00-first-look.png)") != NULL, "screenshot inline");
	ok(strstr(md, "](baseline-candidate.png)") != NULL, "baseline candidate inline");
	ok(strstr(md, "![") && !strstr(md, "](launch.log)\n\n"), "a log is not an image");
	ok(strstr(md, "<script>") == NULL, "no raw HTML from a window title");
	ok(strstr(md, "&lt;script&gt;") != NULL, "escaped as entities");
	ok(strstr(md, "Untitled") && strstr(md, "\\| Untitled"), "pipe escaped");
	ok(strstr(md, "[x](http") == NULL, "no link from a concern message");
	ok(strstr(md, "missing file") != NULL, "newline in a table cell flattened");
	ok(strstr(md, "````text\nstarted\n```\nnot a fence\n````\n") != NULL,
	   "log tail fenced past its backticks");
	ok(strstr(md, "## Concerns") && strstr(md, "## Stages") && strstr(md, "## Steps") &&
	           strstr(md, "## Final checks") && strstr(md, "## Log tails"),
	   "sections present");
	ok(strstr(md, "| 2 | 14 | click\\_grounded | xtest | grounded | failed |") != NULL,
	   "step row");
	ok(strstr(md, "## Page errors") && strstr(md, "| 1 | 12 | exception | Uncaught "
	                                              "&lt;script&gt;x&lt;/script&gt; \\| "
	                                              "\\[y\\](http://e) | http://p/a.js:3 |"),
	   "page error row, its text escaped");
	free(md);
}

/* Hostile text in the places a run copies from windows, pages and models. */
static void check_hostile(void)
{
	cJSON *events =
	        obj("[{\"event\":\"run.start\",\"scenario\":{\"name\":\"# x <img src=y>\"}},"
	            "{\"event\":\"failure\",\"outcome\":\"error-dialog\",\"reason\":"
	            "\"# Heading\\n![img](http://evil/x.png)\"},"
	            "{\"event\":\"artifact\",\"name\":\"http://evil/a.png\",\"kind\":\"diff\"},"
	            "{\"event\":\"log_tail\",\"path\":\"a|b\",\"text\":\"````\\n<b>\"}]");
	cJSON *r = ksr_report_json(events, NULL);
	char *md = ksr_report_markdown(r);
	ok(md != NULL, "hostile report rendered");
	ok(md && strstr(md, "app-failed: # x &lt;img src=y&gt;\n"), "heading escaped");
	ok(md && strstr(md, "\n\n\\# Heading !") == NULL &&
	           strstr(md, "\n\n\\# Heading \\!\\[img\\]"),
	   "reason: no heading, no image");
	ok(md && strstr(md, "](http%3A//evil/a.png)") != NULL, "link target percent-encoded");
	ok(md && strstr(md, "`````text\n````\n<b>\n`````\n") != NULL,
	   "log text kept verbatim inside a longer fence");
	free(md);
	cJSON_Delete(r);
	cJSON_Delete(events);
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static void check_html(const cJSON *r)
{
	char *h = ksr_report_html(r);
	ok(h && !strncmp(h, "<!DOCTYPE html>", 15), "report.html rendered");
	if (!h)
		return;
	ok(strstr(h, "Content-Security-Policy") && strstr(h, "default-src 'none'"),
	   "a CSP that fetches nothing by default");
	is_int((long long)count(h, "<script"), 1, "one script: the page's own");
	ok(strstr(h, "<h1 id=\"verdict\">app-failed: mousepad-smoke</h1>") != NULL,
	   "verdict and name on top");
	ok(strstr(h, "Line 14: the file was not saved. (scenario line 14)") != NULL,
	   "the reason sentence");
	ok(strstr(h, "<details class=\"step s-failed failing\" id=\"step-2\" open>") != NULL,
	   "the failing step is opened and marked");
	is_int((long long)count(h, "details class=\"step"), 2, "a block per step");
	ok(strstr(h, "src=\"00-first-look.png\"") != NULL, "screenshot shown");
	ok(strstr(h, "href=\"report.md\"") != NULL, "links report.md");
	ok(strstr(h, "&lt;script&gt;") && !strstr(h, "<script>alert"), "window title escaped");
	ok(strstr(h, "id=\"timeline\"") && strstr(h, "class=\"seg st-ok\""), "the timeline");
	free(h);
}

/* Hostile text everywhere report.html shows text: nothing but the page's own
 * markup comes out. */
static void check_hostile_html(void)
{
	cJSON *events = obj(
	        "[{\"event\":\"run.start\",\"scenario\":{\"name\":\"<script>alert(1)</script>\"}},"
	        "{\"event\":\"stage.start\",\"t_ms\":1,\"name\":\"x\\\" onmouseover=\\\"a()\"},"
	        "{\"event\":\"step.start\",\"t_ms\":2,\"index\":1,\"line\":3,\"kind\":\"<b>k\"},"
	        "{\"event\":\"step.end\",\"t_ms\":9,\"index\":1,\"line\":3,\"kind\":\"<b>k\","
	        "\"status\":\"failed\",\"reason\":\"<img src=x onerror=alert(2)>\","
	        "\"screenshot\":\"javascript:alert(3)\",\"ready\":{\"note\":\"</dd><script>\"},"
	        "\"output\":\"</pre><script>alert(4)</script>\",\"checks\":[{\"kind\":\"<i>\","
	        "\"status\":\"failed\",\"detail\":\"'><svg onload=alert(5)>\"}]},"
	        "{\"event\":\"judgement\",\"step\":1,\"reason\":\"<iframe src=//evil>\"},"
	        "{\"event\":\"grounding\",\"step\":1,\"asked\":\"<a href=//evil>\"},"
	        "{\"event\":\"page_error\",\"step\":1,\"kind\":\"<em>\",\"text\":\"<script>"
	        "alert(9)\",\"source\":\"<q>\"},"
	        "{\"event\":\"failure\",\"outcome\":\"step-failed\",\"reason\":\"<b>r</b>\"},"
	        "{\"event\":\"accessibility\",\"status\":\"ok\",\"controls\":[{\"role\":"
	        "\"<u>\",\"name\":\"</li><script>alert(6)</script>\",\"states\":[\"<s>\"]}]},"
	        "{\"event\":\"video\",\"name\":\"v.webm\\\" onerror=\\\"alert(7)\",\"frames\":1,"
	        "\"chapters\":[{\"at_ms\":0,\"title\":\"\\\"><script>\",\"step\":1}]},"
	        "{\"event\":\"log_tail\",\"path\":\"<p "
	        "id=evil>\",\"text\":\"</pre><script>alert(8)\"}]");
	cJSON *r = ksr_report_json(events, NULL);
	char *h = ksr_report_html(r);
	ok(h != NULL, "hostile report.html rendered");
	if (h) {
		is_int((long long)count(h, "<script"), 1, "no script but the page's own");
		static const char *const raw[] = {"<b>k",
		                                  "<b>r",
		                                  "<img src=x",
		                                  "<iframe",
		                                  "<a href=//",
		                                  "<svg",
		                                  "<u>",
		                                  "<s>",
		                                  "<i>",
		                                  "<p id",
		                                  "<em>",
		                                  "<q>",
		                                  "\" onmouseover=",
		                                  "\" onerror=",
		                                  "href=\"javascript:",
		                                  "src=\"javascript:"};
		for (size_t i = 0; i < sizeof raw / sizeof *raw; i++)
			ok(strstr(h, raw[i]) == NULL, "no raw %s", raw[i]);
		ok(strstr(h, "&lt;iframe src=//evil&gt;") != NULL, "the model's words, as text");
		ok(strstr(h, "src=\"javascript%3Aalert%283%29\"") != NULL,
		   "a link target is a percent-encoded relative path");
	}
	free(h);
	cJSON_Delete(r);
	cJSON_Delete(events);
}

int main(void)
{
	ksr_events *ev = synthetic_run();
	ksr_decision d = ksr_verdict_from_events(ksr_events_all(ev));
	is_str(ksr_verdict_name(d.verdict), "test-error",
	       "the output_error in the run makes it output-unwritable");
	/* Render the report as the run would have before the output error. */
	cJSON *events = cJSON_Duplicate(ksr_events_all(ev), 1);
	cJSON_DeleteItemFromArray(events, cJSON_GetArraySize(events) - 3);
	d = ksr_verdict_from_events(events);
	cJSON *r = ksr_report_json(ksr_events_all(ev), &d);
	check_json(r);
	check_schema(r);
	check_markdown(r);
	check_hostile();
	check_html(r);
	check_hostile_html();
	cJSON_Delete(r);
	cJSON_Delete(events);
	ksr_events_free(ev);
	return tap_done();
}
