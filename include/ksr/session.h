/* The embedded desktop session (--xvfb, --display-server): a private X server
 * (Xvfb, or Xvnc of the TigerVNC family listening on loopback only) chosen with
 * -displayfd, a window manager (openbox or xfwm4) and, but for Xvnc, private
 * XDG folders, stopped by PID after. */
#ifndef KSR_SESSION_H
#define KSR_SESSION_H

#include <stdint.h>

#include "ksr/deadline.h"
#include "ksr/error.h"

typedef struct ksr_session ksr_session;

/* Which X server and window manager (docs/cli.md#the-private-display). AUTO:
 * Xvfb when it is installed, else Xtigervnc (or Xvnc); openbox when it is
 * installed, else xfwm4. */
typedef enum ksr_server_kind { KSR_SERVER_AUTO, KSR_SERVER_XVFB, KSR_SERVER_XVNC } ksr_server_kind;
typedef enum ksr_wm_kind { KSR_WM_AUTO, KSR_WM_OPENBOX, KSR_WM_XFWM4 } ksr_wm_kind;

typedef struct ksr_session_opts {
	int width, height; /* default 1280x720 */
	/* Xvfb and openbox output; NULL: session.log in the private temp folder
	 * (quoted in the error when the session fails to start). */
	const char *log_path;
	ksr_server_kind server;
	ksr_wm_kind wm;
	/* The apps' HOME and XDG folders: by default the user's own with server
	 * XVNC (as in a Kasm session: the image's configuration is tested),
	 * private XDG config/data/cache folders otherwise (HOME stays); with
	 * private_home a private HOME and private XDG folders whatever the server.
	 * XDG_RUNTIME_DIR is the user's where set, else the session's own. */
	bool private_home;
} ksr_session_opts;

/* Start the session and export DISPLAY (and the folders it chose) into this
 * process's environment, so the launch and every tool inherit them. */
int ksr_session_start(const ksr_session_opts *opts, ksr_deadline d, ksr_session **out,
                      ksr_err *err);
const char *ksr_session_display(const ksr_session *s);
/* PIDs of the session's processes (0 when not running), e.g. to watch them. */
int ksr_session_xvfb_pid(const ksr_session *s); /* the X server (Xvfb or Xvnc) */
int ksr_session_wm_pid(const ksr_session *s);
int ksr_session_dbus_pid(const ksr_session *s); /* the private session bus */
/* When each part was ready, in ms from the start (they start side by side):
 * the X server answering, the buses (D-Bus, AT-SPI) up, the window manager
 * managing (the session's start). 0s for NULL. */
void ksr_session_start_times(const ksr_session *s, int64_t *server_ms, int64_t *buses_ms,
                             int64_t *wm_ms);
/* Why the session bus or the AT-SPI bus is missing (the session still runs), or NULL. */
const char *ksr_session_a11y_error(const ksr_session *s);
/* NULL-safe; kills by PID and reaps: SIGTERM to every part at once, SIGKILL
 * to what is left 2 s after. */
void ksr_session_stop(ksr_session *s);
/* NULL-safe: SIGTERM to every part at once, nothing waited for; the
 * ksr_session_stop that must follow reaps them. For a caller with other work
 * to do meanwhile (the run writes its report while the session goes). */
void ksr_session_signal(ksr_session *s);

/* The X server and window manager programs that run ("Xvfb", "Xtigervnc";
 * "openbox", "xfwm4"). */
const char *ksr_session_server_name(const ksr_session *s);
const char *ksr_session_wm_name(const ksr_session *s);
/* Whose folders the apps get, for notes: "the user's HOME and XDG folders",
 * "private XDG folders" or "a private HOME and XDG folders". */
const char *ksr_session_folders_name(const ksr_session *s);
/* The loopback VNC port of an Xvnc session (0: none, or Xvfb). */
int ksr_session_vnc_port(const ksr_session *s);

/* Parse "xvfb|xvnc|auto" and "openbox|xfwm4|auto"; -1 for anything else. */
int ksr_session_parse_server(const char *text, ksr_server_kind *out);
int ksr_session_parse_wm(const char *text, ksr_wm_kind *out);

/* Parse "WxH" (KASM_RUNTIME_XVFB_SIZE). */
int ksr_session_parse_size(const char *text, int *w, int *h);

#endif
