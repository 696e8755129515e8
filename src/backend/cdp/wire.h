/* The CDP transport without CDP's discovery and page session: one WebSocket
 * to host:port/path carrying {id, method, params} commands, replies matched
 * by id and events queued by method. WebDriver BiDi (backend/bidi) speaks
 * over it; ksr_cdp_call, _send, _wait_event, _idle and _close work on it as
 * on a CDP connection (no sessionId is added or required). */
#ifndef KSR_BACKEND_CDP_WIRE_H
#define KSR_BACKEND_CDP_WIRE_H

#include "ksr/cdp.h"

/* NULL on failure with *st and err set. */
ksr_cdp *ksr_cdp_wire_open(const char *host, int port, const char *path, ksr_deadline d,
                           ksr_cdp_status *st, ksr_err *err);
/* The page URL ksr_cdp_page_url reports (the wire's user knows it). */
void ksr_cdp_wire_set_url(ksr_cdp *c, const char *url);

/* ksr_cdp_call, unless event arrives for context first: then the call ends
 * (its reply, should one come, is late) as KSR_CDP_ERROR with *ended set and
 * err naming the event's URL. WebDriver BiDi never answers a script call
 * whose document was replaced (a navigation during the call): the new
 * document's browsingContext.domContentLoaded ends it. */
ksr_cdp_status ksr_cdp_wire_call_unless(ksr_cdp *c, const char *method, cJSON *params,
                                        ksr_deadline d, const char *event, const char *context,
                                        cJSON **result, bool *ended, ksr_err *err);

/* Every event reaches the hook before it is queued (CDP: the page session's
 * only); true: the hook consumed it (it is not queued). One hook a wire. */
typedef bool (*ksr_cdp_event_hook)(void *ud, ksr_cdp *c, const char *method, const cJSON *params);
void ksr_cdp_set_event_hook(ksr_cdp *c, ksr_cdp_event_hook fn, void *ud);

/* A page error as a hook reads it: kind "exception" (uncaught) or "console"
 * (console.error and the like), its text (cut at 1000 bytes) and where it
 * came from ("URL:LINE", NULL when unknown); kept until
 * ksr_cdp_take_page_errors (at most 100; later ones are counted). */
void ksr_cdp_page_error_add(ksr_cdp *c, const char *kind, const char *text, const char *source);

/* A press report as a hook reads it (the listener's JSON text, presses.c):
 * kept until taken (ksr_page_wire_take_press), the last 32; text that is not
 * a report is dropped. */
void ksr_cdp_press_add(ksr_cdp *c, const char *json);
/* The wire's press store: an object presses.c keeps its reports in. */
cJSON *ksr_cdp_presses(ksr_cdp *c);
/* Service the wire until done(c, ud), d, a cancel, a crash or a close (OK,
 * TIMEOUT, CANCELLED, CRASHED, CLOSED); done is asked first, so a passed d
 * still reads what is already kept. */
ksr_cdp_status ksr_cdp_pump_until(ksr_cdp *c, ksr_deadline d, bool (*done)(ksr_cdp *c, void *ud),
                                  void *ud);

/* CDP's hook (errors.c): Runtime.exceptionThrown and Runtime.consoleAPICalled
 * of type error or assert as page errors, Runtime.bindingCalled of the press
 * binding as a press; Runtime's other events dropped. */
bool ksr_cdp_runtime_hook(void *ud, ksr_cdp *c, const char *method, const cJSON *params);

#endif
