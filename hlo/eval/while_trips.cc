#include "hlo/eval/while_trips.h"

#include <utility>

#include "hlo/eval/evaluator.h"
#include "hlo/eval/literal.h"

namespace tpusim::hlo {

StatusOr<std::map<std::string, int64_t>> CountWhileTrips(const HloModule& module, int64_t devices,
                                                         const std::vector<std::string>& whiles,
                                                         const WhileTripOptions& options) {
  std::map<std::string, int64_t> counted;
  if (whiles.empty() || module.num_partitions() > 1 ||
      EstimateCheckBytes(module, devices) > options.max_bytes) {
    return counted;
  }
  std::vector<std::vector<Literal>> args;
  for (int64_t d = 0; d < devices; ++d) {
    StatusOr<std::vector<Literal>> a =
        Evaluator::MakeRandomArguments(module, options.seed, d, options.max_bytes);
    if (!a.ok() && options.lenient) return counted;
    TPUSIM_RETURN_IF_ERROR(a.status());
    args.push_back(std::move(a).value());
  }
  std::map<std::string, int64_t> trips;
  EvaluatorOptions eo;
  eo.seed = options.seed;
  eo.max_bytes = options.max_bytes;
  std::map<std::string, int64_t> most;
  eo.while_trips = &trips;
  eo.while_most_trips = &most;
  eo.max_while_iterations = options.max_trips;
  Evaluator ev(eo);
  Status st = ev.EvaluateReplicated(module, devices, 1, args).status();
  if (!st.ok() && options.lenient) return counted;
  TPUSIM_RETURN_IF_ERROR(st);
  for (const std::string& w : whiles) {
    auto it = trips.find(w);
    if (it == trips.end()) {
      if (options.never_ran != nullptr) options.never_ran->push_back(w);
      continue;
    }
    if (it->second >= 0) {
      counted[w] = it->second;
      continue;
    }
    if (options.varying != nullptr) (*options.varying)[w] = most[w];
    if (options.varying_as_most) counted[w] = most[w];
  }
  return counted;
}

}  // namespace tpusim::hlo
