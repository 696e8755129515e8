/* Presses as the page saw them (ksr_page_watch_presses), for both
 * protocols: the pick (the name a recording gives a pressed element), the
 * listener each document runs, and the reports kept on the wire until the
 * recorder takes the one of its X press. The page names the element in the
 * press's own handler: a reading made later, once the recorder has the X
 * press, can find the next document there (a button that submits at once). */
#include "backend/cdp/page_common.h"
#include "backend/cdp/wire.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PRESSES_MAX 32 /* reports kept; older ones are dropped */
#define PRESS_PX    4  /* screen pixels between the X press and the page's, either way */

/* ksr_page_pick_js (ksr/page.h), a macro so that the listener holds it too. */
#define PICK_JS                                                                                    \
	"(el => {"                                                                                 \
	" if (!el || el.nodeType !== 1) return null;"                                              \
	" el = el.closest('a,button,input,select,textarea,label,summary,[role],[onclick],"         \
	"[tabindex],[data-testid]') || el;"                                                        \
	" const one = s => { try { const l = document.querySelectorAll(s);"                        \
	"   return l.length === 1 && l[0] === el; } catch (e) { return false; } };"                \
	" const q = v => JSON.stringify(v), tag = el.localName, c = [];"                           \
	" if (el.id) c.push('#' + CSS.escape(el.id));"                                             \
	" if (el.getAttribute('data-testid')) c.push('[data-testid=' +"                            \
	"   q(el.getAttribute('data-testid')) + ']');"                                             \
	" for (const a of ['name', 'aria-label'])"                                                 \
	"   if (el.getAttribute(a)) c.push(tag + '[' + a + '=' + q(el.getAttribute(a)) + ']');"    \
	" const out = s => ({selector: s, tag, url: location.href,"                                \
	"   text: (el.innerText || el.value || '').trim().slice(0, 60)});"                         \
	" for (const s of c) if (one(s)) return out(s);"                                           \
	" const parts = [];"                                                                       \
	" for (let n = el; n && n.nodeType === 1 && parts.length < 6; n = n.parentElement) {"      \
	"   if (n.id) { parts.unshift('#' + CSS.escape(n.id)); }"                                  \
	"   else { const sib = n.parentElement ? [...n.parentElement.children]"                    \
	"       .filter(k => k.localName === n.localName) : [];"                                   \
	"     parts.unshift(n.localName + (sib.length > 1 ?"                                       \
	"       ':nth-of-type(' + (sib.indexOf(n) + 1) + ')' : '')); }"                            \
	"   if (one(parts.join(' > '))) return out(parts.join(' > '));"                            \
	"   if (n.id) break;"                                                                      \
	" }"                                                                                       \
	" return null;"                                                                            \
	"})"

const char ksr_page_pick_js[] = PICK_JS;

/* Registered on the window in the capture phase before any of the page's
 * own scripts ran (a new document), so no page handler runs first. Where the
 * viewport is: Firefox says (mozInnerScreenX/Y); elsewhere the event's screen
 * point less its viewport point. */
const char ksr_page_press_js[] =
        "(send => {"
        " const mark = Symbol.for('ksr.press');"
        " if (window[mark]) return;"
        " Object.defineProperty(window, mark, {value: true});"
        " const pick = " PICK_JS ", top = window === window.top;"
        " addEventListener('onpointerdown' in window ? 'pointerdown' : 'mousedown', e => {"
        "  if (!e.isTrusted || e.button !== 0) return;"
        "  const r = devicePixelRatio || 1, moz = typeof mozInnerScreenX === 'number';"
        "  let p = null;"
        "  try { p = top ? pick(e.target) : null; } catch (x) { }"
        "  const v = top ? [(moz ? mozInnerScreenX : e.screenX - e.clientX) * r,"
        "    (moz ? mozInnerScreenY : e.screenY - e.clientY) * r,"
        "    innerWidth * r, innerHeight * r] : null;"
        "  try { send(JSON.stringify({x: e.screenX * r, y: e.screenY * r, frame: !top,"
        "    pick: p, view: v})); } catch (x) { }"
        " }, {capture: true});"
        "})";

void ksr_page_pressed_clear(ksr_page_pressed *p)
{
	free(p->selector);
	free(p->tag);
	free(p->text);
	free(p->url);
	memset(p, 0, sizeof *p);
}

static bool number_at(const cJSON *o, const char *k, double *v)
{
	const cJSON *n = cJSON_GetObjectItem(o, k);
	if (!cJSON_IsNumber(n) || !isfinite(n->valuedouble))
		return false;
	*v = n->valuedouble;
	return true;
}

static cJSON *queue_of(ksr_cdp *c)
{
	cJSON *store = ksr_cdp_presses(c), *q = cJSON_GetObjectItem(store, "queue");
	return q ? q : cJSON_AddArrayToObject(store, "queue");
}

void ksr_cdp_press_add(ksr_cdp *c, const char *json)
{
	cJSON *p = json ? cJSON_Parse(json) : NULL;
	double x, y;
	if (!cJSON_IsObject(p) || !number_at(p, "x", &x) || !number_at(p, "y", &y)) {
		cJSON_Delete(p);
		return;
	}
	cJSON *view = cJSON_GetObjectItem(p, "view"), *store = ksr_cdp_presses(c);
	if (cJSON_GetArraySize(view) == 4) { /* the last one: the browser window may move */
		cJSON_DeleteItemFromObject(store, "view");
		cJSON_AddItemToObject(store, "view", cJSON_Duplicate(view, true));
	}
	cJSON *q = queue_of(c);
	if (cJSON_GetArraySize(q) >= PRESSES_MAX)
		cJSON_DeleteItemFromArray(q, 0);
	cJSON_AddItemToArray(q, p);
}

typedef struct press_want {
	int x, y;
	cJSON *got;
	bool outside; /* no report can come: the point is not in the page's viewport */
} press_want;

static bool near(const cJSON *p, int x, int y)
{
	double px, py;
	return number_at(p, "x", &px) && number_at(p, "y", &py) && fabs(px - x) <= PRESS_PX &&
	       fabs(py - y) <= PRESS_PX;
}

static bool outside_view(ksr_cdp *c, int x, int y)
{
	const cJSON *v = cJSON_GetObjectItem(ksr_cdp_presses(c), "view");
	double r[4];
	for (int i = 0; i < 4; i++) {
		const cJSON *n = cJSON_GetArrayItem(v, i);
		if (!cJSON_IsNumber(n))
			return false; /* not known yet: wait */
		r[i] = n->valuedouble;
	}
	return x < r[0] - PRESS_PX || y < r[1] - PRESS_PX || x >= r[0] + r[2] + PRESS_PX ||
	       y >= r[1] + r[3] + PRESS_PX;
}

/* The oldest report near the point, and every older one dropped with it. */
static bool take_match(ksr_cdp *c, void *ud)
{
	press_want *w = ud;
	cJSON *q = queue_of(c);
	int n = cJSON_GetArraySize(q);
	for (int i = 0; i < n; i++) {
		if (!near(cJSON_GetArrayItem(q, i), w->x, w->y))
			continue;
		w->got = cJSON_DetachItemFromArray(q, i);
		while (i-- > 0)
			cJSON_DeleteItemFromArray(q, 0);
		return true;
	}
	return (w->outside = outside_view(c, w->x, w->y));
}

static char *dup_at(const cJSON *o, const char *k)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItem(o, k));
	return s ? ksr_xstrdup(s) : NULL;
}

static void read_press(const cJSON *p, ksr_page_pressed *out)
{
	number_at(p, "x", &out->x);
	number_at(p, "y", &out->y);
	out->in_frame = cJSON_IsTrue(cJSON_GetObjectItem(p, "frame"));
	const cJSON *pick = cJSON_GetObjectItem(p, "pick");
	out->selector = dup_at(pick, "selector");
	out->tag = dup_at(pick, "tag");
	out->text = dup_at(pick, "text");
	out->url = dup_at(pick, "url");
}

ksr_page_status ksr_page_wire_take_press(ksr_cdp *wire, int x, int y, ksr_deadline d,
                                         ksr_page_pressed *out, ksr_err *err)
{
	memset(out, 0, sizeof *out);
	press_want w = {.x = x, .y = y};
	ksr_page_status st = ksr_cdp_pump_until(wire, d, take_match, &w);
	if (st == KSR_PAGE_OK && w.got) {
		read_press(w.got, out);
		cJSON_Delete(w.got);
		return KSR_PAGE_OK;
	}
	if (st == KSR_PAGE_OK || st == KSR_PAGE_TIMEOUT)
		return ksr_err_set(err,
		                   w.outside ? "the press at %d,%d was outside the page's viewport"
		                             : "the page reported no press at %d,%d in time",
		                   x, y),
		       KSR_PAGE_TIMEOUT;
	return ksr_err_set(err, "the page's press reports: %s", ksr_page_status_name(st)), st;
}
