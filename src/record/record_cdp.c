/* A click in a browser the app's process serves a page protocol for
 * (--remote-debugging-port: Chromium's DevTools, Firefox's WebDriver BiDi,
 * through the page handle, ksr/page.h): the page element under the pointer,
 * named by a selector that finds it alone (id, data-testid, name,
 * aria-label, then a short CSS path), becomes a page_click (rung 0). The
 * page names the element itself, in the press's own handler, and reports it
 * (ksr_page_watch_presses): the recorder reads the X press later, when a
 * button that navigates at once has already replaced the page. Only a press
 * the page did not report is read from the page afterwards, and then only
 * from the document that was pressed. The page answers for its own layout:
 * the recorder only says where the press was. */
#include "record/record_priv.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "ksr/bidi.h"
#include "ksr/page.h"

#define CDP_MS           3000  /* a pick in a connected page */
#define CONNECT_MS       10000 /* a first session: Firefox under load took seconds */
#define CONNECT_TRIES    3
#define PRESS_WAIT_MS    1000    /* the page's report of a press, once it watches */
#define PRESS_AGE_MAX_MS 600000u /* an X press older than this: not on our clock */

/* Run in the page, when the page did not report the press itself: the
 * press in the viewport's CSS pixels (Firefox says where its viewport is on
 * the screen: mozInnerScreenX/Y; elsewhere the viewport fills the bottom of
 * the browser's X window, tab strip and toolbar above it, borders alike left
 * and right), whether it is in the viewport, and the element there named
 * (ksr_page_pick_js, null: none); the document's URL and age (how long it
 * has existed), to tell one that came after the press (it did not see it: a
 * button that navigates at once). */
static const char PICK_JS[] =
        "((X, Y, SX, SY) => {"
        " const age = performance.now(), url = location.href,"
        "       moz = typeof mozInnerScreenX === 'number',"
        "       r = devicePixelRatio || 1,"
        "       x = moz ? SX / r - mozInnerScreenX : X - (%d - innerWidth) / 2,"
        "       y = moz ? SY / r - mozInnerScreenY : Y - (%d - innerHeight);"
        " if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight)"
        "   return {age, url, inside: false, pick: null};"
        " const el = document.elementFromPoint(x, y);"
        " return {age, url, inside: true, pick: el ? (%s)(el) : null};"
        "})(%d, %d, %d, %d)";

/* Watch the page's presses from the connect on; a page that refuses (an old
 * browser) is read after each press instead, which a page that changed at
 * once defeats: said once. */
static void watch(rec *r, int port)
{
	ksr_err err = {0};
	const char *proto = strcmp(ksr_page_protocol(r->page), "bidi") ? "CDP" : "WebDriver BiDi";
	r->page_watching =
	        ksr_page_watch_presses(r->page, ksr_deadline_in_ms(CDP_MS), &err) == KSR_PAGE_OK;
	if (r->page_watching)
		rec_say(r, "the browser's page port %d connected (%s): the page reports each press",
		        port, proto);
	else
		rec_say(r,
		        "the browser's page port %d connected (%s), but the page does not report "
		        "its presses (%s): a page click is read from the page after the press",
		        port, proto, err.msg);
}

/* The browser's page, connected at its first page click (*fresh: by this
 * call). A browser without the port stays without (asked once); a port that
 * did not answer is asked again at the next click, up to CONNECT_TRIES in
 * all: a loaded machine can take seconds for a Firefox's first BiDi session,
 * and one slow answer must not make every later page click a plain click.
 * *why gets the last failure for the step's comment. */
static ksr_page *connection(rec *r, int pid, bool *fresh, char *why, size_t why_size)
{
	if (r->page || r->cdp_tried)
		return r->page;
	ksr_page_browser browser;
	int port = ksr_page_port_of_pid(pid, &browser);
	if (port <= 0) {
		r->cdp_tried = true;
		return NULL;
	}
	ksr_page_status st;
	ksr_err err = {0};
	r->page = ksr_page_connect("127.0.0.1", port, browser, ksr_deadline_in_ms(CONNECT_MS), NULL,
	                           &st, &err);
	r->cdp_port = port;
	if (!r->page) {
		r->cdp_tried = ++r->cdp_attempts >= CONNECT_TRIES;
		snprintf(why, why_size,
		         "the browser's page port %d did not connect (try %d of %d): %s", port,
		         r->cdp_attempts, CONNECT_TRIES, err.msg);
		rec_say(r, "%s; this click is recorded at its point", why);
		return NULL;
	}
	watch(r, port);
	*fresh = true;
	return r->page;
}

static void set_step(rec_step *s, const char *sel, const char *tag, const char *text,
                     const char *url, const ksr_rec_event *e, const ksr_window *w,
                     const char *protocol, int port)
{
	rec_set_kind(s, KSR_KIND_CDP_CLICK);
	s->value = ksr_xstrdup(sel);
	if (asprintf(&s->comment,
	             "a click at %d,%d on <%s> \"%s\" in the page %s of \"%s\" (%s port %d)", e->x,
	             e->y, tag ? tag : "?", text ? text : "", url ? url : "?",
	             w->title ? w->title : "", strcmp(protocol, "bidi") ? "CDP" : "WebDriver BiDi",
	             port) < 0)
		abort();
}

static const char *str_at(const cJSON *o, const char *k)
{
	return cJSON_GetStringValue(cJSON_GetObjectItem(o, k));
}

/* The press on CLOCK_MONOTONIC (ksr_now_ms), or -1 when the X server's
 * clock is not that one: a local X server (Xvfb, Xvnc, Xorg) stamps its
 * events with CLOCK_MONOTONIC in milliseconds, cut to 32 bits. */
static int64_t press_mono_ms(const ksr_rec_event *e, int64_t now)
{
	uint32_t age = (uint32_t)now - (uint32_t)e->time_ms;
	return age <= PRESS_AGE_MAX_MS ? now - age : -1;
}

/* -1 with a note when the document read is not surely the one pressed: it
 * began after the press (the press navigated at once), or the press's time
 * cannot be set against its age; else 0. */
static int other_page(rec_step *s, const cJSON *v, const ksr_rec_event *e, int64_t now)
{
	int64_t pressed = press_mono_ms(e, now);
	double age = cJSON_GetNumberValue(cJSON_GetObjectItem(v, "age"));
	const char *url = str_at(v, "url");
	if (pressed < 0)
		rec_note(s, "the X server's clock is not this machine's, so the page read after "
		            "the press cannot be told from a newer one: the click is recorded at "
		            "its point");
	else if (!(now - age <= (double)pressed)) /* no age (NaN): not surely older */
		rec_note(s,
		         "the page changed before it could be read (a new document%s%s): the "
		         "click is recorded at its point, not as an element of another page",
		         url ? ": " : "", url ? url : "");
	else
		return 0;
	return -1;
}

/* The element at the press's point, read from the page after the press: 1
 * and the step; -1 (other_page) for a document that is not surely the one
 * pressed; 0 for nothing there, a point outside the viewport (the browser's
 * toolbar: an accessible control may be there) or no answer. */
static int pick_after(rec *r, ksr_page *p, const ksr_window *w, const ksr_rec_event *e, rec_step *s)
{
	char *js = ksr_xasprintf(PICK_JS, w->w, w->h, ksr_page_pick_js, e->x - w->x, e->y - w->y,
	                         e->x, e->y);
	bool truthy = false;
	cJSON *v = NULL;
	ksr_err err = {0};
	ksr_page_status st = ksr_page_eval(p, js, ksr_deadline_in_ms(CDP_MS), &truthy, &v, &err);
	int64_t now = ksr_now_ms();
	free(js);
	const cJSON *pick = cJSON_GetObjectItem(v, "pick");
	int placed = 0;
	if (st == KSR_PAGE_OK && cJSON_IsTrue(cJSON_GetObjectItem(v, "inside")))
		placed = other_page(s, v, e, now);
	if (placed == 0 && st == KSR_PAGE_OK && str_at(pick, "selector")) {
		set_step(s, str_at(pick, "selector"), str_at(pick, "tag"), str_at(pick, "text"),
		         str_at(pick, "url"), e, w, ksr_page_protocol(p), r->cdp_port);
		placed = 1;
	}
	cJSON_Delete(v);
	return placed;
}

int rec_cdp_click(rec *r, const ksr_window *w, const ksr_rec_event *e, rec_step *s)
{
	char why[400] = "";
	bool fresh = false;
	ksr_page *p = e->detail == 1 ? connection(r, w->pid, &fresh, why, sizeof why) : NULL;
	if (!p) {
		if (why[0])
			rec_note(s, "recorded as a click at a point: %s", why);
		return 0;
	}
	/* A listener installed by this very press's connect did not see it. */
	if (!r->page_watching || fresh)
		return pick_after(r, p, w, e, s);
	ksr_page_pressed pr;
	ksr_err err = {0};
	ksr_page_status st =
	        ksr_page_take_press(p, e->x, e->y, ksr_deadline_in_ms(PRESS_WAIT_MS), &pr, &err);
	int placed = st == KSR_PAGE_OK && pr.selector ? 1 : 0;
	if (placed)
		set_step(s, pr.selector, pr.tag, pr.text, pr.url, e, w, ksr_page_protocol(p),
		         r->cdp_port);
	bool reported = st == KSR_PAGE_OK && !pr.in_frame;
	ksr_page_pressed_clear(&pr);
	/* No report (a frame's, or none at all): the page is read as it is now. */
	return reported ? placed : pick_after(r, p, w, e, s);
}

void rec_cdp_close(rec *r)
{
	ksr_page_close(r->page);
	r->page = NULL;
}
