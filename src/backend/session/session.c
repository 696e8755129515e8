/* The embedded desktop session: an X server (Xvfb, or Xtigervnc/Xvnc as in a
 * Kasm session, with the user's own HOME and XDG folders as there; Xvfb with
 * private XDG folders; either with a private HOME) on a display it picks itself
 * (-displayfd, so parallel runs never collide), a private D-Bus session bus
 * and the AT-SPI bus launcher, a window manager (openbox or xfwm4, the XFCE
 * one Kasm's images run); every process started here
 * is stopped by PID (and process group) and reaped. The order is the one in
 * docs/accessibility.md (--xvfb): the session bus and the a11y bus must
 * exist before any app starts, or GTK apps autolaunch a bus of their own;
 * parts that need nothing of each other start side by side (start_parts). */
#include "ksr/session.h"
#include "ksr/atspi.h"
#include "ksr/evidence.h"
#include "ksr/proc.h"
#include "ksr/x11.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define STOP_GRACE_MS 2000
#define ENV_TOOL_MS   5000 /* dbus-update-activation-environment */
#define BUS_LAUNCHER  "/usr/libexec/at-spi-bus-launcher"

enum { ENV_DISPLAY, ENV_CONFIG, ENV_DATA, ENV_CACHE, ENV_RUNTIME, ENV_HOME, ENV_DBUS, ENV_COUNT };

static const char *const env_names[ENV_COUNT] = {
        "DISPLAY", "XDG_CONFIG_HOME",          "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR",
        "HOME",    "DBUS_SESSION_BUS_ADDRESS",
};

/* Whose folders the session's apps get (docs/cli.md#whose-home-the-apps-get). */
typedef enum folders_kind {
	FOLDERS_USER,         /* HOME and XDG as they are (Xvnc: as in a Kasm session) */
	FOLDERS_PRIVATE_XDG,  /* private XDG config/data/cache folders, HOME as it is (Xvfb) */
	FOLDERS_PRIVATE_HOME, /* a private HOME and private XDG folders (--private-home) */
} folders_kind;

struct ksr_session {
	int xvfb_pid, wm_pid; /* the X server (Xvfb or Xvnc) and the window manager */
	const char *server_name, *wm_name;
	int vnc_port;
	int dbus_pid, a11y_pid; /* dbus-daemon --session; at-spi-bus-launcher */
	char *dbus_address;
	char *a11y_error; /* why the session bus or AT-SPI bus is missing, or NULL */
	char *dir;        /* the private temp folder, removed at stop */
	char *log_path;   /* Xvfb and openbox output */
	char display[32];
	folders_kind folders;
	/* The environment before start, restored at stop. */
	char *saved_env[ENV_COUNT];
	bool env_set;
	int64_t server_ms, buses_ms, wm_ms; /* each part ready, from the start */
	bool signalled;                     /* ksr_session_signal: SIGTERM sent to every part */
	ksr_deadline stop_by;               /* then, when they are killed if still there */
};

int ksr_session_parse_size(const char *text, int *w, int *h)
{
	if (!text)
		return -1;
	char *end;
	errno = 0;
	long a = strtol(text, &end, 10);
	if (end == text || (*end != 'x' && *end != 'X') || *text == '-' || *text == '+')
		return -1;
	const char *second = end + 1;
	if (*second < '0' || *second > '9')
		return -1;
	long b = strtol(second, &end, 10);
	if (*end || errno || a < 1 || b < 1 || a > 32767 || b > 32767)
		return -1;
	*w = (int)a;
	*h = (int)b;
	return 0;
}

int ksr_session_parse_server(const char *text, ksr_server_kind *out)
{
	static const char *const names[] = {"auto", "xvfb", "xvnc"};
	for (int i = 0; text && i < 3; i++)
		if (strcmp(text, names[i]) == 0) {
			*out = (ksr_server_kind)i;
			return 0;
		}
	return -1;
}

int ksr_session_parse_wm(const char *text, ksr_wm_kind *out)
{
	static const char *const names[] = {"auto", "openbox", "xfwm4"};
	for (int i = 0; text && i < 3; i++)
		if (strcmp(text, names[i]) == 0) {
			*out = (ksr_wm_kind)i;
			return 0;
		}
	return -1;
}

const char *ksr_session_server_name(const ksr_session *s)
{
	return s ? s->server_name : NULL;
}

const char *ksr_session_wm_name(const ksr_session *s)
{
	return s ? s->wm_name : NULL;
}

int ksr_session_vnc_port(const ksr_session *s)
{
	return s ? s->vnc_port : 0;
}

const char *ksr_session_display(const ksr_session *s)
{
	return s ? s->display : NULL;
}

int ksr_session_xvfb_pid(const ksr_session *s)
{
	return s ? s->xvfb_pid : 0;
}

int ksr_session_wm_pid(const ksr_session *s)
{
	return s ? s->wm_pid : 0;
}

int ksr_session_dbus_pid(const ksr_session *s)
{
	return s ? s->dbus_pid : 0;
}

void ksr_session_start_times(const ksr_session *s, int64_t *server_ms, int64_t *buses_ms,
                             int64_t *wm_ms)
{
	*server_ms = s ? s->server_ms : 0;
	*buses_ms = s ? s->buses_ms : 0;
	*wm_ms = s ? s->wm_ms : 0;
}

const char *ksr_session_a11y_error(const ksr_session *s)
{
	return s ? s->a11y_error : NULL;
}

const char *ksr_session_folders_name(const ksr_session *s)
{
	static const char *const names[] = {"the user's HOME and XDG folders",
	                                    "private XDG folders",
	                                    "a private HOME and XDG folders"};
	return s ? names[s->folders] : NULL;
}

/* An Xvnc session asked for by name is the Kasm kind: the image's baked-in
 * configuration in the user's home is what gets tested. Xvfb (and auto)
 * keep their private folders, so that runs stay independent. */
static folders_kind pick_folders(const ksr_session_opts *o)
{
	if (o->private_home)
		return FOLDERS_PRIVATE_HOME;
	return o->server == KSR_SERVER_XVNC ? FOLDERS_USER : FOLDERS_PRIVATE_XDG;
}

/* ---- folders and environment ---- */

static int make_dirs(ksr_session *s, ksr_err *err)
{
	const char *tmp = getenv("TMPDIR");
	char *tmpl = ksr_xasprintf("%s/ksr-session-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(tmpl)) {
		ksr_err_set(err, "cannot create a session folder %s: %s", tmpl, strerror(errno));
		free(tmpl);
		return -1;
	}
	s->dir = tmpl;
	static const char *const subs[] = {"config", "data", "cache", "runtime", "home"};
	for (size_t i = 0; i < sizeof subs / sizeof *subs; i++) {
		char *p = ksr_xasprintf("%s/%s", s->dir, subs[i]);
		int r = mkdir(p, 0700);
		if (r < 0)
			ksr_err_set(err, "cannot create %s: %s", p, strerror(errno));
		free(p);
		if (r < 0)
			return -1;
	}
	return 0;
}

/* Whether the session sets variable i to its own folder: the XDG folders
 * unless the user's are wanted, HOME only when a private one is, and the
 * runtime folder (per session by definition) wherever the user has none. */
static bool own_folder(const ksr_session *s, int i)
{
	if (i == ENV_HOME)
		return s->folders == FOLDERS_PRIVATE_HOME;
	if (i == ENV_RUNTIME)
		return s->folders != FOLDERS_USER || !s->saved_env[i];
	return s->folders != FOLDERS_USER;
}

static void set_env(ksr_session *s)
{
	for (int i = 0; i < ENV_COUNT; i++) {
		const char *old = getenv(env_names[i]);
		s->saved_env[i] = old ? ksr_xstrdup(old) : NULL;
	}
	s->env_set = true;
	static const char *const subs[ENV_COUNT] = {NULL,    "config",  "data",
	                                            "cache", "runtime", "home"};
	/* No display until the X server names it (the session bus, started
	 * meanwhile, needs none). */
	if (s->display[0])
		setenv("DISPLAY", s->display, 1);
	else
		unsetenv("DISPLAY");
	for (int i = ENV_CONFIG; i <= ENV_HOME; i++) {
		if (!own_folder(s, i))
			continue;
		char *p = ksr_xasprintf("%s/%s", s->dir, subs[i]);
		setenv(env_names[i], p, 1);
		free(p);
	}
}

static void restore_env(ksr_session *s)
{
	if (!s->env_set)
		return;
	for (int i = 0; i < ENV_COUNT; i++) {
		if (s->saved_env[i])
			setenv(env_names[i], s->saved_env[i], 1);
		else
			unsetenv(env_names[i]);
		free(s->saved_env[i]);
		s->saved_env[i] = NULL;
	}
	s->env_set = false;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

static void remove_tree(const char *dir)
{
	if (dir)
		nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The last bytes of the log, on one line, for an error message. */
static void log_tail(const char *path, char *out, size_t cap)
{
	out[0] = '\0';
	int fd = path ? open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK) : -1;
	if (fd < 0)
		return;
	char buf[240];
	off_t end = lseek(fd, 0, SEEK_END);
	off_t from = end > (off_t)sizeof buf - 1 ? end - (off_t)sizeof buf + 1 : 0;
	ssize_t n = pread(fd, buf, sizeof buf - 1, from);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\n' || buf[i] == '\r')
			buf[i] = '|';
	snprintf(out, cap, "; log: %s%s", from > 0 ? "..." : "", buf);
}

/* ---- processes ---- */

static void child_exec(char *const argv[], char *const envp[], int nullfd, int logfd, int keep_fd,
                       int errfd, pid_t parent)
{
	/* The session dies with the runtime on every exit path, a crash or a
	 * SIGKILL included: SIGTERM when the thread that forked it ends (and at
	 * once if the runtime is already gone). */
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
		_exit(127);
	setpgid(0, 0);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL); /* ignored dispositions survive exec */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	if (dup2(nullfd, 0) < 0 || dup2(logfd, 1) < 0 || dup2(logfd, 2) < 0)
		_exit(127);
	if (keep_fd >= 0)
		fcntl(keep_fd, F_SETFD, 0);
	execvpe(argv[0], argv, envp);
	int e = errno;
	ssize_t r = write(errfd, &e, sizeof e);
	(void)r;
	_exit(127);
}

/* fork/exec argv in its own process group, output to logfd; keep_fd (or -1)
 * stays open in the child, every other descriptor of ours is CLOEXEC. */
static int spawn(char *const argv[], int logfd, int keep_fd, ksr_err *err)
{
	int errpipe[2];
	int nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (nullfd < 0)
		return ksr_err_errno(err, "/dev/null");
	if (pipe2(errpipe, O_CLOEXEC) < 0) {
		close(nullfd);
		return ksr_err_errno(err, "pipe");
	}
	/* The session's parts (X server, window manager, dbus-daemon and what it
	 * starts) never get the runtime's credentials, as the app does not. */
	char **envp = ksr_proc_child_environ();
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0)
		child_exec(argv, envp, nullfd, logfd, keep_fd, errpipe[1], parent);
	free(envp);
	close(nullfd);
	close(errpipe[1]);
	int child_errno = 0;
	ssize_t n = pid > 0 ? read(errpipe[0], &child_errno, sizeof child_errno) : 0;
	close(errpipe[0]);
	if (pid < 0)
		return ksr_err_errno(err, "fork");
	setpgid(pid, pid); /* also here, so a kill of the group right away finds it */
	if (n == (ssize_t)sizeof child_errno) {
		waitpid(pid, NULL, 0);
		return ksr_err_set(err, "cannot run %s: %s", argv[0], strerror(child_errno));
	}
	return pid;
}

/* Wait up to ms for our child pid to exit and reap it; true when reaped.
 * Uncancellable: stopping must work after the run was cancelled. Without a
 * pidfd (an old kernel, valgrind) the child is re-checked every 10 ms. */
static bool reap_within(int pid, int ms)
{
	int fd = ksr_proc_pidfd(pid);
	ksr_deadline until = ksr_deadline_in_ms(ms);
	bool reaped = false;
	for (;;) {
		pid_t r = waitpid(pid, NULL, WNOHANG);
		if (r == pid || (r < 0 && errno == ECHILD)) {
			reaped = true;
			break;
		}
		if (ksr_deadline_passed(until))
			break;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ksr_deadline d = fd >= 0 ? until : ksr_deadline_min(until, ksr_deadline_in_ms(10));
		ksr_wait_fds_uncancellable(&p, fd >= 0 ? 1 : 0, d);
	}
	if (fd >= 0)
		close(fd);
	return reaped;
}

static void signal_group(int pid)
{
	if (pid <= 0)
		return;
	kill(-pid, SIGTERM);
	kill(pid, SIGTERM);
}

/* Reap a group signalled before, killing it when until passes first. */
static void reap_group(int *pid, ksr_deadline until)
{
	if (*pid <= 0)
		return;
	if (!reap_within(*pid, (int)ksr_deadline_remaining_ms(until))) {
		kill(-*pid, SIGKILL);
		kill(*pid, SIGKILL);
		waitpid(*pid, NULL, 0);
	}
	kill(-*pid, SIGKILL); /* helpers left in the group (xkbcomp) */
	*pid = 0;
}

static void stop_group(int *pid)
{
	signal_group(*pid);
	reap_group(pid, ksr_deadline_in_ms(STOP_GRACE_MS));
}

void ksr_session_signal(ksr_session *s)
{
	if (!s || s->signalled)
		return;
	signal_group(s->wm_pid);
	signal_group(s->a11y_pid);
	signal_group(s->dbus_pid);
	signal_group(s->xvfb_pid);
	s->signalled = true;
	s->stop_by = ksr_deadline_in_ms(STOP_GRACE_MS);
}

/* Every part told at once and reaped after: the stop takes as long as the
 * slowest part, not the sum of all. */
void ksr_session_stop(ksr_session *s)
{
	if (!s)
		return;
	ksr_session_signal(s);
	reap_group(&s->wm_pid, s->stop_by);
	reap_group(&s->a11y_pid, s->stop_by);
	reap_group(&s->dbus_pid, s->stop_by);
	reap_group(&s->xvfb_pid, s->stop_by);
	restore_env(s);
	free(s->dbus_address);
	free(s->a11y_error);
	remove_tree(s->dir);
	free(s->dir);
	free(s->log_path);
	free(s);
}

/* ---- start ---- */

/* Read "N\n" that Xvfb writes to the -displayfd pipe once it accepts clients. */
static int read_display(ksr_session *s, int rfd, ksr_deadline d, ksr_err *err)
{
	char buf[16];
	size_t len = 0;
	while (len < sizeof buf - 1) {
		struct pollfd p = {.fd = rfd, .events = POLLIN};
		ksr_wait w = ksr_wait_fds(&p, 1, d);
		if (w != KSR_WAIT_READY)
			return ksr_err_set(err, "%s did not become ready: %s", s->server_name,
			                   ksr_wait_name(w));
		ssize_t n = read(rfd, buf + len, sizeof buf - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		buf[len] = '\0';
		char *nl = strchr(buf, '\n');
		if (nl) {
			*nl = '\0';
			snprintf(s->display, sizeof s->display, ":%s", buf);
			return 0;
		}
	}
	int status = 0;
	if (waitpid(s->xvfb_pid, &status, WNOHANG) == s->xvfb_pid) {
		s->xvfb_pid = 0;
		return ksr_err_set(err, "%s exited before it was ready (%s %d)", s->server_name,
		                   WIFSIGNALED(status) ? "signal" : "status",
		                   WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	}
	return ksr_err_set(err, "%s closed its -displayfd pipe without naming a display",
	                   s->server_name);
}

/* An executable name found on PATH (for the auto choices). */
static bool on_path(const char *name)
{
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, ":");
		char *full = ksr_xasprintf("%.*s/%s", (int)n, p, name);
		bool hit = n && access(full, X_OK) == 0;
		free(full);
		if (hit)
			return true;
		p += n;
		if (*p == ':')
			p++;
	}
	return false;
}

/* The X server program: Xvfb, or Xtigervnc (Debian's name) or else Xvnc. */
static int pick_server(ksr_session *s, ksr_server_kind kind, ksr_err *err)
{
	if (kind == KSR_SERVER_XVFB || (kind == KSR_SERVER_AUTO && on_path("Xvfb"))) {
		s->server_name = "Xvfb";
		return 0;
	}
	if (on_path("Xtigervnc"))
		s->server_name = "Xtigervnc";
	else if (on_path("Xvnc"))
		s->server_name = "Xvnc";
	if (s->server_name)
		return 0;
	return ksr_err_set(err, "%s",
	                   kind == KSR_SERVER_AUTO
	                           ? "no X server for the private display: neither Xvfb nor "
	                             "Xtigervnc/Xvnc is installed (Debian: xvfb or "
	                             "tigervnc-standalone-server)"
	                           : "--display-server xvnc: neither Xtigervnc nor Xvnc is "
	                             "installed (Debian: tigervnc-standalone-server)");
}

/* Xvfb (or Xvnc) started; *rfd is the -displayfd pipe that names the display
 * once it accepts clients (read_display). Not waited for here: the session
 * bus starts meanwhile. */
static int spawn_server(ksr_session *s, const ksr_session_opts *o, int logfd, int *rfd,
                        ksr_err *err)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return ksr_err_errno(err, "pipe");
	int wfd = fcntl(p[1], F_DUPFD_CLOEXEC, 10); /* clear of 0..2 in the child */
	close(p[1]);
	if (wfd < 0) {
		close(p[0]);
		return ksr_err_errno(err, "fcntl");
	}
	char fdarg[16], screen[48], geometry[32];
	snprintf(fdarg, sizeof fdarg, "%d", wfd);
	snprintf(screen, sizeof screen, "%dx%dx24", o->width, o->height);
	snprintf(geometry, sizeof geometry, "%dx%d", o->width, o->height);
	char *xvfb[] = {"Xvfb", "-displayfd", fdarg, "-screen",  "0",
	                screen, "-nolisten",  "tcp", "-noreset", NULL};
	/* VNC viewers on loopback only (-localhost; no password then is no
	 * exposure), X clients on the local socket only; the RFB port is
	 * 5900 + the display number. */
	char *xvnc[] = {(char *)s->server_name,
	                "-displayfd",
	                fdarg,
	                "-geometry",
	                geometry,
	                "-depth",
	                "24",
	                "-localhost",
	                "-SecurityTypes",
	                "None",
	                "-nolisten",
	                "tcp",
	                "-noreset",
	                "-AlwaysShared",
	                NULL};
	int pid = spawn(strcmp(s->server_name, "Xvfb") != 0 ? xvnc : xvfb, logfd, wfd, err);
	close(wfd);
	if (pid <= 0) {
		close(p[0]);
		return -1;
	}
	s->xvfb_pid = pid;
	*rfd = p[0];
	return 0;
}

static int server_ready(ksr_session *s, int rfd, ksr_deadline d, ksr_err *err)
{
	int rc = read_display(s, rfd, d, err);
	close(rfd);
	if (rc == 0 && strcmp(s->server_name, "Xvfb") != 0)
		s->vnc_port = 5900 + atoi(s->display + 1);
	return rc;
}

/* How long one probe window waits to be managed before a fresh one is
 * mapped. openbox loses the MapRequest of a window mapped right after it set
 * _NET_SUPPORTING_WM_CHECK (measured: the first probe was never managed in
 * 250 ms, a second one at once), so the first wait is short; the later ones
 * grow, for a window manager that is only slow (under load). */
static int probe_wait_ms(int probe)
{
	int ms = 20 << (probe < 4 ? probe : 4);
	return ms < 250 ? ms : 250;
}

/* Wait for the window manager to claim the screen, noticing if it dies first. */
static int wait_wm(ksr_session *s, ksr_x11 *x, ksr_deadline d, ksr_err *err)
{
	for (int probe = 0;; probe++) {
		ksr_wait w = ksr_x11_wait_wm(x, ksr_deadline_min(d, ksr_deadline_in_ms(250)));
		if (w == KSR_WAIT_READY)
			w = ksr_x11_wait_wm_manages(
			        x, ksr_deadline_min(d, ksr_deadline_in_ms(probe_wait_ms(probe))));
		if (w == KSR_WAIT_READY)
			return 0;
		int status = 0;
		if (waitpid(s->wm_pid, &status, WNOHANG) == s->wm_pid) {
			s->wm_pid = 0;
			return ksr_err_set(err, "%s exited before managing the display",
			                   s->wm_name);
		}
		if (w != KSR_WAIT_TIMEOUT || ksr_deadline_passed(d))
			return ksr_err_set(err, "no window manager on %s: %s", s->display,
			                   w == KSR_WAIT_ERROR ? "the X display connection was lost"
			                                       : ksr_wait_name(w));
	}
}

static int pick_wm(ksr_session *s, ksr_wm_kind kind, ksr_err *err)
{
	if (kind == KSR_WM_OPENBOX || (kind == KSR_WM_AUTO && on_path("openbox")))
		s->wm_name = "openbox";
	else if (kind == KSR_WM_XFWM4 || on_path("xfwm4"))
		s->wm_name = "xfwm4";
	else
		return ksr_err_set(err, "no window manager for the private display: neither "
		                        "openbox nor xfwm4 is installed");
	return 0;
}

static bool wm_is_xfwm4(const ksr_session *s)
{
	return strcmp(s->wm_name, "xfwm4") == 0;
}

static int spawn_wm(ksr_session *s, int logfd, ksr_err *err)
{
	/* xfwm4 without its compositor, as Kasm's XFCE images run it: what is
	 * captured from the root is what the apps drew. */
	char *openbox[] = {"openbox", "--sm-disable", NULL};
	char *xfwm4[] = {"xfwm4", "--replace", "--compositor=off", NULL};
	int pid = spawn(wm_is_xfwm4(s) ? xfwm4 : openbox, logfd, -1, err);
	if (pid > 0)
		s->wm_pid = pid;
	return pid > 0 ? 0 : -1;
}

/* The window manager started (unless spawn_wm did already) and managing. */
static int start_wm(ksr_session *s, int logfd, ksr_deadline d, ksr_err *err)
{
	ksr_x11 *x = NULL;
	ksr_wait w = ksr_x11_open_wait(s->display, d, &x, err);
	if (w != KSR_WAIT_READY)
		return -1;
	int rc = -1;
	/* openbox was seen to exit at once, once, under a loaded parallel test run:
	 * one more start before the session is given up (wm_pid 0 = it exited). */
	for (int attempt = 0; attempt < 2 && rc < 0; attempt++) {
		if (!s->wm_pid && spawn_wm(s, logfd, err) < 0)
			break;
		rc = wait_wm(s, x, d, err);
		if (rc < 0 && s->wm_pid != 0)
			break; /* still running but not managing: a deadline, not a crash */
	}
	ksr_x11_close(x);
	return rc;
}

/* ---- D-Bus session and AT-SPI bus ---- */

/* Read one line (the bus address dbus-daemon prints once it listens). */
static int read_line(int rfd, ksr_deadline d, char *buf, size_t cap, ksr_err *err)
{
	size_t len = 0;
	while (len < cap - 1) {
		struct pollfd p = {.fd = rfd, .events = POLLIN};
		ksr_wait w = ksr_wait_fds(&p, 1, d);
		if (w != KSR_WAIT_READY)
			return ksr_err_set(err, "dbus-daemon did not become ready: %s",
			                   ksr_wait_name(w));
		ssize_t n = read(rfd, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return ksr_err_set(err, "dbus-daemon exited before it was ready");
		len += (size_t)n;
		buf[len] = '\0';
		if (strchr(buf, '\n'))
			return 0;
	}
	return ksr_err_set(err, "dbus-daemon printed no address");
}

/* Our fixed address (the one printed adds a guid), exported before the bus
 * is up so that what starts meanwhile (the X server, the window manager)
 * names it and no other. */
static void set_dbus_address(ksr_session *s)
{
	s->dbus_address = ksr_xasprintf("unix:path=%s/bus", s->dir);
	setenv("DBUS_SESSION_BUS_ADDRESS", s->dbus_address, 1);
}

/* dbus-daemon started; *rfd is the pipe it prints its address on once it
 * listens (dbus_ready). It needs no display, so it starts beside the X server. */
static int spawn_dbus(ksr_session *s, int logfd, int *rfd, ksr_err *err)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return ksr_err_errno(err, "pipe");
	int wfd = fcntl(p[1], F_DUPFD_CLOEXEC, 10);
	close(p[1]);
	if (wfd < 0) {
		close(p[0]);
		return ksr_err_errno(err, "fcntl");
	}
	char *address = ksr_xasprintf("--address=%s", s->dbus_address);
	char *print = ksr_xasprintf("--print-address=%d", wfd);
	char *argv[] = {"dbus-daemon", "--session", "--nofork", address, print, NULL};
	int pid = spawn(argv, logfd, wfd, err);
	close(wfd);
	free(address);
	free(print);
	if (pid <= 0) {
		close(p[0]);
		return -1;
	}
	s->dbus_pid = pid;
	*rfd = p[0];
	return 0;
}

static int dbus_ready(int rfd, ksr_deadline d, ksr_err *err)
{
	char line[512];
	int rc = read_line(rfd, d, line, sizeof line, err);
	close(rfd);
	return rc;
}

/* So that services D-Bus activates (the a11y bus) see our display and folders
 * (those that are set: the tool complains about an unset one). */
static void update_activation_env(int logfd)
{
	char *argv[ENV_DBUS + 2] = {"dbus-update-activation-environment"};
	int n = 1;
	for (int i = ENV_DISPLAY; i < ENV_DBUS; i++)
		if (getenv(env_names[i]))
			argv[n++] = (char *)env_names[i];
	ksr_err ignored = {0};
	int pid = spawn(argv, logfd, -1, &ignored);
	if (pid > 0 && !reap_within(pid, ENV_TOOL_MS)) {
		kill(-pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

static int start_a11y(ksr_session *s, int logfd, ksr_deadline d, ksr_err *err)
{
	char *argv[] = {BUS_LAUNCHER, "--launch-immediately", NULL};
	int pid = spawn(argv, logfd, -1, err);
	if (pid < 0)
		return -1;
	s->a11y_pid = pid;
	/* Wait for the launcher's name before anyone asks for the address:
	 * asking earlier would activate a second launcher. */
	return ksr_atspi_session_ready(s->dbus_address, d, err);
}

/* A session without a bus is still a session (apps run, only rung 2 is
 * missing): the reason is kept for the accessibility probe to report. rfd is
 * the started dbus-daemon's address pipe, or -1 when it could not start. */
static void start_buses(ksr_session *s, int rfd, int logfd, ksr_deadline d, const ksr_err *spawned)
{
	ksr_err err = spawned ? *spawned : (ksr_err){0};
	if (rfd >= 0 && dbus_ready(rfd, d, &err) == 0) {
		update_activation_env(logfd);
		if (start_a11y(s, logfd, d, &err) == 0)
			return;
		s->a11y_error = ksr_xasprintf("the AT-SPI bus did not start: %s", err.msg);
		return;
	}
	stop_group(&s->dbus_pid);
	/* The session's apps keep the bus they would have had without ours. */
	const char *before = s->saved_env[ENV_DBUS];
	if (before)
		setenv("DBUS_SESSION_BUS_ADDRESS", before, 1);
	else
		unsetenv("DBUS_SESSION_BUS_ADDRESS");
	free(s->dbus_address);
	s->dbus_address = NULL;
	s->a11y_error = ksr_xasprintf("the D-Bus session bus did not start: %s", err.msg);
}

/* The parts start side by side where nothing needs another: the session bus
 * beside the X server (it needs no display); openbox, once the display
 * answers, beside the AT-SPI bus's start (it asks neither bus). xfwm4, a GTK
 * app, starts after the buses, as apps do: asked earlier, its accessibility
 * bridge would activate a second bus launcher. */
static int start_parts(ksr_session *s, const ksr_session_opts *o, int logfd, ksr_deadline d,
                       ksr_err *err)
{
	int xfd = -1, busfd = -1;
	int64_t t0 = ksr_now_ms();
	if (spawn_server(s, o, logfd, &xfd, err) < 0)
		return -1;
	set_env(s);
	set_dbus_address(s);
	ksr_err bus_err = {0};
	if (spawn_dbus(s, logfd, &busfd, &bus_err) < 0)
		busfd = -1;
	int rc = server_ready(s, xfd, d, err);
	s->server_ms = ksr_now_ms() - t0;
	if (rc == 0) {
		setenv("DISPLAY", s->display, 1);
		if (!wm_is_xfwm4(s) && spawn_wm(s, logfd, err) < 0)
			rc = -1;
	}
	if (rc == 0)
		start_buses(s, busfd, logfd, d, &bus_err);
	else if (busfd >= 0)
		close(busfd);
	s->buses_ms = ksr_now_ms() - t0;
	if (rc == 0)
		rc = start_wm(s, logfd, d, err);
	s->wm_ms = ksr_now_ms() - t0;
	return rc;
}

static int start_all(ksr_session *s, const ksr_session_opts *o, ksr_deadline d, ksr_err *err)
{
	s->folders = pick_folders(o);
	if (make_dirs(s, err) < 0)
		return -1;
	if (pick_server(s, o->server, err) < 0 || pick_wm(s, o->wm, err) < 0)
		return -1;
	s->log_path =
	        o->log_path ? ksr_xstrdup(o->log_path) : ksr_xasprintf("%s/session.log", s->dir);
	/* Often OUT/session.log (a shared display's): never through a link. */
	int logfd = ksr_evidence_open_path(s->log_path, KSR_EVIDENCE_APPEND);
	if (logfd < 0)
		return ksr_err_set(err, "cannot open %s: %s", s->log_path, strerror(errno));
	int rc = start_parts(s, o, logfd, d, err);
	close(logfd);
	return rc;
}

int ksr_session_start(const ksr_session_opts *opts, ksr_deadline d, ksr_session **out, ksr_err *err)
{
	ksr_session_opts o = opts ? *opts : (ksr_session_opts){0};
	if (o.width <= 0 || o.height <= 0) {
		o.width = 1280;
		o.height = 720;
	}
	*out = NULL;
	ksr_session *s = ksr_xcalloc(1, sizeof *s);
	if (start_all(s, &o, d, err) < 0) {
		char tail[300];
		log_tail(s->log_path, tail, sizeof tail);
		if (err && tail[0] && strlen(err->msg) + strlen(tail) < sizeof err->msg)
			strcat(err->msg, tail);
		ksr_session_stop(s);
		return -1;
	}
	*out = s;
	return 0;
}
