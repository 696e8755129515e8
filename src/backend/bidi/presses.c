/* The press listener in Firefox (ksr_page_watch_presses over WebDriver
 * BiDi): a preload script for every new document of the tab, the same
 * function called in the current one, each given a channel argument (a
 * function in the page whose calls arrive as script.message events on the
 * session; the wire's hook keeps them, bidi.c). */
#include "ksr/bidi.h"

#include "backend/bidi/priv.h"
#include "backend/cdp/page_common.h"
#include "backend/cdp/wire.h"

#include <cjson/cJSON.h>

#define NAVIGATED_EVENT "browsingContext.domContentLoaded"

/* [{type: "channel", value: {channel: KSR_PRESS_CHANNEL}}] */
static cJSON *channel_args(void)
{
	cJSON *args = cJSON_CreateArray(), *ch = cJSON_CreateObject();
	cJSON_AddStringToObject(ch, "type", "channel");
	cJSON_AddStringToObject(cJSON_AddObjectToObject(ch, "value"), "channel", KSR_PRESS_CHANNEL);
	cJSON_AddItemToArray(args, ch);
	return args;
}

/* The current document: a document replaced during the call never answers
 * it (its successor's domContentLoaded ends the wait, and that document
 * has the preload script), and an error there leaves only the current
 * document without the listener: neither fails the watch. */
static ksr_page_status install_now(ksr_bidi *b, ksr_deadline d, ksr_err *err)
{
	cJSON *p = cJSON_CreateObject(), *res = NULL;
	cJSON_AddStringToObject(p, "functionDeclaration", ksr_page_press_js);
	cJSON_AddItemToObject(p, "arguments", channel_args());
	cJSON_AddItemToObject(p, "target", bidi_target(b));
	cJSON_AddBoolToObject(p, "awaitPromise", false);
	bool replaced = false;
	ksr_err ignored = {0};
	ksr_page_status st =
	        ksr_cdp_wire_call_unless(b->wire, "script.callFunction", p, d, NAVIGATED_EVENT,
	                                 b->context, &res, &replaced, &ignored);
	cJSON_Delete(res);
	if (st == KSR_PAGE_OK || st == KSR_PAGE_ERROR)
		return KSR_PAGE_OK;
	*err = ignored;
	return st;
}

ksr_page_status ksr_bidi_watch_presses(ksr_bidi *b, ksr_deadline d, ksr_err *err)
{
	if (!b)
		return ksr_err_set(err, "no browser is attached"), KSR_PAGE_CLOSED;
	cJSON *p = cJSON_CreateObject();
	cJSON_AddItemToArray(cJSON_AddArrayToObject(p, "events"),
	                     cJSON_CreateString("script.message"));
	ksr_page_status st = ksr_bidi_call(b, "session.subscribe", p, d, NULL, err);
	if (st == KSR_PAGE_OK) {
		p = cJSON_CreateObject();
		cJSON_AddStringToObject(p, "functionDeclaration", ksr_page_press_js);
		cJSON_AddItemToObject(p, "arguments", channel_args());
		cJSON_AddItemToArray(cJSON_AddArrayToObject(p, "contexts"),
		                     cJSON_CreateString(b->context));
		st = ksr_bidi_call(b, "script.addPreloadScript", p, d, NULL, err);
	}
	return st == KSR_PAGE_OK ? install_now(b, d, err) : st;
}

ksr_page_status ksr_bidi_take_press(ksr_bidi *b, int x, int y, ksr_deadline d,
                                    ksr_page_pressed *out, ksr_err *err)
{
	return ksr_page_wire_take_press(b ? b->wire : NULL, x, y, d, out, err);
}
