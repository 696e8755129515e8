/* WebDriver BiDi (rung 0 in Firefox): one WebSocket to the browser's
 * /session endpoint (the CDP backend's transport), a session (session.new),
 * one top-level browsing context, scripts run with script.evaluate and
 * script.callFunction (results as remote values, turned into JSON), input
 * through input.performActions so the page sees trusted events, console
 * errors from log.entryAdded. The element actions use the same actionability
 * probe as CDP (ksr_page_probe_js). See docs/cdp.md. */
#ifndef KSR_BIDI_H
#define KSR_BIDI_H

#include <stdbool.h>
#include <stddef.h>

#include "ksr/deadline.h"
#include "ksr/error.h"
#include "ksr/page.h"

typedef struct cJSON cJSON;
typedef struct ksr_bidi ksr_bidi;

/* ---- discovery and connection ------------------------------------------- */

/* The BiDi port a Firefox announces: --remote-debugging-port N (N > 0, "=N"
 * too) on its command line, else ws_port in WebDriverBiDiServer.json in its
 * --profile DIR (written once the port is open; port 0 = any free port;
 * a relative DIR is the process's working directory's, for a pid).
 * 0 when neither is found. */
int ksr_bidi_port_of_cmdline(const char *cmdline, size_t len);
int ksr_bidi_port_of_pid(int pid);
/* Whether the command line is a Firefox-family browser's (firefox,
 * firefox-esr, Tor Browser's firefox.real...). */
bool ksr_bidi_is_firefox_cmdline(const char *cmdline, size_t len);
bool ksr_bidi_is_firefox_pid(int pid);

/* Connect to ws://host:port/session, start a session, subscribe to console
 * entries and take the first top-level browsing context (a new tab when
 * there is none). NULL on failure with *st and err set. */
ksr_bidi *ksr_bidi_connect(const char *host, int port, ksr_deadline d, ksr_page_status *st,
                           ksr_err *err);
void ksr_bidi_close(ksr_bidi *b); /* NULL-safe; ends the session */

const char *ksr_bidi_context(const ksr_bidi *b); /* the browsing context's id */
const char *ksr_bidi_page_url(const ksr_bidi *b);
double ksr_bidi_connect_ms(const ksr_bidi *b);

/* The WebSocket under the session (ksr_cdp_set_closer closes the session
 * with it). */
struct ksr_cdp *ksr_bidi_wire(ksr_bidi *b);

/* ---- either protocol (the front ends' attach) ---------------------------- */

/* The page at host:port in browser's protocol; ANY: CDP, then WebDriver BiDi
 * on the same port when no DevTools endpoint answered there. *transport (may
 * be NULL) gets the connection under the handle. NULL with *st and err set. */
ksr_page *ksr_page_connect(const char *host, int port, ksr_page_browser browser, ksr_deadline d,
                           struct ksr_cdp **transport, ksr_page_status *st, ksr_err *err);
/* The debugging port a browser process announces, in its protocol's way
 * (a Firefox: BiDi's; else CDP's), and *browser (FIREFOX or ANY). 0: none. */
int ksr_page_port_of_pid(int pid, ksr_page_browser *browser);

/* ---- protocol ------------------------------------------------------------ */

/* Send method with params (consumed; NULL = {}) and wait for its reply until
 * d; *result (may be NULL) gets its result, owned by the caller. An error
 * reply is KSR_PAGE_ERROR with its message in err. */
ksr_page_status ksr_bidi_call(ksr_bidi *b, const char *method, cJSON *params, ksr_deadline d,
                              cJSON **result, ksr_err *err);
/* A BiDi remote value as plain JSON (the value a page's expression gave);
 * *truthy per JavaScript. */
cJSON *ksr_bidi_remote_to_json(const cJSON *remote, bool *truthy);
/* How many elements a CSS selector finds (browsingContext.locateNodes, at most max). */
ksr_page_status ksr_bidi_locate(ksr_bidi *b, const char *selector, int max, ksr_deadline d,
                                int *count, ksr_err *err);
/* The page's errors (log.entryAdded at level error: uncaught exceptions,
 * console errors) since the last call, as ksr_cdp_take_page_errors. */
cJSON *ksr_bidi_take_page_errors(ksr_bidi *b, int *dropped);
/* ksr_page_watch_presses and ksr_page_take_press: script.addPreloadScript
 * for the tab's new documents and script.callFunction in the current one,
 * each with a channel argument; the reports are script.message events. */
ksr_page_status ksr_bidi_watch_presses(ksr_bidi *b, ksr_deadline d, ksr_err *err);
ksr_page_status ksr_bidi_take_press(ksr_bidi *b, int x, int y, ksr_deadline d,
                                    ksr_page_pressed *out, ksr_err *err);

/* ---- page actions: as the CDP ones (ksr/cdp.h) ---------------------------- */

ksr_page_status ksr_bidi_navigate(ksr_bidi *b, const char *url, ksr_deadline d, ksr_err *err);
ksr_page_status ksr_bidi_eval(ksr_bidi *b, const char *js, ksr_deadline d, bool *truthy,
                              cJSON **value, ksr_err *err);
ksr_page_status ksr_bidi_click(ksr_bidi *b, const char *ref, ksr_deadline d, ksr_page_hit *hit,
                               ksr_err *err);
ksr_page_status ksr_bidi_hover(ksr_bidi *b, const char *ref, ksr_deadline d, ksr_page_hit *hit,
                               ksr_err *err);
ksr_page_status ksr_bidi_fill(ksr_bidi *b, const char *ref, const char *text, ksr_deadline d,
                              ksr_page_hit *hit, ksr_err *err);
ksr_page_status ksr_bidi_type(ksr_bidi *b, const char *ref, const char *text, ksr_deadline d,
                              ksr_page_hit *hit, ksr_err *err);
ksr_page_status ksr_bidi_press(ksr_bidi *b, const char *chords, ksr_deadline d, ksr_err *err);
ksr_page_status ksr_bidi_wait_for(ksr_bidi *b, const char *ref, const char *state, ksr_deadline d,
                                  ksr_page_hit *hit, ksr_err *err);
ksr_page_status ksr_bidi_page_state(ksr_bidi *b, const char *selector, ksr_deadline d,
                                    ksr_page_info *out, ksr_err *err);
/* Interactive elements found by a script in the page (BiDi has no
 * accessibility tree): role (ARIA or implicit) and accessible-ish name; the
 * ids stay the same across snapshots while the node lives. */
ksr_page_status ksr_bidi_list_interactive(ksr_bidi *b, ksr_deadline d, ksr_page_element_list *out,
                                          ksr_err *err);

/* The page handle over this session; it owns b from now on. */
ksr_page *ksr_bidi_page_open(ksr_bidi *b);

#endif
