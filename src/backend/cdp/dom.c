/* CDP page actions: elements by selector or by list id, actionability checks
 * run in the page (one round trip a probe), input through Input.* so the page
 * sees trusted events, key chords, navigation, evaluation and the
 * accessibility listing. */
#include "ksr/cdp.h"
#include "ksr/json.h"

#include "backend/cdp/page_common.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define RETRY_MS 40 /* between probes of an element that is not actionable yet */

/* The probe, run in the page on the element (null when nothing matched). want:
 * "click" (every check, then the click point), "fill"/"type" (visible, enabled,
 * editable; focused and, for fill, all selected), "state" (where it is). The
 * box must stay the same over two animation frames before a click (three reads), as
 * Playwright's stability rule: an animation started just before the probe may not
 * move the box in its first frame (that frame's time can precede the start), so one
 * frame alone read a glider as stable. */
const char ksr_page_probe_js[] =
        "async function(el, want) {\n"
        "const desc = n => { if (!n || n.nodeType !== 1) return String(n);\n"
        "  let s = '<' + n.localName; if (n.id) s += ' id=\"' + n.id + '\"';\n"
        "  const c = typeof n.className === 'string' ? n.className.trim() : '';\n"
        "  if (c) s += ' class=\"' + c.slice(0, 60) + '\"'; return s + '>'; };\n"
        "const box = r => ({x: r.x, y: r.y, w: r.width, h: r.height});\n"
        "if (!el) return {state: 'absent', why: 'matches no element'};\n"
        "if (!el.isConnected) return {state: 'detached', why: 'is no longer in the page'};\n"
        "let r = el.getBoundingClientRect();\n"
        "const vis = el.checkVisibility({visibilityProperty: true}) && r.width > 0 && "
        "r.height > 0;\n"
        "if (!vis) return {state: 'hidden', why: 'is not visible', box: box(r)};\n"
        "if (want === 'state') return {state: 'visible', box: box(r)};\n"
        "if (el.disabled || el.closest('fieldset:disabled') || "
        "el.getAttribute('aria-disabled') === 'true')\n"
        "  return {state: 'disabled', why: 'is disabled', box: box(r)};\n"
        "if (want === 'fill' || want === 'type') {\n"
        "  const t = el.localName, ty = (el.type || '').toLowerCase();\n"
        "  const text = t === 'textarea' || el.isContentEditable || (t === 'input' && "
        "!['checkbox','radio','button','submit','reset','file','image','range','color',"
        "'hidden'].includes(ty));\n"
        "  if (!text) return {state: 'noedit', why: 'is not an editable field (' + desc(el) + "
        "')', box: box(r)};\n"
        "  if (el.readOnly) return {state: 'readonly', why: 'is read-only', box: box(r)};\n"
        "  el.focus();\n"
        "  if (want === 'fill') { if (typeof el.select === 'function') el.select();\n"
        "    else { const s = getSelection(); s.removeAllRanges(); const g = "
        "document.createRange(); g.selectNodeContents(el); s.addRange(g); } }\n"
        "  if (document.activeElement !== el && !el.contains(document.activeElement))\n"
        "    return {state: 'nofocus', why: 'does not take the focus', box: box(r)};\n"
        "  return {state: 'ok', box: box(r)};\n"
        "}\n"
        "if (r.bottom <= 0 || r.right <= 0 || r.top >= innerHeight || r.left >= innerWidth ||\n"
        "    r.top < 0 || r.left < 0 || r.bottom > innerHeight || r.right > innerWidth) {\n"
        "  el.scrollIntoView({block: 'center', inline: 'center', behavior: 'instant'});\n"
        "  r = el.getBoundingClientRect(); }\n"
        "const frame = () => new Promise(f => requestAnimationFrame(() => f()));\n"
        "const same = (a, b) => a.x === b.x && a.y === b.y && a.width === b.width && "
        "a.height === b.height;\n"
        "await frame();\n"
        "const r1 = el.getBoundingClientRect();\n"
        "await frame();\n"
        "const r2 = el.getBoundingClientRect();\n"
        "if (!same(r, r1) || !same(r1, r2))\n"
        "  return {state: 'moving', why: 'is still moving (its box changed within two "
        "animation frames)', box: box(r2)};\n"
        "const x = r2.x + r2.width / 2, y = r2.y + r2.height / 2;\n"
        "if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight)\n"
        "  return {state: 'outside', why: 'is outside the viewport', box: box(r2)};\n"
        "let hit = document.elementFromPoint(x, y);\n"
        "while (hit && hit.shadowRoot) { const i = hit.shadowRoot.elementFromPoint(x, y);\n"
        "  if (!i || i === hit) break; hit = i; }\n"
        "for (let n = hit; n; n = n.parentNode || n.host) if (n === el)\n"
        "  return {state: 'ok', box: box(r2), x: x, y: y};\n"
        "return {state: 'covered', why: 'is covered by ' + desc(hit) + ', which would get "
        "the click', box: box(r2), x: x, y: y};\n"
        "}";

/* The element a ref names, run in the page (null when none): a CSS selector
 * (document.querySelector), or "text=T": the smallest element whose own
 * rendered text (innerText; a button-like input's value), whitespace
 * collapsed, equals T, a visible one first, then the first in document
 * order; "text=\"T\"" is the same with T taken as written (a T that starts
 * with a slash); "text=/RE/FLAGS" tests the text against a regular expression.
 * Every protocol's probe and the page: check resolve through it (the spelling
 * is checked at load time by ksr_page_ref_check). Elements whose text content
 * cannot hold T are skipped before innerText (which lays the page out) is read;
 * the hits are in document order, so an element holds another hit exactly
 * when the next hit is inside it (smallest: linear). */
const char ksr_page_find_js[] =
        "function(ref) {\n"
        "if (!ref.startsWith('text=')) return document.querySelector(ref);\n"
        "const norm = s => String(s ?? '').replace(/\\s+/g, ' ').trim();\n"
        "let t = ref.slice(5), re = null;\n"
        "const m = /^\\/(.+)\\/([a-z]*)$/s.exec(t);\n"
        "if (m) re = new RegExp(m[1], m[2].replace(/[gy]/g, ''));\n"
        "else if (t.length > 1 && t[0] === '\"' && t.endsWith('\"')) t = t.slice(1, -1);\n"
        "t = norm(t);\n"
        "if (!re && !t) return null;\n"
        "const bare = s => s.replace(/\\s+/g, '').toLowerCase(), need = bare(t);\n"
        "const button = e => e.localName === 'input' &&\n"
        "  ['button', 'submit', 'reset'].includes((e.type || '').toLowerCase());\n"
        "const own = e => norm(button(e) ? e.value : e.innerText ?? e.textContent);\n"
        "const skip = ['script', 'style', 'template', 'noscript'];\n"
        "const all = document.body ? [document.body, ...document.body.querySelectorAll('*')] : "
        "[];\n"
        "const hits = all.filter(e => !skip.includes(e.localName) &&\n"
        "  (re || button(e) || bare(e.textContent).includes(need)) &&\n"
        "  (re ? re.test(own(e)) : own(e) === t));\n"
        "const shown = e => { const r = e.getBoundingClientRect();\n"
        "  return e.checkVisibility({visibilityProperty: true}) && r.width > 0 && r.height > 0; "
        "};\n"
        "const smallest = l => l.filter((e, i) => !(i + 1 < l.length && e.contains(l[i + 1])));\n"
        "return smallest(hits.filter(shown))[0] || smallest(hits)[0] || null; }";

/* As the finder: /RE/FLAGS when the text starts with a slash and another
 * one closes a non-empty pattern, FLAGS letters. */
static bool text_regex(const char *t, const char **flags)
{
	const char *end = t[0] == '/' ? strrchr(t, '/') : NULL;
	if (!end || end - t < 2)
		return false;
	for (const char *f = end + 1; *f; f++)
		if (!islower((unsigned char)*f))
			return false;
	*flags = end + 1;
	return true;
}

static int regex_flags_check(const char *ref, const char *flags, ksr_err *err)
{
	for (const char *f = flags; *f; f++) {
		if (!strchr("imsu", *f) || strchr(f + 1, *f))
			return ksr_err_set(
			               err,
			               "'%s': '%c' is not a regular expression flag here (i, m, "
			               "s, u, each once); a text that starts with a slash is "
			               "quoted: text=\"/...\"",
			               ref, *f),
			       -1;
	}
	return 0;
}

int ksr_page_ref_check(const char *ref, ksr_err *err)
{
	if (!ref || strncmp(ref, "text=", 5) != 0)
		return 0; /* CSS (the page's to parse) or a list id */
	const char *t = ref + 5, *flags;
	if (text_regex(t, &flags))
		return regex_flags_check(ref, flags, err);
	size_t n = strlen(t);
	if (n > 1 && t[0] == '"' && t[n - 1] == '"')
		t++, n -= 2;
	for (size_t i = 0; i < n; i++)
		if (!isspace((unsigned char)t[i]))
			return 0;
	return ksr_err_set(err, "'%s': text= needs the text to find (text=Send, text=/^send$/i)",
	                   ref),
	       -1;
}

static bool is_id_ref(const char *ref)
{
	return ref && ref[0] == '@' && ref[1] == 'e' && isdigit((unsigned char)ref[2]);
}

static ksr_cdp_status exception_text(const cJSON *res, ksr_err *err)
{
	const cJSON *ex = cJSON_GetObjectItem(res, "exceptionDetails");
	const cJSON *obj = cJSON_GetObjectItem(ex, "exception");
	const char *d = cJSON_GetStringValue(cJSON_GetObjectItem(obj, "description"));
	const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(ex, "text"));
	char first[300];
	snprintf(first, sizeof first, "%s", d ? d : t ? t : "an exception");
	first[strcspn(first, "\n")] = '\0'; /* the first line, not the stack */
	return ksr_err_set(err, "the page threw: %s", first), KSR_CDP_ERROR;
}

/* Resolve "@eN" to a remote object id. */
static ksr_cdp_status resolve_id(ksr_cdp *c, const char *ref, ksr_deadline d, char **object_id,
                                 ksr_err *err)
{
	cJSON *p = cJSON_CreateObject(), *res = NULL;
	cJSON_AddNumberToObject(p, "backendNodeId", strtod(ref + 2, NULL));
	ksr_cdp_status st = ksr_cdp_call(c, "DOM.resolveNode", p, d, &res, err);
	const char *oid = cJSON_GetStringValue(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(res, "object"), "objectId"));
	*object_id = oid ? ksr_xstrdup(oid) : NULL;
	cJSON_Delete(res);
	return st;
}

/* Run ksr_page_probe_js on the element; *out gets the returned object. An id whose node
 * is gone reads as detached, not as an error. */
static ksr_cdp_status probe(ksr_cdp *c, const char *ref, const char *want, ksr_deadline d,
                            cJSON **out, ksr_err *err)
{
	cJSON *p = cJSON_CreateObject(), *res = NULL;
	ksr_cdp_status st;
	*out = NULL;
	if (is_id_ref(ref)) {
		char *oid = NULL;
		ksr_err ignored = {0};
		if (resolve_id(c, ref, d, &oid, &ignored) != KSR_CDP_OK || !oid) {
			cJSON_Delete(p);
			if (ksr_cdp_crashed(c))
				return ksr_err_set(err, "the page's renderer crashed"),
				       KSR_CDP_CRASHED;
			*out = cJSON_Parse("{\"state\":\"detached\",\"why\":\"is no longer in the "
			                   "page\"}");
			return KSR_CDP_OK;
		}
		cJSON_AddStringToObject(p, "functionDeclaration", ksr_page_probe_js);
		cJSON_AddStringToObject(p, "objectId", oid);
		cJSON *args = cJSON_AddArrayToObject(p, "arguments");
		cJSON *a0 = cJSON_CreateObject(), *a1 = cJSON_CreateObject();
		cJSON_AddStringToObject(a0, "objectId", oid);
		cJSON_AddStringToObject(a1, "value", want);
		cJSON_AddItemToArray(args, a0);
		cJSON_AddItemToArray(args, a1);
		free(oid);
	} else {
		cJSON *sel = cJSON_CreateString(ref), *w = cJSON_CreateString(want);
		char *s = ksr_json_print(sel, false), *ws = ksr_json_print(w, false);
		char *expr = ksr_xasprintf("(%s)((%s)(%s), %s)", ksr_page_probe_js,
		                           ksr_page_find_js, s, ws);
		cJSON_AddStringToObject(p, "expression", expr);
		free(expr), free(s), free(ws);
		cJSON_Delete(sel), cJSON_Delete(w);
	}
	cJSON_AddBoolToObject(p, "returnByValue", true);
	cJSON_AddBoolToObject(p, "awaitPromise", true);
	st = ksr_cdp_call(c, is_id_ref(ref) ? "Runtime.callFunctionOn" : "Runtime.evaluate", p, d,
	                  &res, err);
	if (st == KSR_CDP_OK && cJSON_GetObjectItem(res, "exceptionDetails"))
		st = exception_text(res, err);
	else if (st == KSR_CDP_OK)
		*out = cJSON_DetachItemFromObject(cJSON_GetObjectItem(res, "result"), "value");
	cJSON_Delete(res);
	if (st == KSR_CDP_OK && !cJSON_IsObject(*out)) {
		cJSON_Delete(*out);
		*out = NULL;
		return ksr_err_set(err, "the element probe returned nothing"), KSR_CDP_ERROR;
	}
	return st;
}

static void fill_hit(const cJSON *r, ksr_cdp_hit *hit)
{
	const cJSON *b = cJSON_GetObjectItem(r, "box");
	if (!hit)
		return;
	if (b) {
		hit->has_box = true;
		hit->box = (ksr_cdp_box){ksr_json_num(b, "x", NAN), ksr_json_num(b, "y", NAN),
		                         ksr_json_num(b, "w", NAN), ksr_json_num(b, "h", NAN)};
	}
	hit->x = ksr_json_num(r, "x", NAN);
	hit->y = ksr_json_num(r, "y", NAN);
}

static const char *state_of(const cJSON *r)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItem(r, "state"));
	return s ? s : "";
}

/* Probe until the element is actionable for want, or d passes. */
ksr_page_status ksr_page_actionable(ksr_cdp *c, ksr_page_probe_fn probe_fn, void *ud,
                                    const char *ref, const char *want, ksr_deadline d,
                                    ksr_page_hit *hit, ksr_err *err)
{
	char why[400] = "";
	for (;;) {
		cJSON *r = NULL;
		ksr_cdp_status st = probe_fn(ud, ref, want, d, &r, err);
		if (st == KSR_CDP_TIMEOUT && why[0])
			break; /* the last probe ran out of time: report the last state */
		if (st != KSR_CDP_OK)
			return st;
		fill_hit(r, hit);
		bool ok = !strcmp(state_of(r), "ok");
		const char *w = cJSON_GetStringValue(cJSON_GetObjectItem(r, "why"));
		snprintf(why, sizeof why, "%s", w ? w : state_of(r));
		cJSON_Delete(r);
		if (ok)
			return KSR_CDP_OK;
		ksr_deadline next = ksr_deadline_min(d, ksr_deadline_in_ms(RETRY_MS));
		st = ksr_cdp_idle(c, next, err);
		if (st != KSR_CDP_OK)
			return st;
		if (ksr_deadline_passed(d))
			break;
	}
	return ksr_err_set(err, "%s %s", ref, why), KSR_CDP_NOT_READY;
}

static ksr_page_status cdp_probe(void *ud, const char *ref, const char *want, ksr_deadline d,
                                 cJSON **out, ksr_err *err)
{
	return probe(ud, ref, want, d, out, err);
}

static ksr_cdp_status actionable(ksr_cdp *c, const char *ref, const char *want, ksr_deadline d,
                                 ksr_cdp_hit *hit, ksr_err *err)
{
	return ksr_page_actionable(c, cdp_probe, c, ref, want, d, hit, err);
}

static ksr_cdp_status mouse(ksr_cdp *c, const char *type, double x, double y, ksr_deadline d,
                            ksr_err *err)
{
	cJSON *p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "type", type);
	cJSON_AddNumberToObject(p, "x", x);
	cJSON_AddNumberToObject(p, "y", y);
	if (strcmp(type, "mouseMoved")) {
		cJSON_AddStringToObject(p, "button", "left");
		cJSON_AddNumberToObject(p, "buttons", strcmp(type, "mousePressed") ? 0 : 1);
		cJSON_AddNumberToObject(p, "clickCount", 1);
	}
	if (strcmp(type, "mouseReleased"))
		return ksr_cdp_send(c, "Input.dispatchMouseEvent", p, err);
	return ksr_cdp_call(c, "Input.dispatchMouseEvent", p, d, NULL, err);
}

/* Actionable for a click, then the mouse moved onto the click point. */
static ksr_cdp_status pointer_to(ksr_cdp *c, const char *ref, ksr_deadline d, ksr_cdp_hit *hit,
                                 ksr_cdp_hit *mine, ksr_err *err)
{
	ksr_cdp_hit h = {0};
	ksr_cdp_status st = actionable(c, ref, "click", d, &h, err);
	if (hit)
		*hit = h;
	if (mine)
		*mine = h;
	if (st == KSR_CDP_OK)
		st = mouse(c, "mouseMoved", h.x, h.y, d, err);
	return st;
}

/* The click's receipt: a capturing mouseup listener on the page's window,
 * counted, and the document's own token; "frame" where the point is in a
 * frame (its events go to another document), "gone" for a new document. */
static const char RECEIPT_ARM_JS[] =
        "((x, y) => { const w = window, e = document.elementFromPoint(x, y);"
        " if (e && /^(IFRAME|FRAME|OBJECT|EMBED)$/.test(e.tagName)) return 'frame';"
        " if (!w.__ksrReceipt) { w.__ksrReceipt = {n: 0, id: Math.random().toString(36)};"
        " w.addEventListener('mouseup', () => w.__ksrReceipt.n++, true); }"
        " return w.__ksrReceipt.id + ' ' + w.__ksrReceipt.n; })(%.3f, %.3f)";
static const char RECEIPT_READ_JS[] =
        "(w => w.__ksrReceipt ? w.__ksrReceipt.id + ' ' + w.__ksrReceipt.n : 'gone')(window)";

/* A string expression's value into buf ("" when it failed). */
static void eval_string(ksr_cdp *c, const char *js, ksr_deadline d, char *buf, size_t len)
{
	bool truthy;
	cJSON *v = NULL;
	ksr_err e = {0};
	buf[0] = '\0';
	if (ksr_cdp_eval(c, js, d, &truthy, &v, &e) == KSR_CDP_OK && cJSON_GetStringValue(v))
		snprintf(buf, len, "%s", cJSON_GetStringValue(v));
	cJSON_Delete(v);
}

/* Whether the page missed the press and release: the same document counted
 * no mouseup since before. Anything else counts as received: a new document
 * (the click navigated), a frame's, an answer that did not come. */
static bool click_missed(const char *before, const char *after)
{
	const char *sp = strchr(before, ' ');
	if (!sp || strncmp(before, after, (size_t)(sp - before + 1)) != 0)
		return false;
	return atol(after + (sp - before) + 1) <= atol(sp + 1);
}

/* A renderer drops input that comes before the page's first frame is
 * presented (Chromium: a page a few tens of ms old, right after a
 * navigation); the press and release are sent again, at most twice more,
 * when the page says it received neither. */
#define CLICK_ATTEMPTS 3

ksr_cdp_status ksr_cdp_click(ksr_cdp *c, const char *ref, ksr_deadline d, ksr_cdp_hit *hit,
                             ksr_err *err)
{
	ksr_cdp_hit h = {0};
	ksr_cdp_status st = pointer_to(c, ref, d, hit, &h, err);
	char js[512], before[96], after[96];
	snprintf(js, sizeof js, RECEIPT_ARM_JS, h.x, h.y);
	if (st == KSR_CDP_OK)
		eval_string(c, js, d, before, sizeof before);
	for (int attempt = 1; st == KSR_CDP_OK && attempt <= CLICK_ATTEMPTS; attempt++) {
		if (hit)
			hit->attempts = attempt;
		st = mouse(c, "mousePressed", h.x, h.y, d, err);
		if (st == KSR_CDP_OK)
			st = mouse(c, "mouseReleased", h.x, h.y, d, err);
		if (st != KSR_CDP_OK)
			break;
		eval_string(c, RECEIPT_READ_JS, d, after, sizeof after);
		if (!click_missed(before, after))
			return KSR_CDP_OK;
		ksr_cdp_status idle =
		        ksr_cdp_idle(c, ksr_deadline_min(d, ksr_deadline_in_ms(RETRY_MS)), err);
		if (idle != KSR_CDP_OK)
			return idle;
	}
	if (st == KSR_CDP_OK)
		st = (ksr_err_set(err, "%s: the page received none of %d clicks (mouseup)", ref,
		                  CLICK_ATTEMPTS),
		      KSR_CDP_NOT_READY);
	return st;
}

ksr_cdp_status ksr_cdp_hover(ksr_cdp *c, const char *ref, ksr_deadline d, ksr_cdp_hit *hit,
                             ksr_err *err)
{
	/* The click's checks (visible, still, not covered at its point): the
	 * pointer rests where a person's would. */
	return pointer_to(c, ref, d, hit, NULL, err);
}

static ksr_cdp_status run_js(ksr_cdp *c, const char *js, ksr_deadline d, ksr_err *err)
{
	bool truthy;
	return ksr_cdp_eval(c, js, d, &truthy, NULL, err);
}

ksr_cdp_status ksr_cdp_fill(ksr_cdp *c, const char *ref, const char *text, ksr_deadline d,
                            ksr_cdp_hit *hit, ksr_err *err)
{
	ksr_cdp_status st = actionable(c, ref, "fill", d, hit, err);
	if (st != KSR_CDP_OK)
		return st;
	if (!*text) /* insertText "" would leave the selection in place */
		return run_js(c, "document.execCommand('delete')", d, err);
	cJSON *p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "text", text);
	st = ksr_cdp_call(c, "Input.insertText", p, d, NULL, err);
	/* insertText fires input; change comes only on blur, which a fill implies. */
	if (st == KSR_CDP_OK)
		st = run_js(c,
		            "(e => e && e.dispatchEvent(new Event('change', {bubbles: true})) || "
		            "true)(document.activeElement)",
		            d, err);
	return st;
}

/* ---- keys ----------------------------------------------------------------- */

typedef struct key_def {
	const char *name; /* as written in a chord (case-insensitive) */
	const char *key, *code;
	int vk;
	const char *text;
} key_def;

static const key_def keys[] = {
        {"Enter", "Enter", "Enter", 13, "\r"},
        {"Return", "Enter", "Enter", 13, "\r"},
        {"Tab", "Tab", "Tab", 9, NULL},
        {"Escape", "Escape", "Escape", 27, NULL},
        {"Esc", "Escape", "Escape", 27, NULL},
        {"BackSpace", "Backspace", "Backspace", 8, NULL},
        {"Delete", "Delete", "Delete", 46, NULL},
        {"space", " ", "Space", 32, " "},
        {"Up", "ArrowUp", "ArrowUp", 38, NULL},
        {"Down", "ArrowDown", "ArrowDown", 40, NULL},
        {"Left", "ArrowLeft", "ArrowLeft", 37, NULL},
        {"Right", "ArrowRight", "ArrowRight", 39, NULL},
        {"ArrowUp", "ArrowUp", "ArrowUp", 38, NULL},
        {"ArrowDown", "ArrowDown", "ArrowDown", 40, NULL},
        {"ArrowLeft", "ArrowLeft", "ArrowLeft", 37, NULL},
        {"ArrowRight", "ArrowRight", "ArrowRight", 39, NULL},
        {"Home", "Home", "Home", 36, NULL},
        {"End", "End", "End", 35, NULL},
        {"PageUp", "PageUp", "PageUp", 33, NULL},
        {"Prior", "PageUp", "PageUp", 33, NULL},
        {"PageDown", "PageDown", "PageDown", 34, NULL},
        {"Next", "PageDown", "PageDown", 34, NULL},
        {"Insert", "Insert", "Insert", 45, NULL},
};

enum {
	MOD_ALT = KSR_MOD_ALT,
	MOD_CTRL = KSR_MOD_CTRL,
	MOD_META = KSR_MOD_META,
	MOD_SHIFT = KSR_MOD_SHIFT
};

typedef ksr_page_key key_ev;

static int modifier_bit(const char *w)
{
	static const struct {
		const char *name;
		int bit;
	} mods[] = {{"ctrl", MOD_CTRL},   {"control", MOD_CTRL}, {"alt", MOD_ALT},
	            {"shift", MOD_SHIFT}, {"meta", MOD_META},    {"super", MOD_META},
	            {"cmd", MOD_META}};
	for (size_t i = 0; i < sizeof mods / sizeof mods[0]; i++)
		if (!strcasecmp(w, mods[i].name))
			return mods[i].bit;
	return 0;
}

static bool key_lookup(const char *w, int mods, key_ev *k)
{
	memset(k, 0, sizeof *k);
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		if (strcasecmp(w, keys[i].name))
			continue;
		snprintf(k->key, sizeof k->key, "%s", keys[i].key);
		snprintf(k->code, sizeof k->code, "%s", keys[i].code);
		snprintf(k->text, sizeof k->text, "%s", keys[i].text ? keys[i].text : "");
		k->vk = keys[i].vk;
		return true;
	}
	if ((w[0] == 'F' || w[0] == 'f') && atoi(w + 1) >= 1 && atoi(w + 1) <= 12) {
		snprintf(k->key, sizeof k->key, "F%d", atoi(w + 1));
		snprintf(k->code, sizeof k->code, "F%d", atoi(w + 1));
		k->vk = 111 + atoi(w + 1);
		return true;
	}
	if (strlen(w) != 1 || !isprint((unsigned char)w[0]))
		return false;
	char ch = w[0];
	if (isalpha((unsigned char)ch)) {
		ch = (mods & MOD_SHIFT) ? (char)toupper((unsigned char)ch)
		                        : (char)tolower((unsigned char)ch);
		snprintf(k->code, sizeof k->code, "Key%c", toupper((unsigned char)ch));
		k->vk = toupper((unsigned char)ch);
	} else if (isdigit((unsigned char)ch)) {
		snprintf(k->code, sizeof k->code, "Digit%c", ch);
		k->vk = ch;
	}
	snprintf(k->key, sizeof k->key, "%c", ch);
	snprintf(k->text, sizeof k->text, "%c", ch);
	return true;
}

/* Only the last event of a sequence is awaited: the others are pipelined
 * (delivered in order), which halves the time a word takes to type. */
static ksr_cdp_status key_event(ksr_cdp *c, const char *type, const key_ev *k, int mods, bool wait,
                                ksr_deadline d, ksr_err *err)
{
	cJSON *p = cJSON_CreateObject();
	/* Text only when no command modifier is held: ctrl+a selects, it types nothing. */
	bool text =
	        !strcmp(type, "keyDown") && k->text[0] && !(mods & (MOD_CTRL | MOD_ALT | MOD_META));
	cJSON_AddStringToObject(p, "type",
	                        text                      ? "keyDown"
	                        : strcmp(type, "keyDown") ? type
	                                                  : "rawKeyDown");
	cJSON_AddNumberToObject(p, "modifiers", mods);
	cJSON_AddStringToObject(p, "key", k->key);
	if (k->code[0])
		cJSON_AddStringToObject(p, "code", k->code);
	if (k->vk) {
		cJSON_AddNumberToObject(p, "windowsVirtualKeyCode", k->vk);
		cJSON_AddNumberToObject(p, "nativeVirtualKeyCode", k->vk);
	}
	if (text) {
		cJSON_AddStringToObject(p, "text", k->text);
		cJSON_AddStringToObject(p, "unmodifiedText", k->text);
	}
	if (!wait)
		return ksr_cdp_send(c, "Input.dispatchKeyEvent", p, err);
	return ksr_cdp_call(c, "Input.dispatchKeyEvent", p, d, NULL, err);
}

const ksr_page_key *ksr_page_modifier_key(int bit)
{
	static const key_ev mk[] = {
	        {"Alt", "AltLeft", "", 18},
	        {"Control", "ControlLeft", "", 17},
	        {"Meta", "MetaLeft", "", 91},
	        {"Shift", "ShiftLeft", "", 16},
	};
	return &mk[bit == MOD_ALT ? 0 : bit == MOD_CTRL ? 1 : bit == MOD_META ? 2 : 3];
}

/* The nearest page key name to a bad one, for "did you mean". */
static const char *key_near(const char *bad)
{
	const char *best = NULL;
	size_t best_d = 3;
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		size_t d = ksr_edit_distance(keys[i].name, bad, true);
		if (d < best_d)
			best_d = d, best = keys[i].name;
	}
	static const char *const mods[] = {"ctrl", "alt", "shift", "meta"};
	for (size_t i = 0; i < sizeof mods / sizeof mods[0]; i++) {
		size_t d = ksr_edit_distance(mods[i], bad, true);
		if (d < best_d)
			best_d = d, best = mods[i];
	}
	return best;
}

static bool bad_word(const char *what, const char *w, const char *chord, ksr_err *err)
{
	const char *near = key_near(w);
	ksr_err_set(err, "%s '%s' in '%s'%s%s%s (page keys: %s)", what, w, chord,
	            near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "",
	            "ctrl/alt/shift/meta + Enter, Tab, Escape, BackSpace, Delete, space, arrows, "
	            "Home, End, PageUp, PageDown, Insert, F1..F12, one printable character");
	return false;
}

typedef ksr_page_chord page_chord;

/* One chord as the page gets it: modifiers then one key. Pure, so the loader
 * rejects a bad chord before anything starts (ksr_cdp_chords_check). */
static bool chord_parse(const char *text, page_chord *pc, ksr_err *err)
{
	char words[128];
	snprintf(words, sizeof words, "%s", text);
	memset(pc, 0, sizeof *pc);
	char *save = NULL, *last = NULL;
	for (char *w = strtok_r(words, "+", &save); w; w = strtok_r(NULL, "+", &save)) {
		if (last) {
			int bit = modifier_bit(last);
			if (!bit)
				return bad_word("not a modifier:", last, text, err);
			if (pc->n < 4 && !(pc->mods & bit))
				pc->order[pc->n++] = bit;
			pc->mods |= bit;
		}
		last = w;
	}
	if (!last)
		return ksr_err_set(err, "empty chord '%s'", text), false;
	if (!key_lookup(last, pc->mods, &pc->key))
		return bad_word("unknown page key", last, text, err);
	return true;
}

/* One chord: modifiers down in order, the key down and up, modifiers up. */
static ksr_cdp_status chord(void *ud, const page_chord *pc, ksr_deadline d, ksr_err *err)
{
	ksr_cdp *c = ud;
	ksr_cdp_status st = KSR_CDP_OK;
	int held = 0, n = pc->n;
	for (int i = 0; i < n && st == KSR_CDP_OK; i++) {
		held |= pc->order[i];
		st = key_event(c, "keyDown", ksr_page_modifier_key(pc->order[i]), held, false, d,
		               err);
	}
	if (st == KSR_CDP_OK)
		st = key_event(c, "keyDown", &pc->key, pc->mods, false, d, err);
	if (st == KSR_CDP_OK)
		st = key_event(c, "keyUp", &pc->key, pc->mods, n == 0, d, err);
	for (int i = n - 1; i >= 0 && st == KSR_CDP_OK; i--) {
		held &= ~pc->order[i];
		st = key_event(c, "keyUp", ksr_page_modifier_key(pc->order[i]), held, i == 0, d,
		               err);
	}
	return st;
}

ksr_page_status ksr_page_chords_each(const char *chords, ksr_page_chord_fn fn, void *ud,
                                     ksr_deadline d, ksr_err *err)
{
	char *copy = ksr_xstrdup(chords ? chords : ""), *save = NULL;
	ksr_cdp_status st = KSR_CDP_OK;
	size_t count = 0;
	for (char *w = strtok_r(copy, " ", &save); w && st == KSR_CDP_OK;
	     w = strtok_r(NULL, " ", &save), count++) {
		page_chord pc;
		if (!chord_parse(w, &pc, err))
			st = KSR_CDP_ERROR;
		else if (fn)
			st = fn(ud, &pc, d, err);
	}
	free(copy);
	if (st == KSR_CDP_OK && count == 0)
		return ksr_err_set(err, "no chord given"), KSR_CDP_ERROR;
	return st;
}

int ksr_cdp_chords_check(const char *chords, ksr_err *err)
{
	return ksr_page_chords_each(chords, NULL, NULL, ksr_deadline_in_ms(0), err) == KSR_CDP_OK
	               ? 0
	               : -1;
}

ksr_cdp_status ksr_cdp_press(ksr_cdp *c, const char *chords, ksr_deadline d, ksr_err *err)
{
	return ksr_page_chords_each(chords, chord, c, d, err);
}

static size_t utf8_len(unsigned char b)
{
	return b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 1;
}

const char *ksr_page_key_of_char(const char *p, ksr_page_key *k)
{
	size_t n = utf8_len((unsigned char)*p);
	memset(k, 0, sizeof *k);
	if (*p == '\n') {
		key_lookup("Enter", 0, k);
	} else if (n == 1 && isprint((unsigned char)*p)) {
		char w[2] = {*p, 0};
		key_lookup(w, isupper((unsigned char)*p) ? MOD_SHIFT : 0, k);
	} else {
		/* Anything else is typed as text, as an input method would. */
		snprintf(k->key, sizeof k->key, "%.*s", (int)n, p);
		snprintf(k->text, sizeof k->text, "%.*s", (int)n, p);
	}
	for (size_t i = 0; i < n && *p; i++)
		p++;
	return p;
}

ksr_cdp_status ksr_cdp_type(ksr_cdp *c, const char *ref, const char *text, ksr_deadline d,
                            ksr_cdp_hit *hit, ksr_err *err)
{
	ksr_cdp_status st = actionable(c, ref, "type", d, hit, err);
	for (const char *p = text; st == KSR_CDP_OK && *p;) {
		key_ev k;
		p = ksr_page_key_of_char(p, &k);
		st = key_event(c, "keyDown", &k, 0, false, d, err);
		if (st == KSR_CDP_OK)
			st = key_event(c, "keyUp", &k, 0, *p == '\0', d, err);
	}
	return st;
}

/* ---- waits, navigation, evaluation ----------------------------------------- */

static bool state_holds(const char *want, const char *got)
{
	bool attached = strcmp(got, "absent") && strcmp(got, "detached");
	if (!strcmp(want, "attached"))
		return attached;
	if (!strcmp(want, "detached"))
		return !attached;
	if (!strcmp(want, "hidden"))
		return !attached || !strcmp(got, "hidden");
	return attached && strcmp(got, "hidden");
}

ksr_page_status ksr_page_wait_state(ksr_cdp *c, ksr_page_probe_fn probe_fn, void *ud,
                                    const char *ref, const char *state, ksr_deadline d,
                                    ksr_page_hit *hit, ksr_err *err)
{
	const char *want = state ? state : "visible";
	char last[64] = "";
	for (;;) {
		cJSON *r = NULL;
		ksr_cdp_status st = probe_fn(ud, ref, "state", d, &r, err);
		if (st == KSR_CDP_TIMEOUT && last[0])
			break;
		if (st != KSR_CDP_OK)
			return st;
		fill_hit(r, hit);
		snprintf(last, sizeof last, "%s", state_of(r));
		cJSON_Delete(r);
		if (state_holds(want, last))
			return KSR_CDP_OK;
		st = ksr_cdp_idle(c, ksr_deadline_min(d, ksr_deadline_in_ms(RETRY_MS)), err);
		if (st != KSR_CDP_OK)
			return st;
		if (ksr_deadline_passed(d))
			break;
	}
	return ksr_err_set(err, "%s did not become %s (it is %s)", ref, want, last),
	       KSR_CDP_NOT_READY;
}

ksr_cdp_status ksr_cdp_wait_for(ksr_cdp *c, const char *ref, const char *state, ksr_deadline d,
                                ksr_cdp_hit *hit, ksr_err *err)
{
	return ksr_page_wait_state(c, cdp_probe, c, ref, state, d, hit, err);
}

ksr_cdp_status ksr_cdp_navigate(ksr_cdp *c, const char *url, ksr_deadline d, ksr_err *err)
{
	cJSON *p = cJSON_CreateObject(), *res = NULL;
	cJSON_AddStringToObject(p, "url", url);
	ksr_cdp_drop_events(c); /* a load event from before is not this one's */
	ksr_cdp_status st = ksr_cdp_call(c, "Page.navigate", p, d, &res, err);
	const char *e = cJSON_GetStringValue(cJSON_GetObjectItem(res, "errorText"));
	bool same_doc = st == KSR_CDP_OK && !cJSON_GetObjectItem(res, "loaderId");
	if (st == KSR_CDP_OK && e && *e)
		st = (ksr_err_set(err, "%s could not be loaded: %s", url, e), KSR_CDP_ERROR);
	cJSON_Delete(res);
	if (st == KSR_CDP_ERROR) {
		/* A navigation that kills the renderer is first reported as aborted:
		 * one round trip to the page tells a crash from a network error. */
		bool t;
		ksr_err probe_err = {0};
		ksr_cdp_status alive = ksr_cdp_eval(c, "1", d, &t, NULL, &probe_err);
		if (alive == KSR_CDP_CRASHED || alive == KSR_CDP_CLOSED)
			return *err = probe_err, alive;
	}
	if (st != KSR_CDP_OK || same_doc)
		return st;
	return ksr_cdp_wait_event(c, "Page.loadEventFired", d, NULL, err);
}

static bool value_truthy(const cJSON *r)
{
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(r, "type"));
	const char *subtype = cJSON_GetStringValue(cJSON_GetObjectItem(r, "subtype"));
	const char *unser = cJSON_GetStringValue(cJSON_GetObjectItem(r, "unserializableValue"));
	const cJSON *v = cJSON_GetObjectItem(r, "value");
	if (!type || !strcmp(type, "undefined") || (subtype && !strcmp(subtype, "null")))
		return false;
	if (unser)
		return strcmp(unser, "NaN") && strcmp(unser, "-0") && strcmp(unser, "0n");
	if (cJSON_IsBool(v))
		return cJSON_IsTrue(v);
	if (cJSON_IsNumber(v))
		return v->valuedouble != 0;
	if (cJSON_IsString(v))
		return v->valuestring[0] != '\0';
	return !cJSON_IsNull(v) || strcmp(type, "object");
}

ksr_cdp_status ksr_cdp_eval(ksr_cdp *c, const char *js, ksr_deadline d, bool *truthy, cJSON **value,
                            ksr_err *err)
{
	cJSON *p = cJSON_CreateObject(), *res = NULL;
	cJSON_AddStringToObject(p, "expression", js);
	cJSON_AddBoolToObject(p, "returnByValue", true);
	cJSON_AddBoolToObject(p, "awaitPromise", true);
	cJSON_AddBoolToObject(p, "userGesture", true);
	*truthy = false;
	if (value)
		*value = NULL;
	ksr_cdp_status st = ksr_cdp_call(c, "Runtime.evaluate", p, d, &res, err);
	if (st == KSR_CDP_OK && cJSON_GetObjectItem(res, "exceptionDetails"))
		st = exception_text(res, err);
	if (st == KSR_CDP_OK) {
		cJSON *r = cJSON_GetObjectItem(res, "result");
		*truthy = value_truthy(r);
		if (value) {
			cJSON *v = cJSON_GetObjectItem(r, "value");
			const char *u =
			        cJSON_GetStringValue(cJSON_GetObjectItem(r, "unserializableValue"));
			*value = v   ? cJSON_Duplicate(v, true)
			         : u ? cJSON_CreateString(u)
			             : cJSON_CreateNull();
		}
	}
	cJSON_Delete(res);
	return st;
}

static char *dup_str(const cJSON *o, const char *k)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItem(o, k));
	return s ? ksr_xstrdup(s) : NULL;
}

char *ksr_page_state_js(const char *selector)
{
	cJSON *sel = selector ? cJSON_CreateString(selector) : cJSON_CreateNull();
	char *s = ksr_json_print(sel, false);
	char *js = ksr_xasprintf("(s => { const e = s === null ? null : (%s)(s);\n"
	                         "return {found: s === null || !!e, text: e ? (e.innerText ?? "
	                         "e.textContent) : null,\n"
	                         "url: location.href, title: document.title}; })(%s)",
	                         ksr_page_find_js, s);
	free(s);
	cJSON_Delete(sel);
	return js;
}

void ksr_page_state_read(const cJSON *v, ksr_page_info *out)
{
	out->found = cJSON_IsTrue(cJSON_GetObjectItem(v, "found"));
	out->text = dup_str(v, "text");
	out->url = dup_str(v, "url");
	out->title = dup_str(v, "title");
}

ksr_cdp_status ksr_cdp_page_state(ksr_cdp *c, const char *selector, ksr_deadline d,
                                  ksr_cdp_page *out, ksr_err *err)
{
	memset(out, 0, sizeof *out);
	cJSON *v = NULL;
	char *js = ksr_page_state_js(selector);
	bool truthy;
	ksr_cdp_status st = ksr_cdp_eval(c, js, d, &truthy, &v, err);
	free(js);
	if (st == KSR_CDP_OK)
		ksr_page_state_read(v, out);
	cJSON_Delete(v);
	return st;
}

void ksr_page_info_clear(ksr_page_info *p)
{
	if (!p)
		return;
	free(p->text), free(p->url), free(p->title);
	memset(p, 0, sizeof *p);
}

/* ---- the accessibility listing -------------------------------------------- */

static bool interactive_role(const char *role)
{
	static const char *const roles[] = {
	        "button",        "link",     "textbox",        "searchbox",   "checkbox",
	        "radio",         "combobox", "listbox",        "menuitem",    "menuitemcheckbox",
	        "menuitemradio", "option",   "slider",         "spinbutton",  "switch",
	        "tab",           "treeitem", "ComboBoxSelect", "PopUpButton", "ToggleButton",
	};
	for (size_t i = 0; role && i < sizeof roles / sizeof roles[0]; i++)
		if (!strcmp(role, roles[i]))
			return true;
	return false;
}

static const char *ax_value(const cJSON *node, const char *k)
{
	return cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(node, k), "value"));
}

static void add_element(ksr_cdp_element_list *l, const cJSON *node)
{
	const cJSON *bid = cJSON_GetObjectItem(node, "backendDOMNodeId");
	const char *role = ax_value(node, "role");
	if (cJSON_IsTrue(cJSON_GetObjectItem(node, "ignored")) || !cJSON_IsNumber(bid) ||
	    !interactive_role(role))
		return;
	l->items = ksr_xrealloc(l->items, (l->len + 1) * sizeof *l->items);
	ksr_cdp_element *e = &l->items[l->len++];
	e->backend_id = (long)bid->valuedouble;
	snprintf(e->id, sizeof e->id, "@e%ld", e->backend_id);
	e->role = ksr_xstrdup(role);
	e->name = ksr_xstrdup(ax_value(node, "name") ? ax_value(node, "name") : "");
}

ksr_cdp_status ksr_cdp_list_interactive(ksr_cdp *c, ksr_deadline d, ksr_cdp_element_list *out,
                                        ksr_err *err)
{
	cJSON *res = NULL, *n;
	memset(out, 0, sizeof *out);
	ksr_cdp_status st = ksr_cdp_call(c, "Accessibility.getFullAXTree", NULL, d, &res, err);
	cJSON_ArrayForEach(n, cJSON_GetObjectItem(res, "nodes")) add_element(out, n);
	cJSON_Delete(res);
	return st;
}

void ksr_page_element_list_clear(ksr_page_element_list *l)
{
	for (size_t i = 0; l && i < l->len; i++)
		free(l->items[i].role), free(l->items[i].name);
	if (l) {
		free(l->items);
		memset(l, 0, sizeof *l);
	}
}
