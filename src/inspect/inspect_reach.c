/* The pure half of `inspect`: which scenario step reaches a control, and how a
 * window title or a name is written in YAML. The element rung is offered only
 * when the runtime's own finder (ksr_atspi_tree_find, the one click_element
 * uses) returns this very node for the name (or the name and role), so a line
 * printed here never clicks another control. */
#include "ksr/inspect.h"
#include "ksr/strbuf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#define PCRE_META "\\^$.|?*+()[]{}/"

static void pcre_escape(ksr_strbuf *b, const char *s)
{
	for (; *s; s++) {
		if (strchr(PCRE_META, *s))
			ksr_strbuf_addf(b, "%c", '\\');
		ksr_strbuf_addf(b, "%c", *s);
	}
}

/* A YAML double-quoted scalar: backslash, quote and control characters escaped. */
static void yaml_quoted(ksr_strbuf *b, const char *s)
{
	ksr_strbuf_addf(b, "%c", '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			ksr_strbuf_addf(b, "%c", '\\');
			ksr_strbuf_addf(b, "%c", (char)c);
		} else if (c < 0x20 || c == 0x7f) {
			char hex[8];
			snprintf(hex, sizeof hex, "\\x%02x", c);
			ksr_strbuf_add(b, hex);
		} else {
			ksr_strbuf_addf(b, "%c", (char)c);
		}
	}
	ksr_strbuf_addf(b, "%c", '"');
}

/* Plain (unquoted) YAML is kept for the common case, as authors write it; any
 * character that could change how YAML reads the value forces quotes. */
static bool yaml_plain_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || strchr("-?:,[]{}#&*!|>'\"%@` ", s[0]) || s[n - 1] == ' ' || s[n - 1] == ':')
		return false;
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == '"')
			return false;
	return !strstr(s, ": ") && !strstr(s, " #");
}

static void yaml_scalar(ksr_strbuf *b, const char *s)
{
	if (yaml_plain_ok(s))
		ksr_strbuf_add(b, s);
	else
		yaml_quoted(b, s);
}

char *ksr_inspect_yaml_scalar(const char *s)
{
	ksr_strbuf b = {0};
	yaml_scalar(&b, s ? s : "");
	return ksr_strbuf_take(&b);
}

static void anchored(ksr_strbuf *b, const char *text)
{
	ksr_strbuf_addf(b, "%c", '^');
	pcre_escape(b, text);
	ksr_strbuf_addf(b, "%c", '$');
}

char *ksr_inspect_window_line(const char *title)
{
	ksr_strbuf re = {0}, line = {0};
	anchored(&re, title ? title : "");
	ksr_strbuf_add(&line, "window: ");
	yaml_scalar(&line, re.p);
	ksr_strbuf_free(&re);
	return ksr_strbuf_take(&line);
}

/* A name as click_element reads it: exact, unless it looks like /regex/ (then
 * an anchored, escaped pattern, so it still means exactly this name). */
static char *element_line(const char *name)
{
	ksr_strbuf b = {0};
	size_t n = strlen(name);
	ksr_strbuf_add(&b, "click_element: ");
	if (n >= 2 && name[0] == '/' && name[n - 1] == '/') {
		ksr_strbuf re = {0};
		ksr_strbuf_addf(&re, "%c", '/');
		anchored(&re, name);
		ksr_strbuf_addf(&re, "%c", '/');
		yaml_quoted(&b, re.p);
		ksr_strbuf_free(&re);
	} else {
		yaml_quoted(&b, name);
	}
	return ksr_strbuf_take(&b);
}

static bool contains(const ksr_window *w, int px, int py)
{
	return px >= w->x && px < w->x + w->w && py >= w->y && py < w->y + w->h;
}

static long to_pixel(int origin, int size, double f)
{
	return origin + lround(f * size);
}

int ksr_inspect_fraction(const ksr_window *w, int x, int y, int cw, int ch, double *fx, double *fy,
                         int *decimals)
{
	int cx = x + cw / 2, cy = y + ch / 2;
	if (!w || w->w <= 0 || w->h <= 0 || !contains(w, cx, cy))
		return -1;
	double rx = (double)(cx - w->x) / w->w, ry = (double)(cy - w->y) / w->h;
	for (int d = 2; d <= 4; d++) {
		double scale = pow(10, d);
		*fx = round(rx * scale) / scale;
		*fy = round(ry * scale) / scale;
		*decimals = d;
		long px = to_pixel(w->x, w->w, *fx), py = to_pixel(w->y, w->h, *fy);
		/* As few decimals as keep the rounded point on the control. */
		if (px >= x && px < x + cw && py >= y && py < y + ch)
			break;
	}
	return 0;
}

/* The window holding the control's centre: a dialog (on top) before others. */
static int window_of(const ksr_atspi_node *n, const ksr_window *wins, size_t n_wins)
{
	int found = -1;
	for (size_t k = 0; k < n_wins; k++) {
		if (!contains(&wins[k], n->x + n->w / 2, n->y + n->h / 2))
			continue;
		if (found < 0 || (wins[k].is_dialog && !wins[found].is_dialog))
			found = (int)k;
	}
	return found;
}

/* A position worth clicking: laid out and on screen, by the runtime's own
 * showing rule (GTK 4's visible stands for showing). */
static bool showing_at(const ksr_atspi_tree *t, size_t i)
{
	return t->nodes[i].has_extents && ksr_atspi_tree_showing(t, i);
}

static bool usable_name(const char *name)
{
	for (const char *p = name; p && *p; p++)
		if (*p != ' ' && *p != '\t' && *p != '\n')
			return true;
	return false;
}

static void add_line(cJSON *step, char *line)
{
	cJSON_AddItemToArray(step, cJSON_CreateString(line));
	free(line);
}

static cJSON *reach_object(int rung, const char *kind, const char *backend)
{
	cJSON *r = cJSON_CreateObject();
	cJSON_AddNumberToObject(r, "rung", rung);
	cJSON_AddStringToObject(r, "kind", kind);
	cJSON_AddStringToObject(r, "backend", backend);
	cJSON_AddArrayToObject(r, "step");
	return r;
}

static cJSON *by_name(const ksr_atspi_tree *t, size_t i)
{
	const ksr_atspi_node *n = &t->nodes[i];
	bool action = ksr_atspi_pick_action(n) >= 0;
	if (!usable_name(n->name) || (!action && !showing_at(t, i)))
		return NULL;
	/* The name as people read it ("Save", not mousepad's "Save      "): the
	 * matcher finds it by that too (docs/accessibility.md#names). */
	char *shown = ksr_atspi_name_display(n->name);
	ksr_name_match m = {.text = shown};
	bool need_role = ksr_atspi_tree_find(t, &m, NULL) != (int)i;
	if (need_role && (!n->role || ksr_atspi_tree_find(t, &m, n->role) != (int)i)) {
		free(shown);
		return NULL; /* another control of the same name and role comes first */
	}
	cJSON *r = reach_object(2, "element", action ? "atspi" : "xtest");
	cJSON *step = cJSON_GetObjectItem(r, "step");
	add_line(step, element_line(shown));
	free(shown);
	if (need_role) {
		ksr_strbuf b = {0};
		ksr_strbuf_add(&b, "role: ");
		yaml_scalar(&b, n->role);
		add_line(step, ksr_strbuf_take(&b));
	}
	/* A closed menu's item: click_element refuses it unless told. */
	if (!ksr_atspi_tree_showing(t, i))
		add_line(step, ksr_xstrdup("hidden_ok: true"));
	return r;
}

static cJSON *by_fraction(const ksr_atspi_node *n, const ksr_window *wins, int k)
{
	double fx, fy;
	int dec;
	if (ksr_inspect_fraction(&wins[k], n->x, n->y, n->w, n->h, &fx, &fy, &dec) < 0)
		return NULL;
	cJSON *r = reach_object(1, "literal", "xtest");
	cJSON *step = cJSON_GetObjectItem(r, "step");
	add_line(step, ksr_xasprintf("click: %.*f %.*f", dec, fx, dec, fy));
	if (k > 0) {
		/* Not the app's main window: the fractions are of this one. */
		ksr_strbuf re = {0}, b = {0};
		anchored(&re, wins[k].title ? wins[k].title : "");
		ksr_strbuf_add(&b, "target: {window: ");
		yaml_quoted(&b, re.p);
		ksr_strbuf_addf(&b, "%c", '}');
		ksr_strbuf_free(&re);
		add_line(step, ksr_strbuf_take(&b));
	}
	cJSON *f = cJSON_AddObjectToObject(r, "fraction");
	cJSON_AddNumberToObject(f, "x", fx);
	cJSON_AddNumberToObject(f, "y", fy);
	return r;
}

cJSON *ksr_inspect_reach(const ksr_atspi_tree *t, size_t i, const ksr_window *wins, size_t n_wins)
{
	if (!t || i >= t->len)
		return NULL;
	const ksr_atspi_node *n = &t->nodes[i];
	int k = showing_at(t, i) ? window_of(n, wins, n_wins) : -1;
	cJSON *r = by_name(t, i);
	if (!r && k >= 0)
		r = by_fraction(n, wins, k);
	if (r && k >= 0)
		cJSON_AddNumberToObject(r, "window", (double)wins[k].id);
	if (r)
		cJSON_AddBoolToObject(r, "hidden", !ksr_atspi_tree_showing(t, i));
	return r;
}
