/* Role names (docs/accessibility.md, "Roles"). A control's role is printed
 * and matched by the standard name of its AT-SPI role (Accessible.GetRole,
 * named by libatspi's atspi_role_get_name: "push button", "check box"), the
 * name Accerciser, pyatspi and dogtail print. The toolkit's own string
 * (Accessible.GetRoleName) is accepted as an alias: GTK 4 spells a push
 * button "button" and a check box "checkbox". The loader rejects any other
 * word, with the closest name as a suggestion. */
#include "backend/atspi/priv.h"

#include <atspi/atspi.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* GTK 4's GetRoleName strings (gtk_accessible_role_to_name, GtkAccessibleRole
 * of GTK 4.8 to 4.14); the ones equal to an AT-SPI name need no entry but
 * are harmless. GTK 3 answers GetRoleName with ATK's names (the AT-SPI
 * names but "statusbar" and a few more), Qt 5 with its own roles' translated
 * names ("spin box" for a spin button). */
static const char *const gtk4_names[] = {
        "alert",
        "alert dialog",
        "banner",
        "button",
        "caption",
        "cell",
        "checkbox",
        "column header",
        "combo box",
        "command",
        "composite",
        "dialog",
        "document",
        "feed",
        "form",
        "generic",
        "grid",
        "grid cell",
        "group",
        "heading",
        "img",
        "input",
        "label",
        "landmark",
        "legend",
        "link",
        "list",
        "list box",
        "list item",
        "log",
        "main",
        "marquee",
        "math",
        "meter",
        "menu",
        "menu bar",
        "menu item",
        "menu item checkbox",
        "menu item radio",
        "navigation",
        "none",
        "note",
        "option",
        "presentation",
        "progress bar",
        "radio",
        "radio group",
        "range",
        "region",
        "row",
        "row group",
        "row header",
        "scroll bar",
        "search",
        "search box",
        "section",
        "section head",
        "select",
        "separator",
        "slider",
        "spin button",
        "status",
        "structure",
        "switch",
        "tab",
        "table",
        "tab list",
        "tab panel",
        "text box",
        "time",
        "timer",
        "tool bar",
        "tool tip",
        "tree",
        "tree grid",
        "tree item",
        "widget",
        "window",
        "toggle button",
        "application",
        "paragraph",
        "block quote",
        "article",
        "comment",
        "terminal",
};
#define N_GTK4 (sizeof gtk4_names / sizeof *gtk4_names)

static struct {
	pthread_once_t once;
	const char **names; /* the canonical names, then the aliases not among them */
	size_t n, n_canonical;
} roles = {.once = PTHREAD_ONCE_INIT};

static bool listed(const char *w, size_t upto)
{
	for (size_t i = 0; i < upto; i++)
		if (ksr_atspi_role_equal(w, roles.names[i]))
			return true;
	return false;
}

static void build(void)
{
	roles.names = ksr_xcalloc(ATSPI_ROLE_COUNT + N_GTK4 + 1, sizeof *roles.names);
	for (int r = 1; r < ATSPI_ROLE_COUNT; r++) { /* 0 is "invalid" */
		char *name = atspi_role_get_name((AtspiRole)r);
		if (name && *name && !listed(name, roles.n))
			roles.names[roles.n++] = ksr_xstrdup(name);
		g_free(name);
	}
	roles.n_canonical = roles.n;
	for (size_t i = 0; i < N_GTK4; i++)
		if (!listed(gtk4_names[i], roles.n))
			roles.names[roles.n++] = gtk4_names[i];
}

const char *const *ksr_atspi_role_names(size_t *n, size_t *n_canonical)
{
	pthread_once(&roles.once, build);
	if (n)
		*n = roles.n;
	if (n_canonical)
		*n_canonical = roles.n_canonical;
	return roles.names;
}

bool ksr_atspi_role_known(const char *written)
{
	size_t n;
	const char *const *names = ksr_atspi_role_names(&n, NULL);
	for (size_t i = 0; written && i < n; i++)
		if (ksr_atspi_role_equal(written, names[i]))
			return true;
	return false;
}

char *ksr_atspi_role_canonical(uint32_t role)
{
	if (role == 0 || role >= ATSPI_ROLE_COUNT)
		return NULL;
	char *name = atspi_role_get_name((AtspiRole)role);
	char *out = name && *name ? ksr_xstrdup(name) : NULL;
	g_free(name);
	return out;
}
