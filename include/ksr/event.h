/* One event record for the whole run. Every fact is an event; trace.jsonl is the
 * events as they happen (one line each, written through at once), and report.json
 * and report.md are rendered from the same list afterwards. */
#ifndef KSR_EVENT_H
#define KSR_EVENT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct ksr_events ksr_events;

ksr_events *ksr_events_create(void);
void ksr_events_free(ksr_events *ev); /* NULL-safe; does not close the trace fd */

/* Write every later event to fd as one JSON line (write(2) per event, so a
 * watcher sees it at once). -1 detaches. After the first failed write (a full
 * disk) the trace is cut back to its last whole line and no more lines are
 * written to it, so trace.jsonl stays a valid prefix; events are still recorded
 * in memory. Not thread-safe: one thread emits. */
void ksr_events_attach_trace(ksr_events *ev, int fd);
/* errno of the first failed trace write, or 0. */
int ksr_events_trace_errno(const ksr_events *ev);

/* Context added to every event: the current stage name and step index (0 = none). */
void ksr_events_set_stage(ksr_events *ev, const char *stage);
void ksr_events_set_step(ksr_events *ev, int step);

/* Record an event. fields (may be NULL) is consumed. The recorded object gets
 * "t_ms" (ms since the first event), "event", "stage", "step" first, then fields.
 * A field named like one of those four replaces the context value in place (a
 * "grounding" event's own "step"). Returns the recorded object (owned by ev). */
const cJSON *ksr_events_emit(ksr_events *ev, const char *event, cJSON *fields);

/* Convenience: emit with string fields: ksr_events_emit_kv(ev, "x", "k", "v", ..., NULL).
 * A NULL value is recorded as JSON null. */
const cJSON *ksr_events_emit_kv(ksr_events *ev, const char *event, ...) __attribute__((sentinel));

const cJSON *ksr_events_all(const ksr_events *ev); /* the array of recorded events */
int64_t ksr_events_elapsed_ms(const ksr_events *ev);

#endif
