/* A click in a browser the app's process serves a page protocol for
 * (--remote-debugging-port: Chromium's DevTools, Firefox's WebDriver BiDi,
 * through the page handle, ksr/page.h): the page element under the pointer,
 * named by a selector that finds it alone (id, data-testid, name,
 * aria-label, then a short CSS path), becomes a page_click (rung 0). The
 * page is asked at the press, before it has acted on the click (a link
 * that navigates still names what was pressed). The page answers for its
 * own layout: the recorder only says where the press was. */
#include "record/record_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "ksr/bidi.h"
#include "ksr/page.h"

#define CDP_MS        3000  /* a pick in a connected page */
#define CONNECT_MS    10000 /* a first session: Firefox under load took seconds */
#define CONNECT_TRIES 3

/* Run in the page: the press in the viewport's CSS pixels (Firefox says
 * where its viewport is on the screen: mozInnerScreenX/Y; elsewhere the
 * viewport fills the bottom of the browser's X window, tab strip and
 * toolbar above it, borders alike left and right); the clickable element at
 * the point (or the element itself), then the first selector that matches
 * it and nothing else. null: none there. */
static const char PICK_JS[] =
        "((X, Y, SX, SY) => {"
        " const moz = typeof mozInnerScreenX === 'number', r = devicePixelRatio || 1,"
        "       x = moz ? SX / r - mozInnerScreenX : X - (%d - innerWidth) / 2,"
        "       y = moz ? SY / r - mozInnerScreenY : Y - (%d - innerHeight);"
        " if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) return null;"
        " let el = document.elementFromPoint(x, y);"
        " if (!el) return null;"
        " el = el.closest('a,button,input,select,textarea,label,summary,[role],[onclick],"
        "[tabindex],[data-testid]') || el;"
        " const one = s => { try { const l = document.querySelectorAll(s);"
        "   return l.length === 1 && l[0] === el; } catch (e) { return false; } };"
        " const q = v => JSON.stringify(v), tag = el.localName, c = [];"
        " if (el.id) c.push('#' + CSS.escape(el.id));"
        " if (el.getAttribute('data-testid')) c.push('[data-testid=' +"
        "   q(el.getAttribute('data-testid')) + ']');"
        " for (const a of ['name', 'aria-label'])"
        "   if (el.getAttribute(a)) c.push(tag + '[' + a + '=' + q(el.getAttribute(a)) + ']');"
        " const out = s => ({selector: s, tag, url: location.href,"
        "   text: (el.innerText || el.value || '').trim().slice(0, 60)});"
        " for (const s of c) if (one(s)) return out(s);"
        " const parts = [];"
        " for (let n = el; n && n.nodeType === 1 && parts.length < 6; n = n.parentElement) {"
        "   if (n.id) { parts.unshift('#' + CSS.escape(n.id)); }"
        "   else { const sib = n.parentElement ? [...n.parentElement.children]"
        "       .filter(k => k.localName === n.localName) : [];"
        "     parts.unshift(n.localName + (sib.length > 1 ?"
        "       ':nth-of-type(' + (sib.indexOf(n) + 1) + ')' : '')); }"
        "   if (one(parts.join(' > '))) return out(parts.join(' > '));"
        "   if (n.id) break;"
        " }"
        " return null;"
        "})(%d, %d, %d, %d)";

/* The browser's page, connected at its first page click. A browser without the port
 * stays without (asked once); a port that did not answer is asked again at the next
 * click, up to CONNECT_TRIES in all: a loaded machine can take seconds for a
 * Firefox's first BiDi session, and one slow answer must not make every later page
 * click a plain click. *why gets the last failure for the step's comment. */
static ksr_page *connection(rec *r, int pid, char *why, size_t why_size)
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
	}
	return r->page;
}

static void set_step(rec_step *s, const cJSON *v, const ksr_rec_event *e, const ksr_window *w,
                     const char *protocol, int port)
{
	const char *sel = cJSON_GetStringValue(cJSON_GetObjectItem(v, "selector"));
	const char *tag = cJSON_GetStringValue(cJSON_GetObjectItem(v, "tag"));
	const char *text = cJSON_GetStringValue(cJSON_GetObjectItem(v, "text"));
	const char *url = cJSON_GetStringValue(cJSON_GetObjectItem(v, "url"));
	rec_set_kind(s, KSR_KIND_CDP_CLICK);
	s->value = ksr_xstrdup(sel);
	if (asprintf(&s->comment,
	             "a click at %d,%d on <%s> \"%s\" in the page %s of \"%s\" (%s port %d)", e->x,
	             e->y, tag ? tag : "?", text ? text : "", url ? url : "?",
	             w->title ? w->title : "", strcmp(protocol, "bidi") ? "CDP" : "WebDriver BiDi",
	             port) < 0)
		abort();
}

int rec_cdp_click(rec *r, const ksr_window *w, const ksr_rec_event *e, rec_step *s)
{
	char why[400] = "";
	ksr_page *p = e->detail == 1 ? connection(r, w->pid, why, sizeof why) : NULL;
	if (!p) {
		if (why[0])
			rec_note(s, "recorded as a click at a point: %s", why);
		return 0;
	}
	char js[sizeof PICK_JS + 96];
	snprintf(js, sizeof js, PICK_JS, w->w, w->h, e->x - w->x, e->y - w->y, e->x, e->y);
	bool truthy = false;
	cJSON *v = NULL;
	ksr_err err = {0};
	int placed = 0;
	if (ksr_page_eval(p, js, ksr_deadline_in_ms(CDP_MS), &truthy, &v, &err) == KSR_PAGE_OK &&
	    truthy && cJSON_GetStringValue(cJSON_GetObjectItem(v, "selector"))) {
		set_step(s, v, e, w, ksr_page_protocol(p), r->cdp_port);
		placed = 1;
	}
	cJSON_Delete(v);
	return placed;
}

void rec_cdp_close(rec *r)
{
	ksr_page_close(r->page);
	r->page = NULL;
}
