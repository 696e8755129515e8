/* The scenario as YAML text. libyaml's emitter cannot write comments, and the
 * comments (what was seen) are half of what a recording is for, so the text is
 * written here, around the values: each step's and check's value is the
 * scenario writer's (ksr/scenario_yaml.h), chosen by its row's shape, every
 * string a double-quoted scalar with YAML's escapes (a title may hold quotes,
 * colons, '#', leading spaces, line breaks or a ${). The loader reads the
 * result back before it is handed out (record.c). */
#include "record/record_priv.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/scenario_yaml.h"

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
	ksr_yaml_quote(b, value);
	ksr_strbuf_add(b, "\n");
}

/* A fraction kept to the places a replay needs. */
static ksr_point literal(double fx, double fy, double places)
{
	return (ksr_point){.kind = KSR_POINT_LITERAL,
	                   .fx = round(fx * places) / places,
	                   .fy = round(fy * places) / places};
}

/* The recorded step as the loader would have parsed it (the fields of its
 * value only), written by the row's shape. Points to three places; a drag's
 * ends to four (the same pixels again in a window up to 5000 px). */
static char *action_value(const rec_step *s)
{
	ksr_step st = {.info = s->kind};
	ksr_pattern *re = NULL;
	switch (s->kind->shape) {
	case KSR_SHAPE_POINT:
		st.point = literal(s->fx, s->fy, 1000);
		break;
	case KSR_SHAPE_DRAG:
		st.point = literal(s->fx, s->fy, 10000);
		st.drag_to = literal(s->tx, s->ty, 10000);
		break;
	case KSR_SHAPE_SCROLL: /* button 4 up, 5 down; px counts the clicks */
		st.scroll_dy = s->button == 4 ? -s->px : s->px;
		break;
	case KSR_SHAPE_NAME:
		st.name.text = s->value;
		break;
	case KSR_SHAPE_PATTERN:
		st.re = re = ksr_pattern_compile(s->value, NULL);
		break;
	default: /* a string: chords, text, a selector */
		st.text = s->value;
	}
	char *v = ksr_step_value_yaml(&st);
	ksr_pattern_free(re);
	return v;
}

static char *check_value(const rec_check *c)
{
	ksr_check ck = {.info = c->kind};
	ksr_pattern *re = NULL;
	if (c->kind->shape == KSR_SHAPE_PATTERN)
		ck.re = re = ksr_pattern_compile(c->value, NULL);
	else
		ck.text = c->value;
	char *v = ksr_check_value_yaml(&ck);
	ksr_pattern_free(re);
	return v;
}

static void write_checks(ksr_strbuf *b, const rec_step *s)
{
	if (!s->n_checks)
		return;
	ksr_strbuf_add(b, "    checks:\n");
	for (size_t i = 0; i < s->n_checks; i++) {
		const rec_check *c = &s->checks[i];
		char *v = check_value(c);
		if (c->comment)
			comment(b, "      ", c->comment);
		ksr_strbuf_addf(b, "      - %s: %s\n", c->kind->name, v ? v : "null");
		ksr_strbuf_add(b, "        timeout_s: 10\n");
		free(v);
	}
}

static void write_step(ksr_strbuf *b, const rec_step *s)
{
	if (s->comment)
		comment(b, "  ", s->comment);
	if (!s->kind)
		return;
	if (s->secret) { /* a variable the replay expands: written as is */
		ksr_strbuf_addf(b, "  - %s: \"%s\"\n", s->kind->name, s->value);
	} else {
		char *v = action_value(s);
		ksr_strbuf_addf(b, "  - %s: %s\n", s->kind->name, v ? v : "null");
		free(v);
	}
	if (s->role)
		key_value(b, "    ", "role", s->role);
	if (s->target_window) {
		ksr_strbuf_add(b, "    target: {window: ");
		ksr_yaml_quote(b, s->target_window);
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
 * that a replay's file: checks see the replay's own files. (A "${" in it is
 * the quoting's: ksr_yaml_quote.) */
static char *launch_line(const rec *r, const char *launch)
{
	ksr_strbuf b = {0};
	if (!r->n_files)
		return ksr_xstrdup(launch);
	ksr_strbuf_add(&b, "rm -f --");
	for (size_t i = 0; i < r->n_files; i++) {
		ksr_strbuf_add(&b, " '");
		for (const char *p = r->files[i]; *p; p++)
			ksr_strbuf_add(&b, *p == '\'' ? "'\\''" : (char[2]){*p, 0});
		ksr_strbuf_add(&b, "'");
	}
	ksr_strbuf_add(&b, "; ");
	ksr_strbuf_add(&b, launch);
	return ksr_strbuf_take(&b);
}

static size_t n_actions(const rec *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->n; i++)
		n += r->steps[i].kind != NULL;
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
