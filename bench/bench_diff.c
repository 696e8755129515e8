/* Baseline compare of two full-screen PNGs: ksr_image_diff (with and without
 * PNG decode, and with a diff image written) beside ImageMagick
 * `compare -metric AE` and odiff, on the same two files in the same run.
 *
 * The two screenshots are real ones: a private Xvfb with terminals of text,
 * captured, then one more terminal opened on top and captured again; both
 * written by our own encoder, as `run --update-baseline` writes a baseline.
 * Every tool counts exactly differing pixels (no fuzz, odiff -t 0), and the
 * counts are printed so that the jobs can be seen to be the same.
 *   bench_diff [ITERATIONS]   ODIFF=/path/to/odiff (native binary) */
#include "bench_util.h"
#include "ksr/image.h"
#include "ksr/session.h"
#include "ksr/x11.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_ITER 200

static char dir[] = "/tmp/ksr-bench-diff-XXXXXX";
static char path_a[96], path_b[96], path_d[96];

static int write_png(const ksr_image *img, const char *path, ksr_err *err)
{
	unsigned char *buf = NULL;
	size_t len = 0;
	if (ksr_image_encode_png(img, &buf, &len, err) < 0)
		return -1;
	FILE *f = fopen(path, "wb");
	size_t put = f ? fwrite(buf, 1, len, f) : 0;
	if (f)
		fclose(f);
	free(buf);
	return put == len ? 0 : ksr_err_set(err, "cannot write %s", path);
}

/* Until n more top-level windows than `before` are mapped, then a moment to draw. */
static void wait_windows(ksr_x11 *x, size_t n)
{
	ksr_deadline d = ksr_deadline_in_ms(20000);
	for (;;) {
		ksr_window_list l = {0};
		ksr_err err = {0};
		ksr_x11_list_windows(x, &l, &err);
		size_t have = l.len;
		ksr_window_list_clear(&l);
		if (have >= n || ksr_x11_wait_change(x, d) != KSR_WAIT_READY)
			break;
	}
	ksr_sleep_ms(700);
}

static int xterm(const char *geom, const char *bg, const char *cmd)
{
	char *a[] = {"xterm", "-geometry", (char *)geom, "-bg", (char *)bg,  "-fg",
	             "black", "-e",        "sh",         "-c",  (char *)cmd, NULL};
	return bench_spawn(a);
}

/* Two screenshots that differ in one region, written to path_a and path_b. */
static int make_pair(ksr_x11 *x, int pids[4], ksr_err *err)
{
	static const char *const bg[] = {"white", "#3465a4", "#fce94f"};
	for (int i = 0; i < 3; i++) {
		char geom[32];
		snprintf(geom, sizeof geom, "120x50+%d+%d", i * 560, i * 90);
		pids[i] = xterm(geom, bg[i], "ls -l /usr/bin /usr/lib; sleep 600");
	}
	wait_windows(x, 3);
	ksr_image *a = ksr_x11_capture(x, 0, err);
	if (!a || write_png(a, path_a, err) < 0)
		return -1;
	pids[3] = xterm("60x20+700+400", "#8ae234", "ls -l /etc; sleep 600");
	wait_windows(x, 4);
	ksr_image *b = ksr_x11_capture(x, 0, err);
	int rc = b ? write_png(b, path_b, err) : -1;
	ksr_image_free(a);
	ksr_image_free(b);
	return rc;
}

typedef struct ours_times {
	double diff_only[MAX_ITER], one_decode[MAX_ITER], with_decode[MAX_ITER],
	        with_image[MAX_ITER];
	long long differing;
} ours_times;

static int bench_ours(int n, ours_times *t, ksr_err *err)
{
	ksr_diff_opts o = {.channel_threshold = 0};
	for (int i = 0; i < n; i++) {
		ksr_diff_result r = {0};
		double t0 = bench_now_ms();
		ksr_image *a = ksr_image_read_png(path_a, err);
		ksr_image *b = a ? ksr_image_read_png(path_b, err) : NULL;
		double t1 = bench_now_ms();
		if (!b || ksr_image_diff(a, b, &o, &r, err) < 0)
			return -1;
		double t2 = bench_now_ms();
		t->diff_only[i] = t2 - t1;
		/* The runtime's own job: both PNGs (the screenshot's, the baseline
		 * file) decoded row by row as they are compared; no frame held. */
		double t4 = bench_now_ms();
		ksr_png_rows *ra = ksr_png_rows_open_file(path_a, err);
		ksr_png_rows *rb = ra ? ksr_png_rows_open_file(path_b, err) : NULL;
		ksr_diff_result r1 = {0};
		int rc = rb ? ksr_image_diff_rows(ra, rb, &o, &r1, NULL, NULL, err) : -1;
		ksr_png_rows_close(ra);
		ksr_png_rows_close(rb);
		if (rc < 0 || r1.differing != r.differing)
			return rc < 0 ? -1
			              : ksr_err_set(err, "streamed count %lld, in memory %lld",
			                            r1.differing, r.differing);
		t->one_decode[i] = bench_now_ms() - t4;
		t->with_decode[i] = t2 - t0;
		t->differing = r.differing;
		/* As a drifted baseline is reported: the diff image, encoded and written. */
		ksr_diff_opts od = {.channel_threshold = 0, .want_diff = true};
		ksr_diff_result rd = {0};
		double t3 = bench_now_ms();
		if (ksr_image_diff(a, b, &od, &rd, err) < 0 || write_png(rd.diff, path_d, err) < 0)
			return -1;
		t->with_image[i] = t2 - t0 + bench_now_ms() - t3;
		ksr_image_free(rd.diff);
		ksr_image_free(a);
		ksr_image_free(b);
	}
	return 0;
}

/* A tool's median time and the figure it printed (first number in its output). */
static double bench_tool(char *const argv[], int n, char *figure, size_t len)
{
	double t[MAX_ITER];
	figure[0] = '\0';
	for (int i = 0; i < n; i++) {
		int code = 0;
		char *out = bench_run_capture(argv, &t[i], &code);
		/* "Images differ" is compare's exit 1 and odiff's 22; other codes fail. */
		if (!out || (code != 0 && code != 1 && code != 22)) {
			snprintf(figure, len, "failed (exit %d): %.60s", code, out ? out : "");
			figure[strcspn(figure, "\n")] = '\0';
			free(out);
			return -1;
		}
		if (i == 0) {
			char *p = strpbrk(out, "0123456789");
			snprintf(figure, len, "%.*s", p ? (int)strspn(p, "0123456789.e+") : 0,
			         p ? p : "");
		}
		free(out);
	}
	return bench_median(t, n);
}

static void row(const char *what, double ms, double base, const char *figure)
{
	if (ms < 0) {
		printf("| %s | n/a | | %s |\n", what, figure);
		return;
	}
	printf("| %s | %.1f | %.2f | %s |\n", what, ms, ms / base, figure);
}

static void tools(int n, double base)
{
	const char *odiff = getenv("ODIFF");
	char fig[128];
	char *c1[] = {"compare", "-metric", "AE", path_a, path_b, "null:", NULL};
	row("ImageMagick `compare -metric AE a b null:`", bench_tool(c1, n, fig, sizeof fig), base,
	    fig);
	char *c2[] = {"compare", "-metric", "AE", path_a, path_b, path_d, NULL};
	row("ImageMagick `compare -metric AE a b diff.png`", bench_tool(c2, n, fig, sizeof fig),
	    base, fig);
	if (!odiff || access(odiff, X_OK) != 0) {
		row("odiff", -1, base, "not installed (bench/run-all.sh installs it with npm)");
		return;
	}
	char *o1[] = {(char *)odiff, "-t", "0", "--parsable-stdout", path_a, path_b, NULL};
	row("odiff -t 0 (native binary, no diff image)", bench_tool(o1, n, fig, sizeof fig), base,
	    fig);
	char *o2[] = {(char *)odiff, "-t", "0", "--parsable-stdout", path_a, path_b, path_d, NULL};
	row("odiff -t 0 a b diff.png (native binary)", bench_tool(o2, n, fig, sizeof fig), base,
	    fig);
	char *tr[] = {"true", NULL};
	row("(floor: fork+exec of `true`)", bench_tool(tr, n, fig, sizeof fig), base, "");
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 15;
	if (n < 1 || n > MAX_ITER)
		n = 15;
	int w = 1920, h = 1080, pids[4] = {0};
	const char *size = getenv("KASM_RUNTIME_XVFB_SIZE");
	if (size && ksr_session_parse_size(size, &w, &h) < 0)
		return fprintf(stderr, "bench_diff: bad size %s\n", size), 2;
	if (!mkdtemp(dir))
		return perror("bench_diff: mkdtemp"), 2;
	snprintf(path_a, sizeof path_a, "%s/a.png", dir);
	snprintf(path_b, sizeof path_b, "%s/b.png", dir);
	snprintf(path_d, sizeof path_d, "%s/diff.png", dir);
	ksr_session_opts opts = {.width = w, .height = h};
	ksr_session *sess = NULL;
	ksr_x11 *x = NULL;
	ksr_err err = {0};
	if (ksr_session_start(&opts, ksr_deadline_in_ms(30000), &sess, &err) < 0 ||
	    ksr_x11_open_wait(NULL, ksr_deadline_in_ms(5000), &x, &err) != KSR_WAIT_READY ||
	    make_pair(x, pids, &err) < 0)
		return fprintf(stderr, "bench_diff: %s\n", err.msg), 2;
	for (int i = 0; i < 4; i++)
		if (pids[i] > 0)
			kill(-pids[i], SIGKILL), waitpid(pids[i], NULL, 0);
	ksr_x11_close(x);
	ksr_session_stop(sess);

	ours_times *t = calloc(1, sizeof *t);
	if (bench_ours(n, t, &err) < 0)
		return fprintf(stderr, "bench_diff: %s\n", err.msg), 2;
	double base = bench_median(t->with_decode, n);
	char fig[64];
	snprintf(fig, sizeof fig, "%lld", t->differing);
	printf("\nbaseline compare of two %dx%d PNGs (%ld + %ld KiB), median of %d\n\n", w, h,
	       bench_file_size(path_a) / 1024, bench_file_size(path_b) / 1024, n);
	printf("| compare | median ms | × ours (decode + diff) | differing pixels reported |\n");
	printf("|---|---:|---:|---|\n");
	row("**ours**: ksr_image_diff only (decoded images in memory)",
	    bench_median(t->diff_only, n), base, fig);
	row("**ours** as the runtime: both PNGs decoded row by row as compared (no frame held)",
	    bench_median(t->one_decode, n), base, fig);
	row("**ours**: read + decode both PNGs + ksr_image_diff", base, base, fig);
	row("**ours**: the same + diff image encoded and written", bench_median(t->with_image, n),
	    base, fig);
	tools(n, base);
	free(t);
	if (getenv("KSR_BENCH_KEEP"))
		printf("\nimages kept in %s\n", dir);
	else {
		unlink(path_a), unlink(path_b), unlink(path_d);
		rmdir(dir);
	}
	return 0;
}
