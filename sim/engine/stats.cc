#include "sim/engine/stats.h"

#include "common/check.h"

namespace tpusim::sim {

const char* StatUnitName(StatUnit unit) {
  switch (unit) {
    case StatUnit::kCycles:
      return "cycles";
    case StatUnit::kBytes:
      return "bytes";
    case StatUnit::kFlop:
      return "FLOP";
    case StatUnit::kCount:
      return "count";
  }
  return "?";
}

Counter* StatGroup::Add(const std::string& name, StatUnit unit, const std::string& description) {
  for (const StatInfo& s : stats_) {
    TPUSIM_CHECK(s.name != name) << "stat " << path_ << "." << name << " registered twice";
  }
  counters_.emplace_back();
  stats_.push_back(StatInfo{name, unit, description, &counters_.back()});
  return &counters_.back();
}

std::optional<uint64_t> StatGroup::Get(const std::string& name) const {
  for (const StatInfo& s : stats_) {
    if (s.name == name) return s.counter->value();
  }
  return std::nullopt;
}

StatGroup& StatRegistry::AddGroup(const std::string& path) {
  TPUSIM_CHECK(index_.count(path) == 0) << "stat group " << path << " registered twice";
  index_[path] = groups_.size();
  groups_.emplace_back(path);
  return groups_.back();
}

const StatGroup* StatRegistry::Find(const std::string& path) const {
  auto it = index_.find(path);
  return it == index_.end() ? nullptr : &groups_[it->second];
}

std::optional<uint64_t> StatRegistry::Get(const std::string& path, const std::string& name) const {
  const StatGroup* g = Find(path);
  if (g == nullptr) return std::nullopt;
  return g->Get(name);
}

std::map<std::string, uint64_t> StatRegistry::Flatten() const {
  std::map<std::string, uint64_t> out;
  for (const StatGroup& g : groups_) {
    for (const StatInfo& s : g.stats()) out[g.path() + "." + s.name] = s.counter->value();
  }
  return out;
}

uint64_t StatRegistry::Sum(const std::string& prefix, const std::string& suffix,
                           const std::string& name) const {
  uint64_t total = 0;
  for (const StatGroup& g : groups_) {
    const std::string& p = g.path();
    if (p.compare(0, prefix.size(), prefix) != 0) continue;
    if (p.size() < suffix.size() || p.compare(p.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    if (auto v = g.Get(name)) total += *v;
  }
  return total;
}

std::vector<uint64_t> StatRegistry::Values() const {
  std::vector<uint64_t> v;
  for (const StatGroup& g : groups_) {
    for (const Counter& c : g.counters_) v.push_back(c.value());
  }
  return v;
}

void StatRegistry::AddTimes(const std::vector<uint64_t>& per, uint64_t times) {
  size_t i = 0;
  for (StatGroup& g : groups_) {
    for (Counter& c : g.counters_) c.Add(per.at(i++) * times);
  }
}

}  // namespace tpusim::sim
