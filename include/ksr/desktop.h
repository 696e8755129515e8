/* Desktop entries (the freedesktop.org Desktop Entry spec): an installed
 * `.desktop` file found by its desktop file ID under applications/ in
 * XDG_DATA_HOME and XDG_DATA_DIRS, read with GLib's GKeyFile, and its Exec
 * turned into a command line the runtime's own launch (ksr_proc_launch) runs,
 * so a tool started this way is tracked and stopped like any spawned one. */
#ifndef KSR_DESKTOP_H
#define KSR_DESKTOP_H

#include <stdbool.h>

#include "ksr/error.h"

typedef struct ksr_desktop_entry {
	char *id;       /* the ID asked for, with ".desktop" */
	char *file;     /* the file found */
	char *name;     /* Name, localised */
	char *program;  /* the base name of the Exec's program (argv[0]) */
	char *wm_class; /* StartupWMClass, or NULL */
	char *work_dir; /* Path, or NULL */
	/* `sh -c` text: `cd -- 'Path' && exec 'argv0' 'argv1' ...`, every field
	 * code handled, every argument quoted for the shell. */
	char *command;
} ksr_desktop_entry;

/* Find and read the entry; -1 with err when it is not installed, is not an
 * Application, is Hidden, has Terminal=true (no terminal is chosen for it),
 * its TryExec or Exec program is not installed, or its Exec is invalid. */
int ksr_desktop_entry_find(const char *id, ksr_desktop_entry *out, ksr_err *err);
/* The same for one file (id: what to call it). */
int ksr_desktop_entry_load(const char *file, const char *id, ksr_desktop_entry *out, ksr_err *err);
void ksr_desktop_entry_clear(ksr_desktop_entry *e); /* NULL-safe */

/* Exec's field codes with no files to open, as GLib expands them: %f %F %u %U
 * dropped, %i "--icon ICON" (nothing without an icon), %c the name, %k the
 * file, %% a "%"; the deprecated %d %D %n %N %v %m removed; any other is an
 * error. Expanded values are quoted for the argument parser. NULL with err on
 * failure; the caller frees. */
char *ksr_desktop_exec_expand(const char *exec, const char *icon, const char *name,
                              const char *file, ksr_err *err);

#endif
