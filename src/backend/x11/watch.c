/* A window watched for its destruction on an X connection of its own, so that
 * the connection's descriptor can sit in every wait of the run (a guard,
 * ksr/deadline.h) without taking events from the main connection's queue:
 * only the watched window's StructureNotify events ever arrive here. */
#include "ksr/x11.h"
#include "backend/x11/priv.h"

#include <X11/Xatom.h>
#include <stdlib.h>

struct ksr_x11_watch {
	Display *dpy;
	Window win;
	bool gone; /* DestroyNotify seen */
	bool dead; /* the connection broke (the X server went) */
};

static void on_watch_io_error(Display *dpy, void *data)
{
	(void)dpy;
	((ksr_x11_watch *)data)->dead = true;
}

ksr_x11_watch *ksr_x11_watch_open(const ksr_x11 *x, unsigned long window, ksr_err *err)
{
	if (ksr_x11_lost((ksr_x11 *)x, err) < 0)
		return NULL;
	Display *dpy = XOpenDisplay(x->name);
	if (!dpy) {
		ksr_err_set(err, "cannot open a second connection to X display %s", x->name);
		return NULL;
	}
	ksr_x11_watch *w = ksr_xcalloc(1, sizeof *w);
	w->dpy = dpy;
	w->win = window;
	XSetIOErrorExitHandler(dpy, on_watch_io_error, w);
	unsigned long errors = ksr_x11_error_count();
	XSelectInput(dpy, window, StructureNotifyMask);
	XSync(dpy, False);
	/* Selecting on a window already gone fails with BadWindow: it is gone. */
	w->gone = ksr_x11_error_count() != errors;
	return w;
}

int ksr_x11_watch_fd(const ksr_x11_watch *w)
{
	return w && !w->dead ? ConnectionNumber(w->dpy) : -1;
}

int ksr_x11_watch_gone(ksr_x11_watch *w)
{
	if (!w || w->dead)
		return -1;
	while (!w->gone && !w->dead && XPending(w->dpy) > 0) {
		XEvent ev;
		XNextEvent(w->dpy, &ev);
		w->gone = ev.type == DestroyNotify && ev.xdestroywindow.window == w->win;
	}
	return w->dead ? -1 : w->gone;
}

void ksr_x11_watch_close(ksr_x11_watch *w)
{
	if (!w)
		return;
	XCloseDisplay(w->dpy);
	free(w);
}

/* A CARDINAL/WINDOW list property of w on the watch's connection (free it). */
static unsigned long *list_property(Display *dpy, Window w, const char *name, Atom type,
                                    unsigned long *n)
{
	Atom actual = None;
	int format = 0;
	unsigned long after = 0;
	unsigned char *data = NULL;
	*n = 0;
	Atom prop = XInternAtom(dpy, name, False);
	if (XGetWindowProperty(dpy, w, prop, 0, 4096, False, type, &actual, &format, n, &after,
	                       &data) != Success ||
	    actual != type || format != 32) {
		if (data)
			XFree(data);
		*n = 0;
		return NULL;
	}
	return (unsigned long *)data;
}

int ksr_x11_watch_pid_windows(ksr_x11_watch *w, int pid)
{
	if (!w || w->dead || pid <= 0)
		return -1;
	unsigned long n = 0, np = 0;
	Window root = DefaultRootWindow(w->dpy);
	unsigned long *wins = list_property(w->dpy, root, "_NET_CLIENT_LIST", XA_WINDOW, &n);
	int count = 0;
	for (unsigned long i = 0; i < n; i++) {
		if (wins[i] == w->win)
			continue;
		unsigned long *p = list_property(w->dpy, wins[i], "_NET_WM_PID", XA_CARDINAL, &np);
		count += p && np == 1 && (int)p[0] == pid;
		if (p)
			XFree(p);
	}
	if (wins)
		XFree(wins);
	return w->dead ? -1 : count;
}
