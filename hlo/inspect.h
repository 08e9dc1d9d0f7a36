// `tpusim inspect MODEL.hlo [--json]`: what a module contains — computations, instruction and
// opcode counts, parameters and outputs with shapes and bytes, FLOP and bytes accessed
// (cost_analysis.h), collectives with their replica groups, shardings and custom-call targets. Pure
// logic here so it is unit tested; tools/tpusim/cmd_inspect.cc only reads the file and prints.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/json.h"
#include "hlo/cost_analysis.h"
#include "hlo/module.h"

namespace tpusim::hlo {

struct InspectSummary {
  struct ComputationInfo {
    std::string name;
    int64_t instructions = 0;
    int64_t parameters = 0;
    bool is_entry = false;
  };
  struct ValueInfo {
    std::string name;      // parameter name, or "ROOT" / "ROOT.{i}" for outputs
    std::string shape;     // HLO text with layout
    int64_t bytes = 0;     // ByteSize (saturating)
    std::string sharding;  // "" if none
  };
  struct CollectiveInfo {
    std::string name;
    std::string opcode;
    std::string computation;
    std::string shape;
    std::string replica_groups;                // as written ("" if absent)
    std::vector<std::vector<int64_t>> groups;  // expanded; empty when not expandable (e.g. `{}`)
    std::optional<int64_t> channel_id;
  };

  std::string module_name;
  int64_t replica_count = 1;  // the header's replica_count
  int64_t num_partitions = 1;
  /// Devices `tpusim run` uses by default (InferDeviceCount: replica_count x num_partitions, or
  /// more when the collectives' replica groups or source-target pairs name more devices).
  int64_t devices = 1;
  std::vector<ComputationInfo> computations;  // module order
  int64_t instruction_count = 0;
  std::vector<std::pair<std::string, int64_t>> opcodes;  // by count descending, then name
  std::vector<ValueInfo> parameters;                     // entry parameters, by number
  std::vector<ValueInfo> outputs;                        // entry root (tuple: one per element)
  CostProperties cost;                                   // FLOP / transcendentals / bytes
  std::vector<std::string> cost_notes;
  std::vector<CollectiveInfo> collectives;
  std::vector<std::pair<std::string, std::string>> shardings;        // instruction -> sharding text
  std::vector<std::pair<std::string, int64_t>> custom_call_targets;  // target -> count, by name
  std::vector<std::string> uninferred_shapes;  // instructions whose shape is taken as written
};

InspectSummary SummarizeModule(const HloModule& module);

/// Keys: module, replica_count, num_partitions, devices, computations, instructions, opcodes
/// (opcode -> count), parameters, outputs, flops, transcendentals, bytes_accessed, cost_notes,
/// collectives, shardings, custom_call_targets, uninferred_shapes.
Json InspectToJson(const InspectSummary& summary);
/// A human-readable report of the same content.
std::string InspectToText(const InspectSummary& summary);

}  // namespace tpusim::hlo
