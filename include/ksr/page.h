/* The page rung (rung 0) as the executors see it: one handle on a browser's
 * page, whichever protocol reaches it (Chrome DevTools Protocol for
 * Chromium-family browsers, WebDriver BiDi for Firefox). A backend makes the
 * handle (ksr_cdp_page_open, ksr_bidi_page_open) and fills its table; nothing
 * above the backends names a protocol to act on a page. Every call is
 * synchronous, bounded by its deadline and returns at once on cancel. */
#ifndef KSR_PAGE_H
#define KSR_PAGE_H

#include <stdbool.h>
#include <stddef.h>

#include "ksr/deadline.h"
#include "ksr/error.h"

typedef struct cJSON cJSON;

typedef enum ksr_page_status {
	KSR_PAGE_OK = 0,
	KSR_PAGE_ERROR,     /* an error reply, a script exception, a bad argument: err says */
	KSR_PAGE_NOT_READY, /* the element never became actionable before the deadline */
	KSR_PAGE_TIMEOUT,   /* the browser did not answer before the deadline */
	KSR_PAGE_CANCELLED, /* SIGTERM/SIGINT */
	KSR_PAGE_CLOSED,    /* the connection is gone (browser exited, page closed) */
	KSR_PAGE_CRASHED,   /* the page's renderer (content process) crashed */
} ksr_page_status;

const char *ksr_page_status_name(ksr_page_status s);

/* The browser a scenario names (cdp: {browser: ...}); ANY: told at attach. */
typedef enum ksr_page_browser {
	KSR_PAGE_BROWSER_ANY = 0,
	KSR_PAGE_BROWSER_CHROMIUM, /* Chrome DevTools Protocol */
	KSR_PAGE_BROWSER_FIREFOX,  /* WebDriver BiDi */
} ksr_page_browser;

typedef struct ksr_page_box {
	double x, y, w, h; /* CSS pixels in the page's viewport */
} ksr_page_box;

typedef struct ksr_page_hit {
	bool has_box;
	ksr_page_box box;
	double x, y;  /* the point acted on (click) */
	int attempts; /* click: press and release sent this many times */
} ksr_page_hit;

typedef struct ksr_page_info {
	bool found;  /* the selector matched (true when no selector was asked) */
	char *text;  /* the element's innerText/textContent, or NULL */
	char *url;   /* location.href */
	char *title; /* document.title */
} ksr_page_info;
void ksr_page_info_clear(ksr_page_info *p);

/* An interactive element; its id ("@e" + a number, never valid CSS) names it
 * in the element calls while its node lives. */
typedef struct ksr_page_element {
	char id[32];
	char *role, *name;
	long backend_id;
} ksr_page_element;
typedef struct ksr_page_element_list {
	ksr_page_element *items;
	size_t len;
} ksr_page_element_list;
void ksr_page_element_list_clear(ksr_page_element_list *l);

/* A left press the page itself saw (ksr_page_watch_presses), reported from
 * the press's own event handler, so what it names is the document that was
 * pressed even when that document is gone by the time it is read. */
typedef struct ksr_page_pressed {
	double x, y;    /* where: screen pixels (the event's screenX/Y x devicePixelRatio) */
	bool in_frame;  /* in a sub-document (an iframe): nothing is named */
	char *selector; /* ksr_page_pick_js's selector; NULL: none finds the element alone */
	char *tag, *text, *url;
} ksr_page_pressed;
void ksr_page_pressed_clear(ksr_page_pressed *p);

/* What a protocol provides; impl is the backend's connection. The element
 * calls share the actionability rules (one script run in the page, the same
 * for every protocol: ksr_page_probe_js). */
typedef struct ksr_page_ops {
	const char *protocol; /* "cdp", "bidi": the step row's backend */
	ksr_page_status (*navigate)(void *impl, const char *url, ksr_deadline d, ksr_err *err);
	ksr_page_status (*eval)(void *impl, const char *js, ksr_deadline d, bool *truthy,
	                        cJSON **value, ksr_err *err);
	ksr_page_status (*click)(void *impl, const char *ref, ksr_deadline d, ksr_page_hit *hit,
	                         ksr_err *err);
	ksr_page_status (*hover)(void *impl, const char *ref, ksr_deadline d, ksr_page_hit *hit,
	                         ksr_err *err);
	ksr_page_status (*fill)(void *impl, const char *ref, const char *text, ksr_deadline d,
	                        ksr_page_hit *hit, ksr_err *err);
	ksr_page_status (*type)(void *impl, const char *ref, const char *text, ksr_deadline d,
	                        ksr_page_hit *hit, ksr_err *err);
	ksr_page_status (*press)(void *impl, const char *chords, ksr_deadline d, ksr_err *err);
	ksr_page_status (*wait_for)(void *impl, const char *ref, const char *state, ksr_deadline d,
	                            ksr_page_hit *hit, ksr_err *err);
	ksr_page_status (*state)(void *impl, const char *selector, ksr_deadline d,
	                         ksr_page_info *out, ksr_err *err);
	ksr_page_status (*list_interactive)(void *impl, ksr_deadline d, ksr_page_element_list *out,
	                                    ksr_err *err);
	cJSON *(*take_errors)(void *impl, int *dropped);
	ksr_page_status (*watch_presses)(void *impl, ksr_deadline d, ksr_err *err);
	ksr_page_status (*take_press)(void *impl, int x, int y, ksr_deadline d,
	                              ksr_page_pressed *out, ksr_err *err);
	const char *(*url)(const void *impl); /* the page's URL when attached */
	double (*connect_ms)(const void *impl);
	void (*close)(void *impl);
} ksr_page_ops;

typedef struct ksr_page {
	const ksr_page_ops *ops;
	void *impl;
} ksr_page;

/* The page's protocol name, "cdp" or "bidi". */
const char *ksr_page_protocol(const ksr_page *p);
ksr_page_status ksr_page_navigate(ksr_page *p, const char *url, ksr_deadline d, ksr_err *err);
/* Evaluate (promises awaited); *truthy per JavaScript; *value (may be NULL)
 * gets the value as JSON, owned by the caller. A thrown exception is ERROR. */
ksr_page_status ksr_page_eval(ksr_page *p, const char *js, ksr_deadline d, bool *truthy,
                              cJSON **value, ksr_err *err);
ksr_page_status ksr_page_click(ksr_page *p, const char *ref, ksr_deadline d, ksr_page_hit *hit,
                               ksr_err *err);
ksr_page_status ksr_page_hover(ksr_page *p, const char *ref, ksr_deadline d, ksr_page_hit *hit,
                               ksr_err *err);
ksr_page_status ksr_page_fill(ksr_page *p, const char *ref, const char *text, ksr_deadline d,
                              ksr_page_hit *hit, ksr_err *err);
ksr_page_status ksr_page_type(ksr_page *p, const char *ref, const char *text, ksr_deadline d,
                              ksr_page_hit *hit, ksr_err *err);
ksr_page_status ksr_page_press(ksr_page *p, const char *chords, ksr_deadline d, ksr_err *err);
ksr_page_status ksr_page_wait_for(ksr_page *p, const char *ref, const char *state, ksr_deadline d,
                                  ksr_page_hit *hit, ksr_err *err);
ksr_page_status ksr_page_state(ksr_page *p, const char *selector, ksr_deadline d,
                               ksr_page_info *out, ksr_err *err);
ksr_page_status ksr_page_list_interactive(ksr_page *p, ksr_deadline d, ksr_page_element_list *out,
                                          ksr_err *err);
/* The page's errors since the last call: uncaught exceptions and console
 * errors (CDP: Runtime.exceptionThrown, Runtime.consoleAPICalled error and
 * assert; BiDi: log.entryAdded at level error), kept as they arrived and read
 * without waiting. An array of {kind: "exception"|"console", text (outside
 * text, at most 1000 bytes), source?: "URL:LINE"}, owned by the caller;
 * *dropped (may be NULL) gets how many more came than were kept (100). An
 * empty array for NULL. */
cJSON *ksr_page_take_errors(ksr_page *p, int *dropped);
/* From now on every document of the page (the current one and each new one,
 * its frames too) reports each trusted left press as it happens: a capturing
 * pointerdown listener names the pressed element (ksr_page_pick_js) in the
 * handler, before the page's own handlers can act, and sends it out of band
 * (CDP: Runtime.addBinding, Page.addScriptToEvaluateOnNewDocument and
 * Runtime.evaluate, the report a Runtime.bindingCalled; BiDi:
 * script.addPreloadScript and script.callFunction with a channel argument,
 * the report a script.message), so a report survives the navigation the
 * press causes. Reports are kept as they arrive (the last 32). */
ksr_page_status ksr_page_watch_presses(ksr_page *p, ksr_deadline d, ksr_err *err);
/* The oldest press reported within a few pixels of screen point x,y (older
 * ones, never asked for, are dropped), waiting for it until d. TIMEOUT when
 * none came, or at once when none can: the point is outside the viewport
 * the page's last report placed on the screen (the browser's own toolbar). */
ksr_page_status ksr_page_take_press(ksr_page *p, int x, int y, ksr_deadline d,
                                    ksr_page_pressed *out, ksr_err *err);
const char *ksr_page_url(const ksr_page *p);
double ksr_page_connect_ms(const ksr_page *p);
void ksr_page_close(ksr_page *p); /* NULL-safe; closes the connection too */

/* The actionability probe, a JavaScript function (el, want) run in the page:
 * the one place the rules live (see src/backend/cdp/dom.c). */
extern const char ksr_page_probe_js[];
/* The element a ref names, a JavaScript function (ref) run in the page: a CSS
 * selector, or text=T / text="T" / text=/RE/FLAGS (the smallest element whose
 * own rendered text, whitespace collapsed, equals T or matches RE; a visible
 * one first). The one resolver of every protocol's probe and page: check. */
extern const char ksr_page_find_js[];
/* The name a recording gives the element, a JavaScript function (el) run in
 * the page: the clickable element around el (a link, button, input, an
 * element with a role...) and the first of #id, [data-testid="..."],
 * tag[name="..."], tag[aria-label="..."] and a short CSS path that finds it
 * and nothing else, as {selector, tag, text, url}; null when none does. The
 * one pick of the press listener and of the recorder's reading at a point. */
extern const char ksr_page_pick_js[];
/* 0 when ref is spelled as the finder reads it, else -1 with err: a text=
 * with no text, a /RE/ with flags JavaScript refuses (the pattern itself is
 * the page's to compile). Pure: the loader calls it. */
int ksr_page_ref_check(const char *ref, ksr_err *err);

#endif
