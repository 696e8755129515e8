/* A launched command watched until its window comes (proc.h): whether it
 * ended with nothing of it left, and how, with its last output. */
#include "ksr/proc.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ksr/log_tail.h"

void ksr_proc_describe_status(int status, char *buf, size_t len)
{
	if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d (%s)%s", WTERMSIG(status),
		         sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status)) : "?",
		         WCOREDUMP(status) ? ", core dumped" : "");
	else if (WEXITSTATUS(status) > 128) /* sh reports a child killed by signal N as 128+N */
		snprintf(buf, len, "ended by signal %d (%s; the launch shell's exit status %d)",
		         WEXITSTATUS(status) - 128,
		         sigabbrev_np(WEXITSTATUS(status) - 128)
		                 ? sigabbrev_np(WEXITSTATUS(status) - 128)
		                 : "?",
		         WEXITSTATUS(status));
	else
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
}

/* Bytes of the launch's last output in a reason: room for a few lines, so a
 * message followed by its advice (VLC's refusal to run as root is 4 lines,
 * 221 bytes joined) keeps its first line. */
#define OUTPUT_MAX 320

bool ksr_launch_watch_gone(ksr_launch_watch *w, int grace_ms)
{
	if (w->pid <= 0)
		return false;
	if (!w->ended_ms) {
		if (ksr_proc_reap(w->pid, &w->status) != 1)
			return false;
		w->ended_ms = ksr_now_ms();
	}
	if (ksr_proc_group_alive(w->pid))
		return false; /* a child it started runs on: the app, maybe */
	bool clean = WIFEXITED(w->status) && WEXITSTATUS(w->status) == 0;
	return !clean || ksr_now_ms() - w->ended_ms >= grace_ms;
}

/* The launch command's first word that is not an assignment, its base name. */
static void add_launch_name(ksr_strbuf *b, const char *launch)
{
	const char *p = launch ? launch : "";
	for (;;) {
		p += strspn(p, " \t");
		size_t n = strcspn(p, " \t");
		if (n && memchr(p, '=', n)) {
			p += n;
			continue;
		}
		char word[64];
		snprintf(word, sizeof word, "%.*s",
		         (int)(n < sizeof word - 1 ? n : sizeof word - 1), p);
		const char *base = strrchr(word, '/');
		const char *name = base && base[1] ? base + 1 : word;
		size_t len = strlen(name);
		if (len && strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		                        "0123456789._+-") == len)
			ksr_strbuf_add(b, name);
		else
			ksr_strbuf_add(b, "the launch command");
		return;
	}
}

void ksr_launch_watch_describe(const ksr_launch_watch *w, const char *command, const char *log,
                               ksr_strbuf *b)
{
	char how[128];
	ksr_proc_describe_status(w->status, how, sizeof how);
	add_launch_name(b, command);
	ksr_strbuf_addf(b, " (pid %d) %s after %.1f s", w->pid, how,
	                (double)(w->ended_ms - w->start_ms) / 1000.0);
	char *lines = log ? ksr_log_last_lines(log, OUTPUT_MAX) : NULL;
	if (lines) {
		ksr_strbuf_add(b, ": ");
		ksr_strbuf_add_quoted(b, lines, OUTPUT_MAX);
	} else {
		ksr_strbuf_add(b, log ? " with no output" : "");
	}
	free(lines);
}

char *ksr_launch_temp_log(const char *tool)
{
	const char *dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	ksr_strbuf b = {0};
	ksr_strbuf_addf(&b, "%s/ksr-%s-launch-XXXXXX", dir, tool);
	int fd = mkstemp(b.p);
	if (fd < 0) {
		ksr_strbuf_free(&b);
		return NULL;
	}
	close(fd);
	return ksr_strbuf_take(&b);
}
