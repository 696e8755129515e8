#include <stdio.h>

#include "cli.h"

static int version_exec(int argc, char **argv)
{
	(void)argv;
	if (argc > 1)
		return cli_usage_error(&cli_cmd_version, "takes no arguments");
	printf("kasm-session-runtime %s\n", KSR_VERSION);
	return 0;
}

const cli_command cli_cmd_version = {
        .name = "version",
        .summary = "print the version",
        .usage = "usage: kasm-session-runtime version\n\nPrints the runtime's version.\n",
        .exec = version_exec,
};
