// HloModule: the unit tpusim reads — computations plus the module header (xla/hlo/ir/hlo_module.h).
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "hlo/computation.h"

namespace tpusim::hlo {

class HloModule {
 public:
  explicit HloModule(std::string name) : name_(std::move(name)) {}
  HloModule(const HloModule&) = delete;
  HloModule& operator=(const HloModule&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  /// Takes ownership and sets the computation's parent. Returns the raw pointer.
  HloComputation* AddComputation(std::unique_ptr<HloComputation> computation);
  /// Computations in text order (callees usually, but not necessarily, before callers).
  const std::vector<std::unique_ptr<HloComputation>>& computations() const { return computations_; }
  /// The computation named `name` (without `%`), or nullptr.
  HloComputation* FindComputation(std::string_view name) const;
  /// The ENTRY computation (the last one if none was marked).
  HloComputation* entry_computation() const { return entry_; }
  void set_entry_computation(HloComputation* c) { entry_ = c; }
  /// Removes `c`, which must not be the entry and which no instruction may call.
  void RemoveComputation(const HloComputation* c);

  /// Computations in post order: every callee before its callers, entry last; each once.
  std::vector<HloComputation*> MakeComputationPostOrder() const;

  // ---- Header attributes (`HloModule name, key=value, ...`) ----
  /// replica_count=N (1 if absent).
  int64_t replica_count() const { return replica_count_; }
  void set_replica_count(int64_t n) { replica_count_ = n; }
  /// num_partitions=N (1 if absent).
  int64_t num_partitions() const { return num_partitions_; }
  void set_num_partitions(int64_t n) { num_partitions_ = n; }
  bool is_scheduled() const { return is_scheduled_; }
  void set_is_scheduled(bool v) { is_scheduled_ = v; }
  /// input_output_alias={...} verbatim ("" if absent).
  const std::string& input_output_alias() const { return input_output_alias_; }
  void set_input_output_alias(std::string s) { input_output_alias_ = std::move(s); }
  /// entry_computation_layout={...} verbatim ("" if absent).
  const std::string& entry_computation_layout() const { return entry_computation_layout_; }
  void set_entry_computation_layout(std::string s) { entry_computation_layout_ = std::move(s); }
  /// Other header attributes, in written order, name -> value text verbatim.
  const std::vector<std::pair<std::string, std::string>>& other_attributes() const {
    return other_attributes_;
  }
  std::vector<std::pair<std::string, std::string>>& mutable_other_attributes() {
    return other_attributes_;
  }

  /// The file the module was read from ("<string>" for text), for diagnostics.
  const std::string& source_name() const { return source_name_; }
  void set_source_name(std::string s) { source_name_ = std::move(s); }

  /// Total instruction count over all computations.
  int64_t instruction_count() const;

  /// HLO text of the whole module (see printer.h).
  std::string ToString() const;

 private:
  std::string name_;
  std::vector<std::unique_ptr<HloComputation>> computations_;
  HloComputation* entry_ = nullptr;
  int64_t replica_count_ = 1;
  int64_t num_partitions_ = 1;
  bool is_scheduled_ = false;
  std::string input_output_alias_;
  std::string entry_computation_layout_;
  std::vector<std::pair<std::string, std::string>> other_attributes_;
  std::string source_name_;
};

/// Devices the module runs on: replica_count x num_partitions, raised to cover every device id a
/// collective's replica_groups or source_target_pairs names (a JAX pmap dump leaves replica_count
/// at 1 and names its devices only there).
int64_t InferDeviceCount(const HloModule& module);

/// The partitions a JAX module runs on when its text does not say: a module lowered by jax.jit on a
/// Mesh declares the mesh in Shardy form (`frontend_attributes={xla.sdy.meshes={mesh =
/// #sdy.mesh<["x"=2, "y"=4]>}}`) and shards values (`sharding={devices=[2,4]<=[8]}`), and JAX
/// compiles it with num_partitions = the mesh's device count, which the HLO text leaves out. Returns
/// that count (the largest declared mesh's, saturating at kMaxDevices + 1) for a module with no
/// replica_count and num_partitions, a mesh of more than one device and at least one tiled
/// sharding; 1 otherwise.
int64_t ShardyMeshPartitions(const HloModule& module);

/// A mesh a JAX module declares in Shardy form: its axis names and device count (the product of
/// the axis sizes, saturating at kMaxDevices + 1).
struct ShardyMesh {
  std::set<std::string> axes;
  int64_t devices = 1;
};
/// The module's largest declared mesh (JAX also declares an `empty_mesh`); no axes and 1 device
/// without one.
ShardyMesh LargestShardyMesh(const HloModule& module);

}  // namespace tpusim::hlo
