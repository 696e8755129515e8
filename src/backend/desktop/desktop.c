/* Desktop entries (ksr/desktop.h). GKeyFile reads the file (groups, the
 * string escapes, localised keys); the search, the field codes and the
 * command line are here. GDesktopAppInfo is not used: it launches the program
 * itself (the runtime must launch it, to log, watch and stop it like every
 * spawned tool) and gives no expanded command line to hand over. */
#include "ksr/desktop.h"

#include <glib.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ksr/error.h"

#define GROUP "Desktop Entry"

void ksr_desktop_entry_clear(ksr_desktop_entry *e)
{
	if (!e)
		return;
	free(e->id);
	free(e->file);
	free(e->name);
	free(e->program);
	free(e->wm_class);
	free(e->work_dir);
	free(e->command);
	memset(e, 0, sizeof *e);
}

/* ---- Exec ----------------------------------------------------------------------- */

static void add_quoted(GString *s, const char *text)
{
	char *q = g_shell_quote(text);
	g_string_append(s, q);
	g_free(q);
}

char *ksr_desktop_exec_expand(const char *exec, const char *icon, const char *name,
                              const char *file, ksr_err *err)
{
	GString *s = g_string_new(NULL);
	for (const char *p = exec; *p; p++) {
		if (*p != '%') {
			g_string_append_c(s, *p);
			continue;
		}
		char code = *++p;
		if (code && strchr("fFuUdDnNvm", code)) {
			/* no files or URLs to open; the deprecated codes are removed */
		} else if (code == 'i') {
			if (icon && *icon) {
				g_string_append(s, "--icon ");
				add_quoted(s, icon);
			}
		} else if (code == 'c') {
			add_quoted(s, name ? name : "");
		} else if (code == 'k') {
			add_quoted(s, file ? file : "");
		} else if (code == '%') {
			g_string_append_c(s, '%');
		} else {
			ksr_err_set(err,
			            "Exec has %s%c, which is no field code of the Desktop Entry "
			            "spec (%%f %%F %%u %%U %%i %%c %%k %%%%)",
			            code ? "%" : "a lone %", code ? code : ' ');
			g_string_free(s, TRUE);
			return NULL;
		}
	}
	char *out = ksr_xstrdup(s->str);
	g_string_free(s, TRUE);
	return out;
}

/* An installed program: a path that is executable, or a name on PATH. */
static bool installed(const char *program)
{
	if (strchr(program, '/'))
		return access(program, X_OK) == 0;
	char *found = g_find_program_in_path(program);
	g_free(found);
	return found != NULL;
}

/* `cd -- 'Path' && exec 'argv0' ...`: exec, so the launch shell becomes the
 * program (its pid, its process group). */
static char *command_line(char **argv, const char *work_dir)
{
	GString *s = g_string_new(NULL);
	if (work_dir) {
		g_string_append(s, "cd -- ");
		add_quoted(s, work_dir);
		g_string_append(s, " && ");
	}
	g_string_append(s, "exec");
	for (char **a = argv; *a; a++) {
		g_string_append_c(s, ' ');
		add_quoted(s, *a);
	}
	char *out = ksr_xstrdup(s->str);
	g_string_free(s, TRUE);
	return out;
}

/* Exec, expanded and split as the spec's quoting (GLib's shell rules) says. */
static int read_exec(GKeyFile *kf, const char *file, ksr_desktop_entry *out, ksr_err *err)
{
	char *exec = g_key_file_get_string(kf, GROUP, "Exec", NULL);
	char *icon = g_key_file_get_string(kf, GROUP, "Icon", NULL);
	if (!exec || !*exec) {
		g_free(exec), g_free(icon);
		return ksr_err_set(err, "the entry %s has no Exec", file);
	}
	char *line = ksr_desktop_exec_expand(exec, icon, out->name, file, err);
	g_free(exec), g_free(icon);
	if (!line)
		return -1;
	char **argv = NULL;
	GError *gerr = NULL;
	if (!g_shell_parse_argv(line, NULL, &argv, &gerr)) {
		ksr_err_set(err, "the entry %s has an Exec that cannot be split (%s): %.200s", file,
		            gerr ? gerr->message : "?", line);
		g_clear_error(&gerr);
		free(line);
		return -1;
	}
	free(line);
	int rc = 0;
	if (!installed(argv[0]))
		rc = ksr_err_set(err,
		                 "the entry %s runs '%s', which is not installed (not on PATH)",
		                 file, argv[0]);
	else {
		char *base = g_path_get_basename(argv[0]);
		out->program = ksr_xstrdup(base);
		g_free(base);
		out->command = command_line(argv, out->work_dir);
	}
	g_strfreev(argv);
	return rc;
}

static char *key_string(GKeyFile *kf, const char *key, bool localised)
{
	char *v = localised ? g_key_file_get_locale_string(kf, GROUP, key, NULL, NULL)
	                    : g_key_file_get_string(kf, GROUP, key, NULL);
	char *out = v && *v ? ksr_xstrdup(v) : NULL;
	g_free(v);
	return out;
}

/* What makes an entry one the runtime will not start. */
static int refuse(GKeyFile *kf, const char *file, ksr_err *err)
{
	char *type = g_key_file_get_string(kf, GROUP, "Type", NULL);
	bool app = type && !strcmp(type, "Application");
	g_free(type);
	if (!app)
		return ksr_err_set(err, "the entry %s is not Type=Application", file);
	if (g_key_file_get_boolean(kf, GROUP, "Hidden", NULL))
		return ksr_err_set(err, "the entry %s is Hidden=true (deleted, as the spec says)",
		                   file);
	if (g_key_file_get_boolean(kf, GROUP, "Terminal", NULL))
		return ksr_err_set(err,
		                   "the entry %s has Terminal=true, which spawn does not support "
		                   "(it picks no terminal emulator: spawn the terminal with "
		                   "command: instead)",
		                   file);
	char *try_exec = g_key_file_get_string(kf, GROUP, "TryExec", NULL);
	bool missing = try_exec && *try_exec && !installed(try_exec);
	if (missing)
		ksr_err_set(err, "the entry %s has TryExec=%.200s, which is not installed", file,
		            try_exec);
	g_free(try_exec);
	return missing ? -1 : 0;
}

int ksr_desktop_entry_load(const char *file, const char *id, ksr_desktop_entry *out, ksr_err *err)
{
	memset(out, 0, sizeof *out);
	GKeyFile *kf = g_key_file_new();
	GError *gerr = NULL;
	if (!g_key_file_load_from_file(kf, file, G_KEY_FILE_NONE, &gerr)) {
		ksr_err_set(err, "the entry %s cannot be read: %s", file,
		            gerr ? gerr->message : "?");
		g_clear_error(&gerr);
		g_key_file_free(kf);
		return -1;
	}
	int rc = refuse(kf, file, err);
	if (rc == 0) {
		out->id = ksr_xstrdup(id);
		out->file = ksr_xstrdup(file);
		out->name = key_string(kf, "Name", true);
		out->wm_class = key_string(kf, "StartupWMClass", false);
		out->work_dir = key_string(kf, "Path", false);
		struct stat st;
		if (out->work_dir && (stat(out->work_dir, &st) < 0 || !S_ISDIR(st.st_mode)))
			rc = ksr_err_set(err, "the entry %s has Path=%.200s, which is no folder",
			                 file, out->work_dir);
		else
			rc = read_exec(kf, file, out, err);
	}
	g_key_file_free(kf);
	if (rc < 0)
		ksr_desktop_entry_clear(out);
	return rc;
}

/* ---- the search ------------------------------------------------------------------ */

/* XDG_DATA_HOME (default ~/.local/share), then XDG_DATA_DIRS (default
 * /usr/local/share:/usr/share), read now (GLib's own copies are cached at
 * first use). */
static char **data_dirs(void)
{
	GPtrArray *dirs = g_ptr_array_new();
	const char *home = getenv("XDG_DATA_HOME"), *user = getenv("HOME");
	if (home && *home == '/')
		g_ptr_array_add(dirs, g_strdup(home));
	else if (user && *user)
		g_ptr_array_add(dirs, g_build_filename(user, ".local", "share", NULL));
	const char *sys = getenv("XDG_DATA_DIRS");
	char **parts = g_strsplit(sys && *sys ? sys : "/usr/local/share:/usr/share", ":", -1);
	for (char **p = parts; *p; p++)
		if (**p == '/')
			g_ptr_array_add(dirs, g_strdup(*p));
	g_strfreev(parts);
	g_ptr_array_add(dirs, NULL);
	return (char **)g_ptr_array_free(dirs, FALSE);
}

/* The file for ID in one applications/ folder: ID itself, or (an ID made
 * from a subfolder's path, '/' written '-') with one '-' read as a folder. */
static char *file_in(const char *apps, const char *id)
{
	char *f = g_build_filename(apps, id, NULL);
	if (g_file_test(f, G_FILE_TEST_IS_REGULAR))
		return f;
	g_free(f);
	for (const char *dash = strchr(id, '-'); dash; dash = strchr(dash + 1, '-')) {
		char *sub = g_strndup(id, (size_t)(dash - id));
		f = g_build_filename(apps, sub, dash + 1, NULL);
		g_free(sub);
		if (g_file_test(f, G_FILE_TEST_IS_REGULAR))
			return f;
		g_free(f);
	}
	return NULL;
}

int ksr_desktop_entry_find(const char *id, ksr_desktop_entry *out, ksr_err *err)
{
	memset(out, 0, sizeof *out);
	char *full =
	        g_str_has_suffix(id, ".desktop") ? g_strdup(id) : g_strconcat(id, ".desktop", NULL);
	char **dirs = data_dirs();
	char *file = NULL;
	GString *looked = g_string_new(NULL);
	for (char **d = dirs; *d && !file; d++) {
		char *apps = g_build_filename(*d, "applications", NULL);
		file = file_in(apps, full);
		g_string_append_printf(looked, "%s%s", looked->len ? ", " : "", apps);
		g_free(apps);
	}
	int rc = file ? ksr_desktop_entry_load(file, full, out, err)
	              : ksr_err_set(err, "no desktop entry %s is installed (looked in %.600s)",
	                            full, looked->str);
	g_string_free(looked, TRUE);
	g_free(file);
	g_strfreev(dirs);
	g_free(full);
	return rc;
}
