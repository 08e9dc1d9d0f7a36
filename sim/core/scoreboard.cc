#include "sim/core/scoreboard.h"

#include <algorithm>

#include "common/check.h"

namespace tpusim::sim {

Scoreboard::Key Scoreboard::Key::Of(const isa::Region& r, uint8_t flags) {
  Key k;
  k.lo = r.lo;
  k.hi = r.hi;
  k.core = r.core;
  k.mxu = static_cast<uint16_t>(r.mxu);
  k.space = static_cast<uint8_t>(r.space);
  k.flags = static_cast<uint8_t>(flags | (r.in_order_chain ? kChain : 0));
  return k;
}

isa::Region Scoreboard::RegionAt(size_t i) const {
  const Key& k = keys_[i];
  isa::Region e;
  e.space = static_cast<isa::MemSpace>(k.space);
  e.core = k.core;
  e.mxu = rests_[i].mxu;
  e.lo = k.lo;
  e.hi = k.hi;
  e.stride = rests_[i].stride;
  e.width = rests_[i].width;
  e.in_order_chain = (k.flags & kChain) != 0;
  return e;
}

bool Scoreboard::Conflicts(size_t i, const isa::Region& r, bool r_write) const {
  const isa::Region e = RegionAt(i);
  if (!r.Overlaps(e)) return false;
  if (keys_[i].flags & kWrite) return r_write || !(r.result_stream && e.in_order_chain);  // RAW
  return r_write;                                                                         // WAR
}

uint64_t Scoreboard::FirstConflict(const isa::Footprint& f) const {
  // Regions are in entry order, so the first conflicting region belongs to the oldest conflicting
  // entry. A read conflicts with an in-flight write (RAW); a write with any in-flight region (WAW,
  // WAR).
  // The footprint's keys (up to kMaxKeys of each kind; a larger footprint skips the prefilter).
  constexpr size_t kMaxKeys = 4;
  Key reads[kMaxKeys], writes[kMaxKeys];
  const bool small = f.reads.size() <= kMaxKeys && f.writes.size() <= kMaxKeys;
  if (small) {
    for (size_t j = 0; j < f.reads.size(); ++j) reads[j] = Key::Of(f.reads[j], 0);
    for (size_t j = 0; j < f.writes.size(); ++j) writes[j] = Key::Of(f.writes[j], kWrite);
  }
  for (size_t i = 0; i < keys_.size(); ++i) {
    const Key& k = keys_[i];
    if (k.flags & kDead) continue;
    if (k.flags & kWrite) {
      for (size_t j = 0; j < f.reads.size(); ++j) {
        if ((!small || k.MayOverlap(reads[j])) && Conflicts(i, f.reads[j], false)) {
          return region_seqs_[i];
        }
      }
    }
    for (size_t j = 0; j < f.writes.size(); ++j) {
      if ((!small || k.MayOverlap(writes[j])) && Conflicts(i, f.writes[j], true)) {
        return region_seqs_[i];
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
  for (const isa::Region& w : f.writes) {
    keys_.push_back(Key::Of(w, kWrite));
    region_seqs_.push_back(seq);
    rests_.push_back({w.stride, w.width, w.mxu});
  }
  for (const isa::Region& r : f.reads) {
    keys_.push_back(Key::Of(r, 0));
    region_seqs_.push_back(seq);
    rests_.push_back({r.stride, r.width, r.mxu});
  }
}

void Scoreboard::Remove(uint64_t seq) {
  auto s = std::lower_bound(seqs_.begin(), seqs_.end(), seq);
  if (s == seqs_.end() || *s != seq) return;
  seqs_.erase(s);
  const size_t first = static_cast<size_t>(
      std::lower_bound(region_seqs_.begin(), region_seqs_.end(), seq) - region_seqs_.begin());
  for (size_t i = first; i < keys_.size() && region_seqs_[i] == seq; ++i) {
    keys_[i].flags |= kDead;
    ++dead_;
  }
  if (seqs_.empty()) {
    keys_.clear();
    region_seqs_.clear();
    rests_.clear();
    dead_ = 0;
  } else if (2 * dead_ > keys_.size()) {
    size_t out = 0;
    for (size_t i = 0; i < keys_.size(); ++i) {
      if (keys_[i].flags & kDead) continue;
      keys_[out] = keys_[i];
      region_seqs_[out] = region_seqs_[i];
      rests_[out] = rests_[i];
      ++out;
    }
    keys_.resize(out);
    region_seqs_.resize(out);
    rests_.resize(out);
    dead_ = 0;
  }
}

}  // namespace tpusim::sim
