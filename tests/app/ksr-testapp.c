/* ksr-testapp: a small GTK3 app with deterministic controls and failures on
 * demand, for the runtime's integration tests.
 *
 * Window "KSR Test App" (--title), WM_CLASS "ksr-testapp", "Ksr-testapp".
 * Controls (accessible names fixed): button "Press me" (sets the label below it,
 * whose accessible name is its text, from "Pressed 0" to "Pressed N"; records
 * "pressed"), check box "Enable feature" (records
 * "checked:1"/"checked:0"), entry "Text field" (records "text:<value>" on each
 * change); with --record-enter, the pointer entering the button or the check
 * box records "enter:<name>" (hover). Timers given in milliseconds start once the main window is
 * mapped (with --no-window: at start). --first-run-dialog and --updater-dialog show plain dialogs
 * of that title; --close-window-after destroys the window, the process stays.
 * --animate repaints a strip at the bottom forever; --no-cursor-blink keeps
 * the entry's cursor steady (the entry repaints only when its text changes).
 * --name-dialog MS opens a modal dialog "Name It" (400x200, transient for the
 * window): an entry "Name" on top, a button "OK" filling the lower half that
 * turns sensitive MS after the entry first holds text (a validation that
 * takes a while, as a file chooser's); OK records "confirmed:<text>".
 * --spin adds a spin button "Quantity" (0 to 100, starting at 3; Up adds 1).
 * --record-pointer records what the pointer did, as the X server delivered it
 * to the app (every window of it): "button:N" for a press of button N,
 * "double:N" for a double click, "scroll:up|down|left|right" per wheel click
 * (or "scroll-smooth:DX,DY" where XInput 2 delivers the wheel as deltas),
 * "release:N:X,Y" (root pixels) and, for a press-move-release, "drag:X0,Y0->
 * X1,Y1:M" with M motion events between.
 * --password adds an entry "Password" whose text is hidden (visibility FALSE:
 * AT-SPI role "password text"), recording "password:<value>" on each change.
 * --cover-for MS puts a keep-above window "KSR Cover" exactly over the main
 * window once it is mapped and closes it MS later (-1: never).
 * --error-dialog-on-press: the --error-dialog opens when "Press me" is pressed
 * (a dialog that comes during the steps), not at start.
 * --stop-on-query: once armed by SIGUSR1, the next accessibility query of the
 * "Press me" button's states (AT-SPI GetState, as a click_element's search
 * sends) stops the app with SIGSTOP while it answers: the call is then known
 * to be in flight, received and unanswered (records "stopped-in-query").
 * --busy-first-query MS: once the window is mapped, the first question for
 * the app's accessible name (AT-SPI Get Name of the root, the first a client
 * asks of an app it found) keeps the main thread busy MS before it answers
 * (records "busy-in-query"): an app alive but slow, as on a loaded machine.
 * --many-children N adds an area "Many Cells" whose accessible is a table of
 * N cells that manages its descendants, as a spreadsheet's sheet: a cell's
 * object is made only when asked for (AT-SPI GetChildren asks for every
 * one), and the first one made records "many-child-built". */
#include <glib-unix.h>
#include <gtk/gtk.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct {
	gchar *title;
	gint slow_start_ms;
	gint crash_after_ms;
	gint exit_after_ms;
	gchar *error_dialog;
	gboolean error_dialog_on_press;
	gint dialog_after_ms;
	gint hang_after_ms;
	gboolean no_window;
	gchar *record;
	gboolean print_pid;
	gchar *first_run_dialog;
	gchar *updater_dialog;
	gint close_window_after_ms;
	gboolean record_enter;
	gboolean animate;
	gboolean no_cursor_blink;
	gboolean spin;
	gint name_dialog_ms;
	gint cover_for_ms;
	gboolean record_pointer;
	gboolean password;
	gboolean stop_on_query;
	gint splash_ms;
	gboolean splash_anon;
	gint busy_first_query_ms;
	gint many_children;
} opt = {
        .splash_ms = -1,
        .slow_start_ms = -1,
        .crash_after_ms = -1,
        .exit_after_ms = -1,
        .dialog_after_ms = 0,
        .hang_after_ms = -1,
        .close_window_after_ms = -1,
        .name_dialog_ms = -1,
        .cover_for_ms = -2,
        .busy_first_query_ms = -1,
};

static GOptionEntry entries[] = {
        {"spin", 0, 0, G_OPTION_ARG_NONE, &opt.spin, "Add a spin button \"Quantity\" (value 3)",
         NULL},
        {"title", 0, 0, G_OPTION_ARG_STRING, &opt.title, "Window title (default: KSR Test App)",
         "T"},
        {"slow-start", 0, 0, G_OPTION_ARG_INT, &opt.slow_start_ms,
         "Sleep this long before showing the window", "MS"},
        {"crash-after", 0, 0, G_OPTION_ARG_INT, &opt.crash_after_ms,
         "Die of SIGSEGV this long after the window is shown", "MS"},
        {"exit-after", 0, 0, G_OPTION_ARG_INT, &opt.exit_after_ms,
         "Exit cleanly (status 0) this long after the window is shown", "MS"},
        {"error-dialog", 0, 0, G_OPTION_ARG_STRING, &opt.error_dialog,
         "Show an error message dialog with this title", "TITLE"},
        {"error-dialog-on-press", 0, 0, G_OPTION_ARG_NONE, &opt.error_dialog_on_press,
         "Show the --error-dialog when \"Press me\" is pressed, not at start", NULL},
        {"dialog-after", 0, 0, G_OPTION_ARG_INT, &opt.dialog_after_ms,
         "Delay of the error dialog after the window is shown (default 0)", "MS"},
        {"hang-after", 0, 0, G_OPTION_ARG_INT, &opt.hang_after_ms,
         "Stop responding (main thread blocked forever) this long after the window is shown", "MS"},
        {"no-window", 0, 0, G_OPTION_ARG_NONE, &opt.no_window, "Run without any window", NULL},
        {"record", 0, 0, G_OPTION_ARG_FILENAME, &opt.record,
         "Append control events to this file, one a line", "FILE"},
        {"print-pid", 0, 0, G_OPTION_ARG_NONE, &opt.print_pid, "Print the PID on stdout", NULL},
        {"first-run-dialog", 0, 0, G_OPTION_ARG_STRING, &opt.first_run_dialog,
         "Show a plain dialog with this title (a first-run prompt), transient for the window",
         "TITLE"},
        {"updater-dialog", 0, 0, G_OPTION_ARG_STRING, &opt.updater_dialog,
         "Show a plain dialog with this title (an updater), transient for the window", "TITLE"},
        {"record-enter", 0, 0, G_OPTION_ARG_NONE, &opt.record_enter,
         "Also record the pointer entering the button and the check box (enter:NAME)", NULL},
        {"close-window-after", 0, 0, G_OPTION_ARG_INT, &opt.close_window_after_ms,
         "Destroy the main window this long after it is shown, but keep running", "MS"},
        {"animate", 0, 0, G_OPTION_ARG_NONE, &opt.animate,
         "Repaint a strip at the bottom every 16 ms, forever (a window that never goes quiet)",
         NULL},
        {"name-dialog", 0, 0, G_OPTION_ARG_INT, &opt.name_dialog_ms,
         "Open the \"Name It\" dialog; its OK turns sensitive this long after text", "MS"},
        {"record-pointer", 0, 0, G_OPTION_ARG_NONE, &opt.record_pointer,
         "Record button presses, double clicks, wheel clicks and drags", NULL},
        {"password", 0, 0, G_OPTION_ARG_NONE, &opt.password,
         "Add a password entry \"Password\" (hidden text)", NULL},
        {"cover-for", 0, 0, G_OPTION_ARG_INT, &opt.cover_for_ms,
         "Cover the window with a keep-above window for this long (-1: for good)", "MS"},
        {"no-cursor-blink", 0, 0, G_OPTION_ARG_NONE, &opt.no_cursor_blink,
         "A steady text cursor: the entry repaints only when its text changes", NULL},
        {"splash", 0, 0, G_OPTION_ARG_INT, &opt.splash_ms,
         "Show a splash window first, replaced by the main window this long after", "MS"},
        {"splash-anon", 0, 0, G_OPTION_ARG_NONE, &opt.splash_anon,
         "The splash has no window type and no WM_CLASS", NULL},
        {"stop-on-query", 0, 0, G_OPTION_ARG_NONE, &opt.stop_on_query,
         "After SIGUSR1, SIGSTOP itself inside the next state query of \"Press me\"", NULL},
        {"busy-first-query", 0, 0, G_OPTION_ARG_INT, &opt.busy_first_query_ms,
         "Once mapped, stay busy this long inside the first query of the app's name", "MS"},
        {"many-children", 0, 0, G_OPTION_ARG_INT, &opt.many_children,
         "Add a table \"Many Cells\" of N cells, each made when first asked for", "N"},
        {NULL},
};

/* A test fixture, not the runtime: GTK, fontconfig and GLib keep allocations
 * until exit, and a leak report would turn a clean exit into a failure. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}

static GMainLoop *loop;
static GtkWidget *main_window;
static GtkWidget *pressed_label;
static int press_count;

static void record(const char *fmt, ...) G_GNUC_PRINTF(1, 2);

static void record(const char *fmt, ...)
{
	if (!opt.record)
		return;
	FILE *f = fopen(opt.record, "ae");
	if (!f) {
		g_printerr("ksr-testapp: %s: %s\n", opt.record, g_strerror(errno));
		return;
	}
	va_list ap;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
}

static gboolean show_error_dialog(gpointer data);

static void on_press(GtkButton *button, gpointer data)
{
	(void)button;
	(void)data;
	char text[64];
	snprintf(text, sizeof text, "Pressed %d", ++press_count);
	gtk_label_set_text(GTK_LABEL(pressed_label), text);
	record("pressed\n");
	if (opt.error_dialog && opt.error_dialog_on_press)
		show_error_dialog(NULL);
}

static void on_toggle(GtkToggleButton *check, gpointer data)
{
	(void)data;
	record("checked:%d\n", gtk_toggle_button_get_active(check) ? 1 : 0);
}

static void on_text(GtkEditable *entry, gpointer data)
{
	(void)data;
	record("text:%s\n", gtk_entry_get_text(GTK_ENTRY(entry)));
}

static void on_password(GtkEditable *entry, gpointer data)
{
	(void)data;
	record("password:%s\n", gtk_entry_get_text(GTK_ENTRY(entry)));
}

static gboolean on_enter(GtkWidget *w, GdkEventCrossing *event, gpointer name)
{
	(void)w;
	(void)event;
	if (opt.record_enter)
		record("enter:%s\n", (const char *)name);
	return FALSE;
}

static gboolean crash_now(gpointer data)
{
	(void)data;
	signal(SIGSEGV, SIG_DFL); /* a real crash, not a sanitizer report */
	raise(SIGSEGV);
	return G_SOURCE_REMOVE;
}

static gboolean exit_now(gpointer data)
{
	(void)data;
	g_main_loop_quit(loop);
	return G_SOURCE_REMOVE;
}

static gboolean hang_now(gpointer data)
{
	(void)data;
	for (;;)
		pause(); /* no X events, no AT-SPI answers; SIGTERM/SIGKILL still end it */
	return G_SOURCE_REMOVE;
}

static void on_dialog_response(GtkDialog *dialog, gint response, gpointer data)
{
	(void)response;
	(void)data;
	gtk_widget_destroy(GTK_WIDGET(dialog));
}

static gboolean show_error_dialog(gpointer data)
{
	(void)data;
	GtkWidget *d = gtk_message_dialog_new(main_window ? GTK_WINDOW(main_window) : NULL,
	                                      GTK_DIALOG_DESTROY_WITH_PARENT, GTK_MESSAGE_ERROR,
	                                      GTK_BUTTONS_CLOSE, "Something went wrong");
	gtk_message_dialog_format_secondary_text(GTK_MESSAGE_DIALOG(d),
	                                         "ksr-testapp was asked to show this error.");
	gtk_window_set_title(GTK_WINDOW(d), opt.error_dialog);
	atk_object_set_name(gtk_widget_get_accessible(d), opt.error_dialog);
	g_signal_connect(d, "response", G_CALLBACK(on_dialog_response), NULL);
	gtk_widget_show_all(d);
	return G_SOURCE_REMOVE;
}

/* A plain GtkDialog (type dialog, transient for the main window), as first-run
 * prompts and updaters are. */
static gboolean show_plain_dialog(gpointer title)
{
	GtkWidget *d = gtk_dialog_new_with_buttons(
	        title, main_window ? GTK_WINDOW(main_window) : NULL, GTK_DIALOG_DESTROY_WITH_PARENT,
	        "_Close", GTK_RESPONSE_CLOSE, NULL);
	GtkWidget *area = gtk_dialog_get_content_area(GTK_DIALOG(d));
	gtk_container_add(GTK_CONTAINER(area), gtk_label_new(title));
	g_signal_connect(d, "response", G_CALLBACK(on_dialog_response), NULL);
	gtk_widget_show_all(d);
	return G_SOURCE_REMOVE;
}

static void name_widget(GtkWidget *w, const char *name)
{
	gtk_widget_set_name(w, name);
	atk_object_set_name(gtk_widget_get_accessible(w), name);
}

/* --name-dialog: OK turns sensitive a while after the name first has text. */
static GtkWidget *name_entry, *name_ok;
static guint enable_timer;

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
	gboolean any = *gtk_entry_get_text(GTK_ENTRY(entry)) != '\0';
	if (any && !enable_timer && !gtk_widget_get_sensitive(name_ok))
		enable_timer = g_timeout_add((guint)opt.name_dialog_ms, enable_ok, NULL);
}

static void on_name_ok(GtkButton *button, gpointer dialog)
{
	(void)button;
	record("confirmed:%s\n", gtk_entry_get_text(GTK_ENTRY(name_entry)));
	gtk_widget_destroy(GTK_WIDGET(dialog));
}

static gboolean show_name_dialog(gpointer data)
{
	(void)data;
	GtkWidget *d = gtk_window_new(GTK_WINDOW_TOPLEVEL);
	gtk_window_set_title(GTK_WINDOW(d), "Name It");
	gtk_window_set_type_hint(GTK_WINDOW(d), GDK_WINDOW_TYPE_HINT_DIALOG);
	gtk_window_set_transient_for(GTK_WINDOW(d), GTK_WINDOW(main_window));
	gtk_window_set_modal(GTK_WINDOW(d), TRUE);
	gtk_window_set_default_size(GTK_WINDOW(d), 400, 200);
	GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 12);
	gtk_container_set_border_width(GTK_CONTAINER(box), 12);
	name_entry = gtk_entry_new();
	name_widget(name_entry, "Name");
	g_signal_connect(name_entry, "changed", G_CALLBACK(on_name_changed), NULL);
	name_ok = gtk_button_new_with_label("OK");
	name_widget(name_ok, "OK");
	gtk_widget_set_sensitive(name_ok, FALSE);
	g_signal_connect(name_ok, "clicked", G_CALLBACK(on_name_ok), d);
	gtk_box_pack_start(GTK_BOX(box), name_entry, FALSE, FALSE, 0);
	gtk_box_pack_start(GTK_BOX(box), name_ok, TRUE, TRUE, 0);
	gtk_container_add(GTK_CONTAINER(d), box);
	gtk_widget_show_all(d);
	return G_SOURCE_REMOVE;
}

/* --cover-for: another top-level of ours over the whole main window, kept
 * above it (the window manager's layer), as an always-on-top panel would. */
static gboolean close_cover(gpointer cover)
{
	gtk_widget_destroy(GTK_WIDGET(cover));
	return G_SOURCE_REMOVE;
}

static gboolean show_cover(gpointer data)
{
	(void)data;
	gint x, y, w, h;
	gtk_window_get_position(GTK_WINDOW(main_window), &x, &y);
	gtk_window_get_size(GTK_WINDOW(main_window), &w, &h);
	GtkWidget *c = gtk_window_new(GTK_WINDOW_TOPLEVEL);
	gtk_window_set_title(GTK_WINDOW(c), "KSR Cover");
	gtk_window_set_keep_above(GTK_WINDOW(c), TRUE);
	gtk_window_set_default_size(GTK_WINDOW(c), w + 40, h + 80);
	gtk_window_move(GTK_WINDOW(c), x - 20, y - 40);
	gtk_window_set_accept_focus(GTK_WINDOW(c), FALSE);
	gtk_container_add(GTK_CONTAINER(c), gtk_label_new("cover"));
	gtk_widget_show_all(c);
	if (opt.cover_for_ms >= 0)
		g_timeout_add((guint)opt.cover_for_ms, close_cover, c);
	return G_SOURCE_REMOVE;
}

/* --record-pointer: every event reaches this before GTK dispatches it. */
static struct {
	gboolean down;
	gint x0, y0, moves;
} drag;

static const char *scroll_word(GdkScrollDirection d)
{
	switch (d) {
	case GDK_SCROLL_UP:
		return "up";
	case GDK_SCROLL_DOWN:
		return "down";
	case GDK_SCROLL_LEFT:
		return "left";
	case GDK_SCROLL_RIGHT:
		return "right";
	default:
		return NULL; /* smooth: recorded with its deltas */
	}
}

static void record_pointer_event(const GdkEvent *e)
{
	switch (e->type) {
	case GDK_BUTTON_PRESS:
		record("button:%u\n", e->button.button);
		drag.down = e->button.button == 1;
		drag.x0 = (gint)e->button.x_root, drag.y0 = (gint)e->button.y_root;
		drag.moves = 0;
		break;
	case GDK_2BUTTON_PRESS:
		record("double:%u\n", e->button.button);
		break;
	case GDK_MOTION_NOTIFY:
		drag.moves += drag.down && (e->motion.state & GDK_BUTTON1_MASK);
		break;
	case GDK_BUTTON_RELEASE:
		record("release:%u:%d,%d\n", e->button.button, (gint)e->button.x_root,
		       (gint)e->button.y_root);
		if (drag.down && e->button.button == 1 && drag.moves > 0)
			record("drag:%d,%d->%d,%d:%d\n", drag.x0, drag.y0, (gint)e->button.x_root,
			       (gint)e->button.y_root, drag.moves);
		drag.down = FALSE;
		break;
	case GDK_SCROLL: {
		const char *w = scroll_word(e->scroll.direction);
		if (w)
			record("scroll:%s\n", w);
		else if (e->scroll.delta_x != 0 || e->scroll.delta_y != 0)
			record("scroll-smooth:%g,%g\n", e->scroll.delta_x, e->scroll.delta_y);
		break;
	}
	default:
		break;
	}
}

static void on_any_event(GdkEvent *e, gpointer data)
{
	(void)data;
	record_pointer_event(e);
	gtk_main_do_event(e);
}

static gboolean keep_running_without_window;

static gboolean close_window_now(gpointer data)
{
	(void)data;
	keep_running_without_window = TRUE; /* the process stays, without a window */
	if (main_window)
		gtk_widget_destroy(main_window);
	return G_SOURCE_REMOVE;
}

static void after(gint ms, GSourceFunc fn)
{
	if (ms >= 0)
		g_timeout_add((guint)ms, fn, NULL);
}

/* Once the main window is on screen (or at start without one). */
static gboolean have_gtk;
static void busy_first_query(void);

static void start_timers(void)
{
	after(opt.crash_after_ms, crash_now);
	after(opt.exit_after_ms, exit_now);
	after(opt.hang_after_ms, hang_now);
	if (opt.error_dialog && !opt.error_dialog_on_press && have_gtk)
		after(opt.dialog_after_ms < 0 ? 0 : opt.dialog_after_ms, show_error_dialog);
	if (opt.first_run_dialog && have_gtk)
		g_idle_add(show_plain_dialog, opt.first_run_dialog);
	if (opt.updater_dialog && have_gtk)
		g_idle_add(show_plain_dialog, opt.updater_dialog);
	after(opt.close_window_after_ms, close_window_now);
	if (opt.name_dialog_ms >= 0 && have_gtk)
		g_idle_add(show_name_dialog, NULL);
	if (opt.cover_for_ms >= -1 && have_gtk && main_window)
		g_idle_add(show_cover, NULL);
	if (opt.busy_first_query_ms >= 0 && have_gtk)
		busy_first_query();
}

static gboolean on_map(GtkWidget *w, GdkEvent *event, gpointer data)
{
	(void)event;
	(void)data;
	g_signal_handlers_disconnect_by_func(w, G_CALLBACK(on_map), NULL);
	start_timers();
	return FALSE;
}

static void on_destroy(GtkWidget *w, gpointer data)
{
	(void)w;
	(void)data;
	main_window = NULL;
	if (!keep_running_without_window)
		g_main_loop_quit(loop);
}

/* --animate: a strip whose colour changes on every frame. */
static guint frame;

static gboolean draw_strip(GtkWidget *w, cairo_t *cr, gpointer data)
{
	(void)data;
	double v = (frame % 64) / 63.0;
	cairo_set_source_rgb(cr, v, 0.3, 1.0 - v);
	cairo_rectangle(cr, 0, 0, gtk_widget_get_allocated_width(w),
	                gtk_widget_get_allocated_height(w));
	cairo_fill(cr);
	return TRUE;
}

static gboolean next_frame(gpointer strip)
{
	frame++;
	gtk_widget_queue_draw(GTK_WIDGET(strip));
	return G_SOURCE_CONTINUE;
}

static void add_strip(GtkWidget *box)
{
	GtkWidget *strip = gtk_drawing_area_new();
	gtk_widget_set_size_request(strip, -1, 24);
	g_signal_connect(strip, "draw", G_CALLBACK(draw_strip), NULL);
	gtk_box_pack_end(GTK_BOX(box), strip, FALSE, FALSE, 0);
	g_timeout_add(16, next_frame, strip);
}

/* --stop-on-query: the button accessible's class is shared by every button,
 * so the wrapper checks which object it answers for. */
static AtkObject *query_target;
static gboolean query_armed;
static AtkStateSet *(*real_ref_state_set)(AtkObject *);

static AtkStateSet *ref_state_set_then_stop(AtkObject *obj)
{
	if (query_armed && obj == query_target) {
		query_armed = FALSE;
		record("stopped-in-query\n");
		raise(SIGSTOP); /* the D-Bus call that asked waits here for its answer */
	}
	return real_ref_state_set(obj);
}

static gboolean arm_query(gpointer data)
{
	(void)data;
	query_armed = TRUE;
	return G_SOURCE_CONTINUE;
}

static void stop_on_query(GtkWidget *button)
{
	query_target = gtk_widget_get_accessible(button);
	AtkObjectClass *k = ATK_OBJECT_GET_CLASS(query_target);
	real_ref_state_set = k->ref_state_set;
	k->ref_state_set = ref_state_set_then_stop;
	g_unix_signal_add(SIGUSR1, arm_query, NULL);
}

/* --busy-first-query: the root accessible's class answers its name. */
static AtkObject *busy_target;
static gboolean busy_armed;
static const gchar *(*real_get_name)(AtkObject *);

static const gchar *get_name_busy_first(AtkObject *obj)
{
	if (busy_armed && obj == busy_target) {
		busy_armed = FALSE;
		record("busy-in-query\n");
		g_usleep((gulong)opt.busy_first_query_ms * 1000); /* busy, not hung */
	}
	return real_get_name(obj);
}

static void busy_first_query(void)
{
	busy_target = atk_get_root();
	if (!busy_target)
		return;
	AtkObjectClass *k = ATK_OBJECT_GET_CLASS(busy_target);
	real_get_name = k->get_name;
	k->get_name = get_name_busy_first;
	busy_armed = TRUE;
}

/* --many-children: the area's accessible class (GtkWidgetAccessible) is
 * shared, so the wrappers check which object they answer for. */
static AtkObject *many_target;
static gboolean many_built;
static gint (*real_n_children)(AtkObject *);
static AtkObject *(*real_ref_child)(AtkObject *, gint);
static AtkStateSet *(*real_many_states)(AtkObject *);

static gint many_n_children(AtkObject *obj)
{
	if (obj == many_target)
		return opt.many_children;
	return real_n_children ? real_n_children(obj) : 0; /* AtkObject's default: none */
}

static AtkObject *many_ref_child(AtkObject *obj, gint i)
{
	if (obj != many_target)
		return real_ref_child ? real_ref_child(obj, i) : NULL;
	if (i < 0 || i >= opt.many_children)
		return NULL;
	if (!many_built) {
		many_built = TRUE;
		record("many-child-built\n");
	}
	AtkObject *cell = g_object_new(ATK_TYPE_OBJECT, NULL);
	atk_object_set_role(cell, ATK_ROLE_TABLE_CELL);
	atk_object_set_parent(cell, obj);
	return cell;
}

/* As a real table's: its cells are not in the bridge's cache. */
static AtkStateSet *many_states(AtkObject *obj)
{
	AtkStateSet *set = real_many_states(obj);
	if (obj == many_target)
		atk_state_set_add_state(set, ATK_STATE_MANAGES_DESCENDANTS);
	return set;
}

static void add_many(GtkWidget *box)
{
	GtkWidget *area = gtk_drawing_area_new();
	gtk_widget_set_size_request(area, -1, 40);
	many_target = gtk_widget_get_accessible(area);
	atk_object_set_name(many_target, "Many Cells");
	atk_object_set_role(many_target, ATK_ROLE_TABLE);
	AtkObjectClass *k = ATK_OBJECT_GET_CLASS(many_target);
	real_n_children = k->get_n_children;
	real_ref_child = k->ref_child;
	real_many_states = k->ref_state_set;
	k->get_n_children = many_n_children;
	k->ref_child = many_ref_child;
	k->ref_state_set = many_states;
	gtk_box_pack_start(GTK_BOX(box), area, FALSE, FALSE, 0);
}

static GtkWidget *build_window(void)
{
	GtkWidget *win = gtk_window_new(GTK_WINDOW_TOPLEVEL);
	gtk_window_set_title(GTK_WINDOW(win), opt.title ? opt.title : "KSR Test App");
	gtk_window_set_default_size(GTK_WINDOW(win), 480, 320);
	GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 12);
	gtk_container_set_border_width(GTK_CONTAINER(box), 24);

	GtkWidget *button = gtk_button_new_with_label("Press me");
	name_widget(button, "Press me");
	g_signal_connect(button, "clicked", G_CALLBACK(on_press), NULL);
	g_signal_connect(button, "enter-notify-event", G_CALLBACK(on_enter), "Press me");
	if (opt.stop_on_query)
		stop_on_query(button);
	pressed_label = gtk_label_new("Pressed 0");
	gtk_widget_set_name(pressed_label, "press-count"); /* accessible name: its text */
	GtkWidget *check = gtk_check_button_new_with_label("Enable feature");
	name_widget(check, "Enable feature");
	g_signal_connect(check, "toggled", G_CALLBACK(on_toggle), NULL);
	g_signal_connect(check, "enter-notify-event", G_CALLBACK(on_enter), "Enable feature");
	GtkWidget *entry = gtk_entry_new();
	name_widget(entry, "Text field");
	gtk_entry_set_placeholder_text(GTK_ENTRY(entry), "Type here");
	g_signal_connect(entry, "changed", G_CALLBACK(on_text), NULL);

	gtk_box_pack_start(GTK_BOX(box), button, FALSE, FALSE, 0);
	gtk_box_pack_start(GTK_BOX(box), pressed_label, FALSE, FALSE, 0);
	gtk_box_pack_start(GTK_BOX(box), check, FALSE, FALSE, 0);
	gtk_box_pack_start(GTK_BOX(box), entry, FALSE, FALSE, 0);
	if (opt.spin) {
		GtkWidget *spin = gtk_spin_button_new_with_range(0, 100, 1);
		gtk_spin_button_set_value(GTK_SPIN_BUTTON(spin), 3);
		name_widget(spin, "Quantity");
		gtk_box_pack_start(GTK_BOX(box), spin, FALSE, FALSE, 0);
	}
	if (opt.password) {
		GtkWidget *pw = gtk_entry_new();
		gtk_entry_set_visibility(GTK_ENTRY(pw), FALSE);
		name_widget(pw, "Password");
		g_signal_connect(pw, "changed", G_CALLBACK(on_password), NULL);
		gtk_box_pack_start(GTK_BOX(box), pw, FALSE, FALSE, 0);
	}
	if (opt.animate)
		add_strip(box);
	if (opt.many_children > 0)
		add_many(box);
	if (opt.no_cursor_blink)
		g_object_set(gtk_settings_get_default(), "gtk-cursor-blink", FALSE, NULL);
	gtk_container_add(GTK_CONTAINER(win), box);
	if (opt.record_pointer) /* wheel events reach the window only when it asks */
		gtk_widget_add_events(win, GDK_SCROLL_MASK | GDK_SMOOTH_SCROLL_MASK);
	g_signal_connect(win, "destroy", G_CALLBACK(on_destroy), NULL);
	g_signal_connect(win, "map-event", G_CALLBACK(on_map), NULL);
	return win;
}

/* --splash: a splash-type window first, as Audacity's "Audacity is starting
 * up..." (253x100); the main window replaces it. */
static gboolean replace_splash(gpointer splash)
{
	gtk_widget_destroy(GTK_WIDGET(splash));
	main_window = build_window();
	gtk_widget_show_all(main_window);
	return G_SOURCE_REMOVE;
}

static void show_splash(void)
{
	GtkWidget *s = gtk_window_new(GTK_WINDOW_TOPLEVEL);
	gchar *title =
	        g_strdup_printf("%s is starting up...", opt.title ? opt.title : "KSR Test App");
	gtk_window_set_title(GTK_WINDOW(s), title);
	g_free(title);
	if (!opt.splash_anon)
		gtk_window_set_type_hint(GTK_WINDOW(s), GDK_WINDOW_TYPE_HINT_SPLASHSCREEN);
	gtk_window_set_default_size(GTK_WINDOW(s), 253, 100);
	gtk_container_add(GTK_CONTAINER(s), gtk_label_new("starting up..."));
	if (opt.splash_anon) { /* realized, not mapped yet: the properties go first */
		gtk_widget_realize(s);
		GdkWindow *gw = gtk_widget_get_window(s);
		gdk_property_delete(gw, gdk_atom_intern_static_string("WM_CLASS"));
		gdk_property_delete(gw, gdk_atom_intern_static_string("_NET_WM_WINDOW_TYPE"));
	}
	gtk_widget_show_all(s);
	g_timeout_add((guint)opt.splash_ms, replace_splash, s);
}

int main(int argc, char **argv)
{
	g_set_prgname("ksr-testapp");
	GOptionContext *ctx = g_option_context_new("- deterministic GTK3 app for ksr tests");
	g_option_context_add_main_entries(ctx, entries, NULL);
	g_option_context_add_group(ctx, gtk_get_option_group(FALSE));
	GError *error = NULL;
	if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
		g_printerr("ksr-testapp: %s\n", error->message);
		g_error_free(error);
		g_option_context_free(ctx);
		return 2;
	}
	g_option_context_free(ctx);
	if (opt.print_pid) {
		printf("%d\n", (int)getpid());
		fflush(stdout);
	}
	have_gtk = gtk_init_check(&argc, &argv);
	if (!have_gtk && !opt.no_window) {
		g_printerr("ksr-testapp: cannot open display\n");
		return 1;
	}
	if (have_gtk && opt.record_pointer)
		gdk_event_handler_set(on_any_event, NULL, NULL);
	loop = g_main_loop_new(NULL, FALSE);
	if (opt.slow_start_ms > 0)
		g_usleep((gulong)opt.slow_start_ms * 1000);
	if (opt.no_window) {
		start_timers(); /* an error dialog, if asked, comes without a parent */
	} else if (opt.splash_ms >= 0) {
		show_splash();
	} else {
		main_window = build_window();
		gtk_widget_show_all(main_window);
	}
	g_main_loop_run(loop);
	if (main_window)
		gtk_widget_destroy(main_window);
	return 0;
}
