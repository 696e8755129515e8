/* Browser attach for CDP scenarios (issue #6 builds it). */
#include "run/stage.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ksr/proc.h"

static const char *attach_skip(const ksr_run *run)
{
	return run->sc->cdp ? NULL : "not a CDP scenario";
}

static int first_cdp_line(const ksr_scenario *sc)
{
	for (size_t i = 0; i < sc->steps.len; i++)
		if (sc->steps.items[i].info->backend == KSR_BACKEND_CDP)
			return sc->steps.items[i].pos.line;
	return 0;
}

static ksr_stage_status stage_browser_attach(ksr_run *run, char *note, size_t len)
{
	(void)note, (void)len;
	ksr_run_fail_setup(run, KSR_OUTCOME_BACKEND_UNAVAILABLE, first_cdp_line(run->sc),
	                   "the scenario needs the CDP backend (browser pages), which this build "
	                   "does not have yet");
	return KSR_STAGE_FAILED;
}

const ksr_stage_def ksr_stage_browser_attach = {
        .name = "browser-attach", .skip = attach_skip, .run = stage_browser_attach};
