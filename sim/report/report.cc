#include "sim/report/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "common/file_util.h"
#include "isa/opcode.h"

namespace tpusim::sim {
namespace {

std::string OpcodeFromName(const std::string& name) {
  // XLA names instructions "<opcode>.<N>" ("dot.3", "fusion.12", "get-tuple-element.7").
  std::string s = name;
  if (!s.empty() && s[0] == '%') s.erase(0, 1);
  size_t dot = s.rfind('.');
  if (dot != std::string::npos && dot + 1 < s.size() &&
      std::all_of(s.begin() + static_cast<std::ptrdiff_t>(dot) + 1, s.end(),
                  [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; })) {
    s.resize(dot);
  }
  return s;
}

uint64_t StatSum(const StatRegistry& stats, const std::vector<std::string>& paths,
                 const std::string& name) {
  uint64_t total = 0;
  for (const std::string& p : paths) total += stats.Get(p, name).value_or(0);
  return total;
}

double Div(double a, double b) { return b > 0 ? a / b : 0.0; }

uint64_t TotalMxuFlop(const SimResult& r) {
  uint64_t t = 0;
  for (const CoreResult& c : r.cores) t += c.mxu_flop;
  return t;
}
uint64_t TotalVpuFlop(const SimResult& r) {
  uint64_t t = 0;
  for (const CoreResult& c : r.cores) t += c.vpu_flop;
  return t;
}

}  // namespace

double MxuUtilization(const SimResult& r, uint64_t useful_macs, size_t cores) {
  double capacity = static_cast<double>(r.mxu_rows * r.mxu_cols * r.mxus_per_core) *
                    static_cast<double>(cores) * static_cast<double>(r.cycles.value());
  return Div(static_cast<double>(useful_macs), capacity);
}

double MxuUtilization(const SimResult& r) {
  uint64_t macs = 0;
  for (const CoreResult& c : r.cores) macs += c.useful_macs;
  return MxuUtilization(r, macs, r.cores.size());
}

StallCategory StallCategoryOf(isa::Resource r) {
  switch (r) {
    case isa::Resource::kHbm:
      return StallCategory::kHbmBound;
    case isa::Resource::kHost:
      return StallCategory::kInputDataStall;
    case isa::Resource::kIci:
      return StallCategory::kIciBound;
    case isa::Resource::kVpu:
      return StallCategory::kVpuBound;
    case isa::Resource::kSync:
      return StallCategory::kRawSyncStall;
    case isa::Resource::kMxu:
    case isa::Resource::kScalar:
      break;
  }
  return StallCategory::kNonMatrix;
}

const char* StallCategoryName(StallCategory c) {
  switch (c) {
    case StallCategory::kArrayActive:
      return "array_active";
    case StallCategory::kWeightShift:
      return "weight_shift";
    case StallCategory::kWeightStall:
      return "weight_stall";
    case StallCategory::kHbmBound:
      return "hbm_bound";
    case StallCategory::kInputDataStall:
      return "input_data_stall";
    case StallCategory::kIciBound:
      return "ici_bound";
    case StallCategory::kVpuBound:
      return "vpu_bound";
    case StallCategory::kRawSyncStall:
      return "raw_sync_stall";
    case StallCategory::kNonMatrix:
      return "non_matrix";
  }
  return "?";
}

std::vector<OpSummary> SummarizeOps(const SimResult& result, const isa::Program& program,
                                    const ReportOptions& options) {
  const size_t n = program.hlo_names.size();
  std::vector<OpSummary> ops(n + 1);
  for (size_t t = 0; t < n; ++t) {
    ops[t].name = program.hlo_names[t];
    ops[t].opcode = t < options.hlo_opcodes.size() && !options.hlo_opcodes[t].empty()
                        ? options.hlo_opcodes[t]
                        : OpcodeFromName(program.hlo_names[t]);
    ops[t].compiler_inserted = t < options.compiler_inserted.size() && options.compiler_inserted[t];
  }
  ops[n].name = "(untagged)";
  ops[n].opcode = "";
  for (const CoreResult& core : result.cores) {
    if (core.core >= program.num_cores()) continue;
    for (size_t t = 0; t < core.ops.size() && t <= n; ++t) {
      const OpProfile& p = core.ops[t];
      OpSummary& o = ops[t];
      o.cycles += p.total_cycles();
      o.flops += p.flop;
      o.bytes += p.bytes;
      o.hbm_bytes += p.hbm_bytes;
      o.instructions += p.executions;
    }
  }
  if (ops[n].instructions == 0 && ops[n].cycles == 0) ops.pop_back();
  return ops;
}

Json BuildReportJson(const SimResult& r, const isa::Program& program,
                     const ReportOptions& options) {
  const StatRegistry& stats = *r.stats;
  Json j;
  j["schema_version"] = kReportSchemaVersion;
  j["config"] = r.config_name;
  j["cycles"] = r.cycles.value();
  j["seconds"] = r.seconds();
  j["clock_hz"] = r.clock_hz;
  const uint64_t mxu_flop = TotalMxuFlop(r), vpu_flop = TotalVpuFlop(r);
  j["flops"] = mxu_flop + vpu_flop;
  j["mxu_flops"] = mxu_flop;
  j["vpu_flops"] = vpu_flop;
  j["achieved_flops_per_s"] = Div(static_cast<double>(mxu_flop + vpu_flop), r.seconds());
  j["peak_flops_per_s"] = r.peak_flops_per_s;
  j["fraction_of_peak"] =
      Div(Div(static_cast<double>(mxu_flop + vpu_flop), r.seconds()), r.peak_flops_per_s);
  j["mxu_utilization"] = MxuUtilization(r);
  j["instructions_executed"] = r.instructions_executed;

  const uint64_t hbm_read = StatSum(stats, r.hbm_paths, "bytes_read");
  const uint64_t hbm_written = StatSum(stats, r.hbm_paths, "bytes_written");
  Json& hbm = j["hbm"];
  hbm["bytes_read"] = hbm_read;
  hbm["bytes_written"] = hbm_written;
  hbm["bandwidth_bytes_per_s"] = Div(static_cast<double>(hbm_read + hbm_written), r.seconds());
  hbm["peak_bandwidth_bytes_per_s"] = r.hbm_bytes_per_s;
  hbm["utilization"] =
      Div(Div(static_cast<double>(hbm_read + hbm_written), r.seconds()), r.hbm_bytes_per_s);
  Json& vmem = j["vmem"];
  vmem["bytes_read"] = stats.Sum("chip", "", "vmem_bytes_read");
  vmem["bytes_written"] = stats.Sum("chip", "", "vmem_bytes_written");
  Json& host = j["host"];
  host["bytes"] = StatSum(stats, r.host_paths, "bytes");

  Json& stalls = j["stalls"];
  for (int k = 0; k < kNumStallCategories; ++k) {
    uint64_t total = 0;
    for (const CoreResult& c : r.cores) total += c.stalls[k];
    stalls[StallCategoryName(static_cast<StallCategory>(k))] = total;
  }

  Json cores = Json::MakeArray();
  for (const CoreResult& c : r.cores) {
    Json cj;
    cj["core"] = c.core;
    cj["path"] = c.path;
    cj["cycles"] = c.cycles.value();
    cj["flops"] = c.mxu_flop + c.vpu_flop;
    cj["mxu_flops"] = c.mxu_flop;
    cj["mxu_utilization"] = MxuUtilization(r, c.useful_macs, 1);
    uint64_t executed = 0;
    for (const OpProfile& p : c.ops) executed += p.executions;
    cj["instructions_executed"] = executed;
    Json& cs = cj["stalls"];
    for (int k = 0; k < kNumStallCategories; ++k) {
      cs[StallCategoryName(static_cast<StallCategory>(k))] = c.stalls[k];
    }
    cores.push_back(std::move(cj));
  }
  j["cores"] = std::move(cores);

  Json ops = Json::MakeArray();
  for (const OpSummary& o : SummarizeOps(r, program, options)) {
    Json oj;
    oj["name"] = o.name;
    oj["opcode"] = o.opcode;
    oj["cycles"] = o.cycles;
    oj["flops"] = o.flops;
    oj["bytes"] = o.bytes;
    oj["hbm_bytes"] = o.hbm_bytes;
    oj["instructions"] = o.instructions;
    oj["compiler_inserted"] = o.compiler_inserted;
    ops.push_back(std::move(oj));
  }
  j["ops"] = std::move(ops);

  Json ici = Json::MakeArray();
  for (const std::string& link : r.ici_links) {
    Json lj;
    uint64_t bytes = stats.Get(link, "bytes").value_or(0);
    lj["link"] = link;
    lj["bytes"] = bytes;
    lj["busy_cycles"] = stats.Get(link, "busy_cycles").value_or(0);
    lj["bandwidth_bytes_per_s"] = Div(static_cast<double>(bytes), r.seconds());
    ici.push_back(std::move(lj));
  }
  j["ici"] = std::move(ici);

  // Group paths are unique (StatRegistry::AddGroup), so members are appended without a lookup:
  // Json::operator[] searches linearly, which made this loop quadratic in the cores of a slice.
  Json::Object units;
  units.reserve(stats.groups().size());
  for (const StatGroup& g : stats.groups()) {
    Json::Object gj;
    gj.reserve(g.stats().size());
    for (const StatInfo& s : g.stats()) gj.emplace_back(s.name, Json(s.counter->value()));
    units.emplace_back(g.path(), Json(std::move(gj)));
  }
  j["units"] = Json(std::move(units));
  return j;
}

std::string BuildOpsCsv(const SimResult& r, const isa::Program& program,
                        const ReportOptions& options) {
  std::string out = "name,opcode,cycles,flops,bytes,instructions,compiler_inserted\n";
  auto quote = [](const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  for (const OpSummary& o : SummarizeOps(r, program, options)) {
    out += fmt::format("{},{},{},{},{},{},{}\n", quote(o.name), quote(o.opcode), o.cycles, o.flops,
                       o.bytes, o.instructions, o.compiler_inserted ? "true" : "false");
  }
  return out;
}

std::string BuildInstructionsCsv(const SimResult& r, const isa::Program& program) {
  std::string out = "core,pc,mnemonic,hlo,executions,cycles,unit_cycles,flops,bytes\n";
  for (const CoreResult& c : r.cores) {
    if (c.core >= program.num_cores()) continue;
    const isa::CoreProgram& cp = program.cores[c.core];
    for (size_t pc = 0; pc < c.instructions.size(); ++pc) {
      const InstructionProfile& p = c.instructions[pc];
      if (p.executions == 0) continue;
      int32_t tag = cp.hlo_tag(pc);
      std::string hlo = tag >= 0 && static_cast<size_t>(tag) < program.hlo_names.size()
                            ? program.hlo_names[tag]
                            : "";
      out += fmt::format("{},{},{},{},{},{},{},{},{}\n", c.core, pc,
                         isa::Mnemonic(cp.instructions[pc].opcode), hlo, p.executions, p.cycles,
                         p.unit_cycles, p.flop, p.bytes);
    }
  }
  return out;
}

std::string BuildReportTable(const SimResult& r, const isa::Program& program,
                             const ReportOptions& options) {
  const StatRegistry& stats = *r.stats;
  std::string out;
  const uint64_t flop = TotalMxuFlop(r) + TotalVpuFlop(r);
  out += fmt::format("config            {}\n", r.config_name);
  out += fmt::format("cycles            {}  ({:.6g} s at {:.4g} GHz)\n", r.cycles.value(),
                     r.seconds(), r.clock_hz / 1e9);
  out += fmt::format("FLOP              {}  ({:.4g} TFLOP/s, {:.1f}% of peak {:.4g} TFLOP/s)\n",
                     flop, Div(static_cast<double>(flop), r.seconds()) / 1e12,
                     100 * Div(Div(static_cast<double>(flop), r.seconds()), r.peak_flops_per_s),
                     r.peak_flops_per_s / 1e12);
  out += fmt::format("MXU utilization   {:.1f}%\n", 100 * MxuUtilization(r));
  const uint64_t rd = StatSum(stats, r.hbm_paths, "bytes_read");
  const uint64_t wr = StatSum(stats, r.hbm_paths, "bytes_written");
  out += fmt::format("HBM               {} B read, {} B written, {:.4g} GB/s ({:.1f}% of {:.4g})\n",
                     rd, wr, Div(static_cast<double>(rd + wr), r.seconds()) / 1e9,
                     100 * Div(Div(static_cast<double>(rd + wr), r.seconds()), r.hbm_bytes_per_s),
                     r.hbm_bytes_per_s / 1e9);
  out += "\nwhere the cycles went (summed over cores)\n";
  uint64_t all = 0;
  std::array<uint64_t, kNumStallCategories> totals{};
  for (const CoreResult& c : r.cores) {
    for (int k = 0; k < kNumStallCategories; ++k) {
      totals[k] += c.stalls[k];
      all += c.stalls[k];
    }
  }
  for (int k = 0; k < kNumStallCategories; ++k) {
    out +=
        fmt::format("  {:<18}{:>14}  {:5.1f}%\n", StallCategoryName(static_cast<StallCategory>(k)),
                    totals[k], 100 * Div(static_cast<double>(totals[k]), static_cast<double>(all)));
  }
  out += "\nper core\n";
  for (const CoreResult& c : r.cores) {
    out += fmt::format("  {:<14} {:>14} cycles  MXU {:5.1f}%\n", c.path, c.cycles.value(),
                       100 * MxuUtilization(r, c.useful_macs, 1));
  }
  std::vector<OpSummary> ops = SummarizeOps(r, program, options);
  std::stable_sort(ops.begin(), ops.end(),
                   [](const OpSummary& a, const OpSummary& b) { return a.cycles > b.cycles; });
  out += "\nops by cycles (summed over cores)\n";
  out += fmt::format("  {:<32} {:<18} {:>14} {:>16} {:>14}\n", "name", "opcode", "cycles", "FLOP",
                     "bytes");
  bool any_inserted = false;
  for (size_t i = 0; i < ops.size() && i < 20; ++i) {
    any_inserted |= ops[i].compiler_inserted;
    out += fmt::format("  {:<32} {:<18} {:>14} {:>16} {:>14}\n",
                       ops[i].compiler_inserted ? ops[i].name + " *" : ops[i].name, ops[i].opcode,
                       ops[i].cycles, ops[i].flops, ops[i].bytes);
  }
  if (any_inserted) {
    out +=
        "  * inserted by the compiler (not in the input module: a layout transpose, copy, pad, "
        "collective or combined op)\n";
  }
  if (!r.ici_links.empty()) {
    out += "\nICI links\n";
    for (const std::string& link : r.ici_links) {
      uint64_t bytes = stats.Get(link, "bytes").value_or(0);
      if (bytes == 0) continue;
      out += fmt::format("  {:<20} {:>14} B  {:.4g} GB/s\n", link, bytes,
                         Div(static_cast<double>(bytes), r.seconds()) / 1e9);
    }
  }
  return out;
}

Status WriteReportJson(const std::string& path, const SimResult& result,
                       const isa::Program& program, const ReportOptions& options) {
  return WriteFileAtomic(path, BuildReportJson(result, program, options).Dump(2));
}

Status WriteOpsCsv(const std::string& path, const SimResult& result, const isa::Program& program,
                   const ReportOptions& options) {
  return WriteFileAtomic(path, BuildOpsCsv(result, program, options));
}

}  // namespace tpusim::sim
