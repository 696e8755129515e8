/* One event record for the whole run. Every fact is an event; trace.jsonl is the
 * events as they happen (one line each, written through at once), and report.json
 * and report.md are rendered from the same list afterwards. */
#ifndef KSR_EVENT_H
#define KSR_EVENT_H

#include <cjson/cJSON.h>
#include <stdbool.h>

typedef struct ksr_events ksr_events;

ksr_events *ksr_events_create(void);
void ksr_events_free(ksr_events *ev); /* NULL-safe; does not close the trace fd */

/* Write every later event to fd as one JSON line (write(2) per event, so a
 * watcher sees it at once). -1 detaches. */
void ksr_events_attach_trace(ksr_events *ev, int fd);
/* errno of the first failed trace write, or 0. */
int ksr_events_trace_errno(const ksr_events *ev);

/* Context added to every event: the current stage name and step index (0 = none). */
void ksr_events_set_stage(ksr_events *ev, const char *stage);
void ksr_events_set_step(ksr_events *ev, int step);

/* Record an event. fields (may be NULL) is consumed. The recorded object gets
 * "t_ms" (ms since the first event), "event", "stage", "step" first, then fields.
 * Returns the recorded object (owned by ev). */
const cJSON *ksr_events_emit(ksr_events *ev, const char *event, cJSON *fields);

/* Convenience: emit with printf-style string fields: ksr_events_emitf(ev, "x", "k", "v", ..., NULL). */
const cJSON *ksr_events_emit_kv(ksr_events *ev, const char *event, ...) __attribute__((sentinel));

const cJSON *ksr_events_all(const ksr_events *ev); /* the array of recorded events */
int64_t ksr_events_elapsed_ms(const ksr_events *ev);

#endif
