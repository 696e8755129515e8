/* The app is the one this run started (context.h,
 * docs/scenario.md#the-app-is-the-one-this-run-started): an instance of the
 * app's program that was on the display before the launch (or that another
 * party started meanwhile) is not the app, whatever its name and title, and
 * it is named in the reason instead of passing. At the end of the run, what
 * the launch started and that left its process group is found by the run's
 * tag and stopped. */
#include "run/context/context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STOP_GRACE_MS 3000

static ksr_launch_tie launch_tie(const ksr_run *run)
{
	return (ksr_launch_tie){.pid = run->launched_pid,
	                        .start_ticks = run->launch_start_ticks,
	                        .run_id = run->run_id};
}

void ksr_run_note_windows_before_launch(ksr_run *run)
{
	ksr_window_list wins = {0};
	ksr_err err = {0};
	free(run->windows_before_launch);
	run->windows_before_launch = NULL;
	run->n_windows_before_launch = 0;
	if (!run->x || ksr_x11_list_windows(run->x, &wins, &err) < 0)
		return;
	run->windows_before_launch = ksr_xcalloc(wins.len + 1, sizeof(unsigned long));
	for (size_t i = 0; i < wins.len; i++)
		run->windows_before_launch[run->n_windows_before_launch++] = wins.items[i].id;
	ksr_window_list_clear(&wins);
}

void ksr_run_note_launch_started(ksr_run *run)
{
	/* The launch is our child, not reaped yet: its stat is there. */
	run->launch_start_ticks = ksr_proc_start_ticks(run->launched_pid);
}

ksr_proc_origin ksr_run_proc_origin(const ksr_run *run, int pid)
{
	ksr_launch_tie t = launch_tie(run);
	return ksr_proc_origin_of(pid, run->launched_pid > 0 ? &t : NULL);
}

static void note_stale(ksr_run_stale *stale, int pid, const char *name, ksr_proc_origin o,
                       const ksr_window *w)
{
	if (!stale || stale->pid || stale->window)
		return;
	stale->pid = pid;
	stale->origin = o;
	snprintf(stale->name, sizeof stale->name, "%s", name ? name : "");
	stale->window = w ? w->id : 0;
	snprintf(stale->title, sizeof stale->title, "%s", w && w->title ? w->title : "");
}

static bool counts(ksr_proc_origin o)
{
	/* GONE: it went between the scan and this look; the scan's next round
	 * drops it, and it is no older instance to name. */
	return ksr_proc_origin_is_launch(o) || o == KSR_ORIGIN_GONE;
}

void ksr_run_keep_launched(const ksr_run *run, ksr_proc_list *l, ksr_run_stale *stale)
{
	if (run->launched_pid <= 0)
		return;
	size_t kept = 0;
	for (size_t i = 0; i < l->len; i++) {
		ksr_proc *p = &l->items[i];
		ksr_proc_origin o = ksr_run_proc_origin(run, p->pid);
		if (counts(o)) {
			l->items[kept++] = *p;
			continue;
		}
		note_stale(stale, p->pid, p->name, o, NULL);
		free(p->name);
		free(p->argv0);
		free(p->cmdline);
	}
	l->len = kept;
}

static bool was_there(const ksr_run *run, unsigned long id)
{
	for (size_t i = 0; i < run->n_windows_before_launch; i++)
		if (run->windows_before_launch[i] == id)
			return true;
	return false;
}

/* The program's name for a window's pid, as the process list has it. */
static void name_of(int pid, char *buf, size_t len)
{
	ksr_proc_list all = {0};
	ksr_err err = {0};
	buf[0] = '\0';
	if (ksr_proc_find(NULL, NULL, &all, &err) < 0)
		return;
	for (size_t i = 0; i < all.len; i++)
		if (all.items[i].pid == pid)
			snprintf(buf, len, "%s", all.items[i].name);
	ksr_proc_list_clear(&all);
}

bool ksr_run_window_may_be_launchs(const ksr_run *run, const ksr_window *w, ksr_run_stale *stale)
{
	if (run->launched_pid <= 0)
		return true;
	if (w->pid <= 0) {
		if (!was_there(run, w->id))
			return true; /* it came after the launch: nothing says whose */
		note_stale(stale, 0, "", KSR_ORIGIN_GONE, w);
		return false;
	}
	ksr_proc_origin o = ksr_run_proc_origin(run, w->pid);
	if (counts(o))
		return true;
	if (stale && !stale->pid && !stale->window) {
		char name[64];
		name_of(w->pid, name, sizeof name);
		note_stale(stale, w->pid, name, o, w);
	}
	return false;
}

/* A program name as is when it is plain, else quoted as data. */
static void add_name(ksr_strbuf *b, const char *name)
{
	size_t n = strlen(name);
	bool plain = n && n <= 40 &&
	             strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	                          "0123456789._+-") == n;
	if (!plain) {
		ksr_strbuf_add(b, "a process ");
		ksr_strbuf_add_quoted(b, name, 40);
		return;
	}
	ksr_strbuf_add(b, strchr("aeiouxAEIOUX", name[0]) ? "an " : "a ");
	ksr_strbuf_add(b, name);
}

void ksr_run_stale_describe(const ksr_run_stale *s, ksr_strbuf *b)
{
	if (!s->pid && !s->window)
		return;
	ksr_strbuf_add(b, "; ");
	if (!s->pid) {
		ksr_strbuf_add(b, "a window ");
		ksr_strbuf_add_quoted(b, s->title, 60);
		ksr_strbuf_addf(b,
		                " (0x%lx, no _NET_WM_PID) that was on the display before the "
		                "launch is not the app this run launched",
		                s->window);
		return;
	}
	add_name(b, *s->name ? s->name : "?");
	ksr_strbuf_addf(b, " (pid %d", s->pid);
	if (s->window) {
		ksr_strbuf_add(b, ", window ");
		ksr_strbuf_add_quoted(b, s->title, 60);
	}
	ksr_strbuf_add(b, ") ");
	if (s->origin == KSR_ORIGIN_OLDER)
		ksr_strbuf_add(b, "older than this run");
	else
		ksr_strbuf_add(b, "started after the launch, but not by it (neither its "
		                  "descendant nor carrying its " KSR_PROC_RUN_TAG ")");
	ksr_strbuf_add(b, " is on the display; it is not the app this run launched");
}

/* A process listed at cleanup: its name from the scan taken before the stop
 * (when it was still there to be read) and how it ended. */
static void add_left(cJSON *left, int pid, const ksr_proc_list *all, const char *end)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "pid", pid);
	for (size_t k = 0; k < all->len; k++)
		if (all->items[k].pid == pid)
			cJSON_AddStringToObject(o, "name", all->items[k].name);
	cJSON_AddStringToObject(o, "end", end);
	cJSON_AddItemToArray(left, o);
}

static bool listed(const int *pids, size_t n, int pid)
{
	for (size_t i = 0; i < n; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

/* Each listed process says how it ended, so that the counts add up to the
 * list: "exited" (by itself, before its signal), "stopped" or
 * "still-running". */
void ksr_run_stop_tagged(ksr_run *run)
{
	int *pids = NULL;
	size_t n = ksr_proc_find_tagged(run->run_id, &pids);
	if (!n) {
		free(pids);
		return;
	}
	ksr_proc_list all = {0};
	ksr_err err = {0};
	ksr_proc_find(NULL, NULL, &all, &err); /* their names, while they are there */
	bool *ended_first = ksr_xcalloc(n, sizeof *ended_first);
	ksr_proc_stop_listed(run->run_id, pids, n, STOP_GRACE_MS, ended_first);
	int *rest = NULL;
	size_t still = ksr_proc_find_tagged(run->run_id, &rest);
	cJSON *f = cJSON_CreateObject();
	cJSON *left = cJSON_AddArrayToObject(f, "left_group");
	double stopped = 0, exited = 0;
	for (size_t i = 0; i < n; i++) {
		bool running = !ended_first[i] && listed(rest, still, pids[i]);
		const char *end = ended_first[i] ? "exited" : running ? "still-running" : "stopped";
		exited += ended_first[i];
		stopped += !ended_first[i] && !running;
		add_left(left, pids[i], &all, end);
	}
	ksr_proc_list_clear(&all);
	free(rest);
	free(ended_first);
	free(pids);
	cJSON_AddNumberToObject(f, "stopped", stopped);
	cJSON_AddNumberToObject(f, "exited", exited);
	/* Tagged processes started during the stop count too: they outlived it. */
	cJSON_AddNumberToObject(f, "still_running", (double)still);
	ksr_run_emit(run, "cleanup", f);
}
