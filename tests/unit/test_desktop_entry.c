/* Desktop entries (ksr/desktop.h) against real files in a scratch data folder:
 * the search (XDG_DATA_HOME, then XDG_DATA_DIRS, a subfolder's ID), the field
 * codes with no files, the quoting, Path, and the entries refused. */
#include "ksr/desktop.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[] = "/tmp/ksr-test-desktop-XXXXXX";

static void write_entry(const char *dir, const char *name, const char *body)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(body, f);
		fclose(f);
	}
}

static void expand(void)
{
	ksr_err err = {0};
	char *s = ksr_desktop_exec_expand("app %f %F %u %U --x", NULL, "N", "/f", &err);
	is_str(s, "app     --x", "%f %F %u %U dropped with no files");
	free(s);
	s = ksr_desktop_exec_expand("app %i %c %k 100%%", "my icon", "Name's", "/a b.desktop",
	                            &err);
	is_str(s, "app --icon 'my icon' 'Name'\\''s' '/a b.desktop' 100%",
	       "%i %c %k quoted, %% a %");
	free(s);
	s = ksr_desktop_exec_expand("app %i", NULL, "N", "/f", &err);
	is_str(s, "app ", "%i without an icon is nothing");
	free(s);
	s = ksr_desktop_exec_expand("app %d %D %n %N %v %m", NULL, "N", "/f", &err);
	is_str(s, "app      ", "the deprecated codes removed");
	free(s);
	ok(ksr_desktop_exec_expand("app %z", NULL, "N", "/f", &err) == NULL &&
	           strstr(err.msg, "%z, which is no field code"),
	   "an unknown field code is an error (%s)", err.msg);
	ok(ksr_desktop_exec_expand("app %", NULL, "N", "/f", &err) == NULL,
	   "a lone %% is an error");
}

static void search(void)
{
	char home[300], sys[300], apps[320], sub[330], work[320];
	snprintf(home, sizeof home, "%s/home", root);
	snprintf(sys, sizeof sys, "%s/sys", root);
	snprintf(work, sizeof work, "%s/work dir", root);
	mkdir(home, 0700), mkdir(sys, 0700), mkdir(work, 0700);
	snprintf(apps, sizeof apps, "%s/applications", home);
	mkdir(apps, 0700);
	char sysapps[320];
	snprintf(sysapps, sizeof sysapps, "%s/applications", sys);
	mkdir(sysapps, 0700);
	snprintf(sub, sizeof sub, "%s/kde", sysapps);
	mkdir(sub, 0700);
	char body[800];
	snprintf(body, sizeof body,
	         "[Desktop Entry]\nType=Application\nName=Ed\nName[xx]=Other\nExec=sh -c \"echo "
	         "\\\\\"a b\\\\\"\" %%U\nPath=%s\nStartupWMClass=EdClass\n",
	         work);
	write_entry(apps, "ed.desktop", body);
	write_entry(sysapps, "ed.desktop",
	            "[Desktop Entry]\nType=Application\nName=Sys\nExec=sys\n");
	write_entry(sub, "term.desktop", "[Desktop Entry]\nType=Application\nName=T\nExec=sh\n");
	write_entry(sysapps, "tty.desktop",
	            "[Desktop Entry]\nType=Application\nName=Tty\nExec=sh\nTerminal=true\n");
	write_entry(sysapps, "gone.desktop",
	            "[Desktop Entry]\nType=Application\nName=G\nExec=sh\nHidden=true\n");
	write_entry(sysapps, "missing.desktop",
	            "[Desktop Entry]\nType=Application\nName=M\nExec=ksr-no-such-program-x\n");
	write_entry(sysapps, "link.desktop", "[Desktop Entry]\nType=Link\nName=L\nURL=x\n");
	setenv("XDG_DATA_HOME", home, 1);
	setenv("XDG_DATA_DIRS", sys, 1);

	ksr_desktop_entry e;
	ksr_err err = {0};
	ok(ksr_desktop_entry_find("ed", &e, &err) == 0, "found without .desktop (%s)", err.msg);
	is_str(e.name, "Ed", "Name");
	is_str(e.wm_class, "EdClass", "StartupWMClass");
	is_str(e.program, "sh", "the Exec's program");
	char want[600];
	snprintf(want, sizeof want, "cd -- '%s' && exec 'sh' '-c' 'echo \"a b\"'", work);
	is_str(e.command, want, "XDG_DATA_HOME first; Path; quoting kept; %U dropped");
	ksr_desktop_entry_clear(&e);

	ok(ksr_desktop_entry_find("kde-term.desktop", &e, &err) == 0,
	   "a subfolder's entry by its ID (%s)", err.msg);
	is_str(e.command, "exec 'sh'", "no Path: no cd");
	ksr_desktop_entry_clear(&e);

	ok(ksr_desktop_entry_find("tty", &e, &err) < 0 && strstr(err.msg, "Terminal=true"),
	   "Terminal=true refused (%s)", err.msg);
	ok(ksr_desktop_entry_find("gone", &e, &err) < 0 && strstr(err.msg, "Hidden=true"),
	   "Hidden refused (%s)", err.msg);
	ok(ksr_desktop_entry_find("missing", &e, &err) < 0 && strstr(err.msg, "not installed"),
	   "a program not on PATH refused (%s)", err.msg);
	ok(ksr_desktop_entry_find("link", &e, &err) < 0 && strstr(err.msg, "Type=Application"),
	   "a Link entry refused (%s)", err.msg);
	ok(ksr_desktop_entry_find("nope", &e, &err) < 0 && strstr(err.msg, "looked in") &&
	           strstr(err.msg, apps),
	   "not installed: the folders looked in (%s)", err.msg);
}

int main(void)
{
	if (!mkdtemp(root))
		return 1;
	expand();
	search();
	char cmd[400];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", root);
	return tap_done();
}
