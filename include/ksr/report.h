/* report.json and report.md, rendered from the recorded events (docs/report.md). */
#ifndef KSR_REPORT_H
#define KSR_REPORT_H

#include <cjson/cJSON.h>

#include "ksr/verdict.h"

#define KSR_REPORT_SCHEMA_VERSION 1

/* The whole report as JSON (caller frees), valid against docs/report.schema.json. */
cJSON *ksr_report_json(const cJSON *events, const ksr_decision *d);
/* The same for a person: verdict and reason first, screenshots inline (caller frees). */
char *ksr_report_markdown(const cJSON *report);
/* The same for a browser (report.html): one self-contained page, inline CSS and
 * script, showing the files beside it; every string escaped (caller frees). */
char *ksr_report_html(const cJSON *report);

#endif
