/* The text: check (docs/scenario.md#checks): a control's text (AT-SPI Text)
 * or value (Value: spin buttons, sliders, progress bars) compared with
 * equals / contains / matches. ksr_run_check polls it up to timeout_s; a
 * failure says what the text was. */
#include "run/actions/exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/atspi.h"
#include "run/actions/exec_atspi.h"

#define TEXT_WALK_MS 3000
#define SHOWN_MAX    200 /* characters of a text quoted in a reason */

/* Something to read: text, a value, or a label's name (Qt's labels). */
static bool has_text(const ksr_atspi_node *n)
{
	if (n->ifaces & (KSR_ATSPI_IF_TEXT | KSR_ATSPI_IF_VALUE))
		return true;
	return n->name && *n->name && n->role &&
	       (ksr_atspi_role_equal("label", n->role) || ksr_atspi_role_equal("static", n->role));
}

static bool role_fits(const ksr_atspi_node *n, const char *role)
{
	return !role || ksr_atspi_role_equal(role, n->role) ||
	       ksr_atspi_role_equal(role, n->toolkit_role);
}

/* Without name: the focused control with text or a value, else the first
 * showing one (of role:, when given). */
static int unnamed(const ksr_atspi_tree *t, const char *role)
{
	int first = -1;
	int focused = ksr_atspi_state_index("focused");
	for (size_t i = 1; i < t->len; i++) {
		const ksr_atspi_node *n = &t->nodes[i];
		if (!has_text(n) || !role_fits(n, role) || !ksr_atspi_tree_showing(t, i))
			continue;
		if ((n->states >> focused) & 1)
			return (int)i;
		if (first < 0)
			first = (int)i;
	}
	return first;
}

/* The text quoted for a reason: newlines shown as \n, cut at SHOWN_MAX. */
static void shown(char *buf, size_t len, const char *s)
{
	size_t o = 0;
	for (size_t i = 0; s[i] && o + 8 < len && i < SHOWN_MAX; i++) {
		if (s[i] == '\n' || s[i] == '"' || s[i] == '\\') {
			buf[o++] = '\\';
			buf[o++] = s[i] == '\n' ? 'n' : s[i];
		} else {
			buf[o++] = s[i];
		}
	}
	buf[o] = '\0';
	if (strlen(s) > SHOWN_MAX && o + 4 < len)
		strcat(buf, "...");
}

static bool holds(const ksr_check *c, const char *text)
{
	switch (c->text_op) {
	case KSR_TEXT_EQUALS:
		return strcmp(text, c->text) == 0;
	case KSR_TEXT_CONTAINS:
		return strstr(text, c->text) != NULL;
	case KSR_TEXT_MATCHES:
		return ksr_pattern_match(c->re, text);
	}
	return false;
}

static void expected(const ksr_check *c, char *buf, size_t len)
{
	char v[SHOWN_MAX + 16];
	shown(v, sizeof v, c->text_op == KSR_TEXT_MATCHES ? ksr_pattern_source(c->re) : c->text);
	snprintf(buf, len, "%s \"%s\"",
	         c->text_op == KSR_TEXT_EQUALS     ? "to equal"
	         : c->text_op == KSR_TEXT_CONTAINS ? "to contain"
	                                           : "to match",
	         v);
}

static bool locator_given(const ksr_check *c)
{
	return c->name.text || c->loc.label.text || c->loc.in || c->loc.nth;
}

/* Which control: its index, or -1 with why set. Without a name, label:,
 * in: or nth: the focused control with text (or a value), else the first
 * showing one; with any of them the locator (docs/scenario.md#locators). */
static int pick(const ksr_check *c, const ksr_run_atspi *t, const ksr_atspi_tree *tree,
                ksr_deadline d, char *why, size_t len)
{
	if (!locator_given(c)) {
		int i = unnamed(tree, c->role);
		if (i < 0)
			snprintf(why, len,
			         "text: no showing control%s%s%s with text or a value in %s",
			         c->role ? " with role \"" : "", c->role ? c->role : "",
			         c->role ? "\"" : "", t->app.name ? t->app.name : "the app");
		return i;
	}
	ksr_atspi_locator loc = ksr_check_locator(c);
	ksr_atspi_located found;
	ksr_atspi_locate(t->a, &t->app, tree, &loc, d, &found);
	int i = found.index;
	if (i < 0) {
		ksr_run_atspi_not_found(t, tree, &loc, &found, "text", why, len);
		return -1;
	}
	if (!found.matches) {
		char *dn = ksr_atspi_name_display(tree->nodes[i].name);
		snprintf(why, len,
		         "text: the %s \"%s\" is not showing (hidden_ok: true on the step counts "
		         "hidden controls)",
		         tree->nodes[i].role ? tree->nodes[i].role : "control", dn ? dn : "");
		free(dn);
		return -1;
	}
	return i;
}

/* Read and compare: 1 held, 0 not (why: what the text was). */
static int judge(const ksr_check *c, ksr_run_atspi *t, const ksr_atspi_node *n, ksr_deadline d,
                 char *why, size_t len)
{
	char *text = NULL;
	const char *from = NULL;
	ksr_err e = {0};
	char *dn = ksr_atspi_name_display(n->name);
	const char *role = n->role ? n->role : "control";
	if (ksr_atspi_node_text(t->a, &t->app, n, d, &text, &from, &e) < 0) {
		snprintf(why, len, "text: %s \"%s\": %s", role, dn ? dn : "", e.msg);
		free(dn);
		return 0;
	}
	ksr_check_note("read", from);
	int r = holds(c, text);
	char have[SHOWN_MAX + 16], want[SHOWN_MAX + 32];
	shown(have, sizeof have, text);
	expected(c, want, sizeof want);
	if (r)
		snprintf(why, len, "the %s of %s \"%s\" is \"%s\"", from, role, dn ? dn : "", have);
	else
		snprintf(why, len, "the %s of %s \"%s\" is \"%s\" (expected %s)", from, role,
		         dn ? dn : "", have, want);
	free(text);
	free(dn);
	return r;
}

int ksr_check_text(ksr_run *run, const ksr_check *c, char *why, size_t len)
{
	ksr_run_atspi t = {0};
	ksr_atspi_tree tree = {0};
	ksr_err e = {0};
	int64_t ms = c->timeout_s > 0 && c->timeout_s * 1000 < TEXT_WALK_MS
	                     ? (int64_t)(c->timeout_s * 1000)
	                     : TEXT_WALK_MS;
	ksr_deadline d = ksr_deadline_min(run->work, ksr_deadline_in_ms(ms < 500 ? 500 : ms));
	if (ksr_run_atspi_open(run, d, &t, &e) < 0) {
		snprintf(why, len, "text: %s", e.msg);
		return t.no_bus ? -1 : 0;
	}
	int r = 0;
	if (ksr_run_atspi_walk(run, &t, 0, d, &tree, &e) < 0) {
		snprintf(why, len, "text: %s", e.msg);
		r = t.no_bus ? -1 : 0; /* a silent bus: the session's (backend-unavailable) */
	} else {
		int i = pick(c, &t, &tree, d, why, len);
		if (i >= 0)
			r = judge(c, &t, &tree.nodes[i], d, why, len);
	}
	ksr_atspi_tree_clear(&tree);
	ksr_run_atspi_release(&t);
	return r;
}
