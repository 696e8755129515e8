/* The page rung: connect time and page_click / page_type (with every
 * actionability check) against a running Chromium over CDP, or with
 * --firefox a running Firefox over WebDriver BiDi (through the page handle,
 * as the executors); bench/cdp.sh runs it beside puppeteer-core on the same
 * page of the same browser in the same run.
 *   bench_cdp [--firefox] PORT URL [ITERATIONS]
 * Prints one "ROW name median_ms p90_ms n" line per figure (Firefox's are
 * ksr.ff.*). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ksr/bidi.h"
#include "ksr/cdp.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void row(const char *name, double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp);
	printf("ROW %s %.3f %.3f %d\n", name, v[n / 2], v[(n * 9) / 10], n);
}

static ksr_deadline soon(void)
{
	return ksr_deadline_in_ms(10000);
}

static int bench_connect(int port, int n)
{
	double *t = calloc((size_t)n, sizeof *t), *disc = calloc((size_t)n, sizeof *disc),
	       *hand = calloc((size_t)n, sizeof *hand), *att = calloc((size_t)n, sizeof *att);
	for (int i = 0; i < n; i++) {
		ksr_err err = {0};
		double t0 = now_ms();
		ksr_cdp *c = ksr_cdp_connect("127.0.0.1", port, soon(), NULL, &err);
		t[i] = now_ms() - t0;
		if (!c) {
			fprintf(stderr, "bench_cdp: connect: %s\n", err.msg);
			return -1;
		}
		disc[i] = ksr_cdp_timings(c)->discover_ms;
		hand[i] = ksr_cdp_timings(c)->handshake_ms;
		att[i] = ksr_cdp_timings(c)->attach_ms;
		ksr_cdp_close(c);
	}
	row("ksr.connect", t, n);
	/* its parts: /json/version over HTTP, the WebSocket handshake, attaching */
	row("ksr.connect.discover", disc, n);
	row("ksr.connect.handshake", hand, n);
	row("ksr.connect.attach", att, n);
	free(t), free(disc), free(hand), free(att);
	return 0;
}

static int bench_actions(int port, const char *url, int n)
{
	ksr_err err = {0};
	ksr_cdp *c = ksr_cdp_connect("127.0.0.1", port, soon(), NULL, &err);
	if (!c || ksr_cdp_navigate(c, url, soon(), &err) != KSR_CDP_OK) {
		fprintf(stderr, "bench_cdp: %s\n", err.msg);
		ksr_cdp_close(c);
		return -1;
	}
	double *t = calloc((size_t)n, sizeof *t);
	for (int i = 0; i < n; i++) {
		double t0 = now_ms();
		if (ksr_cdp_click(c, "#b", soon(), NULL, &err) != KSR_CDP_OK)
			fprintf(stderr, "bench_cdp: click: %s\n", err.msg);
		t[i] = now_ms() - t0;
	}
	row("ksr.click", t, n);
	for (int i = 0; i < n; i++) {
		double t0 = now_ms();
		if (ksr_cdp_type(c, "#t", "hello", soon(), NULL, &err) != KSR_CDP_OK)
			fprintf(stderr, "bench_cdp: type: %s\n", err.msg);
		t[i] = now_ms() - t0;
	}
	row("ksr.type5", t, n);
	bool truthy = false;
	cJSON *v = NULL;
	ksr_cdp_eval(c, "document.getElementById('b').dataset.n", soon(), &truthy, &v, &err);
	const char *got = cJSON_GetStringValue(v);
	int clicks = got ? atoi(got) : 0;
	printf("CHECK ksr clicks counted by the page: %d of %d\n", clicks, n);
	cJSON_Delete(v);
	free(t);
	ksr_cdp_close(c);
	return clicks == n ? 0 : -1;
}

/* Firefox over WebDriver BiDi: each connect is a whole session (session.new,
 * the context, session.end at close: Firefox holds one at a time). */
static int bench_firefox(int port, const char *url, int n)
{
	double *t = calloc((size_t)n, sizeof *t);
	ksr_err err = {0};
	ksr_page_status st;
	for (int i = 0; i < n; i++) {
		double t0 = now_ms();
		ksr_page *p = ksr_page_connect("127.0.0.1", port, KSR_PAGE_BROWSER_FIREFOX, soon(),
		                               NULL, &st, &err);
		t[i] = now_ms() - t0;
		if (!p) {
			fprintf(stderr, "bench_cdp: BiDi connect: %s\n", err.msg);
			free(t);
			return -1;
		}
		ksr_page_close(p);
	}
	row("ksr.ff.connect", t, n);
	ksr_page *p = ksr_page_connect("127.0.0.1", port, KSR_PAGE_BROWSER_FIREFOX, soon(), NULL,
	                               &st, &err);
	if (!p || ksr_page_navigate(p, url, soon(), &err) != KSR_PAGE_OK) {
		fprintf(stderr, "bench_cdp: %s\n", err.msg);
		ksr_page_close(p);
		free(t);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		double t0 = now_ms();
		if (ksr_page_click(p, "#b", soon(), NULL, &err) != KSR_PAGE_OK)
			fprintf(stderr, "bench_cdp: click: %s\n", err.msg);
		t[i] = now_ms() - t0;
	}
	row("ksr.ff.click", t, n);
	for (int i = 0; i < n; i++) {
		double t0 = now_ms();
		if (ksr_page_type(p, "#t", "hello", soon(), NULL, &err) != KSR_PAGE_OK)
			fprintf(stderr, "bench_cdp: type: %s\n", err.msg);
		t[i] = now_ms() - t0;
	}
	row("ksr.ff.type5", t, n);
	bool truthy = false;
	cJSON *v = NULL;
	ksr_page_eval(p, "document.getElementById('b').dataset.n", soon(), &truthy, &v, &err);
	const char *got = cJSON_GetStringValue(v);
	int clicks = got ? atoi(got) : 0;
	printf("CHECK ksr Firefox clicks counted by the page: %d of %d\n", clicks, n);
	cJSON_Delete(v);
	free(t);
	ksr_page_close(p);
	return clicks == n ? 0 : -1;
}

int main(int argc, char **argv)
{
	bool firefox = argc > 1 && !strcmp(argv[1], "--firefox");
	argc -= firefox;
	argv += firefox;
	if (argc < 3) {
		fprintf(stderr, "usage: bench_cdp [--firefox] PORT URL [ITERATIONS]\n");
		return 2;
	}
	int port = atoi(argv[1]), n = argc > 3 ? atoi(argv[3]) : 50;
	ksr_cancel_install();
	if (n < 1)
		return 1;
	if (firefox)
		return bench_firefox(port, argv[2], n) < 0;
	if (bench_connect(port, n) < 0 || bench_actions(port, argv[2], n) < 0)
		return 1;
	return 0;
}
