// The one table of chip-config keys: path, type, unit, default and description, and where each
// value lands in ChipConfig. The loader (config_loader.cc) reads keys only through this table,
// `tpusim config schema` prints it, and docs/config.md is generated from it — so a key cannot exist
// in one place and not another.
#pragma once

#include <functional>
#include <string>
#include <vector>

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
  bool required() const { return default_value.empty(); }
};

/// Every key a config may hold, in documentation order. `base` (a parent config) is handled by the
/// loader and is not in this table.
const std::vector<FieldSpec>& ConfigSchema();

const char* FieldTypeName(FieldType t);
const char* TopologyName(Topology t);

/// Markdown table of the schema (docs/config.md).
std::string SchemaMarkdown();

}  // namespace tpusim::config
