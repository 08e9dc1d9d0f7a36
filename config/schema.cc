#include "config/schema.h"

#include <fmt/format.h>

namespace tpusim::config {
namespace {

constexpr double kTiB = 1099511627776.0;  // 2^40 bytes

FieldSpec Base(std::string path, FieldType type, std::string unit, std::string def,
               std::string desc) {
  FieldSpec s;
  s.path = std::move(path);
  s.type = type;
  s.unit = std::move(unit);
  s.default_value = std::move(def);
  s.description = std::move(desc);
  return s;
}

FieldSpec Int(std::string path, std::string unit, std::string def, std::string desc,
              std::function<int64_t&(ChipConfig&)> f) {
  FieldSpec s =
      Base(std::move(path), FieldType::kInt, std::move(unit), std::move(def), std::move(desc));
  s.int_field = std::move(f);
  return s;
}
FieldSpec Dbl(std::string path, std::string unit, std::string def, std::string desc,
              std::function<double&(ChipConfig&)> f) {
  FieldSpec s =
      Base(std::move(path), FieldType::kDouble, std::move(unit), std::move(def), std::move(desc));
  s.double_field = std::move(f);
  return s;
}
FieldSpec Bool(std::string path, std::string def, std::string desc,
               std::function<bool&(ChipConfig&)> f) {
  FieldSpec s = Base(std::move(path), FieldType::kBool, "", std::move(def), std::move(desc));
  s.bool_field = std::move(f);
  return s;
}

std::vector<FieldSpec> MakeSchema() {
  std::vector<FieldSpec> v;
  {
    FieldSpec s = Base("name", FieldType::kString, "", "", "chip or slice name, e.g. tpu-v4-8");
    s.string_field = [](ChipConfig& c) -> std::string& { return c.name; };
    v.push_back(std::move(s));
  }
  v.push_back(
      Int("chip.tensorcores", "count", "", "TensorCores per chip", [](ChipConfig& c) -> int64_t& {
        return c.tensorcores;
      }).In(1, 64));
  v.push_back(Dbl("chip.clock_hz", "Hz", "",
                  "core clock; every cycle count in tpusim is of this clock",
                  [](ChipConfig& c) -> double& { return c.clock_hz; })
                  .In(1e6, 1e11));
  v.push_back(Int("chip.hbm.capacity_bytes", "bytes", "",
                  "off-chip memory (HBM; DDR3 on TPU v1) per chip",
                  [](ChipConfig& c) -> int64_t& { return c.hbm.capacity_bytes; })
                  .In(1, 64.0 * kTiB));
  v.push_back(Dbl("chip.hbm.bandwidth_bytes_per_s", "bytes/s", "",
                  "off-chip memory bandwidth per chip, shared by all concurrent transfers",
                  [](ChipConfig& c) -> double& { return c.hbm.bandwidth_bytes_per_s; })
                  .In(1e6, 1e15));
  v.push_back(Int("chip.hbm.latency_cycles", "cycles", "150",
                  "cycles from a transfer's issue to its first byte (unpublished: assumption)",
                  [](ChipConfig& c) -> int64_t& { return c.hbm.latency_cycles; })
                  .In(0, 1e6));
  v.push_back(Int("chip.hbm.tile_min_bytes", "bytes", "0",
                  "smallest tile of an array stored tiled in HBM (hlo/tiled_layout.h: minor "
                  "dimension on core.vpu.lanes, second-minor on up to core.vpu.sublanes rows); "
                  "transfers and capacity count whole tiles. 0 = arrays stored untiled",
                  [](ChipConfig& c) -> int64_t& { return c.hbm.tile_min_bytes; })
                  .In(0, 1 << 20));
  v.push_back(Bool("chip.hbm.shared_by_cores", "true",
                   "true: the chip's cores share one HBM (v4+ megacore); false: each core owns "
                   "capacity/n and bandwidth/n (v2, v3)",
                   [](ChipConfig& c) -> bool& { return c.hbm.shared_by_cores; }));
  v.push_back(Dbl("chip.host.bandwidth_bytes_per_s", "bytes/s", "16e9",
                  "host link (PCIe) bandwidth per chip, one direction, for infeed/outfeed",
                  [](ChipConfig& c) -> double& { return c.host_bandwidth_bytes_per_s; })
                  .In(1e6, 1e15));
  v.push_back(Int("host.chips_per_host", "count", "4",
                  "chips one host machine drives over PCIe (TPU v2-8, v3-8 and v4 hosts: 4)",
                  [](ChipConfig& c) -> int64_t& { return c.host.chips_per_host; })
                  .In(1, 1 << 20));
  v.push_back(Int("host.cpu_cores", "count", "96",
                  "host CPU cores running the training loop's replica processes (assumption: a "
                  "Cloud TPU VM host of 96 vCPUs)",
                  [](ChipConfig& c) -> int64_t& { return c.host.cpu_cores; })
                  .In(1, 1 << 20));
  v.push_back(Dbl("host.step_overhead_seconds", "s", "1e-3",
                  "host CPU time per training step per replica process: the Python step, graph "
                  "trace and launch, mark_step (assumption, not measured: sweep it)",
                  [](ChipConfig& c) -> double& { return c.host.step_overhead_seconds; })
                  .In(0, 3600));
  v.push_back(Dbl("host.input_seconds_per_example", "s", "1e-5",
                  "host CPU time of the input pipeline per example (collate, convert; "
                  "assumption, not measured: sweep it)",
                  [](ChipConfig& c) -> double& { return c.host.input_seconds_per_example; })
                  .In(0, 3600));
  v.push_back(Dbl("host.transfer_latency_seconds", "s", "1e-5",
                  "fixed cost of one host<->HBM transfer: DMA set-up, doorbell, completion "
                  "(assumption: PCIe round trips are ~1 us, driver work ~10 us)",
                  [](ChipConfig& c) -> double& { return c.host.transfer_latency_seconds; })
                  .In(0, 3600));
  v.push_back(Int("core.mxu.count", "count", "", "MXUs (systolic arrays) per TensorCore",
                  [](ChipConfig& c) -> int64_t& { return c.core.mxu.count; })
                  .In(1, 64));
  v.push_back(Int("core.mxu.rows", "PEs", "",
                  "R: PE rows = contracting (K) extent of a stationary weight tile",
                  [](ChipConfig& c) -> int64_t& { return c.core.mxu.rows; })
                  .In(1, 4096));
  v.push_back(Int("core.mxu.cols", "PEs", "", "C: PE columns = output (N) extent of a weight tile",
                  [](ChipConfig& c) -> int64_t& { return c.core.mxu.cols; })
                  .In(1, 4096));
  v.push_back(Bool("core.mxu.bf16", "true",
                   "the MXU multiplies bf16 and accumulates f32 (false: integer only, TPU v1)",
                   [](ChipConfig& c) -> bool& { return c.core.mxu.bf16; }));
  v.push_back(Int("core.mxu.int8_rate", "MAC/PE/cycle", "0",
                  "int8 multiply-accumulates per PE per cycle (0: no int8 path)",
                  [](ChipConfig& c) -> int64_t& { return c.core.mxu.int8_rate; })
                  .In(0, 16));
  v.push_back(Int("core.mxu.weight_buffers", "tiles", "2",
                  "weight tiles held per MXU: 2 = active + shadow (double buffered), 1 = none",
                  [](ChipConfig& c) -> int64_t& { return c.core.mxu.weight_buffers; })
                  .In(1, 2));
  v.push_back(Int("core.mxu.weight_load_cycles_per_row", "cycles", "1",
                  "cycles to shift one weight row into the array (TPU v1: 256 rows in 256 cycles)",
                  [](ChipConfig& c) -> int64_t& { return c.core.mxu.weight_load_cycles_per_row; })
                  .In(1, 1024));
  v.push_back(Int("core.mxu.pop_latency_cycles", "cycles", "8",
                  "extra cycles from accumulators through the VPU to VMEM on a pop (assumption)",
                  [](ChipConfig& c) -> int64_t& { return c.core.mxu.pop_latency_cycles; })
                  .In(0, 1e5));
  v.push_back(Int("core.mxu.accumulator_rows", "rows", "",
                  "accumulator memory per MXU, in rows of `cols` 32-bit accumulators",
                  [](ChipConfig& c) -> int64_t& { return c.core.mxu.accumulator_rows; })
                  .In(1, 16777216));
  v.push_back(Int("core.vpu.lanes", "lanes", "128", "vector lanes", [](ChipConfig& c) -> int64_t& {
                return c.core.vpu.lanes;
              }).In(1, 4096));
  v.push_back(Int("core.vpu.sublanes", "sublanes", "8", "vector sublanes (8 x 128 = one vreg tile)",
                  [](ChipConfig& c) -> int64_t& { return c.core.vpu.sublanes; })
                  .In(1, 1024));
  v.push_back(Int("core.vpu.alu_latency_cycles", "cycles", "2",
                  "latency of a simple vector op (add, mul, max, compare, select)",
                  [](ChipConfig& c) -> int64_t& { return c.core.vpu.alu_latency_cycles; })
                  .In(1, 1e4));
  v.push_back(
      Int("core.vpu.transcendental_latency_cycles", "cycles", "8",
          "latency of exp, log, tanh, logistic (unpublished: assumption)",
          [](ChipConfig& c) -> int64_t& { return c.core.vpu.transcendental_latency_cycles; })
          .In(1, 1e4));
  v.push_back(Int("core.vpu.divide_latency_cycles", "cycles", "8",
                  "latency of divide, sqrt, rsqrt (unpublished: assumption)",
                  [](ChipConfig& c) -> int64_t& { return c.core.vpu.divide_latency_cycles; })
                  .In(1, 1e4));
  v.push_back(Int("core.vpu.transpose_latency_cycles", "cycles", "8",
                  "latency of one 8x128 tile through the transpose unit (XLU) (assumption)",
                  [](ChipConfig& c) -> int64_t& { return c.core.vpu.transpose_latency_cycles; })
                  .In(1, 1e4));
  v.push_back(Int("core.vpu.ops_per_cycle", "vreg ops/cycle", "1",
                  "lanes x sublanes element operations issued per cycle",
                  [](ChipConfig& c) -> int64_t& { return c.core.vpu.ops_per_cycle; })
                  .In(1, 64));
  v.push_back(
      Int("core.vpu.ops_per_64bit_element", "ops", "2",
          "32-bit VPU element ops per s64/u64 element of an arithmetic, compare, convert or "
          "reduce op: XLA's TPU backend emulates 64-bit integers with pairs of 32-bit values "
          "(assumption: 2, a lower bound; multiply and divide take more)",
          [](ChipConfig& c) -> int64_t& { return c.core.vpu.ops_per_64bit_element; })
          .In(1, 1024));
  v.push_back(Int("core.vmem.capacity_bytes", "bytes", "",
                  "on-chip vector memory (VMEM; the Unified Buffer on TPU v1)",
                  [](ChipConfig& c) -> int64_t& { return c.core.vmem_bytes; })
                  .In(1, 64.0 * kTiB));
  v.push_back(Int("core.vmem.bytes_per_cycle", "bytes/cycle", "",
                  "VMEM port bandwidth available to the MXUs, VPU and DMA together",
                  [](ChipConfig& c) -> int64_t& { return c.core.vmem_bytes_per_cycle; })
                  .In(1, 1073741824));
  v.push_back(Int("core.smem.capacity_bytes", "bytes", "0", "scalar memory (SMEM)",
                  [](ChipConfig& c) -> int64_t& { return c.core.smem_bytes; })
                  .In(0, kTiB));
  v.push_back(Int("core.dma.engines", "count", "4",
                  "DMA transfers a core keeps in flight at once (assumption)",
                  [](ChipConfig& c) -> int64_t& { return c.core.dma_engines; })
                  .In(1, 1024));
  v.push_back(Int("core.dma.issue_cycles", "cycles", "1",
                  "cycles to issue one DMA descriptor (one DMA request per cycle per core)",
                  [](ChipConfig& c) -> int64_t& { return c.core.dma_issue_cycles; })
                  .In(1, 1e5));
  v.push_back(Int("core.unit_queue_depth", "commands", "16",
                  "commands the in-order sequencer may queue at each unit (every MXU, the VPU, the "
                  "XLU, every DMA engine, the ICI unit) before issue stalls: how far the "
                  "instruction stream runs ahead of a busy unit (assumption, not a published "
                  "figure)",
                  [](ChipConfig& c) -> int64_t& { return c.core.unit_queue_depth; })
                  .In(1, 4096));
  v.push_back(
      Int("system.chips", "count", "1", "chips in the slice", [](ChipConfig& c) -> int64_t& {
        return c.system.chips;
      }).In(1, 65536));
  {
    FieldSpec s = Base("system.topology", FieldType::kTopology, "", "single",
                       "how chips are joined by ICI: single | ring | torus2d | torus3d");
    s.topology_field = [](ChipConfig& c) -> Topology& { return c.system.topology; };
    v.push_back(std::move(s));
  }
  {
    FieldSpec s = Base("system.shape", FieldType::kIntList, "chips", "[]",
                       "chips along each torus dimension; the product equals system.chips");
    s.int_list_field = [](ChipConfig& c) -> std::vector<int64_t>& { return c.system.shape; };
    v.push_back(std::move(s).In(1, 65536));
  }
  v.push_back(Int("system.ici.links_per_chip", "count", "0", "ICI ports per chip",
                  [](ChipConfig& c) -> int64_t& { return c.system.ici_links_per_chip; })
                  .In(0, 64));
  v.push_back(Dbl("system.ici.link_bandwidth_bytes_per_s", "bytes/s", "0",
                  "bandwidth of one ICI link in one direction",
                  [](ChipConfig& c) -> double& { return c.system.ici_link_bandwidth_bytes_per_s; })
                  .In(0, 1e15));
  v.push_back(Int("system.ici.hop_latency_cycles", "cycles", "0",
                  "cycles for a transfer's first byte to cross one ICI hop",
                  [](ChipConfig& c) -> int64_t& { return c.system.ici_hop_latency_cycles; })
                  .In(0, 1e8));
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
