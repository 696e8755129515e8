/* The evidence folder (docs/report.md): a lock against two runs, the previous run's
 * files moved to previous/ at start, files written whole (temporary name, fsync, rename), DONE last
 * after the files and the folder are synced. */
#ifndef KSR_EVIDENCE_H
#define KSR_EVIDENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "ksr/error.h"

typedef struct ksr_evidence ksr_evidence;

/* Create the folder if missing, take the lock (fails at once if another run
 * holds it, naming its PID), move the previous run's files (an old DONE and
 * BLOCKED among them) to previous/, start trace.jsonl afresh. NULL with err on failure; nothing in
 * a locked folder is touched. */
ksr_evidence *ksr_evidence_open(const char *dir, ksr_err *err);

const char *ksr_evidence_dir(const ksr_evidence *ev);
int ksr_evidence_trace_fd(const ksr_evidence *ev);

/* name must be a plain file name; anything else is sanitised (no '/', no leading
 * '.', printable ASCII). Returns a newly allocated full path.
 * ksr_evidence_sanitize_name keeps [A-Za-z0-9._-], turns every other byte (one
 * per UTF-8 character) into '_', turns leading dots into '_', keeps at most 100
 * bytes (a short extension such as ".png" survives the cut) and never returns ""
 * (NULL or "" give "_"). */
char *ksr_evidence_path(const ksr_evidence *ev, const char *name);
char *ksr_evidence_sanitize_name(const char *name);

/* ksr_evidence_path for a log another process writes or appends to (the
 * launch's launch.log, desktop mode's spawn-NN.log; opened by
 * ksr_proc_launch): a symbolic link (or anything but a regular file) planted
 * at that name is removed first, so it is replaced, as report files are, never
 * followed; an earlier log of this run is kept and appended to. */
char *ksr_evidence_log_path(const ksr_evidence *ev, const char *name);

/* The one way the runtime opens a file it creates or appends in OUT outside
 * ksr_evidence_write (a log a process writes, the video's temporary file, the
 * shared display's session.log, inspect's --out files, MCP's scenario copy):
 * never through a link. O_NOFOLLOW always; whatever is at the name and is not
 * a regular file with one link (a planted symbolic or hard link, a FIFO, a
 * directory) is removed and the file created O_EXCL, so a link planted there
 * is replaced, never followed, and one planted in between is refused.
 * KSR_EVIDENCE_APPEND appends to a regular file already there (an earlier log
 * of this run); KSR_EVIDENCE_NEW always starts a new file. The descriptor is
 * O_WRONLY | O_CLOEXEC; -1 with errno on failure. */
typedef enum { KSR_EVIDENCE_NEW, KSR_EVIDENCE_APPEND } ksr_evidence_mode;
int ksr_evidence_open_at(int dir_fd, const char *name, ksr_evidence_mode mode);
/* The same by path (its folder is opened as given; only the last component is
 * guarded), for files written where no ksr_evidence is open. */
int ksr_evidence_open_path(const char *path, ksr_evidence_mode mode);
/* ksr_evidence_open_path for stdio ("we" or "ae" by mode); NULL with errno. */
FILE *ksr_evidence_fopen_path(const char *path, ksr_evidence_mode mode);

/* Write a whole file (tmp + fsync + rename). Failures are remembered for
 * ksr_evidence_failures(), and the partial temporary file is removed. "DONE" and
 * "trace.jsonl" are refused: only ksr_evidence_finish writes DONE. */
int ksr_evidence_write(ksr_evidence *ev, const char *name, const void *data, size_t len,
                       ksr_err *err);

/* Everything written so far is synced, the folder too, then DONE ("verdict\n")
 * is written the same way and the folder synced again. -1 when DONE could not be
 * written. Decide the verdict word after checking ksr_evidence_ok(): a failed
 * write means output-unwritable (test-error). */
int ksr_evidence_finish(ksr_evidence *ev, const char *verdict_word, ksr_err *err);

/* ksr_evidence_write for text from outside or built from it (atspi.json,
 * plan.yaml, log-N.txt): every secret (ksr_redact) is replaced first; NUL
 * bytes in data are kept, the text between them redacted each. */
int ksr_evidence_write_text(ksr_evidence *ev, const char *name, const char *data, size_t len,
                            ksr_err *err);

/* Remove a file written earlier (e.g. BLOCKED once a blocker is cleared); a
 * missing file is not an error. */
int ksr_evidence_remove(ksr_evidence *ev, const char *name, ksr_err *err);

/* A NUL-separated list of what could not be written ("" when none): entries
 * "NAME: strerror text", each ended by a NUL, the list by an empty entry:
 *   for (const char *p = ksr_evidence_failures(ev); *p; p += strlen(p) + 1) ... */
const char *ksr_evidence_failures(const ksr_evidence *ev);
/* What open found of an earlier run, in the same list form: its own files
 * (report, trace, DONE, BLOCKED and the artifacts its trace names), moved into
 * OUT/previous/ (which held the run before it, removed); and the files no run
 * wrote, left where they are. */
const char *ksr_evidence_moved(const ksr_evidence *ev);
const char *ksr_evidence_foreign(const ksr_evidence *ev);
bool ksr_evidence_ok(const ksr_evidence *ev); /* no failures so far */

void ksr_evidence_close(ksr_evidence *ev); /* releases the lock; NULL-safe */

#endif
