#include "sim/core/scoreboard.h"

namespace tpusim::sim {

bool Scoreboard::CanIssue(const Footprint& f) const {
  for (const auto& [seq, e] : entries_) {
    for (const Region& w : e.writes) {
      for (const Region& r : f.reads) {
        if (r.Overlaps(w)) return false;  // RAW
      }
      for (const Region& x : f.writes) {
        if (x.Overlaps(w)) return false;  // WAW
      }
    }
    for (const Region& r : e.reads) {
      for (const Region& x : f.writes) {
        if (x.Overlaps(r)) return false;  // WAR
      }
    }
  }
  return true;
}

}  // namespace tpusim::sim
