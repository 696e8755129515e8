/* Input as the X server saw it (the RECORD extension, libXtst): key and button
 * events from every client and device, read on connections of their own so
 * that the data connection's descriptor can sit in a deadline wait beside
 * anything else. No polling: the server sends each event as it happens. */
#ifndef KSR_X11_RECORD_H
#define KSR_X11_RECORD_H

#include <stdbool.h>
#include <stddef.h>

#include "ksr/error.h"

typedef struct ksr_x11 ksr_x11;
typedef struct ksr_x11_record ksr_x11_record;

typedef enum ksr_rec_kind {
	KSR_REC_KEY_PRESS,
	KSR_REC_KEY_RELEASE,
	KSR_REC_BUTTON_PRESS,
	KSR_REC_BUTTON_RELEASE,
} ksr_rec_kind;

/* The modifiers held when the event happened (tracked from the key events
 * themselves, by the keysym each modifier key carries). */
enum {
	KSR_REC_SHIFT = 1u << 0,
	KSR_REC_CTRL = 1u << 1,
	KSR_REC_ALT = 1u << 2,
	KSR_REC_SUPER = 1u << 3,
	KSR_REC_ALTGR = 1u << 4,
	KSR_REC_CAPS = 1u << 5, /* Caps Lock is on */
};

typedef struct ksr_rec_event {
	ksr_rec_kind kind;
	int detail;            /* keycode, or button (1 left, 2 middle, 3 right, 4/5 wheel) */
	int x, y;              /* the pointer, root pixels */
	unsigned long time_ms; /* the server's timestamp */
	unsigned mods;         /* KSR_REC_*, before this event */
	/* Key events: the keysym the modifiers chose (Shift, Caps Lock, AltGr
	 * levels) and the key's unshifted one (its name in a chord), with the
	 * keymap as it was at the event (mapping changes between events, such
	 * as xdotool's or the runtime's own spare keycodes, are followed). */
	unsigned long keysym, base_keysym;
	bool is_modifier; /* a modifier key (Shift, Control, Alt...) */
	char utf8[8];     /* the printable text the key typed, "" for none */
} ksr_rec_event;

/* Start recording every client's key and button events on x's display. */
ksr_x11_record *ksr_x11_record_open(const ksr_x11 *x, ksr_err *err);
int ksr_x11_record_fd(const ksr_x11_record *r); /* -1 once the connection broke */
/* What has arrived (never blocks): up to max events into out. Returns how
 * many, or -1 when the connection broke. Call until it returns 0. */
int ksr_x11_record_read(ksr_x11_record *r, ksr_rec_event *out, size_t max);
void ksr_x11_record_close(ksr_x11_record *r); /* NULL-safe */

/* A keysym's name as a chord writes it ("F12", "s", "Return", "U20AC") into
 * buf; NULL when it has none. */
const char *ksr_x11_keysym_name(unsigned long keysym, char *buf, size_t len);

/* The KSR_REC_* bit a modifier key's keysym stands for (Control_L ->
 * KSR_REC_CTRL); 0 for any other key. */
unsigned ksr_x11_keysym_modifier(unsigned long keysym);

/* _NET_ACTIVE_WINDOW, else the input focus (0 when none). */
unsigned long ksr_x11_active_window(ksr_x11 *x);

#endif
