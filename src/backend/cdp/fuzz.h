/* A way into the CDP message handling for the libFuzzer target
 * (fuzz/fuzz_cdp.c) without a browser: not part of the library's API. */
#ifndef KSR_CDP_FUZZ_H
#define KSR_CDP_FUZZ_H

#include <stddef.h>

/* Feed data, cut into WebSocket-like fragments, through the receive path of a
 * connection that has no socket (see cdp.c for the framing). */
void ksr_cdp_fuzz_frames(const unsigned char *data, size_t size);

#endif
