/* ksr-hostile-x: another X client in the session that takes the input away
 * from the app under test, for the runtime's "input that did not land is not
 * a pass" tests (issue 31).
 *
 *   ksr-hostile-x --grab-keyboard            an active keyboard grab (root)
 *   ksr-hostile-x --grab-pointer             an active pointer grab (root)
 *   ksr-hostile-x --override WxH+X+Y         an override-redirect window there
 *   ksr-hostile-x --map-on-key KEYSYM        at each press of the key (anywhere),
 *                                            a new 8x8 override-redirect window
 *                                            in the screen's bottom right corner;
 *                                            the press still goes on to the focus
 *                                            (a passive grab, replayed), as a
 *                                            hotkey daemon's popup comes with
 *                                            whatever the app does
 *
 * Prints "ready" on stdout once the grab is held or the window is mapped,
 * then holds it until killed (reading its X connection, so it is not a
 * stopped client). The window is titled "KSR Hostile Overlay" with
 * _NET_WM_PID set. A grab another client holds is retried for up to 10 s
 * (poll(2) with a deadline, never a sleep). */
#include <X11/Xatom.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define GRAB_TRY_MS 10000

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait up to ms for the X connection to have something (or just ms). */
static void wait_x(Display *dpy, int ms)
{
	struct pollfd p = {.fd = ConnectionNumber(dpy), .events = POLLIN};
	poll(&p, 1, ms);
	while (XPending(dpy) > 0) {
		XEvent ev;
		XNextEvent(dpy, &ev);
	}
}

static int grab(Display *dpy, int keyboard)
{
	Window root = DefaultRootWindow(dpy);
	long long until = now_ms() + GRAB_TRY_MS;
	for (;;) {
		int st = keyboard ? XGrabKeyboard(dpy, root, False, GrabModeAsync, GrabModeAsync,
		                                  CurrentTime)
		                  : XGrabPointer(dpy, root, False,
		                                 ButtonPressMask | ButtonReleaseMask, GrabModeAsync,
		                                 GrabModeAsync, None, None, CurrentTime);
		if (st == GrabSuccess)
			return 0;
		if (now_ms() >= until) {
			fprintf(stderr, "ksr-hostile-x: the %s grab failed (%d)\n",
			        keyboard ? "keyboard" : "pointer", st);
			return -1;
		}
		wait_x(dpy, 50);
	}
}

static void set_names(Display *dpy, Window w)
{
	const char *title = "KSR Hostile Overlay";
	XStoreName(dpy, w, title);
	Atom utf8 = XInternAtom(dpy, "UTF8_STRING", False);
	XChangeProperty(dpy, w, XInternAtom(dpy, "_NET_WM_NAME", False), utf8, 8, PropModeReplace,
	                (const unsigned char *)title, (int)strlen(title));
	long pid = (long)getpid();
	XChangeProperty(dpy, w, XInternAtom(dpy, "_NET_WM_PID", False), XA_CARDINAL, 32,
	                PropModeReplace, (const unsigned char *)&pid, 1);
}

static int overlay(Display *dpy, const char *geometry)
{
	int x = 0, y = 0;
	unsigned int w = 0, h = 0;
	int got = XParseGeometry(geometry, &x, &y, &w, &h);
	if (!(got & WidthValue) || !(got & HeightValue) || w == 0 || h == 0) {
		fprintf(stderr, "ksr-hostile-x: bad geometry %s (WxH+X+Y)\n", geometry);
		return -1;
	}
	int scr = DefaultScreen(dpy);
	XSetWindowAttributes a = {.override_redirect = True,
	                          .background_pixel = WhitePixel(dpy, scr),
	                          .event_mask = StructureNotifyMask};
	Window win = XCreateWindow(dpy, DefaultRootWindow(dpy), x, y, w, h, 0, CopyFromParent,
	                           InputOutput, CopyFromParent,
	                           CWOverrideRedirect | CWBackPixel | CWEventMask, &a);
	set_names(dpy, win);
	XMapRaised(dpy, win);
	for (long long until = now_ms() + GRAB_TRY_MS; now_ms() < until;) {
		XEvent ev;
		if (XCheckTypedWindowEvent(dpy, win, MapNotify, &ev))
			return 0;
		struct pollfd p = {.fd = ConnectionNumber(dpy), .events = POLLIN};
		XFlush(dpy);
		poll(&p, 1, 50);
	}
	fprintf(stderr, "ksr-hostile-x: the window was not mapped\n");
	return -1;
}

/* A passive grab of the key on the root (any modifiers), synchronous, so
 * that each press is seen here first and then replayed to where it was
 * going. */
static int map_on_key(Display *dpy, const char *name)
{
	KeySym ks = XStringToKeysym(name);
	KeyCode kc = ks == NoSymbol ? 0 : XKeysymToKeycode(dpy, ks);
	if (!kc) {
		fprintf(stderr, "ksr-hostile-x: no key %s\n", name);
		return -1;
	}
	XGrabKey(dpy, kc, AnyModifier, DefaultRootWindow(dpy), False, GrabModeAsync, GrabModeSync);
	XSync(dpy, False);
	printf("ready\n");
	fflush(stdout);
	int scr = DefaultScreen(dpy);
	for (;;) {
		XEvent ev;
		XNextEvent(dpy, &ev);
		if (ev.type != KeyPress)
			continue;
		XSetWindowAttributes a = {.override_redirect = True,
		                          .background_pixel = BlackPixel(dpy, scr)};
		Window w = XCreateWindow(dpy, DefaultRootWindow(dpy), DisplayWidth(dpy, scr) - 8,
		                         DisplayHeight(dpy, scr) - 8, 8, 8, 0, CopyFromParent,
		                         InputOutput, CopyFromParent,
		                         CWOverrideRedirect | CWBackPixel, &a);
		set_names(dpy, w);
		XMapRaised(dpy, w);
		XAllowEvents(dpy, ReplayKeyboard, ev.xkey.time);
		XSync(dpy, False);
		fprintf(stderr, "ksr-hostile-x: mapped window 0x%lx for %s\n", w, name);
	}
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: ksr-hostile-x --grab-keyboard | --grab-pointer | "
		                "--override WxH+X+Y | --map-on-key KEYSYM\n");
		return 2;
	}
	Display *dpy = XOpenDisplay(NULL);
	if (!dpy) {
		fprintf(stderr, "ksr-hostile-x: cannot open the display\n");
		return 1;
	}
	int rc;
	if (!strcmp(argv[1], "--grab-keyboard"))
		rc = grab(dpy, 1);
	else if (!strcmp(argv[1], "--grab-pointer"))
		rc = grab(dpy, 0);
	else if (!strcmp(argv[1], "--override") && argc > 2)
		rc = overlay(dpy, argv[2]);
	else if (!strcmp(argv[1], "--map-on-key") && argc > 2)
		return map_on_key(dpy, argv[2]) < 0 ? 1 : 0;
	else {
		fprintf(stderr, "ksr-hostile-x: unknown mode %s\n", argv[1]);
		return 2;
	}
	if (rc < 0)
		return 1;
	XSync(dpy, False);
	printf("ready\n");
	fflush(stdout);
	for (;;)
		wait_x(dpy, -1);
}
