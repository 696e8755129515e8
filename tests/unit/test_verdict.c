/* The verdict table (docs/report.md#verdicts-outcomes-and-concerns): every
 * outcome, every concern, the rules that combine them. Any change to a mapping
 * fails a row here. */
#include <stdio.h>
#include <string.h>

#include "ksr/verdict.h"
#include "tap.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct {
	ksr_outcome outcome;
	const char *word;
	const char *verdict;
	int exit_code;
} outcome_table[] = {
        {KSR_OUTCOME_NEVER_APPEARED, "never-appeared", "app-failed", 1},
        {KSR_OUTCOME_EXITED, "exited", "app-failed", 1},
        {KSR_OUTCOME_CRASHED, "crashed", "app-failed", 1},
        {KSR_OUTCOME_CRASH_LOOP, "crash-loop", "app-failed", 1},
        {KSR_OUTCOME_ERROR_DIALOG, "error-dialog", "app-failed", 1},
        {KSR_OUTCOME_NOT_RENDERED, "not-rendered", "app-failed", 1},
        {KSR_OUTCOME_WINDOW_LOST, "window-lost", "app-failed", 1},
        {KSR_OUTCOME_STEP_FAILED, "step-failed", "app-failed", 1},
        {KSR_OUTCOME_CHECK_FAILED, "check-failed", "app-failed", 1},
        {KSR_OUTCOME_DEADLINE, "deadline", "test-error", 2},
        {KSR_OUTCOME_INTERRUPTED, "interrupted", "test-error", 2},
        {KSR_OUTCOME_BLOCKED, "blocked", "test-error", 2},
        {KSR_OUTCOME_BLOCKED_BY_PROMPT, "blocked-by-prompt", "app-failed", 1},
        {KSR_OUTCOME_INVALID_SCENARIO, "invalid-scenario", "test-error", 2},
        {KSR_OUTCOME_NO_DISPLAY, "no-display", "test-error", 2},
        {KSR_OUTCOME_BACKEND_UNAVAILABLE, "backend-unavailable", "test-error", 2},
        {KSR_OUTCOME_OUTPUT_UNWRITABLE, "output-unwritable", "test-error", 2},
};

static const struct {
	ksr_concern concern;
	const char *word;
} concern_table[] = {
        {KSR_CONCERN_FIRST_RUN_PROMPT, "first-run-prompt"},
        {KSR_CONCERN_UPDATER, "updater"},
        {KSR_CONCERN_BASELINE_DRIFT, "baseline-drift"},
        {KSR_CONCERN_UNEXPECTED_DIALOG, "unexpected-dialog"},
        {KSR_CONCERN_UNVERIFIED_CLICK, "unverified-click"},
        {KSR_CONCERN_UNCONFIRMED_CLAIM, "unconfirmed-claim"},
        {KSR_CONCERN_MODEL_UNREACHABLE, "model-unreachable"},
        {KSR_CONCERN_CRASH_SIGNATURE, "crash-signature"},
        {KSR_CONCERN_RECOVERY_PROMPT, "recovery-prompt"},
        {KSR_CONCERN_NOT_RENDERED, "not-rendered"},
        {KSR_CONCERN_WM_LOST, "wm-lost"},
        {KSR_CONCERN_NO_EFFECT, "no-effect"},
        {KSR_CONCERN_PAGE_ERROR, "page-error"},
};

static const struct {
	ksr_verdict v;
	const char *word;
	int exit_code;
} verdict_table[] = {
        {KSR_VERDICT_PASS, "pass", 0},
        {KSR_VERDICT_PASS_WITH_CONCERNS, "pass-with-concerns", 0},
        {KSR_VERDICT_APP_FAILED, "app-failed", 1},
        {KSR_VERDICT_TEST_ERROR, "test-error", 2},
};

static ksr_signal failure(ksr_outcome o, const char *reason, int line)
{
	return (ksr_signal){
	        .kind = KSR_SIGNAL_FAILURE, .outcome = o, .reason = reason, .line = line};
}

static ksr_signal concern(ksr_concern c, const char *message, int line)
{
	return (ksr_signal){
	        .kind = KSR_SIGNAL_CONCERN, .concern = c, .reason = message, .line = line};
}

static void test_names(void)
{
	is_int(KSR_OUTCOME__COUNT, (long long)N(outcome_table) + 1, "16 outcome words");
	is_int(KSR_CONCERN__COUNT, (long long)N(concern_table), "8 concern codes");
	for (size_t i = 0; i < N(verdict_table); i++) {
		is_str(ksr_verdict_name(verdict_table[i].v), verdict_table[i].word, "verdict name");
		is_int(ksr_verdict_from_name(verdict_table[i].word), verdict_table[i].v,
		       "verdict round trip");
		is_int(ksr_verdict_exit_code(verdict_table[i].v), verdict_table[i].exit_code,
		       verdict_table[i].word);
	}
	is_str(ksr_outcome_name(KSR_OUTCOME_COMPLETED), "completed", "completed");
	is_int(ksr_outcome_from_name("completed"), KSR_OUTCOME_COMPLETED, "completed round trip");
	is_int(ksr_outcome_default_verdict(KSR_OUTCOME_COMPLETED), KSR_VERDICT_PASS,
	       "completed -> pass");
	for (size_t i = 0; i < N(outcome_table); i++) {
		is_str(ksr_outcome_name(outcome_table[i].outcome), outcome_table[i].word,
		       "outcome name");
		is_int(ksr_outcome_from_name(outcome_table[i].word), outcome_table[i].outcome,
		       "outcome round trip");
	}
	for (size_t i = 0; i < N(concern_table); i++) {
		is_str(ksr_concern_name(concern_table[i].concern), concern_table[i].word,
		       "concern name");
		is_int(ksr_concern_from_name(concern_table[i].word), concern_table[i].concern,
		       "concern round trip");
	}
	is_int(ksr_outcome_from_name("crash"), -1, "unknown outcome word");
	is_int(ksr_outcome_from_name(NULL), -1, "NULL outcome word");
	is_int(ksr_concern_from_name("Updater"), -1, "names are case-sensitive");
	is_int(ksr_verdict_from_name("fail"), -1, "unknown verdict word");
	is_str(ksr_outcome_name((ksr_outcome)99), "unknown", "out of range outcome");
}

/* Every outcome as the first failure, alone and followed by others. */
static void test_outcomes(void)
{
	for (size_t i = 0; i < N(outcome_table); i++) {
		const char *w = outcome_table[i].word;
		ksr_signal s[3] = {
		        concern(KSR_CONCERN_UPDATER, "an updater", 2),
		        failure(outcome_table[i].outcome, "why", 7),
		        failure(KSR_OUTCOME_CHECK_FAILED, "later", 9),
		};
		ksr_decision d = ksr_verdict_decide(s, 3);
		char what[128];
		snprintf(what, sizeof what, "%s -> %s", w, outcome_table[i].verdict);
		is_str(ksr_verdict_name(d.verdict), outcome_table[i].verdict, what);
		is_int(d.exit_code, outcome_table[i].exit_code, what);
		is_str(ksr_outcome_name(d.outcome), w, what);
		is_str(d.reason, "why", "the deciding failure's reason");
		is_int(d.line, 7, "the deciding failure's line");
		is_int((long long)d.n_concerns, 1, "concerns counted beside a failure");
		is_int(ksr_outcome_default_verdict(outcome_table[i].outcome),
		       ksr_verdict_from_name(outcome_table[i].verdict), "default verdict");
	}
}

static void test_concerns(void)
{
	for (size_t i = 0; i < N(concern_table); i++) {
		ksr_signal s[1] = {concern(concern_table[i].concern, "look at this", 4)};
		ksr_decision d = ksr_verdict_decide(s, 1);
		is_str(ksr_verdict_name(d.verdict), "pass-with-concerns", concern_table[i].word);
		is_int(d.exit_code, 0, "concern alone exits 0");
		is_str(ksr_outcome_name(d.outcome), "completed", "concern alone: completed");
		ok(d.reason && strstr(d.reason, "1 concern") && strstr(d.reason, "look at this"),
		   "reason names the count and the message: %s", d.reason);
		is_int((long long)d.n_concerns, 1, "one concern");

		ksr_signal t[2] = {concern(concern_table[i].concern, "x", 0),
		                   failure(KSR_OUTCOME_CRASHED, "boom", 3)};
		d = ksr_verdict_decide(t, 2);
		is_str(ksr_verdict_name(d.verdict), "app-failed", "a failure beats a concern");
		is_int(d.exit_code, 1, "and exits 1");
	}
	ksr_signal many[3] = {concern(KSR_CONCERN_BASELINE_DRIFT, "the screen drifted", 0),
	                      concern(KSR_CONCERN_UPDATER, "an updater", 0),
	                      concern(KSR_CONCERN_CRASH_SIGNATURE, "segfault in log", 0)};
	ksr_decision d = ksr_verdict_decide(many, 3);
	ok(d.reason && strstr(d.reason, "3 concerns") && strstr(d.reason, "the screen drifted"),
	   "three concerns: count and the first message: %s", d.reason);
	is_int((long long)d.n_concerns, 3, "three counted");
	ksr_decision again = ksr_verdict_decide(many, 3);
	ok(again.reason == d.reason, "the same built reason is reused");
	ksr_signal nomsg[1] = {concern(KSR_CONCERN_UPDATER, NULL, 0)};
	d = ksr_verdict_decide(nomsg, 1);
	ok(d.reason && strstr(d.reason, "updater"), "no message: the code: %s", d.reason);
}

static void test_rules(void)
{
	ksr_decision d = ksr_verdict_decide(NULL, 0);
	is_str(ksr_verdict_name(d.verdict), "pass", "no signals -> pass");
	is_int(d.exit_code, 0, "pass exits 0");
	is_str(ksr_outcome_name(d.outcome), "completed", "pass: completed");
	is_str(d.reason, "All checks passed.", "pass reason");
	is_int(d.line, 0, "pass: no line");
	is_int((long long)d.n_concerns, 0, "pass: no concerns");

	ksr_signal setup = failure(KSR_OUTCOME_STEP_FAILED, "command not found", 12);
	setup.setup_fault = true;
	d = ksr_verdict_decide(&setup, 1);
	is_str(ksr_verdict_name(d.verdict), "test-error", "setup_fault -> test-error");
	is_int(d.exit_code, 2, "setup_fault exits 2");
	is_str(ksr_outcome_name(d.outcome), "step-failed", "setup_fault keeps its outcome");
	is_int(d.line, 12, "setup_fault line");

	ksr_signal order[2] = {failure(KSR_OUTCOME_CHECK_FAILED, "first", 3),
	                       failure(KSR_OUTCOME_DEADLINE, "second", 0)};
	d = ksr_verdict_decide(order, 2);
	is_str(ksr_outcome_name(d.outcome), "check-failed", "the first failure wins");
	is_str(ksr_verdict_name(d.verdict), "app-failed", "its verdict");
	ksr_signal rev[2] = {order[1], order[0]};
	d = ksr_verdict_decide(rev, 2);
	is_str(ksr_outcome_name(d.outcome), "deadline", "reversed: the other first failure wins");
	is_str(ksr_verdict_name(d.verdict), "test-error", "its verdict");

	ksr_signal unw[4] = {concern(KSR_CONCERN_UPDATER, "u", 0),
	                     failure(KSR_OUTCOME_CRASHED, "crashed", 5),
	                     failure(KSR_OUTCOME_OUTPUT_UNWRITABLE, "disk full", 0),
	                     failure(KSR_OUTCOME_OUTPUT_UNWRITABLE, "again", 0)};
	d = ksr_verdict_decide(unw, 4);
	is_str(ksr_outcome_name(d.outcome), "output-unwritable", "output-unwritable wins");
	is_str(ksr_verdict_name(d.verdict), "test-error", "over an earlier app failure");
	is_int(d.exit_code, 2, "exit 2");
	is_str(d.reason, "disk full", "the first output-unwritable's reason");
	is_int((long long)d.n_concerns, 1, "concerns still counted");

	ksr_signal empty = failure(KSR_OUTCOME_NEVER_APPEARED, "", 0);
	d = ksr_verdict_decide(&empty, 1);
	is_str(d.reason, "The app never appeared.", "empty reason: the outcome's default");

	ksr_signal odd = failure(KSR_OUTCOME_COMPLETED, "a failure that says completed", 0);
	d = ksr_verdict_decide(&odd, 1);
	is_str(ksr_verdict_name(d.verdict), "test-error", "a failure never becomes a pass");
}

static void test_from_events(void)
{
	cJSON *ev = cJSON_Parse(
	        "[{\"event\":\"run.start\"},"
	        "{\"event\":\"concern\",\"code\":\"baseline-drift\",\"message\":\"drift\",\"line\":"
	        "3},"
	        "{\"event\":\"failure\",\"outcome\":\"step-failed\",\"reason\":\"not found\","
	        "\"line\":9,\"setup_fault\":true},"
	        "{\"event\":\"failure\",\"outcome\":\"crashed\",\"reason\":\"gone\"}]");
	ksr_decision d = ksr_verdict_from_events(ev);
	is_str(ksr_verdict_name(d.verdict), "test-error", "events: setup_fault first failure");
	is_str(ksr_outcome_name(d.outcome), "step-failed", "events: outcome");
	is_str(d.reason, "not found", "events: reason");
	is_int(d.line, 9, "events: line");
	is_int((long long)d.n_concerns, 1, "events: concerns counted");
	cJSON_AddItemToArray(ev, cJSON_Parse("{\"event\":\"output_error\",\"what\":\"report.json\","
	                                     "\"error\":\"No space left on device\"}"));
	d = ksr_verdict_from_events(ev);
	is_str(ksr_outcome_name(d.outcome), "output-unwritable", "events: output_error wins");
	ok(d.reason && strstr(d.reason, "report.json") && strstr(d.reason, "No space"),
	   "events: output_error reason: %s", d.reason);
	cJSON_Delete(ev);

	ev = cJSON_Parse(
	        "[{\"event\":\"output_error\",\"what\":\"report.md: Permission denied\"}]");
	d = ksr_verdict_from_events(ev);
	is_str(d.reason, "Could not write to the evidence folder: report.md: Permission denied.",
	       "events: output_error with only what");
	cJSON_Delete(ev);

	ev = cJSON_Parse("[{\"event\":\"concern\",\"code\":\"updater\",\"message\":\"m\"}]");
	d = ksr_verdict_from_events(ev);
	is_str(ksr_verdict_name(d.verdict), "pass-with-concerns", "events: concern only");
	cJSON_Delete(ev);

	ev = cJSON_Parse("[{\"event\":\"failure\",\"outcome\":\"exploded\"}]");
	d = ksr_verdict_from_events(ev);
	is_str(ksr_verdict_name(d.verdict), "test-error", "events: unknown outcome word");
	cJSON_Delete(ev);

	d = ksr_verdict_from_events(NULL);
	is_str(ksr_verdict_name(d.verdict), "pass", "events: none");

	/* A model's yes after a failure (a later judgement, a verified grounded
	 * click, a successful call) clears nothing: only failure/concern count. */
	ev = cJSON_Parse(
	        "[{\"event\":\"failure\",\"outcome\":\"check-failed\",\"reason\":"
	        "\"the judge answered no\",\"line\":7},"
	        "{\"event\":\"judgement\",\"rendered\":\"yes\",\"error_showing\":\"no\"},"
	        "{\"event\":\"model_call\",\"role\":\"judge\",\"ok\":true,\"ms\":5},"
	        "{\"event\":\"grounding\",\"step\":2,\"verified\":true},"
	        "{\"event\":\"concern\",\"code\":\"unverified-click\",\"message\":\"m\"}]");
	d = ksr_verdict_from_events(ev);
	is_str(ksr_verdict_name(d.verdict), "app-failed",
	       "events: a model's yes never clears a failure");
	is_str(ksr_outcome_name(d.outcome), "check-failed",
	       "events: the visual check's outcome stays");
	cJSON_Delete(ev);
}

int main(void)
{
	test_names();
	test_outcomes();
	test_concerns();
	test_rules();
	test_from_events();
	return tap_done();
}
