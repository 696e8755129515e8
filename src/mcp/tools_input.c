/* input.*: XTest actions at screenshot coordinates, through the same x11
 * backend the run's click/type/key steps use. */
#include <stdio.h>
#include <string.h>

#include "mcp/mcp_priv.h"

/* As the run's ready phase (src/run/actions/target_input.c): a grab that ends
 * by itself (the window manager's click-to-focus right after a click) gets
 * this long, asked again every POLL_MS. */
#define GRAB_GRACE_MS 500
#define GRAB_POLL_MS  50

static int button_of(const cJSON *a)
{
	const char *b = mcp_arg_str(a, "button");
	return !b || !strcmp(b, "left") ? 1 : !strcmp(b, "middle") ? 2 : 3;
}

/* The point's structured answer, once the server has processed the input. */
static int done_at(ksr_mcp *m, int rc, const ksr_err *e, int px, int py, mcp_result *r)
{
	if (rc < 0 || ksr_x11_sync(m->x) < 0)
		return mcp_fail(r, "the input failed: %s", rc < 0 ? e->msg : "display lost");
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "screen_x", px);
	cJSON_AddNumberToObject(o, "screen_y", py);
	return mcp_structured(r, o);
}

static int done(ksr_mcp *m, int rc, const ksr_err *e, mcp_result *r)
{
	if (rc < 0 || ksr_x11_sync(m->x) < 0)
		return mcp_fail(r, "the input failed: %s", rc < 0 ? e->msg : "display lost");
	cJSON *o = cJSON_CreateObject();
	cJSON_AddBoolToObject(o, "ok", true);
	return mcp_structured(r, o);
}

/* Whether input on dev would land where the agent means it: under another
 * client's active grab every XTest event goes to that client (issue 31). A
 * grab whose client shows an override-redirect window (an open menu) takes
 * the input in that window, which is on the screen the agent looks at, so it
 * passes. A grab with nothing of
 * its own on screen is a tool error: the input would go nowhere visible.
 * The server has no app to tell apart, so a grab is judged by its popup
 * alone. -1 with r's error set. */
static int input_lands(ksr_mcp *m, ksr_x11_device dev, mcp_result *r)
{
	ksr_deadline grace = ksr_deadline_in_ms(GRAB_GRACE_MS);
	for (;;) {
		ksr_x11_grab g;
		ksr_err e = {0};
		if (ksr_x11_grab_probe(m->x, dev, 0, &g, &e) < 0)
			return mcp_fail(r, "the input failed: %s", e.msg), -1;
		if (!g.grabbed || g.popup)
			return 0;
		if (ksr_deadline_passed(grace) ||
		    ksr_sleep_until(ksr_deadline_min(grace, ksr_deadline_in_ms(GRAB_POLL_MS))) ==
		            KSR_WAIT_CANCELLED)
			return mcp_fail(
			               r,
			               "the %s is grabbed by another client (X does not say which) "
			               "and nothing of it is on screen: the input would go to it; "
			               "nothing was sent",
			               dev == KSR_X11_KEYBOARD ? "keyboard" : "pointer"),
			       -1;
	}
}

/* Connect and map (x, y); -1 with r's error set. */
static int point(ksr_mcp *m, const cJSON *a, const char *xn, const char *yn, int *px, int *py,
                 mcp_result *r)
{
	if (mcp_need_x11(m, r) < 0 || input_lands(m, KSR_X11_POINTER, r) < 0)
		return -1;
	return mcp_to_screen(m, mcp_arg_num(a, xn, -1), mcp_arg_num(a, yn, -1), px, py, r);
}

int mcp_tool_click(ksr_mcp *m, const cJSON *a, mcp_result *r)
{
	int px, py;
	if (point(m, a, "x", "y", &px, &py, r) < 0)
		return 0;
	ksr_err e = {0};
	int rc = ksr_x11_click(m->x, px, py, button_of(a), mcp_arg_int(a, "count", 1), &e);
	return done_at(m, rc, &e, px, py, r);
}

int mcp_tool_move(ksr_mcp *m, const cJSON *a, mcp_result *r)
{
	int px, py;
	if (point(m, a, "x", "y", &px, &py, r) < 0)
		return 0;
	ksr_err e = {0};
	return done_at(m, ksr_x11_pointer_move(m->x, px, py, &e), &e, px, py, r);
}

int mcp_tool_drag(ksr_mcp *m, const cJSON *a, mcp_result *r)
{
	int x1, y1, x2, y2;
	if (point(m, a, "x1", "y1", &x1, &y1, r) < 0 || point(m, a, "x2", "y2", &x2, &y2, r) < 0)
		return 0;
	ksr_err e = {0};
	return done(m, ksr_x11_drag(m->x, x1, y1, x2, y2, button_of(a), &e), &e, r);
}

int mcp_tool_scroll(ksr_mcp *m, const cJSON *a, mcp_result *r)
{
	int px, py;
	if (point(m, a, "x", "y", &px, &py, r) < 0)
		return 0;
	ksr_err e = {0};
	int rc = ksr_x11_scroll(m->x, px, py, mcp_arg_int(a, "amount", 0), &e);
	return done_at(m, rc, &e, px, py, r);
}

int mcp_tool_type(ksr_mcp *m, const cJSON *a, mcp_result *r)
{
	if (mcp_need_x11(m, r) < 0 || input_lands(m, KSR_X11_KEYBOARD, r) < 0)
		return 0;
	ksr_err e = {0};
	return done(m, ksr_x11_type(m->x, mcp_arg_str(a, "text"), &e), &e, r);
}

int mcp_tool_key(ksr_mcp *m, const cJSON *a, mcp_result *r)
{
	if (mcp_need_x11(m, r) < 0 || input_lands(m, KSR_X11_KEYBOARD, r) < 0)
		return 0;
	ksr_err e = {0};
	return done(m, ksr_x11_key_chords(m->x, mcp_arg_str(a, "keys"), &e), &e, r);
}
