/* Process start -> window detected, on one private Xvfb with openbox.
 *
 * Each iteration starts `xdotool search --sync --name TITLE` (the established
 * way to wait for a window), then the app; three observers watch the same map:
 *   - the true map time: a separate X client selecting SubstructureNotify on
 *     the root timestamps the MapNotify of the app's (framed) window on arrival;
 *   - ours: what the runtime's app wait does, ksr_proc_find + ksr_x11_list_windows
 *     on every ksr_x11_wait_change wake-up (and on a 250 ms timer);
 *   - xdotool: the moment its process exits (--onlyvisible: without it, xdotool
 *     also finds windows that exist but are not mapped yet).
 * Prints delays after the map as a markdown table; not a test. */
#include "bench_util.h"
#include "ksr/pattern.h"
#include "ksr/proc.h"
#include "ksr/session.h"
#include "ksr/x11.h"

#include <X11/Xlib.h>
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_ITER 100

typedef struct map_event {
	double t;
	unsigned long window;
} map_event;

typedef struct app_kind {
	const char *label;   /* row label */
	const char *process; /* process: pattern, as a scenario would give it */
	char *argv[12];      /* TITLE is replaced with the iteration's title */
} app_kind;

/* The true map time, from its own process and connection so that our
 * detection loop cannot delay it. Writes one map_event per non-override-
 * redirect MapNotify on the root to fd; one byte first when it listens. */
static int start_observer(int fd)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	/* The timestamp is taken when the event is read: under load a normal
	 * process could read it late. A real-time priority (root) keeps it honest;
	 * without one the figures are still printed, flagged in the table note. */
	struct sched_param sp = {.sched_priority = 1};
	if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0 && write(fd, "n", 1) != 1)
		_exit(1);
	Display *d = XOpenDisplay(NULL);
	if (!d)
		_exit(1);
	XSelectInput(d, DefaultRootWindow(d), SubstructureNotifyMask);
	XSync(d, False);
	if (write(fd, "r", 1) != 1)
		_exit(1);
	for (;;) {
		XEvent ev;
		XNextEvent(d, &ev);
		if (ev.type != MapNotify || ev.xmap.override_redirect)
			continue;
		map_event m = {bench_now_ms(), ev.xmap.window};
		if (write(fd, &m, sizeof m) != (ssize_t)sizeof m)
			_exit(0);
	}
}

/* Runs xdotool and reports the moment it exited (its own process waits, so the
 * figure is exact whatever the bench is doing then); -1 when it failed. */
static int start_xdotool(const char *title, int fd)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	char re[128];
	snprintf(re, sizeof re, "^%s$", title);
	char *argv[] = {"xdotool", "search", "--sync", "--onlyvisible", "--name", re, NULL};
	int status = 0;
	pid_t tool = bench_spawn(argv);
	waitpid(tool, &status, 0);
	double t = WIFEXITED(status) && WEXITSTATUS(status) == 0 ? bench_now_ms() : -1;
	_exit(write(fd, &t, sizeof t) == (ssize_t)sizeof t ? 0 : 1);
}

static int read_timed(int fd, void *buf, size_t len, int timeout_ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	if (poll(&p, 1, timeout_ms) <= 0)
		return -1;
	return read(fd, buf, len) == (ssize_t)len ? 0 : -1;
}

/* Throw away map events of earlier iterations (and the WM's own). */
static void drain(int fd)
{
	map_event m;
	while (read_timed(fd, &m, sizeof m, 0) == 0)
		;
}

/* The runtime's app wait reduced to its X and /proc work: one scan. */
static bool app_present(ksr_x11 *x, const ksr_pattern *proc, const char *title, unsigned long *id)
{
	ksr_proc_list procs = {0};
	ksr_window_list wins = {0};
	ksr_err err = {0};
	ksr_proc_find(proc, NULL, &procs, &err);
	ksr_x11_list_windows(x, &wins, &err);
	bool found = false;
	for (size_t i = 0; i < wins.len && !found; i++) {
		found = wins.items[i].title && !strcmp(wins.items[i].title, title) && procs.len > 0;
		*id = wins.items[i].id;
	}
	ksr_proc_list_clear(&procs);
	ksr_window_list_clear(&wins);
	return found;
}

static double wait_ours(ksr_x11 *x, const ksr_pattern *proc, const char *title, unsigned long *id,
                        double *scan)
{
	ksr_deadline end = ksr_deadline_in_ms(10000);
	for (;;) {
		double t0 = bench_now_ms();
		if (app_present(x, proc, title, id)) {
			*scan = bench_now_ms() - t0;
			break;
		}
		ksr_deadline tick = ksr_deadline_min(end, ksr_deadline_in_ms(250));
		ksr_wait w = ksr_x11_wait_change(x, tick);
		if (w == KSR_WAIT_TIMEOUT && ksr_deadline_passed(end))
			return -1;
		if (w != KSR_WAIT_READY && w != KSR_WAIT_TIMEOUT)
			return -1;
	}
	return bench_now_ms();
}

/* The top-level ancestor of a client window: the WM's frame, which is what
 * the root sees mapped (the client itself when there is no frame). */
static unsigned long frame_of(Display *d, unsigned long client)
{
	Window w = client, root = 0, parent = 0, *kids = NULL;
	unsigned int n = 0;
	while (XQueryTree(d, w, &root, &parent, &kids, &n)) {
		if (kids)
			XFree(kids);
		if (parent == root || parent == 0)
			return w;
		w = parent;
	}
	return client;
}

/* The MapNotify of this window (frame or client) from the observer. */
static double map_time(int fd, unsigned long frame, unsigned long client)
{
	map_event m;
	while (read_timed(fd, &m, sizeof m, 5000) == 0)
		if (m.window == frame || m.window == client)
			return m.t;
	return -1;
}

/* Until no window has the title any more, so iterations do not overlap. */
static void wait_gone(ksr_x11 *x, const char *title)
{
	ksr_deadline end = ksr_deadline_in_ms(5000);
	for (;;) {
		ksr_window_list l = {0};
		ksr_err err = {0};
		bool there = false;
		ksr_x11_list_windows(x, &l, &err);
		for (size_t i = 0; i < l.len; i++)
			there |= l.items[i].title && !strcmp(l.items[i].title, title);
		ksr_window_list_clear(&l);
		if (!there || ksr_x11_wait_change(x, end) != KSR_WAIT_READY)
			return;
	}
}

typedef struct samples {
	double map[MAX_ITER], ours[MAX_ITER], scan[MAX_ITER], xdo[MAX_ITER];
	int n, n_xdo;
} samples;

static int one_iteration(ksr_x11 *x, Display *d, const app_kind *k, const ksr_pattern *proc,
                         int obs_fd, int iter, samples *s)
{
	char title[64];
	snprintf(title, sizeof title, "ksr-bench-%d-%d", (int)getpid(), iter);
	char *argv[12];
	for (int i = 0; i < 12; i++)
		argv[i] = k->argv[i] && !strcmp(k->argv[i], "TITLE") ? title : k->argv[i];
	int xp[2];
	if (pipe(xp) < 0)
		return -1;
	drain(obs_fd);
	int xdo = start_xdotool(title, xp[1]);
	close(xp[1]);
	double t0 = bench_now_ms();
	int app = bench_spawn(argv);
	unsigned long id = 0;
	double scan = 0;
	double seen = wait_ours(x, proc, title, &id, &scan);
	double mapped = seen < 0 ? -1 : map_time(obs_fd, frame_of(d, id), id);
	double t_xdo = -1;
	if (read_timed(xp[0], &t_xdo, sizeof t_xdo, 5000) < 0)
		t_xdo = -1;
	close(xp[0]);
	kill(xdo, SIGKILL);
	waitpid(xdo, NULL, 0);
	kill(-app, SIGTERM);
	waitpid(app, NULL, 0);
	wait_gone(x, title);
	if (seen < 0 || mapped < t0)
		return -1;
	s->map[s->n] = mapped - t0;
	s->ours[s->n] = seen - mapped;
	s->scan[s->n] = scan;
	if (t_xdo >= 0)
		s->xdo[s->n_xdo++] = t_xdo - mapped;
	s->n++;
	return 0;
}

static void print_rows(const app_kind *k, const samples *s)
{
	double mx = bench_median(s->xdo, s->n_xdo), mo = bench_median(s->ours, s->n);
	printf("| %s | spawn → map (MapNotify seen by a separate client) | %.1f | %.1f – %.1f | "
	       "|\n",
	       k->label, bench_median(s->map, s->n), bench_min(s->map, s->n),
	       bench_max(s->map, s->n));
	printf("| %s | map → seen by **ours** (wait_change + list_windows + /proc) | %.2f | "
	       "%.2f – %.2f | 1.0 |\n",
	       k->label, mo, bench_min(s->ours, s->n), bench_max(s->ours, s->n));
	printf("| %s | of which the successful scan (/proc + window list) | %.2f | %.2f – %.2f | "
	       "|\n",
	       k->label, bench_median(s->scan, s->n), bench_min(s->scan, s->n),
	       bench_max(s->scan, s->n));
	if (s->n_xdo > 0)
		printf("| %s | map → seen by `xdotool search --sync --onlyvisible` | %.1f | %.1f – "
		       "%.1f | "
		       "%s%.0fx "
		       "|\n",
		       k->label, mx, bench_min(s->xdo, s->n_xdo), bench_max(s->xdo, s->n_xdo),
		       mo > 0 ? "" : "n/a ", mo > 0 ? mx / mo : 0);
	else
		printf("| %s | map → seen by `xdotool search --sync --onlyvisible` | n/a | | |\n",
		       k->label);
}

static int bench_app(ksr_x11 *x, Display *d, const app_kind *k, int obs_fd, int n)
{
	ksr_err err = {0};
	ksr_pattern *proc = ksr_pattern_compile(k->process, &err);
	samples *s = calloc(1, sizeof *s);
	/* One untimed run first: the page cache and fontconfig warm up. */
	one_iteration(x, d, k, proc, obs_fd, 0, s);
	memset(s, 0, sizeof *s);
	for (int i = 1; i <= n; i++)
		if (one_iteration(x, d, k, proc, obs_fd, i, s) < 0)
			fprintf(stderr, "bench_window: %s iteration %d missed the window\n",
			        k->label, i);
	if (s->n > 0)
		print_rows(k, s);
	free(s);
	ksr_pattern_free(proc);
	return 0;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	if (n < 1 || n > MAX_ITER)
		n = 10;
	ksr_session_opts opts;
	if (bench_session_opts(&opts, "bench_window") < 0)
		return 2;
	int w = opts.width, h = opts.height;
	ksr_session *sess = NULL;
	ksr_x11 *x = NULL;
	ksr_err err = {0};
	if (ksr_session_start(&opts, ksr_deadline_in_ms(30000), &sess, &err) < 0 ||
	    ksr_x11_open_wait(NULL, ksr_deadline_in_ms(5000), &x, &err) != KSR_WAIT_READY)
		return fprintf(stderr, "bench_window: %s\n", err.msg), 2;
	printf("session: %s + %s\n", ksr_session_server_name(sess), ksr_session_wm_name(sess));
	int op[2];
	char ready;
	if (pipe(op) < 0)
		return 2;
	int obs = start_observer(op[1]);
	close(op[1]);
	bool realtime = true;
	for (;;) {
		if (read_timed(op[0], &ready, 1, 5000) < 0)
			return fprintf(stderr, "bench_window: the observer did not start\n"), 2;
		if (ready == 'r')
			break;
		realtime = false;
	}
	Display *d = XOpenDisplay(NULL);
	if (!d)
		return fprintf(stderr, "bench_window: cannot open the display\n"), 2;
	static const app_kind apps[] = {
	        {"xterm", "^xterm$", {"xterm", "-T", "TITLE", "-e", "sleep", "60", NULL}},
	        {"zenity (GTK3)",
	         "^zenity$",
	         {"zenity", "--info", "--title", "TITLE", "--text", "bench", NULL}},
	};
	printf("\nprocess start → window detected, %dx%d, openbox, median of %d (ms)\n\n", w, h, n);
	printf("| app | interval | median ms | min – max | xdotool / ours |\n");
	printf("|---|---|---:|---:|---:|\n");
	for (size_t i = 0; i < sizeof apps / sizeof apps[0]; i++)
		bench_app(x, d, &apps[i], op[0], n);
	printf("\nThe map time is a separate X client's MapNotify for the app's frame, stamped on "
	       "arrival%s.\n",
	       realtime ? " (SCHED_FIFO, so a busy machine does not delay it)"
	                : " (no real-time priority here: under load it may be late, so ours may "
	                  "look early)");
	XCloseDisplay(d);
	kill(obs, SIGKILL);
	waitpid(obs, NULL, 0);
	ksr_x11_close(x);
	ksr_session_stop(sess);
	return 0;
}
