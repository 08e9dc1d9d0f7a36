#include "sim/core/scoreboard.h"

namespace tpusim::sim {

bool Scoreboard::CanIssue(const isa::Footprint& f) const {
  for (const auto& [seq, e] : entries_) {
    for (const isa::Region& w : e.writes) {
      for (const isa::Region& r : f.reads) {
        if (r.Overlaps(w)) return false;  // RAW
      }
      for (const isa::Region& x : f.writes) {
        if (x.Overlaps(w)) return false;  // WAW
      }
    }
    for (const isa::Region& r : e.reads) {
      for (const isa::Region& x : f.writes) {
        if (x.Overlaps(r)) return false;  // WAR
      }
    }
  }
  return true;
}

}  // namespace tpusim::sim
