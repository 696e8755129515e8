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
 * connection with a deadline, never a sleep.
 *
 * With --skeleton, until it paints it redraws a skeleton every SKELETON_MS: a
 * few flat panels in three greys, no text (a toolkit laying its regions out
 * before it draws their content, as Blender does on a loaded machine): not
 * one flat colour, yet nothing a person would call painted.
 *
 * With --busy (and --skeleton), the skeleton is drawn once and the app then
 * works on the CPU until it paints, reading no event and repainting nothing
 * (Blender computing its interface): a window at rest on screen, its app at
 * a full core.
 *
 * With --keys it takes keyboard input: space repaints at once (another
 * colour: an input with an effect); Return retitles the window "TITLE -
 * Done" RETITLE_MS later and only then draws its new content, in
 * LOAD_FRAMES frames LOAD_FRAME_MS apart (a page whose title comes before
 * its content is drawn); every other key is ignored (an input that changes
 * nothing). */
#include <X11/Xatom.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/keysym.h>
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

#define SKELETON_MS 100

/* The skeleton: a header and a side panel over the background grey. */
static void paint_skeleton(Display *dpy, Window w, GC gc)
{
	XWindowAttributes wa;
	XGetWindowAttributes(dpy, w, &wa);
	XSetForeground(dpy, gc, colour(dpy, "gray30"));
	XFillRectangle(dpy, w, gc, 0, 0, (unsigned)wa.width, (unsigned)(wa.height / 8));
	XSetForeground(dpy, gc, colour(dpy, "gray40"));
	XFillRectangle(dpy, w, gc, 0, wa.height / 8, (unsigned)(wa.width / 5),
	               (unsigned)(wa.height - wa.height / 8));
	XFlush(dpy);
}

#define RETITLE_MS    300
#define LOAD_FRAMES   15
#define LOAD_FRAME_MS 40

/* Frame k of LOAD_FRAMES of the content after Return: a bar growing across
 * the window; the last frame also says so in text. */
static void paint_loading(Display *dpy, Window w, GC gc, int k)
{
	XWindowAttributes wa;
	XGetWindowAttributes(dpy, w, &wa);
	XSetForeground(dpy, gc, colour(dpy, "white"));
	XFillRectangle(dpy, w, gc, 0, 0, (unsigned)wa.width, (unsigned)wa.height);
	XSetForeground(dpy, gc, colour(dpy, "navy"));
	XFillRectangle(dpy, w, gc, 0, 0, (unsigned)(wa.width * k / LOAD_FRAMES),
	               (unsigned)(wa.height / 2));
	if (k == LOAD_FRAMES) {
		XSetForeground(dpy, gc, BlackPixel(dpy, DefaultScreen(dpy)));
		const char *text = "ksr-latepaint: done";
		XDrawString(dpy, w, gc, 20, wa.height * 3 / 4, text, (int)strlen(text));
	}
	XFlush(dpy);
}

static void paint_other(Display *dpy, Window w, GC gc)
{
	XWindowAttributes wa;
	XGetWindowAttributes(dpy, w, &wa);
	XSetForeground(dpy, gc, colour(dpy, "dark green"));
	XFillRectangle(dpy, w, gc, 0, 0, (unsigned)wa.width, (unsigned)wa.height);
	XFlush(dpy);
}

/* The --keys state: when the retitle is due, and the load frame drawn last. */
typedef struct keys_state {
	bool on;
	long long retitle_at; /* -1: none pending */
	int frame;            /* 0: not loading; 1..LOAD_FRAMES drawn */
	long long next_frame_at;
	bool done;
} keys_state;

static void on_key(Display *dpy, Window w, GC gc, XKeyEvent *ev, keys_state *k)
{
	KeySym sym = XLookupKeysym(ev, 0);
	if (sym == XK_space) {
		paint_other(dpy, w, gc);
	} else if (sym == XK_Return && k->retitle_at < 0 && !k->frame) {
		k->retitle_at = now_ms() + RETITLE_MS;
	}
}

/* The next thing --keys has to do at its time; returns the poll timeout. */
static int keys_tick(Display *dpy, Window w, GC gc, const char *title, keys_state *k)
{
	long long now = now_ms();
	if (k->retitle_at >= 0 && now >= k->retitle_at) {
		char done[300];
		snprintf(done, sizeof done, "%s - Done", title);
		set_names(dpy, w, done);
		XFlush(dpy);
		k->retitle_at = -1;
		k->frame = 0;
		k->next_frame_at = now + LOAD_FRAME_MS;
		k->done = false;
		k->on = true;
	}
	if (k->retitle_at < 0 && k->next_frame_at > 0 && now >= k->next_frame_at) {
		paint_loading(dpy, w, gc, ++k->frame);
		k->next_frame_at = k->frame < LOAD_FRAMES ? now + LOAD_FRAME_MS : 0;
		k->done = k->frame == LOAD_FRAMES;
	}
	long long at = k->retitle_at >= 0     ? k->retitle_at
	               : k->next_frame_at > 0 ? k->next_frame_at
	                                      : -1;
	if (at < 0)
		return -1;
	return at <= now ? 0 : (int)(at - now);
}

static int min_timeout(int a, int b)
{
	if (a < 0)
		return b;
	if (b < 0)
		return a;
	return a < b ? a : b;
}

/* CPU work until at_ms (-1: for ever), the clock its only check. */
static void work_until(long long at_ms)
{
	volatile unsigned long spin = 0;
	while (at_ms < 0 || now_ms() < at_ms)
		for (int i = 0; i < 100000; i++)
			spin++;
}

int main(int argc, char **argv)
{
	const char *title = "KSR Late Paint";
	long long after_ms = -1; /* -1: never */
	bool keys = false, skeleton = false, busy = false;
	long long skeleton_at = -1; /* the next skeleton redraw, once mapped */
	keys_state ks = {.retitle_at = -1};
	bool have_when = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--title") && i + 1 < argc) {
			title = argv[++i];
		} else if (!strcmp(argv[i], "--keys")) {
			keys = true;
		} else if (!strcmp(argv[i], "--skeleton")) {
			skeleton = true;
		} else if (!strcmp(argv[i], "--busy")) {
			busy = true;
		} else if (!strcmp(argv[i], "--never")) {
			have_when = true;
		} else {
			char *end = NULL;
			double s = strtod(argv[i], &end);
			if (!end || *end || s < 0) {
				fprintf(stderr, "usage: ksr-latepaint [--title T] [--keys] "
				                "[--skeleton [--busy]] SECONDS|--never\n");
				return 2;
			}
			after_ms = (long long)(s * 1000);
			have_when = true;
		}
	}
	if (!have_when) {
		fprintf(stderr, "usage: ksr-latepaint [--title T] [--keys] [--skeleton [--busy]] "
		                "SECONDS|--never\n");
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
	XSelectInput(dpy, w, ExposureMask | StructureNotifyMask | (keys ? KeyPressMask : 0));
	XWMHints hints = {.flags = InputHint, .input = True};
	XSetWMHints(dpy, w, &hints);
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
			if (ev.type == MapNotify && skeleton && skeleton_at < 0)
				skeleton_at = now_ms();
			if (ev.type == Expose && ev.xexpose.count == 0 && painted)
				ks.frame ? paint_loading(dpy, w, gc, ks.frame) : paint(dpy, w, gc);
			if (ev.type == KeyPress && keys)
				on_key(dpy, w, gc, &ev.xkey, &ks);
		}
		if (!painted && paint_at >= 0 && now_ms() >= paint_at) {
			painted = true;
			paint(dpy, w, gc);
			printf("painted\n");
			fflush(stdout);
			continue;
		}
		if (!painted && skeleton_at >= 0 && now_ms() >= skeleton_at) {
			paint_skeleton(dpy, w, gc);
			skeleton_at = now_ms() + SKELETON_MS;
			if (busy) {
				XSync(dpy, False); /* the skeleton is on screen */
				work_until(paint_at);
				skeleton_at = -1;
				continue;
			}
		}
		int timeout = -1;
		if (!painted && paint_at >= 0) {
			long long left = paint_at - now_ms();
			timeout = left < 0 ? 0 : (int)left;
		}
		if (!painted && skeleton_at >= 0) {
			long long left = skeleton_at - now_ms();
			timeout = min_timeout(timeout, left < 0 ? 0 : (int)left);
		}
		if (keys)
			timeout = min_timeout(timeout, keys_tick(dpy, w, gc, title, &ks));
		struct pollfd p = {.fd = ConnectionNumber(dpy), .events = POLLIN};
		/* A closed connection: the next XPending exits (Xlib's I/O error). */
		if (poll(&p, 1, timeout) < 0)
			break;
	}
	XCloseDisplay(dpy);
	return 0;
}
