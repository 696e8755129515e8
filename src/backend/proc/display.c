/* Which X display a process is on, from its environment: a process matching
 * `process:` on another display (another session's, another test's) is not
 * the app this run looks at, whatever its name. */
#include "ksr/proc.h"
#include "backend/proc/priv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* An environment larger than this is not read to its end: DISPLAY is set by
 * the session long before an app adds its own variables. */
#define ENVIRON_MAX (256 * 1024)

/* priv.h */
int ksr_proc_environ_value(int pid, const char *key, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/environ", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == EACCES || errno == EPERM ? -1 : 0;
	char *env = malloc(ENVIRON_MAX + 1);
	ssize_t n = 0, r = 0;
	while (env && n < ENVIRON_MAX && (r = read(fd, env + n, ENVIRON_MAX - n)) > 0)
		n += r;
	int read_errno = r < 0 ? errno : 0;
	close(fd);
	int found = read_errno == EACCES || read_errno == EPERM ? -1 : 0;
	size_t klen = strlen(key);
	for (ssize_t i = 0; env && i < n && found == 0; i += (ssize_t)strnlen(env + i, n - i) + 1) {
		if (n - i > (ssize_t)klen && !strncmp(env + i, key, klen) && env[i + klen] == '=') {
			snprintf(buf, len, "%.*s",
			         (int)strnlen(env + i + klen + 1, n - i - klen - 1),
			         env + i + klen + 1);
			found = 1;
		}
	}
	free(env);
	return found;
}

/* "[host]:N[.S]" -> host and N; the screen does not tell displays apart, and
 * "unix" is the local host as an empty one is. */
static bool parse_display(const char *name, char *host, size_t hlen, long *number)
{
	const char *colon = name ? strrchr(name, ':') : NULL;
	if (!colon)
		return false;
	char *end;
	*number = strtol(colon + 1, &end, 10);
	if (end == colon + 1 || (*end && *end != '.'))
		return false;
	snprintf(host, hlen, "%.*s", (int)(colon - name), name);
	if (!strcmp(host, "unix"))
		host[0] = '\0';
	return true;
}

bool ksr_proc_may_be_on_display(int pid, const char *display)
{
	char theirs[256], h1[128], h2[128];
	long n1, n2;
	int found = ksr_proc_environ_value(pid, "DISPLAY", theirs, sizeof theirs);
	if (found < 0)
		return true; /* another user's process: not ruled out */
	/* Gone meanwhile, or a zombie (its environment reads empty): not an app
	 * on any display. Alive without DISPLAY there: not ruled out, since a
	 * process may write over its environment (Chromium puts its process
	 * title there) and still be a client of ours. */
	if (found == 0)
		return ksr_proc_alive(pid);
	if (!parse_display(theirs, h1, sizeof h1, &n1) ||
	    !parse_display(display, h2, sizeof h2, &n2))
		return true;
	return n1 == n2 && strcmp(h1, h2) == 0;
}

void ksr_proc_list_drop_other_displays(ksr_proc_list *l, const char *display)
{
	size_t kept = 0;
	for (size_t i = 0; display && i < l->len; i++) {
		if (!ksr_proc_may_be_on_display(l->items[i].pid, display)) {
			free(l->items[i].name);
			free(l->items[i].argv0);
			free(l->items[i].cmdline);
			continue;
		}
		l->items[kept++] = l->items[i];
	}
	if (display)
		l->len = kept;
}
