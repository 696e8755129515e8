/* The page rung's handle (ksr/page.h): the calls every executor makes, sent
 * to the protocol behind the handle, and CDP's table. */
#include "ksr/cdp.h"
#include "ksr/page.h"

#include "backend/cdp/page_common.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

const char *ksr_page_protocol(const ksr_page *p)
{
	return p ? p->ops->protocol : "none";
}

ksr_page_status ksr_page_navigate(ksr_page *p, const char *url, ksr_deadline d, ksr_err *err)
{
	return p->ops->navigate(p->impl, url, d, err);
}

ksr_page_status ksr_page_eval(ksr_page *p, const char *js, ksr_deadline d, bool *truthy,
                              cJSON **value, ksr_err *err)
{
	return p->ops->eval(p->impl, js, d, truthy, value, err);
}

ksr_page_status ksr_page_click(ksr_page *p, const char *ref, ksr_deadline d, ksr_page_hit *hit,
                               ksr_err *err)
{
	return p->ops->click(p->impl, ref, d, hit, err);
}

ksr_page_status ksr_page_hover(ksr_page *p, const char *ref, ksr_deadline d, ksr_page_hit *hit,
                               ksr_err *err)
{
	return p->ops->hover(p->impl, ref, d, hit, err);
}

ksr_page_status ksr_page_fill(ksr_page *p, const char *ref, const char *text, ksr_deadline d,
                              ksr_page_hit *hit, ksr_err *err)
{
	return p->ops->fill(p->impl, ref, text, d, hit, err);
}

ksr_page_status ksr_page_type(ksr_page *p, const char *ref, const char *text, ksr_deadline d,
                              ksr_page_hit *hit, ksr_err *err)
{
	return p->ops->type(p->impl, ref, text, d, hit, err);
}

ksr_page_status ksr_page_press(ksr_page *p, const char *chords, ksr_deadline d, ksr_err *err)
{
	return p->ops->press(p->impl, chords, d, err);
}

ksr_page_status ksr_page_wait_for(ksr_page *p, const char *ref, const char *state, ksr_deadline d,
                                  ksr_page_hit *hit, ksr_err *err)
{
	return p->ops->wait_for(p->impl, ref, state, d, hit, err);
}

ksr_page_status ksr_page_state(ksr_page *p, const char *selector, ksr_deadline d,
                               ksr_page_info *out, ksr_err *err)
{
	return p->ops->state(p->impl, selector, d, out, err);
}

ksr_page_status ksr_page_list_interactive(ksr_page *p, ksr_deadline d, ksr_page_element_list *out,
                                          ksr_err *err)
{
	return p->ops->list_interactive(p->impl, d, out, err);
}

cJSON *ksr_page_take_errors(ksr_page *p, int *dropped)
{
	if (!p) {
		if (dropped)
			*dropped = 0;
		return cJSON_CreateArray();
	}
	return p->ops->take_errors(p->impl, dropped);
}

ksr_page_status ksr_page_watch_presses(ksr_page *p, ksr_deadline d, ksr_err *err)
{
	return p->ops->watch_presses(p->impl, d, err);
}

ksr_page_status ksr_page_take_press(ksr_page *p, int x, int y, ksr_deadline d,
                                    ksr_page_pressed *out, ksr_err *err)
{
	return p->ops->take_press(p->impl, x, y, d, out, err);
}

const char *ksr_page_url(const ksr_page *p)
{
	return p ? p->ops->url(p->impl) : NULL;
}

double ksr_page_connect_ms(const ksr_page *p)
{
	return p ? p->ops->connect_ms(p->impl) : 0;
}

void ksr_page_close(ksr_page *p)
{
	if (!p)
		return;
	p->ops->close(p->impl);
	free(p);
}

/* ---- CDP's table ------------------------------------------------------------ */

static ksr_page_status cdp_navigate(void *c, const char *url, ksr_deadline d, ksr_err *err)
{
	return ksr_cdp_navigate(c, url, d, err);
}

static ksr_page_status cdp_eval(void *c, const char *js, ksr_deadline d, bool *truthy,
                                cJSON **value, ksr_err *err)
{
	return ksr_cdp_eval(c, js, d, truthy, value, err);
}

static ksr_page_status cdp_click(void *c, const char *ref, ksr_deadline d, ksr_page_hit *hit,
                                 ksr_err *err)
{
	return ksr_cdp_click(c, ref, d, hit, err);
}

static ksr_page_status cdp_hover(void *c, const char *ref, ksr_deadline d, ksr_page_hit *hit,
                                 ksr_err *err)
{
	return ksr_cdp_hover(c, ref, d, hit, err);
}

static ksr_page_status cdp_fill(void *c, const char *ref, const char *text, ksr_deadline d,
                                ksr_page_hit *hit, ksr_err *err)
{
	return ksr_cdp_fill(c, ref, text, d, hit, err);
}

static ksr_page_status cdp_type(void *c, const char *ref, const char *text, ksr_deadline d,
                                ksr_page_hit *hit, ksr_err *err)
{
	return ksr_cdp_type(c, ref, text, d, hit, err);
}

static ksr_page_status cdp_press(void *c, const char *chords, ksr_deadline d, ksr_err *err)
{
	return ksr_cdp_press(c, chords, d, err);
}

static ksr_page_status cdp_wait_for(void *c, const char *ref, const char *state, ksr_deadline d,
                                    ksr_page_hit *hit, ksr_err *err)
{
	return ksr_cdp_wait_for(c, ref, state, d, hit, err);
}

static ksr_page_status cdp_state(void *c, const char *selector, ksr_deadline d, ksr_page_info *out,
                                 ksr_err *err)
{
	return ksr_cdp_page_state(c, selector, d, out, err);
}

static ksr_page_status cdp_list(void *c, ksr_deadline d, ksr_page_element_list *out, ksr_err *err)
{
	return ksr_cdp_list_interactive(c, d, out, err);
}

static cJSON *cdp_take_errors(void *c, int *dropped)
{
	return ksr_cdp_take_page_errors(c, dropped);
}

/* The binding first (every context gets it, new ones too), then the
 * listener in each new document and in the current one. A current document
 * being replaced refuses the evaluate: its successor gets the listener as a
 * new document, so that is not a failure. */
static ksr_page_status cdp_watch_presses(void *c, ksr_deadline d, ksr_err *err)
{
	cJSON *p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "name", KSR_PRESS_BINDING);
	ksr_page_status st = ksr_cdp_call(c, "Runtime.addBinding", p, d, NULL, err);
	char *src =
	        ksr_xasprintf("(%s)(s => globalThis." KSR_PRESS_BINDING "(s))", ksr_page_press_js);
	if (st == KSR_PAGE_OK) {
		p = cJSON_CreateObject();
		cJSON_AddStringToObject(p, "source", src);
		st = ksr_cdp_call(c, "Page.addScriptToEvaluateOnNewDocument", p, d, NULL, err);
	}
	if (st == KSR_PAGE_OK) {
		p = cJSON_CreateObject();
		cJSON_AddStringToObject(p, "expression", src);
		ksr_err ignored = {0};
		ksr_page_status now = ksr_cdp_call(c, "Runtime.evaluate", p, d, NULL, &ignored);
		if (now != KSR_PAGE_OK && now != KSR_PAGE_ERROR)
			st = (*err = ignored, now);
	}
	free(src);
	return st;
}

static ksr_page_status cdp_take_press(void *c, int x, int y, ksr_deadline d, ksr_page_pressed *out,
                                      ksr_err *err)
{
	return ksr_page_wire_take_press(c, x, y, d, out, err);
}

static const char *cdp_url(const void *c)
{
	return ksr_cdp_page_url(c);
}

static double cdp_connect_ms(const void *c)
{
	const ksr_cdp_timing *t = ksr_cdp_timings(c);
	return t ? t->discover_ms + t->handshake_ms + t->attach_ms : 0;
}

static void cdp_close(void *c)
{
	ksr_cdp_close(c);
}

static const ksr_page_ops cdp_ops = {
        .protocol = "cdp",
        .navigate = cdp_navigate,
        .eval = cdp_eval,
        .click = cdp_click,
        .hover = cdp_hover,
        .fill = cdp_fill,
        .type = cdp_type,
        .press = cdp_press,
        .wait_for = cdp_wait_for,
        .state = cdp_state,
        .list_interactive = cdp_list,
        .take_errors = cdp_take_errors,
        .watch_presses = cdp_watch_presses,
        .take_press = cdp_take_press,
        .url = cdp_url,
        .connect_ms = cdp_connect_ms,
        .close = cdp_close,
};

ksr_page *ksr_cdp_page_open(ksr_cdp *c)
{
	if (!c)
		return NULL;
	ksr_page *p = ksr_xcalloc(1, sizeof *p);
	p->ops = &cdp_ops;
	p->impl = c;
	return p;
}

ksr_cdp *ksr_cdp_of_page(ksr_page *p)
{
	return p && p->ops == &cdp_ops ? p->impl : NULL;
}
