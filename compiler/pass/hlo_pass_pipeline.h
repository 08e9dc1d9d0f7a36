// HloPassPipeline: runs passes in order (XLA's HloPassPipeline). After every pass that changed the
// module it runs the verifier (if one was given) so a broken rewrite is caught at the pass that
// made it, and it can record the module's HLO text after a named pass (`--dump-after=PASS`).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

/// One pass of a pipeline run: its name, wall-clock time (seconds; logged by `tpusim -v`, never
/// used in a result) and whether it changed the module.
struct PassTiming {
  std::string name;
  double seconds = 0;
  bool changed = false;
};

class HloPassPipeline {
 public:
  /// Checks a module's invariants; returns a non-ok Status naming the broken invariant.
  using Verifier = std::function<Status(const hlo::HloModule&)>;

  explicit HloPassPipeline(std::string name) : name_(std::move(name)) {}

  /// Appends a pass; passes run in the order they were added.
  template <typename P, typename... Args>
  P& AddPass(Args&&... args) {
    auto pass = std::make_unique<P>(std::forward<Args>(args)...);
    P& ref = *pass;
    passes_.push_back(std::move(pass));
    return ref;
  }
  void set_verifier(Verifier verifier) { verifier_ = std::move(verifier); }
  /// Record the module text after the pass named `pass_name` ("" = never). Run() returns
  /// InvalidArgument if no pass has that name, listing the names that exist.
  void set_dump_after(std::string pass_name) { dump_after_ = std::move(pass_name); }
  /// The module's HLO text after the `dump_after` pass ("" until it ran).
  const std::string& dump() const { return dump_; }
  /// Keep a copy of the module after the pass named `pass_name` ("" = never; a name no pass has
  /// keeps nothing): the driver's check evaluates the SPMD-partitioned program as compiled.
  void set_keep_after(std::string pass_name) { keep_after_ = std::move(pass_name); }
  /// The copy set_keep_after asked for (null until that pass ran).
  std::unique_ptr<hlo::HloModule> TakeKept() { return std::move(kept_); }
  /// Names of the passes in order.
  std::vector<std::string> PassNames() const;
  /// The passes of the last Run(), in order (those that ran before an error, if any).
  const std::vector<PassTiming>& timings() const { return timings_; }

  /// Runs every pass; returns true if any changed the module. A pass error is returned with the
  /// pass name as prefix ("canonicalize: ..."); a verifier failure says which pass broke it.
  StatusOr<bool> Run(hlo::HloModule& module);

 private:
  std::string name_;
  std::vector<std::unique_ptr<HloPass>> passes_;
  Verifier verifier_;
  std::string dump_after_;
  std::string dump_;
  std::string keep_after_;
  std::unique_ptr<hlo::HloModule> kept_;
  std::vector<PassTiming> timings_;
};

}  // namespace tpusim::compiler
