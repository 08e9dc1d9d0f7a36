// fuzz_standalone TARGET SECONDS SEED_FILE... — the structure-aware fuzz targets without libFuzzer
// (issue 21; this machine has no clang). TARGET: pipeline (MutateHlo over the seeds, 1 to 4
// mutations stacked) or outputs (random scripts for FuzzOutputPaths). Runs until SECONDS of wall
// time have passed; prints executions, distinct outcomes (status code + the message's first 40
// characters: a rough measure of the behaviours reached, not code coverage); each Internal status
// with a new message is a finding, its input written to fuzz-finding-<n>; exit 1 if any. The input
// being run is kept in fuzz-current (in the working folder: give concurrent runs their own), so a
// crash leaves its input behind. FUZZ_SEED (default 12345) seeds the mutations: give each run of a
// campaign its own seed, or it replays the inputs of the last. The pipeline's logging is quiet
// (errors stay), as with `tpusim -q`.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/file_util.h"
#include "driver/logging.h"
#include "tests/fuzz/fuzz_entry_points.h"
#include "tests/fuzz/fuzz_pipeline.h"

namespace {

// Executions finished so far; a watchdog thread ends the run when it stops moving for
// kHangSeconds of the process's CPU time (libFuzzer's -timeout; CPU time, so that a loaded machine
// does not turn a slow execution into a false hang) or kStuckSeconds of wall time (a hang that
// blocks rather than spins): the input in fuzz-current is then a hang.
std::atomic<long> g_done{0};
constexpr double kHangSeconds = 10;
constexpr double kStuckSeconds = 300;

double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The input about to run, kept on disk: after a crash (a signal) or a hang it is the finding.
void Keep(const std::string& input) {
  std::ofstream("fuzz-current", std::ios::binary | std::ios::trunc) << input;
}

void StartHangWatchdog() {
  std::thread([] {
    long last = -1;
    double cpu_at_last = ProcessCpuSeconds();
    auto wall_at_last = std::chrono::steady_clock::now();
    while (true) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      const long now = g_done.load();
      if (now != last) {
        last = now;
        cpu_at_last = ProcessCpuSeconds();
        wall_at_last = std::chrono::steady_clock::now();
        continue;
      }
      const double cpu = ProcessCpuSeconds() - cpu_at_last;
      const double wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_at_last).count();
      if (cpu > kHangSeconds || wall > kStuckSeconds) {
        std::printf("hang: one execution ran more than %.0f s of CPU time or %.0f s of wall time "
                    "(input in fuzz-current)\n",
                    kHangSeconds, kStuckSeconds);
        std::fflush(stdout);
        std::_Exit(1);
      }
    }
  }).detach();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tpusim;
  if (argc < 3) {
    std::fprintf(stderr, "usage: fuzz_standalone pipeline|outputs SECONDS [SEED_FILE...]\n");
    return 2;
  }
  const std::string target = argv[1];
  const double seconds = std::atof(argv[2]);
  std::vector<std::string> seeds;
  for (int i = 3; i < argc; ++i) {
    StatusOr<std::string> text = ReadFile(argv[i]);
    if (text.ok()) seeds.push_back(*text);
  }
  if (target == "pipeline" && seeds.empty()) {
    std::fprintf(stderr, "fuzz_standalone: no seeds\n");
    return 2;
  }
  const char* seed_text = std::getenv("FUZZ_SEED");
  const unsigned seed = seed_text ? static_cast<unsigned>(std::strtoul(seed_text, nullptr, 10)) : 12345u;
  std::printf("%s: seed %u\n", target.c_str(), seed);
  std::fflush(stdout);
  driver::LogOptions quiet;
  quiet.quiet = true;
  driver::SetUpLogging(quiet);
  std::mt19937 rng(seed);
  StartHangWatchdog();
  const auto start = std::chrono::steady_clock::now();
  long executions = 0;
  std::set<std::string> outcomes;
  std::set<std::string> findings;  // by the first 60 characters of the message
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() <
         seconds) {
    std::string input;
    Status status;
    if (target == "pipeline") {
      input = seeds[rng() % seeds.size()];
      const int rounds = 1 + static_cast<int>(rng() % 4);
      for (int r = 0; r < rounds; ++r) input = fuzz::MutateHlo(input, rng());
      Keep(input);
      status = fuzz::FuzzPipeline(input);
    } else {
      input.resize(rng() % 32);
      for (char& c : input) c = static_cast<char>(rng());
      Keep(input);
      status = fuzz::FuzzOutputPaths(input);
    }
    ++executions;
    g_done.store(executions);
    outcomes.insert(std::string(StatusCodeName(status.code())) + ": " +
                    status.message().substr(0, 40));
    if (status.code() == StatusCode::kInternal &&
        findings.insert(status.message().substr(0, 60)).second) {
      const std::string name = "fuzz-finding-" + std::to_string(executions);
      std::ofstream(name, std::ios::binary) << input;
      std::printf("finding after %ld executions (%s): %s\n", executions, name.c_str(),
                  status.message().c_str());
      std::fflush(stdout);
    }
  }
  std::printf("%s: %ld executions in %.0f s, %zu distinct outcomes, %zu distinct finding(s)\n",
              target.c_str(), executions, seconds, outcomes.size(), findings.size());
  return findings.empty() ? 0 : 1;
}
