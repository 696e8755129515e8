/* Browser attach (CDP scenarios): find the debugging port (the scenario's, or
 * the one the app's browser announces, else 9222) and connect, retrying until
 * the stage's limit: the browser may still be opening its port. */
#include "run/stages/stage.h"

#include <stdio.h>
#include <string.h>

#include "ksr/cdp.h"

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

/* Read again on every attempt: DevToolsActivePort appears once the browser
 * has opened its port. */
static int pick_port(const ksr_run *run, const char **from)
{
	int port = 0;
	*from = "the scenario";
	if (run->sc->cdp_port > 0)
		return run->sc->cdp_port;
	*from = "the browser's command line or DevToolsActivePort";
	if (run->app_pid > 0)
		port = ksr_cdp_port_of_pid(run->app_pid);
	if (!port && run->launched_pid > 0)
		port = ksr_cdp_port_of_pid(run->launched_pid);
	if (port)
		return port;
	*from = "the default";
	return DEFAULT_CDP_PORT;
}

static void no_port(ksr_run *run, const char *host, int port, const char *from, const ksr_err *err)
{
	ksr_run_fail_setup(
	        run, KSR_OUTCOME_BACKEND_UNAVAILABLE, first_cdp_line(run->sc),
	        "no browser answered on the DevTools port %s:%d (from %s): %.200s; start "
	        "the browser with --remote-debugging-port=%d and a fresh "
	        "--user-data-dir=DIR (Chrome 136+ ignores the port on the default "
	        "profile)",
	        host, port, from, err->msg, port);
}

static void record_attach(ksr_run *run, const char *host, int port, int attempts, char *note,
                          size_t len)
{
	const ksr_cdp_timing *t = ksr_cdp_timings(run->cdp);
	snprintf(note, len, "attached to %.200s on %s:%d (attempt %d; connect %.1f ms)",
	         ksr_cdp_page_url(run->cdp), host, port, attempts,
	         t->discover_ms + t->handshake_ms + t->attach_ms);
}

static ksr_stage_status stage_browser_attach(ksr_run *run, char *note, size_t len)
{
	const char *host = run->sc->cdp_host ? run->sc->cdp_host : "127.0.0.1", *from = "";
	ksr_err err = {0};
	int port = 0;
	for (int attempt = 1;; attempt++) {
		port = pick_port(run, &from);
		ksr_cdp_status st = KSR_CDP_OK;
		ksr_deadline d = ksr_deadline_min(run->stage, ksr_deadline_in_ms(ATTEMPT_MS));
		ksr_err_clear(&err);
		run->cdp = ksr_cdp_connect(host, port, d, &st, &err);
		if (run->cdp) {
			record_attach(run, host, port, attempt, note, len);
			return KSR_STAGE_OK;
		}
		ksr_wait w = st == KSR_CDP_CANCELLED
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
