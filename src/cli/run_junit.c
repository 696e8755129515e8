/* run --junit FILE: keep the rendered report, and once the run has ended
 * write it as JUnit XML (ksr/junit.h). Chains the --json printer if any. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "ksr/junit.h"

static void keep_report(void *ud, const cJSON *report)
{
	cli_junit_state *s = ud;
	cJSON_Delete(s->report);
	s->report = cJSON_Duplicate(report, true);
	if (s->next)
		s->next(s->next_ud, report);
}

void cli_junit_hook(cli_junit_state *s, ksr_run_opts *o)
{
	s->next = o->on_report;
	s->next_ud = o->on_report_ud;
	o->on_report = keep_report;
	o->on_report_ud = s;
}

/* Returns rc, or 2 when the JUnit file could not be written (CI would
 * otherwise miss the result without knowing why). */
int cli_junit_finish(cli_junit_state *s, const char *out_dir, int rc)
{
	char abs[PATH_MAX];
	ksr_junit_run run = {.report = s->report,
	                     .out_dir = realpath(out_dir, abs) ? abs : out_dir};
	ksr_err err = {0};
	if (ksr_junit_write(s->path, &run, 1, &err) < 0) {
		cli_say("kasm-session-runtime run: ", "--junit: %s", err.msg);
		rc = 2;
	}
	cJSON_Delete(s->report);
	s->report = NULL;
	return rc;
}
