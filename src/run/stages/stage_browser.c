/* Browser attach (page-rung scenarios): tell the browser's protocol (the
 * scenario's cdp: {browser}, else a Firefox process speaks WebDriver BiDi,
 * else CDP first and BiDi when no DevTools endpoint answers), find its port
 * (the scenario's, or the one the app's browser announces, else 9222) and
 * connect, retrying until the stage's limit: the browser may still be
 * opening its port. The page handle it leaves (run->page) is all the
 * executors see. */
#include "run/stages/stage.h"

#include <stdio.h>
#include <string.h>

#include "ksr/bidi.h"
#include "ksr/cdp.h"
#include "ksr/page.h"
#include "run/actions/exec.h"

#define ATTACH_LIMIT_S   15
#define ATTEMPT_MS       3000
#define RETRY_MS         150
#define DEFAULT_CDP_PORT 9222

static const char *attach_skip(const ksr_run *run)
{
	return run->sc->cdp ? NULL : "not a CDP scenario";
}

static double attach_limit(const ksr_run *run)
{
	(void)run;
	return ATTACH_LIMIT_S;
}

static int first_cdp_line(const ksr_scenario *sc)
{
	for (size_t i = 0; i < sc->steps.len; i++)
		if (sc->steps.items[i].info->backend == KSR_BACKEND_CDP)
			return sc->steps.items[i].pos.line;
	return 0;
}

/* The scenario's word, else Firefox's process (or the one the runtime
 * launched) says BiDi; ANY tries CDP then BiDi. */
static ksr_page_browser browser_of(const ksr_run *run)
{
	if (run->sc->cdp_browser != KSR_PAGE_BROWSER_ANY)
		return run->sc->cdp_browser;
	if ((run->app_pid > 0 && ksr_bidi_is_firefox_pid(run->app_pid)) ||
	    (run->launched_pid > 0 && ksr_bidi_is_firefox_pid(run->launched_pid)))
		return KSR_PAGE_BROWSER_FIREFOX;
	return KSR_PAGE_BROWSER_ANY;
}

static int announced_port(int pid, ksr_page_browser b)
{
	if (pid <= 0)
		return 0;
	int port = b == KSR_PAGE_BROWSER_FIREFOX ? 0 : ksr_cdp_port_of_pid(pid);
	return port || b == KSR_PAGE_BROWSER_CHROMIUM ? port : ksr_bidi_port_of_pid(pid);
}

/* Read again on every attempt: DevToolsActivePort (Chromium) and
 * WebDriverBiDiServer.json (Firefox) appear once the browser has opened its
 * port. */
static int pick_port(const ksr_run *run, ksr_page_browser b, const char **from)
{
	*from = "the scenario";
	if (run->sc->cdp_port > 0)
		return run->sc->cdp_port;
	*from = b == KSR_PAGE_BROWSER_FIREFOX
	                ? "the browser's command line or WebDriverBiDiServer.json"
	                : "the browser's command line or DevToolsActivePort";
	int port = announced_port(run->app_pid, b);
	if (!port)
		port = announced_port(run->launched_pid, b);
	if (port)
		return port;
	*from = "the default";
	return DEFAULT_CDP_PORT;
}

static ksr_page *connect_bidi(const char *host, int port, ksr_deadline d, ksr_page_status *st,
                              ksr_err *err)
{
	return ksr_bidi_page_open(ksr_bidi_connect(host, port, d, st, err));
}

/* One attempt in the browser's protocol; ANY: CDP, then BiDi on the same
 * port when no DevTools endpoint answered there (Firefox answers
 * /json/version with 404). */
static ksr_page *connect_page(ksr_run *run, const char *host, int port, ksr_page_browser b,
                              ksr_deadline d, ksr_page_status *st, ksr_err *err)
{
	if (b == KSR_PAGE_BROWSER_FIREFOX)
		return connect_bidi(host, port, d, st, err);
	ksr_cdp *c = ksr_cdp_connect(host, port, d, st, err);
	if (c) {
		run->cdp = c;
		return ksr_cdp_page_open(c);
	}
	if (b == KSR_PAGE_BROWSER_CHROMIUM || *st == KSR_PAGE_CANCELLED)
		return NULL;
	ksr_err bidi_err = {0};
	ksr_page_status bst = KSR_PAGE_OK;
	ksr_page *p = connect_bidi(host, port, d, &bst, &bidi_err);
	if (p)
		*st = bst;
	else if (bst == KSR_PAGE_CANCELLED)
		*st = bst;
	return p;
}

static void no_port(ksr_run *run, const char *host, int port, const char *from, const ksr_err *err)
{
	ksr_run_fail_setup(
	        run, KSR_OUTCOME_BACKEND_UNAVAILABLE, first_cdp_line(run->sc),
	        "no browser answered on the debugging port %s:%d (from %s): %.200s; start "
	        "Chromium with --remote-debugging-port=%d and a fresh --user-data-dir=DIR "
	        "(Chrome 136+ ignores the port on the default profile), or Firefox with "
	        "--remote-debugging-port %d and a fresh --profile DIR",
	        host, port, from, err->msg, port, port);
}

static void record_attach(ksr_run *run, const char *host, int port, int attempts, char *note,
                          size_t len)
{
	bool bidi = !strcmp(ksr_page_protocol(run->page), "bidi");
	snprintf(note, len, "attached to %.200s on %s:%d over %s (attempt %d; connect %.1f ms)",
	         ksr_page_url(run->page) ? ksr_page_url(run->page) : "", host, port,
	         bidi ? "WebDriver BiDi" : "CDP", attempts, ksr_page_connect_ms(run->page));
}

static ksr_stage_status stage_browser_attach(ksr_run *run, char *note, size_t len)
{
	const char *host = run->sc->cdp_host ? run->sc->cdp_host : "127.0.0.1", *from = "";
	ksr_err err = {0};
	int port = 0;
	for (int attempt = 1;; attempt++) {
		ksr_page_browser b = browser_of(run);
		port = pick_port(run, b, &from);
		ksr_page_status st = KSR_PAGE_OK;
		ksr_deadline d = ksr_deadline_min(run->stage, ksr_deadline_in_ms(ATTEMPT_MS));
		ksr_err_clear(&err);
		run->page = connect_page(run, host, port, b, d, &st, &err);
		if (run->page) {
			record_attach(run, host, port, attempt, note, len);
			ksr_run_page_errors(run, "the page's load, before the steps", 0);
			return KSR_STAGE_OK;
		}
		ksr_wait w = st == KSR_PAGE_CANCELLED
		                     ? KSR_WAIT_CANCELLED
		                     : ksr_sleep_until(ksr_deadline_min(
		                               run->stage, ksr_deadline_in_ms(RETRY_MS)));
		if (w == KSR_WAIT_CANCELLED || ksr_deadline_passed(run->work)) {
			ksr_run_wait_ended_run(run, w, first_cdp_line(run->sc), "browser attach");
			return KSR_STAGE_FAILED;
		}
		if (ksr_deadline_passed(run->stage))
			break;
	}
	no_port(run, host, port, from, &err);
	return KSR_STAGE_FAILED;
}

const ksr_stage_def ksr_stage_browser_attach = {.name = "browser-attach",
                                                .limit_s = attach_limit,
                                                .skip = attach_skip,
                                                .run = stage_browser_attach};
