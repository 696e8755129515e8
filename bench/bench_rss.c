/* Peak memory of a whole run: `kasm-session-runtime run --xvfb SCENARIO` at
 * 1920x1080, beside xdotool and python3 + pyatspi doing the least they do.
 *
 * Two figures for the runtime, because wait4's ru_maxrss (what /usr/bin/time
 * prints as "Maximum resident set size") is the largest of the process and
 * every descendant it reaped, and the runtime reaps its own Xvfb: VmHWM of
 * the runtime process alone, sampled every 2 ms until it exits (the high-water
 * mark only grows, so the last sample is the peak to within the last 2 ms),
 * and ru_maxrss. The descendants' own peaks are listed beside.
 *   bench_rss RUNTIME SCENARIO    (KASM_RUNTIME_XVFB_SIZE defaults to 1920x1080) */
#include "bench_util.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_KIDS 32

typedef struct kid {
	int pid;
	char name[32];
	long hwm_kib;
} kid;

typedef struct watch {
	long self_kib;
	kid kids[MAX_KIDS];
	int n_kids;
} watch;

static void proc_name(int pid, char *out, size_t len)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/comm", pid);
	FILE *f = fopen(path, "r");
	out[0] = '\0';
	if (f && fgets(out, (int)len, f))
		out[strcspn(out, "\n")] = '\0';
	if (f)
		fclose(f);
}

static void note_kid(watch *w, int pid)
{
	long kib = bench_vm_hwm_kib(pid);
	if (kib < 0)
		return;
	for (int i = 0; i < w->n_kids; i++)
		if (w->kids[i].pid == pid) {
			w->kids[i].hwm_kib = kib > w->kids[i].hwm_kib ? kib : w->kids[i].hwm_kib;
			/* Seen first between fork and exec: the name may change. */
			proc_name(pid, w->kids[i].name, sizeof w->kids[i].name);
			return;
		}
	if (w->n_kids == MAX_KIDS)
		return;
	kid *k = &w->kids[w->n_kids++];
	k->pid = pid;
	k->hwm_kib = kib;
	proc_name(pid, k->name, sizeof k->name);
}

/* Children and grandchildren through /proc/PID/task/PID/children. */
static void sample_tree(watch *w, int pid, int depth)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task/%d/children", pid, pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	int child;
	while (fscanf(f, "%d", &child) == 1) {
		note_kid(w, child);
		if (depth < 3)
			sample_tree(w, child, depth + 1);
	}
	fclose(f);
}

static int run_watched(char *const argv[], watch *w, long *ru_kib, double *ms)
{
	double t0 = bench_now_ms();
	int pid = fork();
	if (pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	int status = 0;
	struct rusage ru;
	struct timespec tick = {0, 2 * 1000 * 1000};
	for (;;) {
		long kib = bench_vm_hwm_kib(pid);
		w->self_kib = kib > w->self_kib ? kib : w->self_kib;
		sample_tree(w, pid, 1);
		if (wait4(pid, &status, WNOHANG, &ru) == pid)
			break;
		nanosleep(&tick, NULL);
	}
	*ms = bench_now_ms() - t0;
	*ru_kib = ru.ru_maxrss;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static long tool_maxrss(char *const argv[])
{
	int pid = bench_spawn(argv);
	int status = 0;
	struct rusage ru;
	if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status))
		return -1;
	return ru.ru_maxrss;
}

static void row(const char *what, long kib, long base, const char *note)
{
	if (kib < 0) {
		printf("| %s | n/a | | %s |\n", what, note);
		return;
	}
	printf("| %s | %.1f | %.2f | %s |\n", what, kib / 1024.0, (double)kib / base, note);
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return fprintf(stderr, "usage: bench_rss RUNTIME SCENARIO\n"), 2;
	setenv("KASM_RUNTIME_XVFB_SIZE", "1920x1080", 0); /* unless the caller chose a size */
	char out[] = "/tmp/ksr-bench-rss-XXXXXX";
	if (!mkdtemp(out))
		return perror("bench_rss: mkdtemp"), 2;
	setenv("KASM_RUNTIME_OUT", out, 1);
	char *rt[] = {argv[1], "run", "--xvfb", argv[2], NULL};
	watch w = {0};
	long ru_kib = 0;
	double ms = 0;
	int code = run_watched(rt, &w, &ru_kib, &ms);
	printf("\npeak memory, %s run --xvfb %s at %s (exit %d, %.1f s)\n\n", argv[1], argv[2],
	       getenv("KASM_RUNTIME_XVFB_SIZE"), code, ms / 1000);
	printf("| process | peak RSS MiB | × ours | how measured |\n|---|---:|---:|---|\n");
	long base = w.self_kib;
	row("**kasm-session-runtime** (the process alone)", base, base,
	    "VmHWM sampled every 2 ms until exit");
	row("kasm-session-runtime incl. reaped descendants", ru_kib, base,
	    "wait4 ru_maxrss = `/usr/bin/time -v` figure");
	for (int i = 0; i < w.n_kids; i++) {
		char what[64];
		snprintf(what, sizeof what, "  its child `%s`", w.kids[i].name);
		row(what, w.kids[i].hwm_kib, base, "VmHWM sampled");
	}
	char *ver[] = {argv[1], "version", NULL};
	row("kasm-session-runtime version (libraries loaded, nothing done)", tool_maxrss(ver), base,
	    "wait4 ru_maxrss");
	char *xd[] = {"xdotool", "search", "--name", "no-such-window", NULL};
	char *py[] = {"python3", "-c", "import pyatspi", NULL};
	row("xdotool search --name (one search)", tool_maxrss(xd), base, "wait4 ru_maxrss");
	row("python3 -c 'import pyatspi' (no walk)", tool_maxrss(py), base, "wait4 ru_maxrss");
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", out);
	return system(cmd) == 0 ? 0 : 1;
}
