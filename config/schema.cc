#include "config/schema.h"

#include <fmt/format.h>

#include <optional>
#include <variant>

#include "common/check.h"

namespace tpusim::config {
namespace {

constexpr double kTiB = 1099511627776.0;  // 2^40 bytes

// Where a key's value lands in ChipConfig; the reference's type is the key's type.
using FieldRef =
    std::variant<std::string& (*)(ChipConfig&), int64_t& (*)(ChipConfig&),
                 double& (*)(ChipConfig&), bool& (*)(ChipConfig&), Topology& (*)(ChipConfig&),
                 std::vector<int64_t>& (*)(ChipConfig&)>;

// The meaningful range of a number, inclusive (FieldSpec::In).
struct Range {
  double min, max;
};
constexpr std::optional<Range> kNoRange;

// One key of the schema: path, unit, default as YAML text ("" = required), description, range
// (kNoRange for strings, booleans and topologies) and field.
struct Row {
  const char* path;
  const char* unit;
  const char* default_value;
  const char* description;
  std::optional<Range> range;
  FieldRef field;
};

// The accessor of ChipConfig member `m` as a function pointer.
#define TPUSIM_FIELD(m) +[](ChipConfig& c) -> decltype(auto) { return (c.m); }

// Every key, in documentation order.
const Row kRows[] = {
    {"name", "", "",
     "chip or slice name, e.g. tpu-v4-8",
     kNoRange, TPUSIM_FIELD(name)},
    {"chip.tensorcores", "count", "",
     "TensorCores per chip",
     Range{1, 64}, TPUSIM_FIELD(tensorcores)},
    {"chip.clock_hz", "Hz", "",
     "core clock; every cycle count in tpusim is of this clock",
     Range{1e6, 1e11}, TPUSIM_FIELD(clock_hz)},
    {"chip.hbm.capacity_bytes", "bytes", "",
     "off-chip memory (HBM; DDR3 on TPU v1) per chip",
     Range{1, 64.0 * kTiB}, TPUSIM_FIELD(hbm.capacity_bytes)},
    {"chip.hbm.bandwidth_bytes_per_s", "bytes/s", "",
     "off-chip memory bandwidth per chip, shared by all concurrent transfers",
     Range{1e6, 1e15}, TPUSIM_FIELD(hbm.bandwidth_bytes_per_s)},
    {"chip.hbm.latency_cycles", "cycles", "150",
     "cycles from a transfer's issue to its first byte (unpublished: assumption)",
     Range{0, 1e6}, TPUSIM_FIELD(hbm.latency_cycles)},
    {"chip.hbm.tile_min_bytes", "bytes", "0",
     "smallest tile of an array stored tiled in HBM (hlo/tiled_layout.h: minor dimension on "
     "core.vpu.lanes, second-minor on up to core.vpu.sublanes rows); transfers and capacity "
     "count whole tiles. 0 = arrays stored untiled",
     Range{0, 1 << 20}, TPUSIM_FIELD(hbm.tile_min_bytes)},
    {"chip.hbm.shared_by_cores", "", "true",
     "true: the chip's cores share one HBM (v4+ megacore); false: each core owns capacity/n "
     "and bandwidth/n (v2, v3)",
     kNoRange, TPUSIM_FIELD(hbm.shared_by_cores)},
    {"chip.host.bandwidth_bytes_per_s", "bytes/s", "16e9",
     "host link (PCIe) bandwidth per chip, one direction, for infeed/outfeed",
     Range{1e6, 1e15}, TPUSIM_FIELD(host_bandwidth_bytes_per_s)},
    {"host.chips_per_host", "count", "4",
     "chips one host machine drives over PCIe (TPU v2-8, v3-8 and v4 hosts: 4)",
     Range{1, 1 << 20}, TPUSIM_FIELD(host.chips_per_host)},
    {"host.cpu_cores", "count", "96",
     "host CPU cores running the training loop's replica processes (assumption: a Cloud TPU "
     "VM host of 96 vCPUs)",
     Range{1, 1 << 20}, TPUSIM_FIELD(host.cpu_cores)},
    {"host.step_overhead_seconds", "s", "1e-3",
     "host CPU time per training step per replica process: the Python step, graph trace and "
     "launch, mark_step (assumption, not measured: sweep it)",
     Range{0, 3600}, TPUSIM_FIELD(host.step_overhead_seconds)},
    {"host.input_seconds_per_example", "s", "1e-5",
     "host CPU time of the input pipeline per example (collate, convert; assumption, not "
     "measured: sweep it)",
     Range{0, 3600}, TPUSIM_FIELD(host.input_seconds_per_example)},
    {"host.transfer_latency_seconds", "s", "1e-5",
     "fixed cost of one host<->HBM transfer: DMA set-up, doorbell, completion (assumption: "
     "PCIe round trips are ~1 us, driver work ~10 us)",
     Range{0, 3600}, TPUSIM_FIELD(host.transfer_latency_seconds)},
    {"core.mxu.count", "count", "",
     "MXUs (systolic arrays) per TensorCore",
     Range{1, 64}, TPUSIM_FIELD(core.mxu.count)},
    {"core.mxu.rows", "PEs", "",
     "R: PE rows = contracting (K) extent of a stationary weight tile",
     Range{1, 4096}, TPUSIM_FIELD(core.mxu.rows)},
    {"core.mxu.cols", "PEs", "",
     "C: PE columns = output (N) extent of a weight tile",
     Range{1, 4096}, TPUSIM_FIELD(core.mxu.cols)},
    {"core.mxu.bf16", "", "true",
     "the MXU multiplies bf16 and accumulates f32 (false: integer only, TPU v1)",
     kNoRange, TPUSIM_FIELD(core.mxu.bf16)},
    {"core.mxu.int8_rate", "MAC/PE/cycle", "0",
     "int8 multiply-accumulates per PE per cycle (0: no int8 path)",
     Range{0, 16}, TPUSIM_FIELD(core.mxu.int8_rate)},
    {"core.mxu.weight_buffers", "tiles", "2",
     "weight tiles held per MXU: 2 = active + shadow (double buffered), 1 = none",
     Range{1, 2}, TPUSIM_FIELD(core.mxu.weight_buffers)},
    {"core.mxu.weight_load_cycles_per_row", "cycles", "1",
     "cycles to shift one weight row into the array (TPU v1: 256 rows in 256 cycles)",
     Range{1, 1024}, TPUSIM_FIELD(core.mxu.weight_load_cycles_per_row)},
    {"core.mxu.pop_latency_cycles", "cycles", "8",
     "extra cycles from accumulators through the VPU to VMEM on a pop (assumption)",
     Range{0, 1e5}, TPUSIM_FIELD(core.mxu.pop_latency_cycles)},
    {"core.mxu.accumulator_rows", "rows", "",
     "accumulator memory per MXU, in rows of `cols` 32-bit accumulators (TPU v1: 4096 rows of "
     "256, 4 MiB [P S1 §2]); at most 2^24, what the ISA's 24-bit `acc` field addresses; a "
     "simulation with values stores only the rows its program writes",
     Range{1, 16777216}, TPUSIM_FIELD(core.mxu.accumulator_rows)},
    {"core.vpu.lanes", "lanes", "128",
     "vector lanes",
     Range{1, 4096}, TPUSIM_FIELD(core.vpu.lanes)},
    {"core.vpu.sublanes", "sublanes", "8",
     "vector sublanes (8 x 128 = one vreg tile)",
     Range{1, 1024}, TPUSIM_FIELD(core.vpu.sublanes)},
    {"core.vpu.alu_latency_cycles", "cycles", "2",
     "latency of a simple vector op (add, mul, max, compare, select)",
     Range{1, 1e4}, TPUSIM_FIELD(core.vpu.alu_latency_cycles)},
    {"core.vpu.transcendental_latency_cycles", "cycles", "8",
     "latency of exp, log, tanh, logistic (unpublished: assumption)",
     Range{1, 1e4}, TPUSIM_FIELD(core.vpu.transcendental_latency_cycles)},
    {"core.vpu.divide_latency_cycles", "cycles", "8",
     "latency of divide, sqrt, rsqrt (unpublished: assumption)",
     Range{1, 1e4}, TPUSIM_FIELD(core.vpu.divide_latency_cycles)},
    {"core.vpu.transpose_latency_cycles", "cycles", "8",
     "latency of one 8x128 tile through the transpose unit (XLU) (assumption)",
     Range{1, 1e4}, TPUSIM_FIELD(core.vpu.transpose_latency_cycles)},
    {"core.vpu.ops_per_cycle", "vreg ops/cycle", "1",
     "lanes x sublanes element operations issued per cycle",
     Range{1, 64}, TPUSIM_FIELD(core.vpu.ops_per_cycle)},
    {"core.vpu.ops_per_64bit_element", "ops", "2",
     "32-bit VPU element ops per s64/u64 element of an arithmetic, compare, convert or "
     "reduce op: XLA's TPU backend emulates 64-bit integers with pairs of 32-bit values "
     "(assumption: 2, a lower bound; multiply and divide take more)",
     Range{1, 1024}, TPUSIM_FIELD(core.vpu.ops_per_64bit_element)},
    {"core.vpu.ops_per_f64_element", "ops", "20",
     "32-bit VPU element ops per f64 element of an arithmetic, compare, convert or reduce op: "
     "XLA's TPU backend emulates f64 with pairs of f32 (double-word arithmetic; assumption: 20, "
     "the flop count of an accurate double-word addition, Joldes, Muller and Popescu, ACM TOMS "
     "44(2), 2017, Algorithm 6; a double-word product with FMA takes 10)",
     Range{1, 1024}, TPUSIM_FIELD(core.vpu.ops_per_f64_element)},
    {"core.vmem.capacity_bytes", "bytes", "",
     "on-chip vector memory (VMEM; the Unified Buffer on TPU v1)",
     Range{1, 64.0 * kTiB}, TPUSIM_FIELD(core.vmem_bytes)},
    {"core.vmem.bytes_per_cycle", "bytes/cycle", "",
     "VMEM port bandwidth available to the MXUs, VPU and DMA together",
     Range{1, 1073741824}, TPUSIM_FIELD(core.vmem_bytes_per_cycle)},
    {"core.vmem.scoped_limit_bytes", "bytes", "0",
     "VMEM one kernel may use for its tiles (XLA TPU's scoped VMEM limit); the rest of "
     "core.vmem.capacity_bytes keeps buffers between kernels (memory-space assignment, "
     "compiler/lower/memory_space_assignment.h). 0, or at least the capacity: all of it, and "
     "every buffer between kernels goes through HBM",
     Range{0, 64.0 * kTiB}, TPUSIM_FIELD(core.vmem_scoped_limit_bytes)},
    {"core.smem.capacity_bytes", "bytes", "0",
     "scalar memory (SMEM)",
     Range{0, kTiB}, TPUSIM_FIELD(core.smem_bytes)},
    {"core.dma.engines", "count", "4",
     "DMA transfers a core keeps in flight at once (assumption)",
     Range{1, 1024}, TPUSIM_FIELD(core.dma_engines)},
    {"core.dma.issue_cycles", "cycles", "1",
     "cycles to issue one DMA descriptor (one DMA request per cycle per core)",
     Range{1, 1e5}, TPUSIM_FIELD(core.dma_issue_cycles)},
    {"core.unit_queue_depth", "commands", "16",
     "commands the in-order sequencer may queue at each unit (every MXU, the VPU, the XLU, "
     "every DMA engine, the ICI unit) before issue stalls: how far the instruction stream "
     "runs ahead of a busy unit (assumption, not a published figure)",
     Range{1, 4096}, TPUSIM_FIELD(core.unit_queue_depth)},
    {"system.chips", "count", "1",
     "chips in the slice",
     Range{1, 65536}, TPUSIM_FIELD(system.chips)},
    {"system.topology", "", "single",
     "how chips are joined by ICI: single | ring | torus2d | torus3d",
     kNoRange, TPUSIM_FIELD(system.topology)},
    {"system.shape", "chips", "[]",
     "chips along each torus dimension; the product equals system.chips",
     Range{1, 65536}, TPUSIM_FIELD(system.shape)},
    {"system.ici.links_per_chip", "count", "0",
     "ICI ports per chip",
     Range{0, 64}, TPUSIM_FIELD(system.ici_links_per_chip)},
    {"system.ici.link_bandwidth_bytes_per_s", "bytes/s", "0",
     "bandwidth of one ICI link in one direction",
     Range{0, 1e15}, TPUSIM_FIELD(system.ici_link_bandwidth_bytes_per_s)},
    {"system.ici.hop_latency_cycles", "cycles", "0",
     "cycles for a transfer's first byte to cross one ICI hop",
     Range{0, 1e8}, TPUSIM_FIELD(system.ici_hop_latency_cycles)},
    {"system.ici.dimension_rings", "", "true",
     "an all-reduce over every core of the slice runs as rings along one torus dimension at a "
     "time (the cores of a chip ride the first dimension's ring; reduce-scatter along each "
     "dimension in turn, then all-gather back), 2 x sum(n_d - 1) steps, as TPU pods sum "
     "gradients [Kumar et al., "
     "'Scale MLPerf-0.6 models on Google TPU-v3 Pods', 2019, 2-D gradient summation; Jouppi et "
     "al., ISCA 2023, 3D torus]; false: one ring through every core, 2 (n - 1) steps",
     kNoRange, TPUSIM_FIELD(system.ici_dimension_rings)},

};

#undef TPUSIM_FIELD

FieldSpec MakeSpec(const Row& row) {
  FieldSpec s;
  s.path = row.path;
  s.unit = row.unit;
  s.default_value = row.default_value;
  s.description = row.description;
  struct SetField {
    FieldSpec& s;
    void operator()(std::string& (*f)(ChipConfig&)) {
      s.type = FieldType::kString;
      s.string_field = f;
    }
    void operator()(int64_t& (*f)(ChipConfig&)) {
      s.type = FieldType::kInt;
      s.int_field = f;
    }
    void operator()(double& (*f)(ChipConfig&)) {
      s.type = FieldType::kDouble;
      s.double_field = f;
    }
    void operator()(bool& (*f)(ChipConfig&)) {
      s.type = FieldType::kBool;
      s.bool_field = f;
    }
    void operator()(Topology& (*f)(ChipConfig&)) {
      s.type = FieldType::kTopology;
      s.topology_field = f;
    }
    void operator()(std::vector<int64_t>& (*f)(ChipConfig&)) {
      s.type = FieldType::kIntList;
      s.int_list_field = f;
    }
  };
  std::visit(SetField{s}, row.field);
  if (row.range.has_value()) s = std::move(s).In(row.range->min, row.range->max);
  return s;
}

std::vector<FieldSpec> MakeSchema() {
  std::vector<FieldSpec> v;
  for (const Row& row : kRows) v.push_back(MakeSpec(row));
  return v;
}

}  // namespace

std::string FieldSpec::RangeError(double v, const std::string& shown) const {
  if (!has_range || (v >= min && v <= max)) return "";
  const bool integral = type == FieldType::kInt || type == FieldType::kIntList;
  std::string what = integral ? (min == 1 ? "a positive integer" : "an integer")
                              : (min > 0 ? "a positive number" : "a number");
  std::string range = min == 1 && integral ? fmt::format("at most {:.15g}", max)
                                           : fmt::format("from {:.15g} to {:.15g}", min, max);
  return fmt::format("expected {} {}, got {}", what, range, shown);
}

const std::vector<FieldSpec>& ConfigSchema() {
  static const std::vector<FieldSpec> kSchema = MakeSchema();
  return kSchema;
}

const FieldSpec* FindConfigField(std::string_view path) {
  for (const FieldSpec& f : ConfigSchema()) {
    if (f.path == path) return &f;
  }
  return nullptr;
}

namespace {

Status CheckRange(std::string_view path, double value, const std::string& shown) {
  const FieldSpec* f = FindConfigField(path);
  TPUSIM_CHECK(f != nullptr && f->has_range) << "CheckConfigRange: no range for key " << path;
  const std::string error = f->RangeError(value, shown);
  if (error.empty()) return OkStatus();
  return InvalidArgument(fmt::format("{}: {}", path, error));
}

}  // namespace

Status CheckConfigRange(std::string_view path, int64_t value) {
  return CheckRange(path, static_cast<double>(value), fmt::format("{}", value));
}

Status CheckConfigRange(std::string_view path, double value) {
  return CheckRange(path, value, fmt::format("{}", value));
}

const char* FieldTypeName(FieldType t) {
  switch (t) {
    case FieldType::kInt:
      return "integer";
    case FieldType::kDouble:
      return "number";
    case FieldType::kBool:
      return "boolean";
    case FieldType::kString:
      return "string";
    case FieldType::kTopology:
      return "single|ring|torus2d|torus3d";
    case FieldType::kIntList:
      return "list of integers";
  }
  return "?";
}

const char* TopologyName(Topology t) {
  switch (t) {
    case Topology::kSingle:
      return "single";
    case Topology::kRing:
      return "ring";
    case Topology::kTorus2D:
      return "torus2d";
    case Topology::kTorus3D:
      return "torus3d";
  }
  return "?";
}

Json EffectiveConfigJson(const ChipConfig& config) {
  ChipConfig c = config;  // the field accessors take a mutable config
  Json out = Json::MakeObject();
  for (const FieldSpec& f : ConfigSchema()) {
    Json* node = &out;
    std::string_view path = f.path;
    for (size_t dot = path.find('.'); dot != std::string_view::npos; dot = path.find('.')) {
      node = &(*node)[path.substr(0, dot)];
      path.remove_prefix(dot + 1);
    }
    Json& leaf = (*node)[path];
    switch (f.type) {
      case FieldType::kInt:
        leaf = f.int_field(c);
        break;
      case FieldType::kDouble:
        leaf = f.double_field(c);
        break;
      case FieldType::kBool:
        leaf = f.bool_field(c);
        break;
      case FieldType::kString:
        leaf = f.string_field(c);
        break;
      case FieldType::kTopology:
        leaf = TopologyName(f.topology_field(c));
        break;
      case FieldType::kIntList: {
        Json::Array items;
        for (int64_t v : f.int_list_field(c)) items.push_back(Json(v));
        leaf = Json(std::move(items));
        break;
      }
    }
  }
  return out;
}

std::string SchemaMarkdown() {
  std::string out =
      "| key | type | unit | range | default | description |\n|---|---|---|---|---|---|\n";
  for (const FieldSpec& f : ConfigSchema()) {
    const std::string range = f.has_range ? fmt::format("[{:.15g}, {:.15g}]", f.min, f.max) : "";
    out +=
        fmt::format("| `{}` | {} | {} | {} | {} | {} |\n", f.path, FieldTypeName(f.type), f.unit,
                    range, f.required() ? "required" : "`" + f.default_value + "`", f.description);
  }
  return out;
}

}  // namespace tpusim::config
