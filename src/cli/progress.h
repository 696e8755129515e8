#ifndef KSR_CLI_PROGRESS_H
#define KSR_CLI_PROGRESS_H

#include <stdbool.h>

#include <cjson/cJSON.h>

typedef struct progress {
	bool tty;
	bool live_shown;
} progress;

void progress_init(progress *p);
void progress_event(void *ud, const cJSON *event);
void progress_message(void *ud, const char *msg);

#endif
