/* The embedded desktop session (--xvfb): a private Xvfb chosen with -displayfd,
 * a window manager (openbox) and private XDG folders, stopped by PID after. */
#ifndef KSR_SESSION_H
#define KSR_SESSION_H

#include "ksr/deadline.h"
#include "ksr/error.h"

typedef struct ksr_session ksr_session;

typedef struct ksr_session_opts {
	int width, height; /* default 1280x720 */
	/* Xvfb and openbox output; NULL: session.log in the private temp folder
	 * (quoted in the error when the session fails to start). */
	const char *log_path;
} ksr_session_opts;

/* Start the session and export DISPLAY (and the XDG folders) into this process's
 * environment, so the launch and every tool inherit them. */
int ksr_session_start(const ksr_session_opts *opts, ksr_deadline d, ksr_session **out,
                      ksr_err *err);
const char *ksr_session_display(const ksr_session *s);
/* PIDs of the session's processes (0 when not running), e.g. to watch them. */
int ksr_session_xvfb_pid(const ksr_session *s);
int ksr_session_wm_pid(const ksr_session *s);
int ksr_session_dbus_pid(const ksr_session *s); /* the private session bus */
/* Why the session bus or the AT-SPI bus is missing (the session still runs), or NULL. */
const char *ksr_session_a11y_error(const ksr_session *s);
void ksr_session_stop(ksr_session *s); /* NULL-safe; kills by PID and reaps */

/* Parse "WxH" (KASM_RUNTIME_XVFB_SIZE). */
int ksr_session_parse_size(const char *text, int *w, int *h);

#endif
