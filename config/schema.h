// The one table of chip-config keys: path, type, unit, default and description, and where each
// value lands in ChipConfig. The loader (config_loader.cc) reads keys only through this table,
// `tpusim config schema` prints it, and docs/config.md is generated from it — so a key cannot exist
// in one place and not another.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"
#include "common/status.h"
#include "config/chip_config.h"

namespace tpusim::config {

enum class FieldType { kInt, kDouble, kBool, kString, kTopology, kIntList };

struct FieldSpec {
  std::string path;  // dotted key path, e.g. "core.mxu.rows"
  FieldType type;
  std::string unit;           // "cycles", "bytes", "bytes/s", "Hz", "count", "" (none)
  std::string default_value;  // as YAML text; empty = required (no default)
  std::string description;
  // Exactly one of these is set, matching `type`.
  std::function<int64_t&(ChipConfig&)> int_field;
  std::function<double&(ChipConfig&)> double_field;
  std::function<bool&(ChipConfig&)> bool_field;
  std::function<std::string&(ChipConfig&)> string_field;
  std::function<Topology&(ChipConfig&)> topology_field;
  std::function<std::vector<int64_t>&(ChipConfig&)> int_list_field;
  // The meaningful range of a number (of each item of an integer list), inclusive, in `unit`:
  // outside it the models compute nothing meaningful (a clock of 5e-324 Hz, 2^40 MXU rows), so the
  // loader refuses the value naming the key. has_range false for strings, booleans, topologies.
  bool has_range = false;
  double min = 0, max = 0;
  bool required() const { return default_value.empty(); }
  /// This spec with the range [lo, hi].
  FieldSpec In(double lo, double hi) && {
    has_range = true;
    min = lo;
    max = hi;
    return std::move(*this);
  }
  /// "" if `v` is in range, else "expected ... from MIN to MAX (UNIT), got SHOWN" (`shown`: the
  /// value as written, so a 64-bit integer is quoted exactly).
  std::string RangeError(double v, const std::string& shown) const;
};

/// The finest transfer rate the simulator represents: rates are fixed point with 16 fraction bits
/// (sim/chip/transfer_network.h, kFracBits), so a bandwidth is rounded to 1/65536 byte/cycle.
inline constexpr double kRateResolutionBytesPerCycle = 1.0 / 65536;
/// The smallest bandwidth (bytes/cycle of the clock) a config may give: 100 resolution steps, so
/// the rounding changes no figure by more than 1 %.
inline constexpr double kMinBytesPerCycle = 100 * kRateResolutionBytesPerCycle;

/// Every key a config may hold, in documentation order. `base` (a parent config) is handled by the
/// loader and is not in this table.
const std::vector<FieldSpec>& ConfigSchema();

/// The schema's row of key `path` ("core.mxu.rows"), or null when there is none.
const FieldSpec* FindConfigField(std::string_view path);

/// The range check of key `path` for a value that did not come through the loader (a struct built
/// in code, e.g. sim::MxuArrayConfig): InvalidArgument "PATH: expected ..., got VALUE" when `value`
/// is outside the schema's range, so every range is written once, in the schema table.
/// TPUSIM_CHECKs that `path` is a key with a range.
Status CheckConfigRange(std::string_view path, int64_t value);
Status CheckConfigRange(std::string_view path, double value);

const char* FieldTypeName(FieldType t);
const char* TopologyName(Topology t);

/// Every key of the schema with its value in `config` (defaults included), nested like the YAML
/// ({"chip": {"hbm": {"bandwidth_bytes_per_s": 1.2e12, ...}}, ...}), in schema order: the
/// effective config of a run, after `base:` and --set, as the report's provenance records it.
/// Loading it back as YAML gives the same ChipConfig.
Json EffectiveConfigJson(const ChipConfig& config);

/// Markdown table of the schema (docs/config.md).
std::string SchemaMarkdown();

}  // namespace tpusim::config
