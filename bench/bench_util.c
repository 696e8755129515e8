/* Helpers shared by the benchmarks (see bench_util.h). */
#include "bench_util.h"

#include "ksr/session.h"
#include "ksr/x11.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

double bench_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double bench_median(const double *v, int n)
{
	if (n <= 0)
		return -1;
	double *c = malloc(sizeof *c * (size_t)n);
	memcpy(c, v, sizeof *c * (size_t)n);
	qsort(c, (size_t)n, sizeof *c, cmp_double);
	double m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
	free(c);
	return m;
}

double bench_min(const double *v, int n)
{
	double m = n > 0 ? v[0] : -1;
	for (int i = 1; i < n; i++)
		m = v[i] < m ? v[i] : m;
	return m;
}

double bench_max(const double *v, int n)
{
	double m = n > 0 ? v[0] : -1;
	for (int i = 1; i < n; i++)
		m = v[i] > m ? v[i] : m;
	return m;
}

/* Standard input from /dev/null; output to out_fd, or /dev/null when -1. */
static void quiet_stdio(int out_fd)
{
	int fd = open("/dev/null", O_RDWR);
	dup2(fd, 0);
	dup2(out_fd >= 0 ? out_fd : fd, 1);
	dup2(out_fd >= 0 ? out_fd : fd, 2);
}

int bench_spawn(char *const argv[])
{
	pid_t pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		quiet_stdio(-1);
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid;
}

double bench_run(char *const argv[])
{
	double t0 = bench_now_ms();
	int status = 0;
	waitpid(bench_spawn(argv), &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -1;
	return bench_now_ms() - t0;
}

/* The output is small (one figure), so reading after the exit cannot block. */
char *bench_run_capture(char *const argv[], double *ms, int *exit_code)
{
	int p[2];
	if (pipe(p) < 0)
		return NULL;
	double t0 = bench_now_ms();
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		quiet_stdio(p[1]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	char *buf = calloc(1, 4096);
	size_t len = 0;
	ssize_t n;
	while (len < 4095 && (n = read(p[0], buf + len, 4095 - len)) > 0)
		len += (size_t)n;
	close(p[0]);
	int status = 0;
	waitpid(pid, &status, 0);
	*ms = bench_now_ms() - t0;
	*exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return buf;
}

long bench_file_size(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fclose(f);
	return n;
}

long bench_vm_hwm_kib(int pid)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%d/status", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	long kib = -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

unsigned long bench_wait_window(ksr_x11 *x, const char *title, int ms)
{
	ksr_deadline d = ksr_deadline_in_ms(ms);
	for (;;) {
		ksr_window_list l;
		ksr_err err = {0};
		unsigned long id = 0;
		if (ksr_x11_list_windows(x, &l, &err) == 0)
			for (size_t i = 0; i < l.len && !id; i++)
				if (l.items[i].title && strcmp(l.items[i].title, title) == 0)
					id = l.items[i].id;
		ksr_window_list_clear(&l);
		if (id || ksr_x11_wait_change(x, d) != KSR_WAIT_READY)
			return id;
	}
}

int bench_session_opts(struct ksr_session_opts *o, const char *who)
{
	*o = (ksr_session_opts){.width = 1920, .height = 1080};
	const char *size = getenv("KASM_RUNTIME_XVFB_SIZE");
	const char *server = getenv("KASM_RUNTIME_DISPLAY_SERVER");
	const char *wm = getenv("KASM_RUNTIME_WM");
	if (size && ksr_session_parse_size(size, &o->width, &o->height) < 0)
		return fprintf(stderr, "%s: bad size %s\n", who, size), -1;
	if (server && *server && ksr_session_parse_server(server, &o->server) < 0)
		return fprintf(stderr, "%s: bad display server %s\n", who, server), -1;
	if (wm && *wm && ksr_session_parse_wm(wm, &o->wm) < 0)
		return fprintf(stderr, "%s: bad window manager %s\n", who, wm), -1;
	return 0;
}
