/* A click's evidence: the full-screen NN-step.png and NN-step-annotated.png
 * (a ring and cross-hair where the click landed). This runtime does it in
 * process (one capture, ksr_image_mark, two PNG encodes and writes); the
 * established way is ImageMagick: `import -window root` then `convert -draw`.
 * One private Xvfb with xterms of text on it; medians; not a test. */
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

static int write_png(const ksr_image *img, const char *path)
{
	ksr_err err = {0};
	unsigned char *buf = NULL;
	size_t len = 0;
	if (ksr_image_encode_png(img, &buf, &len, &err) < 0)
		return -1;
	FILE *f = fopen(path, "wb");
	int rc = f && fwrite(buf, 1, len, f) == len ? 0 : -1;
	if (f)
		fclose(f);
	free(buf);
	return rc;
}

static double ours_once(ksr_x11 *x, const char *plain, const char *marked, int px, int py)
{
	ksr_err err = {0};
	double t0 = bench_now_ms();
	ksr_image *img = ksr_x11_capture(x, 0, &err);
	if (!img || write_png(img, plain) < 0)
		return -1;
	ksr_image_mark(img, px, py);
	int rc = write_png(img, marked);
	ksr_image_free(img);
	return rc < 0 ? -1 : bench_now_ms() - t0;
}

static double magick_once(const char *plain, const char *marked, int px, int py)
{
	char circle[64], hline[64], vline[64];
	snprintf(circle, sizeof circle, "circle %d,%d %d,%d", px, py, px + 14, py);
	snprintf(hline, sizeof hline, "line %d,%d %d,%d", px - 22, py, px + 22, py);
	snprintf(vline, sizeof vline, "line %d,%d %d,%d", px, py - 22, px, py + 22);
	char *imp[] = {"import", "-window", "root", (char *)plain, NULL};
	char *conv[] = {"convert",      (char *)plain, "-fill",        "none", "-stroke", "red",
	                "-strokewidth", "3",           "-draw",        circle, "-draw",   hline,
	                "-draw",        vline,         (char *)marked, NULL};
	double a = bench_run(imp), b = a < 0 ? -1 : bench_run(conv);
	return b < 0 ? -1 : a + b;
}

static void start_terminals(int pids[3])
{
	static const char *const bg[] = {"white", "#3465a4", "#fce94f"};
	for (int i = 0; i < 3; i++) {
		char geom[32];
		snprintf(geom, sizeof geom, "100x40+%d+%d", i * 400, i * 80);
		char *a[] = {"xterm", "-geometry",   geom,
		             "-bg",   (char *)bg[i], "-e",
		             "sh",    "-c",          "ls -l /usr/bin; sleep 600",
		             NULL};
		pids[i] = bench_spawn(a);
	}
	ksr_sleep_ms(1500); /* a moment to map and draw; only the content matters here */
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 15;
	n = n < 1 || n > 1000 ? 15 : n;
	ksr_session_opts opts = {.width = 1280, .height = 720};
	ksr_session *s = NULL;
	ksr_x11 *x = NULL;
	ksr_err err = {0};
	if (ksr_session_start(&opts, ksr_deadline_in_ms(30000), &s, &err) < 0 ||
	    ksr_x11_open_wait(NULL, ksr_deadline_in_ms(5000), &x, &err) != KSR_WAIT_READY)
		return fprintf(stderr, "bench: %s\n", err.msg), 2;
	int pids[3];
	start_terminals(pids);
	char dir[] = "/tmp/ksr-bench-ev-XXXXXX";
	if (!mkdtemp(dir))
		return 2;
	char plain[64], marked[64];
	snprintf(plain, sizeof plain, "%s/01-step.png", dir);
	snprintf(marked, sizeof marked, "%s/01-step-annotated.png", dir);
	double ours[n], magick[n];
	for (int i = 0; i < n; i++) {
		ours[i] = ours_once(x, plain, marked, 300 + i, 200 + i);
		magick[i] = magick_once(plain, marked, 300 + i, 200 + i);
	}
	double o = bench_median(ours, n), m = bench_median(magick, n);
	printf("| click evidence (1280x720 screenshot + annotated copy), median of %d | ms |\n"
	       "|---|---|\n",
	       n);
	printf("| kasm-session-runtime (in process) | %.1f |\n", o);
	if (m < 0)
		printf("| import -window root + convert -draw | n/a |\n");
	else
		printf("| import -window root + convert -draw | %.1f (%.1fx ours) |\n", m, m / o);
	for (int i = 0; i < 3; i++) {
		kill(-pids[i], SIGKILL);
		waitpid(pids[i], NULL, 0);
	}
	unlink(plain);
	unlink(marked);
	rmdir(dir);
	ksr_x11_close(x);
	ksr_session_stop(s);
	return 0;
}
