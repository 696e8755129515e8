/* A control's text and value (the text: check, MCP's a11y_text) and its
 * keyboard shortcut, read over the same bounded GDBus calls as the rest of
 * the backend (docs/accessibility.md, "Text and values"). */
#include "backend/atspi/priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ksr/keys.h"

#define ATSPI_IFACE_TEXT  "org.a11y.atspi.Text"
#define ATSPI_IFACE_VALUE "org.a11y.atspi.Value"

static int read_value(ksr_atspi *a, const ksr_atspi_app *app, const char *path, ksr_deadline d,
                      char **out, ksr_err *err)
{
	GVariant *r = ksr_atspi_call(
	        a->ctx, a->conn, app->bus, path, "org.freedesktop.DBus.Properties", "Get",
	        g_variant_new("(ss)", ATSPI_IFACE_VALUE, "CurrentValue"), "(v)", d, err);
	if (!r)
		return -1;
	GVariant *v = NULL;
	g_variant_get(r, "(v)", &v);
	int rc = 0;
	if (g_variant_is_of_type(v, G_VARIANT_TYPE_DOUBLE)) {
		char buf[64];
		/* As a person reads it: 3, not 3.000000; 0.1 stays 0.1. */
		snprintf(buf, sizeof buf, "%.15g", g_variant_get_double(v));
		*out = ksr_xstrdup(buf);
	} else {
		rc = ksr_err_set(err, "the control's Value.CurrentValue is not a number");
	}
	g_variant_unref(v);
	g_variant_unref(r);
	return rc;
}

static int read_text(ksr_atspi *a, const ksr_atspi_app *app, const char *path, ksr_deadline d,
                     char **out, ksr_err *err)
{
	/* End offset -1: to the end of the text (GTK 3, GTK 4 and Qt agree). */
	GVariant *r = ksr_atspi_call(a->ctx, a->conn, app->bus, path, ATSPI_IFACE_TEXT, "GetText",
	                             g_variant_new("(ii)", 0, -1), "(s)", d, err);
	if (!r)
		return -1;
	const char *s = NULL;
	g_variant_get(r, "(&s)", &s);
	*out = ksr_xstrdup(s ? s : "");
	g_variant_unref(r);
	return 0;
}

/* A label publishes its text as its name alone in Qt (QLabel): that is what
 * a person reads there. */
static bool reads_name(const ksr_atspi_node *n)
{
	return n->name && n->role &&
	       (ksr_atspi_role_equal("label", n->role) || ksr_atspi_role_equal("static", n->role) ||
	        ksr_atspi_role_equal("caption", n->role));
}

int ksr_atspi_node_text(ksr_atspi *a, const ksr_atspi_app *app, const ksr_atspi_node *n,
                        ksr_deadline d, char **out, const char **from, ksr_err *err)
{
	*out = NULL;
	if (from)
		*from = NULL;
	bool text = n->ifaces & KSR_ATSPI_IF_TEXT, value = n->ifaces & KSR_ATSPI_IF_VALUE;
	if (!text && !value) {
		if (reads_name(n)) {
			*out = ksr_xstrdup(n->name);
			if (from)
				*from = "name";
			return 0;
		}
		return ksr_err_set(err,
		                   "the %s offers neither text (AT-SPI Text) nor a value (Value), "
		                   "and only a label's name is read as its text",
		                   n->role ? n->role : "control");
	}
	ksr_atspi_ctx_enter(a->ctx);
	/* What a person reads: the text as drawn ("3.00" in a spin button showing
	 * two digits), else the value (a slider, a progress bar: no text). An
	 * empty text beside a value is no reading of it. */
	const char *got = NULL;
	int rc = -1;
	if (text && read_text(a, app, n->path, d, out, err) == 0) {
		got = "text";
		rc = 0;
		if (value && !**out) {
			char *v = NULL;
			if (read_value(a, app, n->path, d, &v, err) == 0) {
				free(*out);
				*out = v;
				got = "value";
			}
		}
	} else if (value && read_value(a, app, n->path, d, out, err) == 0) {
		got = "value";
		rc = 0;
	}
	ksr_atspi_ctx_leave(a->ctx);
	if (rc == 0 && from)
		*from = got;
	return rc;
}

/* ---- keyboard shortcuts ---- */

/* One modifier of a GTK accelerator ("<Primary>") or a Qt sequence ("Ctrl"):
 * the chord word ksr_keys_parse reads; NULL when it is none. */
static const char *modifier_word(const char *m, size_t len)
{
	static const struct {
		const char *name, *word;
	} map[] = {
	        {"primary", "ctrl"}, {"control", "ctrl"}, {"ctrl", "ctrl"},   {"shift", "shift"},
	        {"alt", "alt"},      {"mod1", "alt"},     {"super", "super"}, {"meta", "super"},
	};
	for (size_t i = 0; i < sizeof map / sizeof *map; i++)
		if (strlen(map[i].name) == len && !strncasecmp(map[i].name, m, len))
			return map[i].word;
	return NULL;
}

/* "<Primary><Shift>s" -> "ctrl+shift+s"; NULL when it is not one. */
static char *from_gtk(const char *s)
{
	char buf[128] = "";
	size_t used = 0;
	while (*s == '<') {
		const char *end = strchr(s, '>');
		const char *w = end ? modifier_word(s + 1, (size_t)(end - s - 1)) : NULL;
		if (!w)
			return NULL;
		used += (size_t)snprintf(buf + used, sizeof buf - used, "%s+", w);
		s = end + 1;
		if (used >= sizeof buf)
			return NULL;
	}
	if (!*s || strchr(s, ' '))
		return NULL;
	snprintf(buf + used, sizeof buf - used, "%s", s);
	return ksr_xstrdup(buf);
}

/* Qt's "Ctrl+Shift+S" -> "ctrl+shift+s" (Qt capitalises single letters). */
static char *from_qt(const char *s)
{
	char buf[128] = "";
	size_t used = 0;
	const char *p = s;
	for (;;) {
		const char *plus = strchr(p, '+');
		if (!plus || plus[1] == '\0') /* the key ("Ctrl++" ends with the plus key) */
			break;
		const char *w = modifier_word(p, (size_t)(plus - p));
		if (!w)
			return NULL;
		used += (size_t)snprintf(buf + used, sizeof buf - used, "%s+", w);
		if (used >= sizeof buf)
			return NULL;
		p = plus + 1;
	}
	if (!*p || strchr(p, ' ') || strchr(p, ','))
		return NULL; /* "Ctrl+K, Ctrl+C": a sequence of chords, not written here */
	if (!p[1] && p[0] >= 'A' && p[0] <= 'Z') {
		used += (size_t)snprintf(buf + used, sizeof buf - used, "%c", p[0] - 'A' + 'a');
	} else {
		snprintf(buf + used, sizeof buf - used, "%s", p);
	}
	return ksr_xstrdup(buf);
}

/* A chord the X input backend can press, and more than a typed letter. */
static char *usable(char *chord)
{
	ksr_chord *c = NULL;
	size_t n = 0;
	ksr_err err = {0};
	bool ok = chord && (strchr(chord, '+') || strlen(chord) > 1) &&
	          ksr_keys_parse(chord, &c, &n, &err) == 0 && n == 1;
	ksr_keys_free(c);
	if (!ok) {
		free(chord);
		return NULL;
	}
	return chord;
}

char *ksr_atspi_shortcut_chord(const char *binding)
{
	if (!binding || !*binding)
		return NULL;
	/* ATK's "mnemonic;sequence;shortcut": only the shortcut works from
	 * anywhere in the window (the mnemonic needs its menu open). */
	const char *semi = strrchr(binding, ';');
	const char *shortcut = semi ? semi + 1 : binding;
	if (!*shortcut)
		return NULL;
	return usable(shortcut[0] == '<' ? from_gtk(shortcut) : from_qt(shortcut));
}
