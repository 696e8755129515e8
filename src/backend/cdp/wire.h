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

#endif
