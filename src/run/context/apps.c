/* What the run started and must stop: the app's process group (unless
 * keep_running:), what its launch started that left the group (by the run's
 * tag, origin.c) and, in desktop mode, the tools spawn steps started. */
#include "run/context/context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ksr/proc.h"

#define STOP_GRACE_MS 3000

unsigned long ksr_tools_current_window(const ksr_run *run)
{
	for (size_t i = run->n_tools; i-- > 0;)
		if (!run->tools[i].stopped && run->tools[i].window)
			return run->tools[i].window;
	return 0;
}

const ksr_tool *ksr_tools_a11y(const ksr_run *run)
{
	for (size_t i = run->n_tools; run->a11y_tool && i-- > 0;)
		if (run->tools[i].as && !strcmp(run->tools[i].as, run->a11y_tool))
			return &run->tools[i];
	for (size_t i = run->n_tools; !run->a11y_tool && i-- > 0;)
		if (!run->tools[i].stopped && run->tools[i].window)
			return &run->tools[i];
	return NULL;
}

int ksr_tool_a11y_pid(const ksr_tool *t)
{
	return t->window_pid > 0 ? t->window_pid : t->pid;
}

void ksr_tool_log_name(size_t i, char *buf, size_t len)
{
	snprintf(buf, len, "spawn-%02zu.log", i + 1);
}

void ksr_run_note_log_cut(ksr_run *run, const char *name, const ksr_tool *t)
{
	char *path = ksr_evidence_path(run->out, name);
	struct stat st;
	uint64_t cap = ksr_proc_log_cap();
	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size > cap) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", name);
		cJSON_AddNumberToObject(o, "cut_at_bytes", (double)cap);
		if (t && t->as)
			cJSON_AddStringToObject(o, "as", t->as);
		if (t)
			cJSON_AddNumberToObject(o, "pid", t->pid);
		ksr_run_emit(run, "launch_log", o);
	}
	free(path);
}

static void tools_stop_all(ksr_run *run)
{
	for (size_t i = 0; i < run->n_tools; i++) {
		if (!run->tools[i].stopped)
			ksr_proc_stop_group(run->tools[i].pid, STOP_GRACE_MS);
		char log[32]; /* stopped: its log is complete */
		ksr_tool_log_name(i, log, sizeof log);
		ksr_run_note_log_cut(run, log, &run->tools[i]);
		free(run->tools[i].as);
		free(run->tools[i].window_res_name);
		free(run->tools[i].desktop_entry);
	}
	free(run->tools);
	run->tools = NULL;
	run->n_tools = 0;
}

void ksr_run_stop_app(ksr_run *run)
{
	/* Desktop mode: tools the scenario did not kill (keep_running is about the
	 * app; a spawned tool is the scenario's own fixture). */
	ksr_run_unwatch_all(run); /* what the run stops itself is no crash */
	bool spawned = run->n_tools > 0;
	tools_stop_all(run);
	if (!run->sc || run->sc->keep_running)
		return;
	if (run->launched_pid > 0) {
		ksr_proc_stop_group(run->launched_pid, STOP_GRACE_MS);
		run->launch_reaped = true;
	}
	/* What left the group (setsid -f, a daemon) still carries the run's tag. */
	if (run->launched_pid > 0 || spawned)
		ksr_run_stop_tagged(run);
}
