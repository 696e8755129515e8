/* Steps and checks back to YAML (ksr/scenario_yaml.h): one writer per value
 * shape, chosen by the row's shape column, the way the loader's readers are
 * (loader_steps.c action_value, loader_checks.c check_value). The switches
 * name every shape and have no default, so a new KSR_SHAPE_* does not build
 * until it has a writer here. */
#include "ksr/scenario_yaml.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_TIMEOUT_DEFAULT_S 5 /* scn_check_init's */

/* ---- scalars ------------------------------------------------------------------------- */

/* The escape of one code point in a double-quoted scalar, or NULL: as is. */
static const char *escape_of(uint32_t cp, char *buf, size_t len)
{
	switch (cp) {
	case '"':
		return "\\\"";
	case '\\':
		return "\\\\";
	case '\n':
		return "\\n";
	case '\t':
		return "\\t";
	case '\r':
		return "\\r";
	case 0x85: /* NEL, LS, PS: line breaks to YAML; BOM: dropped */
	case 0x2028:
	case 0x2029:
	case 0xFEFF:
		snprintf(buf, len, "\\u%04X", (unsigned)cp);
		return buf;
	default:
		if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0)) {
			snprintf(buf, len, "\\x%02X", (unsigned)cp);
			return buf;
		}
		return NULL;
	}
}

/* The loader expands ${VAR} in every scalar (vars.c) and has no escape, but
 * ${VAR:-default} gives a default: a literal "${" is a variable whose
 * default is "$" followed by "{". "$$" is left alone by the expansion, so it
 * is copied as a pair (its second '$' starts nothing). */
static size_t dollar(ksr_strbuf *b, const char *p)
{
	if (p[1] == '$') {
		ksr_strbuf_add(b, "$$");
		return 2;
	}
	ksr_strbuf_add(b, p[1] == '{' ? "${KSR_RECORD_DOLLAR:-$}" : "$");
	return 1;
}

void ksr_yaml_quote(ksr_strbuf *b, const char *s)
{
	ksr_strbuf_add(b, "\"");
	for (const char *p = s ? s : ""; *p;) {
		if (*p == '$') {
			p += dollar(b, p);
			continue;
		}
		const char *at = p;
		uint32_t cp = 0;
		char buf[16];
		if (ksr_keys_utf8_next(&p, &cp) < 0) {
			ksr_strbuf_add(b, "\\uFFFD"); /* not UTF-8: YAML cannot hold the byte */
			p = at + 1;
			continue;
		}
		const char *esc = escape_of(cp, buf, sizeof buf);
		if (esc)
			ksr_strbuf_add(b, esc);
		else
			ksr_strbuf_addn(b, at, (size_t)(p - at));
	}
	ksr_strbuf_add(b, "\"");
}

char *ksr_yaml_scalar(const char *s)
{
	ksr_strbuf b = {0};
	ksr_yaml_quote(&b, s);
	return ksr_strbuf_take(&b);
}

char *ksr_yaml_exact_pattern(const char *text)
{
	ksr_strbuf b = {0};
	ksr_strbuf_add(&b, "^");
	for (const char *p = text ? text : ""; *p; p++) {
		if (strchr("\\^$.|?*+()[]{}", *p))
			ksr_strbuf_add(&b, "\\");
		ksr_strbuf_addn(&b, p, 1);
	}
	ksr_strbuf_add(&b, "$");
	return ksr_strbuf_take(&b);
}

/* The shortest decimal that reads back as v (an integer without a point). */
static void put_number(ksr_strbuf *b, double v)
{
	char buf[40];
	if (v == floor(v) && fabs(v) < 1e15) {
		ksr_strbuf_addf(b, "%.0f", v);
		return;
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof buf, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	ksr_strbuf_add(b, buf);
}

static void put_pattern(ksr_strbuf *b, const ksr_pattern *re)
{
	ksr_yaml_quote(b, re ? ksr_pattern_source(re) : "");
}

/* An accessibility name as scn_name reads it: exact, or /pattern/. */
static void put_name(ksr_strbuf *b, const ksr_name_match *m)
{
	size_t n = m->text ? strlen(m->text) : 0;
	char *written = NULL;
	if (m->re)
		written = ksr_xasprintf("/%s/", m->text);
	else if (n >= 3 && m->text[0] == '/' && m->text[n - 1] == '/') {
		char *exact = ksr_yaml_exact_pattern(m->text); /* no exact form: see the header */
		written = ksr_xasprintf("/%s/", exact);
		free(exact);
	}
	ksr_yaml_quote(b, written ? written : m->text);
	free(written);
}

/* ", key: " before every entry of a flow mapping but the first. */
static void key(ksr_strbuf *b, bool *first, const char *k)
{
	ksr_strbuf_addf(b, "%s%s: ", *first ? "" : ", ", k);
	*first = false;
}

static bool locator_empty(const ksr_locator *l)
{
	return !l->label.text && !l->in && !l->nth;
}

/* label:, in: and nth: of a locator, as entries of a flow mapping. */
static void put_locator_keys(ksr_strbuf *b, bool *first, const ksr_locator *l)
{
	if (l->label.text) {
		key(b, first, "label");
		put_name(b, &l->label);
	}
	if (l->in && !l->in_role && l->in_name.text) {
		key(b, first, "in");
		put_name(b, &l->in_name);
	} else if (l->in) {
		bool in_first = true;
		key(b, first, "in");
		ksr_strbuf_add(b, "{");
		if (l->in_name.text) {
			key(b, &in_first, "name");
			put_name(b, &l->in_name);
		}
		if (l->in_role) {
			key(b, &in_first, "role");
			ksr_yaml_quote(b, l->in_role);
		}
		ksr_strbuf_add(b, "}");
	}
	if (l->nth) {
		key(b, first, "nth");
		ksr_strbuf_addf(b, "%d", l->nth);
	}
}

/* An element as its name alone when that says it all, else
 * {name?, role?, label?, in?, nth?}. role_apart: a step's role: is its own
 * modifier when the value is a plain name. */
static bool element_is_name(const ksr_name_match *name, const char *role, const ksr_locator *l,
                            bool role_apart)
{
	return name->text && locator_empty(l) && (role_apart || !role);
}

static void put_element(ksr_strbuf *b, const ksr_name_match *name, const char *role,
                        const ksr_locator *l, bool role_apart)
{
	if (element_is_name(name, role, l, role_apart)) {
		put_name(b, name);
		return;
	}
	bool first = true;
	ksr_strbuf_add(b, "{");
	if (name->text) {
		key(b, &first, "name");
		put_name(b, name);
	}
	if (role) {
		key(b, &first, "role");
		ksr_yaml_quote(b, role);
	}
	put_locator_keys(b, &first, l);
	ksr_strbuf_add(b, "}");
}

/* ---- the shapes a step's value takes ------------------------------------------------ */

/* POINT: center | a declared target's name | [fx, fy]. */
static void put_point(ksr_strbuf *b, const ksr_point *p)
{
	switch (p->kind) {
	case KSR_POINT_CENTER:
		ksr_strbuf_add(b, "center");
		return;
	case KSR_POINT_DECLARED:
		ksr_yaml_quote(b, p->declared->name);
		return;
	case KSR_POINT_LITERAL:
		ksr_strbuf_add(b, "[");
		put_number(b, p->fx);
		ksr_strbuf_add(b, ", ");
		put_number(b, p->fy);
		ksr_strbuf_add(b, "]");
		return;
	}
}

static void put_scroll(ksr_strbuf *b, const ksr_step *st)
{
	char *s = ksr_xasprintf("%s %d", st->scroll_dy < 0 ? "up" : "down", abs(st->scroll_dy));
	ksr_yaml_quote(b, s);
	free(s);
}

/* HOVER: a point form, {element, role?} or {selector}. */
static void put_hover(ksr_strbuf *b, const ksr_step *st)
{
	bool first = true;
	switch (st->hover.via) {
	case KSR_HOVER_POINT:
		put_point(b, &st->point);
		return;
	case KSR_HOVER_ELEMENT:
		ksr_strbuf_add(b, "{");
		key(b, &first, "element");
		put_name(b, &st->name);
		if (st->role) {
			key(b, &first, "role");
			ksr_yaml_quote(b, st->role);
		}
		ksr_strbuf_add(b, "}");
		return;
	case KSR_HOVER_PAGE:
		ksr_strbuf_add(b, "{selector: ");
		ksr_yaml_quote(b, st->text);
		ksr_strbuf_add(b, "}");
		return;
	}
}

static void put_drag(ksr_strbuf *b, const ksr_step *st)
{
	ksr_strbuf_add(b, "{from: ");
	put_point(b, &st->point);
	ksr_strbuf_add(b, ", to: ");
	put_point(b, &st->drag_to);
	ksr_strbuf_add(b, "}");
}

static void put_selector_text(ksr_strbuf *b, const ksr_step *st)
{
	ksr_strbuf_add(b, "{selector: ");
	ksr_yaml_quote(b, st->text);
	ksr_strbuf_add(b, ", text: ");
	ksr_yaml_quote(b, st->fill_text);
	ksr_strbuf_add(b, "}");
}

static void put_spawn(ksr_strbuf *b, const ksr_step *st)
{
	ksr_strbuf_add(b, st->spawn.desktop_entry ? "{desktop_entry: " : "{command: ");
	ksr_yaml_quote(b, st->spawn.desktop_entry ? st->spawn.desktop_entry : st->spawn.command);
	if (st->spawn.window) { /* optional with desktop_entry: */
		ksr_strbuf_add(b, ", window: ");
		put_pattern(b, st->spawn.window);
	}
	if (st->spawn.process) {
		ksr_strbuf_add(b, ", process: ");
		put_pattern(b, st->spawn.process);
	}
	if (st->spawn.as) {
		ksr_strbuf_add(b, ", as: ");
		ksr_yaml_quote(b, st->spawn.as);
	}
	ksr_strbuf_add(b, "}");
}

/* false: the shape is not a step's (the loader rejects such a row too). */
static bool step_value(ksr_strbuf *b, const ksr_step *st)
{
	switch (st->info->shape) {
	case KSR_SHAPE_CHORDS: /* the chords as written: the loader parses them again */
	case KSR_SHAPE_TEXT:
	case KSR_SHAPE_DESCRIPTION:
	case KSR_SHAPE_URL:
	case KSR_SHAPE_SELECTOR:
	case KSR_SHAPE_JS:
	case KSR_SHAPE_COMMAND:
	case KSR_SHAPE_IDENT:
		ksr_yaml_quote(b, st->text);
		return true;
	case KSR_SHAPE_POINT:
		put_point(b, &st->point);
		return true;
	case KSR_SHAPE_SCROLL:
		put_scroll(b, st);
		return true;
	case KSR_SHAPE_HOVER:
		put_hover(b, st);
		return true;
	case KSR_SHAPE_DRAG:
		put_drag(b, st);
		return true;
	case KSR_SHAPE_NAME:
		put_element(b, &st->name, st->role, &st->loc, true);
		return true;
	case KSR_SHAPE_PATTERN:
		put_pattern(b, st->re);
		return true;
	case KSR_SHAPE_SELECTOR_TEXT:
		put_selector_text(b, st);
		return true;
	case KSR_SHAPE_SECONDS:
		put_number(b, st->seconds);
		return true;
	case KSR_SHAPE_SPAWN:
		put_spawn(b, st);
		return true;
	case KSR_SHAPE_STATE: /* checks only */
	case KSR_SHAPE_PAGE:
	case KSR_SHAPE_TEXT_CHECK:
		return false;
	}
	return false;
}

char *ksr_step_value_yaml(const ksr_step *st)
{
	ksr_strbuf b = {0};
	if (step_value(&b, st))
		return ksr_strbuf_take(&b);
	ksr_strbuf_free(&b);
	return NULL;
}

/* ---- the shapes a check's value takes ----------------------------------------------- */

/* The state check reads "NAME STATE" with the state as the last word and the
 * blanks before it dropped: a name that ends in a blank, or a role, needs
 * the mapping {name, role?, state}. */
static void put_state(ksr_strbuf *b, const ksr_check *c)
{
	const char *t = c->name.text ? c->name.text : "";
	size_t n = strlen(t);
	bool string_form = !c->role && locator_empty(&c->loc) && n && t[n - 1] != ' ' &&
	                   t[n - 1] != '\t' &&
	                   !(c->name.re == NULL && n >= 3 && t[0] == '/' && t[n - 1] == '/');
	if (string_form) {
		char *s = c->name.re ? ksr_xasprintf("/%s/ %s", t, c->state)
		                     : ksr_xasprintf("%s %s", t, c->state);
		ksr_yaml_quote(b, s);
		free(s);
		return;
	}
	bool first = true;
	ksr_strbuf_add(b, "{");
	if (c->name.text) {
		key(b, &first, "name");
		put_name(b, &c->name);
	}
	if (c->role) {
		key(b, &first, "role");
		ksr_yaml_quote(b, c->role);
	}
	put_locator_keys(b, &first, &c->loc);
	key(b, &first, "state");
	ksr_yaml_quote(b, c->state);
	ksr_strbuf_add(b, "}");
}

/* TEXT_CHECK: {name?, role?, equals | contains | matches}. */
static void put_text_check(ksr_strbuf *b, const ksr_check *c)
{
	bool first = true;
	ksr_strbuf_add(b, "{");
	if (c->name.text) {
		key(b, &first, "name");
		put_name(b, &c->name);
	}
	if (c->role) {
		key(b, &first, "role");
		ksr_yaml_quote(b, c->role);
	}
	put_locator_keys(b, &first, &c->loc);
	switch (c->text_op) {
	case KSR_TEXT_EQUALS:
		key(b, &first, "equals");
		ksr_yaml_quote(b, c->text);
		break;
	case KSR_TEXT_CONTAINS:
		key(b, &first, "contains");
		ksr_yaml_quote(b, c->text);
		break;
	case KSR_TEXT_MATCHES:
		key(b, &first, "matches");
		put_pattern(b, c->re);
		break;
	}
	ksr_strbuf_add(b, "}");
}

/* PAGE: {selector, text?, url?, title?}. */
static void put_page(ksr_strbuf *b, const ksr_check *c)
{
	ksr_strbuf_add(b, "{selector: ");
	ksr_yaml_quote(b, c->selector);
	if (c->page_text) {
		ksr_strbuf_add(b, ", text: ");
		ksr_yaml_quote(b, c->page_text);
	}
	if (c->url) {
		ksr_strbuf_add(b, ", url: ");
		put_pattern(b, c->url);
	}
	if (c->title) {
		ksr_strbuf_add(b, ", title: ");
		put_pattern(b, c->title);
	}
	ksr_strbuf_add(b, "}");
}

/* false: the shape is not a check's. */
static bool check_value(ksr_strbuf *b, const ksr_check *c)
{
	switch (c->info->shape) {
	case KSR_SHAPE_PATTERN:
		put_pattern(b, c->re);
		return true;
	case KSR_SHAPE_TEXT:
	case KSR_SHAPE_COMMAND:
	case KSR_SHAPE_DESCRIPTION:
		ksr_yaml_quote(b, c->text);
		return true;
	case KSR_SHAPE_NAME:
		put_element(b, &c->name, c->role, &c->loc, false);
		return true;
	case KSR_SHAPE_STATE:
		put_state(b, c);
		return true;
	case KSR_SHAPE_TEXT_CHECK:
		put_text_check(b, c);
		return true;
	case KSR_SHAPE_PAGE:
		put_page(b, c);
		return true;
	case KSR_SHAPE_CHORDS: /* steps only */
	case KSR_SHAPE_POINT:
	case KSR_SHAPE_SCROLL:
	case KSR_SHAPE_URL:
	case KSR_SHAPE_SELECTOR:
	case KSR_SHAPE_SELECTOR_TEXT:
	case KSR_SHAPE_JS:
	case KSR_SHAPE_SECONDS:
	case KSR_SHAPE_SPAWN:
	case KSR_SHAPE_IDENT:
	case KSR_SHAPE_HOVER:
	case KSR_SHAPE_DRAG:
		return false;
	}
	return false;
}

char *ksr_check_value_yaml(const ksr_check *c)
{
	ksr_strbuf b = {0};
	if (check_value(&b, c))
		return ksr_strbuf_take(&b);
	ksr_strbuf_free(&b);
	return NULL;
}

/* `kind: VALUE[, timeout_s: N]`, in braces when braces or a timeout ask. */
static bool put_check(ksr_strbuf *b, const ksr_check *c, bool braces)
{
	char *v = ksr_check_value_yaml(c);
	if (!v)
		return false;
	braces = braces || c->timeout_s != CHECK_TIMEOUT_DEFAULT_S;
	ksr_strbuf_addf(b, "%s%s: %s", braces ? "{" : "", c->info->name, v);
	if (c->timeout_s != CHECK_TIMEOUT_DEFAULT_S) {
		ksr_strbuf_add(b, ", timeout_s: ");
		put_number(b, c->timeout_s);
	}
	ksr_strbuf_add(b, braces ? "}" : "");
	free(v);
	return true;
}

char *ksr_check_yaml(const ksr_check *c)
{
	ksr_strbuf b = {0};
	if (put_check(&b, c, false))
		return ksr_strbuf_take(&b);
	ksr_strbuf_free(&b);
	return NULL;
}

/* ---- a step's modifiers ------------------------------------------------------------- */

typedef struct line_list {
	char **items;
	size_t n;
} line_list;

static void add_line(line_list *l, ksr_strbuf *b)
{
	l->items = ksr_xrealloc(l->items, (l->n + 1) * sizeof *l->items);
	l->items[l->n++] = ksr_strbuf_take(b);
}

static void put_check_list(ksr_strbuf *b, const ksr_check *items, size_t from, size_t n)
{
	ksr_strbuf_add(b, "[");
	for (size_t i = from; i < n; i++) {
		if (i > from)
			ksr_strbuf_add(b, ", ");
		put_check(b, &items[i], true);
	}
	ksr_strbuf_add(b, "]");
}

static const char *declared_window(const ksr_point *p)
{
	return p->kind == KSR_POINT_DECLARED && p->declared->window
	               ? ksr_pattern_source(p->declared->window)
	               : NULL;
}

/* The window a declared point brings along is not written again (the loader
 * gives it to the step); scroll's target: is its point when it has one. */
static void put_target(line_list *l, const ksr_step *st)
{
	ksr_strbuf b = {0};
	if (st->info->shape == KSR_SHAPE_SCROLL && st->point.kind != KSR_POINT_CENTER) {
		ksr_strbuf_add(&b, "target: ");
		put_point(&b, &st->point);
		add_line(l, &b);
		return;
	}
	if (!st->target_window)
		return;
	const char *src = ksr_pattern_source(st->target_window);
	const char *inherited = declared_window(&st->point);
	if (!inherited)
		inherited = declared_window(&st->drag_to);
	if (inherited && !strcmp(inherited, src))
		return;
	ksr_strbuf_add(&b, "target: {window: ");
	ksr_yaml_quote(&b, src);
	ksr_strbuf_add(&b, "}");
	add_line(l, &b);
}

static void put_string_entry(line_list *l, const char *k, const char *v)
{
	ksr_strbuf b = {0};
	ksr_strbuf_addf(&b, "%s: ", k);
	ksr_yaml_quote(&b, v);
	add_line(l, &b);
}

static void put_raw_entry(line_list *l, const char *text)
{
	ksr_strbuf b = {0};
	ksr_strbuf_add(&b, text);
	add_line(l, &b);
}

static void put_number_entry(line_list *l, const char *k, double v)
{
	ksr_strbuf b = {0};
	ksr_strbuf_addf(&b, "%s: ", k);
	put_number(&b, v);
	add_line(l, &b);
}

/* expect: became a screen check, the first of checks: (loader_steps.c);
 * writing expect: again brings it back. */
static size_t expect_check(const ksr_step *st)
{
	const ksr_check *c = st->n_checks ? &st->checks[0] : NULL;
	return st->expect && c && c->info->shape == KSR_SHAPE_DESCRIPTION && c->text &&
	       !strcmp(c->text, st->expect);
}

static void put_modifiers(line_list *l, const ksr_step *st)
{
	ksr_strbuf b = {0};
	put_target(l, st);
	/* hover's is in its mapping, and so is an element's written as one */
	bool role_in_value = st->info->shape == KSR_SHAPE_HOVER ||
	                     (st->info->shape == KSR_SHAPE_NAME &&
	                      !element_is_name(&st->name, st->role, &st->loc, true));
	if (st->role && !role_in_value)
		put_string_entry(l, "role", st->role);
	if (st->expect)
		put_string_entry(l, "expect", st->expect);
	size_t from = expect_check(st);
	if (st->n_checks > from) {
		ksr_strbuf_add(&b, "checks: ");
		put_check_list(&b, st->checks, from, st->n_checks);
		add_line(l, &b);
	}
	if (st->timeout_s > 0)
		put_number_entry(l, "timeout_s", st->timeout_s);
	if (st->wait_state)
		put_string_entry(l, "state", st->wait_state);
	if (st->hidden_ok)
		put_raw_entry(l, "hidden_ok: true");
	if (st->no_effect_ok)
		put_raw_entry(l, "expect_effect: false");
	if (st->tool)
		put_string_entry(l, "tool", st->tool);
	if (st->ready_quiet_set)
		put_number_entry(l, "ready_quiet_ms", st->ready_quiet_ms);
	if (st->n_post) {
		ksr_strbuf_add(&b, "post: ");
		put_check_list(&b, st->post, 0, st->n_post);
		add_line(l, &b);
	}
}

char **ksr_step_yaml(const ksr_step *st, size_t *n)
{
	line_list l = {0};
	ksr_strbuf b = {0};
	char *v = ksr_step_value_yaml(st);
	ksr_strbuf_addf(&b, "%s: %s", st->info->name, v ? v : "null");
	free(v);
	add_line(&l, &b);
	put_modifiers(&l, st);
	*n = l.n;
	return l.items;
}

void ksr_yaml_lines_free(char **lines, size_t n)
{
	for (size_t i = 0; lines && i < n; i++)
		free(lines[i]);
	free(lines);
}
