// `tpusim sweep MODEL [--config C] [--set K=V] --grid K=V1,V2 [--grid ...] [--jobs N] --out S.csv
// [--work-dir DIR] [--plan-only | --collect] [-- RUN OPTIONS]`: runs every point of the grid as an
// independent `tpusim run` (GNU parallel, driver/sweep.h) and writes one CSV row per point.
// Exit 0 every point ran, 1 some point failed (its row has no results; DIR/point_N.err says why),
// 2 bad input (a grid value the config rejects is reported before anything runs).
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "common/file_util.h"
#include "driver/logging.h"
#include "driver/provenance.h"
#include "driver/sweep.h"
#include "tools/tpusim/cli_util.h"
#include "tools/tpusim/commands.h"

namespace tpusim::cli {
namespace {

namespace fs = std::filesystem;

struct SweepArgs {
  std::string model;
  ConfigOptions config;
  std::vector<std::string> grid;
  int jobs = 0;  // 0: GNU parallel's default (one per CPU thread)
  std::string out, work_dir;
  bool plan_only = false, collect = false;
  std::vector<std::string> run_args;
};

std::string PointName(const fs::path& dir, size_t i, const char* ext) {
  return driver::SweepPointPath(dir.string(), i, ext);
}

std::string FirstLine(const std::string& path) {
  auto text = ReadFile(path);
  if (!text.ok()) return "";
  std::string s = *text;
  const size_t nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

// The jobs file (driver::SweepJobsText), running this binary.
std::string JobsText(const SweepArgs& a, const fs::path& dir,
                     const std::vector<std::vector<std::string>>& points) {
  std::error_code ec;
  const std::string self = fs::read_symlink("/proc/self/exe", ec).string();
  driver::SweepJob job;
  job.tpusim = self.empty() ? "tpusim" : self;
  job.model = a.model;
  job.config = a.config.config;
  job.overrides = a.config.overrides;
  job.run_args = a.run_args;
  job.dir = dir.string();
  return driver::SweepJobsText(job, points);
}

void RunWithParallel(const SweepArgs& a, const std::string& jobs_file, size_t points) {
  if (std::system("command -v parallel >/dev/null 2>&1") != 0) {
    Fail(InvalidArgument(
        "tpusim sweep runs its points with GNU parallel, which is not installed (Debian: apt-get "
        "install parallel). Or run the lines of " +
        jobs_file + " with any engine (scripts/sweep_slurm.sh) and then add --collect"));
  }
  std::string cmd = "parallel --will-cite --halt never";
  if (a.jobs > 0) cmd += " --jobs " + std::to_string(a.jobs);
  cmd += " < " + driver::ShellQuote({jobs_file});
  spdlog::info("running {} points: {}", points, cmd);
  if (driver::ChattyOutput()) {
    std::cerr << fmt::format("tpusim: sweep: {} points with GNU parallel ({})\n", points,
                             a.jobs > 0 ? fmt::format("{} at a time", a.jobs) : "one per CPU");
  }
  // parallel's exit code counts failed points; each point's own exit code is in its .rc file.
  (void)std::system(cmd.c_str());
}

void RunSweep(const SweepArgs& a) {
  std::vector<driver::GridAxis> axes;
  for (const std::string& g : a.grid) axes.push_back(OrFail(driver::ParseGridAxis(g)));
  if (axes.empty()) Fail(InvalidArgument("tpusim sweep: give at least one --grid KEY=V1,V2,..."));
  const std::vector<std::vector<std::string>> points = driver::GridPoints(axes);
  // Every point's config must load before anything runs: a bad grid value is a usage error.
  OrFail(driver::CheckSweepPoints(a.config.config, a.config.overrides, points));
  const fs::path dir = a.work_dir.empty() ? fs::path(a.out).replace_extension(".points")
                                          : fs::path(a.work_dir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) Fail(InvalidArgument(dir.string() + ": cannot create: " + ec.message()));
  const std::string jobs_file = (dir / "jobs.txt").string();
  if (!a.collect) {
    for (size_t i = 0; i < points.size(); ++i) {
      for (const char* ext : {"json", "err", "rc"}) fs::remove(PointName(dir, i, ext), ec);
    }
    OrFail(WriteFileAtomic(jobs_file, JobsText(a, dir, points)));
    if (a.plan_only) {
      std::cout << jobs_file << ": " << points.size() << " points, one command a line\n";
      return;
    }
    RunWithParallel(a, jobs_file, points.size());
  }
  std::string csv = driver::SweepCsvHeader(axes);
  int failed = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    std::string rc = FirstLine(PointName(dir, i, "rc"));
    const std::string report = PointName(dir, i, "json");
    csv += OrFail(driver::SweepCsvRow(static_cast<int>(i + 1), points[i], rc, report));
    if (!fs::exists(report, ec)) {
      ++failed;
      std::string why = FirstLine(PointName(dir, i, "err"));
      spdlog::error("sweep point {} ({}) failed{}{}", i + 1, driver::ShellQuote(points[i]),
                    rc.empty() ? "" : " with exit code " + rc, why.empty() ? "" : ": " + why);
    }
  }
  OrFail(WriteFileAtomic(a.out, csv));
  if (driver::ChattyOutput()) {
    std::cout << fmt::format("{}: {} points ({} failed); reports in {}\n", a.out, points.size(),
                             failed, dir.string());
  }
  if (failed > 0) throw CLI::RuntimeError(1);
}

}  // namespace

void RegisterSweepCommand(CLI::App& app) {
  auto a = std::make_shared<SweepArgs>();
  CLI::App* cmd = app.add_subcommand(
      "sweep", "run a grid of config overrides as independent runs (GNU parallel), one CSV row each");
  cmd->add_option("model", a->model, "HLO text file")->required();
  a->config.AddTo(cmd);
  cmd->add_option("--grid", a->grid,
                  "KEY=V1,V2,...: a config key and its values; repeat for more axes (the grid is "
                  "their product)")
      ->required();
  cmd->add_option("-j,--jobs", a->jobs, "points run at once (default: one per CPU thread)")
      ->check(IntegerOf<int>(0));
  cmd->add_option("-o,--out", a->out, "the sweep CSV, one row per point")->required();
  cmd->add_option("--work-dir", a->work_dir,
                  "folder of the jobs file and each point's report (default: OUT without .csv, "
                  "plus .points)");
  cmd->add_flag("--plan-only", a->plan_only,
                "write WORK_DIR/jobs.txt (one command a line) and stop: run it with Slurm or "
                "parallel --sshlogin (scripts/sweep_*.sh), then --collect");
  cmd->add_flag("--collect", a->collect, "write the CSV from the reports already in WORK_DIR");
  cmd->add_option("run_args", a->run_args, "after --: options for every `tpusim run`");
  cmd->callback([a] { RunSweep(*a); });
}

}  // namespace tpusim::cli
