#include "compiler/pass/hlo_pass_pipeline.h"

#include <chrono>

#include "hlo/clone.h"
#include "hlo/printer.h"

namespace tpusim::compiler {

std::vector<std::string> HloPassPipeline::PassNames() const {
  std::vector<std::string> names;
  for (const auto& p : passes_) names.emplace_back(p->name());
  return names;
}

StatusOr<bool> HloPassPipeline::Run(hlo::HloModule& module) {
  if (!dump_after_.empty()) {
    bool found = false;
    std::string known;
    for (const auto& p : passes_) {
      found = found || p->name() == dump_after_;
      known += (known.empty() ? "" : ", ") + std::string(p->name());
    }
    if (!found) {
      return InvalidArgument(
          "--dump-after=" + dump_after_ + ": no pass of that name in pipeline '" + name_ +
          "' (passes: " + known + "; or 'fusion' for the lowering's fusion decisions)");
    }
  }
  bool changed = false;
  timings_.clear();
  for (const auto& pass : passes_) {
    const auto started = std::chrono::steady_clock::now();
    StatusOr<bool> r = pass->Run(module);
    if (!r.ok()) return r.status().WithPrefix(std::string(pass->name()));
    timings_.push_back(
        {std::string(pass->name()),
         std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), *r});
    changed = changed || *r;
    if (*r && verifier_) {
      Status v = verifier_(module);
      if (!v.ok()) {
        return Internal("HLO verifier failed after pass '" + std::string(pass->name()) +
                        "': " + v.message());
      }
    }
    if (pass->name() == dump_after_) dump_ = hlo::PrintModule(module);
    if (pass->name() == keep_after_) {
      TPUSIM_ASSIGN_OR_RETURN(kept_, hlo::CloneModule(module));
    }
  }
  return changed;
}

}  // namespace tpusim::compiler
