/* The verdict: a pure function of the recorded signals (docs/report.md). No I/O. */
#include "ksr/verdict.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/error.h"
#include "ksr/json.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const char *const verdict_names[] = {
        [KSR_VERDICT_PASS] = "pass",
        [KSR_VERDICT_PASS_WITH_CONCERNS] = "pass-with-concerns",
        [KSR_VERDICT_APP_FAILED] = "app-failed",
        [KSR_VERDICT_TEST_ERROR] = "test-error",
};

static const int verdict_exits[] = {
        [KSR_VERDICT_PASS] = 0,
        [KSR_VERDICT_PASS_WITH_CONCERNS] = 0,
        [KSR_VERDICT_APP_FAILED] = 1,
        [KSR_VERDICT_TEST_ERROR] = 2,
};

/* One row an outcome: its word, the verdict it implies, a default reason. */
static const struct outcome_row {
	const char *name;
	ksr_verdict verdict;
	const char *reason;
} outcomes[KSR_OUTCOME__COUNT] = {
        [KSR_OUTCOME_COMPLETED] = {"completed", KSR_VERDICT_PASS, "All checks passed."},
        [KSR_OUTCOME_NEVER_APPEARED] = {"never-appeared", KSR_VERDICT_APP_FAILED,
                                        "The app never appeared."},
        [KSR_OUTCOME_EXITED] = {"exited", KSR_VERDICT_APP_FAILED,
                                "The app exited before its window appeared."},
        [KSR_OUTCOME_CRASHED] = {"crashed", KSR_VERDICT_APP_FAILED, "The app crashed."},
        [KSR_OUTCOME_CRASH_LOOP] = {"crash-loop", KSR_VERDICT_APP_FAILED,
                                    "The app kept crashing and starting again."},
        [KSR_OUTCOME_ERROR_DIALOG] = {"error-dialog", KSR_VERDICT_APP_FAILED,
                                      "The app showed an error dialog."},
        [KSR_OUTCOME_NOT_RENDERED] = {"not-rendered", KSR_VERDICT_APP_FAILED,
                                      "The app's window did not render."},
        [KSR_OUTCOME_WINDOW_LOST] = {"window-lost", KSR_VERDICT_APP_FAILED,
                                     "The app's window disappeared."},
        [KSR_OUTCOME_STEP_FAILED] = {"step-failed", KSR_VERDICT_APP_FAILED,
                                     "A step could not act on the app."},
        [KSR_OUTCOME_CHECK_FAILED] = {"check-failed", KSR_VERDICT_APP_FAILED,
                                      "A check did not hold."},
        [KSR_OUTCOME_DEADLINE] = {"deadline", KSR_VERDICT_TEST_ERROR,
                                  "The run deadline passed before the test finished."},
        [KSR_OUTCOME_INTERRUPTED] = {"interrupted", KSR_VERDICT_TEST_ERROR,
                                     "The run was interrupted by a signal."},
        [KSR_OUTCOME_BLOCKED] = {"blocked", KSR_VERDICT_TEST_ERROR,
                                 "A blocker was on screen and was not cleared."},
        /* The image's fault: its users would see a prompt nobody answered. A
         * prompt the scenario declares under blockers: is `blocked` instead. */
        [KSR_OUTCOME_BLOCKED_BY_PROMPT] = {"blocked-by-prompt", KSR_VERDICT_APP_FAILED,
                                           "The app showed only a prompt that blocks it."},
        [KSR_OUTCOME_INVALID_SCENARIO] = {"invalid-scenario", KSR_VERDICT_TEST_ERROR,
                                          "The scenario is invalid."},
        [KSR_OUTCOME_NO_DISPLAY] = {"no-display", KSR_VERDICT_TEST_ERROR,
                                    "No X display could be reached."},
        [KSR_OUTCOME_BACKEND_UNAVAILABLE] = {"backend-unavailable", KSR_VERDICT_TEST_ERROR,
                                             "A backend the scenario needs is unavailable."},
        [KSR_OUTCOME_OUTPUT_UNWRITABLE] = {"output-unwritable", KSR_VERDICT_TEST_ERROR,
                                           "The evidence folder could not be written."},
};

static const char *const concern_names[KSR_CONCERN__COUNT] = {
        [KSR_CONCERN_FIRST_RUN_PROMPT] = "first-run-prompt",
        [KSR_CONCERN_UPDATER] = "updater",
        [KSR_CONCERN_BASELINE_DRIFT] = "baseline-drift",
        [KSR_CONCERN_UNEXPECTED_DIALOG] = "unexpected-dialog",
        [KSR_CONCERN_UNVERIFIED_CLICK] = "unverified-click",
        [KSR_CONCERN_UNCONFIRMED_CLAIM] = "unconfirmed-claim",
        [KSR_CONCERN_MODEL_UNREACHABLE] = "model-unreachable",
        [KSR_CONCERN_CRASH_SIGNATURE] = "crash-signature",
        [KSR_CONCERN_RECOVERY_PROMPT] = "recovery-prompt",
        [KSR_CONCERN_NOT_RENDERED] = "not-rendered",
        [KSR_CONCERN_WM_LOST] = "wm-lost",
        [KSR_CONCERN_NO_EFFECT] = "no-effect",
        [KSR_CONCERN_PAGE_ERROR] = "page-error",
};

const char *ksr_verdict_name(ksr_verdict v)
{
	return (unsigned)v < COUNT(verdict_names) ? verdict_names[v] : "unknown";
}

int ksr_verdict_from_name(const char *name)
{
	for (size_t i = 0; name && i < COUNT(verdict_names); i++)
		if (!strcmp(name, verdict_names[i]))
			return (int)i;
	return -1;
}

int ksr_verdict_exit_code(ksr_verdict v)
{
	return (unsigned)v < COUNT(verdict_exits) ? verdict_exits[v] : 2;
}

const char *ksr_outcome_name(ksr_outcome o)
{
	return (unsigned)o < KSR_OUTCOME__COUNT ? outcomes[o].name : "unknown";
}

int ksr_outcome_from_name(const char *name)
{
	for (int i = 0; name && i < KSR_OUTCOME__COUNT; i++)
		if (!strcmp(name, outcomes[i].name))
			return i;
	return -1;
}

const char *ksr_outcome_default_reason(ksr_outcome o)
{
	return (unsigned)o < KSR_OUTCOME__COUNT ? outcomes[o].reason
	                                        : "A failure with an unknown outcome was recorded.";
}

const char *ksr_concern_name(ksr_concern c)
{
	return (unsigned)c < KSR_CONCERN__COUNT ? concern_names[c] : "unknown";
}

int ksr_concern_from_name(const char *name)
{
	for (int i = 0; name && i < KSR_CONCERN__COUNT; i++)
		if (!strcmp(name, concern_names[i]))
			return i;
	return -1;
}

ksr_verdict ksr_outcome_default_verdict(ksr_outcome o)
{
	return (unsigned)o < KSR_OUTCOME__COUNT ? outcomes[o].verdict : KSR_VERDICT_TEST_ERROR;
}

/* Built reasons live as long as the process: one copy of each distinct text, so
 * a decision can be copied and kept without an owner to free it. */
static struct {
	pthread_mutex_t lock;
	char **items;
	size_t n, cap;
} interned = {.lock = PTHREAD_MUTEX_INITIALIZER};

static const char *intern(const char *s)
{
	const char *out = NULL;
	pthread_mutex_lock(&interned.lock);
	for (size_t i = 0; i < interned.n && !out; i++)
		if (!strcmp(interned.items[i], s))
			out = interned.items[i];
	if (!out) {
		if (interned.n == interned.cap) {
			interned.cap = interned.cap ? interned.cap * 2 : 16;
			interned.items =
			        ksr_xrealloc(interned.items, interned.cap * sizeof *interned.items);
		}
		out = interned.items[interned.n++] = ksr_xstrdup(s);
	}
	pthread_mutex_unlock(&interned.lock);
	return out;
}

static bool has_text(const char *s)
{
	return s && *s;
}

static ksr_decision from_failure(const ksr_signal *f, size_t n_concerns)
{
	ksr_verdict v = ksr_outcome_default_verdict(f->outcome);
	if (f->setup_fault || v == KSR_VERDICT_PASS || v == KSR_VERDICT_PASS_WITH_CONCERNS)
		v = KSR_VERDICT_TEST_ERROR;
	ksr_outcome o =
	        (unsigned)f->outcome < KSR_OUTCOME__COUNT ? f->outcome : KSR_OUTCOME_COMPLETED;
	return (ksr_decision){
	        .verdict = v,
	        .exit_code = ksr_verdict_exit_code(v),
	        .outcome = o,
	        .reason = has_text(f->reason) ? f->reason : ksr_outcome_default_reason(f->outcome),
	        .line = f->line > 0 ? f->line : 0,
	        .n_concerns = n_concerns,
	};
}

static ksr_decision from_concerns(const ksr_signal *first, size_t n_concerns)
{
	const char *msg =
	        has_text(first->reason) ? first->reason : ksr_concern_name(first->concern);
	char *text = n_concerns == 1 ? ksr_xasprintf("It worked, with 1 concern: %s", msg)
	                             : ksr_xasprintf("It worked, with %zu concerns; the first: %s",
	                                             n_concerns, msg);
	const char *reason = intern(text);
	free(text);
	return (ksr_decision){
	        .verdict = KSR_VERDICT_PASS_WITH_CONCERNS,
	        .exit_code = ksr_verdict_exit_code(KSR_VERDICT_PASS_WITH_CONCERNS),
	        .outcome = KSR_OUTCOME_COMPLETED,
	        .reason = reason,
	        .line = first->line > 0 ? first->line : 0,
	        .n_concerns = n_concerns,
	};
}

ksr_decision ksr_verdict_decide(const ksr_signal *signals, size_t n)
{
	const ksr_signal *first_failure = NULL, *unwritable = NULL, *first_concern = NULL;
	size_t n_concerns = 0;
	for (size_t i = 0; signals && i < n; i++) {
		const ksr_signal *s = &signals[i];
		if (s->kind == KSR_SIGNAL_CONCERN) {
			if (!n_concerns++)
				first_concern = s;
			continue;
		}
		if (!first_failure)
			first_failure = s;
		if (!unwritable && s->outcome == KSR_OUTCOME_OUTPUT_UNWRITABLE)
			unwritable = s;
	}
	if (unwritable)
		return from_failure(unwritable, n_concerns);
	if (first_failure)
		return from_failure(first_failure, n_concerns);
	if (first_concern)
		return from_concerns(first_concern, n_concerns);
	return (ksr_decision){
	        .verdict = KSR_VERDICT_PASS,
	        .exit_code = ksr_verdict_exit_code(KSR_VERDICT_PASS),
	        .outcome = KSR_OUTCOME_COMPLETED,
	        .reason = ksr_outcome_default_reason(KSR_OUTCOME_COMPLETED),
	};
}

static int int_field(const cJSON *obj, const char *key)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsNumber(it) && it->valuedouble > 0 && it->valuedouble < 1e9 ? it->valueint
	                                                                          : 0;
}

static char *unwritable_reason(const char *what, const char *err)
{
	if (what && err)
		return ksr_xasprintf("Could not write %s to the evidence folder: %s.", what, err);
	return ksr_xasprintf("Could not write to the evidence folder: %s.",
	                     what  ? what
	                     : err ? err
	                           : "unknown error");
}

/* One event as a signal; false when it is not one. */
static bool event_signal(const cJSON *e, ksr_signal *s)
{
	const char *kind = ksr_json_str(e, "event", NULL);
	if (!kind)
		return false;
	*s = (ksr_signal){.line = int_field(e, "line")};
	if (!strcmp(kind, "failure")) {
		int o = ksr_outcome_from_name(ksr_json_str(e, "outcome", NULL));
		s->kind = KSR_SIGNAL_FAILURE;
		s->outcome = o < 0 ? KSR_OUTCOME__COUNT : (ksr_outcome)o;
		s->setup_fault = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "setup_fault"));
		s->reason = ksr_json_str(e, "reason", NULL);
		return true;
	}
	if (!strcmp(kind, "concern")) {
		int c = ksr_concern_from_name(ksr_json_str(e, "code", NULL));
		s->kind = KSR_SIGNAL_CONCERN;
		s->concern = c < 0 ? KSR_CONCERN__COUNT : (ksr_concern)c;
		s->reason = ksr_json_str(e, "message", NULL);
		return true;
	}
	if (!strcmp(kind, "output_error")) {
		const char *what = ksr_json_str(e, "what", NULL),
		           *err = ksr_json_str(e, "error", NULL);
		char *text = unwritable_reason(what, err);
		s->kind = KSR_SIGNAL_FAILURE;
		s->outcome = KSR_OUTCOME_OUTPUT_UNWRITABLE;
		s->reason = intern(text);
		free(text);
		return true;
	}
	return false;
}

ksr_decision ksr_verdict_from_events(const cJSON *events)
{
	int n = cJSON_GetArraySize(events);
	ksr_signal *sig = ksr_xcalloc(n > 0 ? (size_t)n : 1, sizeof *sig);
	size_t k = 0;
	const cJSON *e;
	cJSON_ArrayForEach(e, events)
	{
		if (event_signal(e, &sig[k]))
			k++;
	}
	ksr_decision d = ksr_verdict_decide(sig, k);
	free(sig);
	return d;
}
