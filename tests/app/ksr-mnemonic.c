/* ksr-mnemonic: a GTK 3 window for inspect's key suggestions (issue #32):
 * a menu bar (_File, _Help) above two labelled fields whose labels carry
 * mnemonics, one that the menu bar also claims (_Host: / _Help) and one it
 * does not (_Name:), and a button that appears only some time after the
 * window maps (an app still adding controls when it first shows).
 *
 *   ksr-mnemonic [LATE_MS]   add the "Late button" LATE_MS after start
 *                            (default 2000)
 *
 * Window "KSR Mnemonic". */
#include <gtk/gtk.h>
#include <stdlib.h>

static GtkWidget *box;

static gboolean add_late(gpointer data)
{
	(void)data;
	GtkWidget *b = gtk_button_new_with_label("Late button");
	gtk_box_pack_start(GTK_BOX(box), b, FALSE, FALSE, 0);
	gtk_widget_show(b);
	return G_SOURCE_REMOVE;
}

static GtkWidget *menu_with(const char *mnemonic, const char *item)
{
	GtkWidget *top = gtk_menu_item_new_with_mnemonic(mnemonic);
	GtkWidget *menu = gtk_menu_new();
	gtk_menu_shell_append(GTK_MENU_SHELL(menu), gtk_menu_item_new_with_label(item));
	gtk_menu_item_set_submenu(GTK_MENU_ITEM(top), menu);
	return top;
}

static void labelled_field(GtkWidget *grid, int row, const char *mnemonic)
{
	GtkWidget *label = gtk_label_new_with_mnemonic(mnemonic);
	GtkWidget *entry = gtk_entry_new();
	gtk_label_set_mnemonic_widget(GTK_LABEL(label), entry);
	gtk_grid_attach(GTK_GRID(grid), label, 0, row, 1, 1);
	gtk_grid_attach(GTK_GRID(grid), entry, 1, row, 1, 1);
}

int main(int argc, char **argv)
{
	int late_ms = argc > 1 ? atoi(argv[1]) : 2000;
	gtk_init(&argc, &argv);
	GtkWidget *win = gtk_window_new(GTK_WINDOW_TOPLEVEL);
	gtk_window_set_title(GTK_WINDOW(win), "KSR Mnemonic");
	gtk_window_set_default_size(GTK_WINDOW(win), 420, 260);
	g_signal_connect(win, "destroy", G_CALLBACK(gtk_main_quit), NULL);
	box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
	GtkWidget *bar = gtk_menu_bar_new();
	gtk_menu_shell_append(GTK_MENU_SHELL(bar), menu_with("_File", "Quit"));
	gtk_menu_shell_append(GTK_MENU_SHELL(bar), menu_with("_Help", "About"));
	gtk_box_pack_start(GTK_BOX(box), bar, FALSE, FALSE, 0);
	GtkWidget *grid = gtk_grid_new();
	labelled_field(grid, 0, "_Host:");
	labelled_field(grid, 1, "_Name:");
	gtk_box_pack_start(GTK_BOX(box), grid, FALSE, FALSE, 0);
	gtk_container_add(GTK_CONTAINER(win), box);
	gtk_widget_show_all(win);
	g_timeout_add(late_ms, add_late, NULL);
	gtk_main();
	return 0;
}
