/* JUnit XML for CI test reporters (GitLab, Jenkins, GitHub actions that read
 * JUnit): one <testsuite> per run, one <testcase> for the run itself and one
 * per step it reached. app-failed is a <failure>, test-error an <error>, the
 * report's reason their message; <system-out> names the evidence folder and
 * report.md. The structure follows Jenkins' junit-10 schema. */
#ifndef KSR_JUNIT_H
#define KSR_JUNIT_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "ksr/error.h"

typedef struct ksr_junit_run {
	const cJSON *report;   /* report.json; NULL when there is none (died, no run) */
	const char *out_dir;   /* the evidence folder */
	const cJSON *terminal; /* without a report: the watcher's terminal line, or NULL */
} ksr_junit_run;

/* The whole document (caller frees). */
char *ksr_junit_render(const ksr_junit_run *runs, size_t n);

/* Render and write to path atomically (a temporary file beside it, fsync,
 * rename), so a CI job never reads half a file. */
int ksr_junit_write(const char *path, const ksr_junit_run *runs, size_t n, ksr_err *err);

#endif
