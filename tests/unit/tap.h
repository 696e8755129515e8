/* A tiny TAP producer for the unit tests. */
#ifndef KSR_TAP_H
#define KSR_TAP_H

#include <stdbool.h>

bool tap_ok(bool cond, const char *file, int line, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
bool tap_is_str(const char *got, const char *want, const char *file, int line, const char *what);
bool tap_is_int(long long got, long long want, const char *file, int line, const char *what);
/* A skipped test, shown as "ok N # SKIP why" and written to $KSR_SKIP_LOG;
 * tap_skip_unless_installable fails instead where KSR_STRICT_SKIPS=1 (the
 * project's CI: what is missing is something scripts/setup.sh provides). */
void tap_skip(const char *file, int line, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
void tap_skip_unless_installable(const char *file, int line, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
int tap_done(void); /* prints the plan; exit status: 0 when every test passed */

#define skip(...)                    tap_skip(__FILE__, __LINE__, __VA_ARGS__)
#define skip_unless_installable(...) tap_skip_unless_installable(__FILE__, __LINE__, __VA_ARGS__)
#define ok(cond, ...)                tap_ok((cond), __FILE__, __LINE__, __VA_ARGS__)
#define is_str(got, want, what)      tap_is_str((got), (want), __FILE__, __LINE__, (what))
#define is_int(got, want, what)      tap_is_int((got), (want), __FILE__, __LINE__, (what))

#endif
