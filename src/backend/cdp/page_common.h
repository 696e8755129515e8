/* What the page protocols share (CDP here, WebDriver BiDi in backend/bidi),
 * implemented once in dom.c: the actionability loop around the probe script
 * (ksr_page_probe_js), the element-state wait, the page: check's script, and
 * page keys (a chord's words parsed into DOM key values and codes; each
 * protocol turns them into its own input events). */
#ifndef KSR_BACKEND_CDP_PAGE_COMMON_H
#define KSR_BACKEND_CDP_PAGE_COMMON_H

#include <stdbool.h>

#include "ksr/cdp.h"
#include "ksr/page.h"

/* Run ksr_page_probe_js on the element ref names with want; *out gets the
 * object it returned (owned by the caller). */
typedef ksr_page_status (*ksr_page_probe_fn)(void *ud, const char *ref, const char *want,
                                             ksr_deadline d, cJSON **out, ksr_err *err);
/* Probe until the element is actionable for want ("click", "fill", "type")
 * or d passes (NOT_READY naming what was wrong last); wire is serviced
 * between probes. */
ksr_page_status ksr_page_actionable(ksr_cdp *wire, ksr_page_probe_fn probe, void *ud,
                                    const char *ref, const char *want, ksr_deadline d,
                                    ksr_page_hit *hit, ksr_err *err);
/* Probe until the element is in state ("attached", "detached", "visible", "hidden"). */
ksr_page_status ksr_page_wait_state(ksr_cdp *wire, ksr_page_probe_fn probe, void *ud,
                                    const char *ref, const char *state, ksr_deadline d,
                                    ksr_page_hit *hit, ksr_err *err);
/* The expression a page: check evaluates (free it), and its value read back. */
char *ksr_page_state_js(const char *selector);
void ksr_page_state_read(const cJSON *v, ksr_page_info *out);

/* The press listener (ksr_page_watch_presses), a JavaScript function (send)
 * run once in each document: a capturing listener that, at each trusted
 * left press, calls send with the press as JSON text: {x, y} (screen
 * pixels), frame (a sub-document: nothing picked), pick (ksr_page_pick_js's
 * object, or null) and view ([x, y, w, h]: the viewport on the screen, in
 * screen pixels; top documents only). A second run in a document does nothing. */
extern const char ksr_page_press_js[];
#define KSR_PRESS_BINDING "__ksrPress" /* CDP: the binding send calls */
#define KSR_PRESS_CHANNEL "ksr-press"  /* BiDi: the channel send is */
/* The page's reports kept on the wire (ksr_cdp_press_add) and taken as
 * ksr_page_take_press says; both protocols' take_press. */
ksr_page_status ksr_page_wire_take_press(ksr_cdp *wire, int x, int y, ksr_deadline d,
                                         ksr_page_pressed *out, ksr_err *err);

enum { KSR_MOD_ALT = 1, KSR_MOD_CTRL = 2, KSR_MOD_META = 4, KSR_MOD_SHIFT = 8 };

typedef struct ksr_page_key {
	char key[16], code[24], text[8]; /* DOM key ("Enter", "a"), code, typed text */
	int vk;                          /* Windows virtual key code (CDP) */
} ksr_page_key;

typedef struct ksr_page_chord {
	ksr_page_key key;
	int mods, order[4], n; /* modifiers in the order written */
} ksr_page_chord;

/* The key a modifier bit stands for (Control, Shift...). */
const ksr_page_key *ksr_page_modifier_key(int bit);

/* Called once a chord; a status other than OK stops the walk. */
typedef ksr_page_status (*ksr_page_chord_fn)(void *ud, const ksr_page_chord *pc, ksr_deadline d,
                                             ksr_err *err);
/* Every space-separated chord parsed and, when fn is given, pressed; stops
 * at the first error (a bad key is ERROR with err naming it). */
ksr_page_status ksr_page_chords_each(const char *chords, ksr_page_chord_fn fn, void *ud,
                                     ksr_deadline d, ksr_err *err);
/* The key that types the character at p (a newline is Enter, other text as
 * an input method gives it); returns the next character. */
const char *ksr_page_key_of_char(const char *p, ksr_page_key *k);

#endif
