#include "config/config_loader.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "common/file_util.h"
#include "config/schema.h"

namespace tpusim::config {
namespace {

namespace fs = std::filesystem;

// A leaf of the YAML tree: a scalar, or a flow sequence of scalars (system.shape).
struct Leaf {
  bool is_list = false;
  std::string scalar;
  std::vector<std::string> items;
  std::string origin;  // "configs/x.yaml" or "--set"
};
using FlatConfig = std::map<std::string, Leaf>;

std::string Quote(const std::string& s) { return "\"" + s + "\""; }

std::string fmt_double(double v) { return fmt::format("{}", v); }

Status KeyError(const std::string& origin, const std::string& path, const std::string& what) {
  return InvalidArgument(origin + ": " + path + ": " + what);
}

Status Flatten(const YAML::Node& node, const std::string& prefix, const std::string& origin,
               FlatConfig& out) {
  if (node.IsMap()) {
    for (const auto& kv : node) {
      if (!kv.first.IsScalar()) return KeyError(origin, prefix, "keys must be plain names");
      std::string key = kv.first.as<std::string>();
      std::string path = prefix.empty() ? key : prefix + "." + key;
      TPUSIM_RETURN_IF_ERROR(Flatten(kv.second, path, origin, out));
    }
    return OkStatus();
  }
  Leaf leaf;
  leaf.origin = origin;
  if (node.IsSequence()) {
    leaf.is_list = true;
    for (const auto& item : node) {
      if (!item.IsScalar()) return KeyError(origin, prefix, "expected a list of scalars");
      leaf.items.push_back(item.as<std::string>());
    }
  } else if (node.IsScalar()) {
    leaf.scalar = node.as<std::string>();
  } else if (node.IsNull()) {
    return KeyError(origin, prefix, "expected a value, got nothing");
  }
  out[prefix] = std::move(leaf);
  return OkStatus();
}

StatusOr<YAML::Node> ParseYaml(const std::string& text, const std::string& filename) {
  try {
    YAML::Node node = YAML::Load(text);
    if (!node.IsMap()) {
      return InvalidArgument(filename + ": expected a mapping of config keys at the top level");
    }
    return node;
  } catch (const YAML::Exception& e) {
    return InvalidArgument(filename + ":" + std::to_string(e.mark.line + 1) + ":" +
                           std::to_string(e.mark.column + 1) + ": error: " + e.msg);
  }
}

// Reads `text` (from `filename`), recursively merging its base chain below it.
Status LoadFlat(const std::string& text, const std::string& filename, int depth,
                std::set<std::string>& seen, FlatConfig& out) {
  if (depth > 8) return InvalidArgument(filename + ": base: chain deeper than 8 configs");
  TPUSIM_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(text, filename));
  if (root["base"]) {
    const YAML::Node base = root["base"];
    if (!base.IsScalar()) return KeyError(filename, "base", "expected a config name or path");
    std::string base_name = base.as<std::string>();
    fs::path candidate = fs::path(filename).parent_path() / base_name;
    std::string base_path;
    // The error_code overloads: a name too long for the file system (found by fuzz_config) must
    // read as "not there", not throw.
    std::error_code exists_ec;
    if (fs::exists(candidate, exists_ec)) {
      base_path = candidate.string();
    } else if (fs::exists(candidate.string() + ".yaml", exists_ec)) {
      base_path = candidate.string() + ".yaml";
    } else {
      base_path = ResolveConfigPath(base_name);
    }
    std::error_code ec;
    std::string canonical = fs::weakly_canonical(base_path, ec).string();
    if (seen.count(canonical)) return KeyError(filename, "base", "cycle through " + base_name);
    seen.insert(canonical);
    auto base_text = ReadFile(base_path);
    if (!base_text.ok()) return base_text.status().WithPrefix(filename + ": base");
    TPUSIM_RETURN_IF_ERROR(LoadFlat(*base_text, base_path, depth + 1, seen, out));
    root.remove("base");
  }
  FlatConfig mine;
  TPUSIM_RETURN_IF_ERROR(Flatten(root, "", filename, mine));
  for (auto& [k, v] : mine) out[k] = std::move(v);
  return OkStatus();
}

Status ApplyOverride(const std::string& spec, FlatConfig& flat) {
  size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0) {
    return InvalidArgument("--set " + spec + ": expected key.path=value");
  }
  std::string path = spec.substr(0, eq);
  std::string value = spec.substr(eq + 1);
  YAML::Node node;
  try {
    node = YAML::Load(value);
  } catch (const YAML::Exception& e) {
    return KeyError("--set", path, "cannot parse value " + Quote(value) + ": " + e.msg);
  }
  if (node.IsMap()) return KeyError("--set", path, "expected a scalar or a list, got a mapping");
  FlatConfig one;
  TPUSIM_RETURN_IF_ERROR(Flatten(node, path, "--set", one));
  for (auto& [k, v] : one) flat[k] = std::move(v);
  return OkStatus();
}

bool ParseInt(const std::string& s, int64_t& out) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || end != s.c_str() + s.size()) {
    // Accept integral values written in float notation (e.g. 16e9 bytes) when exact.
    char* dend = nullptr;
    double d = std::strtod(s.c_str(), &dend);
    if (dend != s.c_str() + s.size() || !std::isfinite(d) || d != std::floor(d) ||
        std::fabs(d) > 9.0e18) {
      return false;
    }
    out = static_cast<int64_t>(d);
    return true;
  }
  out = v;
  return true;
}

bool ParseDouble(const std::string& s, double& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(d)) return false;
  out = d;
  return true;
}

Status Assign(const FieldSpec& f, const Leaf& leaf, ChipConfig& c) {
  const std::string& origin = leaf.origin;
  if (leaf.is_list != (f.type == FieldType::kIntList)) {
    return KeyError(
        origin, f.path,
        std::string("expected ") +
            (leaf.is_list ? "a single value, got a list" : "a list, got " + Quote(leaf.scalar)));
  }
  switch (f.type) {
    case FieldType::kInt: {
      int64_t v;
      if (!ParseInt(leaf.scalar, v)) {
        return KeyError(origin, f.path, "expected an integer, got " + Quote(leaf.scalar));
      }
      f.int_field(c) = v;
      return OkStatus();
    }
    case FieldType::kDouble: {
      double v;
      if (!ParseDouble(leaf.scalar, v)) {
        return KeyError(origin, f.path, "expected a number, got " + Quote(leaf.scalar));
      }
      f.double_field(c) = v;
      return OkStatus();
    }
    case FieldType::kBool: {
      if (leaf.scalar == "true") {
        f.bool_field(c) = true;
      } else if (leaf.scalar == "false") {
        f.bool_field(c) = false;
      } else {
        return KeyError(origin, f.path, "expected true or false, got " + Quote(leaf.scalar));
      }
      return OkStatus();
    }
    case FieldType::kString:
      if (leaf.scalar.empty()) return KeyError(origin, f.path, "expected a non-empty string");
      f.string_field(c) = leaf.scalar;
      return OkStatus();
    case FieldType::kTopology: {
      const std::map<std::string, Topology> names = {{"single", Topology::kSingle},
                                                     {"ring", Topology::kRing},
                                                     {"torus2d", Topology::kTorus2D},
                                                     {"torus3d", Topology::kTorus3D}};
      auto it = names.find(leaf.scalar);
      if (it == names.end()) {
        return KeyError(
            origin, f.path,
            "expected one of single, ring, torus2d, torus3d, got " + Quote(leaf.scalar));
      }
      f.topology_field(c) = it->second;
      return OkStatus();
    }
    case FieldType::kIntList: {
      std::vector<int64_t> v;
      for (const std::string& item : leaf.items) {
        int64_t x;
        if (!ParseInt(item, x)) {
          return KeyError(origin, f.path, "expected a list of integers, got " + Quote(item));
        }
        v.push_back(x);
      }
      f.int_list_field(c) = std::move(v);
      return OkStatus();
    }
  }
  return Internal("unhandled field type");
}

std::string SourceDir() {
#ifdef TPUSIM_SOURCE_DIR
  return TPUSIM_SOURCE_DIR;
#else
  return ".";
#endif
}

}  // namespace

std::string ResolveConfigPath(const std::string& name_or_path) {
  std::error_code ec;
  if (fs::exists(name_or_path, ec) && !fs::is_directory(name_or_path, ec)) return name_or_path;
  std::string file = name_or_path;
  if (fs::path(file).extension() != ".yaml") file += ".yaml";
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("TPUSIM_CONFIG_DIR")) dirs.push_back(env);
  dirs.push_back("configs");
  dirs.push_back(SourceDir() + "/configs");
  for (const std::string& d : dirs) {
    fs::path p = fs::path(d) / file;
    if (fs::exists(p, ec)) return p.string();
  }
  return name_or_path;  // let ReadFile report it missing, under the name the user gave
}

StatusOr<ChipConfig> LoadChipConfigFromString(const std::string& yaml, const std::string& filename,
                                              const std::vector<std::string>& overrides) {
  FlatConfig flat;
  std::set<std::string> seen;
  TPUSIM_RETURN_IF_ERROR(LoadFlat(yaml, filename, 0, seen, flat));
  for (const std::string& o : overrides) TPUSIM_RETURN_IF_ERROR(ApplyOverride(o, flat));

  const auto& schema = ConfigSchema();
  std::map<std::string, const FieldSpec*> by_path;
  for (const FieldSpec& f : schema) by_path[f.path] = &f;
  for (const auto& [path, leaf] : flat) {
    if (!by_path.count(path)) {
      return KeyError(leaf.origin, path, "unknown key (see `tpusim config schema`)");
    }
  }
  ChipConfig c;
  c.source_path = filename;
  for (const FieldSpec& f : schema) {
    auto it = flat.find(f.path);
    if (it != flat.end()) {
      TPUSIM_RETURN_IF_ERROR(Assign(f, it->second, c));
      continue;
    }
    if (f.required()) return KeyError(filename, f.path, "missing required key");
    YAML::Node def = YAML::Load(f.default_value);
    FlatConfig d;
    TPUSIM_RETURN_IF_ERROR(Flatten(def, f.path, "default", d));
    TPUSIM_RETURN_IF_ERROR(Assign(f, d.at(f.path), c));
  }
  TPUSIM_RETURN_IF_ERROR(ValidateChipConfig(c, filename));
  return c;
}

StatusOr<ChipConfig> LoadChipConfig(const std::string& name_or_path,
                                    const std::vector<std::string>& overrides) {
  std::string path = ResolveConfigPath(name_or_path);
  TPUSIM_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return LoadChipConfigFromString(text, path, overrides);
}

Status ValidateChipConfig(const ChipConfig& c, const std::string& file) {
  auto positive = [&](const char* path, int64_t v, int64_t max) -> Status {
    if (v <= 0 || v > max) {
      return KeyError(file, path,
                      "expected a positive integer at most " + std::to_string(max) + ", got " +
                          std::to_string(v));
    }
    return OkStatus();
  };
  auto non_negative = [&](const char* path, int64_t v, int64_t max) -> Status {
    if (v < 0 || v > max) {
      return KeyError(
          file, path,
          "expected an integer from 0 to " + std::to_string(max) + ", got " + std::to_string(v));
    }
    return OkStatus();
  };
  auto positive_d = [&](const char* path, double v, double max) -> Status {
    if (!(v > 0) || v > max) {
      return KeyError(
          file, path,
          "expected a positive number at most " + fmt_double(max) + ", got " + fmt_double(v));
    }
    return OkStatus();
  };
  constexpr int64_t kTiB = int64_t{1} << 40;
  TPUSIM_RETURN_IF_ERROR(positive("chip.tensorcores", c.tensorcores, 64));
  TPUSIM_RETURN_IF_ERROR(positive_d("chip.clock_hz", c.clock_hz, 1e11));
  TPUSIM_RETURN_IF_ERROR(positive("chip.hbm.capacity_bytes", c.hbm.capacity_bytes, 64 * kTiB));
  TPUSIM_RETURN_IF_ERROR(
      positive_d("chip.hbm.bandwidth_bytes_per_s", c.hbm.bandwidth_bytes_per_s, 1e15));
  TPUSIM_RETURN_IF_ERROR(non_negative("chip.hbm.latency_cycles", c.hbm.latency_cycles, 1000000));
  TPUSIM_RETURN_IF_ERROR(
      positive_d("chip.host.bandwidth_bytes_per_s", c.host_bandwidth_bytes_per_s, 1e15));
  TPUSIM_RETURN_IF_ERROR(positive("core.mxu.count", c.core.mxu.count, 64));
  TPUSIM_RETURN_IF_ERROR(positive("core.mxu.rows", c.core.mxu.rows, 4096));
  TPUSIM_RETURN_IF_ERROR(positive("core.mxu.cols", c.core.mxu.cols, 4096));
  TPUSIM_RETURN_IF_ERROR(non_negative("core.mxu.int8_rate", c.core.mxu.int8_rate, 16));
  if (!c.core.mxu.bf16 && c.core.mxu.int8_rate == 0) {
    return KeyError(file, "core.mxu.int8_rate",
                    "must be positive when core.mxu.bf16 is false (the MXU needs some input type)");
  }
  if (c.core.mxu.weight_buffers != 1 && c.core.mxu.weight_buffers != 2) {
    return KeyError(file, "core.mxu.weight_buffers",
                    "expected 1 or 2, got " + std::to_string(c.core.mxu.weight_buffers));
  }
  TPUSIM_RETURN_IF_ERROR(
      positive("core.mxu.weight_load_cycles_per_row", c.core.mxu.weight_load_cycles_per_row, 1024));
  TPUSIM_RETURN_IF_ERROR(
      non_negative("core.mxu.pop_latency_cycles", c.core.mxu.pop_latency_cycles, 100000));
  TPUSIM_RETURN_IF_ERROR(
      positive("core.mxu.accumulator_rows", c.core.mxu.accumulator_rows, int64_t{1} << 24));
  TPUSIM_RETURN_IF_ERROR(positive("core.vpu.lanes", c.core.vpu.lanes, 4096));
  TPUSIM_RETURN_IF_ERROR(positive("core.vpu.sublanes", c.core.vpu.sublanes, 1024));
  TPUSIM_RETURN_IF_ERROR(
      positive("core.vpu.alu_latency_cycles", c.core.vpu.alu_latency_cycles, 10000));
  TPUSIM_RETURN_IF_ERROR(positive("core.vpu.transcendental_latency_cycles",
                                  c.core.vpu.transcendental_latency_cycles, 10000));
  TPUSIM_RETURN_IF_ERROR(
      positive("core.vpu.divide_latency_cycles", c.core.vpu.divide_latency_cycles, 10000));
  TPUSIM_RETURN_IF_ERROR(
      positive("core.vpu.transpose_latency_cycles", c.core.vpu.transpose_latency_cycles, 10000));
  TPUSIM_RETURN_IF_ERROR(positive("core.vpu.ops_per_cycle", c.core.vpu.ops_per_cycle, 64));
  TPUSIM_RETURN_IF_ERROR(positive("core.vmem.capacity_bytes", c.core.vmem_bytes, 64 * kTiB));
  TPUSIM_RETURN_IF_ERROR(
      positive("core.vmem.bytes_per_cycle", c.core.vmem_bytes_per_cycle, int64_t{1} << 30));
  TPUSIM_RETURN_IF_ERROR(non_negative("core.smem.capacity_bytes", c.core.smem_bytes, kTiB));
  TPUSIM_RETURN_IF_ERROR(positive("core.dma.engines", c.core.dma_engines, 1024));
  TPUSIM_RETURN_IF_ERROR(positive("core.dma.issue_cycles", c.core.dma_issue_cycles, 100000));
  TPUSIM_RETURN_IF_ERROR(positive("system.chips", c.system.chips, 65536));

  const SystemConfig& s = c.system;
  if (s.chips == 1) {
    if (s.topology != Topology::kSingle && s.topology != Topology::kRing) {
      return KeyError(
          file, "system.topology",
          std::string("a single chip has no ") + TopologyName(s.topology) + "; use single");
    }
  } else {
    if (s.topology == Topology::kSingle) {
      return KeyError(file, "system.topology",
                      "system.chips is " + std::to_string(s.chips) +
                          ", so the chips need a topology: ring, torus2d or torus3d");
    }
    size_t want_dims = s.topology == Topology::kRing ? 1 : s.topology == Topology::kTorus2D ? 2 : 3;
    if (s.topology != Topology::kRing || !s.shape.empty()) {
      if (s.shape.size() != want_dims) {
        return KeyError(file, "system.shape",
                        std::string("expected ") + std::to_string(want_dims) + " dimensions for " +
                            TopologyName(s.topology) + ", got " + std::to_string(s.shape.size()));
      }
      int64_t product = 1;
      for (int64_t d : s.shape) {
        if (d <= 0) return KeyError(file, "system.shape", "dimensions must be positive");
        product *= d;
      }
      if (product != s.chips) {
        return KeyError(file, "system.shape",
                        "product of the dimensions is " + std::to_string(product) +
                            " but system.chips is " + std::to_string(s.chips));
      }
    }
    TPUSIM_RETURN_IF_ERROR(positive("system.ici.links_per_chip", s.ici_links_per_chip, 64));
    TPUSIM_RETURN_IF_ERROR(positive_d("system.ici.link_bandwidth_bytes_per_s",
                                      s.ici_link_bandwidth_bytes_per_s, 1e15));
  }
  TPUSIM_RETURN_IF_ERROR(
      non_negative("system.ici.hop_latency_cycles", s.ici_hop_latency_cycles, 100000000));
  if (s.ici_link_bandwidth_bytes_per_s < 0) {
    return KeyError(file, "system.ici.link_bandwidth_bytes_per_s", "must not be negative");
  }
  return OkStatus();
}

}  // namespace tpusim::config
