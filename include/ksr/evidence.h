/* The evidence folder (DESIGN §9): a lock against two runs, the old DONE removed
 * at start, files written whole (temporary name, fsync, rename), DONE last after
 * the files and the folder are synced. */
#ifndef KSR_EVIDENCE_H
#define KSR_EVIDENCE_H

#include <stdbool.h>
#include <stddef.h>

#include "ksr/error.h"

typedef struct ksr_evidence ksr_evidence;

/* Create the folder if missing, take the lock (fails at once if another run
 * holds it, naming its PID), remove an old DONE and BLOCKED, start trace.jsonl
 * afresh. NULL with err on failure; nothing in a locked folder is touched. */
ksr_evidence *ksr_evidence_open(const char *dir, ksr_err *err);

const char *ksr_evidence_dir(const ksr_evidence *ev);
int ksr_evidence_trace_fd(const ksr_evidence *ev);

/* name must be a plain file name; anything else is sanitised (no '/', no leading
 * '.', printable ASCII). Returns a newly allocated full path. */
char *ksr_evidence_path(const ksr_evidence *ev, const char *name);
char *ksr_evidence_sanitize_name(const char *name);

/* Write a whole file (tmp + fsync + rename). Failures are remembered for
 * ksr_evidence_failures(). */
int ksr_evidence_write(ksr_evidence *ev, const char *name, const void *data, size_t len,
		       ksr_err *err);

/* Everything written so far is synced, the folder too, then DONE ("verdict\n")
 * is written the same way and the folder synced again. */
int ksr_evidence_finish(ksr_evidence *ev, const char *verdict_word, ksr_err *err);

/* A NUL-separated list of what could not be written ("" when none). */
const char *ksr_evidence_failures(const ksr_evidence *ev);
bool ksr_evidence_ok(const ksr_evidence *ev);

void ksr_evidence_close(ksr_evidence *ev); /* releases the lock; NULL-safe */

#endif
