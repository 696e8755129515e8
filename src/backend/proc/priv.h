/* What the proc backend's files share: reading a process's environment and
 * its /proc/PID/stat line (ksr_proc_read_stat, public in ksr/proc.h). */
#ifndef KSR_BACKEND_PROC_PRIV_H
#define KSR_BACKEND_PROC_PRIV_H

#include <stdbool.h>
#include <stddef.h>

/* The value of key in pid's environment into buf: 1 found, 0 not there (or
 * the process is gone: a zombie's environment reads empty), -1 not ours to
 * read (display.c). */
int ksr_proc_environ_value(int pid, const char *key, char *buf, size_t len);

#endif
