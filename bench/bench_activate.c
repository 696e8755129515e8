/* A key step's window activation on both kinds of session the runtime starts:
 * Xvfb + openbox and Xtigervnc + xfwm4 (XFCE's window manager, as Kasm's
 * images run it). Two xterms; ksr_x11_activate alternately on each (the focus
 * must move: the window manager's activation is measured) and again on the
 * window that already has the focus (the cost a key step pays when nothing
 * needs to move), then the same with one key press after it. Not a test.
 *   bench_activate [ITERATIONS]   prints ROW lines and a markdown table */
#include "bench_util.h"
#include "ksr/session.h"
#include "ksr/x11.h"

#include <X11/Xlib.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define MAX_ITER 200

typedef struct figures {
	double move[MAX_ITER], stay[MAX_ITER], key[MAX_ITER], stolen[MAX_ITER];
	/* Beside them, in the same session: one round trip (the floor of a check
	 * that asks the server anything) and xdotool windowactivate --sync (a
	 * process each: the peer of a focus move). */
	double rt[MAX_ITER], xdo[MAX_ITER];
	int failed;
} figures;

/* An xterm (no toolkit) or a zenity entry (GTK3: WM_TAKE_FOCUS, user times). */
static int app(bool gtk, const char *title, const char *geom)
{
	char *xt[] = {"xterm", "-T", (char *)title, "-geometry", (char *)geom, NULL};
	char *zen[] = {"zenity", "--entry", "--title", (char *)title, NULL};
	return bench_spawn(gtk ? zen : xt);
}

static double activate_ms(ksr_x11 *x, unsigned long w, figures *f)
{
	ksr_err err = {0};
	double t0 = bench_now_ms();
	if (ksr_x11_activate(x, w, ksr_deadline_in_ms(5000), &err) < 0) {
		fprintf(stderr, "bench_activate: %s\n", err.msg);
		f->failed++;
	}
	return bench_now_ms() - t0;
}

/* floor: a bare Xlib connection to the same display, whose XSync is always a
 * round trip (ksr_x11_sync skips its own when nothing was sent since the
 * server last answered: it could not be the floor). */
static void measure(ksr_x11 *x, Display *floor, unsigned long a, unsigned long b, int n, figures *f)
{
	ksr_err err = {0};
	for (int i = 0; i < n; i++) {
		f->move[i] = activate_ms(x, i % 2 ? a : b, f);
		f->stay[i] = activate_ms(x, i % 2 ? a : b, f);
		double t0 = bench_now_ms();
		activate_ms(x, i % 2 ? a : b, f);
		if (ksr_x11_key_chords(x, "shift", &err) < 0)
			f->failed++;
		f->key[i] = bench_now_ms() - t0;
		/* Another client set the focus itself (xdotool windowfocus: its
		 * XSetInputFocus at CurrentTime), behind the window manager's back. */
		char id[32];
		snprintf(id, sizeof id, "%lu", i % 2 ? b : a);
		char *steal[] = {"xdotool", "windowfocus", "--sync", id, NULL};
		bench_run(steal);
		f->stolen[i] = activate_ms(x, i % 2 ? a : b, f);
		t0 = bench_now_ms();
		XSync(floor, False);
		f->rt[i] = bench_now_ms() - t0;
		snprintf(id, sizeof id, "%lu", i % 2 ? b : a); /* the other one: the focus moves */
		char *xact[] = {"xdotool", "windowactivate", "--sync", id, NULL};
		f->xdo[i] = bench_run(xact);
		activate_ms(x, i % 2 ? a : b, f); /* back, so that the next move moves */
	}
}

static int one_kind(ksr_server_kind server, ksr_wm_kind wm, bool gtk, int n, figures *f, char *name,
                    size_t cap)
{
	ksr_session_opts opts = {.width = 1280, .height = 720, .server = server, .wm = wm};
	ksr_session *sess = NULL;
	ksr_x11 *x = NULL;
	ksr_err err = {0};
	if (ksr_session_start(&opts, ksr_deadline_in_ms(30000), &sess, &err) < 0 ||
	    ksr_x11_open_wait(NULL, ksr_deadline_in_ms(5000), &x, &err) != KSR_WAIT_READY) {
		fprintf(stderr, "bench_activate: %s\n", err.msg);
		ksr_session_stop(sess);
		return -1;
	}
	snprintf(name, cap, "%s + %s, two %s", ksr_session_server_name(sess),
	         ksr_session_wm_name(sess), gtk ? "zenity (GTK3)" : "xterm");
	int pa = app(gtk, "bench-activate-a", "80x24+0+0"),
	    pb = app(gtk, "bench-activate-b", "80x24+300+200");
	unsigned long a = bench_wait_window(x, "bench-activate-a", 20000);
	unsigned long b = bench_wait_window(x, "bench-activate-b", 20000);
	Display *floor = XOpenDisplay(NULL);
	int rc = a && b && floor ? 0 : -1;
	if (rc == 0)
		measure(x, floor, a, b, n, f);
	else
		fprintf(stderr, "bench_activate: the xterms did not map on %s\n", name);
	kill(-pa, SIGKILL), waitpid(pa, NULL, 0);
	kill(-pb, SIGKILL), waitpid(pb, NULL, 0);
	if (floor)
		XCloseDisplay(floor);
	ksr_x11_close(x);
	ksr_session_stop(sess);
	return rc;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20;
	if (n < 1 || n > MAX_ITER)
		n = 20;
	static const struct {
		ksr_server_kind server;
		ksr_wm_kind wm;
		bool gtk;
		const char *key;
	} kinds[] = {{KSR_SERVER_XVFB, KSR_WM_OPENBOX, false, "openbox.xterm"},
	             {KSR_SERVER_XVFB, KSR_WM_OPENBOX, true, "openbox.zenity"},
	             {KSR_SERVER_XVNC, KSR_WM_XFWM4, false, "xfwm4.xterm"},
	             {KSR_SERVER_XVNC, KSR_WM_XFWM4, true, "xfwm4.zenity"}};
	printf("window activation (ksr_x11_activate), median of %d, ms\n\n", n);
	printf("| session | focus moves | after another client set the focus | already focused |"
	       " already focused + one key | failures |\n|---|---:|---:|---:|---:|---:|\n");
	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
		static figures f;
		memset(&f, 0, sizeof f);
		char name[64];
		unsetenv("DISPLAY");
		if (one_kind(kinds[k].server, kinds[k].wm, kinds[k].gtk, n, &f, name, sizeof name) <
		    0) {
			printf("| %s | n/a | n/a | n/a | n/a | |\n", kinds[k].key);
			continue;
		}
		double mv = bench_median(f.move, n), st = bench_median(f.stay, n),
		       ky = bench_median(f.key, n), sn = bench_median(f.stolen, n);
		printf("| %s | %.2f (max %.1f) | %.2f (max %.1f) | %.3f | %.3f | %d |\n", name, mv,
		       bench_max(f.move, n), sn, bench_max(f.stolen, n), st, ky, f.failed);
		fprintf(stderr,
		        "ROW activate.%s.move %.3f\nROW activate.%s.stolen %.3f\n"
		        "ROW activate.%s.stay %.3f\nROW activate.%s.rt %.3f\n"
		        "ROW activate.%s.xdotool %.3f\n",
		        kinds[k].key, mv, kinds[k].key, sn, kinds[k].key, st, kinds[k].key,
		        bench_median(f.rt, n), kinds[k].key, bench_median(f.xdo, n));
	}
	return 0;
}
