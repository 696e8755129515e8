/* The root window's id, for callers that wait on the whole screen's repaints
 * (ksr_x11_quiet_wait on the root: the MCP screen.wait tool). Its own file so
 * that it stays apart from the readiness code in x11_ready.c. */
#include "ksr/x11.h"
#include "backend/x11/priv.h"

unsigned long ksr_x11_root_window(const ksr_x11 *x)
{
	return x && !x->dead ? (unsigned long)x->root : 0;
}
