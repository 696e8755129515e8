/* ksr-testapp4: the GTK 4 twin of ksr-testapp's "Name It" flow, for the
 * readiness tests on GTK 4's own accessibility (GTK 4 speaks AT-SPI itself,
 * without atk-bridge, and answers GetAccessibleAtPoint differently).
 *
 * Window "KSR GTK4 App" (480x320), WM_CLASS "ksr-testapp4". Once it is mapped
 * a modal dialog "Name It" (400x200, transient for it) opens: an entry "Name"
 * on top, a button "OK" filling the lower half that turns sensitive MS
 * (--name-dialog MS, default 1500) after the entry first holds text. OK records
 * "confirmed:<text>" in the --record file and closes the dialog. */
#include <gtk/gtk.h>

#include <stdio.h>

static struct {
	gint enable_ms;
	gchar *record_path;
} opt = {.enable_ms = 1500};

static GtkWidget *main_window, *name_entry, *name_ok;
static guint enable_timer;

static void record(const char *text)
{
	if (!opt.record_path)
		return;
	FILE *f = fopen(opt.record_path, "a");
	if (!f)
		return;
	fprintf(f, "confirmed:%s\n", text);
	fclose(f);
}

static void name_widget(GtkWidget *w, const char *name)
{
	gtk_widget_set_name(w, name);
	gtk_accessible_update_property(GTK_ACCESSIBLE(w), GTK_ACCESSIBLE_PROPERTY_LABEL, name, -1);
}

static gboolean enable_ok(gpointer data)
{
	(void)data;
	enable_timer = 0;
	gtk_widget_set_sensitive(name_ok, TRUE);
	return G_SOURCE_REMOVE;
}

static void on_name_changed(GtkEditable *entry, gpointer data)
{
	(void)data;
	gboolean any = *gtk_editable_get_text(entry) != '\0';
	if (any && !enable_timer && !gtk_widget_get_sensitive(name_ok))
		enable_timer = g_timeout_add((guint)opt.enable_ms, enable_ok, NULL);
}

static void on_name_ok(GtkButton *button, gpointer dialog)
{
	(void)button;
	record(gtk_editable_get_text(GTK_EDITABLE(name_entry)));
	gtk_window_destroy(GTK_WINDOW(dialog));
}

static gboolean show_name_dialog(gpointer data)
{
	(void)data;
	GtkWidget *d = gtk_window_new();
	gtk_window_set_title(GTK_WINDOW(d), "Name It");
	gtk_window_set_transient_for(GTK_WINDOW(d), GTK_WINDOW(main_window));
	gtk_window_set_modal(GTK_WINDOW(d), TRUE);
	gtk_window_set_default_size(GTK_WINDOW(d), 400, 200);
	GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 12);
	gtk_widget_set_margin_start(box, 12);
	gtk_widget_set_margin_end(box, 12);
	gtk_widget_set_margin_top(box, 12);
	gtk_widget_set_margin_bottom(box, 12);
	name_entry = gtk_entry_new();
	name_widget(name_entry, "Name");
	g_signal_connect(name_entry, "changed", G_CALLBACK(on_name_changed), NULL);
	name_ok = gtk_button_new_with_label("OK");
	name_widget(name_ok, "OK");
	gtk_widget_set_sensitive(name_ok, FALSE);
	gtk_widget_set_vexpand(name_ok, TRUE);
	g_signal_connect(name_ok, "clicked", G_CALLBACK(on_name_ok), d);
	gtk_box_append(GTK_BOX(box), name_entry);
	gtk_box_append(GTK_BOX(box), name_ok);
	gtk_window_set_child(GTK_WINDOW(d), box);
	gtk_window_present(GTK_WINDOW(d));
	return G_SOURCE_REMOVE;
}

/* The dialog opens once the main window is on screen, as an app's first-run
 * or file dialog would (and so the dialog is transient for a mapped window). */
static void on_map(GtkWidget *w, gpointer data)
{
	(void)w, (void)data;
	g_idle_add(show_name_dialog, NULL);
}

static void on_activate(GtkApplication *app, gpointer data)
{
	(void)data;
	main_window = gtk_application_window_new(app);
	gtk_window_set_title(GTK_WINDOW(main_window), "KSR GTK4 App");
	gtk_window_set_default_size(GTK_WINDOW(main_window), 480, 320);
	gtk_window_set_child(GTK_WINDOW(main_window), gtk_label_new("KSR GTK4 App"));
	g_signal_connect(main_window, "map", G_CALLBACK(on_map), NULL);
	gtk_window_present(GTK_WINDOW(main_window));
}

int main(int argc, char **argv)
{
	GOptionEntry entries[] = {
	        {"name-dialog", 0, 0, G_OPTION_ARG_INT, &opt.enable_ms,
	         "OK turns sensitive MS after the name has text", "MS"},
	        {"record", 0, 0, G_OPTION_ARG_FILENAME, &opt.record_path,
	         "append what the app took to FILE", "FILE"},
	        {NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	GtkApplication *app = gtk_application_new("org.ksr.testapp4", G_APPLICATION_NON_UNIQUE);
	g_application_add_main_option_entries(G_APPLICATION(app), entries);
	g_signal_connect(app, "activate", G_CALLBACK(on_activate), NULL);
	g_set_prgname("ksr-testapp4");
	int status = g_application_run(G_APPLICATION(app), argc, argv);
	g_object_unref(app);
	return status;
}
