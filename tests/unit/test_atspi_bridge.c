/* ksr_atspi_bridge_of and its cause on real processes: python3 processes that
 * load the toolkits' real libraries (GTK 2 with and without its atk-bridge
 * module, GTK 3 with NO_AT_BRIDGE=1, Qt 5) and then wait, read through their
 * /proc/PID/maps and environ; and a process that is gone. */
#include "ksr/atspi.h"
#include "tap.h"

#include <glob.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define READY_MS 20000

static const char loader[] = "import ctypes, sys\n"
                             "try:\n"
                             "    [ctypes.CDLL(lib) for lib in sys.argv[1:]]\n"
                             "except OSError as e:\n"
                             "    print('missing', e, flush=True); sys.exit(0)\n"
                             "print('ready', flush=True)\n"
                             "sys.stdin.read()\n";

typedef struct child {
	int pid, in_fd, out_fd; /* out_fd stays open until it stops: no SIGPIPE there */
	char said[200];
} child;

/* python3 with libs loaded (NULL-terminated) and env_set ("NAME=VALUE" or
 * NULL) in its environment; waits for its "ready" (or "missing ...") line. */
static bool start_loader(child *c, const char *const *libs, const char *env_set)
{
	int in[2], out[2];
	if (pipe(in) < 0 || pipe(out) < 0)
		return false;
	*c = (child){0};
	c->pid = fork();
	if (c->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		if (env_set)
			putenv((char *)env_set);
		const char *argv[16] = {"python3", "-c", loader};
		int n = 3;
		for (size_t i = 0; libs[i] && n < 15; i++)
			argv[n++] = libs[i];
		execvp("python3", (char *const *)argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->in_fd = in[1];
	struct pollfd p = {.fd = out[0], .events = POLLIN};
	ssize_t n = poll(&p, 1, READY_MS) == 1 ? read(out[0], c->said, sizeof c->said - 1) : -1;
	c->out_fd = out[0];
	if (n > 0)
		c->said[n] = '\0';
	return n > 0 && strncmp(c->said, "ready", 5) == 0;
}

static void stop_loader(child *c)
{
	close(c->in_fd); /* its read of stdin ends: it exits */
	int status;
	waitpid(c->pid, &status, 0);
	close(c->out_fd);
}

static bool has(const char *s, const char *part)
{
	return s && strstr(s, part) != NULL;
}

static void plain_process(void)
{
	const char *const libs[] = {NULL};
	child c;
	ok(start_loader(&c, libs, NULL), "python3 started: %s", c.said);
	ksr_atspi_bridge b;
	is_int(ksr_atspi_bridge_of(c.pid, &b), 0, "a live process of ours is read");
	ok(b.readable && !b.toolkit && !b.loaded, "no toolkit, no bridge (%s)",
	   b.toolkit ? b.toolkit : "none");
	char cause[400];
	ksr_atspi_bridge_cause(&b, c.pid, true, cause, sizeof cause);
	ok(has(cause, "loads no accessibility bridge"), "cause: %s", cause);
	stop_loader(&c);
	is_int(ksr_atspi_bridge_of(c.pid, &b), -1, "a process that is gone is not read");
	ksr_atspi_bridge_cause(&b, c.pid, true, cause, sizeof cause);
	is_str(cause, "", "and shows no cause");
}

static char *gtk2_module(void)
{
	glob_t g;
	char *path = NULL;
	if (glob("/usr/lib/*/gtk-2.0/modules/libatk-bridge.so", 0, NULL, &g) == 0 && g.gl_pathc)
		path = strdup(g.gl_pathv[0]);
	globfree(&g);
	return path;
}

static void gtk2(void)
{
	const char *const libs[] = {"libgtk-x11-2.0.so.0", NULL};
	child c;
	if (!start_loader(&c, libs, NULL)) {
		skip_unless_installable("GTK 2 (libgtk2.0-0, with gpicview): %s", c.said);
		stop_loader(&c);
		return;
	}
	ksr_atspi_bridge b;
	ksr_atspi_bridge_of(c.pid, &b);
	is_str(b.toolkit, "GTK 2", "GTK 2 is told by libgtk-x11-2.0");
	ok(!b.loaded, "without the module, no bridge");
	char cause[400];
	ksr_atspi_bridge_cause(&b, c.pid, true, cause, sizeof cause);
	char want[80];
	snprintf(want, sizeof want, "the app (pid %d) is a GTK 2 app", c.pid);
	ok(strncmp(cause, want, strlen(want)) == 0, "the cause opens with it: %s", cause);
	ok(has(cause, "GTK_MODULES=gail:atk-bridge") && !has(cause, "Qt"),
	   "says what to set, no Qt guess");
	stop_loader(&c);

	char *module = gtk2_module();
	const char *const with[] = {"libgtk-x11-2.0.so.0", module ? module : "libatk-bridge.so",
	                            NULL};
	if (!module || !start_loader(&c, with, NULL)) {
		skip_unless_installable("GTK 2's atk-bridge module (libatk-adaptor): %s",
		                        module ? c.said : "not found");
		if (module)
			stop_loader(&c);
		free(module);
		return;
	}
	ksr_atspi_bridge_of(c.pid, &b);
	ok(b.bridge_lib && b.loaded, "with the module, the bridge is loaded");
	ksr_atspi_bridge_cause(&b, c.pid, true, cause, sizeof cause);
	is_str(cause, "", "and no cause is claimed");
	stop_loader(&c);
	free(module);
}

/* Both GTKs mapped (a GTK 2 app with a GTK 3 plugin): GTK 2 names it, in
 * whatever order the maps list them. */
static void both_gtks(void)
{
	const char *const libs[] = {"libgtk-3.so.0", "libgtk-x11-2.0.so.0", NULL};
	child c;
	if (!start_loader(&c, libs, NULL)) {
		skip_unless_installable("GTK 2 and GTK 3: %s", c.said);
		stop_loader(&c);
		return;
	}
	ksr_atspi_bridge b;
	ksr_atspi_bridge_of(c.pid, &b);
	is_str(b.toolkit, "GTK 2", "GTK 2 names a process that maps both");
	ok(b.bridge_lib, "GTK 3's atk-bridge is mapped too");
	stop_loader(&c);
}

static void gtk3_turned_off(void)
{
	const char *const libs[] = {"libgtk-3.so.0", NULL};
	child c;
	if (!start_loader(&c, libs, "NO_AT_BRIDGE=1")) {
		skip_unless_installable("GTK 3 (libgtk-3-0): %s", c.said);
		stop_loader(&c);
		return;
	}
	ksr_atspi_bridge b;
	ksr_atspi_bridge_of(c.pid, &b);
	is_str(b.toolkit, "GTK 3", "GTK 3");
	ok(b.loaded, "its atk-bridge comes linked");
	is_str(b.off_by, "NO_AT_BRIDGE=1", "the environment turns it off");
	char cause[400];
	ksr_atspi_bridge_cause(&b, c.pid, true, cause, sizeof cause);
	ok(has(cause, "has NO_AT_BRIDGE=1 in its environment"), "cause: %s", cause);
	stop_loader(&c);
}

static void qt5(void)
{
	const char *const libs[] = {"libQt5Gui.so.5", NULL};
	child c;
	if (!start_loader(&c, libs, NULL)) {
		skip_unless_installable("Qt 5 (libqt5gui5, with kcalc): %s", c.said);
		stop_loader(&c);
		return;
	}
	ksr_atspi_bridge b;
	ksr_atspi_bridge_of(c.pid, &b);
	is_str(b.toolkit, "Qt 5", "Qt 5");
	ok(b.toolkit_bridge && b.loaded && !b.qt_always_on, "its bridge is built in");
	char cause[400];
	ksr_atspi_bridge_cause(&b, c.pid, false, cause, sizeof cause);
	ok(has(cause, "is a Qt 5 app") && has(cause, "root has none"), "no root property: %s",
	   cause);
	ksr_atspi_bridge_cause(&b, c.pid, true, cause, sizeof cause);
	is_str(cause, "", "with the property, nothing seen (the guesses follow)");
	stop_loader(&c);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	plain_process();
	gtk2();
	both_gtks();
	gtk3_turned_off();
	qt5();
	return tap_done();
}
