#include "sim/core/stall_attribution.h"

#include <algorithm>

#include "common/check.h"

namespace tpusim::sim {
namespace {

using Intervals = std::vector<StallAttribution::Interval>;

// Sorted, disjoint union of `in`, with prefix lengths for overlap queries.
struct Union {
  Intervals iv;
  std::vector<uint64_t> prefix;  // prefix[i] = total length of iv[0..i)
  explicit Union(Intervals in) {
    std::sort(in.begin(), in.end());
    for (auto [s, e] : in) {
      if (e <= s) continue;
      if (!iv.empty() && s <= iv.back().second) {
        iv.back().second = std::max(iv.back().second, e);
      } else {
        iv.emplace_back(s, e);
      }
    }
    prefix.assign(iv.size() + 1, 0);
    for (size_t i = 0; i < iv.size(); ++i) prefix[i + 1] = prefix[i] + iv[i].second - iv[i].first;
  }
  // Length of [0, t) covered.
  uint64_t Covered(uint64_t t) const {
    auto it = std::upper_bound(iv.begin(), iv.end(), std::make_pair(t, UINT64_MAX));
    const size_t i = static_cast<size_t>(it - iv.begin());
    if (i == 0) return 0;
    const auto& last = iv[i - 1];
    return prefix[i - 1] + (std::min(t, last.second) - last.first);
  }
  uint64_t Overlap(uint64_t s, uint64_t e) const { return Covered(e) - Covered(s); }
};

}  // namespace

void StallAttribution::AddSegment(uint64_t start, uint64_t end, StallCategory category) {
  if (end <= start) return;
  if (!segments_.empty() && segments_.back().category == category &&
      segments_.back().end == start) {
    segments_.back().end = end;
    return;
  }
  segments_.push_back(Segment{start, end, category});
}

void StallAttribution::AddActivity(MxuActivityKind kind, uint64_t start, uint64_t end) {
  if (end <= start) return;
  TPUSIM_CHECK(start >= flushed_end_)
      << "MXU activity at cycle " << start << " before the attributed frontier " << flushed_end_;
  new_[static_cast<int>(kind)].emplace_back(start, end);
}

void StallAttribution::Flush() {
  // unions_[i] covers the classes 0..i.
  std::array<Union, 3> u{Union({}), Union({}), Union({})};
  for (int i = 0; i < 3; ++i) {
    Intervals all = unions_[i];
    for (int j = 0; j <= i; ++j) all.insert(all.end(), new_[j].begin(), new_[j].end());
    u[i] = Union(std::move(all));
  }
  for (auto& n : new_) n.clear();
  for (const Segment& s : segments_) {
    const uint64_t a = u[0].Overlap(s.start, s.end);
    const uint64_t b = u[1].Overlap(s.start, s.end) - a;
    const uint64_t c = u[2].Overlap(s.start, s.end) - a - b;
    totals_[static_cast<int>(StallCategory::kArrayActive)] += a;
    totals_[static_cast<int>(StallCategory::kWeightShift)] += b;
    totals_[static_cast<int>(StallCategory::kWeightStall)] += c;
    totals_[static_cast<int>(s.category)] += (s.end - s.start) - a - b - c;
    flushed_end_ = std::max(flushed_end_, s.end);
  }
  segments_.clear();
  // Later segments start at flushed_end_ or later: keep only what they can overlap.
  for (int i = 0; i < 3; ++i) {
    unions_[i].clear();
    for (auto [s, e] : u[i].iv) {
      if (e > flushed_end_) unions_[i].emplace_back(std::max(s, flushed_end_), e);
    }
  }
}

void StallAttribution::Save(StateWriter& w) const {
  w.Value(segments_.size());
  for (const Segment& s : segments_) {
    w.Time(s.start);
    w.Time(s.end);
    w.Value(static_cast<uint64_t>(s.category));
  }
  for (const auto* group : {&new_, &unions_}) {
    for (const Intervals& iv : *group) {
      w.Value(iv.size());
      for (auto [s, e] : iv) {
        w.Time(s);
        w.Time(e);
      }
    }
  }
  w.LowerBound(flushed_end_);
}

void StallAttribution::SaveStats(std::vector<uint64_t>& out) const {
  out.insert(out.end(), totals_.begin(), totals_.end());
}

void StallAttribution::AdvanceStats(const uint64_t* delta, uint64_t times) {
  for (size_t i = 0; i < totals_.size(); ++i) totals_[i] += delta[i] * times;
}

void StallAttribution::Shift(Cycles delta) {
  for (Segment& s : segments_) {
    s.start += delta.value();
    s.end += delta.value();
  }
  for (auto* group : {&new_, &unions_}) {
    for (Intervals& iv : *group) {
      for (auto& [s, e] : iv) {
        s += delta.value();
        e += delta.value();
      }
    }
  }
  flushed_end_ += delta.value();
}

}  // namespace tpusim::sim
