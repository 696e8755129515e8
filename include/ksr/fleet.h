/* The fleet page (watch --html FILE, docs/watch.md#the-fleet-page): one HTML
 * page for many runs, each with its verdict, outcome, duration and reason,
 * linked to its report.html. Self-contained like report.html: inline CSS, a
 * Content-Security-Policy that fetches nothing. */
#ifndef KSR_FLEET_H
#define KSR_FLEET_H

#include "ksr/junit.h"

/* The page (caller frees); links are relative to page_dir (an absolute
 * folder, the page's own) when the run folders are absolute too. */
char *ksr_fleet_render(const ksr_junit_run *runs, size_t n, const char *page_dir);
/* Render and write to path atomically (tmp beside it, fsync, rename). */
int ksr_fleet_write(const char *path, const ksr_junit_run *runs, size_t n, ksr_err *err);
/* text written to path atomically, as JUnit's and the fleet page's files are. */
int ksr_watch_write_file(const char *path, const char *text, ksr_err *err);

#endif
