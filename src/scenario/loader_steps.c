/* Steps (docs/scenario.md): a mapping with exactly one action key and some
 * modifiers. Action names, value shapes and the modifiers each action accepts
 * come from the ladder table (src/run/ladder.c); the modifier names are the
 * table below, which ksr_scenario_modifier_keys() also serves. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/cdp.h"
#include "ksr/keys.h"
#include "scenario/scn_internal.h"

enum {
	MK_TARGET,
	MK_ROLE,
	MK_EXPECT,
	MK_EXPECT_STATE,
	MK_CHECKS,
	MK_TIMEOUT,
	MK_STATE,
	MK_POST,
	MK_HIDDEN_OK,
	MK_READY_QUIET,
	MK_TOOL,
	MK_EXPECT_EFFECT,
	MK_COUNT
};

static const char *const modifier_keys[MK_COUNT + 1] = {
        [MK_TARGET] = "target",
        [MK_ROLE] = "role",
        [MK_EXPECT] = "expect",
        [MK_EXPECT_STATE] = "expect_state",
        [MK_CHECKS] = "checks",
        [MK_TIMEOUT] = "timeout_s",
        [MK_STATE] = "state",
        [MK_POST] = "post",
        [MK_HIDDEN_OK] = "hidden_ok",
        [MK_READY_QUIET] = "ready_quiet_ms",
        [MK_TOOL] = "tool",
        [MK_EXPECT_EFFECT] = "expect_effect",
        [MK_COUNT] = NULL,
};

/* post: has no bit: it belongs to every plan step and to no scripted one. */
static const uint32_t modifier_bits[MK_COUNT] = {
        [MK_TARGET] = KSR_MOD_TARGET,       [MK_ROLE] = KSR_MOD_ROLE,
        [MK_EXPECT] = KSR_MOD_EXPECT,       [MK_EXPECT_STATE] = KSR_MOD_EXPECT_STATE,
        [MK_CHECKS] = KSR_MOD_CHECKS,       [MK_TIMEOUT] = KSR_MOD_TIMEOUT,
        [MK_STATE] = KSR_MOD_STATE,         [MK_POST] = 0,
        [MK_HIDDEN_OK] = KSR_MOD_HIDDEN_OK, [MK_READY_QUIET] = KSR_MOD_READY,
        [MK_TOOL] = KSR_MOD_TOOL,           [MK_EXPECT_EFFECT] = KSR_MOD_EFFECT,
};

static const char *const wait_states[] = {"visible", "hidden", "attached", "detached", NULL};

const char *const *ksr_scenario_modifier_keys(void)
{
	return modifier_keys;
}

typedef struct step_keys {
	const snode *action_key, *value;
	const snode *mod[MK_COUNT], *mod_key[MK_COUNT];
	bool unknown;
} step_keys;

void scn_step_clear(ksr_step *st)
{
	if (!st)
		return;
	free(st->text);
	ksr_keys_free(st->chords);
	ksr_name_match_clear(&st->name);
	scn_locator_clear(&st->loc);
	ksr_pattern_free(st->re);
	free(st->fill_text);
	free(st->spawn.command);
	free(st->spawn.as);
	free(st->spawn.desktop_entry);
	free(st->tool);
	ksr_pattern_free(st->spawn.window);
	ksr_pattern_free(st->spawn.process);
	ksr_pattern_free(st->target_window);
	free(st->role);
	free(st->wait_state);
	free(st->expect);
	for (size_t i = 0; i < st->n_checks; i++)
		scn_check_clear(&st->checks[i]);
	free(st->checks);
	for (size_t i = 0; i < st->n_post; i++)
		scn_check_clear(&st->post[i]);
	free(st->post);
	memset(st, 0, sizeof *st);
}

static int modifier_index(const char *key)
{
	for (int i = 0; i < MK_COUNT; i++)
		if (!strcmp(modifier_keys[i], key))
			return i;
	return -1;
}

/* Action names then modifiers, for "did you mean"; the caller frees. */
static const char **step_words(size_t *n_out)
{
	size_t n;
	const ksr_step_info *rows = ksr_step_kinds(&n);
	const char **w = ksr_xcalloc(n + MK_COUNT + 1, sizeof *w);
	for (size_t i = 0; i < n; i++)
		w[i] = rows[i].name;
	for (size_t i = 0; i < MK_COUNT; i++)
		w[n + i] = modifier_keys[i];
	*n_out = n + MK_COUNT;
	return w;
}

static void action_list(char *buf, size_t len)
{
	size_t n;
	const ksr_step_info *rows = ksr_step_kinds(&n);
	buf[0] = 0;
	for (size_t i = 0; i < n; i++) {
		strncat(buf, i ? ", " : "", len - strlen(buf) - 1);
		strncat(buf, rows[i].name, len - strlen(buf) - 1);
	}
}

static void unknown_key(scn_ctx *c, const snode *k)
{
	size_t n;
	const char **words = step_words(&n);
	char hint[128];
	scn_err(c, k, "unknown key '%s' in a step%s", k->str,
	        scn_did_you_mean(hint, sizeof hint, k->str, words, n));
	free(words);
}

static bool classify(scn_ctx *c, const snode *n, ksr_step *st, step_keys *sk)
{
	bool ok = true;
	for (size_t i = 0; i < n->n; i++) {
		const snode *k = sn_key(n, i);
		const ksr_step_info *info = k->bad ? NULL : ksr_step_kind_find(k->str);
		int mk = k->bad ? -1 : modifier_index(k->str);
		if (k->bad) {
			ok = false;
		} else if (info && st->info) {
			scn_err(c, k,
			        "a step has one action key, but this one has '%s' and '%s' "
			        "(write two steps)",
			        st->info->name, k->str);
			ok = false;
		} else if (info) {
			st->info = info;
			sk->action_key = k;
			sk->value = sn_val(n, i);
		} else if (mk >= 0) {
			sk->mod[mk] = sn_val(n, i);
			sk->mod_key[mk] = k;
		} else {
			unknown_key(c, k);
			sk->unknown = true;
			ok = false;
		}
	}
	return ok;
}

static void modifiers_taken(const ksr_step_info *info, bool plan, bool desktop, char *buf,
                            size_t len)
{
	buf[0] = 0;
	for (int i = 0; i < MK_COUNT; i++) {
		if (i == MK_POST ? !plan : !(info->modifiers & modifier_bits[i]))
			continue;
		if (i == MK_TOOL && !desktop)
			continue; /* desktop mode's only */
		strncat(buf, *buf ? ", " : "", len - strlen(buf) - 1);
		strncat(buf, modifier_keys[i], len - strlen(buf) - 1);
	}
	if (!*buf)
		snprintf(buf, len, "none");
}

static bool modifiers_fit(scn_ctx *c, const ksr_step *st, const step_keys *sk, bool plan)
{
	bool ok = true;
	char taken[256];
	for (int i = 0; i < MK_COUNT; i++) {
		if (!sk->mod[i])
			continue;
		if (i == MK_POST && !plan) {
			scn_err(c, sk->mod_key[i],
			        "post: is only for plan: steps (use checks: here)");
			ok = false;
		} else if (i != MK_POST && !(st->info->modifiers & modifier_bits[i])) {
			modifiers_taken(st->info, plan, c->s->desktop, taken, sizeof taken);
			scn_err(c, sk->mod_key[i],
			        "modifier '%s' does not apply to %s (it takes: %s)",
			        modifier_keys[i], st->info->name, taken);
			ok = false;
		}
	}
	return ok;
}

/* ---- action values, by shape ---- */

static bool point_parse(scn_ctx *c, const snode *n, const char *what, ksr_point *pt)
{
	pt->kind = KSR_POINT_LITERAL;
	if (n->kind != SN_SCALAR || n->bad)
		return scn_fraction_pair(c, n, what, &pt->fx, &pt->fy);
	const char *s = n->str;
	if (!strcmp(s, "center")) {
		pt->kind = KSR_POINT_CENTER;
		pt->fx = pt->fy = 0.5;
		return true;
	}
	const ksr_target *t = ksr_scenario_find_target(c->s, s);
	if (t) {
		pt->kind = KSR_POINT_DECLARED;
		pt->fx = t->fx;
		pt->fy = t->fy;
		pt->declared = t;
		return true;
	}
	if (isdigit((unsigned char)*s) || strchr("+-.", *s))
		return scn_fraction_pair(c, n, what, &pt->fx, &pt->fy);
	const char **names = ksr_xcalloc(c->s->n_targets + 2, sizeof *names);
	names[0] = "center";
	for (size_t i = 0; i < c->s->n_targets; i++)
		names[i + 1] = c->s->targets[i].name;
	char hint[128];
	scn_err(c, n, "%s: undeclared target '%s' (declare it under targets:)%s", what, s,
	        scn_did_you_mean(hint, sizeof hint, s, names, c->s->n_targets + 1));
	free(names);
	return false;
}

static bool scroll_parse(scn_ctx *c, const snode *n, ksr_step *st)
{
	char *s;
	st->point.kind = KSR_POINT_CENTER; /* at the window centre unless target: says */
	st->point.fx = st->point.fy = 0.5;
	if (!scn_str(c, n, "scroll", true, &s))
		return false;
	char dir[8] = "", *end = NULL;
	long count = 0;
	size_t w = strcspn(s, " \t");
	if (w < sizeof dir) {
		memcpy(dir, s, w);
		dir[w] = 0;
		count = strtol(s + w, &end, 10);
	}
	bool ok = end && end != s + w && !end[strspn(end, " \t")] && count >= 1 && count <= 1000 &&
	          (!strcmp(dir, "up") || !strcmp(dir, "down"));
	if (!ok)
		scn_err(c, n, "scroll: expected 'up N' or 'down N' (N from 1 to 1000), got '%s'",
		        s);
	else
		st->scroll_dy = !strcmp(dir, "up") ? -(int)count : (int)count;
	free(s);
	return ok;
}

/* hover: a point form (as for click), {element: NAME, role?: ROLE} or
 * {selector: SEL} (a CSS selector or cdp_targets name; the scenario then
 * talks to a browser over CDP). */
static bool hover_parse(scn_ctx *c, const snode *n, ksr_step *st)
{
	if (n->kind != SN_MAP) {
		st->hover.via = KSR_HOVER_POINT;
		return point_parse(c, n, "hover", &st->point);
	}
	bool ok = scn_check_keys(c, n, scn_keys_hover, "hover") == 0;
	const snode *el = scn_get(n, "element"), *role = scn_get(n, "role"),
	            *sel = scn_get(n, "selector");
	if (!el == !sel) {
		scn_err(c, n,
		        "hover: needs element: (an accessibility name) or selector: (a page "
		        "element), not both");
		return false;
	}
	if (sel) {
		if (role) {
			scn_err(c, role, "hover: role: goes with element:, not selector:");
			return false;
		}
		st->hover.via = KSR_HOVER_PAGE;
		c->s->cdp = true;
		return scn_page_ref(c, sel, "hover", &st->text) && ok;
	}
	st->hover.via = KSR_HOVER_ELEMENT;
	ok = scn_name(c, el, "hover", &st->name) && ok;
	if (role)
		ok = scn_role(c, role, "hover", &st->role) && ok;
	return ok;
}

/* The window a declared point names: its own, else the app's (NULL). */
static const char *declared_window(const ksr_point *pt)
{
	return pt->declared && pt->declared->window ? ksr_pattern_source(pt->declared->window)
	                                            : NULL;
}

/* drag: {from: POINT, to: POINT}, each a point as click takes. A drag stays
 * in one window: two declared targets must name the same one, and the
 * press and the release may not be the same point (that is a click). */
static bool drag_parse(scn_ctx *c, const snode *n, ksr_step *st)
{
	if (!scn_is_map(c, n, "drag"))
		return false;
	bool ok = scn_check_keys(c, n, scn_keys_drag, "drag") == 0;
	const snode *from = scn_get(n, "from"), *to = scn_get(n, "to");
	if (!from || !to) {
		scn_err(c, n, "drag: needs from: and to: (each a point as click takes)");
		return false;
	}
	ok = point_parse(c, from, "drag from", &st->point) && ok;
	ok = point_parse(c, to, "drag to", &st->drag_to) && ok;
	if (!ok)
		return false;
	const char *wa = declared_window(&st->point), *wb = declared_window(&st->drag_to);
	if (st->point.declared && st->drag_to.declared && (!wa != !wb || (wa && strcmp(wa, wb)))) {
		scn_err(c, to,
		        "drag: '%s' is on window '%s' and '%s' on window '%s': a drag "
		        "stays in one window",
		        st->point.declared->name, wa ? wa : "(the app's)",
		        st->drag_to.declared->name, wb ? wb : "(the app's)");
		return false;
	}
	if (st->point.fx == st->drag_to.fx && st->point.fy == st->drag_to.fy) {
		scn_err(c, to, "drag: from: and to: are the same point (use click)");
		return false;
	}
	return true;
}

static bool selector_text(scn_ctx *c, const snode *n, ksr_step *st)
{
	const char *what = st->info->name;
	if (!scn_is_map(c, n, what))
		return false;
	bool ok = scn_check_keys(c, n, scn_keys_selector_text, what) == 0;
	const snode *sel = scn_get(n, "selector"), *text = scn_get(n, "text");
	if (!sel || !text) {
		scn_err(c, n, "%s: needs selector: and text:", what);
		return false;
	}
	ok = scn_page_ref(c, sel, what, &st->text) && ok;
	return scn_str(c, text, what, false, &st->fill_text) && ok;
}

static bool spawn_name(scn_ctx *c, const snode *as, ksr_step *st)
{
	if (!scn_str(c, as, "spawn as", true, &st->spawn.as))
		return false;
	for (size_t i = 0; i < c->n_spawn_as; i++) {
		if (!strcmp(c->spawn_as[i], st->spawn.as)) {
			scn_err(c, as, "spawn: the name '%s' is already used (line %d)",
			        st->spawn.as, c->spawn_line[i]);
			return false;
		}
	}
	c->spawn_as = ksr_xrealloc(c->spawn_as, (c->n_spawn_as + 1) * sizeof *c->spawn_as);
	c->spawn_line = ksr_xrealloc(c->spawn_line, (c->n_spawn_as + 1) * sizeof *c->spawn_line);
	c->spawn_as[c->n_spawn_as] = st->spawn.as;
	c->spawn_line[c->n_spawn_as++] = as->line;
	return true;
}

/* A desktop file ID as the Desktop Entry spec has it (org.gnome.Calculator,
 * mousepad.desktop; a subfolder's entry as kde-konsole): a name, never a path. */
static bool desktop_entry_id(scn_ctx *c, const snode *n, const char *id)
{
	if (!strchr(id, '/') && strcmp(id, ".") && strcmp(id, ".."))
		return true;
	scn_err(c, n,
	        "spawn: desktop_entry: '%s' is not a desktop file ID (a name such as "
	        "org.xfce.mousepad, found under applications/ in XDG_DATA_HOME and "
	        "XDG_DATA_DIRS; not a path)",
	        id);
	return false;
}

static bool spawn_parse(scn_ctx *c, const snode *n, ksr_step *st)
{
	if (!scn_is_map(c, n, "spawn"))
		return false;
	bool ok = scn_check_keys(c, n, scn_keys_spawn, "spawn") == 0;
	const snode *cmd = scn_get(n, "command"), *win = scn_get(n, "window"),
	            *proc = scn_get(n, "process"), *as = scn_get(n, "as"),
	            *entry = scn_get(n, "desktop_entry");
	if (cmd && entry) {
		scn_err(c, n, "spawn: command: or desktop_entry:, not both");
		return false;
	}
	if (entry) {
		/* The window and the process default from the entry (StartupWMClass,
		 * its Exec's program), read when the step runs. */
		ok = scn_str(c, entry, "spawn desktop_entry", true, &st->spawn.desktop_entry) &&
		     desktop_entry_id(c, entry, st->spawn.desktop_entry) && ok;
	} else if (!cmd || !win) {
		scn_err(c, n, "spawn: needs command: and window: (or desktop_entry:)");
		return false;
	} else {
		ok = scn_str(c, cmd, "spawn command", true, &st->spawn.command) && ok;
	}
	if (win)
		ok = scn_pattern(c, win, "spawn window", &st->spawn.window) && ok;
	if (proc)
		ok = scn_pattern(c, proc, "spawn process", &st->spawn.process) && ok;
	if (as)
		ok = spawn_name(c, as, st) && ok;
	return ok;
}

static bool kill_parse(scn_ctx *c, const snode *n, ksr_step *st)
{
	if (!scn_str(c, n, "kill", true, &st->text))
		return false;
	for (size_t i = 0; i < c->n_spawn_as; i++)
		if (!strcmp(c->spawn_as[i], st->text))
			return true;
	char hint[128];
	scn_err(c, n, "kill: '%s' names no earlier spawn step's as:%s", st->text,
	        scn_did_you_mean(hint, sizeof hint, st->text, (const char *const *)c->spawn_as,
	                         c->n_spawn_as));
	return false;
}

/* key: the X input backend's own parser (ksr/keys.h), once: the step keeps
 * the chords and the runner presses them as parsed; cdp_press: the page's
 * key names (DOM keys, ksr_cdp_chords_check). Either way a typo is the
 * scenario's at load time, not a run-time error. */
static bool chords_parse(scn_ctx *c, const snode *v, ksr_step *st)
{
	ksr_err err = {0};
	if (st->info->kind == KSR_KIND_CDP_PRESS) {
		if (ksr_cdp_chords_check(st->text, &err) == 0)
			return true;
		scn_err(c, v, "%s: %s", st->info->name, err.msg);
		return false;
	}
	if (ksr_keys_parse(st->text, &st->chords, &st->n_chords, &err) == 0)
		return true;
	scn_err(c, v, "key: %s", err.msg);
	return false;
}

static bool action_value(scn_ctx *c, const snode *v, ksr_step *st)
{
	const char *what = st->info->name;
	switch (st->info->shape) {
	case KSR_SHAPE_TEXT:
		return scn_str(c, v, what, false, &st->text);
	case KSR_SHAPE_CHORDS:
		return scn_str(c, v, what, true, &st->text) && chords_parse(c, v, st);
	case KSR_SHAPE_SELECTOR:
		return scn_page_ref(c, v, what, &st->text);
	case KSR_SHAPE_DESCRIPTION:
	case KSR_SHAPE_URL:
	case KSR_SHAPE_JS:
	case KSR_SHAPE_COMMAND:
		return scn_str(c, v, what, true, &st->text);
	case KSR_SHAPE_POINT:
		return point_parse(c, v, what, &st->point);
	case KSR_SHAPE_SCROLL:
		return scroll_parse(c, v, st);
	case KSR_SHAPE_HOVER:
		return hover_parse(c, v, st);
	case KSR_SHAPE_DRAG:
		return drag_parse(c, v, st);
	case KSR_SHAPE_NAME:
		return scn_element_parse(c, v, what, &st->name, &st->role, &st->loc);
	case KSR_SHAPE_PATTERN:
		return scn_pattern(c, v, what, &st->re);
	case KSR_SHAPE_SELECTOR_TEXT:
		return selector_text(c, v, st);
	case KSR_SHAPE_SECONDS:
		return scn_num(c, v, what, 0, 86400, &st->seconds);
	case KSR_SHAPE_SPAWN:
		return spawn_parse(c, v, st);
	case KSR_SHAPE_IDENT:
		return kill_parse(c, v, st);
	default:
		scn_err(c, v, "%s: this action's value shape is not supported by the loader", what);
		return false;
	}
}

/* ---- modifiers ---- */

/* `window "RE"`, `window RE` or {window: RE}. */
bool scn_target_window(scn_ctx *c, const snode *n, ksr_pattern **out)
{
	if (n->kind == SN_MAP) {
		const snode *w = scn_get(n, "window");
		bool ok = scn_check_keys(c, n, scn_keys_target, "target") == 0;
		if (!w) {
			scn_err(c, n, "target: needs window:");
			return false;
		}
		return scn_pattern(c, w, "target window", out) && ok;
	}
	if (n->bad || n->kind != SN_SCALAR || strncmp(n->str, "window", 6) ||
	    !isspace((unsigned char)n->str[6])) {
		if (!n->bad)
			scn_err(c, n, "target: expected window \"RE\" or {window: RE}, got %s",
			        n->kind == SN_SCALAR ? n->str : scn_kind_word(n));
		return false;
	}
	const char *re = n->str + 6 + strspn(n->str + 6, " \t");
	size_t len = strlen(re);
	while (len && isspace((unsigned char)re[len - 1]))
		len--;
	if (len >= 2 && (re[0] == '"' || re[0] == '\'') && re[len - 1] == re[0])
		re++, len -= 2;
	snode tmp = *n;
	tmp.str = ksr_xstrndup(re, len);
	bool ok = scn_pattern(c, &tmp, "target window", out);
	free(tmp.str);
	return ok;
}

static bool target_modifier(scn_ctx *c, const snode *v, const snode *k, ksr_step *st)
{
	bool window_form =
	        v->kind == SN_MAP || (v->kind == SN_SCALAR && !strncmp(v->str, "window", 6));
	/* scroll has no point of its own: its target may also be a point. */
	if (st->info->shape == KSR_SHAPE_SCROLL && !window_form)
		return point_parse(c, v, "target", &st->point);
	if (!scn_target_window(c, v, &st->target_window))
		return false;
	const ksr_point *ends[] = {&st->point, &st->drag_to};
	for (size_t i = 0; i < sizeof ends / sizeof *ends; i++) {
		const ksr_target *t =
		        ends[i]->kind == KSR_POINT_DECLARED ? ends[i]->declared : NULL;
		if (t && t->window &&
		    strcmp(ksr_pattern_source(t->window), ksr_pattern_source(st->target_window))) {
			scn_err(c, k,
			        "target: '%s' is declared on window '%s' and cannot be given "
			        "another window",
			        t->name, ksr_pattern_source(t->window));
			return false;
		}
	}
	return true;
}

static void push_check(ksr_step *st, ksr_check *ck)
{
	st->checks = ksr_xrealloc(st->checks, (st->n_checks + 1) * sizeof *st->checks);
	st->checks[st->n_checks++] = *ck;
}

static bool expect_modifier(scn_ctx *c, const snode *v, ksr_step *st)
{
	const ksr_check_info *screen = ksr_check_kind_find("screen");
	if (!scn_str(c, v, "expect", true, &st->expect))
		return false;
	if (!screen) {
		scn_err(c, v, "expect: the check table has no 'screen' check");
		return false;
	}
	ksr_check ck;
	scn_check_init(&ck, screen, v);
	ck.text = ksr_xstrdup(st->expect);
	push_check(st, &ck);
	return true;
}

static bool expect_state_modifier(scn_ctx *c, const snode *v, ksr_step *st)
{
	const ksr_check_info *state = ksr_check_kind_find("state");
	ksr_check ck;
	scn_check_init(&ck, state, v);
	if (!state) {
		scn_err(c, v, "expect_state: the check table has no 'state' check");
		return false;
	}
	bool ok = scn_state_parse(c, v, "expect_state", &ck);
	if (ok)
		push_check(st, &ck);
	else
		scn_check_clear(&ck);
	return ok;
}

static bool checks_modifier(scn_ctx *c, const snode *v, ksr_step *st)
{
	ksr_check *items;
	size_t len;
	bool ok = scn_check_list(c, v, "checks", &items, &len);
	for (size_t i = 0; i < len; i++)
		push_check(st, &items[i]);
	free(items);
	return ok;
}

static bool wait_state(scn_ctx *c, const snode *v, ksr_step *st)
{
	if (!scn_str(c, v, "state", true, &st->wait_state))
		return false;
	for (size_t i = 0; wait_states[i]; i++)
		if (!strcmp(wait_states[i], st->wait_state))
			return true;
	scn_err(c, v, "state: expected visible, hidden, attached or detached, got '%s'",
	        st->wait_state);
	return false;
}

/* tool: AS-NAME (desktop mode): the tool an earlier spawn named, whose
 * accessibility tree the step's rung-2 action and checks (and its window, for
 * X11 input) use instead of the newest tool's. A spawn's own as: is not
 * earlier than itself. */
static bool tool_modifier(scn_ctx *c, const snode *v, ksr_step *st)
{
	if (!scn_str(c, v, "tool", true, &st->tool))
		return false;
	if (!c->s->desktop) {
		scn_err(c, v, "tool: only in desktop mode (desktop: true)");
		return false;
	}
	size_t earlier = c->n_spawn_as;
	if (st->spawn.as && earlier && c->spawn_as[earlier - 1] == st->spawn.as)
		earlier--;
	for (size_t i = 0; i < earlier; i++)
		if (!strcmp(c->spawn_as[i], st->tool))
			return true;
	char hint[128];
	scn_err(c, v, "tool: '%s' names no earlier spawn step's as:%s", st->tool,
	        scn_did_you_mean(hint, sizeof hint, st->tool, (const char *const *)c->spawn_as,
	                         earlier));
	return false;
}

static bool one_modifier(scn_ctx *c, int mk, const step_keys *sk, ksr_step *st)
{
	const snode *v = sk->mod[mk];
	switch (mk) {
	case MK_TARGET:
		return target_modifier(c, v, sk->mod_key[mk], st);
	case MK_ROLE:
		if (st->role) { /* the value's mapping has one */
			scn_err(c, sk->mod_key[mk],
			        "role: is given twice (in %s's mapping and here)", st->info->name);
			return false;
		}
		return scn_role(c, v, "role", &st->role);
	case MK_EXPECT:
		return expect_modifier(c, v, st);
	case MK_EXPECT_STATE:
		return expect_state_modifier(c, v, st);
	case MK_CHECKS:
		return checks_modifier(c, v, st);
	case MK_TIMEOUT:
		return scn_num(c, v, "timeout_s", 0, 86400, &st->timeout_s);
	case MK_STATE:
		return wait_state(c, v, st);
	case MK_HIDDEN_OK:
		return scn_bool(c, v, "hidden_ok", &st->hidden_ok);
	case MK_READY_QUIET:
		st->ready_quiet_set = true;
		return scn_num(c, v, "ready_quiet_ms", 0, 60000, &st->ready_quiet_ms);
	case MK_TOOL:
		return tool_modifier(c, v, st);
	case MK_EXPECT_EFFECT: {
		bool expect = true;
		bool ok = scn_bool(c, v, "expect_effect", &expect);
		st->no_effect_ok = !expect;
		return ok;
	}
	default:
		return scn_check_list(c, v, "post", &st->post, &st->n_post);
	}
}

/* A declared target that names its own window brings it along. */
static void inherit_window(ksr_step *st)
{
	const char *w = declared_window(&st->point);
	if (!w) /* a drag's literal from: and declared to: */
		w = declared_window(&st->drag_to);
	if (!st->target_window && w)
		st->target_window = ksr_pattern_compile(w, NULL);
}

static bool step_rules(scn_ctx *c, const snode *n, const step_keys *sk, ksr_step *st, bool plan)
{
	bool ok = true;
	if (st->info->desktop_only && !c->s->desktop) {
		scn_err(c, sk->action_key, "%s: only in desktop mode (desktop: true)",
		        st->info->name);
		ok = false;
	}
	if (st->info->rung == KSR_RUNG_GROUNDED && !sk->mod[MK_EXPECT]) {
		scn_err(c, n,
		        "%s needs expect: (what the click should change), so that it can "
		        "be verified",
		        st->info->name);
		ok = false;
	}
	if (plan && !sk->mod[MK_POST]) {
		scn_err(c, n, "a plan: step needs post: (the checks that confirm it)");
		ok = false;
	}
	if (st->info->backend == KSR_BACKEND_CDP)
		c->s->cdp = true;
	return ok;
}

static bool step_parse(scn_ctx *c, const snode *n, bool plan, ksr_step *st)
{
	step_keys sk = {0};
	st->pos.line = n->line;
	st->pos.col = n->col;
	if (n->kind != SN_MAP) {
		if (!n->bad)
			scn_err(c, n, "a step must be a mapping with one action key, got %s",
			        scn_kind_word(n));
		return false;
	}
	bool ok = classify(c, n, st, &sk);
	if (!st->info) {
		char list[400];
		action_list(list, sizeof list);
		if (!sk.unknown)
			scn_err(c, n, "a step needs one action key (one of: %s)", list);
		return false;
	}
	st->value_pos.line = sk.value->line;
	st->value_pos.col = sk.value->col;
	ok = modifiers_fit(c, st, &sk, plan) && ok;
	ok = step_rules(c, n, &sk, st, plan) && ok;
	ok = action_value(c, sk.value, st) && ok;
	for (int i = 0; i < MK_COUNT; i++)
		if (sk.mod[i] && (i != MK_POST || plan) &&
		    (i == MK_POST || (st->info->modifiers & modifier_bits[i])))
			ok = one_modifier(c, i, &sk, st) && ok;
	inherit_window(st);
	/* The step's checks of its control see it as the step does. */
	for (size_t i = 0; i < st->n_checks; i++) {
		st->checks[i].hidden_ok = st->hidden_ok;
		st->checks[i].tool = st->tool;
	}
	return ok;
}

bool scn_step_list(scn_ctx *c, const snode *n, bool plan, ksr_step_list *out)
{
	const char *what = plan ? "plan" : "steps";
	out->items = NULL;
	out->len = 0;
	if (!scn_is_seq(c, n, what))
		return false;
	out->items = ksr_xcalloc(n->n ? n->n : 1, sizeof *out->items);
	bool ok = true;
	for (size_t i = 0; i < n->n; i++) {
		ksr_step *st = &out->items[i];
		st->index = (int)i + 1;
		ok = step_parse(c, n->kids[i], plan, st) && ok;
		out->len = i + 1;
	}
	return ok;
}
