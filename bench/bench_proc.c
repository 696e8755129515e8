/* A shell step's output: ksr_proc_run draining 1 MB a child writes (captured
 * up to 1000 bytes, and not captured), beside the established way, popen(3)
 * and reading it all. The figures test_proc.c used to assert ("big outputs
 * quick") live here; medians over N rounds; not a test. */
#include "bench_util.h"
#include "ksr/proc.h"

#include <stdio.h>
#include <stdlib.h>

#define BIG "head -c 1000000 /dev/zero | tr '\\0' x"

static double ours(int capture)
{
	ksr_err err = {0};
	int code = -1;
	char *out = NULL;
	double t0 = bench_now_ms();
	ksr_proc_run(BIG, ksr_deadline_in_ms(10000), &code, capture ? &out : NULL, 1000, &err);
	double ms = bench_now_ms() - t0;
	free(out);
	return code == 0 ? ms : -1;
}

static double popen_read(void)
{
	char buf[65536];
	double t0 = bench_now_ms();
	FILE *p = popen(BIG, "r");
	if (!p)
		return -1;
	while (fread(buf, 1, sizeof buf, p) > 0)
		;
	int st = pclose(p);
	return st == 0 ? bench_now_ms() - t0 : -1;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 15;
	if (n < 1 || n > 1000)
		n = 15;
	double *a = calloc((size_t)n, sizeof *a), *b = calloc((size_t)n, sizeof *b),
	       *c = calloc((size_t)n, sizeof *c);
	for (int i = 0; i < n; i++) {
		a[i] = ours(1);
		b[i] = ours(0);
		c[i] = popen_read();
	}
	printf("%d rounds, a child writing 1 MB\n\n", n);
	printf("| job | median ms | min | max |\n|---|---:|---:|---:|\n");
	printf("| ksr_proc_run, capture capped at 1000 B | %.2f | %.2f | %.2f |\n",
	       bench_median(a, n), bench_min(a, n), bench_max(a, n));
	printf("| ksr_proc_run, no capture | %.2f | %.2f | %.2f |\n", bench_median(b, n),
	       bench_min(b, n), bench_max(b, n));
	printf("| popen + read all (established) | %.2f | %.2f | %.2f |\n", bench_median(c, n),
	       bench_min(c, n), bench_max(c, n));
	printf("\nROW proc.big_output %.3f %.3f\n", bench_median(a, n), bench_median(c, n));
	free(a);
	free(b);
	free(c);
	return 0;
}
