/* What readiness costs per step (docs/scenario.md#ready-and-settled), on one
 * private Xvfb + openbox with the GTK3 test app: the ready checks (viewable,
 * _NET_WM_PING, point uncovered, DAMAGE quiet) on an idle window, the quiet
 * wait right after a repaint, and the settle after typed input, each beside
 * the behaviour before (no ready checks; settle = no window change for 50 ms,
 * at most 150 ms). Medians of N rounds. Not a test.
 *   bench_ready N TESTAPP */
#include "ksr/session.h"
#include "ksr/x11.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"

#define TITLE        "KSR Ready Bench"
#define QUIET_MS     50
#define REPAINTED_MS 15 /* after a typed char: the field has been repainted */

/* The ready phase's checks as target.c runs them; ms. */
static double ready_checks(ksr_x11 *x, unsigned long win, int px, int py)
{
	double t0 = bench_now_ms();
	bool takes = false;
	unsigned long by = 0;
	int64_t waited = 0;
	ksr_x11_quiet q = {.quiet_ms = QUIET_MS};
	ksr_deadline d = ksr_deadline_in_ms(5000);
	if (ksr_x11_window_viewable(x, win) != 1 ||
	    ksr_x11_ping_wait(x, win, d, &takes) != KSR_WAIT_READY ||
	    ksr_x11_point_covered(x, win, px, py, &by) != 0 ||
	    ksr_x11_quiet_wait(x, &win, 1, &q, ksr_deadline_in_ms(1000), &waited) != KSR_WAIT_READY)
		return -1;
	return bench_now_ms() - t0;
}

static double quiet_only(ksr_x11 *x, unsigned long win, int64_t since)
{
	double t0 = bench_now_ms();
	int64_t waited = 0;
	ksr_x11_quiet q = {.quiet_ms = QUIET_MS, .since_ms = since, .window_changes = since != 0};
	if (ksr_x11_quiet_wait(x, &win, 1, &q, ksr_deadline_in_ms(1000), &waited) != KSR_WAIT_READY)
		return -1;
	return bench_now_ms() - t0;
}

static double ping_only(ksr_x11 *x, unsigned long win)
{
	double t0 = bench_now_ms();
	bool takes = false;
	if (ksr_x11_ping_wait(x, win, ksr_deadline_in_ms(5000), &takes) != KSR_WAIT_READY)
		return -1;
	return bench_now_ms() - t0;
}

/* The settle before: no window change for 50 ms, at most 150 ms. */
static double old_settle(ksr_x11 *x)
{
	double t0 = bench_now_ms();
	ksr_x11_sync(x);
	ksr_deadline cap = ksr_deadline_in_ms(150);
	while (!ksr_deadline_passed(cap))
		if (ksr_x11_wait_change(x, ksr_deadline_min(cap, ksr_deadline_in_ms(50))) !=
		    KSR_WAIT_READY)
			break;
	return bench_now_ms() - t0;
}

static double new_settle(ksr_x11 *x, unsigned long win)
{
	ksr_x11_sync(x);
	return quiet_only(x, win, ksr_now_ms());
}

/* One character into the focused entry (x and BackSpace in turn): the app
 * repaints the field. */
static bool type_char(ksr_x11 *x, int i)
{
	ksr_err err = {0};
	return ksr_x11_type(x, i % 2 ? "\b" : "x", &err) == 0 && ksr_x11_sync(x) == 0;
}

static void row(const char *what, double *v, int n, const char *old)
{
	printf("| %s | %.3f | %.3f | %.3f | %s |\n", what, bench_median(v, n), bench_min(v, n),
	       bench_max(v, n), old);
}

static int measure(ksr_x11 *x, unsigned long win, int px, int py, int n)
{
	double *a = calloc((size_t)n, sizeof *a), *b = calloc((size_t)n, sizeof *b);
	double *c = calloc((size_t)n, sizeof *c), *e = calloc((size_t)n, sizeof *e);
	double *f = calloc((size_t)n, sizeof *f), *g = calloc((size_t)n, sizeof *g);
	int bad = 0;
	quiet_only(x, win, 0); /* the first look at the window costs an interval */
	for (int i = 0; i < n; i++) {
		a[i] = ready_checks(x, win, px, py);
		b[i] = ping_only(x, win);
		c[i] = quiet_only(x, win, 0);
		/* 15 ms: the app has repainted the field, the next step comes */
		e[i] = type_char(x, 3 * i) && ksr_sleep_ms(REPAINTED_MS) == KSR_WAIT_TIMEOUT
		               ? quiet_only(x, win, 0)
		               : -1;
		f[i] = type_char(x, 3 * i + 1) ? new_settle(x, win) : -1;
		g[i] = type_char(x, 3 * i + 2) ? old_settle(x) : -1;
		bad += a[i] < 0 || b[i] < 0 || c[i] < 0 || e[i] < 0 || f[i] < 0 || g[i] < 0;
	}
	printf("| step phase | median ms | min | max | before (old behaviour) "
	       "|\n|---|---:|---:|---:|---|\n");
	row("ready checks, idle app (viewable + ping + uncovered + quiet)", a, n, "0 (none)");
	row("  of which _NET_WM_PING", b, n, "0");
	row("  of which the DAMAGE quiet wait", c, n, "0");
	row("ready quiet wait 15 ms after a typed char (field repainted)", e, n,
	    "0: acted on a repainting app");
	row("settled after a typed char (quiet 50 ms from the input)", f, n, "see next row");
	row("settled after a typed char, old (no window change 50 ms, max 150)", g, n, "-");
	double added = bench_median(a, n), settle_new = bench_median(f, n),
	       settle_old = bench_median(g, n);
	printf("\nROW ready.idle_added %.3f\nROW ready.after_repaint %.3f\n", added,
	       bench_median(e, n));
	printf("ROW settle.new %.3f\nROW settle.old %.3f\n", settle_new, settle_old);
	printf("ROW step.idle_added %.3f\n", added + settle_new - settle_old);
	free(a), free(b), free(c), free(e), free(f), free(g);
	return bad ? fprintf(stderr, "bench: %d rounds failed\n", bad), 1 : 0;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 50;
	if (n < 5 || n > 5000)
		n = 50;
	if (argc < 3)
		return fprintf(stderr, "usage: bench_ready N TESTAPP\n"), 2;
	ksr_session_opts opts = {.width = 1280, .height = 720};
	ksr_session *s = NULL;
	ksr_x11 *x = NULL;
	ksr_err err = {0};
	if (ksr_session_start(&opts, ksr_deadline_in_ms(30000), &s, &err) < 0 ||
	    ksr_x11_open_wait(NULL, ksr_deadline_in_ms(5000), &x, &err) != KSR_WAIT_READY)
		return fprintf(stderr, "bench: %s\n", err.msg), 2;
	char *app[] = {argv[2], "--no-cursor-blink", "--title", TITLE, NULL};
	int pid = bench_spawn(app);
	unsigned long id = bench_wait_window(x, TITLE, 60000);
	ksr_window w = {.id = id};
	int rc = 2;
	if (id && ksr_x11_activate(x, id, ksr_deadline_in_ms(5000), &err) == 0 &&
	    ksr_x11_window_refresh(x, &w, &err) == 0) {
		/* the text field (test_input.py's fractions), focused by a click */
		int px = w.x + w.w / 2, py = w.y + (int)(0.47 * w.h);
		ksr_x11_click(x, px, py, 1, 1, &err);
		printf("%d rounds, the GTK3 test app idle but for the typed chars, quiet interval "
		       "%d ms\n\n",
		       n, QUIET_MS);
		rc = measure(x, id, px, py, n);
	} else {
		fprintf(stderr, "bench: the test app did not come up: %s\n", err.msg);
	}
	free(w.title), free(w.res_name), free(w.res_class);
	if (pid > 0) {
		kill(-pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	ksr_x11_close(x);
	ksr_session_stop(s);
	return rc;
}
