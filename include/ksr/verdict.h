/* The verdict is a pure function of the recorded signals (docs/report.md). */
#ifndef KSR_VERDICT_H
#define KSR_VERDICT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum ksr_verdict {
	KSR_VERDICT_PASS,
	KSR_VERDICT_PASS_WITH_CONCERNS,
	KSR_VERDICT_APP_FAILED,
	KSR_VERDICT_TEST_ERROR,
} ksr_verdict;

typedef enum ksr_outcome {
	KSR_OUTCOME_COMPLETED,
	KSR_OUTCOME_NEVER_APPEARED,
	KSR_OUTCOME_EXITED,
	KSR_OUTCOME_CRASHED,
	KSR_OUTCOME_CRASH_LOOP,
	KSR_OUTCOME_ERROR_DIALOG,
	KSR_OUTCOME_NOT_RENDERED,
	KSR_OUTCOME_WINDOW_LOST,
	KSR_OUTCOME_STEP_FAILED,
	KSR_OUTCOME_CHECK_FAILED,
	KSR_OUTCOME_DEADLINE,
	KSR_OUTCOME_INTERRUPTED,
	KSR_OUTCOME_BLOCKED,
	KSR_OUTCOME_BLOCKED_BY_PROMPT,
	KSR_OUTCOME_INVALID_SCENARIO,
	KSR_OUTCOME_NO_DISPLAY,
	KSR_OUTCOME_BACKEND_UNAVAILABLE,
	KSR_OUTCOME_OUTPUT_UNWRITABLE,
	KSR_OUTCOME__COUNT,
} ksr_outcome;

typedef enum ksr_concern {
	KSR_CONCERN_FIRST_RUN_PROMPT,
	KSR_CONCERN_UPDATER,
	KSR_CONCERN_BASELINE_DRIFT,
	KSR_CONCERN_UNEXPECTED_DIALOG,
	KSR_CONCERN_UNVERIFIED_CLICK,
	KSR_CONCERN_UNCONFIRMED_CLAIM,
	KSR_CONCERN_MODEL_UNREACHABLE,
	KSR_CONCERN_CRASH_SIGNATURE,
	KSR_CONCERN_RECOVERY_PROMPT,
	KSR_CONCERN_NOT_RENDERED,
	KSR_CONCERN_WM_LOST,    /* the window manager went away mid-run */
	KSR_CONCERN_NO_EFFECT,  /* an input step without checks changed nothing in the app */
	KSR_CONCERN_PAGE_ERROR, /* the page threw or logged an error (rung 0) */
	KSR_CONCERN__COUNT,
} ksr_concern;

const char *ksr_verdict_name(ksr_verdict v); /* "pass", "pass-with-concerns", ... */
int ksr_verdict_from_name(const char *name); /* -1 if unknown */
int ksr_verdict_exit_code(ksr_verdict v);    /* 0, 0, 1, 2 */
const char *ksr_outcome_name(ksr_outcome o);
int ksr_outcome_from_name(const char *name); /* -1 if unknown */
const char *ksr_concern_name(ksr_concern c);
int ksr_concern_from_name(const char *name); /* -1 if unknown */
/* The verdict an outcome implies when nothing says otherwise (app-failed or test-error;
 * completed -> pass). */
ksr_verdict ksr_outcome_default_verdict(ksr_outcome o);

typedef enum ksr_signal_kind {
	KSR_SIGNAL_FAILURE,
	KSR_SIGNAL_CONCERN,
} ksr_signal_kind;

typedef struct ksr_signal {
	ksr_signal_kind kind;
	ksr_outcome outcome; /* FAILURE */
	bool setup_fault;    /* FAILURE: the setup, not the app (e.g. a shell step's 127) */
	ksr_concern concern; /* CONCERN */
	const char *reason;  /* borrowed */
	int line;            /* scenario line, 0 = none */
} ksr_signal;

typedef struct ksr_decision {
	ksr_verdict verdict;
	int exit_code;
	ksr_outcome outcome;
	const char *reason; /* borrowed from the deciding signal, or static text */
	int line;
	size_t n_concerns;
} ksr_decision;

/* A one-sentence default reason for an outcome ("The app never appeared.").
 * ksr_concern/outcome/verdict names return "unknown" when out of range. */
const char *ksr_outcome_default_reason(ksr_outcome o);

/* Rules: output-unwritable anywhere wins; otherwise the first failure decides
 * (its outcome's verdict, or test-error when setup_fault); otherwise any concern
 * gives pass-with-concerns; otherwise pass. n_concerns is counted in every case.
 * A failure whose outcome implies no failure (completed, or out of range) is
 * decided test-error: a failure never becomes a pass. An empty reason gets the
 * outcome's default reason. The pass-with-concerns reason ("It worked, with 2
 * concerns; the first: ...") is built text that stays valid for the life of the
 * process (kept in a small table of distinct reasons). */
ksr_decision ksr_verdict_decide(const ksr_signal *signals, size_t n);

/* The same over recorded events: "failure" events {outcome, reason, line, setup_fault}
 * and "concern" events {code, message, line}; an "output_error" event {what, error}
 * counts as an output-unwritable failure. A failure with an unknown outcome word
 * is a runtime bug and is decided test-error. Strings borrow from events (or the
 * process-lifetime table), so keep events alive while the decision is used. */
ksr_decision ksr_verdict_from_events(const cJSON *events);

#endif
