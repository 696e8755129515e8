/* page.* (and their cdp.* names): the page rung through the run's own page
 * handle (ksr/page.h), so the tools work on a Chromium over CDP and on a
 * Firefox over WebDriver BiDi alike. The handle is kept while it lives; its
 * connection is m->cdp, whose close (ksr_mcp_destroy) closes the handle
 * (ksr_cdp_set_closer). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/bidi.h"
#include "mcp/mcp_priv.h"

#define CALL_MS 15000

/* A browser's debugging port from the windows' processes (as the run's
 * browser-attach stage finds it), newest window first; 0 when none. */
static int discover_port(ksr_mcp *m, ksr_page_browser *browser)
{
	mcp_result scratch = {0};
	*browser = KSR_PAGE_BROWSER_ANY;
	if (mcp_need_x11(m, &scratch) < 0) {
		cJSON_Delete(scratch.content);
		return 0;
	}
	ksr_window_list l = {0};
	ksr_err e = {0};
	int port = 0;
	if (ksr_x11_list_windows(m->x, &l, &e) == 0)
		for (size_t i = l.len; i-- > 0 && !port;)
			if (l.items[i].pid > 0)
				port = ksr_page_port_of_pid(l.items[i].pid, browser);
	ksr_window_list_clear(&l);
	return port;
}

static void close_page(void *page)
{
	ksr_page_close(page);
}

/* The handle and its connection, closed by the tools themselves (the
 * closer is unset first: it would close the handle a second time). */
static void drop_page(ksr_mcp *m)
{
	ksr_cdp_set_closer(m->cdp, NULL, NULL);
	ksr_page_close(m->page);
	m->page = NULL;
	m->cdp = NULL;
}

/* The page for the port argument (reused while it lives). NULL with r's
 * error set. */
static ksr_page *connect_page(ksr_mcp *m, const cJSON *a, mcp_result *r)
{
	ksr_page_browser browser = KSR_PAGE_BROWSER_ANY;
	int port = mcp_arg_int(a, "port", 0);
	if (!port)
		port = m->page && m->cdp_port ? m->cdp_port : discover_port(m, &browser);
	if (!port)
		return mcp_fail(r,
		                "no browser debugging port: pass port, or start the browser with "
		                "--remote-debugging-port (Chromium: and a fresh --user-data-dir; "
		                "Firefox: and a fresh --profile)"),
		       NULL;
	if (m->page && m->cdp_port == port && !ksr_cdp_crashed(m->cdp))
		return m->page;
	drop_page(m);
	ksr_page_status st;
	ksr_err e = {0};
	ksr_cdp *transport = NULL;
	m->page = ksr_page_connect("127.0.0.1", port, browser, ksr_deadline_in_ms(CALL_MS),
	                           &transport, &st, &e);
	if (!m->page)
		return mcp_fail(r, "no browser page on port %d (CDP or WebDriver BiDi): %s (%s)",
		                port, e.msg, ksr_page_status_name(st)),
		       NULL;
	m->cdp = transport;
	ksr_cdp_set_closer(m->cdp, close_page, m->page);
	m->cdp_port = port;
	return m->page;
}

/* A failed call: the error as a result; a lost connection is dropped so the
 * next call reconnects. */
static int page_failed(ksr_mcp *m, ksr_page_status st, const ksr_err *e, mcp_result *r)
{
	if (st == KSR_PAGE_CLOSED || st == KSR_PAGE_CRASHED)
		drop_page(m);
	return mcp_fail(r, "%s: %s", ksr_page_status_name(st), e->msg);
}

static int ok(mcp_result *r)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddBoolToObject(o, "ok", true);
	return mcp_structured(r, o);
}

static cJSON *element_json(const ksr_page_element *el)
{
	cJSON *j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "id", el->id);
	cJSON_AddStringToObject(j, "role", el->role ? el->role : "");
	cJSON_AddStringToObject(j, "name", el->name ? el->name : "");
	return j;
}

int mcp_tool_cdp_list(ksr_mcp *m, const cJSON *a, mcp_result *r)
{
	ksr_page *p = connect_page(m, a, r);
	if (!p)
		return 0;
	ksr_page_element_list l = {0};
	ksr_err e = {0};
	ksr_page_status st = ksr_page_list_interactive(p, ksr_deadline_in_ms(CALL_MS), &l, &e);
	if (st != KSR_PAGE_OK) {
		ksr_page_element_list_clear(&l);
		return page_failed(m, st, &e, r);
	}
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "url", ksr_page_url(p) ? ksr_page_url(p) : "");
	cJSON_AddStringToObject(o, "protocol", ksr_page_protocol(p));
	cJSON *arr = cJSON_AddArrayToObject(o, "elements");
	for (size_t i = 0; i < l.len; i++)
		cJSON_AddItemToArray(arr, element_json(&l.items[i]));
	ksr_page_element_list_clear(&l);
	return mcp_structured_list(m, r, o, "elements");
}

int mcp_tool_cdp_click(ksr_mcp *m, const cJSON *a, mcp_result *r)
{
	ksr_page *p = connect_page(m, a, r);
	if (!p)
		return 0;
	ksr_page_hit hit = {0};
	ksr_err e = {0};
	ksr_page_status st =
	        ksr_page_click(p, mcp_arg_str(a, "ref"), ksr_deadline_in_ms(CALL_MS), &hit, &e);
	return st == KSR_PAGE_OK ? ok(r) : page_failed(m, st, &e, r);
}

int mcp_tool_cdp_fill(ksr_mcp *m, const cJSON *a, mcp_result *r)
{
	ksr_page *p = connect_page(m, a, r);
	if (!p)
		return 0;
	ksr_page_hit hit = {0};
	ksr_err e = {0};
	ksr_page_status st = ksr_page_fill(p, mcp_arg_str(a, "ref"), mcp_arg_str(a, "text"),
	                                   ksr_deadline_in_ms(CALL_MS), &hit, &e);
	return st == KSR_PAGE_OK ? ok(r) : page_failed(m, st, &e, r);
}

int mcp_tool_cdp_navigate(ksr_mcp *m, const cJSON *a, mcp_result *r)
{
	ksr_page *p = connect_page(m, a, r);
	if (!p)
		return 0;
	ksr_err e = {0};
	ksr_page_status st =
	        ksr_page_navigate(p, mcp_arg_str(a, "url"), ksr_deadline_in_ms(CALL_MS), &e);
	if (st != KSR_PAGE_OK)
		return page_failed(m, st, &e, r);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "url", mcp_arg_str(a, "url"));
	return mcp_structured(r, o);
}
