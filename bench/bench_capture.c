/* Full-screen capture -> PNG: this runtime (XShm, rows converted as a two-thread
 * deflate at level 1 with no filter encodes them)
 * beside ImageMagick `import -window root` and `scrot`, on one private Xvfb
 * with a few xterms of text on it. Prints medians and ratios; not a test. */
#include "bench_util.h"
#include "ksr/session.h"
#include "ksr/x11.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
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

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int spawn(char *const argv[])
{
	pid_t pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		int fd = open("/dev/null", O_RDWR);
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static double run_tool(char *const argv[])
{
	double t0 = now_ms();
	int status = 0;
	waitpid(spawn(argv), &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -1;
	return now_ms() - t0;
}

static long file_size(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fclose(f);
	return n;
}

static void row(const char *what, double ms, long bytes, double base)
{
	if (ms < 0) {
		printf("%-34s %10s\n", what, "n/a");
		return;
	}
	printf("%-34s %8.1f ms %8ld KiB", what, ms, bytes / 1024);
	if (base > 0)
		printf("   %5.1fx ours", ms / base);
	printf("\n");
}

/* Our capture, encode and write, each timed; returns the median total. */
static double bench_ours(ksr_x11 *x, int n, const char *path, long *bytes)
{
	double cap[n], enc[n], tot[n];
	for (int i = 0; i < n; i++) {
		ksr_err err = {0};
		double t0 = now_ms();
		ksr_image *img = ksr_x11_capture(x, 0, &err);
		double t1 = now_ms();
		unsigned char *buf = NULL;
		size_t len = 0;
		if (!img || ksr_image_encode_png(img, &buf, &len, &err) < 0) {
			fprintf(stderr, "bench: %s\n", err.msg);
			exit(1);
		}
		double t2 = now_ms();
		FILE *f = fopen(path, "wb");
		fwrite(buf, 1, len, f);
		fclose(f);
		tot[i] = now_ms() - t0;
		cap[i] = t1 - t0;
		enc[i] = t2 - t1;
		*bytes = (long)len;
		free(buf);
		ksr_image_free(img);
	}
	printf("%-34s %8.1f ms\n", "  of which capture (XShm+convert)", median(cap, n));
	printf("%-34s %8.1f ms\n", "  of which PNG encode", median(enc, n));
	printf("%-34s %8.1f ms\n", "  capture to RGB + encode + write", median(tot, n));
	/* What a screenshot of the runtime is: straight from the XShm image
	 * into the PNG, rows converted as they are encoded, then the file. */
	for (int i = 0; i < n; i++) {
		ksr_err err = {0};
		unsigned char *buf = NULL;
		size_t len = 0;
		double t0 = now_ms();
		if (ksr_x11_capture_png(x, 0, &buf, &len, &err) < 0) {
			fprintf(stderr, "bench: %s\n", err.msg);
			exit(1);
		}
		FILE *f = fopen(path, "wb");
		fwrite(buf, 1, len, f);
		fclose(f);
		tot[i] = now_ms() - t0;
		*bytes = (long)len;
		free(buf);
	}
	return median(tot, n);
}

static double bench_tool(char *const argv[], int n, const char *path, long *bytes)
{
	double t[n];
	for (int i = 0; i < n; i++) {
		unlink(path);
		t[i] = run_tool(argv);
		if (t[i] < 0)
			return -1;
	}
	*bytes = file_size(path);
	return median(t, n);
}

/* Until n XTerm windows are mapped (event-driven), then a moment to draw. */
static void wait_terminals(ksr_x11 *x, size_t n)
{
	ksr_deadline d = ksr_deadline_in_ms(20000);
	for (;;) {
		ksr_window_list l;
		ksr_err err = {0};
		size_t found = 0;
		if (ksr_x11_list_windows(x, &l, &err) == 0)
			for (size_t i = 0; i < l.len; i++)
				found += strcmp(l.items[i].res_class, "XTerm") == 0;
		ksr_window_list_clear(&l);
		if (found >= n || ksr_x11_wait_change(x, d) != KSR_WAIT_READY)
			break;
	}
	ksr_sleep_ms(500);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 15;
	if (n < 1 || n > 1000)
		n = 15;
	ksr_session_opts opts;
	if (bench_session_opts(&opts, "bench") < 0)
		return 2;
	int w = opts.width, h = opts.height;
	ksr_session *s = NULL;
	ksr_x11 *x = NULL;
	ksr_err err = {0};
	if (ksr_session_start(&opts, ksr_deadline_in_ms(30000), &s, &err) < 0 ||
	    ksr_x11_open_wait(NULL, ksr_deadline_in_ms(5000), &x, &err) != KSR_WAIT_READY)
		return fprintf(stderr, "bench: %s\n", err.msg), 2;
	printf("session: %s + %s\n", ksr_session_server_name(s), ksr_session_wm_name(s));
	/* Something to look at: terminals full of text in several colours over
	 * most of the screen (an empty black root would compress to nothing). */
	static const char *const bg[] = {"white", "#3465a4", "#fce94f"};
	int pids[3];
	for (int i = 0; i < 3; i++) {
		char geom[32];
		snprintf(geom, sizeof geom, "120x50+%d+%d", i * 560, i * 90);
		char *a[] = {"xterm",
		             "-geometry",
		             geom,
		             "-bg",
		             (char *)bg[i],
		             "-fg",
		             "black",
		             "-e",
		             "sh",
		             "-c",
		             "ls -l /usr/bin /usr/lib; sleep 600",
		             NULL};
		pids[i] = spawn(a);
	}
	wait_terminals(x, 3);

	char dir[] = "/tmp/ksr-bench-XXXXXX";
	mkdtemp(dir);
	char ours[64], imp[64], scr[64];
	snprintf(ours, sizeof ours, "%s/ours.png", dir);
	snprintf(imp, sizeof imp, "%s/import.png", dir);
	snprintf(scr, sizeof scr, "%s/scrot.png", dir);
	printf("full-screen capture -> PNG file, %dx%d, median of %d\n", w, h, n);
	long b_ours = 0, b_imp = -1, b_scr = -1;
	double t_ours = bench_ours(x, n, ours, &b_ours);
	char *ia[] = {"import", "-window", "root", imp, NULL};
	char *sa[] = {"scrot", "-o", scr, NULL};
	double t_imp = bench_tool(ia, n, imp, &b_imp);
	double t_scr = bench_tool(sa, n, scr, &b_scr);
	row("kasm-session-runtime (in process)", t_ours, b_ours, 0);
	row("import -window root", t_imp, b_imp, t_ours);
	row("scrot", t_scr, b_scr, t_ours);

	for (int i = 0; i < 3; i++) {
		kill(-pids[i], SIGKILL);
		waitpid(pids[i], NULL, 0);
	}
	if (getenv("KSR_BENCH_KEEP"))
		rename(ours, getenv("KSR_BENCH_KEEP"));
	unlink(ours);
	unlink(imp);
	unlink(scr);
	rmdir(dir);
	ksr_x11_close(x);
	ksr_session_stop(s);
	return 0;
}
