/* The WebDriver BiDi client against a real Firefox ESR (headless, a fresh
 * profile, port 0 so the port is read from WebDriverBiDiServer.json):
 * remote values into JSON, connect, evaluation and exceptions, locateNodes,
 * element actions with the shared actionability reasons, keys, the
 * interactive list with stable ids, console errors from log.entryAdded, and
 * the browser killed in the middle of a command. */
#include "ksr/bidi.h"
#include "ksr/proc.h"
#include "tap.h"

#include <cjson/cJSON.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static char profile[] = "/tmp/ksr-test-bidi-XXXXXX";
static pid_t browser;

static const char page_url[] =
        "data:text/html,<title>T</title><input id=name><button id=go "
        "onclick=\"document.title='clicked:' %2B document.getElementById('name').value\">Go"
        "</button><button id=hid style='display:none'>Hidden</button>"
        "<button id=off disabled>Off</button><a id=lnk href='%23x'>A link</a>"
        "<script>console.error('boom ' %2B 42)</script>";

static void start_browser(void)
{
	char prefs[700];
	snprintf(prefs, sizeof prefs, "%s/user.js", profile);
	FILE *f = fopen(prefs, "we");
	if (f) {
		fputs("user_pref(\"browser.aboutwelcome.enabled\", false);\n"
		      "user_pref(\"datareporting.policy.dataSubmissionEnabled\", false);\n"
		      "user_pref(\"browser.shell.checkDefaultBrowser\", false);\n",
		      f);
		fclose(f);
	}
	char *argv[] = {"firefox-esr", "--headless",  "--profile",
	                profile,       "--no-remote", "--remote-debugging-port",
	                "0",           "about:blank", NULL};
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", 1, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", 1, 0);
	posix_spawnattr_t at;
	posix_spawnattr_init(&at);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
	posix_spawnattr_setpgroup(&at, 0);
	if (posix_spawnp(&browser, "firefox-esr", &fa, &at, argv, environ) != 0)
		browser = 0;
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
}

static ksr_deadline soon(void)
{
	return ksr_deadline_in_ms(15000);
}

static void test_cmdline(void)
{
	const char a[] = "firefox-esr\0--remote-debugging-port\0009333\0--profile\0/nonexistent";
	is_int(ksr_bidi_port_of_cmdline(a, sizeof a), 9333, "the port on the command line wins");
	const char b[] = "firefox --remote-debugging-port=9444";
	is_int(ksr_bidi_port_of_cmdline(b, sizeof b), 9444, "--remote-debugging-port=N too");
	const char c[] = "firefox\0--remote-debugging-port\0000\0--profile\0/nonexistent";
	is_int(ksr_bidi_port_of_cmdline(c, sizeof c), 0, "port 0 and no profile file: none");
	is_int(ksr_bidi_port_of_cmdline(NULL, 0), 0, "NULL-safe");
	ok(ksr_bidi_is_firefox_cmdline("/usr/lib/firefox-esr/firefox-esr", 33), "firefox-esr");
	ok(!ksr_bidi_is_firefox_cmdline("/usr/bin/chromium", 18), "chromium is not");
}

static void remote_is(const char *remote, const char *want, bool truthy, const char *what)
{
	cJSON *r = cJSON_Parse(remote);
	bool t = !truthy;
	cJSON *v = ksr_bidi_remote_to_json(r, &t);
	char *got = cJSON_PrintUnformatted(v);
	ok(!strcmp(got, want) && t == truthy, "%s: %s (%s)", what, got, t ? "truthy" : "falsy");
	free(got);
	cJSON_Delete(v);
	cJSON_Delete(r);
}

static void test_remote_values(void)
{
	remote_is("{\"type\":\"undefined\"}", "null", false, "undefined");
	remote_is("{\"type\":\"number\",\"value\":\"NaN\"}", "\"NaN\"", false, "NaN");
	remote_is("{\"type\":\"number\",\"value\":0}", "0", false, "0");
	remote_is("{\"type\":\"string\",\"value\":\"\"}", "\"\"", false, "''");
	remote_is("{\"type\":\"bigint\",\"value\":\"12\"}", "\"12\"", true, "12n");
	remote_is("{\"type\":\"object\",\"value\":[[\"a\",{\"type\":\"array\",\"value\":[{"
	          "\"type\":\"boolean\",\"value\":true}]}]]}",
	          "{\"a\":[true]}", true, "an object of an array");
	remote_is("{\"type\":\"node\",\"sharedId\":\"x\"}", "{}", true, "a node");
}

static void eval_is(ksr_bidi *b, const char *js, const char *want, const char *what)
{
	ksr_err err = {0};
	bool t;
	cJSON *v = NULL;
	ksr_page_status st = ksr_bidi_eval(b, js, soon(), &t, &v, &err);
	const char *s = cJSON_GetStringValue(v);
	ok(st == KSR_PAGE_OK && s && !strcmp(s, want), "%s: got %s (%s)", what, s ? s : "null",
	   err.msg);
	cJSON_Delete(v);
}

static void test_protocol(ksr_bidi *b)
{
	ksr_err err = {0};
	ksr_page_status st;
	bool t = false;
	cJSON *v = NULL;
	ok(ksr_bidi_eval(b, "1+1", soon(), &t, &v, &err) == KSR_PAGE_OK && t && cJSON_IsNumber(v) &&
	           v->valueint == 2,
	   "script.evaluate 1+1 = 2 (%s)", err.msg);
	cJSON_Delete(v);
	ok(ksr_bidi_eval(b, "Promise.resolve('later')", soon(), &t, &v, &err) == KSR_PAGE_OK &&
	           cJSON_GetStringValue(v) && !strcmp(v->valuestring, "later"),
	   "a promise is awaited");
	cJSON_Delete(v);
	ksr_err_clear(&err);
	ok(ksr_bidi_eval(b, "throw new Error('nope')", soon(), &t, NULL, &err) == KSR_PAGE_ERROR &&
	           strstr(err.msg, "nope"),
	   "an exception is an error naming it: %s", err.msg);
	ksr_err_clear(&err);
	ok(ksr_bidi_navigate(b, page_url, soon(), &err) == KSR_PAGE_OK, "navigate (%s)", err.msg);
	eval_is(b, "document.title", "T", "the page loaded before navigate returned");
	int n = 0;
	st = ksr_bidi_locate(b, "button", 0, soon(), &n, &err);
	ok(st == KSR_PAGE_OK && n == 3, "locateNodes finds the 3 buttons (%d)", n);
	cJSON *errs = ksr_bidi_take_page_errors(b, NULL);
	cJSON *first = cJSON_GetArrayItem(errs, 0);
	const char *text = cJSON_GetStringValue(cJSON_GetObjectItem(first, "text"));
	const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(first, "kind"));
	ok(text && strstr(text, "boom 42") && kind && !strcmp(kind, "console"),
	   "console.error came as log.entryAdded (%d)", cJSON_GetArraySize(errs));
	cJSON_Delete(errs);
}

static void test_actions(ksr_bidi *b)
{
	ksr_err err = {0};
	ksr_page_hit hit = {0};
	ok(ksr_bidi_fill(b, "#name", "Ada", soon(), &hit, &err) == KSR_PAGE_OK && hit.has_box,
	   "fill (%s)", err.msg);
	ok(ksr_bidi_click(b, "#go", soon(), &hit, &err) == KSR_PAGE_OK, "click (%s)", err.msg);
	eval_is(b, "document.title", "clicked:Ada", "the click reached the page");
	ok(ksr_bidi_type(b, "#name", "!x", soon(), &hit, &err) == KSR_PAGE_OK, "type (%s)",
	   err.msg);
	ok(ksr_bidi_press(b, "BackSpace", soon(), &err) == KSR_PAGE_OK, "press (%s)", err.msg);
	eval_is(b, "document.getElementById('name').value", "Ada!", "typed, then one BackSpace");
	ksr_err_clear(&err);
	ok(ksr_bidi_click(b, "#hid", ksr_deadline_in_ms(500), &hit, &err) == KSR_PAGE_NOT_READY &&
	           strstr(err.msg, "is not visible"),
	   "hidden: %s", err.msg);
	ksr_err_clear(&err);
	ok(ksr_bidi_click(b, "#off", ksr_deadline_in_ms(500), &hit, &err) == KSR_PAGE_NOT_READY &&
	           strstr(err.msg, "is disabled"),
	   "disabled: %s", err.msg);
	ksr_err_clear(&err);
	ok(ksr_bidi_press(b, "ctrl+Bogus", soon(), &err) == KSR_PAGE_ERROR &&
	           strstr(err.msg, "Bogus"),
	   "a bad chord names its key: %s", err.msg);
}

static void test_list(ksr_bidi *b)
{
	ksr_err err = {0};
	ksr_page_element_list a = {0}, c = {0};
	ksr_page_status st = ksr_bidi_list_interactive(b, soon(), &a, &err);
	ok(st == KSR_PAGE_OK && a.len == 4, "textbox, two buttons and a link (%zu; %s)", a.len,
	   err.msg);
	ksr_bidi_list_interactive(b, soon(), &c, &err);
	ok(a.len == c.len && a.len && !strcmp(a.items[0].id, c.items[0].id),
	   "ids stay the same across snapshots");
	const char *go = NULL;
	for (size_t i = 0; i < a.len; i++)
		if (!strcmp(a.items[i].name, "Go"))
			go = a.items[i].id;
	ok(go && ksr_bidi_click(b, go, soon(), NULL, &err) == KSR_PAGE_OK,
	   "a list id is clicked (%s)", err.msg);
	ksr_bidi_eval(b, "document.getElementById('go').remove()", soon(), &(bool){0}, NULL, &err);
	ksr_err_clear(&err);
	ok(go && ksr_bidi_click(b, go, ksr_deadline_in_ms(300), NULL, &err) == KSR_PAGE_NOT_READY &&
	           strstr(err.msg, "no longer in the page"),
	   "a removed element's id is detached: %s", err.msg);
	ksr_page_element_list_clear(&a);
	ksr_page_element_list_clear(&c);
}

static void test_killed(ksr_bidi *b)
{
	ksr_err err = {0};
	bool t;
	/* A command in flight when the browser dies: closed at once, not the deadline. */
	ksr_bidi_eval(b, "setTimeout(() => {}, 0), 1", soon(), &t, NULL, &err);
	kill(-browser, SIGKILL);
	int64_t t0 = ksr_now_ms();
	ksr_page_status st = ksr_bidi_eval(b, "new Promise(() => {})", ksr_deadline_in_ms(20000),
	                                   &t, NULL, &err);
	ok(st == KSR_PAGE_CLOSED, "killed mid-command: closed (%s: %s)", ksr_page_status_name(st),
	   err.msg);
	ok(ksr_now_ms() - t0 < 20000, "before the deadline");
}

int main(void)
{
	ksr_cancel_install();
	test_cmdline();
	test_remote_values();
	ksr_err err = {0};
	ksr_page_status st = KSR_PAGE_OK;
	ok(!ksr_bidi_connect("127.0.0.1", 1, ksr_deadline_in_ms(2000), &st, &err) &&
	           st == KSR_PAGE_CLOSED,
	   "nothing on port 1: closed (%s)", err.msg);
	ksr_err_clear(&err);
	if (access("/usr/bin/firefox-esr", X_OK) != 0) {
		skip_unless_installable("firefox-esr is not installed");
		return tap_done();
	}
	if (!mkdtemp(profile))
		return 1;
	start_browser();
	ok(browser > 0, "firefox started");
	char cmd[700];
	int n = snprintf(cmd, sizeof cmd, "firefox-esr --profile %s", profile), port = 0;
	for (int i = 0; i < 600 && !port; i++) { /* the file appears once the port is open */
		port = ksr_bidi_port_of_cmdline(cmd, (size_t)n);
		if (!port)
			ksr_sleep_ms(50);
	}
	ok(port > 0, "WebDriverBiDiServer.json gives the port (%d)", port);
	ksr_bidi *b = port ? ksr_bidi_connect("127.0.0.1", port, soon(), &st, &err) : NULL;
	ok(b != NULL && ksr_bidi_context(b), "session and a browsing context (%s)", err.msg);
	if (b) {
		test_protocol(b);
		test_actions(b);
		test_list(b);
		test_killed(b);
	}
	ksr_bidi_close(b);
	if (browser > 0) {
		kill(-browser, SIGKILL);
		waitpid(browser, NULL, 0);
		ksr_proc_stop_group(browser, 2000);
	}
	snprintf(cmd, sizeof cmd, "rm -rf %s", profile);
	if (system(cmd) != 0)
		ok(false, "profile removed");
	return tap_done();
}
