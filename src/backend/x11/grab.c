/* Whether input would reach the app at all: another client's active grab of
 * the keyboard or the pointer takes every XTest event the runtime sends (a
 * lock screen, another app's open menu, a stuck drag), and the step would
 * say `ok` for input that went nowhere (issue 31).
 *
 * The probe takes no grab. The X server checks "someone else holds it"
 * (AlreadyGrabbed) before the request's time, and a time later than the
 * server's clock fails (GrabInvalidTime) without activating anything; so a
 * GrabKeyboard or GrabPointer dated some days ahead answers the question in
 * one round trip, and no client sees focus or crossing events from it (a
 * real grab and release would send FocusOut/NotifyGrab to the app, which
 * closes some popups). X does not say which client holds a grab; the probe
 * only tells whether the app's own client has an override-redirect popup
 * mapped (a toolkit grabs while its menu is open: the input then goes to
 * the app) from another client's. */
#include "ksr/x11.h"
#include "backend/x11/priv.h"

#include <X11/Xutil.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Far enough ahead to be later than the server's clock whatever our
 * estimate's error, near enough (under half of the 32-bit wrap) to be read
 * as later, not as earlier. */
#define FUTURE_MS 0x40000000UL

/* A resource ID's high bits name the client that made it; the server's
 * mask (the same for every client) came with the connection setup, and Xlib
 * keeps it and our own base in the display (Xlib.h: private4 is
 * resource_mask, private3 resource_base). */
static unsigned long client_bits(ksr_x11 *x, unsigned long id)
{
	return id & ~((_XPrivDisplay)x->dpy)->private4;
}

bool ksr_x11_same_client(ksr_x11 *x, unsigned long a, unsigned long b)
{
	return a && b && client_bits(x, a) == client_bits(x, b);
}

bool ksr_x11_ours(ksr_x11 *x, unsigned long id)
{
	return id && client_bits(x, id) == client_bits(x, ((_XPrivDisplay)x->dpy)->private3);
}

/* The server's time now, from the calibration ready.c also uses (one
 * round trip the first time); CurrentTime when it cannot be read. */
static unsigned long server_now(ksr_x11 *x)
{
	if (!x->have_clock) {
		int64_t ours = 0;
		unsigned long t = ksr_x11_server_time(x, &ours);
		if (t == CurrentTime)
			return CurrentTime;
		x->clock_ours_ms = ours;
		x->clock_server_ms = t;
		x->have_clock = true;
	}
	return (x->clock_server_ms + (unsigned long)(ksr_now_ms() - x->clock_ours_ms)) &
	       0xffffffffUL;
}

static bool grabbed(ksr_x11 *x, ksr_x11_device dev)
{
	unsigned long now = server_now(x);
	/* Without a clock, a real grab at CurrentTime, released at once. */
	Time t = now == CurrentTime ? CurrentTime : (Time)((now + FUTURE_MS) & 0xffffffffUL);
	if (now != CurrentTime && t == CurrentTime)
		t = 1;
	int st = dev == KSR_X11_KEYBOARD
	                 ? XGrabKeyboard(x->dpy, x->root, False, GrabModeAsync, GrabModeAsync, t)
	                 : XGrabPointer(x->dpy, x->root, False, 0, GrabModeAsync, GrabModeAsync,
	                                None, None, t);
	if (st == GrabSuccess) {
		if (dev == KSR_X11_KEYBOARD)
			XUngrabKeyboard(x->dpy, CurrentTime);
		else
			XUngrabPointer(x->dpy, CurrentTime);
		XFlush(x->dpy);
	}
	return st == AlreadyGrabbed;
}

/* Mapped, override-redirect and on the screen with some size: a window
 * manager's or toolkit's helper window (1x1, or off the screen) is no popup. */
static bool visible_override(ksr_x11 *x, Window w)
{
	XWindowAttributes wa;
	if (!XGetWindowAttributes(x->dpy, w, &wa) || wa.map_state != IsViewable ||
	    !wa.override_redirect)
		return false;
	return wa.width > 2 && wa.height > 2 && wa.x < x->sw && wa.y < x->sh &&
	       wa.x + wa.width > 0 && wa.y + wa.height > 0;
}

static void describe_popup(ksr_x11 *x, Window w, ksr_x11_grab *g)
{
	g->popup = w;
	ksr_window win = {.id = w};
	ksr_err ignored = {0};
	if (ksr_x11_window_refresh(x, &win, &ignored) == 0) {
		snprintf(g->popup_title, sizeof g->popup_title, "%s", win.title ? win.title : "");
		g->popup_pid = win.pid;
	}
	free(win.title);
	free(win.res_name);
	free(win.res_class);
}

/* Who may hold it: the app's client when one of its override-redirect
 * windows is mapped (its menu, which grabs), else the topmost such window of
 * another client as a hint. Only asked when the device is grabbed. */
static void guess_holder(ksr_x11 *x, unsigned long app_window, ksr_x11_grab *g)
{
	Window root_ret, parent, *kids = NULL;
	unsigned int n = 0;
	if (!XQueryTree(x->dpy, x->root, &root_ret, &parent, &kids, &n))
		return;
	Window hint = None;
	for (unsigned int i = n; i-- > 0 && !x->dead;) { /* top of the stack first */
		bool app = ksr_x11_same_client(x, kids[i], app_window);
		if (ksr_x11_ours(x, kids[i]) || (!app && hint != None))
			continue; /* with a hint, only an app's popup can still change the answer */
		if (!visible_override(x, kids[i]))
			continue;
		hint = kids[i];
		if (app) {
			g->by_app = true;
			break;
		}
	}
	if (kids)
		XFree(kids);
	if (hint != None)
		describe_popup(x, hint, g);
}

int ksr_x11_grab_probe(ksr_x11 *x, ksr_x11_device dev, unsigned long app_window, ksr_x11_grab *g,
                       ksr_err *err)
{
	*g = (ksr_x11_grab){0};
	if (ksr_x11_lost(x, err) < 0)
		return -1;
	g->grabbed = grabbed(x, dev);
	if (g->grabbed)
		guess_holder(x, app_window, g);
	return ksr_x11_lost(x, err);
}
