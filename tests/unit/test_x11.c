/* The X11 backend against a real Xvfb + openbox session: listing, event-driven
 * waits, dialogs, capture, a lost connection and cancellation. */
#include "ksr/session.h"
#include "ksr/x11.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"

#define TERM_TITLE "ksr test term"

static int launch(char *const argv[])
{
	pid_t pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		int fd = open("/dev/null", O_RDWR);
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static void stop(int pid)
{
	if (pid <= 0)
		return;
	kill(-pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static const ksr_window *find(const ksr_window_list *l, const char *title)
{
	for (size_t i = 0; i < l->len; i++)
		if (strstr(l->items[i].title, title))
			return &l->items[i];
	return NULL;
}

/* Wait (event-driven) until a window titled `title` is listed (want=true) or
 * gone (want=false); *wakes counts the wait_change calls. */
static bool wait_for_title(ksr_x11 *x, const char *title, bool want, ksr_window *out, int *wakes)
{
	ksr_deadline d = ksr_deadline_in_ms(15000);
	*wakes = 0;
	for (;;) {
		ksr_window_list l;
		ksr_err err = {0};
		if (ksr_x11_list_windows(x, &l, &err) < 0)
			return false;
		const ksr_window *w = find(&l, title);
		if (w && want && out) {
			*out = *w;
			out->title = strdup(w->title);
			out->res_name = strdup(w->res_name);
			out->res_class = strdup(w->res_class);
		}
		ksr_window_list_clear(&l);
		if ((w != NULL) == want)
			return true;
		if (ksr_x11_wait_change(x, d) != KSR_WAIT_READY)
			return false;
		++*wakes;
	}
}

static void free_window(ksr_window *w)
{
	free(w->title);
	free(w->res_name);
	free(w->res_class);
}

static bool region_not_black(const ksr_image *img, int x0, int y0, int w, int h)
{
	for (int y = y0; y < y0 + h && y < img->h; y++)
		for (int x = x0; x < x0 + w && x < img->w; x++) {
			const unsigned char *p = img->rgb + ((size_t)y * img->w + x) * 3;
			if (p[0] || p[1] || p[2])
				return true;
		}
	return false;
}

static void test_no_display(void)
{
	char *saved = getenv("DISPLAY") ? strdup(getenv("DISPLAY")) : NULL;
	unsetenv("DISPLAY");
	ksr_x11 *x = NULL;
	ksr_err err = {0};
	ok(ksr_x11_open_wait(NULL, ksr_deadline_in_ms(100), &x, &err) == KSR_WAIT_ERROR && !x,
	   "no DISPLAY is an error");
	ok(strstr(err.msg, "DISPLAY is not set") != NULL, "message: %s", err.msg);
	ok(ksr_x11_open_wait(":4242", ksr_deadline_in_ms(200), &x, &err) == KSR_WAIT_TIMEOUT,
	   "absent display times out: %s", err.msg);
	if (saved)
		setenv("DISPLAY", saved, 1);
	free(saved);
}

static void test_capture(ksr_x11 *x, const ksr_window *term)
{
	ksr_err err = {0};
	int sw, sh;
	ksr_x11_screen_size(x, &sw, &sh);
	int64_t t0 = ksr_now_ms();
	ksr_image *screen = ksr_x11_capture(x, 0, &err);
	int64_t took = ksr_now_ms() - t0;
	ok(screen != NULL, "screen capture in %lld ms: %s", (long long)took, err.msg);
	if (screen) {
		ok(screen->w == sw && screen->h == sh, "capture %dx%d", screen->w, screen->h);
		ok(region_not_black(screen, term->x, term->y, term->w, term->h),
		   "the xterm's area is not all black");
	}
	ksr_image *win = ksr_x11_capture(x, term->id, &err);
	ok(win != NULL, "window capture: %s", err.msg);
	if (win && screen) {
		ok(win->w <= term->w && win->h <= term->h && win->w > 0, "window capture %dx%d",
		   win->w, win->h);
		int ox = term->x < 0 ? 0 : term->x, oy = term->y < 0 ? 0 : term->y;
		ok(memcmp(win->rgb, screen->rgb + ((size_t)oy * sw + ox) * 3, (size_t)win->w * 3) ==
		           0,
		   "window capture's first row matches the screen");
	}
	ok(ksr_x11_capture(x, 0x7ffffff, &err) == NULL, "capture of a bad window: %s", err.msg);
	ksr_image_free(win);
	ksr_image_free(screen);
}

/* Colours counted by hand on an RGB capture: distinct (up to max) and the
 * most common one's pixels. */
static void count_rgb(const ksr_image *img, int max, int *distinct, long long *dominant)
{
	unsigned long seen[KSR_X11_COLOURS_MAX];
	long long n[KSR_X11_COLOURS_MAX] = {0};
	int k = 0;
	long long other = 0;
	for (long long i = 0; i < (long long)img->w * img->h; i++) {
		const uint8_t *p = img->rgb + i * 3;
		unsigned long c = (unsigned long)p[0] << 16 | (unsigned long)p[1] << 8 | p[2];
		int j = 0;
		while (j < k && seen[j] != c)
			j++;
		if (j == k && k < max)
			seen[k++] = c;
		if (j < k)
			n[j]++;
		else
			other++;
	}
	*distinct = k;
	*dominant = 0;
	for (int j = 0; j < k; j++)
		if (n[j] > *dominant)
			*dominant = n[j];
}

/* ksr_x11_window_colours agrees with the capture of the same window (the
 * window quiet first, so both see the same pixels), and fails on a bad one. */
static void test_colours(ksr_x11 *x, const ksr_window *term)
{
	ksr_err err = {0};
	int64_t waited = 0;
	ksr_x11_quiet q = {.quiet_ms = 300};
	ksr_x11_quiet_wait(x, &term->id, 1, &q, ksr_deadline_in_ms(5000), &waited);
	ksr_x11_colours c;
	int64_t t0 = ksr_now_ms();
	int rc = ksr_x11_window_colours(x, term->id, &c, &err);
	ok(rc == 0, "window colours counted in %lld ms: %s", (long long)(ksr_now_ms() - t0),
	   err.msg);
	ksr_image *win = ksr_x11_capture(x, term->id, &err);
	if (rc == 0 && win) {
		int distinct;
		long long dominant;
		count_rgb(win, KSR_X11_COLOURS_MAX, &distinct, &dominant);
		is_int(c.pixels, (long long)win->w * win->h, "every pixel of the window counted");
		is_int(c.dominant, dominant, "the most common colour's pixels");
		is_int(c.distinct, distinct, "distinct colours");
		ok(c.distinct >= 2 && c.dominant < c.pixels, "the xterm is not one colour (%d)",
		   c.distinct);
	}
	ksr_image_free(win);
	ok(ksr_x11_window_colours(x, 0x7ffffff, &c, &err) < 0, "colours of a bad window: %s",
	   err.msg);
}

static void check_term(ksr_x11 *x, ksr_window *term, int pid, int wakes)
{
	ksr_err err = {0};
	int sw, sh;
	ksr_x11_screen_size(x, &sw, &sh);
	ok(wakes <= 20, "event-driven: %d wakes before the title showed", wakes);
	is_int(term->pid, pid, "_NET_WM_PID is xterm's");
	is_str(term->res_class, "XTerm", "WM_CLASS class");
	is_str(term->res_name, "xterm", "WM_CLASS instance");
	ok(!term->is_dialog, "xterm is not a dialog");
	ok(term->w > 100 && term->h > 50 && term->x >= 0 && term->y >= 0 &&
	           term->x + term->w <= sw && term->y + term->h <= sh,
	   "geometry %dx%d+%d+%d", term->w, term->h, term->x, term->y);
	ok(term->y > 0, "client area below openbox's title bar (y=%d)", term->y);
	ok(ksr_x11_window_refresh(x, term, &err) == 0 && strstr(term->title, TERM_TITLE),
	   "refresh: %s", err.msg);
}

static void test_dialog(ksr_x11 *x)
{
	if (system("command -v zenity >/dev/null 2>&1") != 0) {
		skip_unless_installable("zenity is not installed (scripts/setup.sh installs it)");
		return;
	}
	setenv("NO_AT_BRIDGE", "1", 1);
	char *argv[] = {"zenity", "--error", "--title=ksr error dialog", "--text=boom", NULL};
	int pid = launch(argv);
	ksr_window dlg = {0};
	int wakes = 0;
	ok(wait_for_title(x, "ksr error dialog", true, &dlg, &wakes), "zenity dialog seen");
	ok(dlg.is_dialog, "zenity --error is a dialog");
	free_window(&dlg);
	stop(pid);
}

/* A second session whose server goes away under an open connection. */
static void test_lost_connection(void)
{
	ksr_session *s = NULL;
	ksr_err err = {0};
	ksr_session_opts opts = {.width = 320, .height = 240};
	if (ksr_session_start(&opts, ksr_deadline_in_ms(30000), &s, &err) < 0) {
		ok(false, "second session: %s", err.msg);
		return;
	}
	ksr_x11 *x = NULL;
	ksr_x11_open_wait(ksr_session_display(s), ksr_deadline_in_ms(5000), &x, &err);
	ksr_session_stop(s);
	ksr_window_list l;
	ok(ksr_x11_wait_change(x, ksr_deadline_in_ms(5000)) == KSR_WAIT_ERROR,
	   "wait on a dead server is an error");
	ok(!ksr_x11_alive(x), "connection marked dead");
	ok(ksr_x11_list_windows(x, &l, &err) < 0 && strstr(err.msg, "connection was lost"),
	   "listing after the server died: %s", err.msg);
	ok(ksr_x11_capture(x, 0, &err) == NULL, "capture after the server died");
	ksr_x11_close(x);
}

static void test_cancel(ksr_x11 *x)
{
	ksr_cancel_request();
	int64_t t0 = ksr_now_ms();
	ksr_wait w = ksr_x11_wait_change(x, ksr_deadline_in_ms(5000));
	is_str(ksr_wait_name(w), "cancelled", "wait after cancel");
	ok(ksr_now_ms() - t0 < 1000, "returned at once");
}

int main(void)
{
	ksr_cancel_install();
	test_no_display();
	ksr_session *s = NULL;
	ksr_err err = {0};
	if (ksr_session_start(NULL, ksr_deadline_in_ms(30000), &s, &err) < 0) {
		ok(false, "session: %s", err.msg);
		return tap_done();
	}
	ksr_x11 *x = NULL;
	ok(ksr_x11_open_wait(NULL, ksr_deadline_in_ms(5000), &x, &err) == KSR_WAIT_READY,
	   "connected to %s", ksr_session_display(s));

	char *argv[] = {"xterm", "-T", TERM_TITLE, NULL};
	int64_t t0 = ksr_now_ms();
	int pid = launch(argv);
	ksr_window term = {0};
	int wakes = 0;
	bool seen = wait_for_title(x, TERM_TITLE, true, &term, &wakes);
	ok(seen, "xterm seen after %lld ms", (long long)(ksr_now_ms() - t0));
	check_term(x, &term, pid, wakes);
	test_capture(x, &term);
	test_colours(x, &term);
	test_dialog(x);

	stop(pid);
	ok(wait_for_title(x, TERM_TITLE, false, NULL, &wakes) && wakes <= 20,
	   "xterm gone after %d wakes", wakes);
	ok(ksr_x11_window_refresh(x, &term, &err) < 0, "refresh of a gone window: %s", err.msg);
	free_window(&term);

	test_lost_connection();
	ok(ksr_x11_alive(x), "the first connection is unaffected");
	test_cancel(x);
	ksr_x11_close(x);
	ksr_session_stop(s);
	return tap_done();
}
