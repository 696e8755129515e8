/* ksr-latepaint: a plain Xlib window that stays one flat colour (its
 * background pixel, as an app that has not rendered yet) and paints later,
 * for the runtime's "painted before judged" tests.
 *
 *   ksr-latepaint [--title TITLE] SECONDS   paint SECONDS after the window is
 *                                            mapped (0: at once)
 *   ksr-latepaint [--title TITLE] --never   never paint
 *
 * Window "KSR Late Paint" (--title), WM_CLASS "ksr-latepaint",
 * "Ksr-latepaint", _NET_WM_PID set. Painted, it shows coloured bars and a
 * line of text, and redraws them on every Expose. Waits are poll(2) on the X
 * connection with a deadline, never a sleep. */
#include <X11/Xatom.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void set_names(Display *dpy, Window w, const char *title)
{
	XStoreName(dpy, w, title);
	Atom utf8 = XInternAtom(dpy, "UTF8_STRING", False);
	XChangeProperty(dpy, w, XInternAtom(dpy, "_NET_WM_NAME", False), utf8, 8, PropModeReplace,
	                (const unsigned char *)title, (int)strlen(title));
	XClassHint hint = {.res_name = "ksr-latepaint", .res_class = "Ksr-latepaint"};
	XSetClassHint(dpy, w, &hint);
	long pid = (long)getpid();
	XChangeProperty(dpy, w, XInternAtom(dpy, "_NET_WM_PID", False), XA_CARDINAL, 32,
	                PropModeReplace, (const unsigned char *)&pid, 1);
}

static unsigned long colour(Display *dpy, const char *name)
{
	XColor c, exact;
	Colormap cmap = DefaultColormap(dpy, DefaultScreen(dpy));
	return XAllocNamedColor(dpy, cmap, name, &c, &exact) ? c.pixel
	                                                     : BlackPixel(dpy, DefaultScreen(dpy));
}

static void paint(Display *dpy, Window w, GC gc)
{
	static const char *const bars[] = {"red", "green", "blue", "orange", "purple"};
	XWindowAttributes wa;
	XGetWindowAttributes(dpy, w, &wa);
	int bar_h = wa.height / 10 > 0 ? wa.height / 10 : 1;
	for (int i = 0; i < 5; i++) {
		XSetForeground(dpy, gc, colour(dpy, bars[i]));
		XFillRectangle(dpy, w, gc, 0, i * bar_h, (unsigned)wa.width, (unsigned)bar_h);
	}
	XSetForeground(dpy, gc, BlackPixel(dpy, DefaultScreen(dpy)));
	const char *text = "ksr-latepaint: painted";
	XDrawString(dpy, w, gc, 20, 6 * bar_h + 20, text, (int)strlen(text));
	XFlush(dpy);
}

int main(int argc, char **argv)
{
	const char *title = "KSR Late Paint";
	long long after_ms = -1; /* -1: never */
	bool have_when = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--title") && i + 1 < argc) {
			title = argv[++i];
		} else if (!strcmp(argv[i], "--never")) {
			have_when = true;
		} else {
			char *end = NULL;
			double s = strtod(argv[i], &end);
			if (!end || *end || s < 0) {
				fprintf(stderr,
				        "usage: ksr-latepaint [--title T] SECONDS|--never\n");
				return 2;
			}
			after_ms = (long long)(s * 1000);
			have_when = true;
		}
	}
	if (!have_when) {
		fprintf(stderr, "usage: ksr-latepaint [--title T] SECONDS|--never\n");
		return 2;
	}
	Display *dpy = XOpenDisplay(NULL);
	if (!dpy) {
		fprintf(stderr, "ksr-latepaint: cannot open the display\n");
		return 1;
	}
	int scr = DefaultScreen(dpy);
	/* A mid grey, as an unrendered toolkit window often is. */
	Window w = XCreateSimpleWindow(dpy, RootWindow(dpy, scr), 0, 0, 480, 320, 0,
	                               BlackPixel(dpy, scr), colour(dpy, "gray50"));
	set_names(dpy, w, title);
	XSelectInput(dpy, w, ExposureMask | StructureNotifyMask);
	GC gc = XCreateGC(dpy, w, 0, NULL);
	XMapWindow(dpy, w);
	XFlush(dpy);

	long long paint_at = -1; /* set once mapped */
	bool painted = false;
	for (;;) {
		while (XPending(dpy)) {
			XEvent ev;
			XNextEvent(dpy, &ev);
			if (ev.type == MapNotify && paint_at < 0 && after_ms >= 0)
				paint_at = now_ms() + after_ms;
			if (ev.type == Expose && ev.xexpose.count == 0 && painted)
				paint(dpy, w, gc);
		}
		if (!painted && paint_at >= 0 && now_ms() >= paint_at) {
			painted = true;
			paint(dpy, w, gc);
			printf("painted\n");
			fflush(stdout);
			continue;
		}
		int timeout = -1;
		if (!painted && paint_at >= 0) {
			long long left = paint_at - now_ms();
			timeout = left < 0 ? 0 : (int)left;
		}
		struct pollfd p = {.fd = ConnectionNumber(dpy), .events = POLLIN};
		/* A closed connection: the next XPending exits (Xlib's I/O error). */
		if (poll(&p, 1, timeout) < 0)
			break;
	}
	XCloseDisplay(dpy);
	return 0;
}
