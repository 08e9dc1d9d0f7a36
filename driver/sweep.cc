#include "driver/sweep.h"

#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/file_util.h"
#include "config/config_loader.h"
#include "driver/provenance.h"

namespace tpusim::driver {
namespace {

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// A report value by JSON pointer, as CSV text ("" when absent).
std::string Field(const nlohmann::json& j, const char* pointer) {
  const nlohmann::json::json_pointer p(pointer);
  if (!j.contains(p)) return "";
  const nlohmann::json& v = j.at(p);
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return v.dump();
}

struct Column {
  const char* name;
  const char* pointer;
};
const std::vector<Column>& Columns() {
  static const std::vector<Column> kColumns = {
      {"cycles", "/cycles"},
      {"seconds", "/seconds"},
      {"flops", "/flops"},
      {"achieved_flops_per_s", "/achieved_flops_per_s"},
      {"fraction_of_peak", "/fraction_of_peak"},
      {"mxu_utilization", "/mxu_utilization"},
      {"hbm_bytes", ""},  // read + written, computed below
      {"hbm_bandwidth_bytes_per_s", "/hbm/bandwidth_bytes_per_s"},
      {"hbm_utilization", "/hbm/utilization"},
      {"check_passed", "/check/passed"},
      {"timing_only", "/timing_only"},
      {"git_commit", "/provenance/git_commit"},
  };
  return kColumns;
}

}  // namespace

StatusOr<GridAxis> ParseGridAxis(const std::string& text) {
  const size_t eq = text.find('=');
  GridAxis axis;
  if (eq == std::string::npos || eq == 0) {
    return InvalidArgument("--grid " + text + ": expected KEY=V1,V2,...");
  }
  axis.key = text.substr(0, eq);
  std::string value;
  int depth = 0;
  for (size_t i = eq + 1; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : ',';
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth <= 0) {
      if (value.empty()) return InvalidArgument("--grid " + text + ": empty value");
      axis.values.push_back(value);
      value.clear();
      continue;
    }
    value += c;
  }
  return axis;
}

std::vector<std::vector<std::string>> GridPoints(const std::vector<GridAxis>& axes) {
  std::vector<std::vector<std::string>> points = {{}};
  for (const GridAxis& axis : axes) {
    std::vector<std::vector<std::string>> next;
    for (const auto& p : points) {
      for (const std::string& v : axis.values) {
        next.push_back(p);
        next.back().push_back(axis.key + "=" + v);
      }
    }
    points = std::move(next);
  }
  return points;
}

const std::vector<std::string>& SweepResultColumns() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> v;
    for (const Column& c : Columns()) v.push_back(c.name);
    return v;
  }();
  return kNames;
}

std::string SweepCsvHeader(const std::vector<GridAxis>& axes) {
  std::string out = "point";
  for (const GridAxis& a : axes) {
    out += ',';
    out += CsvField(a.key);
  }
  out += ",exit_code";
  for (const std::string& c : SweepResultColumns()) {
    out += ',';
    out += c;
  }
  out += ",report\n";
  return out;
}

StatusOr<std::string> SweepCsvRow(int point, const std::vector<std::string>& overrides,
                                  const std::string& exit_code, const std::string& report_path) {
  std::string row = std::to_string(point);
  auto cell = [&row](const std::string& text) {
    row += ',';
    row += text;
  };
  for (const std::string& o : overrides) cell(CsvField(o.substr(o.find('=') + 1)));
  cell(exit_code);
  std::error_code ec;
  if (!std::filesystem::exists(report_path, ec)) {
    for (size_t i = 0; i < Columns().size(); ++i) cell("");
    cell(CsvField(report_path));
    row += '\n';
    return row;
  }
  TPUSIM_ASSIGN_OR_RETURN(std::string text, ReadFile(report_path));
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("cycles")) {
    return InvalidArgument(report_path + ": is not a tpusim report");
  }
  for (const Column& c : Columns()) {
    if (std::string(c.name) == "hbm_bytes") {
      const std::string r = Field(j, "/hbm/bytes_read"), w = Field(j, "/hbm/bytes_written");
      cell(r.empty() || w.empty() ? std::string() : std::to_string(std::stoull(r) + std::stoull(w)));
      continue;
    }
    cell(CsvField(Field(j, c.pointer)));
  }
  cell(CsvField(report_path));
  row += '\n';
  return row;
}

std::string SweepPointPath(const std::string& dir, size_t index, const char* ext) {
  return (std::filesystem::path(dir) / fmt::format("point_{:04}.{}", index + 1, ext)).string();
}

std::string SweepJobsText(const SweepJob& job, const std::vector<std::vector<std::string>>& points) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const std::string config =
      fs::exists(job.config, ec) ? fs::absolute(job.config).string() : job.config;
  std::string text;
  for (size_t i = 0; i < points.size(); ++i) {
    std::vector<std::string> cmd = {job.tpusim, "-q",  "--progress", "never", "run",
                                    fs::absolute(job.model).string(), "--config", config};
    for (const std::string& o : job.overrides) cmd.insert(cmd.end(), {"--set", o});
    for (const std::string& o : points[i]) cmd.insert(cmd.end(), {"--set", o});
    cmd.insert(cmd.end(), {"--report", SweepPointPath(job.dir, i, "json")});
    cmd.insert(cmd.end(), job.run_args.begin(), job.run_args.end());
    text += ShellQuote(cmd) + " >/dev/null 2>" + ShellQuote({SweepPointPath(job.dir, i, "err")}) +
            "; echo $? >" + ShellQuote({SweepPointPath(job.dir, i, "rc")}) + "\n";
  }
  return text;
}

Status CheckSweepPoints(const std::string& config, const std::vector<std::string>& overrides,
                        const std::vector<std::vector<std::string>>& points) {
  for (size_t i = 0; i < points.size(); ++i) {
    std::vector<std::string> all = overrides;
    all.insert(all.end(), points[i].begin(), points[i].end());
    auto c = config::LoadChipConfig(config, all);
    if (!c.ok()) return c.status().WithPrefix(fmt::format("--grid, point {}", i + 1));
  }
  return OkStatus();
}

}  // namespace tpusim::driver
