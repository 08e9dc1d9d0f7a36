// Stats: typed counters registered once per unit path (gem5's ADD_STAT), written by separate
// writers.
//
// Each unit creates its StatGroup at construction ("chip0.core1.mxu2") and registers its counters
// there (name, unit, description); the hot path adds to a Counter it holds by pointer and never
// looks up a string. The JSON / CSV / text writers (sim/report/) walk the registry at the end; no
// unit prints.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tpusim::sim {

/// What a counter counts (written beside its value in reports).
enum class StatUnit { kCycles, kBytes, kFlop, kCount };
const char* StatUnitName(StatUnit unit);

/// A monotone 64-bit counter.
class Counter {
 public:
  void Add(uint64_t v) { value_ += v; }
  uint64_t value() const { return value_; }

 private:
  uint64_t value_ = 0;
};

struct StatInfo {
  std::string name;         // e.g. "busy_cycles"
  StatUnit unit;            // what it counts
  std::string description;  // one line
  const Counter* counter;   // owned by the group
};

/// The counters of one unit, named by the unit's path.
class StatGroup {
 public:
  explicit StatGroup(std::string path) : path_(std::move(path)) {}
  StatGroup(const StatGroup&) = delete;
  StatGroup& operator=(const StatGroup&) = delete;

  /// Registers a counter; the returned pointer stays valid for the group's life. Names are unique
  /// per group (a duplicate is an internal error).
  Counter* Add(const std::string& name, StatUnit unit, const std::string& description);

  const std::string& path() const { return path_; }
  const std::vector<StatInfo>& stats() const { return stats_; }
  /// The value of counter `name`, or nullopt.
  std::optional<uint64_t> Get(const std::string& name) const;

 private:
  friend class StatRegistry;
  std::string path_;
  std::deque<Counter> counters_;
  std::vector<StatInfo> stats_;
};

/// All stat groups of one simulation, in registration order (which construction order fixes).
class StatRegistry {
 public:
  StatRegistry() = default;
  StatRegistry(const StatRegistry&) = delete;
  StatRegistry& operator=(const StatRegistry&) = delete;

  /// A new group; paths are unique (a duplicate is an internal error).
  StatGroup& AddGroup(const std::string& path);

  const std::deque<StatGroup>& groups() const { return groups_; }
  const StatGroup* Find(const std::string& path) const;
  /// Value of "path" + "." + "name", or nullopt.
  std::optional<uint64_t> Get(const std::string& path, const std::string& name) const;
  /// Every counter as "path.name" -> value, sorted by key (for comparing two runs).
  std::map<std::string, uint64_t> Flatten() const;
  /// Sum of counter `name` over groups whose path starts with `prefix` and ends with `suffix`.
  uint64_t Sum(const std::string& prefix, const std::string& suffix, const std::string& name) const;

  /// Every counter's value, in registration order (fast-forward's statistics snapshot).
  std::vector<uint64_t> Values() const;
  /// Adds per[i] * times to the i-th counter (registration order); `per` as Values() returned.
  void AddTimes(const std::vector<uint64_t>& per, uint64_t times);

 private:
  std::deque<StatGroup> groups_;
  std::map<std::string, size_t> index_;
};

}  // namespace tpusim::sim
