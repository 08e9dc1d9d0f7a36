// ErrorSink: the first runtime error of a run (out-of-bounds address, mismatched collective, ...);
// the Engine stops at the end of the cycle in which one was reported.
#pragma once

#include <utility>

#include "common/status.h"
#include "common/units.h"

namespace tpusim::sim {

/// The first runtime error of a run. Deterministic under any step order: among errors reported in
/// the same cycle, the one from the unit with the smallest id wins.
class ErrorSink {
 public:
  void Report(Cycles now, int unit_id, Status status) {
    if (status.ok()) return;
    if (!has_error_ || now < cycle_ || (now == cycle_ && unit_id < unit_id_)) {
      has_error_ = true;
      cycle_ = now;
      unit_id_ = unit_id;
      status_ = std::move(status);
    }
  }
  bool has_error() const { return has_error_; }
  const Status& status() const { return status_; }

 private:
  bool has_error_ = false;
  Cycles cycle_;
  int unit_id_ = 0;
  Status status_;
};

}  // namespace tpusim::sim
