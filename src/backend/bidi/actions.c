/* BiDi page actions: scripts through script.evaluate / script.callFunction,
 * the shared actionability probe and loop (backend/cdp/page_common.h),
 * input through input.performActions (a pointer source for clicks, a key
 * source for typing and chords), navigation with wait "complete", the
 * interactive elements from a script, and the page handle's table. */
#include "ksr/bidi.h"

#include "backend/bidi/priv.h"
#include "backend/cdp/page_common.h"
#include "backend/cdp/wire.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OBJECT_DEPTH    16   /* a value deeper than this reads as {} (a cycle cannot loop) */
#define CRASH_PROBE_MS  2000 /* the context's URL, asked once a script call was refused */
#define SCRIPT_RUNS     4    /* a reading script cut short by navigations runs at most this often */
#define NAVIGATED_EVENT "browsingContext.domContentLoaded"

/* ---- scripts --------------------------------------------------------------- */

static ksr_page_status exception_of(const cJSON *res, ksr_err *err)
{
	const cJSON *ex = cJSON_GetObjectItem(res, "exceptionDetails");
	const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(ex, "text"));
	char first[300];
	snprintf(first, sizeof first, "%s", t ? t : "an exception");
	first[strcspn(first, "\n")] = '\0'; /* the first line, not the stack */
	return ksr_err_set(err, "the page threw: %s", first), KSR_PAGE_ERROR;
}

/* Firefox answers a script call on a context that shows its own crash page
 * (about:tabcrashed, a parent-process page) with this, while the context
 * reports a web page's URL or about:blank: the content process is gone. A
 * context that is a browser page itself (about:preferences...) is not a crash. */
static bool content_crashed(ksr_bidi *b, ksr_page_status st, const ksr_err *err)
{
	if (st != KSR_PAGE_ERROR || !strstr(err->msg, "parent process browsing context"))
		return false;
	cJSON *p = cJSON_CreateObject(), *res = NULL;
	cJSON_AddStringToObject(p, "root", b->context);
	cJSON_AddNumberToObject(p, "maxDepth", 0);
	ksr_err ignored = {0};
	ksr_bidi_call(b, "browsingContext.getTree", p, ksr_deadline_in_ms(CRASH_PROBE_MS), &res,
	              &ignored);
	const char *url = cJSON_GetStringValue(cJSON_GetObjectItem(
	        cJSON_GetArrayItem(cJSON_GetObjectItem(res, "contexts"), 0), "url"));
	/* about:blank lives in a content process: refused there, it is the crash
	 * page's context (Firefox 153 reports the crashed tab as about:blank). */
	bool browser_page = url && (!strncmp(url, "about:", 6) || !strncmp(url, "chrome:", 7));
	bool crashed = url && (!browser_page || !strcmp(url, "about:blank") ||
	                       !strncmp(url, "about:tabcrashed", 16));
	cJSON_Delete(res);
	return crashed;
}

/* One script command in the context. Firefox never answers a call whose
 * document was replaced during it (a navigation: the new document's
 * domContentLoaded ends the wait, *replaced set). */
static ksr_page_status script_once(ksr_bidi *b, const char *method, cJSON *p, ksr_deadline d,
                                   cJSON **res, bool *replaced, ksr_err *err)
{
	ksr_page_status st = ksr_cdp_wire_call_unless(b->wire, method, p, d, NAVIGATED_EVENT,
	                                              b->context, res, replaced, err);
	if (content_crashed(b, st, err)) {
		ksr_err_set(err,
		            "the tab's content process crashed (Firefox shows its crash page)");
		st = KSR_PAGE_CRASHED;
	}
	return st;
}

/* Run a script command in the context; *remote gets its result (a remote
 * value, owned by the caller). An exception in the page is ERROR; a crashed
 * content process is CRASHED. again: the script only reads the page (a
 * probe, a page: check), so one cut short by a navigation runs again in the
 * new document; else that is ERROR, saying the page navigated. */
static ksr_page_status script(ksr_bidi *b, const char *method, cJSON *p, bool again, ksr_deadline d,
                              cJSON **remote, ksr_err *err)
{
	*remote = NULL;
	if (!b) {
		cJSON_Delete(p);
		return ksr_err_set(err, "no browser is attached"), KSR_PAGE_CLOSED;
	}
	cJSON_AddItemToObject(p, "target", bidi_target(b));
	cJSON_AddBoolToObject(p, "awaitPromise", true);
	cJSON_AddStringToObject(p, "resultOwnership", "none");
	cJSON_AddBoolToObject(p, "userActivation", true);
	cJSON *so = cJSON_AddObjectToObject(p, "serializationOptions");
	cJSON_AddNumberToObject(so, "maxObjectDepth", OBJECT_DEPTH);
	cJSON *res = NULL;
	bool replaced = false;
	ksr_page_status st;
	for (int run = 0;; run++) {
		st = script_once(b, method, again ? cJSON_Duplicate(p, true) : p, d, &res,
		                 &replaced, err);
		if (!again || !replaced || run + 1 >= SCRIPT_RUNS)
			break;
		ksr_err_clear(err);
	}
	if (again)
		cJSON_Delete(p);
	if (replaced) {
		ksr_err cut = *err;
		ksr_err_set(err, "%s; the script's result is lost (wait for the new page instead)",
		            cut.msg);
	}
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(res, "type"));
	if (st == KSR_PAGE_OK && type && !strcmp(type, "exception"))
		st = exception_of(res, err);
	else if (st == KSR_PAGE_OK)
		*remote = cJSON_DetachItemFromObject(res, "result");
	cJSON_Delete(res);
	return st;
}

static ksr_page_status eval_js(ksr_bidi *b, const char *js, bool again, ksr_deadline d,
                               bool *truthy, cJSON **value, ksr_err *err)
{
	cJSON *p = cJSON_CreateObject(), *remote = NULL;
	cJSON_AddStringToObject(p, "expression", js);
	*truthy = false;
	if (value)
		*value = NULL;
	ksr_page_status st = script(b, "script.evaluate", p, again, d, &remote, err);
	if (st == KSR_PAGE_OK) {
		cJSON *v = ksr_bidi_remote_to_json(remote, truthy);
		if (value)
			*value = v;
		else
			cJSON_Delete(v);
	}
	cJSON_Delete(remote);
	return st;
}

ksr_page_status ksr_bidi_eval(ksr_bidi *b, const char *js, ksr_deadline d, bool *truthy,
                              cJSON **value, ksr_err *err)
{
	return eval_js(b, js, false, d, truthy, value, err);
}

static void add_string_arg(cJSON *args, const char *s)
{
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "type", "string");
	cJSON_AddStringToObject(a, "value", s);
	cJSON_AddItemToArray(args, a);
}

/* The probe's wrapper: the element by selector or text (ksr_page_find_js,
 * as CDP's probe and the page: check find it) or by a list id (an id whose
 * node is gone is detached, as CDP reports it). */
static const char PROBE_WRAP_JS[] =
        "async function(ref, want) {\n"
        "const probe = %s, find = %s;\n"
        "if (!/^@e[0-9]/.test(ref)) return probe(find(ref), want);\n"
        "const w = window.__ksrRefs && window.__ksrRefs.get(Number(ref.slice(2)));\n"
        "const el = w ? w.deref() : null;\n"
        "if (!el) return {state: 'detached', why: 'is no longer in the page'};\n"
        "return probe(el, want); }";

static ksr_page_status bidi_probe(void *ud, const char *ref, const char *want, ksr_deadline d,
                                  cJSON **out, ksr_err *err)
{
	ksr_bidi *b = ud;
	cJSON *p = cJSON_CreateObject(), *remote = NULL;
	char *fn = ksr_xasprintf(PROBE_WRAP_JS, ksr_page_probe_js, ksr_page_find_js);
	cJSON_AddStringToObject(p, "functionDeclaration", fn);
	free(fn);
	cJSON *args = cJSON_AddArrayToObject(p, "arguments");
	add_string_arg(args, ref);
	add_string_arg(args, want);
	*out = NULL;
	ksr_page_status st = script(b, "script.callFunction", p, true, d, &remote, err);
	if (st == KSR_PAGE_OK)
		*out = ksr_bidi_remote_to_json(remote, NULL);
	cJSON_Delete(remote);
	if (st == KSR_PAGE_OK && !cJSON_IsObject(*out)) {
		cJSON_Delete(*out);
		*out = NULL;
		return ksr_err_set(err, "the element probe returned nothing"), KSR_PAGE_ERROR;
	}
	return st;
}

static ksr_page_status actionable(ksr_bidi *b, const char *ref, const char *want, ksr_deadline d,
                                  ksr_page_hit *hit, ksr_err *err)
{
	if (!b)
		return ksr_err_set(err, "no browser is attached"), KSR_PAGE_CLOSED;
	return ksr_page_actionable(b->wire, bidi_probe, b, ref, want, d, hit, err);
}

ksr_page_status ksr_bidi_wait_for(ksr_bidi *b, const char *ref, const char *state, ksr_deadline d,
                                  ksr_page_hit *hit, ksr_err *err)
{
	if (!b)
		return ksr_err_set(err, "no browser is attached"), KSR_PAGE_CLOSED;
	return ksr_page_wait_state(b->wire, bidi_probe, b, ref, state, d, hit, err);
}

/* ---- input ----------------------------------------------------------------- */

/* One input source with its actions, performed; the call returns once the
 * browser has dispatched them. */
static ksr_page_status perform(ksr_bidi *b, cJSON *source, ksr_deadline d, ksr_err *err)
{
	cJSON *p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "context", b->context);
	cJSON_AddItemToArray(cJSON_AddArrayToObject(p, "actions"), source);
	return ksr_bidi_call(b, "input.performActions", p, d, NULL, err);
}

static cJSON *source(const char *type, const char *id, cJSON **actions)
{
	cJSON *s = cJSON_CreateObject();
	cJSON_AddStringToObject(s, "type", type);
	cJSON_AddStringToObject(s, "id", id);
	if (!strcmp(type, "pointer"))
		cJSON_AddStringToObject(cJSON_AddObjectToObject(s, "parameters"), "pointerType",
		                        "mouse");
	*actions = cJSON_AddArrayToObject(s, "actions");
	return s;
}

static void pointer_action(cJSON *actions, const char *type, double x, double y)
{
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "type", type);
	if (!strcmp(type, "pointerMove")) {
		/* Integral viewport pixels: the centre's floor stays inside the box. */
		cJSON_AddNumberToObject(a, "x", floor(x));
		cJSON_AddNumberToObject(a, "y", floor(y));
		cJSON_AddStringToObject(a, "origin", "viewport");
	} else {
		cJSON_AddNumberToObject(a, "button", 0);
	}
	cJSON_AddItemToArray(actions, a);
}

static ksr_page_status pointer(ksr_bidi *b, const char *ref, bool press, ksr_deadline d,
                               ksr_page_hit *hit, ksr_err *err)
{
	ksr_page_hit h = {0};
	ksr_page_status st = actionable(b, ref, "click", d, &h, err);
	h.attempts = press ? 1 : 0;
	if (hit)
		*hit = h;
	if (st != KSR_PAGE_OK)
		return st;
	cJSON *actions, *s = source("pointer", "ksr-mouse", &actions);
	pointer_action(actions, "pointerMove", h.x, h.y);
	if (press) {
		pointer_action(actions, "pointerDown", 0, 0);
		pointer_action(actions, "pointerUp", 0, 0);
	}
	return perform(b, s, d, err);
}

ksr_page_status ksr_bidi_click(ksr_bidi *b, const char *ref, ksr_deadline d, ksr_page_hit *hit,
                               ksr_err *err)
{
	return pointer(b, ref, true, d, hit, err);
}

ksr_page_status ksr_bidi_hover(ksr_bidi *b, const char *ref, ksr_deadline d, ksr_page_hit *hit,
                               ksr_err *err)
{
	return pointer(b, ref, false, d, hit, err);
}

/* A DOM key value as WebDriver's key action value: the character itself, or
 * the code point WebDriver assigns to a named key. */
static const char *webdriver_key(const ksr_page_key *k)
{
	static const struct {
		const char *dom, *wd;
	} named[] = {
	        {"Enter", "\xee\x80\x87"},     {"Tab", "\xee\x80\x84"},
	        {"Escape", "\xee\x80\x8c"},    {"Backspace", "\xee\x80\x83"},
	        {"Delete", "\xee\x80\x97"},    {"ArrowLeft", "\xee\x80\x92"},
	        {"ArrowUp", "\xee\x80\x93"},   {"ArrowRight", "\xee\x80\x94"},
	        {"ArrowDown", "\xee\x80\x95"}, {"Home", "\xee\x80\x91"},
	        {"End", "\xee\x80\x90"},       {"PageUp", "\xee\x80\x8e"},
	        {"PageDown", "\xee\x80\x8f"},  {"Insert", "\xee\x80\x96"},
	        {"Shift", "\xee\x80\x88"},     {"Control", "\xee\x80\x89"},
	        {"Alt", "\xee\x80\x8a"},       {"Meta", "\xee\x80\xbd"},
	};
	static char fkey[4];
	for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
		if (!strcmp(k->key, named[i].dom))
			return named[i].wd;
	int f = k->key[0] == 'F' && k->key[1] ? atoi(k->key + 1) : 0;
	if (f >= 1 && f <= 12) { /* F1..F12: U+E031..U+E03C */
		unsigned cp = 0xE030u + (unsigned)f;
		fkey[0] = (char)(0xE0 | (cp >> 12));
		fkey[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		fkey[2] = (char)(0x80 | (cp & 0x3F));
		fkey[3] = '\0';
		return fkey;
	}
	return k->key;
}

static void key_action(cJSON *actions, const char *type, const ksr_page_key *k)
{
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "type", type);
	cJSON_AddStringToObject(a, "value", webdriver_key(k));
	cJSON_AddItemToArray(actions, a);
}

/* One chord: modifiers down in the order written, the key down and up,
 * modifiers up in reverse. */
static ksr_page_status chord(void *ud, const ksr_page_chord *pc, ksr_deadline d, ksr_err *err)
{
	cJSON *actions, *s = source("key", "ksr-keyboard", &actions);
	for (int i = 0; i < pc->n; i++)
		key_action(actions, "keyDown", ksr_page_modifier_key(pc->order[i]));
	key_action(actions, "keyDown", &pc->key);
	key_action(actions, "keyUp", &pc->key);
	for (int i = pc->n - 1; i >= 0; i--)
		key_action(actions, "keyUp", ksr_page_modifier_key(pc->order[i]));
	return perform(ud, s, d, err);
}

ksr_page_status ksr_bidi_press(ksr_bidi *b, const char *chords, ksr_deadline d, ksr_err *err)
{
	if (!b)
		return ksr_err_set(err, "no browser is attached"), KSR_PAGE_CLOSED;
	return ksr_page_chords_each(chords, chord, b, d, err);
}

/* Every character a key press, in one input.performActions. */
static ksr_page_status type_text(ksr_bidi *b, const char *text, ksr_deadline d, ksr_err *err)
{
	if (!*text)
		return KSR_PAGE_OK;
	cJSON *actions, *s = source("key", "ksr-keyboard", &actions);
	for (const char *p = text; *p;) {
		ksr_page_key k;
		p = ksr_page_key_of_char(p, &k);
		key_action(actions, "keyDown", &k);
		key_action(actions, "keyUp", &k);
	}
	return perform(b, s, d, err);
}

ksr_page_status ksr_bidi_type(ksr_bidi *b, const char *ref, const char *text, ksr_deadline d,
                              ksr_page_hit *hit, ksr_err *err)
{
	ksr_page_status st = actionable(b, ref, "type", d, hit, err);
	return st == KSR_PAGE_OK ? type_text(b, text, d, err) : st;
}

/* The probe focused the field and selected its content; the text replaces
 * it as one insertion (one input event, as CDP's Input.insertText), then
 * change, which a fill implies. An empty text deletes the selection. */
static const char FILL_JS[] =
        "function(text) { const e = document.activeElement;\n"
        "const ok = text === '' ? document.execCommand('delete') :\n"
        "  document.execCommand('insertText', false, text);\n"
        "if (text !== '' && e) e.dispatchEvent(new Event('change', {bubbles: true}));\n"
        "return ok; }";

ksr_page_status ksr_bidi_fill(ksr_bidi *b, const char *ref, const char *text, ksr_deadline d,
                              ksr_page_hit *hit, ksr_err *err)
{
	ksr_page_status st = actionable(b, ref, "fill", d, hit, err);
	if (st != KSR_PAGE_OK)
		return st;
	cJSON *p = cJSON_CreateObject(), *remote = NULL;
	cJSON_AddStringToObject(p, "functionDeclaration", FILL_JS);
	add_string_arg(cJSON_AddArrayToObject(p, "arguments"), text);
	st = script(b, "script.callFunction", p, false, d, &remote, err);
	bool inserted = false;
	cJSON_Delete(ksr_bidi_remote_to_json(remote, &inserted));
	cJSON_Delete(remote);
	if (st == KSR_PAGE_OK && !inserted) /* the field refused execCommand: type it */
		st = type_text(b, text, d, err);
	return st;
}

/* ---- navigation, page state, elements ------------------------------------------ */

ksr_page_status ksr_bidi_navigate(ksr_bidi *b, const char *url, ksr_deadline d, ksr_err *err)
{
	if (!b)
		return ksr_err_set(err, "no browser is attached"), KSR_PAGE_CLOSED;
	cJSON *p = cJSON_CreateObject(), *res = NULL;
	cJSON_AddStringToObject(p, "context", b->context);
	cJSON_AddStringToObject(p, "url", url);
	cJSON_AddStringToObject(p, "wait", "complete");
	ksr_err e = {0};
	ksr_page_status st = ksr_bidi_call(b, "browsingContext.navigate", p, d, &res, &e);
	const char *now = cJSON_GetStringValue(cJSON_GetObjectItem(res, "url"));
	if (st == KSR_PAGE_OK)
		ksr_cdp_wire_set_url(b->wire, now ? now : url);
	else if (st == KSR_PAGE_ERROR) /* e.g. NS_ERROR_CONNECTION_REFUSED */
		ksr_err_set(err, "%s could not be loaded: %s", url, e.msg);
	else
		*err = e;
	cJSON_Delete(res);
	return st;
}

ksr_page_status ksr_bidi_page_state(ksr_bidi *b, const char *selector, ksr_deadline d,
                                    ksr_page_info *out, ksr_err *err)
{
	memset(out, 0, sizeof *out);
	char *js = ksr_page_state_js(selector);
	cJSON *v = NULL;
	bool truthy;
	ksr_page_status st = eval_js(b, js, true, d, &truthy, &v, err);
	free(js);
	if (st == KSR_PAGE_OK)
		ksr_page_state_read(v, out);
	cJSON_Delete(v);
	return st;
}

ksr_page_status ksr_bidi_locate(ksr_bidi *b, const char *selector, int max, ksr_deadline d,
                                int *count, ksr_err *err)
{
	*count = 0;
	if (!b)
		return ksr_err_set(err, "no browser is attached"), KSR_PAGE_CLOSED;
	cJSON *p = cJSON_CreateObject(), *res = NULL;
	cJSON_AddStringToObject(p, "context", b->context);
	cJSON *loc = cJSON_AddObjectToObject(p, "locator");
	cJSON_AddStringToObject(loc, "type", "css");
	cJSON_AddStringToObject(loc, "value", selector);
	if (max > 0)
		cJSON_AddNumberToObject(p, "maxNodeCount", max);
	ksr_page_status st = ksr_bidi_call(b, "browsingContext.locateNodes", p, d, &res, err);
	*count = cJSON_GetArraySize(cJSON_GetObjectItem(res, "nodes"));
	cJSON_Delete(res);
	return st;
}

/* The visible interactive elements, each [id, role, name], and the page's
 * URL; ids are kept in the page (a WeakMap and WeakRefs: a removed node is
 * not held alive). */
static const char LIST_JS[] =
        "(() => { const w = window;\n"
        "if (!w.__ksrRefs) { w.__ksrIds = new WeakMap(); w.__ksrRefs = new Map(); w.__ksrNext = 1; "
        "}\n"
        "const roles = ['button','link','textbox','searchbox','checkbox','radio','combobox',\n"
        "  'listbox','menuitem','menuitemcheckbox','menuitemradio','option','slider',\n"
        "  'spinbutton','switch','tab','treeitem'];\n"
        "const roleOf = e => { const r = e.getAttribute('role'); if (r) return r.split(' ')[0];\n"
        "  const t = e.localName, ty = (e.type || '').toLowerCase();\n"
        "  if (t === 'a') return 'link'; if (t === 'button' || t === 'summary') return 'button';\n"
        "  if (t === 'select') return e.multiple || e.size > 1 ? 'listbox' : 'combobox';\n"
        "  if (t === 'textarea') return 'textbox';\n"
        "  if (t === 'input') return {checkbox: 'checkbox', radio: 'radio', range: 'slider',\n"
        "    number: 'spinbutton', search: 'searchbox', button: 'button', submit: 'button',\n"
        "    reset: 'button', image: 'button'}[ty] || 'textbox';\n"
        "  return e.isContentEditable ? 'textbox' : ''; };\n"
        "const nameOf = e => (e.getAttribute('aria-label') || (e.labels && e.labels[0] &&\n"
        "  e.labels[0].innerText) || (e.localName === 'input' && ['submit','button','reset']\n"
        "  .includes(e.type) ? e.value : '') || e.innerText || e.getAttribute('title') ||\n"
        "  e.getAttribute('placeholder') || e.getAttribute('alt') || '').trim()\n"
        "  .replace(/\\s+/g, ' ').slice(0, 200);\n"
        "const out = [];\n"
        "for (const e of document.querySelectorAll('a[href],button,input:not([type=hidden]),"
        "select,textarea,summary,[role],[contenteditable],[tabindex]')) {\n"
        "  const role = roleOf(e);\n"
        "  if (!roles.includes(role) || !e.checkVisibility({visibilityProperty: true})) continue;\n"
        "  let id = w.__ksrIds.get(e);\n"
        "  if (!id) { id = w.__ksrNext++; w.__ksrIds.set(e, id); w.__ksrRefs.set(id, new "
        "WeakRef(e)); }\n"
        "  out.push([id, role, nameOf(e)]); }\n"
        "return {url: location.href, rows: out}; })()";

static void add_listed(ksr_page_element_list *l, const cJSON *row)
{
	const char *role = cJSON_GetStringValue(cJSON_GetArrayItem(row, 1));
	const char *name = cJSON_GetStringValue(cJSON_GetArrayItem(row, 2));
	double id = cJSON_GetNumberValue(cJSON_GetArrayItem(row, 0));
	if (!role || isnan(id))
		return;
	l->items = ksr_xrealloc(l->items, (l->len + 1) * sizeof *l->items);
	ksr_page_element *e = &l->items[l->len++];
	e->backend_id = (long)id;
	snprintf(e->id, sizeof e->id, "@e%ld", e->backend_id);
	e->role = ksr_xstrdup(role);
	e->name = ksr_xstrdup(name ? name : "");
}

ksr_page_status ksr_bidi_list_interactive(ksr_bidi *b, ksr_deadline d, ksr_page_element_list *out,
                                          ksr_err *err)
{
	memset(out, 0, sizeof *out);
	cJSON *v = NULL, *row;
	bool truthy;
	ksr_page_status st = eval_js(b, LIST_JS, true, d, &truthy, &v, err);
	cJSON_ArrayForEach(row, cJSON_GetObjectItem(v, "rows")) add_listed(out, row);
	const char *url = cJSON_GetStringValue(cJSON_GetObjectItem(v, "url"));
	if (url) /* the page's URL now: a click may have navigated since attach */
		ksr_cdp_wire_set_url(b->wire, url);
	cJSON_Delete(v);
	return st;
}

/* ---- the page handle ---------------------------------------------------------- */

static ksr_page_status op_navigate(void *b, const char *url, ksr_deadline d, ksr_err *err)
{
	return ksr_bidi_navigate(b, url, d, err);
}

static ksr_page_status op_eval(void *b, const char *js, ksr_deadline d, bool *truthy, cJSON **value,
                               ksr_err *err)
{
	return ksr_bidi_eval(b, js, d, truthy, value, err);
}

static ksr_page_status op_click(void *b, const char *ref, ksr_deadline d, ksr_page_hit *hit,
                                ksr_err *err)
{
	return ksr_bidi_click(b, ref, d, hit, err);
}

static ksr_page_status op_hover(void *b, const char *ref, ksr_deadline d, ksr_page_hit *hit,
                                ksr_err *err)
{
	return ksr_bidi_hover(b, ref, d, hit, err);
}

static ksr_page_status op_fill(void *b, const char *ref, const char *text, ksr_deadline d,
                               ksr_page_hit *hit, ksr_err *err)
{
	return ksr_bidi_fill(b, ref, text, d, hit, err);
}

static ksr_page_status op_type(void *b, const char *ref, const char *text, ksr_deadline d,
                               ksr_page_hit *hit, ksr_err *err)
{
	return ksr_bidi_type(b, ref, text, d, hit, err);
}

static ksr_page_status op_press(void *b, const char *chords, ksr_deadline d, ksr_err *err)
{
	return ksr_bidi_press(b, chords, d, err);
}

static ksr_page_status op_wait_for(void *b, const char *ref, const char *state, ksr_deadline d,
                                   ksr_page_hit *hit, ksr_err *err)
{
	return ksr_bidi_wait_for(b, ref, state, d, hit, err);
}

static ksr_page_status op_state(void *b, const char *selector, ksr_deadline d, ksr_page_info *out,
                                ksr_err *err)
{
	return ksr_bidi_page_state(b, selector, d, out, err);
}

static ksr_page_status op_list(void *b, ksr_deadline d, ksr_page_element_list *out, ksr_err *err)
{
	return ksr_bidi_list_interactive(b, d, out, err);
}

static cJSON *op_take_errors(void *b, int *dropped)
{
	return ksr_bidi_take_page_errors(b, dropped);
}

static ksr_page_status op_watch_presses(void *b, ksr_deadline d, ksr_err *err)
{
	return ksr_bidi_watch_presses(b, d, err);
}

static ksr_page_status op_take_press(void *b, int x, int y, ksr_deadline d, ksr_page_pressed *out,
                                     ksr_err *err)
{
	return ksr_bidi_take_press(b, x, y, d, out, err);
}

static const char *op_url(const void *b)
{
	return ksr_bidi_page_url(b);
}

static double op_connect_ms(const void *b)
{
	return ksr_bidi_connect_ms(b);
}

static void op_close(void *b)
{
	ksr_bidi_close(b);
}

static const ksr_page_ops bidi_ops = {
        .protocol = "bidi",
        .navigate = op_navigate,
        .eval = op_eval,
        .click = op_click,
        .hover = op_hover,
        .fill = op_fill,
        .type = op_type,
        .press = op_press,
        .wait_for = op_wait_for,
        .state = op_state,
        .list_interactive = op_list,
        .take_errors = op_take_errors,
        .watch_presses = op_watch_presses,
        .take_press = op_take_press,
        .url = op_url,
        .connect_ms = op_connect_ms,
        .close = op_close,
};

ksr_page *ksr_bidi_page_open(ksr_bidi *b)
{
	if (!b)
		return NULL;
	ksr_page *p = ksr_xcalloc(1, sizeof *p);
	p->ops = &bidi_ops;
	p->impl = b;
	return p;
}
