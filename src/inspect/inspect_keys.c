/* inspect's key suggestions that do what they say (issue #32): a control's
 * shortcut is offered only when pressing it from the window reaches the
 * control. A chord that the window's menu bar also claims as a mnemonic
 * (FileZilla's Host field's alt+h, which opens Help) is withheld, with the
 * menu that claims it. */
#include "ksr/inspect.h"
#include "ksr/strbuf.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The top-level (depth 1: a frame or a dialog) holding node i; -1 for none. */
static int top_of(const ksr_atspi_tree *t, size_t i)
{
	int k = (int)i;
	while (k > 0 && t->nodes[k].depth > 1)
		k = t->nodes[k].parent;
	return k > 0 ? k : -1;
}

static char *alt_letter(char c)
{
	return ksr_xasprintf("alt+%c", tolower((unsigned char)c));
}

/* A menu bar item's mnemonic as a chord: its key binding's first field
 * ("<Alt>h;<Alt>h;" from GTK, "h" alone, Qt's "Alt+H"), else (no binding
 * published) the first letter of its name, as most toolkits underline it:
 * withholding one suggestion too many misleads less than one too few. */
static char *menu_mnemonic(const ksr_atspi_node *n)
{
	if (n->keybinding && *n->keybinding) {
		const char *semi = strchr(n->keybinding, ';');
		size_t len = semi ? (size_t)(semi - n->keybinding) : strlen(n->keybinding);
		if (len == 1 && isalnum((unsigned char)n->keybinding[0]))
			return alt_letter(n->keybinding[0]);
		char *first = ksr_xstrndup(n->keybinding, len);
		char *chord = ksr_atspi_shortcut_chord(first);
		free(first);
		if (chord)
			return chord;
	}
	for (const char *p = n->name; p && *p; p++)
		if (isalnum((unsigned char)*p))
			return alt_letter(*p);
	return NULL;
}

static bool in_menu_bar(const ksr_atspi_tree *t, const ksr_atspi_node *n)
{
	if (n->parent < 0)
		return false;
	const char *r = t->nodes[n->parent].role;
	return r && ksr_atspi_role_equal("menu bar", r);
}

const char *ksr_inspect_menu_claims(const ksr_atspi_tree *t, size_t i, const char *chord)
{
	int top = top_of(t, i);
	if (top < 0 || !chord)
		return NULL;
	for (size_t j = 1; j < t->len; j++) {
		const ksr_atspi_node *m = &t->nodes[j];
		if (j == i || !in_menu_bar(t, m) || top_of(t, j) != top)
			continue;
		char *claimed = menu_mnemonic(m);
		bool same = claimed && !strcasecmp(claimed, chord);
		free(claimed);
		if (same)
			return m->name ? m->name : "";
	}
	return NULL;
}
