/* JUnit XML from run reports (ksr/junit.h). The element order inside a
 * testcase (error/failure/skipped, then system-out) and the attribute names
 * are those of Jenkins' junit-10.xsd, which GitLab and the GitHub reporters
 * also read. */
#include "ksr/strbuf.h"
#include "ksr/junit.h"
#include "ksr/json.h"
#include "ksr/fleet.h"
#include "ksr/utf8.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *entity(unsigned char c)
{
	switch (c) {
	case '&':
		return "&amp;";
	case '<':
		return "&lt;";
	case '>':
		return "&gt;";
	case '"':
		return "&quot;";
	case '\'':
		return "&apos;";
	default:
		return NULL;
	}
}

/* What XML 1.0 cannot carry (Char production): a byte that is not part of
 * well-formed UTF-8, a C0 control but tab, newline and return, U+FFFE and
 * U+FFFF. len is ksr_utf8_seq_len's (0: invalid). */
static bool not_xml_char(const unsigned char *p, size_t len)
{
	if (len == 0)
		return true;
	if (len == 1)
		return *p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r';
	return len == 3 && p[0] == 0xEF && p[1] == 0xBF && p[2] >= 0xBE;
}

/* Text and attribute values: the five entities; what XML 1.0 cannot carry
 * is written as text instead, `\xNN` for a byte, `\uFFFE` for a code point,
 * so the file is always well-formed and the byte is still said. */
static void xesc(ksr_strbuf *b, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
		size_t len = ksr_utf8_seq_len(p);
		const char *ent = entity(*p);
		if (ent)
			ksr_strbuf_add(b, ent);
		else if (not_xml_char(p, len) && len == 3)
			ksr_strbuf_addf(b, "\\u%s", p[2] == 0xBE ? "FFFE" : "FFFF");
		else if (not_xml_char(p, len))
			ksr_strbuf_addf(b, "\\x%02x", *p);
		else
			ksr_strbuf_addn(b, (const char *)p, len);
		p += len ? len : 1;
	}
}

static void xattr(ksr_strbuf *b, const char *name, const char *value)
{
	ksr_strbuf_addf(b, " %s=\"", name);
	xesc(b, value);
	ksr_strbuf_addn(b, "\"", 1);
}

typedef struct run_view {
	const char *name, *run_id, *verdict, *outcome, *reason, *started;
	double seconds;
	const cJSON *steps;
	const char *dir;
} run_view;

static run_view view_of(const ksr_junit_run *r)
{
	const cJSON *rep = r->report, *t = r->terminal;
	const cJSON *sc = cJSON_GetObjectItemCaseSensitive(rep, "scenario");
	const cJSON *tm = cJSON_GetObjectItemCaseSensitive(rep, "timings");
	run_view v = {
	        .name = ksr_json_str(sc, "name", NULL),
	        .run_id = ksr_json_str(rep, "run_id", ksr_json_str(t, "run", NULL)),
	        .verdict = ksr_json_str(rep, "verdict", ksr_json_str(t, "verdict", "test-error")),
	        .outcome = ksr_json_str(rep, "outcome", ksr_json_str(t, "outcome", "unknown")),
	        .reason = ksr_json_str(rep, "reason",
	                               ksr_json_str(t, "reason", "no report.json was written")),
	        .started = ksr_json_str(tm, "started_at", NULL),
	        .seconds = ksr_json_num(tm, "duration_ms", 0) / 1000.0,
	        .steps = cJSON_GetObjectItemCaseSensitive(rep, "steps"),
	        .dir = r->out_dir ? r->out_dir : ".",
	};
	if (!v.name)
		v.name = v.run_id ? v.run_id : v.dir;
	return v;
}

/* A prompt nobody answered: blocked (declared, test-error) or
 * blocked-by-prompt (app-failed). */
static bool blocker_outcome(const char *outcome)
{
	return strcmp(outcome, "blocked") == 0 || strcmp(outcome, "blocked-by-prompt") == 0;
}

/* 0 passed, 1 failure, 2 error. A blocker is never a pass, whatever the
 * verdict word says. */
static int run_kind(const run_view *v)
{
	if (strcmp(v->outcome, "blocked-by-prompt") == 0)
		return 1;
	if (strcmp(v->outcome, "blocked") == 0)
		return 2;
	if (strcmp(v->verdict, "pass") == 0 || strcmp(v->verdict, "pass-with-concerns") == 0)
		return 0;
	return strcmp(v->verdict, "app-failed") == 0 ? 1 : 2;
}

static int step_kind(const cJSON *step)
{
	const char *st = ksr_json_str(step, "status", "error");
	if (strcmp(st, "ok") == 0)
		return 0;
	if (strcmp(st, "skipped") == 0)
		return 3;
	return strcmp(st, "failed") == 0 ? 1 : 2;
}

static void problem(ksr_strbuf *b, int kind, const char *type, const char *message)
{
	if (kind == 0)
		return;
	if (kind == 3) {
		ksr_strbuf_addn(b, "      <skipped/>\n", 17);
		return;
	}
	const char *el = kind == 1 ? "failure" : "error";
	ksr_strbuf_addf(b, "      <%s", el);
	xattr(b, "message", message);
	xattr(b, "type", type);
	ksr_strbuf_addn(b, ">", 1);
	xesc(b, message);
	ksr_strbuf_addf(b, "</%s>\n", el);
}

static void system_out(ksr_strbuf *b, const run_view *v)
{
	ksr_strbuf_addn(b, "      <system-out>", 18);
	char *text = ksr_xasprintf("verdict: %s (%s)\nevidence: %s\nreport: %s/report.md\n"
	                           "in a browser: %s/report.html\n",
	                           v->verdict, v->outcome, v->dir, v->dir, v->dir);
	xesc(b, text);
	free(text);
	ksr_strbuf_addn(b, "</system-out>\n", 14);
}

static void run_case(ksr_strbuf *b, const run_view *v, const char *classname)
{
	ksr_strbuf_addn(b, "    <testcase", 13);
	xattr(b, "name", "run");
	xattr(b, "classname", classname);
	ksr_strbuf_addf(b, " time=\"%.3f\">\n", v->seconds);
	problem(b, run_kind(v), v->outcome, v->reason);
	system_out(b, v);
	ksr_strbuf_addn(b, "    </testcase>\n", 16);
}

static void step_case(ksr_strbuf *b, const run_view *v, const cJSON *step, const char *classname)
{
	char name[160];
	snprintf(name, sizeof name, "step %02d: %s (line %d)", (int)ksr_json_num(step, "index", 0),
	         ksr_json_str(step, "kind", "?"), (int)ksr_json_num(step, "line", 0));
	ksr_strbuf_addn(b, "    <testcase", 13);
	xattr(b, "name", name);
	xattr(b, "classname", classname);
	ksr_strbuf_addf(b, " time=\"%.3f\">\n", ksr_json_num(step, "duration_ms", 0) / 1000.0);
	const char *reason = ksr_json_str(step, "reason", "the step did not succeed");
	problem(b, step_kind(step), ksr_json_str(step, "status", "error"), reason);
	system_out(b, v);
	ksr_strbuf_addn(b, "    </testcase>\n", 16);
}

static void suite(ksr_strbuf *b, const ksr_junit_run *r, int tally[4])
{
	run_view v = view_of(r);
	int counts[4] = {0};
	counts[run_kind(&v)]++;
	int n_steps = cJSON_GetArraySize(v.steps);
	for (int i = 0; i < n_steps; i++)
		counts[step_kind(cJSON_GetArrayItem(v.steps, i))]++;
	char *classname = ksr_xasprintf("kasm-session-runtime.%s", v.name);
	ksr_strbuf_addn(b, "  <testsuite", 12);
	xattr(b, "name", v.name);
	ksr_strbuf_addf(b,
	                " tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\" time=\"%.3f\"",
	                1 + n_steps, counts[1], counts[2], counts[3], v.seconds);
	if (v.started) {
		char ts[32];
		snprintf(ts, sizeof ts, "%.19s", v.started); /* junit-10: no zone suffix */
		xattr(b, "timestamp", ts);
	}
	if (v.run_id)
		xattr(b, "id", v.run_id);
	ksr_strbuf_addn(b, ">\n    <properties>\n", 19);
	const char *props[][2] = {{"run_id", v.run_id},
	                          {"verdict", v.verdict},
	                          {"outcome", v.outcome},
	                          {"evidence", v.dir}};
	for (size_t i = 0; i < sizeof props / sizeof props[0]; i++) {
		ksr_strbuf_addn(b, "      <property", 15);
		xattr(b, "name", props[i][0]);
		xattr(b, "value", props[i][1] ? props[i][1] : "");
		ksr_strbuf_addn(b, "/>\n", 3);
	}
	if (blocker_outcome(v.outcome)) {
		ksr_strbuf_addn(b, "      <property", 15);
		xattr(b, "name", "blocker");
		xattr(b, "value", v.outcome);
		ksr_strbuf_addn(b, "/>\n", 3);
	}
	ksr_strbuf_addn(b, "    </properties>\n", 18);
	run_case(b, &v, classname);
	for (int i = 0; i < n_steps; i++)
		step_case(b, &v, cJSON_GetArrayItem(v.steps, i), classname);
	ksr_strbuf_addn(b, "  </testsuite>\n", 15);
	free(classname);
	tally[0] += 1 + n_steps;
	for (int k = 1; k < 4; k++)
		tally[k] += counts[k];
}

char *ksr_junit_render(const ksr_junit_run *runs, size_t n)
{
	ksr_strbuf body = {0}, doc = {0};
	int tally[4] = {0};
	double seconds = 0;
	for (size_t i = 0; i < n; i++) {
		suite(&body, &runs[i], tally);
		seconds += view_of(&runs[i]).seconds;
	}
	ksr_strbuf_addn(&doc, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", 39);
	ksr_strbuf_addf(&doc,
	                "<testsuites name=\"kasm-session-runtime\" tests=\"%d\" failures=\"%d\" "
	                "errors=\"%d\" skipped=\"%d\" time=\"%.3f\">\n",
	                tally[0], tally[1], tally[2], tally[3], seconds);
	if (body.p)
		ksr_strbuf_addn(&doc, body.p, body.len);
	ksr_strbuf_addn(&doc, "</testsuites>\n", 14);
	free(body.p);
	return doc.p;
}

static int write_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

int ksr_junit_write(const char *path, const ksr_junit_run *runs, size_t n, ksr_err *err)
{
	char *xml = ksr_junit_render(runs, n);
	int rc = ksr_watch_write_file(path, xml, err);
	free(xml);
	return rc;
}

/* A target that exists and is not a regular file (/dev/stdout, a pipe, a
 * device) is written in place: renaming a file over it would replace the
 * node, not write to it. Every write and the close are checked, so a full
 * device is an error, not a lost file. */
static int write_in_place(const char *path, const char *xml, ksr_err *err)
{
	/* O_NONBLOCK: a FIFO nobody reads fails at once (ENXIO), never hangs. */
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return ksr_err_errno(err, path), -1;
	int flags = fcntl(fd, F_GETFL);
	if (flags >= 0)
		(void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	int rc = write_all(fd, xml, strlen(xml));
	int e = errno;
	if (close(fd) < 0 && rc == 0)
		rc = -1, e = errno;
	if (rc < 0) {
		errno = e;
		ksr_err_errno(err, path);
	}
	return rc;
}

int ksr_watch_write_file(const char *path, const char *xml, ksr_err *err)
{
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		return ksr_err_errno(err, path), -1;
	}
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return write_in_place(path, xml, err);
	/* The temporary file sits beside the target so that rename is atomic. */
	const char *base = strrchr(path, '/');
	char *tmp = base ? ksr_xasprintf("%.*s/.%s.tmp", (int)(base - path), path, base + 1)
	                 : ksr_xasprintf(".%s.tmp", path);
	int rc = -1;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		ksr_err_errno(err, tmp);
		goto cleanup;
	}
	if (write_all(fd, xml, strlen(xml)) < 0 || fsync(fd) < 0) {
		ksr_err_errno(err, tmp);
		close(fd);
		unlink(tmp);
		goto cleanup;
	}
	if (close(fd) < 0) {
		ksr_err_errno(err, tmp);
		unlink(tmp);
		goto cleanup;
	}
	if (rename(tmp, path) < 0) {
		ksr_err_errno(err, path);
		unlink(tmp);
		goto cleanup;
	}
	rc = 0;
cleanup:
	free(tmp);
	return rc;
}
