// Counting a data-dependent while's trips on the evaluator: the loops whose count hlo::
// KnownTripCount cannot find (hlo/while_loop.h, DataDependentWhiles) run as many trips as their
// values make them; `tpusim run` compiles them as branch loops and times that many trips for the
// run's inputs (the values the evaluator gets from the same seed).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "hlo/module.h"
#include "hlo/while_loop.h"

namespace tpusim::hlo {

struct WhileTripOptions {
  uint64_t seed = 42;  // the arguments: Evaluator::MakeRandomArguments(module, seed, device)
  /// Memory bound of the evaluation (bytes, EvaluatorOptions::max_bytes); a module whose check
  /// needs more (EstimateCheckBytes) is not evaluated.
  int64_t max_bytes = int64_t{1} << 30;
  /// Most trips of any while (EvaluatorOptions::max_while_iterations).
  int64_t max_trips = kMaxWhileTrips;
  /// True: arguments that cannot be made and an evaluation that fails (a while past max_trips
  /// included) count nothing instead of returning the error.
  bool lenient = false;
  /// True: a while whose count varies between its executions (a helper with a data-dependent loop
  /// called twice, as jax.random.beta calls gamma's rejection loop) gets the most trips any
  /// execution ran. For a run that computes values: there the device evaluates the condition
  /// every trip and the count only makes the loop a branch loop. False: such a while is left out.
  bool varying_as_most = false;
  /// When set: each while whose count varies between its executions (left out, or given its most
  /// trips under varying_as_most), with the most trips any execution ran.
  std::map<std::string, int64_t>* varying = nullptr;
  /// When set: each while of `whiles` that never ran in an evaluation that completed (inside a
  /// conditional branch these inputs do not take, or a loop body never entered).
  std::vector<std::string>* never_ran = nullptr;
};

/// The trips each while named in `whiles` runs when the evaluator runs `module` on `devices`
/// devices with the arguments of `options.seed`: name -> count. Nothing is counted (an empty map,
/// no evaluation) when `whiles` is empty, the module is partitioned (num_partitions > 1) or its
/// check needs more than options.max_bytes; a while whose count varies between its executions
/// (or devices) is left out unless options.varying_as_most, as is one that never ran. Errors: the evaluator's (Unimplemented,
/// ResourceExhausted for a while past options.max_trips, ...) unless options.lenient.
StatusOr<std::map<std::string, int64_t>> CountWhileTrips(const HloModule& module, int64_t devices,
                                                         const std::vector<std::string>& whiles,
                                                         const WhileTripOptions& options);

}  // namespace tpusim::hlo
