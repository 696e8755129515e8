/* Inside the BiDi backend: the session's state and what bidi.c gives the
 * page actions (actions.c). */
#ifndef KSR_BACKEND_BIDI_PRIV_H
#define KSR_BACKEND_BIDI_PRIV_H

#include "ksr/bidi.h"
#include "ksr/cdp.h"

struct ksr_bidi {
	ksr_cdp *wire; /* the transport: ksr_cdp_wire_open */
	char *session_id, *context;
	double connect_ms;
};

/* {"context": ID}, the target of a script call. */
cJSON *bidi_target(const ksr_bidi *b);

#endif
