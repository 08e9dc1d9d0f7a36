#include "sim/core/scoreboard.h"

#include <algorithm>

#include "common/check.h"

namespace tpusim::sim {

uint64_t Scoreboard::FirstConflict(const isa::Footprint& f) const {
  // Regions are in entry order, so the first conflicting region belongs to the oldest conflicting
  // entry.
  for (const Tagged& t : regions_) {
    const isa::Region& e = t.region;
    if (t.write) {
      for (const isa::Region& r : f.reads) {
        if (r.Overlaps(e) && !(r.result_stream && e.in_order_chain)) return t.seq;  // RAW
      }
      for (const isa::Region& x : f.writes) {
        if (x.Overlaps(e)) return t.seq;  // WAW
      }
    } else {
      for (const isa::Region& x : f.writes) {
        if (x.Overlaps(e)) return t.seq;  // WAR
      }
    }
  }
  return kNone;
}

bool Scoreboard::Contains(uint64_t seq) const {
  return std::binary_search(seqs_.begin(), seqs_.end(), seq);
}

void Scoreboard::Add(uint64_t seq, const isa::Footprint& f) {
  TPUSIM_CHECK(seqs_.empty() || seq > seqs_.back()) << "scoreboard entries out of order";
  seqs_.push_back(seq);
  for (const isa::Region& w : f.writes) regions_.push_back({seq, true, w});
  for (const isa::Region& r : f.reads) regions_.push_back({seq, false, r});
}

void Scoreboard::Remove(uint64_t seq) {
  auto s = std::lower_bound(seqs_.begin(), seqs_.end(), seq);
  if (s == seqs_.end() || *s != seq) return;
  seqs_.erase(s);
  auto first = std::lower_bound(regions_.begin(), regions_.end(), seq,
                                [](const Tagged& t, uint64_t v) { return t.seq < v; });
  auto last = std::find_if(first, regions_.end(), [seq](const Tagged& t) { return t.seq != seq; });
  regions_.erase(first, last);
}

}  // namespace tpusim::sim
