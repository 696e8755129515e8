/* Input latency and typing correctness: this runtime's in-process XTest beside
 * the raw XTest floor (the same requests from a bare Xlib connection of this
 * process: XTestFake* and one round trip, nothing else) and `xdotool` (click,
 * key, type with --delay 0), on one private Xvfb + openbox; what a step adds
 * around the input (the focus check, the ready checks), measured apart; and
 * how many of 1000 mixed characters typed into `zenity --entry` arrived
 * exactly (zenity prints the entry's text when Return is pressed). Not a test.
 *
 * Ours and the floor take turns, ROUNDS rounds of n/ROUNDS actions each, and
 * each figure is the median of its rounds: on a loaded machine both see the
 * same load, so their ratio holds where the absolute figures move. */
#include "ksr/keys.h"
#include "ksr/session.h"
#include "ksr/x11.h"

#include "bench_util.h"

#include <X11/XKBlib.h>
#include <X11/Xlib.h>
#include <X11/extensions/XTest.h>
#include <X11/keysym.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

#define ROUNDS       9
#define MIXED_ROUNDS 5

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

static int run(char *const argv[])
{
	int status = 0;
	waitpid(spawn(argv, NULL), &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void stop(int pid)
{
	if (pid > 0) {
		kill(-pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

static char *read_all(int fd)
{
	size_t len = 0, cap = 1 << 16;
	char *buf = calloc(1, cap);
	ksr_deadline d = ksr_deadline_in_ms(60000);
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (ksr_wait_fds(&p, 1, d) != KSR_WAIT_READY)
			break;
		ssize_t n = read(fd, buf + len, cap - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	if (len && buf[len - 1] == '\n')
		buf[len - 1] = '\0';
	return buf;
}

/* A zenity entry, focused; *out is its stdout. */
static int zenity(ksr_x11 *x, const char *title, int *out, unsigned long *win)
{
	char *argv[] = {"zenity", "--entry", "--title", (char *)title, NULL};
	int pid = spawn(argv, out);
	*win = bench_wait_window(x, title, 90000);
	ksr_err err = {0};
	if (!*win || ksr_x11_activate(x, *win, ksr_deadline_in_ms(5000), &err) < 0) {
		fprintf(stderr, "bench: zenity did not come up: %s\n", err.msg);
		stop(pid);
		return -1;
	}
	return pid;
}

static void row(const char *what, double ms_per_action, double base)
{
	if (ms_per_action < 0) {
		printf("%-44s %12s\n", what, "n/a");
		return;
	}
	printf("%-44s %9.3f ms", what, ms_per_action);
	if (base > 0)
		printf("   %8.1fx ours", ms_per_action / base);
	printf("\n");
}

/* Each action followed by XSync: the server has processed it, as when an
 * xdotool process has exited. */
static double ours_clicks(ksr_x11 *x, int px, int py, int n)
{
	ksr_err err = {0};
	double t0 = now_ms();
	for (int i = 0; i < n; i++)
		if (ksr_x11_click(x, px, py, 1, 1, &err) < 0 || ksr_x11_sync(x) < 0)
			return fprintf(stderr, "bench: %s\n", err.msg), -1;
	return (now_ms() - t0) / n;
}

static double ours_keys(ksr_x11 *x, const char *chord, int n)
{
	ksr_err err = {0};
	double t0 = now_ms();
	for (int i = 0; i < n; i++)
		if (ksr_x11_key_chords(x, chord, &err) < 0 || ksr_x11_sync(x) < 0)
			return fprintf(stderr, "bench: %s\n", err.msg), -1;
	return (now_ms() - t0) / n;
}

static double ours_type(ksr_x11 *x, const char *text, int chars)
{
	ksr_err err = {0};
	double t0 = now_ms();
	if (ksr_x11_type(x, text, &err) < 0 || ksr_x11_sync(x) < 0)
		return fprintf(stderr, "bench: %s\n", err.msg), -1;
	return (now_ms() - t0) / chars;
}

static size_t to_cps(const char *s, uint32_t *cp, size_t max)
{
	size_t n = 0;
	while (n < max && ksr_keys_utf8_next(&s, &cp[n]) == 1)
		n++;
	return n;
}

/* ---- the floor: a bare Xlib connection, the same requests, one round trip ---- */

static double floor_clicks(Display *d, int px, int py, int n)
{
	double t0 = now_ms();
	for (int i = 0; i < n; i++) {
		XTestFakeMotionEvent(d, DefaultScreen(d), px, py, CurrentTime);
		XTestFakeButtonEvent(d, 1, True, CurrentTime);
		XTestFakeButtonEvent(d, 1, False, CurrentTime);
		XSync(d, False);
	}
	return (now_ms() - t0) / n;
}

static double floor_keys(Display *d, KeySym ks, int n)
{
	KeyCode kc = XKeysymToKeycode(d, ks); /* looked up once, as any client would */
	double t0 = now_ms();
	for (int i = 0; i < n; i++) {
		XTestFakeKeyEvent(d, kc, True, CurrentTime);
		XTestFakeKeyEvent(d, kc, False, CurrentTime);
		XSync(d, False);
	}
	return (now_ms() - t0) / n;
}

typedef struct floor_key {
	KeyCode kc;
	bool shift;
} floor_key;

/* ks's keycode in the keymap (level 1, else level 2 with Shift); 0 if none. */
static floor_key floor_lookup(Display *d, KeySym ks)
{
	int min, max;
	XDisplayKeycodes(d, &min, &max);
	for (int level = 0; level < 2; level++)
		for (int kc = min; kc <= max; kc++)
			if (XkbKeycodeToKeysym(d, (KeyCode)kc, 0, level) == ks)
				return (floor_key){(KeyCode)kc, level == 1};
	return (floor_key){0, false};
}

/* Keycodes with no keysym at all: where a client binds what the keymap lacks. */
static int floor_spares(Display *d, KeyCode *out, int max_out)
{
	int min, max, per = 0, n = 0;
	XDisplayKeycodes(d, &min, &max);
	KeySym *syms = XGetKeyboardMapping(d, (KeyCode)min, max - min + 1, &per);
	for (int kc = min; kc <= max && n < max_out; kc++) {
		bool empty = true;
		for (int j = 0; j < per; j++)
			empty = empty && syms[(kc - min) * per + j] == NoSymbol;
		if (empty)
			out[n++] = (KeyCode)kc;
	}
	XFree(syms);
	return n;
}

/* Bind (or unbind) ks[i] to the spare keycode kc[i] (ascending), one change
 * per run of adjacent keycodes: every change makes each client re-read the
 * keymap and the window manager grab its keys again, so fewer is cheaper. */
static void floor_bind(Display *d, const KeyCode *kc, const KeySym *ks, int n, bool bind)
{
	for (int from = 0, to; from < n; from = to + 1) {
		for (to = from; to + 1 < n && kc[to + 1] == kc[to] + 1;)
			to++;
		KeySym syms[2 * 256];
		for (int i = from; i <= to; i++)
			syms[2 * (i - from)] = syms[2 * (i - from) + 1] = bind ? ks[i] : NoSymbol;
		XChangeKeyboardMapping(d, kc[from], 2, syms, to - from + 1);
	}
}

/* The least a client types text with: every character's keycode known (the
 * keymap read before the clock starts, as a client reads it once), the
 * keysyms the keymap lacks bound to spare keycodes in one change per run of
 * adjacent ones (the clock running: a text with them pays that), each character pressed and
 * released (Shift around it where needed), one round trip at the end. The
 * bindings are taken back after, untimed. -1 when the keymap has too few
 * spare keycodes. */
static double floor_type(Display *d, const char *text)
{
	uint32_t cps[4096];
	size_t n = to_cps(text, cps, 4096);
	floor_key *keys = calloc(n, sizeof *keys);
	KeySym bind_ks[256] = {0};
	KeyCode spare[256], bind_kc[256] = {0};
	int nspare = floor_spares(d, spare, 256), nbind = 0;
	KeyCode shift = XKeysymToKeycode(d, XK_Shift_L);
	for (size_t i = 0; i < n; i++) {
		KeySym ks = ksr_keys_from_codepoint(cps[i]);
		keys[i] = floor_lookup(d, ks);
		for (int b = 0; !keys[i].kc && b < nbind; b++)
			if (bind_ks[b] == ks)
				keys[i] = (floor_key){bind_kc[b], false};
		if (keys[i].kc)
			continue;
		if (nbind >= nspare) {
			free(keys);
			return -1;
		}
		bind_ks[nbind] = ks;
		bind_kc[nbind] = spare[nbind];
		keys[i] = (floor_key){spare[nbind++], false};
	}
	double t0 = now_ms();
	floor_bind(d, bind_kc, bind_ks, nbind, true);
	if (nbind)
		XSync(d, False); /* the server has the bindings before the first key */
	for (size_t i = 0; i < n; i++) {
		if (keys[i].shift)
			XTestFakeKeyEvent(d, shift, True, CurrentTime);
		XTestFakeKeyEvent(d, keys[i].kc, True, CurrentTime);
		XTestFakeKeyEvent(d, keys[i].kc, False, CurrentTime);
		if (keys[i].shift)
			XTestFakeKeyEvent(d, shift, False, CurrentTime);
	}
	XSync(d, False);
	double ms = (now_ms() - t0) / (double)n;
	floor_bind(d, bind_kc, bind_ks, nbind, false);
	XSync(d, False);
	free(keys);
	return ms;
}

/* ---- ours and the floor, in turns ---- */

typedef struct turns {
	double ours[ROUNDS], floor[ROUNDS];
} turns;

static void turns_row(const char *what, const turns *t)
{
	double o = bench_median(t->ours, ROUNDS), f = bench_median(t->floor, ROUNDS);
	printf("%-44s %9.3f ms\n", what, o);
	char label[96];
	snprintf(label, sizeof label, "%.*s: raw XTest floor", (int)strcspn(what, ":"), what);
	printf("%-44s %9.3f ms   ours %.2fx the floor\n", label, f, f > 0 ? o / f : 0);
}

/* The check before each X11 input step that no other client holds a grab of
 * the device (ksr_x11_grab_probe, one round trip; issue 31), alone, and with
 * the click it guards. Right after a click the window manager may still hold
 * the pointer (openbox's click-to-focus passive grab, until it replays the
 * press): the probe is asked again until the pointer is free, as the ready
 * phase's grace does; *waits counts those. */
static double ours_probe(ksr_x11 *x, ksr_x11_device dev, int n, int click_px, int click_py,
                         int *waits)
{
	ksr_err err = {0};
	double t0 = now_ms();
	*waits = 0;
	for (int i = 0; i < n; i++) {
		ksr_x11_grab g;
		for (int tries = 0;; tries++) {
			if (ksr_x11_grab_probe(x, dev, 0, &g, &err) < 0)
				return fprintf(stderr, "bench: %s\n", err.msg), -1;
			if (!g.grabbed)
				break;
			if (tries > 10000)
				return fprintf(stderr, "bench: the device stays grabbed\n"), -1;
			(*waits)++;
		}
		if (click_px >= 0 &&
		    (ksr_x11_click(x, click_px, click_py, 1, 1, &err) < 0 || ksr_x11_sync(x) < 0))
			return fprintf(stderr, "bench: %s\n", err.msg), -1;
	}
	return (now_ms() - t0) / n;
}

/* n processes, one action each; the mean per process. */
static double tool_each(char *const argv[], int n)
{
	double t0 = now_ms();
	for (int i = 0; i < n; i++)
		if (run(argv) != 0)
			return -1;
	return (now_ms() - t0) / n;
}

static double tool_once(char *const argv[], int actions)
{
	double t0 = now_ms();
	if (run(argv) != 0)
		return -1;
	return (now_ms() - t0) / actions;
}

/* 1000 characters from a pool of ASCII, shifted symbols, Latin-1, €, Greek,
 * Cyrillic and CJK, deterministic. Returns the UTF-8 text. */
static char *mixed_text(int n)
{
	static const char *const pool[] = {"a",
	                                   "b",
	                                   "z",
	                                   "Q",
	                                   "W",
	                                   "0",
	                                   "7",
	                                   " ",
	                                   "!",
	                                   "@",
	                                   "#",
	                                   "$",
	                                   "%",
	                                   "^",
	                                   "&",
	                                   "*",
	                                   "(",
	                                   ")",
	                                   "_",
	                                   "+",
	                                   "{",
	                                   "}",
	                                   ":",
	                                   "\"",
	                                   "<",
	                                   ">",
	                                   "?",
	                                   "~",
	                                   "|",
	                                   ",",
	                                   ".",
	                                   "/",
	                                   "\xc3\xa9",
	                                   "\xc3\xbc",
	                                   "\xc3\x9f",
	                                   "\xc3\xb1",
	                                   "\xc3\xa7",
	                                   "\xc3\x85",
	                                   "\xe2\x82\xac",
	                                   "\xce\xb1",
	                                   "\xce\xa9",
	                                   "\xd0\x96",
	                                   "\xd0\xb4",
	                                   "\xe6\x97\xa5",
	                                   "\xe6\x9c\xac",
	                                   "\xe8\xaa\x9e",
	                                   "\xe4\xb8\xad",
	                                   "\xe2\x86\x92",
	                                   "\xe2\x9c\x93",
	                                   "\xc5\x82"};
	size_t np = sizeof pool / sizeof pool[0];
	char *s = calloc((size_t)n * 4 + 1, 1);
	unsigned seed = 12345;
	for (int i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		strcat(s, pool[(seed >> 16) % np]);
	}
	return s;
}

/* Characters that arrived exactly: the longest common subsequence. */
static size_t arrived(const char *want, const char *got)
{
	static uint32_t a[4096], b[4096];
	size_t na = to_cps(want, a, 4096), nb = to_cps(got, b, 4096);
	size_t *prev = calloc(nb + 1, sizeof *prev), *cur = calloc(nb + 1, sizeof *cur);
	for (size_t i = 1; i <= na; i++) {
		for (size_t j = 1; j <= nb; j++)
			cur[j] = a[i - 1] == b[j - 1]   ? prev[j - 1] + 1
			         : prev[j] > cur[j - 1] ? prev[j]
			                                : cur[j - 1];
		size_t *t = prev;
		prev = cur;
		cur = t;
	}
	size_t r = prev[nb];
	free(prev);
	free(cur);
	return r;
}

/* Type text into a fresh zenity with ours (tool == NULL) or with the tool. */
static char *type_into_zenity(ksr_x11 *x, const char *text, char *const tool[], double *ms)
{
	int out = -1;
	unsigned long win;
	int pid = zenity(x, tool ? "ksr-bench-xdotool" : "ksr-bench-ours", &out, &win);
	if (pid < 0)
		return NULL;
	ksr_err err = {0};
	double t0 = now_ms();
	int rc = tool ? run(tool) : ksr_x11_type(x, text, &err);
	ksr_x11_sync(x);
	*ms = now_ms() - t0;
	if (rc != 0)
		fprintf(stderr, "bench: typing failed: %s\n", tool ? tool[0] : err.msg);
	ksr_x11_key_chords(x, "Return", &err);
	ksr_x11_sync(x);
	char *got = read_all(out);
	close(out);
	stop(pid);
	return got;
}

static void correctness_row(const char *who, const char *text, const char *got, int n, double ms)
{
	printf("%-44s %6zu / %d arrived exactly%s, %.0f ms\n", who, got ? arrived(text, got) : 0, n,
	       got && !strcmp(got, text) ? " (identical)" : "", ms);
}

/* Our typing of n mixed characters into zenity; xdotool's when with_xdotool. */
static void correctness(ksr_x11 *x, int n, bool with_xdotool)
{
	char *text = mixed_text(n);
	char *xdo[] = {"xdotool", "type", "--delay", "0", text, NULL};
	double ms = 0;
	char *got = type_into_zenity(x, text, with_xdotool ? xdo : NULL, &ms);
	correctness_row(with_xdotool ? "xdotool type --delay 0" : "kasm-session-runtime", text, got,
	                n, ms);
	free(got);
	free(text);
}

/* What a window or point step adds around the input, per step, on a window
 * that is ready (each measured apart, the input itself not in them): the focus
 * check when the window is focused already (ksr_x11_activate), and the ready
 * checks that take round trips (viewable, the app answering _NET_WM_PING, the
 * point not covered). The ready phase's quiet wait (ready_quiet_ms of no
 * repaint) and the settle are waits by construction: bench/ready.sh. */
static void step_extras(ksr_x11 *x, unsigned long win, int px, int py, int n)
{
	double act[ROUNDS], ready[ROUNDS];
	int per = n / ROUNDS;
	for (int r = 0; r < ROUNDS; r++) {
		ksr_err err = {0};
		double t0 = now_ms();
		for (int i = 0; i < per; i++)
			if (ksr_x11_activate(x, win, ksr_deadline_in_ms(5000), &err) < 0)
				return (void)fprintf(stderr, "bench: %s\n", err.msg);
		act[r] = (now_ms() - t0) / per;
		t0 = now_ms();
		for (int i = 0; i < per; i++) {
			bool takes = false;
			unsigned long by = 0;
			int v = ksr_x11_window_viewable(x, win);
			ksr_wait p = ksr_x11_ping_wait(x, win, ksr_deadline_in_ms(5000), &takes);
			int c = ksr_x11_point_covered(x, win, px, py, &by);
			if (v != 1 || p != KSR_WAIT_READY || c < 0)
				return (void)fprintf(
				        stderr,
				        "bench: a ready check failed (viewable %d, ping %s, "
				        "covered %d at %d,%d)\n",
				        v, ksr_wait_name(p), c, px, py);
		}
		ready[r] = (now_ms() - t0) / per;
	}
	printf("step extra: focus check, window focused already %9.3f ms\n",
	       bench_median(act, ROUNDS));
	printf("step extra: ready round trips (viewable, ping, point) %9.3f ms\n",
	       bench_median(ready, ROUNDS));
}

static void window_center(Display *d, unsigned long win, int *cx, int *cy)
{
	XWindowAttributes wa;
	Window child;
	if (XGetWindowAttributes(d, win, &wa))
		XTranslateCoordinates(d, win, DefaultRootWindow(d), wa.width / 2, wa.height / 2, cx,
		                      cy, &child);
}

static void click_rows(ksr_x11 *x, Display *raw, int n)
{
	int per = n / ROUNDS;
	turns t;
	for (int r = 0; r < ROUNDS; r++) { /* who goes first alternates, as in type_rows */
		if (r % 2)
			t.ours[r] = ours_clicks(x, 800, 400, per);
		t.floor[r] = floor_clicks(raw, 800, 400, per);
		if (!(r % 2))
			t.ours[r] = ours_clicks(x, 800, 400, per);
	}
	turns_row("click: kasm-session-runtime (in process)", &t);
	double c = bench_median(t.ours, ROUNDS);
	int waits = 0;
	row("grab probe, pointer (before each pointer step)",
	    ours_probe(x, KSR_X11_POINTER, n, -1, -1, &waits), c);
	row("grab probe, keyboard (before each key/type step)",
	    ours_probe(x, KSR_X11_KEYBOARD, n, -1, -1, &waits), c);
	row("click with its grab probe before it",
	    ours_probe(x, KSR_X11_POINTER, n, 800, 400, &waits), c);
	printf("  (the pointer was still grabbed right after the previous click %d times in %d: "
	       "probed again)\n",
	       waits, n);
	char *xc[] = {"xdotool", "click", "--delay", "0", "1", NULL};
	row("click: xdotool click --delay 0 (a process each)", tool_each(xc, n / 4), c);
	char reps[16];
	snprintf(reps, sizeof reps, "%d", n);
	char *xcr[] = {"xdotool", "click", "--repeat", reps, "--delay", "0", "1", NULL};
	row("click: xdotool click --repeat N (one process)", tool_once(xcr, n), c);
}

static void key_rows(ksr_x11 *x, Display *raw, int n)
{
	int per = n / ROUNDS;
	turns t;
	for (int r = 0; r < ROUNDS; r++) {
		if (r % 2)
			t.ours[r] = ours_keys(x, "End", per);
		t.floor[r] = floor_keys(raw, XK_End, per);
		if (!(r % 2))
			t.ours[r] = ours_keys(x, "End", per);
	}
	turns_row("key: kasm-session-runtime (in process)", &t);
	double k = bench_median(t.ours, ROUNDS);
	char *xk[] = {"xdotool", "key", "--delay", "0", "End", NULL};
	row("key: xdotool key --delay 0 (a process each)", tool_each(xk, n / 4), k);
	char reps[16];
	snprintf(reps, sizeof reps, "%d", n);
	char *xkr[] = {"xdotool", "key", "--repeat", reps, "--delay", "0", "End", NULL};
	row("key: xdotool key --repeat N (one process)", tool_once(xkr, n), k);
}

/* n characters of ASCII, in turns with the floor; then the mixed text, once
 * each (its first typing binds the keysyms the keymap lacks: that is the job
 * measured; ours keeps them bound after, so it is typed once). */
static double reopen(ksr_x11 **x);

/* Ours as the floor is measured: the keymap read before the clock starts
 * (after the floor's own bindings and their removal, which a client must read
 * again), and our bindings taken back after it, untimed (closing the
 * connection unbinds), so that each typing finds the keymap as it was. */
static double ours_first_typing(ksr_x11 **xp, const char *text, int n)
{
	ours_type(*xp, "a", 1);
	double ms = ours_type(*xp, text, n);
	reopen(xp);
	return ms;
}

/* Between turns: the app has read every key and keymap change so far (it
 * answers _NET_WM_PING in queue order), so neither turn starts while the app
 * still works through the other's. */
static void app_caught_up(ksr_x11 *x, unsigned long win)
{
	bool takes = false;
	if (ksr_x11_ping_wait(x, win, ksr_deadline_in_ms(10000), &takes) != KSR_WAIT_READY)
		fprintf(stderr, "bench: the app did not answer a ping between turns\n");
}

static void type_rows(ksr_x11 **xp, Display *raw, unsigned long win, int n, double *mixed_ours)
{
	ksr_x11 *x = *xp;
	char *ascii = calloc((size_t)n + 1, 1);
	for (int i = 0; i < n; i++)
		ascii[i] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789,.;!@"[i % 51];
	turns t;
	/* Who goes first alternates: each typing leaves the app busy with its
	 * keys, which the next one's round trip waits behind. */
	for (int r = 0; r < ROUNDS; r++) {
		if (r % 2)
			t.ours[r] = ours_type(x, ascii, n);
		t.floor[r] = floor_type(raw, ascii);
		if (!(r % 2))
			t.ours[r] = ours_type(x, ascii, n);
	}
	turns_row("type ASCII, per char: kasm-session-runtime", &t);
	char *xt[] = {"xdotool", "type", "--delay", "0", ascii, NULL};
	row("type ASCII, per char: xdotool type --delay 0", tool_once(xt, n),
	    bench_median(t.ours, ROUNDS));
	/* The mixed text's job is its first typing (binding what the keymap
	 * lacks). */
	char *mixed = mixed_text(n);
	turns m;
	for (int r = 0; r < MIXED_ROUNDS; r++) {
		app_caught_up(*xp, win);
		if (r % 2) {
			m.ours[r] = ours_first_typing(xp, mixed, n);
			app_caught_up(*xp, win);
		}
		m.floor[r] = floor_type(raw, mixed);
		if (!(r % 2)) {
			app_caught_up(*xp, win);
			m.ours[r] = ours_first_typing(xp, mixed, n);
		}
	}
	*mixed_ours = bench_median(m.ours, MIXED_ROUNDS);
	double mixed_floor = bench_median(m.floor, MIXED_ROUNDS);
	row("type mixed, per char: kasm-session-runtime (*)", *mixed_ours, 0);
	printf("%-44s %9.3f ms   ours %.2fx the floor\n", "type mixed, per char: raw XTest floor",
	       mixed_floor, mixed_floor > 0 ? *mixed_ours / mixed_floor : 0);
	free(ascii);
	free(mixed);
}

static void latency(ksr_x11 **xp, Display *raw, int n, double *mixed_ours)
{
	ksr_x11 *x = *xp;
	/* Clicks land on an idle xterm; keys and typing go to a zenity entry. */
	char *term[] = {"xterm", "-geometry", "80x24+600+300", "-title", "ksr-bench-term", NULL};
	int tpid = spawn(term, NULL);
	bench_wait_window(x, "ksr-bench-term", 90000);
	printf("per-action latency, each action until the X server processed it (%d actions, "
	       "%d rounds in turns with the floor, medians)\n",
	       n, ROUNDS);
	click_rows(x, raw, n);
	stop(tpid);

	int out = -1;
	unsigned long win;
	int zpid = zenity(x, "ksr-bench-keys", &out, &win);
	if (zpid < 0)
		return;
	key_rows(x, raw, n);
	/* On the idle entry, before the typing rows fill it (thousands of
	 * characters keep GTK busy for seconds, and the ping waits for that). */
	int cx = 0, cy = 0;
	window_center(raw, win, &cx, &cy);
	step_extras(x, win, cx, cy, n);
	type_rows(xp, raw, win, n, mixed_ours);
	close(out);
	stop(zpid);
}

/* Last: xdotool remaps one keycode per character, and the window manager
 * re-grabs its key bindings on every change; that backlog (tens of seconds for
 * a few hundred characters) would slow whatever ran after it. */
static void xdotool_mixed(ksr_x11 *x, int n, double ours)
{
	int out = -1;
	unsigned long win;
	int zpid = zenity(x, "ksr-bench-xdo-keys", &out, &win);
	if (zpid < 0)
		return;
	char *mixed = mixed_text(n);
	char *xm[] = {"xdotool", "type", "--delay", "0", mixed, NULL};
	row("type mixed, per char: xdotool type --delay 0", tool_once(xm, n), ours);
	free(mixed);
	close(out);
	stop(zpid);
}

/* Close our connection (the ms that takes: our keycode bindings released)
 * and open a new one. */
static double reopen(ksr_x11 **x)
{
	double t0 = now_ms();
	ksr_x11_close(*x);
	double ms = now_ms() - t0;
	ksr_err err = {0};
	*x = NULL;
	if (ksr_x11_open_wait(NULL, ksr_deadline_in_ms(5000), x, &err) != KSR_WAIT_READY) {
		fprintf(stderr, "bench: %s\n", err.msg);
		exit(2);
	}
	return ms;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200;
	if (n < 8 || n > 2000)
		n = 200;
	ksr_session_opts opts = {.width = 1280, .height = 720};
	ksr_session *s = NULL;
	ksr_x11 *x = NULL;
	ksr_err err = {0};
	if (ksr_session_start(&opts, ksr_deadline_in_ms(30000), &s, &err) < 0 ||
	    ksr_x11_open_wait(NULL, ksr_deadline_in_ms(5000), &x, &err) != KSR_WAIT_READY)
		return fprintf(stderr, "bench: %s\n", err.msg), 2;
	Display *raw = XOpenDisplay(NULL); /* the floor's own connection */
	if (!raw)
		return fprintf(stderr, "bench: XOpenDisplay failed\n"), 2;
	double mixed_ours = 0;
	latency(&x, raw, n, &mixed_ours);
	XCloseDisplay(raw);
	/* Our bindings of the mixed characters' keysyms stay until our connection
	 * closes: closed first, so that xdotool finds the keymap as it was. */
	double released = reopen(&x);
	xdotool_mixed(x, n, mixed_ours);
	printf("\n1000 mixed characters (ASCII, shifted, Latin-1, Greek, Cyrillic, CJK) into "
	       "zenity --entry, Return, compared with its stdout\n");
	correctness(x, 1000, false);
	double again = reopen(&x);
	released = again > released ? again : released;
	correctness(x, 1000, true);
	printf("(*) ours binds the keysyms the keymap lacks to spare keycodes once (one mapping "
	       "change, confirmed) and keeps them; they are unbound when the connection closes, "
	       "after the app has read the keys (_NET_WM_PING): that took %.1f ms at most here, "
	       "once per connection, not per text. xdotool rebinds per character and does not "
	       "wait\n",
	       released);
	ksr_x11_close(x);
	ksr_session_stop(s);
	return 0;
}
