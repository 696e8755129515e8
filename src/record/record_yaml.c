/* The scenario as YAML text. libyaml's emitter cannot write comments, and the
 * comments (what was seen) are half of what a recording is for, so the text is
 * written here: every string is a double-quoted scalar with YAML's escapes
 * (a title may hold quotes, colons, '#', leading spaces or line breaks), and
 * the loader reads the result back before it is handed out (record.c). */
#include "record/record_priv.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/keys.h"

void rec_yaml_quote(ksr_strbuf *b, const char *s)
{
	ksr_strbuf_add(b, "\"");
	for (const char *p = s ? s : ""; *p;) {
		const char *at = p;
		uint32_t cp = 0;
		if (ksr_keys_utf8_next(&p, &cp) < 0) {
			ksr_strbuf_add(b, "\\uFFFD"); /* not UTF-8: YAML cannot hold the byte */
			p = at + 1;
			continue;
		}
		switch (cp) {
		case '"':
			ksr_strbuf_add(b, "\\\"");
			break;
		case '\\':
			ksr_strbuf_add(b, "\\\\");
			break;
		case '\n':
			ksr_strbuf_add(b, "\\n");
			break;
		case '\t':
			ksr_strbuf_add(b, "\\t");
			break;
		case '\r':
			ksr_strbuf_add(b, "\\r");
			break;
		case 0x85:
		case 0x2028:
		case 0x2029:
		case 0xFEFF:
			ksr_strbuf_addf(b, "\\u%04X", (unsigned)cp);
			break;
		default:
			if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0))
				ksr_strbuf_addf(b, "\\x%02X", (unsigned)cp);
			else
				ksr_strbuf_addn(b, at, (size_t)(p - at));
		}
	}
	ksr_strbuf_add(b, "\"");
}

/* A comment line: line breaks and controls become spaces. */
static void comment(ksr_strbuf *b, const char *indent, const char *text)
{
	ksr_strbuf_addf(b, "%s# ", indent);
	for (const unsigned char *p = (const unsigned char *)text; *p; p++)
		ksr_strbuf_addn(b, *p < 0x20 || *p == 0x7f ? " " : (const char *)p, 1);
	ksr_strbuf_add(b, "\n");
}

static void key_value(ksr_strbuf *b, const char *indent, const char *key, const char *value)
{
	ksr_strbuf_addf(b, "%s%s: ", indent, key);
	rec_yaml_quote(b, value);
	ksr_strbuf_add(b, "\n");
}

/* A name as click_element and expect_state read it: exact, unless it would
 * be taken for something else (a /pattern/, a ${VAR}): then a pattern that
 * matches exactly it. */
static void name_value(ksr_strbuf *b, const char *name)
{
	size_t n = strlen(name);
	if (!strstr(name, "${") && !(n >= 2 && name[0] == '/' && name[n - 1] == '/')) {
		rec_yaml_quote(b, name);
		return;
	}
	char *pat = rec_exact_pattern(name);
	char *slashed = NULL;
	if (asprintf(&slashed, "/%s/", pat) < 0)
		abort();
	rec_yaml_quote(b, slashed);
	free(slashed);
	free(pat);
}

static void write_checks(ksr_strbuf *b, const rec_step *s)
{
	if (!s->n_checks)
		return;
	ksr_strbuf_add(b, "    checks:\n");
	for (size_t i = 0; i < s->n_checks; i++) {
		const rec_check *c = &s->checks[i];
		if (c->comment)
			comment(b, "      ", c->comment);
		key_value(b, "      - ", c->kind, c->value);
		ksr_strbuf_add(b, "        timeout_s: 10\n");
	}
}

static void write_step(ksr_strbuf *b, const rec_step *s)
{
	if (s->comment)
		comment(b, "  ", s->comment);
	if (!s->action)
		return;
	if (s->drag) { /* four places: the same pixels again in a window up to 5000 px */
		ksr_strbuf_addf(b, "  - drag: {from: [%.4f, %.4f], to: [%.4f, %.4f]}\n", s->fx,
		                s->fy, s->tx, s->ty);
	} else if (s->point) {
		ksr_strbuf_addf(b, "  - %s: [%.3f, %.3f]\n", s->action, s->fx, s->fy);
	} else {
		ksr_strbuf_addf(b, "  - %s: ", s->action);
		if (!strcmp(s->action, "click_element"))
			name_value(b, s->value);
		else
			rec_yaml_quote(b, s->value);
		ksr_strbuf_add(b, "\n");
	}
	if (s->role)
		key_value(b, "    ", "role", s->role);
	if (s->target_window) {
		ksr_strbuf_add(b, "    target: {window: ");
		rec_yaml_quote(b, s->target_window);
		ksr_strbuf_add(b, "}\n");
	}
	if (s->timeout_s)
		ksr_strbuf_addf(b, "    timeout_s: %d\n", s->timeout_s);
	if (s->expect_state)
		key_value(b, "    ", "expect_state", s->expect_state);
	write_checks(b, s);
	for (size_t i = 0; i < s->n_notes; i++)
		comment(b, "    ", s->notes[i]);
}

/* The launch as written: files the recording wrote are removed first, so
 * that a replay's file: checks see the replay's own files. */
/* The loader expands ${VAR} in every value and has no escape: a "${" the
 * command holds is written as a variable whose default is "$". */
static void add_literal(ksr_strbuf *b, const char *s)
{
	for (const char *p = s; *p; p++) {
		if (p[0] == '$' && p[1] == '{')
			ksr_strbuf_add(b, "${KSR_RECORD_DOLLAR:-$}");
		else
			ksr_strbuf_addn(b, p, 1);
	}
}

static char *launch_line(const rec *r, const char *launch)
{
	ksr_strbuf b = {0};
	if (!r->n_files) {
		add_literal(&b, launch);
		return ksr_strbuf_take(&b);
	}
	ksr_strbuf_add(&b, "rm -f --");
	for (size_t i = 0; i < r->n_files; i++) {
		ksr_strbuf_add(&b, " '");
		for (const char *p = r->files[i]; *p; p++)
			ksr_strbuf_add(&b, *p == '\'' ? "'\\''" : (char[2]){*p, 0});
		ksr_strbuf_add(&b, "'");
	}
	ksr_strbuf_add(&b, "; ");
	add_literal(&b, launch);
	return ksr_strbuf_take(&b);
}

static size_t n_actions(const rec *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->n; i++)
		n += r->steps[i].action != NULL;
	return n;
}

static void write_head(ksr_strbuf *b, const rec *r, const char *launch, const char *process)
{
	key_value(b, "", "name", r->o->name ? r->o->name : "recorded");
	if (launch) {
		char *l = launch_line(r, launch);
		if (r->n_files)
			comment(b, "",
			        "the files the recording wrote are removed before the app starts");
		if (strstr(launch, "${"))
			comment(b, "",
			        "${KSR_RECORD_DOLLAR:-$} is a literal $ (the loader expands "
			        "${...})");
		key_value(b, "", "launch", l);
		free(l);
	}
	if (process)
		key_value(b, "", "process", process);
	if (r->main_title && *r->main_title && r->start_title) {
		/* ^(?:A|B)$ from the two exact patterns ^A$ and ^B$ */
		char *a = rec_exact_pattern(r->main_title), *s = rec_exact_pattern(r->start_title);
		a[strlen(a) - 1] = s[strlen(s) - 1] = 0;
		char *pat = NULL;
		if (asprintf(&pat, "^(?:%s|%s)$", a + 1, s + 1) < 0)
			abort();
		comment(b, "",
		        "the window's title changed before the first step: either is waited for");
		key_value(b, "", "window", pat);
		free(pat);
		free(a);
		free(s);
	} else if (r->main_title && *r->main_title) {
		char *pat = rec_exact_pattern(r->main_title);
		key_value(b, "", "window", pat);
		free(pat);
	}
	ksr_strbuf_add(b, "launch_timeout_s: 60\n");
	if (!r->a)
		ksr_strbuf_add(b, "atspi: false\n");
}

char *rec_yaml_text(const rec *r, const char *launch, const char *process, const char *stopped_by)
{
	ksr_strbuf b = {0};
	char line[512];
	snprintf(line, sizeof line,
	         "recorded by kasm-session-runtime record on display %s (stopped by %s)",
	         r->display ? r->display : "?", stopped_by);
	comment(&b, "", line);
	snprintf(line, sizeof line, "%zu steps; %d events could not be placed (comments below)",
	         n_actions(r), r->unplaced);
	comment(&b, "", line);
	if (r->a11y_error) {
		snprintf(line, sizeof line, "no accessibility: %s (clicks are declared points)",
		         r->a11y_error);
		comment(&b, "", line);
	}
	if (r->secrets) {
		snprintf(line, sizeof line,
		         "typed secrets are not written: set RECORDED_SECRET_1..%d before a replay",
		         r->secrets);
		comment(&b, "", line);
	}
	write_head(&b, r, launch, process);
	if (!n_actions(r)) {
		for (size_t i = 0; i < r->n; i++)
			write_step(&b, &r->steps[i]);
		ksr_strbuf_add(&b, "steps: []\n");
		return ksr_strbuf_take(&b);
	}
	ksr_strbuf_add(&b, "steps:\n");
	for (size_t i = 0; i < r->n; i++)
		write_step(&b, &r->steps[i]);
	return ksr_strbuf_take(&b);
}
