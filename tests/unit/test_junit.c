/* JUnit rendering: verdicts mapped to failure/error, steps as testcases,
 * counts that add up, XML escaping of reasons, a run without a report, and
 * the atomic write. (tests/integration/test_watch.py validates real files
 * against tests/data/junit/junit-10.xsd.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ksr/junit.h"
#include "tap.h"

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static cJSON *report(const char *verdict, const char *outcome, const char *reason)
{
	char text[2048];
	snprintf(text, sizeof text,
	         "{\"run_id\":\"r-1\",\"verdict\":\"%s\",\"outcome\":\"%s\",\"reason\":\"%s\","
	         "\"scenario\":{\"name\":\"calc <smoke>\"},"
	         "\"timings\":{\"started_at\":\"2026-01-02T03:04:05Z\",\"duration_ms\":1500},"
	         "\"steps\":[{\"index\":1,\"line\":7,\"kind\":\"key\",\"status\":\"ok\","
	         "\"duration_ms\":20},{\"index\":2,\"line\":9,\"kind\":\"click\","
	         "\"status\":\"failed\",\"reason\":\"check window (line 10) & more\","
	         "\"duration_ms\":30}]}",
	         verdict, outcome, reason);
	return cJSON_Parse(text);
}

static void test_app_failed(void)
{
	cJSON *rep = report("app-failed", "check-failed", "line 10: \\\"OK\\\" < never");
	ksr_junit_run r = {.report = rep, .out_dir = "/tmp/out a"};
	char *x = ksr_junit_render(&r, 1);
	ok(strncmp(x, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites ", 51) == 0,
	   "XML declaration and <testsuites> root");
	ok(strstr(x, "<testsuites name=\"kasm-session-runtime\" tests=\"3\" failures=\"2\" "
	             "errors=\"0\" skipped=\"0\" time=\"1.500\">") != NULL,
	   "totals: run + 2 steps, the run and step 2 failed:\n%s", x);
	ok(strstr(x, "<testsuite name=\"calc &lt;smoke&gt;\" tests=\"3\" failures=\"2\"") != NULL,
	   "suite named after the scenario, escaped");
	ok(strstr(x, "timestamp=\"2026-01-02T03:04:05\"") != NULL, "timestamp without zone");
	ok(strstr(x, "<failure message=\"line 10: &quot;OK&quot; &lt; never\" "
	             "type=\"check-failed\">") != NULL,
	   "the run's failure: reason as message, outcome as type");
	ok(strstr(x, "name=\"step 02: click (line 9)\"") != NULL, "a testcase per step");
	ok(strstr(x, "message=\"check window (line 10) &amp; more\" type=\"failed\"") != NULL,
	   "the failed step's reason");
	is_int((long long)count(x, "<error"), 0, "no error for app-failed");
	is_int((long long)count(x, "<system-out>"), 3, "evidence on every testcase");
	ok(strstr(x, "report: /tmp/out a/report.md") != NULL, "link to report.md");
	ok(strstr(x, "in a browser: /tmp/out a/report.html") != NULL, "link to report.html");
	free(x);
	cJSON_Delete(rep);
}

static void test_errors_and_pass(void)
{
	cJSON *a = report("test-error", "blocked", "blocked by window");
	cJSON *b = report("pass-with-concerns", "completed", "It worked");
	cJSON *died =
	        cJSON_Parse("{\"run\":\"r-9\",\"verdict\":\"test-error\",\"outcome\":\"died\","
	                    "\"reason\":\"the runtime exited without writing DONE\"}");
	ksr_junit_run runs[] = {{.report = a, .out_dir = "/a"},
	                        {.report = b, .out_dir = "/b"},
	                        {.report = NULL, .out_dir = "/c", .terminal = died}};
	char *x = ksr_junit_render(runs, 3);
	is_int((long long)count(x, "<testsuite "), 3, "one testsuite per run");
	ok(strstr(x, "<error message=\"blocked by window\" type=\"blocked\">") != NULL,
	   "test-error is an <error>");
	ok(strstr(x, "<error message=\"the runtime exited without writing DONE\" type=\"died\">") !=
	           NULL,
	   "a died run without a report is an <error> with the watcher's reason");
	ok(strstr(x, "<testsuite name=\"r-9\" tests=\"1\" failures=\"0\" errors=\"1\"") != NULL,
	   "named by its run id:\n%s", x);
	ok(strstr(x, "tests=\"7\" failures=\"2\" errors=\"2\"") != NULL,
	   "totals: pass-with-concerns is a pass");
	free(x);
	char dir[] = "/tmp/ksr-test-junit-XXXXXX";
	ok(mkdtemp(dir) != NULL, "temp dir");
	char path[128];
	snprintf(path, sizeof path, "%s/junit.xml", dir);
	ksr_err err = {0};
	is_int(ksr_junit_write(path, runs, 3, &err), 0, "written");
	struct stat st;
	ok(stat(path, &st) == 0 && st.st_size > 100, "the file is there");
	char tmp[160];
	snprintf(tmp, sizeof tmp, "%s/.junit.xml.tmp", dir);
	ok(stat(tmp, &st) != 0, "no temporary file left");
	is_int(ksr_junit_write("/nonexistent-dir/x.xml", runs, 1, &err), -1, "unwritable: -1");
	ok(strstr(err.msg, "nonexistent-dir") != NULL, "error names the path: %s", err.msg);
	unlink(path);
	rmdir(dir);
	cJSON_Delete(a);
	cJSON_Delete(b);
	cJSON_Delete(died);
}

/* Both kinds of blocker are marked as such and are never a pass, even where
 * the verdict word is wrong or missing. */
static void test_blockers(void)
{
	cJSON *a = report("app-failed", "blocked-by-prompt", "qbittorrent shows only its dialog");
	cJSON *b = report("test-error", "blocked", "blocked by window ^Sign in$");
	cJSON *c = report("pass", "blocked-by-prompt", "a wrong verdict word");
	ksr_junit_run runs[] = {{.report = a, .out_dir = "/a"},
	                        {.report = b, .out_dir = "/b"},
	                        {.report = c, .out_dir = "/c"}};
	char *x = ksr_junit_render(runs, 3);
	ok(strstr(x, "<failure message=\"qbittorrent shows only its dialog\" "
	             "type=\"blocked-by-prompt\">") != NULL,
	   "blocked-by-prompt is a <failure>:\n%s", x);
	ok(strstr(x, "<error message=\"blocked by window ^Sign in$\" type=\"blocked\">") != NULL,
	   "blocked is an <error>");
	is_int((long long)count(x, "<property name=\"blocker\" value=\"blocked-by-prompt\"/>"), 2,
	       "a blocker property on each blocked-by-prompt suite");
	is_int((long long)count(x, "<property name=\"blocker\" value=\"blocked\"/>"), 1,
	       "and on the blocked one");
	ok(strstr(x, "<failure message=\"a wrong verdict word\"") != NULL,
	   "a blocker is never a pass, whatever the verdict says");
	free(x);
	cJSON_Delete(a);
	cJSON_Delete(b);
	cJSON_Delete(c);
}

/* Text from outside (a title, a shell's output) with bytes that are not UTF-8,
 * C0 controls and U+FFFE: none reaches the XML raw (XML 1.0 cannot carry
 * them), each is said as text, and what XML can carry stays. */
static void test_outside_text(void)
{
	cJSON *rep = report("app-failed", "check-failed", "x");
	cJSON_ReplaceItemInObject(rep, "reason",
	                          cJSON_CreateString("bad \xff\xfe ctl \x01\x1b nc \xef\xbf\xbe "
	                                             "cut \xc3 ok \xc3\xa9\t\xe2\x82\xac"));
	ksr_junit_run r = {.report = rep, .out_dir = "/tmp/out"};
	char *x = ksr_junit_render(&r, 1);
	ok(strstr(x,
	          "bad \\xff\\xfe ctl \\x01\\x1b nc \\uFFFE cut \\xc3 ok \xc3\xa9\t\xe2\x82\xac") !=
	           NULL,
	   "bad bytes, controls and U+FFFE written out, the rest kept:\n%s", x);
	ok(!strchr(x, '\x01') && !strchr(x, '\x1b') && !strchr(x, '\xff') &&
	           !strstr(x, "\xef\xbf\xbe"),
	   "nothing XML 1.0 cannot carry");
	free(x);
	cJSON_Delete(rep);
}

int main(void)
{
	test_app_failed();
	test_outside_text();
	test_errors_and_pass();
	test_blockers();
	return tap_done();
}
