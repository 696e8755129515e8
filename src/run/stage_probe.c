/* The accessibility probe (issue #5 builds it). */
#include "run/stage.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ksr/proc.h"

/* ---- accessibility probe, first look, browser attach -------------------- */

static const char *probe_skip(const ksr_run *run)
{
	if (!run->sc->atspi)
		return "atspi: false in the scenario";
	return "the accessibility backend is not built yet (issue #5)";
}

static ksr_stage_status stage_probe(ksr_run *run, char *note, size_t len)
{
	(void)run, (void)note, (void)len;
	return KSR_STAGE_SKIPPED;
}

const ksr_stage_def ksr_stage_probe = {
        .name = "accessibility-probe", .skip = probe_skip, .run = stage_probe};
