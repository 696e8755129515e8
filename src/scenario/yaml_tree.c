/* libyaml events -> a small tree that keeps every node's line:column. Anchors
 * and aliases are rejected outright: a scenario never needs them, and refusing
 * them is the simplest complete defence against alias bombs ("billion
 * laughs"). Duplicate keys are reported here, once for every mapping. */
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "scenario/scn_internal.h"

typedef struct tb {
	yaml_parser_t p;
	ksr_errlist *errs;
	const char *text;
	size_t len, nodes;
	size_t expand_budget; /* bytes the scalars may still take after ${VAR} */
	bool fatal;
} tb;

static void pos_from_offset(const tb *b, size_t off, int *line, int *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off && i < b->len; i++) {
		if (b->text[i] == '\n')
			(*line)++, *col = 1;
		else if (((unsigned char)b->text[i] & 0xC0) != 0x80)
			(*col)++;
	}
}

/* A syntax error points where the broken construct starts (the opening quote
 * or bracket: libyaml's context mark) and says where the problem showed. */
static void syntax_error(tb *b)
{
	yaml_parser_t *p = &b->p;
	b->fatal = true;
	const char *problem = p->problem ? p->problem : "invalid YAML";
	if (p->error == YAML_READER_ERROR) {
		int line, col;
		pos_from_offset(b, p->problem_offset, &line, &col);
		ksr_errlist_add(b->errs, line, col, "YAML syntax error: %s", problem);
	} else if (p->context) {
		ksr_errlist_add(
		        b->errs, (int)p->context_mark.line + 1, (int)p->context_mark.column + 1,
		        "YAML syntax error: %s: %s (at line %d, column %d)", p->context, problem,
		        (int)p->problem_mark.line + 1, (int)p->problem_mark.column + 1);
	} else {
		ksr_errlist_add(b->errs, (int)p->problem_mark.line + 1,
		                (int)p->problem_mark.column + 1, "YAML syntax error: %s", problem);
	}
}

static bool next(tb *b, yaml_event_t *ev)
{
	if (yaml_parser_parse(&b->p, ev))
		return true;
	syntax_error(b);
	return false;
}

static snode *new_node(tb *b, sn_kind kind, const yaml_mark_t *m)
{
	if (++b->nodes > SCN_MAX_NODES) {
		if (!b->fatal)
			ksr_errlist_add(b->errs, (int)m->line + 1, (int)m->column + 1,
			                "too many YAML nodes (the limit is %d)", SCN_MAX_NODES);
		b->fatal = true;
		return NULL;
	}
	snode *n = ksr_xcalloc(1, sizeof *n);
	n->kind = kind;
	n->line = (int)m->line + 1;
	n->col = (int)m->column + 1;
	return n;
}

static void add_kid(snode *n, snode *kid, size_t *cap)
{
	size_t used = n->kind == SN_MAP ? 2 * n->n : n->n;
	if (used + 2 > *cap) {
		*cap = *cap ? *cap * 2 : 8;
		n->kids = ksr_xrealloc(n->kids, *cap * sizeof *n->kids);
	}
	n->kids[used] = kid;
}

static bool is_null_plain(const char *s)
{
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
	       !strcmp(s, "NULL");
}

static snode *scalar(tb *b, yaml_event_t *ev, bool is_key)
{
	snode *n = new_node(b, SN_SCALAR, &ev->start_mark);
	if (!n)
		return NULL;
	const char *raw = (const char *)ev->data.scalar.value;
	n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !ev->data.scalar.tag;
	if (n->plain && is_null_plain(raw))
		n->kind = SN_NULL;
	if (strlen(raw) != ev->data.scalar.length) {
		/* "\0" in double quotes: C strings would silently cut the value there. */
		ksr_errlist_add(b->errs, n->line, n->col,
		                "a NUL character (\\0) in a %s is not allowed: the text after it "
		                "would be lost",
		                is_key ? "key" : "value");
		n->str = ksr_xstrdup(raw);
		n->bad = true;
		return n;
	}
	if (is_key) {
		n->str = ksr_xstrdup(raw);
		return n;
	}
	ksr_err err = {0};
	bool over = false;
	n->str = scn_expand_vars(raw, &b->expand_budget, &over, &err);
	if (!n->str) {
		ksr_errlist_add(b->errs, n->line, n->col, "%s", err.msg);
		n->str = ksr_xstrdup(raw);
		n->bad = true;
		b->fatal |= over; /* one message, not one for every later use */
	}
	return n;
}

static snode *node(tb *b, yaml_event_t *ev, int depth, bool is_key);

static void collection(tb *b, snode *n, yaml_event_type_t end, int depth)
{
	size_t cap = 0;
	bool map = n->kind == SN_MAP;
	for (;;) {
		yaml_event_t ev;
		if (!next(b, &ev))
			return;
		if (ev.type == end) {
			yaml_event_delete(&ev);
			return;
		}
		snode *k = node(b, &ev, depth + 1, map);
		yaml_event_delete(&ev);
		if (b->fatal) {
			scn_tree_free(k);
			return;
		}
		snode *v = NULL;
		if (map) {
			if (!next(b, &ev)) {
				scn_tree_free(k);
				return;
			}
			v = node(b, &ev, depth + 1, false);
			yaml_event_delete(&ev);
			if (b->fatal) {
				scn_tree_free(k);
				scn_tree_free(v);
				return;
			}
		}
		add_kid(n, k, &cap);
		if (map)
			n->kids[2 * n->n + 1] = v;
		n->n++;
	}
}

static int key_cmp(const void *a, const void *b)
{
	const snode *const *x = a, *const *y = b;
	int c = strcmp((*x)->str, (*y)->str);
	if (c)
		return c;
	return (*x)->line != (*y)->line ? (*x)->line - (*y)->line : (*x)->col - (*y)->col;
}

/* Sorting keeps this O(n log n) even for a mapping with thousands of keys. */
static void check_duplicates(tb *b, snode *m)
{
	if (m->n < 2)
		return;
	snode **keys = ksr_xmalloc(m->n * sizeof *keys);
	for (size_t i = 0; i < m->n; i++)
		keys[i] = sn_key(m, i);
	qsort(keys, m->n, sizeof *keys, key_cmp);
	for (size_t i = 1, first = 0; i < m->n; i++) {
		if (strcmp(keys[i]->str, keys[first]->str) != 0) {
			first = i;
			continue;
		}
		ksr_errlist_add(b->errs, keys[i]->line, keys[i]->col,
		                "duplicate key '%s' (first at line %d)", keys[i]->str,
		                keys[first]->line);
		keys[i]->bad = true;
	}
	free(keys);
}

static snode *bad_key(tb *b, snode *k)
{
	ksr_errlist_add(b->errs, k->line, k->col, "a mapping key must be a plain string");
	snode *n = ksr_xcalloc(1, sizeof *n);
	n->kind = SN_SCALAR;
	n->line = k->line;
	n->col = k->col;
	scn_tree_free(k);
	n->str = ksr_xstrdup("");
	n->bad = true;
	return n;
}

static snode *node(tb *b, yaml_event_t *ev, int depth, bool is_key)
{
	if (depth > SCN_MAX_DEPTH) {
		ksr_errlist_add(
		        b->errs, (int)ev->start_mark.line + 1, (int)ev->start_mark.column + 1,
		        "the YAML is nested too deeply (the limit is %d levels)", SCN_MAX_DEPTH);
		b->fatal = true;
		return NULL;
	}
	const yaml_char_t *anchor = NULL;
	snode *n = NULL;
	switch (ev->type) {
	case YAML_ALIAS_EVENT:
		ksr_errlist_add(b->errs, (int)ev->start_mark.line + 1,
		                (int)ev->start_mark.column + 1,
		                "YAML aliases (*%s) are not supported in a scenario",
		                (const char *)ev->data.alias.anchor);
		n = new_node(b, SN_NULL, &ev->start_mark);
		if (n)
			n->bad = true, n->str = ksr_xstrdup("");
		return n;
	case YAML_SCALAR_EVENT:
		anchor = ev->data.scalar.anchor;
		n = scalar(b, ev, is_key);
		break;
	case YAML_SEQUENCE_START_EVENT:
		anchor = ev->data.sequence_start.anchor;
		n = new_node(b, SN_SEQ, &ev->start_mark);
		if (n)
			collection(b, n, YAML_SEQUENCE_END_EVENT, depth);
		break;
	case YAML_MAPPING_START_EVENT:
		anchor = ev->data.mapping_start.anchor;
		n = new_node(b, SN_MAP, &ev->start_mark);
		if (n) {
			collection(b, n, YAML_MAPPING_END_EVENT, depth);
			if (!b->fatal)
				check_duplicates(b, n);
		}
		break;
	default:
		b->fatal = true;
		ksr_errlist_add(b->errs, (int)ev->start_mark.line + 1,
		                (int)ev->start_mark.column + 1, "unexpected YAML event");
		return NULL;
	}
	if (anchor && n)
		ksr_errlist_add(b->errs, n->line, n->col,
		                "YAML anchors (&%s) are not supported in a scenario",
		                (const char *)anchor);
	if (n && is_key && n->kind != SN_SCALAR && !(n->kind == SN_NULL && n->str))
		n = bad_key(b, n);
	return n;
}

/* Expects STREAM_START DOCUMENT_START node DOCUMENT_END STREAM_END. */
static snode *document(tb *b)
{
	yaml_event_t ev;
	snode *root = NULL;
	for (int i = 0; i < 2; i++) {
		if (!next(b, &ev))
			return NULL;
		yaml_event_type_t t = ev.type;
		yaml_event_delete(&ev);
		if (t == YAML_STREAM_END_EVENT) {
			ksr_errlist_add(b->errs, 1, 1, "the scenario is empty");
			return NULL;
		}
	}
	if (!next(b, &ev))
		return NULL;
	root = node(b, &ev, 0, false);
	yaml_event_delete(&ev);
	if (b->fatal || !next(b, &ev)) /* DOCUMENT_END */
		return scn_tree_free(root), NULL;
	yaml_event_delete(&ev);
	if (!next(b, &ev))
		return scn_tree_free(root), NULL;
	if (ev.type != YAML_STREAM_END_EVENT) {
		ksr_errlist_add(b->errs, (int)ev.start_mark.line + 1, (int)ev.start_mark.column + 1,
		                "a scenario file holds one YAML document, not several");
		b->fatal = true;
	}
	yaml_event_delete(&ev);
	if (b->fatal)
		return scn_tree_free(root), NULL;
	return root;
}

snode *scn_parse_yaml(const char *text, size_t len, ksr_errlist *errs)
{
	/* A UTF-8 byte order mark (some Windows editors write one) is not
	 * content; libyaml would read it as a stray character with the encoding
	 * fixed. The sha256 stays the file's (file_facts). */
	if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3))
		text += 3, len -= 3;
	tb b = {.errs = errs, .text = text, .len = len, .expand_budget = SCN_MAX_EXPANDED_BYTES};
	if (!yaml_parser_initialize(&b.p)) {
		ksr_errlist_add(errs, 0, 0, "cannot initialise the YAML parser");
		return NULL;
	}
	yaml_parser_set_input_string(&b.p, (const unsigned char *)text, len);
	yaml_parser_set_encoding(&b.p, YAML_UTF8_ENCODING);
	snode *root = document(&b);
	yaml_parser_delete(&b.p);
	return root;
}

void scn_tree_free(snode *n)
{
	if (!n)
		return;
	size_t kids = n->kind == SN_MAP ? 2 * n->n : n->kind == SN_SEQ ? n->n : 0;
	for (size_t i = 0; i < kids; i++)
		scn_tree_free(n->kids[i]);
	free(n->kids);
	free(n->str);
	free(n);
}
