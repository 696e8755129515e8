/* report.md: the report for a person, rendered from report.json. Every string
 * that may come from a window, a page, a log or a model is escaped: no raw HTML,
 * no markdown structure, no links of its own; link targets are percent-encoded
 * relative paths. */
#include "ksr/strbuf.h"
#include "ksr/report.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/error.h"
#include "ksr/json.h"
#include "ksr/utf8.h"

/* Would a line starting with s open a heading, list, quote or rule? Then its
 * first marker is escaped. */
static size_t line_start_marker(const char *s)
{
	if (*s && strchr("#+-=", *s))
		return 0;
	size_t i = 0;
	while (s[i] >= '0' && s[i] <= '9')
		i++;
	return i > 0 && (s[i] == '.' || s[i] == ')') ? i : (size_t)-1;
}

/* One sequence that is not ASCII (len from ksr_utf8_seq_len, 0: a byte
 * that is not UTF-8): a C1 control becomes c1 (a terminal showing the file
 * would act on it), a bad byte `\xNN`, anything else is copied. */
static void add_wide(ksr_strbuf *b, const char *s, size_t len, const char *c1)
{
	const unsigned char *u = (const unsigned char *)s;
	if (len == 0)
		ksr_strbuf_addf(b, "\\x%02x", *u);
	else if (len == 2 && u[0] == 0xC2 && u[1] < 0xA0)
		ksr_strbuf_add(b, c1);
	else
		ksr_strbuf_addn(b, s, len);
}

/* A fenced block's text keeps its lines and tabs; every other control
 * character is written out (`\x1b`, `\u009b`), so the file shown in a
 * terminal (cat report.md) cannot move the cursor or retitle the window. */
static void add_block_text(ksr_strbuf *b, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t len = ksr_utf8_seq_len(p);
		char one[5] = {0};
		memcpy(one, p, len ? len : 1);
		if (*p == '\n' || *p == '\t' || !ksr_utf8_has_controls(one)) {
			ksr_strbuf_addn(b, one, len ? len : 1);
		} else {
			char *e = ksr_utf8_escape_controls(one);
			ksr_strbuf_add(b, e);
			free(e);
		}
		p += len ? len : 1;
	}
}

/* Inline text: punctuation that markdown reads is backslash-escaped, < > & become
 * entities, control characters (newlines too) become spaces, so the text stays on
 * its line, in its table cell, and never opens a link, image, emphasis or HTML tag. */
static void sb_esc(ksr_strbuf *b, const char *s)
{
	static const char punct[] = "\\`*_[]!|~";
	if (!s) {
		ksr_strbuf_add(b, "–");
		return;
	}
	bool at_line_start = b->len == 0 || b->p[b->len - 1] == '\n';
	size_t marker = at_line_start ? line_start_marker(s) : (size_t)-1;
	for (size_t i = 0; s[i]; i++) {
		unsigned char c = (unsigned char)s[i];
		size_t len = ksr_utf8_seq_len((const unsigned char *)s + i);
		if (len != 1) {
			add_wide(b, s + i, len, " ");
			i += len ? len - 1 : 0;
		} else if (c == '<')
			ksr_strbuf_add(b, "&lt;");
		else if (c == '>')
			ksr_strbuf_add(b, "&gt;");
		else if (c == '&')
			ksr_strbuf_add(b, "&amp;");
		else if (c < 0x20 || c == 0x7f)
			ksr_strbuf_add(b, " ");
		else if (strchr(punct, c) || i == marker) {
			char two[2] = {'\\', (char)c};
			ksr_strbuf_addn(b, two, 2);
		} else
			ksr_strbuf_addn(b, s + i, 1);
	}
}

/* A link target: a relative path, bytes outside a safe set percent-encoded (a
 * ':' too, so no scheme can sneak in). */
static void sb_url(ksr_strbuf *b, const char *s)
{
	for (const unsigned char *c = (const unsigned char *)(s ? s : ""); *c; c++) {
		if ((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
		    (*c >= '0' && *c <= '9') || strchr("._-~/", *c))
			ksr_strbuf_addn(b, (const char *)c, 1);
		else
			ksr_strbuf_addf(b, "%%%02X", *c);
	}
}

/* A fenced block that no run of backticks inside the text can close. */
static void sb_fence(ksr_strbuf *b, const char *text)
{
	size_t run = 0, longest = 0;
	for (const char *c = text ? text : ""; *c; c++) {
		run = *c == '`' ? run + 1 : 0;
		longest = run > longest ? run : longest;
	}
	size_t n = longest >= 3 ? longest + 1 : 3;
	char fence[64];
	n = n < sizeof fence - 1 ? n : sizeof fence - 1;
	memset(fence, '`', n);
	fence[n] = '\0';
	ksr_strbuf_addf(b, "%stext\n", fence);
	add_block_text(b, text ? text : "");
	if (text && *text && text[strlen(text) - 1] != '\n')
		ksr_strbuf_add(b, "\n");
	ksr_strbuf_addf(b, "%s\n\n", fence);
}

static const cJSON *jget(const cJSON *obj, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

static bool jhas_num(const cJSON *obj, const char *key)
{
	return cJSON_IsNumber(jget(obj, key));
}

static void sb_ms(ksr_strbuf *b, const cJSON *obj, const char *key)
{
	if (!jhas_num(obj, key)) {
		ksr_strbuf_add(b, "–");
		return;
	}
	double ms = ksr_json_num(obj, key, 0);
	if (ms < 1000)
		ksr_strbuf_addf(b, "%.0f ms", ms);
	else
		ksr_strbuf_addf(b, "%.1f s", ms / 1000.0);
}

static void sb_line_ref(ksr_strbuf *b, const cJSON *obj, const char *key)
{
	if (jhas_num(obj, key))
		ksr_strbuf_addf(b, "%.0f", ksr_json_num(obj, key, 0));
	else
		ksr_strbuf_add(b, "–");
}

static void section_head(ksr_strbuf *b, const cJSON *r)
{
	const char *name = ksr_json_str(jget(r, "scenario"), "name", NULL);
	ksr_strbuf_add(b, "# ");
	sb_esc(b, ksr_json_str(r, "verdict", "unknown"));
	ksr_strbuf_add(b, ": ");
	sb_esc(b, name ? name : "unnamed scenario");
	ksr_strbuf_add(b, "\n\n");
	sb_esc(b, ksr_json_str(r, "reason", "No reason was recorded."));
	if (jhas_num(r, "line"))
		ksr_strbuf_addf(b, " (scenario line %.0f)", ksr_json_num(r, "line", 0));
	ksr_strbuf_add(b, "\n\n");
}

static void section_summary(ksr_strbuf *b, const cJSON *r)
{
	const cJSON *sc = jget(r, "scenario"), *rt = jget(r, "runtime"), *tm = jget(r, "timings");
	ksr_strbuf_add(b, "- **Verdict:** ");
	sb_esc(b, ksr_json_str(r, "verdict", NULL));
	ksr_strbuf_addf(b, " (exit code %.0f)\n- **Outcome:** ", ksr_json_num(r, "exit_code", 0));
	sb_esc(b, ksr_json_str(r, "outcome", NULL));
	ksr_strbuf_add(b, "\n- **Scenario:** ");
	sb_esc(b, ksr_json_str(sc, "path", NULL));
	if (ksr_json_str(sc, "sha256", NULL)) {
		ksr_strbuf_add(b, " (sha256 ");
		sb_esc(b, ksr_json_str(sc, "sha256", NULL));
		ksr_strbuf_add(b, ")");
	}
	ksr_strbuf_add(b, "\n- **Run:** ");
	sb_esc(b, ksr_json_str(r, "run_id", NULL));
	ksr_strbuf_add(b, ", started ");
	sb_esc(b, ksr_json_str(tm, "started_at", NULL));
	ksr_strbuf_add(b, ", took ");
	sb_ms(b, tm, "duration_ms");
	if (jhas_num(tm, "deadline_s"))
		ksr_strbuf_addf(b, " of a %.0f s deadline", ksr_json_num(tm, "deadline_s", 0));
	ksr_strbuf_add(b, "\n- **Runtime:** kasm-session-runtime ");
	sb_esc(b, ksr_json_str(rt, "version", NULL));
	if (jhas_num(rt, "pid"))
		ksr_strbuf_addf(b, ", PID %.0f", ksr_json_num(rt, "pid", 0));
	ksr_strbuf_add(b, "\n- **In a browser:** [report.html](report.html) (screenshots, "
	                  "timeline");
	ksr_strbuf_add(b, cJSON_IsObject(jget(r, "video")) ? ", the run's video)" : ")");
	ksr_strbuf_add(b, "\n\n");
}

static void section_concerns(ksr_strbuf *b, const cJSON *r)
{
	const cJSON *c, *list = jget(r, "concerns");
	if (!cJSON_GetArraySize(list))
		return;
	ksr_strbuf_add(b, "## Concerns\n\n");
	cJSON_ArrayForEach(c, list)
	{
		ksr_strbuf_add(b, "- **");
		sb_esc(b, ksr_json_str(c, "code", NULL));
		ksr_strbuf_add(b, "**");
		if (jhas_num(c, "line"))
			ksr_strbuf_addf(b, " (line %.0f)", ksr_json_num(c, "line", 0));
		ksr_strbuf_add(b, ": ");
		sb_esc(b, ksr_json_str(c, "message", NULL));
		ksr_strbuf_add(b, "\n");
	}
	ksr_strbuf_add(b, "\n");
}

/* The page's errors (rung 0), each with the step it came in. */
static void section_page_errors(ksr_strbuf *b, const cJSON *r)
{
	const cJSON *e, *list = jget(r, "page_errors");
	if (!cJSON_GetArraySize(list))
		return;
	ksr_strbuf_add(b, "## Page errors\n\n| step | line | kind | text | source |\n"
	                  "|---|---|---|---|---|\n");
	cJSON_ArrayForEach(e, list)
	{
		double step = ksr_json_num(e, "step", 0);
		if (step > 0)
			ksr_strbuf_addf(b, "| %.0f | ", step);
		else
			ksr_strbuf_add(b, "| outside the steps | ");
		if (jhas_num(e, "line"))
			ksr_strbuf_addf(b, "%.0f", ksr_json_num(e, "line", 0));
		ksr_strbuf_add(b, " | ");
		sb_esc(b, ksr_json_str(e, "kind", NULL));
		ksr_strbuf_add(b, " | ");
		sb_esc(b, ksr_json_str(e, "text", NULL));
		ksr_strbuf_add(b, " | ");
		sb_esc(b, ksr_json_str(e, "source", NULL));
		ksr_strbuf_add(b, " |\n");
	}
	ksr_strbuf_add(b, "\n");
}

static void section_failures(ksr_strbuf *b, const cJSON *r)
{
	const cJSON *f, *list = jget(r, "failures");
	if (cJSON_GetArraySize(list) < 2)
		return; /* one failure is the reason above */
	ksr_strbuf_add(b, "## Failures, in order\n\n");
	cJSON_ArrayForEach(f, list)
	{
		ksr_strbuf_add(b, "- **");
		sb_esc(b, ksr_json_str(f, "outcome", NULL));
		ksr_strbuf_add(b, "**");
		if (jhas_num(f, "line"))
			ksr_strbuf_addf(b, " (line %.0f)", ksr_json_num(f, "line", 0));
		ksr_strbuf_add(b, ": ");
		sb_esc(b, ksr_json_str(f, "reason", NULL));
		ksr_strbuf_add(b, "\n");
	}
	ksr_strbuf_add(b, "\n");
}

/* Desktop mode: each spawned tool, its pid, window and probe (report.json's
 * tools[]), in the app section's place. */
static void section_tools(ksr_strbuf *b, const cJSON *r)
{
	const cJSON *t, *list = jget(r, "tools");
	if (!cJSON_GetArraySize(list))
		return;
	ksr_strbuf_add(b, "## Tools\n\n| tool | line | PID | window | started | painted | probe |\n"
	                  "|---|---|---|---|---|---|---|\n");
	cJSON_ArrayForEach(t, list)
	{
		const cJSON *w = jget(t, "window");
		ksr_strbuf_add(b, "| ");
		sb_esc(b, ksr_json_str(t, "as", ""));
		ksr_strbuf_addf(b, " | %.0f | %.0f | ", ksr_json_num(t, "line", 0),
		                ksr_json_num(t, "pid", 0));
		sb_esc(b, ksr_json_str(w, "title", ""));
		ksr_strbuf_add(b, " (");
		sb_esc(b, ksr_json_str(w, "class", ""));
		ksr_strbuf_add(b, ") | ");
		sb_esc(b, ksr_json_str(t, "desktop_entry", NULL)
		                  ? ksr_json_str(t, "desktop_entry", "")
		                  : ksr_json_str(t, "command", ""));
		ksr_strbuf_add(b, " | ");
		sb_esc(b, ksr_json_str(t, "paint", ""));
		ksr_strbuf_add(b, " | ");
		sb_esc(b, ksr_json_str(t, "probe", ""));
		if (ksr_json_str(t, "toolkit", NULL)) {
			ksr_strbuf_add(b, ", ");
			sb_esc(b, ksr_json_str(t, "toolkit", ""));
		}
		if (jhas_num(t, "nodes"))
			ksr_strbuf_addf(b, ", %.0f nodes", ksr_json_num(t, "nodes", 0));
		ksr_strbuf_add(b, " |\n");
	}
	ksr_strbuf_add(b, "\n");
}

/* Logs whose output past the cap was not kept (launch.log, spawn-NN.log). */
static void section_log_cuts(ksr_strbuf *b, const cJSON *r)
{
	const cJSON *launch = jget(r, "launch"), *t;
	bool any = false;
	if (jhas_num(launch, "log_cut_at_bytes")) {
		ksr_strbuf_addf(b, "## Output not kept\n\n- launch.log: cut at %.0f bytes\n",
		                ksr_json_num(launch, "log_cut_at_bytes", 0));
		any = true;
	}
	cJSON_ArrayForEach(t, jget(r, "tools"))
	{
		if (!jhas_num(t, "log_cut_at_bytes"))
			continue;
		ksr_strbuf_add(b, any ? "- " : "## Output not kept\n\n- ");
		sb_esc(b, ksr_json_str(t, "log", ""));
		ksr_strbuf_add(b, " (tool ");
		sb_esc(b, ksr_json_str(t, "as", ""));
		ksr_strbuf_addf(b, "): cut at %.0f bytes\n",
		                ksr_json_num(t, "log_cut_at_bytes", 0));
		any = true;
	}
	if (any)
		ksr_strbuf_add(b, "\nThe rest of that output was read and dropped.\n\n");
}

static void section_app(ksr_strbuf *b, const cJSON *r)
{
	const cJSON *app = jget(r, "app"), *w = jget(app, "window");
	section_tools(b, r);
	section_log_cuts(b, r);
	if (!cJSON_IsObject(app))
		return;
	ksr_strbuf_add(b, "## App\n\n- **Process:** ");
	sb_esc(b, ksr_json_str(app, "name", NULL));
	if (jhas_num(app, "pid"))
		ksr_strbuf_addf(b, " (PID %.0f)", ksr_json_num(app, "pid", 0));
	ksr_strbuf_add(b, cJSON_IsTrue(jget(app, "launched")) ? ", launched by this run" : "");
	ksr_strbuf_add(b, "\n- **Command line:** ");
	sb_esc(b, ksr_json_str(app, "cmdline", NULL));
	if (cJSON_IsObject(w)) {
		ksr_strbuf_add(b, "\n- **Window:** ");
		sb_esc(b, ksr_json_str(w, "title", NULL));
		ksr_strbuf_add(b, " (class ");
		sb_esc(b, ksr_json_str(w, "class", NULL));
		ksr_strbuf_addf(b, ") at %.0f,%.0f, %.0fx%.0f", ksr_json_num(w, "x", 0),
		                ksr_json_num(w, "y", 0), ksr_json_num(w, "w", 0),
		                ksr_json_num(w, "h", 0));
	}
	ksr_strbuf_add(b, "\n\n");
}

static void section_stages(ksr_strbuf *b, const cJSON *r)
{
	const cJSON *s, *list = jget(r, "stages");
	if (!cJSON_GetArraySize(list))
		return;
	ksr_strbuf_add(b, "## Stages\n\n| stage | status | time | reason |\n|---|---|---|---|\n");
	cJSON_ArrayForEach(s, list)
	{
		ksr_strbuf_add(b, "| ");
		sb_esc(b, ksr_json_str(s, "name", NULL));
		ksr_strbuf_add(b, " | ");
		sb_esc(b, ksr_json_str(s, "status", NULL));
		ksr_strbuf_add(b, " | ");
		sb_ms(b, s, "duration_ms");
		ksr_strbuf_add(b, " | ");
		sb_esc(b, ksr_json_str(s, "reason", ""));
		ksr_strbuf_add(b, " |\n");
	}
	ksr_strbuf_add(b, "\n");
}

static void sb_where(ksr_strbuf *b, const cJSON *step)
{
	const cJSON *px = jget(step, "pixel"), *w = jget(step, "window");
	if (cJSON_IsObject(px))
		ksr_strbuf_addf(b, "(%.0f, %.0f)", ksr_json_num(px, "x", 0),
		                ksr_json_num(px, "y", 0));
	if (cJSON_IsObject(w))
		ksr_strbuf_addf(b, "%sin %.0fx%.0f at %.0f,%.0f", cJSON_IsObject(px) ? " " : "",
		                ksr_json_num(w, "w", 0), ksr_json_num(w, "h", 0),
		                ksr_json_num(w, "x", 0), ksr_json_num(w, "y", 0));
}

static void sb_checks(ksr_strbuf *b, const cJSON *checks)
{
	const cJSON *c;
	bool first = true;
	cJSON_ArrayForEach(c, checks)
	{
		ksr_strbuf_add(b, first ? "" : "; ");
		first = false;
		sb_esc(b, ksr_json_str(c, "kind", NULL));
		ksr_strbuf_add(b, " ");
		sb_esc(b, ksr_json_str(c, "status", NULL));
		if (*ksr_json_str(c, "detail", "")) {
			ksr_strbuf_add(b, " (");
			sb_esc(b, ksr_json_str(c, "detail", NULL));
			ksr_strbuf_add(b, ")");
		}
	}
}

static void sb_link(ksr_strbuf *b, const char *file)
{
	if (!file)
		return;
	ksr_strbuf_add(b, "[");
	sb_esc(b, file);
	ksr_strbuf_add(b, "](");
	sb_url(b, file);
	ksr_strbuf_add(b, ")");
}

static void step_row(ksr_strbuf *b, const cJSON *s)
{
	ksr_strbuf_add(b, "| ");
	sb_line_ref(b, s, "index");
	ksr_strbuf_add(b, " | ");
	sb_line_ref(b, s, "line");
	const char *cols[] = {"kind", "backend", "rung", "status"};
	for (size_t i = 0; i < 4; i++) {
		ksr_strbuf_add(b, " | ");
		sb_esc(b, ksr_json_str(s, cols[i], ""));
	}
	ksr_strbuf_add(b, " | ");
	sb_ms(b, s, "duration_ms");
	ksr_strbuf_add(b, " | ");
	sb_where(b, s);
	ksr_strbuf_add(b, " | ");
	sb_checks(b, jget(s, "checks"));
	ksr_strbuf_add(b, " | ");
	sb_esc(b, ksr_json_str(s, "reason", ""));
	ksr_strbuf_add(b, " | ");
	sb_link(b, ksr_json_str(s, "screenshot", NULL));
	if (ksr_json_str(s, "annotated", NULL)) {
		ksr_strbuf_add(b, " ");
		sb_link(b, ksr_json_str(s, "annotated", NULL));
	}
	ksr_strbuf_add(b, " |\n");
}

static void section_steps(ksr_strbuf *b, const cJSON *r)
{
	const cJSON *s, *list = jget(r, "steps");
	if (!cJSON_GetArraySize(list))
		return;
	ksr_strbuf_add(
	        b,
	        "## Steps\n\n| # | line | kind | backend | rung | status | time | where | checks "
	        "| reason | screenshot |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
	cJSON_ArrayForEach(s, list)
	{
		step_row(b, s);
	}
	ksr_strbuf_add(b, "\n");
}

static void section_grounding(ksr_strbuf *b, const cJSON *r)
{
	const cJSON *g, *list = jget(r, "grounding");
	if (!cJSON_GetArraySize(list))
		return;
	ksr_strbuf_add(
	        b,
	        "## Grounded clicks\n\n| step | asked | where | verified |\n|---|---|---|---|\n");
	cJSON_ArrayForEach(g, list)
	{
		const cJSON *w = jget(g, "where");
		ksr_strbuf_add(b, "| ");
		sb_line_ref(b, g, "step");
		ksr_strbuf_add(b, " | ");
		sb_esc(b, ksr_json_str(g, "asked", NULL));
		ksr_strbuf_add(b, " | ");
		if (cJSON_IsObject(w))
			ksr_strbuf_addf(b, "(%.0f, %.0f)", ksr_json_num(w, "x", 0),
			                ksr_json_num(w, "y", 0));
		ksr_strbuf_addf(b, " | %s |\n", cJSON_IsTrue(jget(g, "verified")) ? "yes" : "no");
	}
	ksr_strbuf_add(b, "\n");
}

static void section_final_checks(ksr_strbuf *b, const cJSON *r)
{
	const cJSON *c, *list = jget(r, "final_checks");
	if (!cJSON_GetArraySize(list))
		return;
	ksr_strbuf_add(b, "## Final checks\n\n| check | result | detail |\n|---|---|---|\n");
	cJSON_ArrayForEach(c, list)
	{
		ksr_strbuf_add(b, "| ");
		sb_esc(b, ksr_json_str(c, "name", NULL));
		ksr_strbuf_addf(b, " | %s | ", cJSON_IsTrue(jget(c, "ok")) ? "ok" : "failed");
		sb_esc(b, ksr_json_str(c, "detail", ""));
		ksr_strbuf_add(b, " |\n");
	}
	ksr_strbuf_add(b, "\n");
}

static void section_model(ksr_strbuf *b, const cJSON *r)
{
	const cJSON *m = jget(r, "model_usage");
	if (ksr_json_num(m, "calls", 0) <= 0)
		return;
	ksr_strbuf_addf(b, "## Model usage\n\n%.0f calls, %.0f failed, ",
	                ksr_json_num(m, "calls", 0), ksr_json_num(m, "failures", 0));
	sb_ms(b, m, "total_ms");
	ksr_strbuf_add(b, " in all.\n\n");
}

static bool is_image_kind(const char *kind)
{
	return kind && (!strcmp(kind, "screenshot") || !strcmp(kind, "diff") ||
	                !strcmp(kind, "baseline-candidate"));
}

static void section_screenshots(ksr_strbuf *b, const cJSON *r)
{
	const cJSON *a, *list = jget(r, "artifacts");
	bool any = false;
	cJSON_ArrayForEach(a, list)
	{
		if (!is_image_kind(ksr_json_str(a, "kind", NULL)) || !ksr_json_str(a, "name", NULL))
			continue;
		ksr_strbuf_add(b, any ? "" : "## Screenshots\n\n");
		any = true;
		ksr_strbuf_add(b, "### ");
		sb_esc(b, ksr_json_str(a, "name", NULL));
		ksr_strbuf_add(b, "\n\n");
		if (ksr_json_str(a, "description", NULL)) {
			sb_esc(b, ksr_json_str(a, "description", NULL));
			ksr_strbuf_add(b, "\n\n");
		}
		ksr_strbuf_add(b, "![");
		sb_esc(b, ksr_json_str(a, "description", ksr_json_str(a, "name", NULL)));
		ksr_strbuf_add(b, "](");
		sb_url(b, ksr_json_str(a, "name", NULL));
		ksr_strbuf_add(b, ")\n\n");
	}
}

static void section_other_files(ksr_strbuf *b, const cJSON *r)
{
	const cJSON *a, *list = jget(r, "artifacts");
	bool any = false;
	cJSON_ArrayForEach(a, list)
	{
		if (is_image_kind(ksr_json_str(a, "kind", NULL)) || !ksr_json_str(a, "name", NULL))
			continue;
		ksr_strbuf_add(b, any ? "" : "## Other files\n\n");
		any = true;
		ksr_strbuf_add(b, "- ");
		sb_link(b, ksr_json_str(a, "name", NULL));
		ksr_strbuf_add(b, " (");
		sb_esc(b, ksr_json_str(a, "kind", NULL));
		ksr_strbuf_add(b, ")");
		if (ksr_json_str(a, "description", NULL)) {
			ksr_strbuf_add(b, ": ");
			sb_esc(b, ksr_json_str(a, "description", NULL));
		}
		ksr_strbuf_add(b, "\n");
	}
	ksr_strbuf_add(b, any ? "\n" : "");
}

static void section_log_tails(ksr_strbuf *b, const cJSON *r)
{
	const cJSON *t, *list = jget(r, "log_tails");
	if (!cJSON_GetArraySize(list))
		return;
	ksr_strbuf_add(b, "## Log tails\n\n");
	cJSON_ArrayForEach(t, list)
	{
		ksr_strbuf_add(b, "### ");
		sb_esc(b, ksr_json_str(t, "path", NULL));
		ksr_strbuf_add(b, "\n\n");
		sb_fence(b, ksr_json_str(t, "text", NULL));
	}
}

static void section_output_errors(ksr_strbuf *b, const cJSON *r)
{
	const cJSON *o, *list = jget(r, "output_errors");
	if (!cJSON_GetArraySize(list))
		return;
	ksr_strbuf_add(b, "## Evidence that could not be written\n\n");
	cJSON_ArrayForEach(o, list)
	{
		ksr_strbuf_add(b, "- ");
		sb_esc(b, ksr_json_str(o, "what", NULL));
		ksr_strbuf_add(b, ": ");
		sb_esc(b, ksr_json_str(o, "error", NULL));
		ksr_strbuf_add(b, "\n");
	}
	ksr_strbuf_add(b, "\n");
}

char *ksr_report_markdown(const cJSON *report)
{
	static void (*const sections[])(ksr_strbuf *, const cJSON *) = {
	        section_head,         section_summary,     section_concerns,
	        section_failures,     section_app,         section_stages,
	        section_steps,        section_page_errors, section_grounding,
	        section_final_checks, section_model,       section_screenshots,
	        section_other_files,  section_log_tails,   section_output_errors,
	};
	ksr_strbuf b = {0};
	ksr_strbuf_add(&b, "");
	for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
		sections[i](&b, report);
	return b.p;
}
