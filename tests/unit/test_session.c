/* The embedded session against a real Xvfb and openbox: it starts, exports
 * DISPLAY, a client connects and sees the WM; stop leaves no process behind. */
#include "ksr/session.h"
#include "ksr/x11.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"

static void test_parse_size(void)
{
	int w = 0, h = 0;
	ok(ksr_session_parse_size("1280x720", &w, &h) == 0 && w == 1280 && h == 720, "1280x720");
	ok(ksr_session_parse_size("1920X1080", &w, &h) == 0 && w == 1920, "upper-case X");
	ok(ksr_session_parse_size("1280", &w, &h) < 0, "no height rejected");
	ok(ksr_session_parse_size("x720", &w, &h) < 0, "no width rejected");
	ok(ksr_session_parse_size("0x720", &w, &h) < 0, "zero rejected");
	ok(ksr_session_parse_size("-5x720", &w, &h) < 0, "negative rejected");
	ok(ksr_session_parse_size("1280x720junk", &w, &h) < 0, "trailing junk rejected");
	ok(ksr_session_parse_size("1280x-720", &w, &h) < 0, "negative height rejected");
	ok(ksr_session_parse_size(NULL, &w, &h) < 0, "NULL rejected");
}

static void test_start_stop(void)
{
	const char *before = getenv("DISPLAY");
	char *saved = before ? strdup(before) : NULL;
	ksr_session_opts opts = {.width = 1024, .height = 768};
	ksr_session *s = NULL;
	ksr_err err = {0};
	int64_t t0 = ksr_now_ms();
	int rc = ksr_session_start(&opts, ksr_deadline_in_ms(30000), &s, &err);
	ok(rc == 0, "session started in %lld ms: %s", (long long)(ksr_now_ms() - t0), err.msg);
	if (rc != 0)
		return;
	const char *disp = ksr_session_display(s);
	ok(disp && disp[0] == ':', "display %s", disp);
	is_str(getenv("DISPLAY"), disp, "DISPLAY exported");
	const char *rt = getenv("XDG_RUNTIME_DIR");
	struct stat st;
	ok(rt && stat(rt, &st) == 0 && (st.st_mode & 0777) == 0700, "XDG_RUNTIME_DIR mode 700");
	ok(getenv("XDG_CONFIG_HOME") && strstr(getenv("XDG_CONFIG_HOME"), "ksr-session-"),
	   "private XDG_CONFIG_HOME");
	char *dir = strdup(getenv("XDG_CONFIG_HOME"));

	ksr_x11 *x = NULL;
	ok(ksr_x11_open_wait(NULL, ksr_deadline_in_ms(5000), &x, &err) == KSR_WAIT_READY,
	   "client connects through $DISPLAY: %s", err.msg);
	int w = 0, h = 0;
	ksr_x11_screen_size(x, &w, &h);
	ok(w == 1024 && h == 768, "screen %dx%d", w, h);
	ok(ksr_x11_wait_wm(x, ksr_deadline_in_ms(1000)) == KSR_WAIT_READY,
	   "_NET_SUPPORTING_WM_CHECK present");
	ksr_x11_close(x);

	int pid = ksr_session_xvfb_pid(s);
	int wm = ksr_session_wm_pid(s);
	ok(pid > 0 && kill(pid, 0) == 0, "Xvfb runs as PID %d", pid);
	ksr_session_stop(s);
	ok(pid > 0 && kill(pid, 0) < 0 && errno == ESRCH, "Xvfb PID %d gone after stop", pid);
	ok(wm > 0 && kill(wm, 0) < 0 && errno == ESRCH, "openbox PID %d gone after stop", wm);
	ok(stat(dir, &st) < 0, "session folder removed");
	is_str(getenv("DISPLAY"), saved, "DISPLAY restored");
	free(dir);
	free(saved);
}

/* --private-home: HOME is the session's own (there, 0700) and comes back at stop. */
static void test_private_home(void)
{
	const char *before = getenv("HOME");
	char *saved = before ? strdup(before) : NULL;
	ksr_session_opts opts = {.private_home = true};
	ksr_session *s = NULL;
	ksr_err err = {0};
	if (ksr_session_start(&opts, ksr_deadline_in_ms(30000), &s, &err) < 0) {
		ok(false, "session started: %s", err.msg);
		free(saved);
		return;
	}
	const char *home = getenv("HOME");
	struct stat st;
	ok(home && strstr(home, "ksr-session-") && stat(home, &st) == 0 &&
	           (st.st_mode & 0777) == 0700,
	   "private HOME %s", home ? home : "(unset)");
	is_str(ksr_session_folders_name(s), "a private HOME and XDG folders", "named so");
	ksr_session_stop(s);
	is_str(getenv("HOME"), saved, "HOME restored");
	free(saved);
}

static void test_deadline(void)
{
	ksr_session *s = NULL;
	ksr_err err = {0};
	ok(ksr_session_start(NULL, ksr_deadline_in_ms(0), &s, &err) < 0 && !s,
	   "passed deadline fails cleanly: %s", err.msg);
	ksr_session_stop(NULL);
}

int main(void)
{
	test_parse_size();
	test_start_stop();
	test_private_home();
	test_deadline();
	return tap_done();
}
