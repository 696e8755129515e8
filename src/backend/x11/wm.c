/* Which window manager manages the display (EWMH): the window named by the
 * root's _NET_SUPPORTING_WM_CHECK when it names itself too (a window manager
 * that died leaves the root's property behind, naming a window that is gone),
 * its _NET_WM_NAME, and the owner of the ICCCM selection WM_S<screen>. */
#include "ksr/x11.h"
#include "backend/x11/priv.h"

#include <X11/Xatom.h>
#include <stdio.h>
#include <stdlib.h>

/* The WINDOW property prop of w (None when absent or not one window). */
static Window window_property(ksr_x11 *x, Window w, Atom prop)
{
	Atom type = None;
	int format = 0;
	unsigned long n = 0, after = 0;
	unsigned char *data = NULL;
	Window v = None;
	if (XGetWindowProperty(x->dpy, w, prop, 0, 1, False, XA_WINDOW, &type, &format, &n, &after,
	                       &data) == Success &&
	    type == XA_WINDOW && format == 32 && n == 1)
		v = (Window)((unsigned long *)data)[0];
	if (data)
		XFree(data);
	return v;
}

int ksr_x11_wm_read(ksr_x11 *x, ksr_x11_wm *out, ksr_err *err)
{
	*out = (ksr_x11_wm){0};
	if (ksr_x11_lost(x, err) < 0)
		return -1;
	Atom check = x->atoms[KSR_NET_SUPPORTING_WM_CHECK];
	Window w = window_property(x, x->root, check);
	/* A window that is gone reads as no property (BadWindow, counted by the
	 * process-wide error handler): no check window. */
	if (w != None && window_property(x, w, check) == w) {
		out->check = w;
		char *name = ksr_x11_title(x, w);
		snprintf(out->name, sizeof out->name, "%s", name ? name : "");
		free(name);
	}
	char sel[32];
	snprintf(sel, sizeof sel, "WM_S%d", x->screen);
	out->owner = XGetSelectionOwner(x->dpy, XInternAtom(x->dpy, sel, False));
	XSync(x->dpy, False);
	return ksr_x11_lost(x, err);
}
