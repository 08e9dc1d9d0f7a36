#include "config/config_loader.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include "common/diagnostic.h"
#include "common/file_util.h"
#include "config/schema.h"

namespace tpusim::config {
namespace {

// The largest chip config file read (bytes): the shipped configs are 3 KB, so 1 MiB is 300 times
// more; a bigger file (a 4 GiB sparse file named as a config took 98 s and 8.4 GB before) is
// refused before it is read.
constexpr int64_t kMaxConfigFileBytes = int64_t{1} << 20;

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

Status KeyError(const std::string& origin, const std::string& path, const std::string& what) {
  return InvalidArgument(origin + ": " + path + ": " + what);
}

Status Flatten(const YAML::Node& node, const std::string& prefix, const std::string& origin,
               FlatConfig& out) {
  if (node.IsMap()) {
    std::map<std::string, YAML::Mark> seen;  // YAML forbids a key twice in one mapping
    for (const auto& kv : node) {
      if (!kv.first.IsScalar()) return KeyError(origin, prefix, "keys must be plain names");
      std::string key = kv.first.as<std::string>();
      const YAML::Mark mark = kv.first.Mark();
      auto [first, inserted] = seen.try_emplace(key, mark);
      if (!inserted) {
        return LocatedError(
            origin, "", {mark.line + 1, mark.column + 1},
            fmt::format("duplicate key '{}' (first at line {}); a key may appear once", key,
                        first->second.line + 1));
      }
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
    auto base_text = ReadFile(base_path, kMaxConfigFileBytes);
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
    return KeyError("--set " + spec, path, "cannot parse value " + Quote(value) + ": " + e.msg);
  }
  if (node.IsMap()) {
    return KeyError("--set " + spec, path, "expected a scalar or a list, got a mapping");
  }
  FlatConfig one;
  // Errors about this key, from here to validation, name the flag as the user typed it.
  TPUSIM_RETURN_IF_ERROR(Flatten(node, path, "--set " + spec, one));
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
      const std::string range = f.RangeError(static_cast<double>(v), leaf.scalar);
      if (!range.empty()) return KeyError(origin, f.path, range);
      f.int_field(c) = v;
      return OkStatus();
    }
    case FieldType::kDouble: {
      double v;
      if (!ParseDouble(leaf.scalar, v)) {
        return KeyError(origin, f.path, "expected a number, got " + Quote(leaf.scalar));
      }
      const std::string range = f.RangeError(v, leaf.scalar);
      if (!range.empty()) return KeyError(origin, f.path, range);
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
        const std::string range = f.RangeError(static_cast<double>(x), item);
        if (!range.empty()) return KeyError(origin, f.path, range);
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

// The checks between keys (each key's own range is in the schema and checked as it is read).
// `origin(path)` names where a key's value came from (the YAML file or --set), for the message.
Status ValidateConsistency(const ChipConfig& c,
                           const std::function<std::string(const std::string&)>& origin) {
  auto error = [&](const std::string& path, const std::string& what) {
    return KeyError(origin(path), path, what);
  };
  if (!c.core.mxu.bf16 && c.core.mxu.int8_rate == 0) {
    return error("core.mxu.int8_rate",
                 "must be positive when core.mxu.bf16 is false (the MXU needs some input type)");
  }
  // Every bandwidth becomes bytes per cycle of the clock, rounded to the simulator's resolution;
  // below kMinBytesPerCycle that rounding would change the result by more than 1 %.
  const int64_t hbm_ways = c.hbm.shared_by_cores ? 1 : std::max<int64_t>(1, c.tensorcores);
  std::vector<std::pair<const char*, double>> rates = {
      {"chip.hbm.bandwidth_bytes_per_s",
       c.hbm.bandwidth_bytes_per_s / static_cast<double>(hbm_ways)},
      {"chip.host.bandwidth_bytes_per_s", c.host_bandwidth_bytes_per_s}};
  if (c.system.chips > 1) {
    rates.emplace_back("system.ici.link_bandwidth_bytes_per_s",
                       c.system.ici_link_bandwidth_bytes_per_s);
  }
  for (const auto& [path, bytes_per_s] : rates) {
    const double per_cycle = bytes_per_s / c.clock_hz;
    if (per_cycle < kMinBytesPerCycle) {
      return error(path,
                   fmt::format("{:g} bytes/s{} at chip.clock_hz {:g} is {:.3g} bytes/cycle, "
                               "below the {:.3g} bytes/cycle the simulator resolves to 1 % "
                               "(it keeps rates in 1/65536 byte/cycle)",
                               bytes_per_s, hbm_ways > 1 && path[5] == 'h' ? " per TensorCore" : "",
                               c.clock_hz, per_cycle, kMinBytesPerCycle));
    }
  }
  const SystemConfig& s = c.system;
  // "system.chips is N", saying where N came from when that is not where `path` came from (a
  // --set system.chips=N against a file's topology).
  auto chips_are = [&](const std::string& path) {
    const std::string from = origin("system.chips");
    return "system.chips is " + std::to_string(s.chips) +
           (from != origin(path) ? " (" + from + ")" : std::string());
  };
  if (s.chips == 1) {
    if (s.topology != Topology::kSingle && s.topology != Topology::kRing) {
      return error("system.topology", std::string("a single chip (") +
                                          chips_are("system.topology") + ") has no " +
                                          TopologyName(s.topology) + "; use single");
    }
    if (!s.shape.empty() && !(s.shape.size() == 1 && s.shape[0] == 1)) {
      return error("system.shape",
                   fmt::format("{} dimension(s) given but {}", s.shape.size(),
                               chips_are("system.shape")));
    }
    return OkStatus();
  }
  if (s.topology == Topology::kSingle) {
    return error("system.topology", chips_are("system.topology") +
                                        ", so the chips need a topology: ring, torus2d or torus3d");
  }
  const size_t want_dims = s.topology == Topology::kRing      ? 1
                           : s.topology == Topology::kTorus2D ? 2
                                                              : 3;
  if (s.topology != Topology::kRing || !s.shape.empty()) {
    if (s.shape.size() != want_dims) {
      return error("system.shape", std::string("expected ") + std::to_string(want_dims) +
                                       " dimensions for " + TopologyName(s.topology) + ", got " +
                                       std::to_string(s.shape.size()));
    }
    int64_t product = 1;  // each dimension is in [1, 65536] (schema): at most 2^48, no overflow
    for (int64_t d : s.shape) product *= d;
    if (product != s.chips) {
      return error("system.shape", "product of the dimensions is " + std::to_string(product) +
                                       " but " + chips_are("system.shape"));
    }
  }
  if (s.ici_links_per_chip <= 0) {
    return error("system.ici.links_per_chip",
                 "expected a positive integer: system.chips is " + std::to_string(s.chips));
  }
  if (!(s.ici_link_bandwidth_bytes_per_s > 0)) {
    return error("system.ici.link_bandwidth_bytes_per_s",
                 "expected a positive number: system.chips is " + std::to_string(s.chips));
  }
  return OkStatus();
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
  // An installed binary (`cmake --install`): PREFIX/bin/tpusim finds PREFIX/share/tpusim/configs.
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back((exe.parent_path().parent_path() / "share/tpusim/configs").string());
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
  c.overrides = overrides;
  auto origin = [&](const std::string& path) {
    auto it = flat.find(path);
    return it == flat.end() || it->second.origin == "default" ? filename : it->second.origin;
  };
  TPUSIM_RETURN_IF_ERROR(ValidateConsistency(c, origin));
  return c;
}

StatusOr<ChipConfig> LoadChipConfig(const std::string& name_or_path,
                                    const std::vector<std::string>& overrides) {
  std::string path = ResolveConfigPath(name_or_path);
  TPUSIM_ASSIGN_OR_RETURN(std::string text, ReadFile(path, kMaxConfigFileBytes));
  return LoadChipConfigFromString(text, path, overrides);
}

Status ValidateChipConfig(const ChipConfig& c, const std::string& file) {
  ChipConfig copy = c;  // the schema's accessors take a mutable config
  for (const FieldSpec& f : ConfigSchema()) {
    std::vector<std::pair<double, std::string>> values;  // value, as printed
    if (f.type == FieldType::kInt) {
      values.emplace_back(static_cast<double>(f.int_field(copy)),
                          fmt::format("{}", f.int_field(copy)));
    }
    if (f.type == FieldType::kDouble) {
      values.emplace_back(f.double_field(copy), fmt::format("{}", f.double_field(copy)));
    }
    if (f.type == FieldType::kIntList) {
      for (int64_t v : f.int_list_field(copy)) {
        values.emplace_back(static_cast<double>(v), fmt::format("{}", v));
      }
    }
    for (const auto& [v, shown] : values) {
      const std::string range = f.RangeError(v, shown);
      if (!range.empty()) return KeyError(file, f.path, range);
    }
  }
  return ValidateConsistency(c, [&](const std::string&) { return file; });
}

}  // namespace tpusim::config
