/* The XTest input backend against a real Xvfb + openbox session and real apps:
 * typing into `zenity --entry` (its stdout proves what arrived), key chords,
 * a click on the GTK test app's button (its --record file proves it), window
 * activation, scroll and drag, typing after the keyboard layout changed, and
 * the spare keycodes typing binds (kept, taken back when short, unbound at
 * close). */
#include "ksr/session.h"
#include "ksr/x11.h"

#include <X11/Xlib.h>
#include <X11/keysym.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"

typedef struct app {
	int pid;
	int out; /* the app's stdout, or -1 */
	ksr_window win;
} app;

static int spawn(char *const argv[], int *out)
{
	int fds[2] = {-1, -1};
	if (out && pipe(fds) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		int null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(out ? fds[1] : null, 1);
		dup2(null, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (out) {
		close(fds[1]);
		*out = fds[0];
	}
	return pid;
}

static void app_stop(app *a)
{
	if (a->pid > 0) {
		kill(-a->pid, SIGKILL);
		waitpid(a->pid, NULL, 0);
	}
	if (a->out >= 0)
		close(a->out);
	free(a->win.title);
	free(a->win.res_name);
	free(a->win.res_class);
	memset(a, 0, sizeof *a);
	a->out = -1;
}

/* Event-driven: until a window whose title contains `title` is listed (or, with
 * want=false, is no longer listed). */
static bool wait_window(ksr_x11 *x, const char *title, bool want, ksr_window *out)
{
	ksr_deadline d = ksr_deadline_in_ms(20000);
	for (;;) {
		ksr_window_list l;
		ksr_err err = {0};
		bool found = false;
		if (ksr_x11_list_windows(x, &l, &err) < 0)
			return false;
		for (size_t i = 0; i < l.len && !found; i++) {
			if (!strstr(l.items[i].title, title))
				continue;
			found = true;
			if (out) {
				*out = l.items[i];
				l.items[i].title = l.items[i].res_name = l.items[i].res_class =
				        NULL;
			}
		}
		ksr_window_list_clear(&l);
		if (found == want)
			return true;
		if (ksr_x11_wait_change(x, d) != KSR_WAIT_READY)
			return false;
	}
}

static bool app_start(ksr_x11 *x, char *const argv[], const char *title, bool pipe_out, app *a)
{
	memset(a, 0, sizeof *a);
	a->out = -1;
	a->pid = spawn(argv, pipe_out ? &a->out : NULL);
	return a->pid > 0 && wait_window(x, title, true, &a->win);
}

/* Everything the app writes until it exits (bounded). */
static char *read_all(int fd)
{
	size_t len = 0;
	char *buf = calloc(1, 65536);
	ksr_deadline d = ksr_deadline_in_ms(15000);
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (ksr_wait_fds(&p, 1, d) != KSR_WAIT_READY)
			break;
		ssize_t n = read(fd, buf + len, 65535 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	return buf;
}

/* No key left down after an action (what XQueryKeymap sees on its own link). */
static bool all_keys_up(Display *own)
{
	char keys[32];
	XQueryKeymap(own, keys);
	for (int i = 0; i < 32; i++)
		if (keys[i])
			return false;
	return true;
}

/* Start zenity --entry, activate it, run `act`, press Return, return its stdout. */
static char *zenity_session(ksr_x11 *x, const char *what, const char *text1, const char *chords,
                            const char *text2)
{
	app a;
	char *argv[] = {"zenity", "--entry", "--title", "ksr-entry", NULL};
	if (!app_start(x, argv, "ksr-entry", true, &a)) {
		ok(false, "%s: zenity window appeared", what);
		app_stop(&a);
		return NULL;
	}
	ksr_err err = {0};
	int rc = ksr_x11_activate(x, a.win.id, ksr_deadline_in_ms(5000), &err);
	ok(rc == 0, "%s: activate zenity: %s", what, err.msg);
	if (text1 && ksr_x11_type(x, text1, &err) < 0)
		ok(false, "%s: type: %s", what, err.msg);
	if (chords && ksr_x11_key_chords(x, chords, &err) < 0)
		ok(false, "%s: key %s: %s", what, chords, err.msg);
	if (text2 && ksr_x11_type(x, text2, &err) < 0)
		ok(false, "%s: type: %s", what, err.msg);
	rc = ksr_x11_key_chords(x, "Return", &err);
	ok(rc == 0 && ksr_x11_sync(x) == 0, "%s: key Return: %s", what, err.msg);
	char *got = read_all(a.out);
	app_stop(&a);
	return got;
}

static void expect_zenity(ksr_x11 *x, const char *what, const char *text1, const char *chords,
                          const char *text2, const char *want)
{
	char *got = zenity_session(x, what, text1, chords, text2);
	char *want_nl = ksr_xasprintf("%s\n", want);
	is_str(got ? got : "(nothing)", want_nl, what);
	free(want_nl);
	free(got);
}

static void test_typing(ksr_x11 *x)
{
	expect_zenity(x, "ASCII", "plain text 123", NULL, NULL, "plain text 123");
	const char *shifted = "Hello, World! @#$%^&*()_+{}:\"<>?~|";
	expect_zenity(x, "shifted symbols", shifted, NULL, NULL, shifted);
	const char *intl = "\xc3\xa9 \xc3\xbc \xe2\x82\xac \xc3\x9f \xe6\x97\xa5\xe6\x9c\xac";
	expect_zenity(x, "non-ASCII (é ü € ß 日本)", intl, NULL, NULL, intl);
	expect_zenity(x, "ctrl+a then typing replaces the text", "wrong text", "ctrl+a", "right",
	              "right");
	expect_zenity(x, "BackSpace chord", "abcd", "BackSpace BackSpace", "X", "abX");
}

/* Swap the keys of 'a' and 'q' (as AZERTY does) on another client's link: the
 * backend must follow the MappingNotify and still type what was asked. */
static void test_layout_change(ksr_x11 *x, Display *own)
{
	KeyCode ka = XKeysymToKeycode(own, XK_a), kq = XKeysymToKeycode(own, XK_q);
	KeySym swapped_a[2] = {XK_q, XK_Q}, swapped_q[2] = {XK_a, XK_A};
	KeySym orig_a[2] = {XK_a, XK_A}, orig_q[2] = {XK_q, XK_Q};
	XChangeKeyboardMapping(own, ka, 2, swapped_a, 1);
	XChangeKeyboardMapping(own, kq, 2, swapped_q, 1);
	XSync(own, False);
	expect_zenity(x, "typing after the layout swapped a and q", "aqAQ qa", NULL, NULL,
	              "aqAQ qa");
	XChangeKeyboardMapping(own, ka, 2, orig_a, 1);
	XChangeKeyboardMapping(own, kq, 2, orig_q, 1);
	XSync(own, False);
}

/* The keycode bound to ks in the server's keymap now (0: none), read on the
 * observer's own link, column 0 or 1. */
static int keycode_of(Display *own, KeySym ks)
{
	int min = 0, max = 0, per = 0;
	XDisplayKeycodes(own, &min, &max);
	KeySym *map = XGetKeyboardMapping(own, (KeyCode)min, max - min + 1, &per);
	int found = 0;
	for (int kc = min; map && kc <= max && !found; kc++)
		for (int j = 0; j < per && j < 2; j++)
			if (map[(kc - min) * per + j] == ks)
				found = kc;
	if (map)
		XFree(map);
	return found;
}

/* Characters the keymap lacks are bound to spare keycodes and the bindings
 * kept after the text (the next text with them changes no mapping); more
 * distinct ones than there are spare keycodes still all arrive (bindings
 * taken back once the app has read its keys); closing the connection
 * unbinds them all. On a connection of its own, so that it can be closed. */
static void test_bindings_kept(Display *own)
{
	ksr_x11 *y = NULL;
	ksr_err err = {0};
	if (ksr_x11_open_wait(NULL, ksr_deadline_in_ms(5000), &y, &err) != KSR_WAIT_READY) {
		ok(false, "a connection for the binding test: %s", err.msg);
		return;
	}
	ok(keycode_of(own, XK_oacute) == 0, "the keymap has no oacute before typing");
	expect_zenity(y,
	              "\xc5\x82\xc3\xb3"
	              "d\xc5\xba typed",
	              "\xc5\x82\xc3\xb3"
	              "d\xc5\xba",
	              NULL, NULL,
	              "\xc5\x82\xc3\xb3"
	              "d\xc5\xba");
	ok(keycode_of(own, XK_oacute) != 0, "its binding is kept after the text");
	/* 60 distinct CJK ideographs, U+4E00 on: more than an Xvfb keymap's spare
	 * keycodes (19, some held by the other connection's typing), so earlier
	 * bindings must be taken back midway. */
	char cjk[60 * 3 + 1];
	for (int i = 0; i < 60; i++) {
		unsigned cp = 0x4E00u + (unsigned)i;
		cjk[i * 3] = (char)(0xE0 | (cp >> 12));
		cjk[i * 3 + 1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		cjk[i * 3 + 2] = (char)(0x80 | (cp & 0x3F));
	}
	cjk[60 * 3] = '\0';
	expect_zenity(y, "60 distinct ideographs (more than the spare keycodes)", cjk, NULL, NULL,
	              cjk);
	ok(keycode_of(own, 0x1004E00 + 59) != 0, "the last ideograph's binding is kept");
	ksr_x11_close(y);
	ok(keycode_of(own, 0x1004E00 + 59) == 0 && keycode_of(own, XK_oacute) == 0,
	   "closing the connection unbinds them");
}

static void test_errors(ksr_x11 *x, Display *own)
{
	ksr_err err = {0};
	ok(ksr_x11_key_chords(x, "ctrl+shift+ctrll", &err) < 0 && strstr(err.msg, "ctrll"),
	   "bad chord is an error naming the key: %s", err.msg);
	ok(all_keys_up(own), "no key is left down after the bad chord");
	ok(ksr_x11_type(x, "bad \xc3", &err) < 0 && strstr(err.msg, "invalid UTF-8"),
	   "invalid UTF-8 is an error: %s", err.msg);
	ok(ksr_x11_click(x, -1, 5, 1, 1, &err) < 0 && strstr(err.msg, "outside"),
	   "a click outside the screen is an error: %s", err.msg);
	ok(ksr_x11_click(x, 5, 5, 12, 1, &err) < 0 && strstr(err.msg, "button 12"),
	   "a bad button is an error: %s", err.msg);
	ok(ksr_x11_activate(x, 0x7ffffff, ksr_deadline_in_ms(500), &err) < 0 &&
	           strstr(err.msg, "gone or not mapped"),
	   "activating a missing window is an error: %s", err.msg);
	ok(ksr_x11_click(NULL, 5, 5, 1, 1, &err) < 0 && strstr(err.msg, "lost"),
	   "NULL connection: %s", err.msg);
}

/* The child of the root holding w (its WM frame). */
static Window top_of(Display *own, Window w)
{
	Window root, parent = w, *kids = NULL;
	unsigned int n;
	while (XQueryTree(own, w, &root, &parent, &kids, &n)) {
		if (kids)
			XFree(kids);
		if (parent == root || parent == None)
			return w;
		w = parent;
	}
	return None;
}

/* `over` has the input focus and is stacked above `under`. */
static bool focused_on_top(Display *own, Window over, Window under)
{
	Window focus = None, root, parent, *kids = NULL;
	int revert, pos_over = -1, pos_under = -1;
	unsigned int n = 0;
	XGetInputFocus(own, &focus, &revert);
	bool focused = focus != None && top_of(own, focus) == top_of(own, over);
	Window fo = top_of(own, over), fu = top_of(own, under);
	if (XQueryTree(own, DefaultRootWindow(own), &root, &parent, &kids, &n)) {
		for (unsigned int i = 0; i < n; i++) { /* bottom to top */
			if (kids[i] == fo)
				pos_over = (int)i;
			if (kids[i] == fu)
				pos_under = (int)i;
		}
		XFree(kids);
	}
	return focused && pos_over > pos_under && pos_under >= 0;
}

static void test_activate_and_close(ksr_x11 *x, Display *own)
{
	app t1 = {.out = -1}, t2 = {.out = -1};
	char *a1[] = {"xterm", "-geometry", "60x10+0+0", "-title", "ksr-term-one", NULL};
	char *a2[] = {"xterm", "-geometry", "60x10+40+40", "-title", "ksr-term-two", NULL};
	bool up = app_start(x, a1, "ksr-term-one", false, &t1) &&
	          app_start(x, a2, "ksr-term-two", false, &t2);
	ok(up, "two xterms appeared");
	if (!up)
		goto cleanup;
	ksr_err err = {0};
	ok(ksr_x11_activate(x, t1.win.id, ksr_deadline_in_ms(5000), &err) == 0,
	   "activate the first xterm: %s", err.msg);
	ok(focused_on_top(own, t1.win.id, t2.win.id),
	   "the first xterm has focus, above the second");
	ok(ksr_x11_activate(x, t2.win.id, ksr_deadline_in_ms(5000), &err) == 0,
	   "activate the second xterm: %s", err.msg);
	ok(focused_on_top(own, t2.win.id, t1.win.id),
	   "the second xterm has focus, above the first");
	ok(ksr_x11_key_chords(x, "alt+F4", &err) == 0 && ksr_x11_sync(x) == 0, "alt+F4: %s",
	   err.msg);
	ok(all_keys_up(own), "alt and F4 are released");
	ok(wait_window(x, "ksr-term-two", false, NULL), "alt+F4 closed the active xterm");
	ok(wait_window(x, "ksr-term-one", true, NULL), "the other xterm is still there");
cleanup:
	app_stop(&t1);
	app_stop(&t2);
}

static bool file_has(const char *path, const char *needle)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	char line[256];
	bool found = false;
	while (!found && fgets(line, sizeof line, f))
		found = strstr(line, needle) != NULL;
	fclose(f);
	return found;
}

/* The GTK test app's "Press me" button: top of a 24 px bordered vertical box,
 * full width, so the client area's horizontal centre 40 px down is on it. */
static void test_click(ksr_x11 *x)
{
	char exe[PATH_MAX] = {0}, app_path[PATH_MAX + 16], rec[] = "/tmp/ksr-input-XXXXXX";
	if (readlink("/proc/self/exe", exe, sizeof exe - 1) < 0 || !mkdtemp(rec)) {
		ok(false, "test setup");
		return;
	}
	snprintf(app_path, sizeof app_path, "%s/ksr-testapp", dirname(exe));
	char *record = ksr_xasprintf("%s/record", rec);
	char *argv[] = {app_path, "--title", "ksr-click-app", "--record", record, NULL};
	app a;
	if (!app_start(x, argv, "ksr-click-app", false, &a)) {
		ok(false, "test app window appeared (%s)", app_path);
		goto cleanup;
	}
	ksr_err err = {0};
	ok(ksr_x11_activate(x, a.win.id, ksr_deadline_in_ms(5000), &err) == 0, "activate: %s",
	   err.msg);
	ok(!file_has(record, "pressed"), "not pressed before the click");
	int px = a.win.x + a.win.w / 2, py = a.win.y + 40;
	ok(ksr_x11_click(x, px, py, 1, 1, &err) == 0 && ksr_x11_sync(x) == 0,
	   "click at (%d, %d): %s", px, py, err.msg);
	/* The app appends to the record when it handles the click; a file has no
	 * X event, so look at it every 50 ms, bounded. */
	ksr_deadline d = ksr_deadline_in_ms(10000);
	while (!file_has(record, "pressed") && !ksr_deadline_passed(d))
		ksr_sleep_ms(50);
	ok(file_has(record, "pressed"), "the button recorded the press");
	ok(ksr_x11_scroll(x, px, py + 100, 3, &err) == 0 &&
	           ksr_x11_scroll(x, px, py, -2, &err) == 0,
	   "scroll down and up: %s", err.msg);
	ok(ksr_x11_drag(x, a.win.x + 30, a.win.y + 150, a.win.x + 200, a.win.y + 150, 1, &err) == 0,
	   "drag: %s", err.msg);
	ok(ksr_x11_click(x, px, py, 3, 1, &err) == 0 && ksr_x11_click(x, px, py, 1, 2, &err) == 0,
	   "right click and double click: %s", err.msg);
	ok(ksr_x11_sync(x) == 0, "sync");
cleanup:
	app_stop(&a);
	unlink(record);
	rmdir(rec);
	free(record);
}

int main(void)
{
	ksr_session_opts opts = {.width = 1280, .height = 720};
	ksr_session *s = NULL;
	ksr_x11 *x = NULL;
	ksr_err err = {0};
	if (ksr_session_start(&opts, ksr_deadline_in_ms(30000), &s, &err) < 0 ||
	    ksr_x11_open_wait(NULL, ksr_deadline_in_ms(5000), &x, &err) != KSR_WAIT_READY) {
		ok(false, "session: %s", err.msg);
		ksr_session_stop(s);
		return tap_done();
	}
	Display *own = XOpenDisplay(NULL);
	ok(own != NULL, "a second connection for observing");
	if (own) {
		test_typing(x);
		test_layout_change(x, own);
		test_bindings_kept(own);
		test_errors(x, own);
		test_activate_and_close(x, own);
		test_click(x);
		XCloseDisplay(own);
	}
	ksr_x11_close(x);
	ksr_session_stop(s);
	return tap_done();
}
