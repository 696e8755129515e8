/* bench_atspi: our AT-SPI jobs on a running app, for bench/atspi.sh (which
 * runs pyatspi doing the same jobs on the same app in the same run).
 *
 *   bench_atspi walk PID RUNS        full walk (role, name, states, actions, extents)
 *   bench_atspi act PID NAME RUNS    find the control by name (a walk that stops when it is
 *                                    known, as click_element does), do its click action
 *
 * One line per run: "<ms> <nodes> <calls> <cached>" (walk; cached: 1 when the
 * app's Cache.GetItems answered) or "<ms> <find ms> <calls>" (act: the whole
 * job, then the find alone, then the D-Bus calls the job made). The bus is found and the app looked
 * up once, before the timed runs (as the pyatspi script does). GAP_MS (default 300) is the pause
 * between two acts, not timed. Whether the find picks what a full walk's finder picks is tested by
 * tests/helpers/ksr-findcheck.c. Needs the session's DBUS_SESSION_BUS_ADDRESS (or
 * AT_SPI_BUS_ADDRESS). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ksr/atspi.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int walk_runs(ksr_atspi *a, const ksr_atspi_app *app, int runs)
{
	for (int r = 0; r < runs; r++) {
		ksr_atspi_tree t = {0};
		ksr_err err = {0};
		double t0 = now_ms();
		int rc = ksr_atspi_walk(a, app, NULL, ksr_deadline_in_ms(10000), &t, &err);
		double ms = now_ms() - t0;
		if (rc < 0) {
			fprintf(stderr, "bench_atspi: walk: %s\n", err.msg);
			return 1;
		}
		printf("%.2f %zu %d %d\n", ms, t.len, t.calls, t.cached);
		fflush(stdout);
		ksr_atspi_tree_clear(&t);
	}
	return 0;
}

static int act_once(ksr_atspi *a, const ksr_atspi_app *app, const ksr_name_match *m, double *ms,
                    double *find_ms, int *calls)
{
	ksr_atspi_tree t = {0};
	ksr_err err = {0};
	ksr_deadline d = ksr_deadline_in_ms(10000);
	double t0 = now_ms();
	ksr_atspi_walk_opts wo = {.find_name = m};
	int rc = ksr_atspi_walk(a, app, &wo, d, &t, &err);
	int i = rc == 0 ? ksr_atspi_tree_find(&t, m, NULL) : -1;
	int action = i >= 0 ? ksr_atspi_pick_action(&t.nodes[i]) : -1;
	*find_ms = now_ms() - t0;
	*calls = t.calls + (action >= 0); /* and DoAction */
	if (action >= 0)
		rc = ksr_atspi_do_action(a, app, t.nodes[i].path, action, d, &err);
	*ms = now_ms() - t0;
	if (rc < 0 || action < 0)
		fprintf(stderr, "bench_atspi: act: %s\n", rc < 0 ? err.msg : "no such control");
	ksr_atspi_tree_clear(&t);
	return rc < 0 || action < 0 ? -1 : 0;
}

static int act_runs(ksr_atspi *a, const ksr_atspi_app *app, const char *name, int runs)
{
	ksr_name_match m = {.text = (char *)name};
	for (int r = 0; r < runs; r++) {
		double ms, find_ms;
		int calls = 0;
		if (act_once(a, app, &m, &ms, &find_ms, &calls) < 0)
			return 1;
		printf("%.2f %.2f %d\n", ms, find_ms, calls);
		fflush(stdout);
		/* GTK4 drops actions closer than ~250 ms apart (not timed). */
		ksr_sleep_ms(getenv("GAP_MS") ? atoi(getenv("GAP_MS")) : 300);
	}
	return 0;
}

int main(int argc, char **argv)
{
	bool act = argc == 5 && !strcmp(argv[1], "act");
	if (!act && !(argc == 4 && !strcmp(argv[1], "walk"))) {
		fprintf(stderr, "usage: bench_atspi walk PID RUNS | act PID NAME RUNS\n");
		return 2;
	}
	ksr_atspi *a = NULL;
	ksr_atspi_app app = {0};
	ksr_err err = {0};
	const char *by = NULL;
	int pid = atoi(argv[2]), rc = 1;
	ksr_atspi_opts o = {.app_pid = pid};
	if (ksr_atspi_open(&o, ksr_deadline_in_ms(5000), &a, &err) < 0 ||
	    ksr_atspi_find_app(a, pid, NULL, ksr_deadline_in_ms(5000), &app, &by, &err) < 0) {
		fprintf(stderr, "bench_atspi: %s\n", err.msg);
		goto cleanup;
	}
	rc = act ? act_runs(a, &app, argv[3], atoi(argv[4])) : walk_runs(a, &app, atoi(argv[3]));
cleanup:
	ksr_atspi_app_clear(&app);
	ksr_atspi_close(a);
	return rc;
}
