/* Checks (docs/scenario.md): one vocabulary for checks:, post:, success: and
 * blockers:. The kinds and their value shapes come from the check table in
 * src/run/ladder.c, never from a list here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/scn_internal.h"

void scn_check_init(ksr_check *ck, const ksr_check_info *info, const snode *at)
{
	memset(ck, 0, sizeof *ck);
	ck->info = info;
	ck->timeout_s = 5;
	if (at) {
		ck->pos.line = at->line;
		ck->pos.col = at->col;
	}
}

void scn_check_clear(ksr_check *ck)
{
	if (!ck)
		return;
	ksr_pattern_free(ck->re);
	free(ck->text);
	ksr_name_match_clear(&ck->name);
	free(ck->role);
	free(ck->state);
	free(ck->selector);
	free(ck->page_text);
	ksr_pattern_free(ck->url);
	ksr_pattern_free(ck->title);
	scn_locator_clear(&ck->loc);
	memset(ck, 0, sizeof *ck);
}

/* ---- locators ---- */

void scn_locator_clear(ksr_locator *loc)
{
	if (!loc)
		return;
	ksr_name_match_clear(&loc->label);
	ksr_name_match_clear(&loc->in_name);
	free(loc->in_role);
	memset(loc, 0, sizeof *loc);
}

bool scn_locator_finds(const ksr_name_match *name, const char *role, const ksr_locator *loc)
{
	return (name && name->text) || role || loc->label.text || loc->in;
}

/* in: "NAME" (exact or /regex/) or {name?, role?}: an ancestor of the control. */
static bool in_parse(scn_ctx *c, const snode *v, const char *what, ksr_locator *out)
{
	char label[64];
	snprintf(label, sizeof label, "%s in", what);
	out->in = true;
	if (v->kind == SN_SCALAR)
		return scn_name(c, v, label, &out->in_name);
	if (!scn_is_map(c, v, label))
		return false;
	bool ok = scn_check_keys(c, v, scn_keys_in, label) == 0;
	const snode *name = scn_get(v, "name"), *role = scn_get(v, "role");
	if (!name && !role) {
		scn_err(c, v, "%s: needs name: or role: (the ancestor the control is inside)",
		        label);
		return false;
	}
	if (name)
		ok = scn_name(c, name, label, &out->in_name) && ok;
	if (role)
		ok = scn_role(c, role, label, &out->in_role) && ok;
	return ok;
}

bool scn_locator_keys(scn_ctx *c, const snode *n, const char *what, ksr_locator *out)
{
	const snode *label = scn_get(n, "label"), *in = scn_get(n, "in"), *nth = scn_get(n, "nth");
	bool ok = true;
	if (label) {
		char w[64];
		snprintf(w, sizeof w, "%s label", what);
		ok = scn_name(c, label, w, &out->label) && ok;
	}
	if (in)
		ok = in_parse(c, in, what, out) && ok;
	if (nth) {
		char w[64];
		snprintf(w, sizeof w, "%s nth", what);
		ok = scn_int(c, nth, w, 1, 10000, &out->nth) && ok;
	}
	return ok;
}

/* A locator mapping must name something to look for; nth alone counts everything. */
static bool locator_finds(scn_ctx *c, const snode *n, const char *what, const ksr_name_match *name,
                          const char *role, const ksr_locator *loc)
{
	if (scn_locator_finds(name, role, loc))
		return true;
	scn_err(c, n, "%s: needs name:, label:, in: or role: (what finds the control)", what);
	return false;
}

bool scn_element_parse(scn_ctx *c, const snode *n, const char *what, ksr_name_match *name,
                       char **role, ksr_locator *loc)
{
	if (n->kind == SN_SCALAR)
		return scn_name(c, n, what, name);
	if (n->bad)
		return false;
	if (n->kind != SN_MAP) {
		scn_err(c, n, "%s: expected a name or {name?, role?, label?, in?, nth?}, got %s",
		        what, scn_kind_word(n));
		return false;
	}
	bool ok = scn_check_keys(c, n, scn_keys_locator, what) == 0;
	const snode *nm = scn_get(n, "name"), *rl = scn_get(n, "role");
	if (nm)
		ok = scn_name(c, nm, what, name) && ok;
	if (rl)
		ok = scn_role(c, rl, what, role) && ok;
	ok = scn_locator_keys(c, n, what, loc) && ok;
	return ok && locator_finds(c, n, what, name, *role, loc);
}

/* The check kinds plus timeout_s, NULL-terminated; the caller frees the array. */
static const char **check_keys(size_t *n_out)
{
	size_t n;
	const ksr_check_info *rows = ksr_check_kinds(&n);
	const char **keys = ksr_xcalloc(n + 2, sizeof *keys);
	for (size_t i = 0; i < n; i++)
		keys[i] = rows[i].name;
	keys[n] = "timeout_s";
	*n_out = n + 1;
	return keys;
}

/* "NAME STATE": the state is the last word, as accessibility names hold spaces. */
static bool state_string(scn_ctx *c, const snode *n, const char *what, ksr_check *out)
{
	char *s;
	if (!scn_str(c, n, what, true, &s))
		return false;
	size_t len = strlen(s);
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		s[--len] = 0;
	char *sp = strrchr(s, ' '), *tab = strrchr(s, '\t');
	if (tab > sp)
		sp = tab;
	if (!sp || sp == s) {
		scn_err(c, n, "%s: expected \"NAME STATE\" (the state is the last word), got '%s'",
		        what, s);
		free(s);
		return false;
	}
	out->state = ksr_xstrdup(sp + 1);
	if (!scn_state_word(c, n, what, out->state)) {
		free(s);
		return false;
	}
	while (sp > s && (sp[-1] == ' ' || sp[-1] == '\t'))
		sp--;
	*sp = 0;
	ksr_err err = {0};
	bool ok = ksr_name_match_parse(&out->name, s, &err) == 0;
	if (!ok)
		scn_err(c, n, "%s: invalid pattern '%s': %s", what, s, err.msg);
	free(s);
	return ok;
}

bool scn_state_parse(scn_ctx *c, const snode *n, const char *what, ksr_check *out)
{
	if (n->kind == SN_SCALAR)
		return state_string(c, n, what, out);
	if (!n->bad && n->kind != SN_MAP) {
		scn_err(c, n, "%s: expected \"NAME STATE\" or {name, role, state}, got %s", what,
		        scn_kind_word(n));
		return false;
	}
	if (n->bad)
		return false;
	bool ok = scn_check_keys(c, n, scn_keys_state, what) == 0;
	const snode *name = scn_get(n, "name"), *role = scn_get(n, "role"),
	            *state = scn_get(n, "state");
	if (!state) {
		scn_err(c, n, "%s: needs state: (and name:, label:, in: or role:)", what);
		return false;
	}
	if (name)
		ok = scn_name(c, name, what, &out->name) && ok;
	if (scn_str(c, state, what, true, &out->state))
		ok = scn_state_word(c, state, what, out->state) && ok;
	else
		ok = false;
	if (role)
		ok = scn_role(c, role, what, &out->role) && ok;
	ok = scn_locator_keys(c, n, what, &out->loc) && ok;
	return ok && locator_finds(c, n, what, &out->name, out->role, &out->loc);
}

static bool page_parse(scn_ctx *c, const snode *n, ksr_check *out)
{
	if (!scn_is_map(c, n, "page"))
		return false;
	bool ok = scn_check_keys(c, n, scn_keys_page, "page") == 0;
	const snode *sel = scn_get(n, "selector"), *text = scn_get(n, "text"),
	            *url = scn_get(n, "url"), *title = scn_get(n, "title");
	if (!sel) {
		scn_err(c, n, "page: needs selector:");
		return false;
	}
	ok = scn_page_ref(c, sel, "page selector", &out->selector) && ok;
	if (text)
		ok = scn_str(c, text, "page text", false, &out->page_text) && ok;
	if (url)
		ok = scn_pattern(c, url, "page url", &out->url) && ok;
	if (title)
		ok = scn_pattern(c, title, "page title", &out->title) && ok;
	return ok;
}

/* text: {name?, role?, equals | contains | matches}. */
static bool text_parse(scn_ctx *c, const snode *n, ksr_check *out)
{
	if (!scn_is_map(c, n, "text"))
		return false;
	bool ok = scn_check_keys(c, n, scn_keys_text, "text") == 0;
	const snode *name = scn_get(n, "name"), *role = scn_get(n, "role");
	static const char *const ops[] = {"equals", "contains", "matches"};
	const snode *op = NULL;
	for (int i = 0; i < 3; i++) {
		const snode *v = scn_get(n, ops[i]);
		if (v && op) {
			scn_err(c, v, "text: one of equals:, contains: or matches:, not two");
			return false;
		}
		if (v) {
			op = v;
			out->text_op = i == 0   ? KSR_TEXT_EQUALS
			               : i == 1 ? KSR_TEXT_CONTAINS
			                        : KSR_TEXT_MATCHES;
		}
	}
	if (!op) {
		scn_err(c, n, "text: needs equals:, contains: or matches:");
		return false;
	}
	if (name)
		ok = scn_name(c, name, "text", &out->name) && ok;
	if (role)
		ok = scn_role(c, role, "text", &out->role) && ok;
	ok = scn_locator_keys(c, n, "text", &out->loc) && ok;
	if (out->text_op == KSR_TEXT_MATCHES)
		return scn_pattern(c, op, "text matches", &out->re) && ok;
	return scn_str(c, op, "text", false, &out->text) && ok;
}

static bool check_value(scn_ctx *c, const snode *v, ksr_check *ck)
{
	const char *what = ck->info->name;
	switch (ck->info->shape) {
	case KSR_SHAPE_PATTERN:
		return scn_pattern(c, v, what, &ck->re);
	case KSR_SHAPE_TEXT:
	case KSR_SHAPE_COMMAND:
	case KSR_SHAPE_DESCRIPTION:
		return scn_str(c, v, what, true, &ck->text);
	case KSR_SHAPE_NAME:
		return scn_element_parse(c, v, what, &ck->name, &ck->role, &ck->loc);
	case KSR_SHAPE_STATE:
		return scn_state_parse(c, v, what, ck);
	case KSR_SHAPE_TEXT_CHECK:
		return text_parse(c, v, ck);
	case KSR_SHAPE_PAGE:
		if (c->s)
			c->s->cdp = true;
		return page_parse(c, v, ck);
	default:
		scn_err(c, v, "%s: this check's value shape is not supported by the loader", what);
		return false;
	}
}

static void no_kind(scn_ctx *c, const snode *n)
{
	size_t nrows;
	const ksr_check_info *rows = ksr_check_kinds(&nrows);
	char list[256] = "";
	for (size_t i = 0; i < nrows; i++) {
		strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
		strncat(list, rows[i].name, sizeof list - strlen(list) - 1);
	}
	scn_err(c, n, "a check needs one of: %s", list);
}

bool scn_check_parse(scn_ctx *c, const snode *n, ksr_check *out)
{
	scn_check_init(out, NULL, n);
	if (!scn_is_map(c, n, "check"))
		return false;
	size_t nkeys;
	const char **keys = check_keys(&nkeys);
	bool ok = scn_check_keys(c, n, keys, "a check") == 0;
	free(keys);
	const snode *value = NULL;
	for (size_t i = 0; i < n->n; i++) {
		const snode *k = sn_key(n, i);
		const ksr_check_info *info = k->bad ? NULL : ksr_check_kind_find(k->str);
		if (!k->bad && !strcmp(k->str, "timeout_s")) {
			ok = scn_num(c, sn_val(n, i), "timeout_s", 0, 86400, &out->timeout_s) && ok;
		} else if (info && out->info) {
			scn_err(c, k,
			        "a check has one kind, but this one has '%s' and '%s' "
			        "(write two checks)",
			        out->info->name, k->str);
			ok = false;
		} else if (info) {
			out->info = info;
			value = sn_val(n, i);
		}
	}
	if (!out->info) {
		if (ok)
			no_kind(c, n);
		return false;
	}
	return check_value(c, value, out) && ok;
}

bool scn_check_list(scn_ctx *c, const snode *n, const char *what, ksr_check **items, size_t *len)
{
	*items = NULL;
	*len = 0;
	if (!scn_is_seq(c, n, what))
		return false;
	bool ok = true;
	*items = ksr_xcalloc(n->n ? n->n : 1, sizeof **items);
	for (size_t i = 0; i < n->n; i++) {
		ok = scn_check_parse(c, n->kids[i], &(*items)[i]) && ok;
		*len = i + 1;
	}
	return ok;
}
