/* Small helpers shared by the benchmarks: a monotonic clock that separate
 * processes can compare, medians, quiet child processes, markdown rows. */
#ifndef KSR_BENCH_UTIL_H
#define KSR_BENCH_UTIL_H

#include <stddef.h>

double bench_now_ms(void); /* CLOCK_MONOTONIC: the same clock in every process */
double bench_median(const double *v, int n);
double bench_min(const double *v, int n);
double bench_max(const double *v, int n);
/* fork + exec in a new process group, stdio on /dev/null; returns the PID. */
int bench_spawn(char *const argv[]);
/* Run to completion; milliseconds taken, or -1 when it did not exit 0. */
double bench_run(char *const argv[]);
/* Run to completion and return what it printed, standard output and error
 * together (caller frees): compare prints its figure on stderr, odiff on stdout. */
char *bench_run_capture(char *const argv[], double *ms, int *exit_code);
long bench_file_size(const char *path);
/* Peak RSS (VmHWM) of a live process in KiB, -1 when it is gone. */
long bench_vm_hwm_kib(int pid);

/* Until a window titled `title` is mapped (event-driven, X events) or ms
 * pass; its id, or 0. Long enough for a window manager still busy re-grabbing
 * keys after xdotool's remapping. */
typedef struct ksr_x11 ksr_x11;
unsigned long bench_wait_window(ksr_x11 *x, const char *title, int ms);

/* The private session a benchmark starts, as the runtime's own is chosen:
 * KASM_RUNTIME_XVFB_SIZE (default 1920x1080), KASM_RUNTIME_DISPLAY_SERVER and
 * KASM_RUNTIME_WM (xvfb/openbox by default; xvnc/xfwm4 for the Kasm kind).
 * -1 with a message on stderr when one is bad. */
struct ksr_session_opts;
int bench_session_opts(struct ksr_session_opts *o, const char *who);

#endif
