/* Chrome DevTools Protocol (rung 0): discovery over HTTP (libcurl), one
 * WebSocket to the browser (libwebsockets, client role), a flattened session on
 * one page target, commands awaited with a deadline, events queued while
 * waiting. On top of it, element actions with actionability checks. Every
 * call is synchronous, bounded by its deadline and returns at once on cancel.
 * Nothing here knows about stages or verdicts. */
#ifndef KSR_CDP_H
#define KSR_CDP_H

#include <stdbool.h>
#include <stddef.h>

#include "ksr/deadline.h"
#include "ksr/error.h"
#include "ksr/page.h"

typedef struct cJSON cJSON;
typedef struct ksr_cdp ksr_cdp;

/* The page rung's status (ksr/page.h), under the names CDP callers know. */
typedef ksr_page_status ksr_cdp_status;
#define KSR_CDP_OK        KSR_PAGE_OK
#define KSR_CDP_ERROR     KSR_PAGE_ERROR
#define KSR_CDP_NOT_READY KSR_PAGE_NOT_READY
#define KSR_CDP_TIMEOUT   KSR_PAGE_TIMEOUT
#define KSR_CDP_CANCELLED KSR_PAGE_CANCELLED
#define KSR_CDP_CLOSED    KSR_PAGE_CLOSED
#define KSR_CDP_CRASHED   KSR_PAGE_CRASHED

#define ksr_cdp_status_name ksr_page_status_name

/* ---- discovery and connection ------------------------------------------- */

/* The debugging port a browser process announces: --remote-debugging-port=N
 * (N > 0) on its command line, else the first line of DevToolsActivePort in its
 * --user-data-dir. 0 when neither is found. */
int ksr_cdp_port_of_pid(int pid);
/* The same from a command line (NUL- or space-separated words). */
int ksr_cdp_port_of_cmdline(const char *cmdline, size_t len);

typedef struct ksr_cdp_timing {
	double discover_ms;  /* GET /json/version */
	double handshake_ms; /* WebSocket upgrade */
	double attach_ms;    /* Target.getTargets + attachToTarget + enables */
} ksr_cdp_timing;

/* Connect to the browser at host:port, attach to its first page target (a
 * new about:blank one if it has none). NULL on failure with *st and err set. */
ksr_cdp *ksr_cdp_connect(const char *host, int port, ksr_deadline d, ksr_cdp_status *st,
                         ksr_err *err);
void ksr_cdp_close(ksr_cdp *c); /* NULL-safe; fails a pending command */
/* ksr_cdp_close(c) calls closer(ud) instead, once: a handle built over c (a
 * page handle, a WebDriver BiDi session on it) is closed whole by whoever
 * holds only c; closer closes c in turn, which then closes plainly. */
void ksr_cdp_set_closer(ksr_cdp *c, void (*closer)(void *ud), void *ud);

const ksr_cdp_timing *ksr_cdp_timings(const ksr_cdp *c);
const char *ksr_cdp_page_url(const ksr_cdp *c); /* the target's URL when attached */
bool ksr_cdp_crashed(const ksr_cdp *c);

/* ---- protocol ------------------------------------------------------------ */

/* Send method with params (consumed; NULL = {}) on the page session and wait
 * for its reply until d. *result (may be NULL) gets the reply's result, owned
 * by the caller. An error reply is KSR_CDP_ERROR with its message in err. */
ksr_cdp_status ksr_cdp_call(ksr_cdp *c, const char *method, cJSON *params, ksr_deadline d,
                            cJSON **result, ksr_err *err);
/* Queue a command on the page session without waiting for its reply (which is
 * dropped as late); commands are delivered in order, so a later ksr_cdp_call
 * returning means the page has handled this one too (input events). */
ksr_cdp_status ksr_cdp_send(ksr_cdp *c, const char *method, cJSON *params, ksr_err *err);

/* Wait until an event named method (on the page session) arrives; it is taken
 * from the queue and returned in *ev (may be NULL). Events queued earlier count. */
ksr_cdp_status ksr_cdp_wait_event(ksr_cdp *c, const char *method, ksr_deadline d, cJSON **ev,
                                  ksr_err *err);
void ksr_cdp_drop_events(ksr_cdp *c);

/* The page's errors (uncaught exceptions, console errors) received since the
 * last call, after reading what has already arrived (no wait): an array of
 * {kind, text, source?} owned by the caller; *dropped (may be NULL) gets how
 * many did not fit. Works on a BiDi wire too (its hook fills it). */
cJSON *ksr_cdp_take_page_errors(ksr_cdp *c, int *dropped);

/* Service the connection until d (events are queued): a cancellable pause that
 * still notices a crash or a closed connection (then returns it). */
ksr_cdp_status ksr_cdp_idle(ksr_cdp *c, ksr_deadline d, ksr_err *err);

/* ---- page actions (cdp_dom.c) -------------------------------------------- */

/* An element is named by a CSS selector or by an id from
 * ksr_cdp_list_interactive ("@e" + backendNodeId, never valid CSS). */
typedef ksr_page_box ksr_cdp_box;
typedef ksr_page_hit ksr_cdp_hit;

/* Retry until d: attached, visible, enabled, scrolled into view, a stable box
 * over two animation frames, and the element (or a descendant) is what the
 * click point hits; then mouse press and release, sent again (at most three
 * times in all) while the page's window saw no mouseup (input a renderer
 * dropped before its first frame). NOT_READY names what was
 * wrong last ("is covered by <div id=\"overlay\">", "is disabled"...). */
ksr_cdp_status ksr_cdp_click(ksr_cdp *c, const char *ref, ksr_deadline d, ksr_cdp_hit *hit,
                             ksr_err *err);
/* Move the mouse onto the element's click point after the click's checks
 * (hover: tooltips, hover menus); no button is pressed. */
ksr_cdp_status ksr_cdp_hover(ksr_cdp *c, const char *ref, ksr_deadline d, ksr_cdp_hit *hit,
                             ksr_err *err);
/* Visible, enabled, editable: focus, select all, insert text (input and
 * change events fire). */
ksr_cdp_status ksr_cdp_fill(ksr_cdp *c, const char *ref, const char *text, ksr_deadline d,
                            ksr_cdp_hit *hit, ksr_err *err);
/* Focus, then one key press per character. */
ksr_cdp_status ksr_cdp_type(ksr_cdp *c, const char *ref, const char *text, ksr_deadline d,
                            ksr_cdp_hit *hit, ksr_err *err);
/* Chords separated by spaces ("ctrl+a Delete shift+Tab") to the focused element. */
ksr_cdp_status ksr_cdp_press(ksr_cdp *c, const char *chords, ksr_deadline d, ksr_err *err);
/* The same chords checked without a page (the loader's load-time check): 0, or
 * -1 with err naming the bad key in its chord and the nearest page key. */
int ksr_cdp_chords_check(const char *chords, ksr_err *err);
/* state: "attached", "detached", "visible" (default when NULL), "hidden". */
ksr_cdp_status ksr_cdp_wait_for(ksr_cdp *c, const char *ref, const char *state, ksr_deadline d,
                                ksr_cdp_hit *hit, ksr_err *err);
/* Navigate and wait for the load event. A network error is KSR_CDP_ERROR. */
ksr_cdp_status ksr_cdp_navigate(ksr_cdp *c, const char *url, ksr_deadline d, ksr_err *err);
/* Evaluate (promises awaited); *truthy per JavaScript; *value (may be NULL)
 * gets the value as JSON, owned by the caller. A thrown exception is ERROR. */
ksr_cdp_status ksr_cdp_eval(ksr_cdp *c, const char *js, ksr_deadline d, bool *truthy, cJSON **value,
                            ksr_err *err);

typedef ksr_page_info ksr_cdp_page;
ksr_cdp_status ksr_cdp_page_state(ksr_cdp *c, const char *selector, ksr_deadline d,
                                  ksr_cdp_page *out, ksr_err *err);
#define ksr_cdp_page_clear ksr_page_info_clear

/* The page's interactive elements, from the accessibility tree. The id stays
 * the same across snapshots while the DOM node lives. */
typedef ksr_page_element ksr_cdp_element; /* id "@e<backendNodeId>" */
typedef ksr_page_element_list ksr_cdp_element_list;
ksr_cdp_status ksr_cdp_list_interactive(ksr_cdp *c, ksr_deadline d, ksr_cdp_element_list *out,
                                        ksr_err *err);
#define ksr_cdp_element_list_clear ksr_page_element_list_clear

/* ---- the page rung (ksr/page.h) -------------------------------------------- */

/* The page handle over this connection; it owns c from now on (ksr_page_close
 * closes it). */
ksr_page *ksr_cdp_page_open(ksr_cdp *c);
/* The CDP connection under a page handle, or NULL when it speaks another protocol. */
ksr_cdp *ksr_cdp_of_page(ksr_page *p);

#endif
