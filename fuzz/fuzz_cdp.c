/* libFuzzer target for what a browser sends over the CDP WebSocket: message
 * fragments reassembled, JSON parsed, replies matched by id, events queued
 * and read by method, crash and detach events noted. Goes through the real
 * receive path in src/backend/cdp/cdp.c (ksr_cdp_fuzz_frames), without a socket. */
#include <stdint.h>

#include "backend/cdp/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ksr_cdp_fuzz_frames(data, size);
	return 0;
}
