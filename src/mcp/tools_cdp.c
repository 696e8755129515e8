/* cdp.*: the CDP rung through the run's own CDP backend (ksr/cdp.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/mcp_priv.h"

#define CALL_MS 15000

/* A browser's debugging port from the windows' processes (as the run's
 * browser-attach stage finds it); 0 when none. */
static int discover_port(ksr_mcp *m)
{
	mcp_result scratch = {0};
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
				port = ksr_cdp_port_of_pid(l.items[i].pid);
	ksr_window_list_clear(&l);
	return port;
}

/* The connection for the port argument (reused while it lives). NULL with
 * r's error set. */
static ksr_cdp *connect_cdp(ksr_mcp *m, const cJSON *a, mcp_result *r)
{
	int port = mcp_arg_int(a, "port", 0);
	if (!port)
		port = m->cdp && m->cdp_port ? m->cdp_port : discover_port(m);
	if (!port)
		return mcp_fail(r,
		                "no browser debugging port: pass port, or start the browser with "
		                "--remote-debugging-port"),
		       NULL;
	if (m->cdp && m->cdp_port == port && !ksr_cdp_crashed(m->cdp))
		return m->cdp;
	ksr_cdp_close(m->cdp);
	m->cdp = NULL;
	ksr_cdp_status st;
	ksr_err e = {0};
	m->cdp = ksr_cdp_connect("127.0.0.1", port, ksr_deadline_in_ms(CALL_MS), &st, &e);
	if (!m->cdp)
		return mcp_fail(r, "CDP on port %d: %s (%s)", port, e.msg, ksr_cdp_status_name(st)),
		       NULL;
	m->cdp_port = port;
	return m->cdp;
}

/* A failed call: the error as a result; a lost connection is dropped so the
 * next call reconnects. */
static int cdp_failed(ksr_mcp *m, ksr_cdp_status st, const ksr_err *e, mcp_result *r)
{
	if (st == KSR_CDP_CLOSED || st == KSR_CDP_CRASHED) {
		ksr_cdp_close(m->cdp);
		m->cdp = NULL;
	}
	return mcp_fail(r, "%s: %s", ksr_cdp_status_name(st), e->msg);
}

static int ok(mcp_result *r)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddBoolToObject(o, "ok", true);
	return mcp_structured(r, o);
}

int mcp_tool_cdp_list(ksr_mcp *m, const cJSON *a, mcp_result *r)
{
	ksr_cdp *c = connect_cdp(m, a, r);
	if (!c)
		return 0;
	ksr_cdp_element_list l = {0};
	ksr_err e = {0};
	ksr_cdp_status st = ksr_cdp_list_interactive(c, ksr_deadline_in_ms(CALL_MS), &l, &e);
	if (st != KSR_CDP_OK)
		return cdp_failed(m, st, &e, r);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "url", ksr_cdp_page_url(c) ? ksr_cdp_page_url(c) : "");
	cJSON *arr = cJSON_AddArrayToObject(o, "elements");
	for (size_t i = 0; i < l.len; i++) {
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "id", l.items[i].id);
		cJSON_AddStringToObject(j, "role", l.items[i].role ? l.items[i].role : "");
		cJSON_AddStringToObject(j, "name", l.items[i].name ? l.items[i].name : "");
		cJSON_AddItemToArray(arr, j);
	}
	ksr_cdp_element_list_clear(&l);
	return mcp_structured_list(m, r, o, "elements");
}

int mcp_tool_cdp_click(ksr_mcp *m, const cJSON *a, mcp_result *r)
{
	ksr_cdp *c = connect_cdp(m, a, r);
	if (!c)
		return 0;
	ksr_cdp_hit hit = {0};
	ksr_err e = {0};
	ksr_cdp_status st =
	        ksr_cdp_click(c, mcp_arg_str(a, "ref"), ksr_deadline_in_ms(CALL_MS), &hit, &e);
	return st == KSR_CDP_OK ? ok(r) : cdp_failed(m, st, &e, r);
}

int mcp_tool_cdp_fill(ksr_mcp *m, const cJSON *a, mcp_result *r)
{
	ksr_cdp *c = connect_cdp(m, a, r);
	if (!c)
		return 0;
	ksr_cdp_hit hit = {0};
	ksr_err e = {0};
	ksr_cdp_status st = ksr_cdp_fill(c, mcp_arg_str(a, "ref"), mcp_arg_str(a, "text"),
	                                 ksr_deadline_in_ms(CALL_MS), &hit, &e);
	return st == KSR_CDP_OK ? ok(r) : cdp_failed(m, st, &e, r);
}

int mcp_tool_cdp_navigate(ksr_mcp *m, const cJSON *a, mcp_result *r)
{
	ksr_cdp *c = connect_cdp(m, a, r);
	if (!c)
		return 0;
	ksr_err e = {0};
	ksr_cdp_status st =
	        ksr_cdp_navigate(c, mcp_arg_str(a, "url"), ksr_deadline_in_ms(CALL_MS), &e);
	if (st != KSR_CDP_OK)
		return cdp_failed(m, st, &e, r);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "url", mcp_arg_str(a, "url"));
	return mcp_structured(r, o);
}
