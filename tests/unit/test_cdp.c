/* The CDP client against a real Chromium (headless, a fresh profile, port 0
 * so the port is discovered through DevToolsActivePort): connect, commands,
 * late replies, a reply far larger than the rx buffer, element actions with
 * their actionability reasons, list ids stable across snapshots, and the
 * browser killed in the middle of a command. */
#include "ksr/cdp.h"
#include "ksr/proc.h"
#include "tap.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <poll.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static char profile[] = "/tmp/ksr-test-cdp-XXXXXX";
static pid_t browser;
static pid_t browser_group; /* its process group, for the cleanup */

static const char page_html[] =
        "<input id=name><button id=go onclick=\"document.title='clicked:' + "
        "document.getElementById('name').value\">Go</button>"
        "<button id=hid style='display:none'>Hidden</button>"
        "<button id=off disabled>Off</button>"
        "<a id=lnk href='#x'>A link</a>"
        "<div id=spacer style='height:3000px'></div><button id=far>Far</button>";

static void start_browser(void)
{
	char udd[600];
	snprintf(udd, sizeof udd, "--user-data-dir=%s", profile);
	char *argv[] = {"chromium",
	                "--headless=new",
	                "--remote-debugging-port=0",
	                udd,
	                "--no-first-run",
	                "--no-default-browser-check",
	                "--disable-background-networking",
	                "--disable-component-update",
	                "--disable-sync",
	                "--disable-gpu",
	                "--no-sandbox",
	                "about:blank",
	                NULL};
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", 1, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", 1, 0);
	/* Its own process group: its renderers outlive a SIGKILL of the main
	 * process, and the profile can be removed only once they are gone. */
	posix_spawnattr_t at;
	posix_spawnattr_init(&at);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
	posix_spawnattr_setpgroup(&at, 0);
	if (posix_spawnp(&browser, "chromium", &fa, &at, argv, environ) != 0)
		browser = 0;
	browser_group = browser;
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
}

/* The port through DevToolsActivePort, as the attach stage finds it. */
static int wait_port(void)
{
	char cmd[700];
	snprintf(cmd, sizeof cmd, "--user-data-dir=%s", profile);
	for (int i = 0; i < 300; i++) {
		int port = ksr_cdp_port_of_cmdline(cmd, strlen(cmd));
		if (port)
			return port;
		ksr_sleep_ms(50);
	}
	return 0;
}

static void test_cmdline(void)
{
	const char a[] = "chromium\0--remote-debugging-port=9333\0--user-data-dir=/nonexistent";
	is_int(ksr_cdp_port_of_cmdline(a, sizeof a), 9333, "the port on the command line wins");
	const char b[] = "sh -c chromium --user-data-dir=/nonexistent/x --remote-debugging-port=0";
	is_int(ksr_cdp_port_of_cmdline(b, sizeof b), 0, "port 0 and no DevToolsActivePort: none");
	is_int(ksr_cdp_port_of_cmdline(NULL, 0), 0, "NULL-safe");
}

static void test_no_port(void)
{
	ksr_err err = {0};
	ksr_cdp_status st = KSR_CDP_OK;
	int64_t t0 = ksr_now_ms();
	ksr_cdp *c = ksr_cdp_connect("127.0.0.1", 1, ksr_deadline_in_ms(2000), &st, &err);
	ok(!c && st == KSR_CDP_CLOSED, "nothing on port 1: closed (%s)", ksr_cdp_status_name(st));
	ok(strstr(err.msg, "127.0.0.1:1") != NULL, "the error names the port: %s", err.msg);
	ok(ksr_now_ms() - t0 < 2000, "a refused port does not wait out the deadline");
	ksr_cdp_close(NULL);
}

static ksr_deadline soon(void)
{
	return ksr_deadline_in_ms(10000);
}

static void eval_is(ksr_cdp *c, const char *js, const char *want, const char *what)
{
	ksr_err err = {0};
	bool t;
	cJSON *v = NULL;
	ksr_cdp_status st = ksr_cdp_eval(c, js, soon(), &t, &v, &err);
	const char *s = cJSON_GetStringValue(v);
	ok(st == KSR_CDP_OK && s && !strcmp(s, want), "%s: got %s (%s)", what, s ? s : "null",
	   err.msg);
	cJSON_Delete(v);
}

static void test_protocol(ksr_cdp *c)
{
	ksr_err err = {0};
	bool t = false;
	cJSON *v = NULL;
	ok(ksr_cdp_eval(c, "1+1", soon(), &t, &v, &err) == KSR_CDP_OK && t && cJSON_IsNumber(v) &&
	           v->valueint == 2,
	   "Runtime.evaluate 1+1 = 2");
	cJSON_Delete(v);
	ok(ksr_cdp_eval(c, "0", soon(), &t, NULL, &err) == KSR_CDP_OK && !t, "0 is falsy");
	ok(ksr_cdp_eval(c, "''", soon(), &t, NULL, &err) == KSR_CDP_OK && !t, "'' is falsy");
	ok(ksr_cdp_eval(c, "({})", soon(), &t, NULL, &err) == KSR_CDP_OK && t, "{} is truthy");
	ok(ksr_cdp_eval(c, "null", soon(), &t, NULL, &err) == KSR_CDP_OK && !t, "null is falsy");
	ksr_cdp_status st = ksr_cdp_eval(c, "throw new Error('boom')", soon(), &t, NULL, &err);
	ok(st == KSR_CDP_ERROR && strstr(err.msg, "boom"), "an exception is an error: %s", err.msg);
	/* A late reply is dropped by id: the next command gets its own. */
	st = ksr_cdp_eval(c, "new Promise(r => setTimeout(() => r('late'), 400))",
	                  ksr_deadline_in_ms(100), &t, NULL, &err);
	ok(st == KSR_CDP_TIMEOUT, "a slow command times out at its deadline (%s)",
	   ksr_cdp_status_name(st));
	ksr_sleep_ms(500);
	eval_is(c, "'mine'", "mine", "after a late reply, the next reply is the right one");
	/* 5 MB in one message: reassembled from 64 KiB pieces. */
	v = NULL;
	st = ksr_cdp_eval(c, "'x'.repeat(5000000)", soon(), &t, &v, &err);
	ok(st == KSR_CDP_OK && cJSON_IsString(v) && strlen(v->valuestring) == 5000000,
	   "a 5 MB reply arrives whole");
	cJSON_Delete(v);
	st = ksr_cdp_call(c, "No.such", NULL, soon(), NULL, &err);
	ok(st == KSR_CDP_ERROR && strstr(err.msg, "No.such"), "an error reply: %s", err.msg);
}

static void load_page(ksr_cdp *c)
{
	ksr_err err = {0};
	ksr_cdp_status st = ksr_cdp_navigate(c, "about:blank", soon(), &err);
	ok(st == KSR_CDP_OK, "navigate waits for the load event (%s)", err.msg);
	cJSON *html = cJSON_CreateString(page_html);
	char *s = cJSON_PrintUnformatted(html);
	char *js = ksr_xasprintf("document.body.innerHTML = %s; document.title = 't'; 1", s);
	bool t;
	ok(ksr_cdp_eval(c, js, soon(), &t, NULL, &err) == KSR_CDP_OK, "page content set");
	free(js), free(s);
	cJSON_Delete(html);
}

static void test_actions(ksr_cdp *c)
{
	ksr_err err = {0};
	ksr_cdp_hit hit = {0};
	load_page(c);
	ok(ksr_cdp_fill(c, "#name", "first", soon(), &hit, &err) == KSR_CDP_OK, "fill");
	ok(ksr_cdp_fill(c, "#name", "Ada", soon(), &hit, &err) == KSR_CDP_OK, "fill again");
	eval_is(c, "document.getElementById('name').value", "Ada", "fill replaces the value");
	ok(ksr_cdp_type(c, "#name", "!", soon(), &hit, &err) == KSR_CDP_OK, "type");
	ok(ksr_cdp_click(c, "#go", soon(), &hit, &err) == KSR_CDP_OK, "click (%s)", err.msg);
	ok(hit.has_box && hit.box.w > 0 && hit.x > hit.box.x && hit.x < hit.box.x + hit.box.w,
	   "the click point is inside the box it resolved to");
	eval_is(c, "document.title", "clicked:Ada!", "the click reached the page's handler");
	ok(ksr_cdp_press(c, "ctrl+a BackSpace", soon(), &err) == KSR_CDP_OK, "press chords");
	ok(ksr_cdp_press(c, "hyper+q", soon(), &err) == KSR_CDP_ERROR, "an unknown modifier");

	ksr_cdp_status st = ksr_cdp_click(c, "#hid", ksr_deadline_in_ms(300), &hit, &err);
	ok(st == KSR_CDP_NOT_READY && strstr(err.msg, "not visible"), "hidden: %s", err.msg);
	st = ksr_cdp_click(c, "#off", ksr_deadline_in_ms(300), &hit, &err);
	ok(st == KSR_CDP_NOT_READY && strstr(err.msg, "disabled"), "disabled: %s", err.msg);
	st = ksr_cdp_click(c, "#nothing", ksr_deadline_in_ms(300), &hit, &err);
	ok(st == KSR_CDP_NOT_READY && strstr(err.msg, "matches no element"), "absent: %s", err.msg);
	st = ksr_cdp_click(c, "#far", soon(), &hit, &err);
	ok(st == KSR_CDP_OK && hit.y > 0 && hit.y < 2000, "scrolled into view before the click");
	ok(ksr_cdp_wait_for(c, "#hid", "hidden", soon(), &hit, &err) == KSR_CDP_OK, "hidden");
	ok(ksr_cdp_wait_for(c, "#gone", "detached", soon(), &hit, &err) == KSR_CDP_OK, "detached");
	st = ksr_cdp_wait_for(c, "#hid", "visible", ksr_deadline_in_ms(200), &hit, &err);
	ok(st == KSR_CDP_NOT_READY && strstr(err.msg, "hidden"), "wait reason: %s", err.msg);

	bool t;
	ksr_cdp_eval(c,
	             "const o = document.createElement('div'); o.id = 'overlay'; o.style = "
	             "'position:fixed;inset:0;z-index:9'; document.body.append(o); 1",
	             soon(), &t, NULL, &err);
	st = ksr_cdp_click(c, "#go", ksr_deadline_in_ms(300), &hit, &err);
	ok(st == KSR_CDP_NOT_READY && strstr(err.msg, "<div id=\"overlay\">"),
	   "the interceptor is named: %s", err.msg);
}

/* A click right after a navigation's load (as the CDP bench does): the
 * renderer can drop input that comes before the page's first frame; the
 * click is sent again while the page saw no mouseup. Every one of 10 must be
 * counted by the page, once. */
static void test_click_after_navigation(ksr_cdp *c)
{
	int counted = 0, resent = 0;
	for (int i = 0; i < 10; i++) {
		ksr_err err = {0};
		ksr_cdp_hit hit = {0};
		char url[256];
		snprintf(url, sizeof url,
		         "data:text/html,<title>n%d</title><button id=b onclick=\"this.dataset.n = "
		         "%%2B(this.dataset.n || 0) %%2B 1\">Count</button>",
		         i);
		if (ksr_cdp_navigate(c, url, soon(), &err) != KSR_CDP_OK ||
		    ksr_cdp_click(c, "#b", soon(), &hit, &err) != KSR_CDP_OK) {
			ok(false, "navigate + click %d: %s", i, err.msg);
			continue;
		}
		bool t;
		cJSON *v = NULL;
		ksr_cdp_eval(c, "document.getElementById('b').dataset.n", soon(), &t, &v, &err);
		counted += cJSON_GetStringValue(v) && !strcmp(cJSON_GetStringValue(v), "1");
		resent += hit.attempts > 1;
		cJSON_Delete(v);
	}
	ok(counted == 10,
	   "10 clicks right after a navigation, each counted once (%d of 10; %d sent again)",
	   counted, resent);
}

static bool find_name(const ksr_cdp_element_list *l, const char *name, char *id, size_t len)
{
	for (size_t i = 0; i < l->len; i++)
		if (!strcmp(l->items[i].name, name)) {
			snprintf(id, len, "%s", l->items[i].id);
			return true;
		}
	return false;
}

static void test_list(ksr_cdp *c)
{
	ksr_err err = {0};
	ksr_cdp_element_list a = {0}, b = {0};
	char id1[32] = "", id2[32] = "";
	load_page(c);
	ok(ksr_cdp_list_interactive(c, soon(), &a, &err) == KSR_CDP_OK, "list (%s)", err.msg);
	bool t;
	ksr_cdp_eval(c, "document.body.prepend(document.createElement('button')); 1", soon(), &t,
	             NULL, &err);
	ok(ksr_cdp_list_interactive(c, soon(), &b, &err) == KSR_CDP_OK, "list again");
	ok(find_name(&a, "Go", id1, sizeof id1) && find_name(&b, "Go", id2, sizeof id2),
	   "the Go button is listed");
	is_str(id2, id1, "its id is the same in both snapshots");
	ok(b.len == a.len + 1, "the new button is listed too (%zu -> %zu)", a.len, b.len);
	ok(!find_name(&a, "Hidden", id2, sizeof id2), "a hidden button is not listed");
	ksr_cdp_hit hit = {0};
	ok(ksr_cdp_fill(c, "#name", "by-id", soon(), &hit, &err) == KSR_CDP_OK, "fill");
	ok(ksr_cdp_click(c, id1, soon(), &hit, &err) == KSR_CDP_OK, "click by id (%s)", err.msg);
	eval_is(c, "document.title", "clicked:by-id", "an id is acted on like a selector");
	ksr_cdp_eval(c, "document.getElementById('go').remove(); 1", soon(), &t, NULL, &err);
	ksr_cdp_status st = ksr_cdp_click(c, id1, ksr_deadline_in_ms(300), &hit, &err);
	ok(st == KSR_CDP_NOT_READY && strstr(err.msg, "no longer"), "a removed node: %s", err.msg);
	ksr_cdp_element_list_clear(&a);
	ksr_cdp_element_list_clear(&b);
}

static void *cancel_later(void *arg)
{
	(void)arg;
	ksr_sleep_ms(300);
	ksr_cancel_request();
	return NULL;
}

/* A cancel wakes a pending command at once (the cancel pipe is in lws's poll
 * set), and once reset the connection serves again. */
static void test_cancelled(ksr_cdp *c)
{
	ksr_err err = {0};
	bool t;
	pthread_t th;
	if (pthread_create(&th, NULL, cancel_later, NULL) != 0) {
		ok(false, "a thread to cancel from");
		return;
	}
	int64_t t0 = ksr_now_ms();
	ksr_cdp_status st =
	        ksr_cdp_eval(c, "new Promise(() => {})", ksr_deadline_in_ms(20000), &t, NULL, &err);
	int64_t ms = ksr_now_ms() - t0;
	pthread_join(th, NULL);
	ok(st == KSR_CDP_CANCELLED, "cancelled mid-command (%s: %s)", ksr_cdp_status_name(st),
	   err.msg);
	ok(ms < 5000, "the cancel ended the wait at once (%lld ms)", (long long)ms);
	ksr_cancel_reset();
	err = (ksr_err){0};
	ok(ksr_cdp_eval(c, "1", soon(), &t, NULL, &err) == KSR_CDP_OK && t,
	   "after a reset the connection serves again (%s)", err.msg);
	int64_t t1 = ksr_now_ms();
	st = ksr_cdp_idle(c, ksr_deadline_in_ms(200), &err);
	ms = ksr_now_ms() - t1;
	ok(st == KSR_CDP_OK && ms >= 190 && ms < 5000,
	   "an idle wait ends at its deadline (%lld ms)", (long long)ms);
}

/* A listening socket on loopback (port in *port), for the page to call. */
static int marker_socket(int *port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof a;
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 4) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

/* The browser is killed once the command is known to be in flight: the
 * evaluated expression first calls the marker socket (a page-side marker),
 * and the child kills the browser when that call arrives, not after a delay. */
static void test_killed(ksr_cdp *c)
{
	ksr_err err = {0};
	bool t;
	int port = 0, lfd = marker_socket(&port);
	ok(lfd >= 0, "a marker socket for the page to call");
	pid_t child = fork();
	if (child == 0) {
		struct pollfd p = {.fd = lfd, .events = POLLIN};
		int got = poll(&p, 1, 20000) == 1 ? accept(lfd, NULL, NULL) : -1;
		kill(browser, SIGKILL);
		_exit(got >= 0 ? 0 : 1);
	}
	close(lfd);
	char js[200];
	snprintf(js, sizeof js,
	         "fetch('http://127.0.0.1:%d/in-flight').catch(() => {}), new Promise(() => {})",
	         port);
	int64_t t0 = ksr_now_ms();
	ksr_cdp_status st = ksr_cdp_eval(c, js, ksr_deadline_in_ms(20000), &t, NULL, &err);
	ok(st == KSR_CDP_CLOSED, "browser killed mid-command: closed (%s: %s)",
	   ksr_cdp_status_name(st), err.msg);
	ok(ksr_now_ms() - t0 < 20000, "the command did not wait out its deadline");
	st = ksr_cdp_eval(c, "1", soon(), &t, NULL, &err);
	ok(st == KSR_CDP_CLOSED, "later commands fail at once");
	int status = 0;
	waitpid(child, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "killed once the page was running the command (its call reached the marker)");
	waitpid(browser, NULL, 0);
	browser = 0;
}

int main(void)
{
	ksr_cancel_install();
	test_cmdline();
	test_no_port();
	if (!mkdtemp(profile))
		return 1;
	start_browser();
	ok(browser > 0, "chromium started");
	int port = wait_port();
	ok(port > 0, "DevToolsActivePort gives the port (%d)", port);
	ksr_err err = {0};
	ksr_cdp_status st;
	ksr_cdp *c = port ? ksr_cdp_connect("127.0.0.1", port, soon(), &st, &err) : NULL;
	ok(c != NULL, "connected and attached (%s)", err.msg);
	if (c) {
		test_protocol(c);
		test_actions(c);
		test_click_after_navigation(c);
		test_list(c);
		test_cancelled(c);
		test_killed(c);
	}
	ksr_cdp_close(c);
	if (browser > 0) {
		kill(browser, SIGKILL);
		waitpid(browser, NULL, 0);
	}
	if (browser_group > 0)
		ksr_proc_stop_group(browser_group, 2000); /* the renderers too, bounded */
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf %s", profile);
	if (system(cmd) != 0)
		ok(false, "profile removed");
	return tap_done();
}
