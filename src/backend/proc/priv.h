/* What the proc backend's files share: reading a process's environment and
 * its /proc/PID/stat line. */
#ifndef KSR_BACKEND_PROC_PRIV_H
#define KSR_BACKEND_PROC_PRIV_H

#include <stdbool.h>
#include <stddef.h>

/* The value of key in pid's environment into buf: 1 found, 0 not there (or
 * the process is gone: a zombie's environment reads empty), -1 not ours to
 * read (display.c). */
int ksr_proc_environ_value(int pid, const char *key, char *buf, size_t len);

/* The fields of /proc/PID/stat the backend reads (origin.c). */
typedef struct ksr_proc_stat {
	char state;
	int ppid, pgrp, sid;
	unsigned long long start_ticks; /* clock ticks since boot */
} ksr_proc_stat;
/* false when pid is gone (or its stat cannot be read). */
bool ksr_proc_read_stat(int pid, ksr_proc_stat *st);

#endif
