/* The vocabulary's executor column: ksr/vocabulary.def expanded into the
 * runner's tables, indexed by step and check kind. */
#include "run/actions/exec.h"

static const ksr_step_exec_fn executors[] = {
#define KSR_STEP(nm, KIND, rng, be, model, shp, mods, tgt, aft, desk, exec, ...)                   \
	[KSR_KIND_##KIND] = exec,
#include "ksr/vocabulary.def"
};

static const ksr_check_eval_fn evaluators[] = {
#define KSR_CHECK(nm, KIND, be, model, shp, eval) [KSR_CHECK_KIND_##KIND] = eval,
#include "ksr/vocabulary.def"
};

_Static_assert(sizeof executors / sizeof executors[0] == KSR_KIND_COUNT, "an executor a kind");
_Static_assert(sizeof evaluators / sizeof evaluators[0] == KSR_CHECK_KIND_COUNT,
               "an evaluator a check kind");

ksr_step_exec_fn ksr_executor(ksr_step_kind kind)
{
	return (unsigned)kind < KSR_KIND_COUNT ? executors[kind] : NULL;
}

ksr_check_eval_fn ksr_check_evaluator(ksr_check_kind kind)
{
	return (unsigned)kind < KSR_CHECK_KIND_COUNT ? evaluators[kind] : NULL;
}
