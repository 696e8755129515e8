/* page.* (and their cdp.* names): the page rung through the run's own page
 * handle (ksr/page.h), so the tools work on a Chromium over CDP and on a
 * Firefox over WebDriver BiDi alike. Connections are kept under handles
 * (docs/mcp.md, "Handles"): every page tool returns the one it used as
 * "page" and takes it back as an argument. A 2026-07-28 call that names none
 * connects anew (no state lives between requests); a 2025 session's works
 * on the current connection while it lives, as it always did. A slot's
 * connection is its cdp, whose close closes its page (ksr_cdp_set_closer). */
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

/* A slot's handle and connection, closed by the tools themselves (the
 * closer is unset first: it would close the handle a second time). */
static void drop_slot(ksr_mcp *m, mcp_page_slot *s)
{
	ksr_cdp_set_closer(s->cdp, NULL, NULL);
	ksr_page_close(s->page);
	if (m->page_current == s - m->pages + 1)
		m->page_current = 0;
	*s = (mcp_page_slot){0};
}

void mcp_pages_close(ksr_mcp *m)
{
	for (size_t i = 0; i < MCP_PAGES; i++)
		if (m->pages[i].page)
			drop_slot(m, &m->pages[i]);
}

static mcp_page_slot *slot_named(ksr_mcp *m, const char *id)
{
	for (size_t i = 0; i < MCP_PAGES; i++)
		if (m->pages[i].page && !strcmp(m->pages[i].id, id))
			return &m->pages[i];
	return NULL;
}

/* A free slot, or the least recently used one's (its connection closed:
 * its handle is then unknown). */
static mcp_page_slot *slot_free(ksr_mcp *m)
{
	mcp_page_slot *victim = &m->pages[0];
	for (size_t i = 0; i < MCP_PAGES; i++) {
		if (!m->pages[i].page)
			return &m->pages[i];
		if (m->pages[i].used < victim->used)
			victim = &m->pages[i];
	}
	drop_slot(m, victim);
	return victim;
}

/* A new connection on port, kept under a new handle. NULL with r's error. */
static mcp_page_slot *connect_new(ksr_mcp *m, int port, ksr_page_browser browser, mcp_result *r)
{
	ksr_page_status st;
	ksr_err e = {0};
	ksr_cdp *transport = NULL;
	ksr_page *p = ksr_page_connect("127.0.0.1", port, browser, ksr_deadline_in_ms(CALL_MS),
	                               &transport, &st, &e);
	if (!p)
		return mcp_fail(r, "no browser page on port %d (CDP or WebDriver BiDi): %s (%s)",
		                port, e.msg, ksr_page_status_name(st)),
		       NULL;
	mcp_page_slot *s = slot_free(m);
	*s = (mcp_page_slot){.page = p, .cdp = transport, .port = port};
	mcp_handle_id("page", s->id);
	ksr_cdp_set_closer(s->cdp, close_page, s->page);
	return s;
}

/* The connection a call names by handle; NULL with r's error when it is not
 * (or no longer) there. */
static mcp_page_slot *named_page(ksr_mcp *m, const char *id, mcp_result *r)
{
	mcp_page_slot *s = slot_named(m, id);
	if (s && ksr_cdp_crashed(s->cdp)) {
		drop_slot(m, s);
		return mcp_fail(r,
		                "the page of handle '%.40s' crashed or closed: call a page tool "
		                "without page to connect again",
		                id),
		       NULL;
	}
	if (!s)
		mcp_fail(r,
		         "unknown or expired page handle '%.40s' (the server keeps the last %d "
		         "connections): call a page tool without page to connect again",
		         id, MCP_PAGES);
	return s;
}

/* The connection for the arguments: the one "page" names; else (2025) the
 * current one on that port while it lives, as before handles; else a new
 * one on port or the port found from the windows. NULL with r's error. */
static mcp_page_slot *connect_slot(ksr_mcp *m, const cJSON *a, mcp_result *r)
{
	const char *id = mcp_arg_str(a, "page");
	if (id)
		return named_page(m, id, r);
	mcp_page_slot *cur =
	        !m->req.modern && m->page_current ? &m->pages[m->page_current - 1] : NULL;
	ksr_page_browser browser = KSR_PAGE_BROWSER_ANY;
	int port = mcp_arg_int(a, "port", 0);
	if (!port)
		port = cur ? cur->port : discover_port(m, &browser);
	if (!port)
		return mcp_fail(r,
		                "no browser debugging port: pass port, or start the browser with "
		                "--remote-debugging-port (Chromium: and a fresh --user-data-dir; "
		                "Firefox: and a fresh --profile)"),
		       NULL;
	if (cur && cur->port == port && !ksr_cdp_crashed(cur->cdp))
		return cur;
	if (cur) /* a 2025 session had one connection at a time */
		drop_slot(m, cur);
	return connect_new(m, port, browser, r);
}

/* The page for the call, made the one it reports (and, for a 2025 session,
 * the current one). NULL with r's error set. */
static ksr_page *connect_page(ksr_mcp *m, const cJSON *a, mcp_page_slot **used, mcp_result *r)
{
	mcp_page_slot *s = connect_slot(m, a, r);
	*used = s;
	if (!s)
		return NULL;
	s->used = ++m->page_clock;
	if (!m->req.modern)
		m->page_current = (int)(s - m->pages) + 1;
	return s->page;
}

/* A failed call: the error as a result; a lost connection is dropped so the
 * next call reconnects (and its handle is unknown from now). */
static int page_failed(ksr_mcp *m, mcp_page_slot *s, ksr_page_status st, const ksr_err *e,
                       mcp_result *r)
{
	if (st == KSR_PAGE_CLOSED || st == KSR_PAGE_CRASHED)
		drop_slot(m, s);
	return mcp_fail(r, "%s: %s", ksr_page_status_name(st), e->msg);
}

/* Every page tool's answer names the connection it used. */
static int page_answer(mcp_result *r, cJSON *o, const mcp_page_slot *s)
{
	cJSON_AddStringToObject(o, "page", s->id);
	return mcp_structured(r, o);
}

static int ok(mcp_result *r, const mcp_page_slot *s)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddBoolToObject(o, "ok", true);
	return page_answer(r, o, s);
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
	mcp_page_slot *used;
	ksr_page *p = connect_page(m, a, &used, r);
	if (!p)
		return 0;
	ksr_page_element_list l = {0};
	ksr_err e = {0};
	ksr_page_status st = ksr_page_list_interactive(p, ksr_deadline_in_ms(CALL_MS), &l, &e);
	if (st != KSR_PAGE_OK) {
		ksr_page_element_list_clear(&l);
		return page_failed(m, used, st, &e, r);
	}
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "url", ksr_page_url(p) ? ksr_page_url(p) : "");
	cJSON_AddStringToObject(o, "protocol", ksr_page_protocol(p));
	cJSON *arr = cJSON_AddArrayToObject(o, "elements");
	for (size_t i = 0; i < l.len; i++)
		cJSON_AddItemToArray(arr, element_json(&l.items[i]));
	ksr_page_element_list_clear(&l);
	cJSON_AddStringToObject(o, "page", used->id);
	return mcp_structured_list(m, r, o, "elements");
}

int mcp_tool_cdp_click(ksr_mcp *m, const cJSON *a, mcp_result *r)
{
	mcp_page_slot *used;
	ksr_page *p = connect_page(m, a, &used, r);
	if (!p)
		return 0;
	ksr_page_hit hit = {0};
	ksr_err e = {0};
	ksr_page_status st =
	        ksr_page_click(p, mcp_arg_str(a, "ref"), ksr_deadline_in_ms(CALL_MS), &hit, &e);
	return st == KSR_PAGE_OK ? ok(r, used) : page_failed(m, used, st, &e, r);
}

int mcp_tool_cdp_fill(ksr_mcp *m, const cJSON *a, mcp_result *r)
{
	mcp_page_slot *used;
	ksr_page *p = connect_page(m, a, &used, r);
	if (!p)
		return 0;
	ksr_page_hit hit = {0};
	ksr_err e = {0};
	ksr_page_status st = ksr_page_fill(p, mcp_arg_str(a, "ref"), mcp_arg_str(a, "text"),
	                                   ksr_deadline_in_ms(CALL_MS), &hit, &e);
	return st == KSR_PAGE_OK ? ok(r, used) : page_failed(m, used, st, &e, r);
}

int mcp_tool_cdp_navigate(ksr_mcp *m, const cJSON *a, mcp_result *r)
{
	mcp_page_slot *used;
	ksr_page *p = connect_page(m, a, &used, r);
	if (!p)
		return 0;
	ksr_err e = {0};
	ksr_page_status st =
	        ksr_page_navigate(p, mcp_arg_str(a, "url"), ksr_deadline_in_ms(CALL_MS), &e);
	if (st != KSR_PAGE_OK)
		return page_failed(m, used, st, &e, r);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "url", mcp_arg_str(a, "url"));
	return page_answer(r, o, used);
}
