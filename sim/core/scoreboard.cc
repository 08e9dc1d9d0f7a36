#include "sim/core/scoreboard.h"

namespace tpusim::sim {

uint64_t Scoreboard::FirstConflict(const isa::Footprint& f) const {
  for (const auto& [seq, e] : entries_) {
    for (const isa::Region& w : e.writes) {
      for (const isa::Region& r : f.reads) {
        if (r.Overlaps(w) && !(r.result_stream && w.in_order_chain)) return seq;  // RAW
      }
      for (const isa::Region& x : f.writes) {
        if (x.Overlaps(w)) return seq;  // WAW
      }
    }
    for (const isa::Region& r : e.reads) {
      for (const isa::Region& x : f.writes) {
        if (x.Overlaps(r)) return seq;  // WAR
      }
    }
  }
  return kNone;
}

}  // namespace tpusim::sim
