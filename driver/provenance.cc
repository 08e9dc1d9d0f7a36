#include "driver/provenance.h"

#include "common/build_info.h"
#include "config/schema.h"

namespace tpusim::driver {
namespace {

std::vector<std::string>& CommandLineStorage() {
  static std::vector<std::string> args;
  return args;
}

}  // namespace

void SetCommandLine(int argc, const char* const* argv) {
  std::vector<std::string>& args = CommandLineStorage();
  args.assign(argv, argv + argc);
}

const std::vector<std::string>& CommandLine() { return CommandLineStorage(); }

std::string ShellQuote(const std::vector<std::string>& args) {
  std::string out;
  for (const std::string& a : args) {
    if (!out.empty()) out += ' ';
    const bool plain =
        !a.empty() && a.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                          "0123456789_-+=.,:/@%") == std::string::npos;
    if (plain) {
      out += a;
      continue;
    }
    out += '\'';
    for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

Json ProvenanceJson(const config::ChipConfig& config) {
  Json p = Json::MakeObject();
  p["tpusim_version"] = TpusimVersion();
  p["git_commit"] = TpusimGitCommit();
  p["command_line"] = ShellQuote(CommandLine());
  Json::Array argv;
  for (const std::string& a : CommandLine()) argv.push_back(Json(a));
  p["argv"] = Json(std::move(argv));
  p["config_file"] = config.source_path;
  Json::Array overrides;
  for (const std::string& o : config.overrides) {
    const size_t eq = o.find('=');
    Json entry = Json::MakeObject();
    entry["key"] = o.substr(0, eq);
    entry["value"] = eq == std::string::npos ? std::string() : o.substr(eq + 1);
    overrides.push_back(std::move(entry));
  }
  p["overrides"] = Json(std::move(overrides));
  p["effective_config"] = config::EffectiveConfigJson(config);
  return p;
}

Json WithProvenance(const Json& report, const config::ChipConfig& config) {
  Json out = Json::MakeObject();
  const bool versioned = report.Find("schema_version") != nullptr;
  if (!versioned) out["provenance"] = ProvenanceJson(config);
  for (const auto& [key, value] : report.object()) {
    out[key] = value;
    if (key == "schema_version") out["provenance"] = ProvenanceJson(config);
  }
  return out;
}

}  // namespace tpusim::driver
