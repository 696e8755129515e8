/* The fleet page: one row per run (verdict, scenario, outcome, duration,
 * reason, start), linked to the run's report.html, for the CI job that tests
 * many images. Rendered from each run's report.json (the watcher's terminal
 * line for a run that has none). Every string is escaped. */
#include "ksr/fleet.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/json.h"
#include "ksr/strbuf.h"

/* dir relative to from (both absolute, no trailing slash): "../a/b". */
static char *relative(const char *from, const char *dir)
{
	size_t common = 0, i = 0;
	for (; from[i] && dir[i] && from[i] == dir[i]; i++)
		if (from[i] == '/')
			common = i;
	if (!from[i] && (dir[i] == '/' || !dir[i]))
		common = i; /* from is a prefix of dir at a component boundary */
	ksr_strbuf b = {0};
	ksr_strbuf_add(&b, "");
	for (const char *c = from + common; *c; c++)
		if (*c == '/')
			ksr_strbuf_add(&b, "../");
	const char *rest = dir + common;
	while (*rest == '/')
		rest++;
	ksr_strbuf_add(&b, rest);
	if (*rest)
		ksr_strbuf_add(&b, "/");
	return ksr_strbuf_take(&b);
}

static const char STYLE[] =
        "body{font:14px/1.45 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1b1f24}"
        "main{max-width:1280px;margin:0 auto;padding:16px 20px}h1{font-size:22px}"
        "table{border-collapse:collapse;width:100%;background:#fff}"
        "td,th{border-bottom:1px solid #eaeef2;padding:5px 8px;text-align:left;"
        "vertical-align:top;overflow-wrap:anywhere}"
        ".v{display:inline-block;padding:0 8px;border-radius:10px;color:#fff;font-size:12px}"
        ".v-pass{background:#1a7f37}.v-pass-with-concerns{background:#9a6700}"
        ".v-app-failed{background:#cf222e}.v-test-error{background:#6639ba}"
        ".muted{color:#57606a}td:nth-child(1),td:nth-child(3),td:nth-child(4),"
        "td:nth-child(6){white-space:nowrap}";

static const char *verdict_of(const ksr_junit_run *r)
{
	const char *v = ksr_json_str(r->report, "verdict", NULL);
	v = v ? v : ksr_json_str(r->terminal, "verdict", NULL);
	static const char *const known[] = {"pass", "pass-with-concerns", "app-failed",
	                                    "test-error"};
	for (size_t i = 0; v && i < 4; i++)
		if (!strcmp(v, known[i]))
			return known[i];
	return "test-error"; /* no report, or a word the page does not know */
}

static void row(ksr_strbuf *b, const ksr_junit_run *r, const char *page_dir)
{
	const cJSON *rep = r->report, *tm = cJSON_GetObjectItemCaseSensitive(rep, "timings");
	const char *verdict = verdict_of(r);
	const char *name =
	        ksr_json_str(cJSON_GetObjectItemCaseSensitive(rep, "scenario"), "name", NULL);
	ksr_strbuf_addf(b,
	                "<tr class=\"run\" data-verdict=\"%s\"><td><span class=\"v v-%s\">%s"
	                "</span></td><td>",
	                verdict, verdict, verdict);
	char *rel = page_dir && r->out_dir && r->out_dir[0] == '/'
	                    ? relative(page_dir, r->out_dir)
	                    : ksr_xasprintf("%s/", r->out_dir ? r->out_dir : ".");
	if (rep) {
		ksr_strbuf_add(b, "<a href=\"");
		ksr_strbuf_add_url(b, rel, 1);
		ksr_strbuf_add(b, "report.html\">");
	}
	ksr_strbuf_add_html(b, name ? name : r->out_dir);
	ksr_strbuf_add(b, rep ? "</a>" : "");
	ksr_strbuf_add(b, "<br><span class=\"muted\">");
	ksr_strbuf_add_html(b, r->out_dir);
	ksr_strbuf_add(b, "</span></td><td>");
	const char *outcome =
	        ksr_json_str(rep, "outcome", ksr_json_str(r->terminal, "outcome", ""));
	ksr_strbuf_add_html(b, outcome);
	ksr_strbuf_add(b, "</td><td class=\"duration\">");
	if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(tm, "duration_ms")))
		ksr_strbuf_addf(b, "%.1f s", ksr_json_num(tm, "duration_ms", 0) / 1000.0);
	ksr_strbuf_add(b, "</td><td>");
	const char *reason = ksr_json_str(rep, "reason", ksr_json_str(r->terminal, "reason", ""));
	ksr_strbuf_add_html(b, reason);
	ksr_strbuf_add(b, "</td><td class=\"muted\">");
	ksr_strbuf_add_html(b, ksr_json_str(tm, "started_at", ""));
	ksr_strbuf_add(b, "</td></tr>\n");
	free(rel);
}

char *ksr_fleet_render(const ksr_junit_run *runs, size_t n, const char *page_dir)
{
	int tally[4] = {0};
	static const char *const words[] = {"pass", "pass-with-concerns", "app-failed",
	                                    "test-error"};
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < 4; k++)
			tally[k] += !strcmp(verdict_of(&runs[i]), words[k]);
	ksr_strbuf b = {0};
	ksr_strbuf_addf(&b,
	                "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	                "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
	                "'none'; style-src 'unsafe-inline'\"><title>%zu runs</title><style>%s"
	                "</style></head><body><main><h1>%zu runs</h1><p id=\"tally\">",
	                n, STYLE, n);
	for (size_t k = 0; k < 4; k++)
		ksr_strbuf_addf(&b, "%s<span class=\"v v-%s\">%s</span> %d", k ? " &nbsp; " : "",
		                words[k], words[k], tally[k]);
	ksr_strbuf_add(&b, "</p><table id=\"runs\"><tr><th>verdict</th><th>scenario</th>"
	                   "<th>outcome</th><th>duration</th><th>reason</th><th>started</th>"
	                   "</tr>\n");
	for (size_t i = 0; i < n; i++)
		row(&b, &runs[i], page_dir);
	ksr_strbuf_add(&b, "</table></main></body></html>\n");
	return ksr_strbuf_take(&b);
}

int ksr_fleet_write(const char *path, const ksr_junit_run *runs, size_t n, ksr_err *err)
{
	/* The page's folder, absolute, so each run's link can be relative to it. */
	char *copy = strdup(path), *slash = strrchr(copy, '/');
	if (slash)
		*slash = '\0';
	char abs[PATH_MAX];
	const char *dir = realpath(slash ? (*copy ? copy : "/") : ".", abs) ? abs : NULL;
	char *html = ksr_fleet_render(runs, n, dir);
	int rc = ksr_watch_write_file(path, html, err);
	free(html);
	free(copy);
	return rc;
}
