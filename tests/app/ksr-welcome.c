/* ksr-welcome: a GTK 3 main window that draws a first-run screen inside
 * itself, as Thunderbird's account setup or a Qt app's welcome page do: no
 * dialog, no telling window title, only what the window's content says.
 *
 * Window "KSR Notes" (--title; a plain title: the screen is inside), WM_CLASS "ksr-welcome". Inside
 * it:
 *   --heading TEXT  a label exposed on the accessibility bus with role
 *                   heading (ATK_ROLE_HEADING), as a toolkit exposes a page's
 *                   title (GtkLabel alone is role label);
 *   --panel TEXT    a GtkFrame labelled TEXT (GTK 3 exposes it as a panel
 *                   named TEXT) holding a button "Continue";
 *   --hidden TEXT   a heading TEXT that is never shown (not showing on the
 *                   bus: must not count);
 *   --tab TEXT      a notebook whose selected tab is TEXT, then a tab
 *                   "Welcome" that is not selected (its page not shown).
 * Always: a label "Ready" and a heading "Documents" (plain content). */
#include <gtk/gtk.h>

static struct {
	gchar *title, *heading, *panel, *hidden, *tab;
} opt;

static const GOptionEntry entries[] = {
        {"title", 0, 0, G_OPTION_ARG_STRING, &opt.title, "window title", "TITLE"},
        {"heading", 0, 0, G_OPTION_ARG_STRING, &opt.heading, "a heading in the window", "TEXT"},
        {"panel", 0, 0, G_OPTION_ARG_STRING, &opt.panel, "a named panel in the window", "TEXT"},
        {"hidden", 0, 0, G_OPTION_ARG_STRING, &opt.hidden, "a heading never shown", "TEXT"},
        {"tab", 0, 0, G_OPTION_ARG_STRING, &opt.tab, "a notebook's selected tab", "TEXT"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
};

static GtkWidget *heading(const char *text)
{
	GtkWidget *l = gtk_label_new(text);
	AtkObject *acc = gtk_widget_get_accessible(l);
	atk_object_set_role(acc, ATK_ROLE_HEADING);
	atk_object_set_name(acc, text);
	return l;
}

static GtkWidget *panel(const char *text)
{
	GtkWidget *f = gtk_frame_new(text);
	gtk_container_add(GTK_CONTAINER(f), gtk_button_new_with_label("Continue"));
	return f;
}

static GtkWidget *notebook(const char *selected)
{
	GtkWidget *nb = gtk_notebook_new();
	gtk_notebook_append_page(GTK_NOTEBOOK(nb), gtk_label_new("Canvas"),
	                         gtk_label_new(selected));
	gtk_notebook_append_page(GTK_NOTEBOOK(nb), gtk_label_new("Hello"),
	                         gtk_label_new("Welcome"));
	return nb;
}

int main(int argc, char **argv)
{
	GError *error = NULL;
	if (!gtk_init_with_args(&argc, &argv, "- a window with a welcome inside", entries, NULL,
	                        &error)) {
		g_printerr("ksr-welcome: %s\n", error ? error->message : "cannot start GTK");
		return 2;
	}
	g_set_prgname("ksr-welcome");
	GtkWidget *win = gtk_window_new(GTK_WINDOW_TOPLEVEL);
	gtk_window_set_title(GTK_WINDOW(win), opt.title ? opt.title : "KSR Notes");
	gtk_window_set_default_size(GTK_WINDOW(win), 480, 320);
	g_signal_connect(win, "destroy", G_CALLBACK(gtk_main_quit), NULL);
	GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 8);
	gtk_container_add(GTK_CONTAINER(win), box);
	if (opt.heading)
		gtk_box_pack_start(GTK_BOX(box), heading(opt.heading), FALSE, FALSE, 0);
	if (opt.panel)
		gtk_box_pack_start(GTK_BOX(box), panel(opt.panel), FALSE, FALSE, 0);
	if (opt.tab)
		gtk_box_pack_start(GTK_BOX(box), notebook(opt.tab), FALSE, FALSE, 0);
	gtk_box_pack_start(GTK_BOX(box), heading("Documents"), FALSE, FALSE, 0);
	gtk_box_pack_start(GTK_BOX(box), gtk_label_new("Ready"), FALSE, FALSE, 0);
	GtkWidget *hidden = opt.hidden ? heading(opt.hidden) : NULL;
	if (hidden)
		gtk_box_pack_start(GTK_BOX(box), hidden, FALSE, FALSE, 0);
	gtk_widget_show_all(win);
	if (hidden)
		gtk_widget_hide(hidden);
	gtk_main();
	return 0;
}
