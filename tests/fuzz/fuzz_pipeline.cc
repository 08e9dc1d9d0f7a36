#include "tests/fuzz/fuzz_pipeline.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <regex>
#include <vector>

#include "common/file_util.h"
#include "common/output_set.h"
#include "config/config_loader.h"
#include "driver/run_module.h"
#include "driver/run_report.h"
#include "hlo/module.h"
#include "hlo/parser.h"
#include "hlo/verifier.h"

namespace tpusim::fuzz {

Status FuzzPipeline(std::string_view text) {
  StatusOr<std::unique_ptr<hlo::HloModule>> module = hlo::ParseHloModule(text, "fuzz.hlo");
  if (!module.ok()) return module.status();
  TPUSIM_RETURN_IF_ERROR(hlo::VerifyModule(**module, text));
  if (hlo::InferDeviceCount(**module) > 8) return OkStatus();  // keep each execution short
  static const StatusOr<config::ChipConfig> tiny = config::LoadChipConfig("tiny");
  if (!tiny.ok())
    return Internal("fuzz: cannot load configs/tiny.yaml: " + tiny.status().message());
  driver::RunOptions options;
  options.timing_only = true;
  options.check = false;
  options.max_unrolled_instructions = 1000;
  options.sim.max_cycles = Cycles(1'000'000);
  options.sim.max_seconds = 2;
  StatusOr<driver::RunModuleResult> r = driver::RunModule(**module, *tiny, options);
  if (!r.ok()) return r.status();
  (void)driver::RunReportJson(*r, "fuzz.hlo").Dump();
  (void)driver::RunReportText(*r, "fuzz.hlo");
  return OkStatus();
}

namespace {

namespace fs = std::filesystem;

// A sandbox folder removed on destruction.
struct Sandbox {
  fs::path dir;
  Sandbox() {
    char templ[] = "/tmp/tpusim_fuzz_outputs.XXXXXX";
    const char* made = ::mkdtemp(templ);
    if (made != nullptr) dir = made;
  }
  ~Sandbox() {
    std::error_code ec;
    if (!dir.empty()) fs::remove_all(dir, ec);
  }
};

// What a path is now: "file:<contents>", "link-><target>", "dir", "fifo", "chr", "none".
std::string Describe(const fs::path& p) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0) return "none";
  if (S_ISLNK(st.st_mode)) {
    std::error_code ec;
    return "link->" + fs::read_symlink(p, ec).string();
  }
  if (S_ISDIR(st.st_mode)) return "dir";
  if (S_ISFIFO(st.st_mode)) return "fifo";
  if (S_ISCHR(st.st_mode)) return "chr";
  StatusOr<std::string> contents = ReadFile(p.string());
  return "file:" + (contents.ok() ? *contents : std::string("?"));
}

std::map<std::string, std::string> Snapshot(const fs::path& dir) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    out[it->path().lexically_relative(dir).string()] = Describe(it->path());
  }
  return out;
}

}  // namespace

Status FuzzOutputPaths(std::string_view script) {
  Sandbox box;
  if (box.dir.empty()) return OkStatus();  // no temporary folder: nothing to test
  const char* names[] = {"a", "b", "c", "d/e", "d", "l1", "l2", "f"};
  auto name = [&](unsigned char byte) { return std::string(names[byte % 8]); };
  size_t i = 0;
  auto next = [&]() -> unsigned char {
    return i < script.size() ? static_cast<unsigned char>(script[i++]) : 0;
  };
  // Set-up: up to 6 entries.
  const int entries = next() % 7;
  for (int e = 0; e < entries; ++e) {
    const unsigned char kind = next() % 7;
    const fs::path p = box.dir / name(next());
    std::error_code ec;
    fs::create_directories(p.parent_path(), ec);
    switch (kind) {
      case 0: {
        // O_NONBLOCK: the path may already be a FIFO (an earlier step), whose open would wait.
        const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK, 0644);
        if (fd >= 0) {
          (void)::write(fd, "old", 3);
          ::close(fd);
        }
        break;
      }
      case 1:
        fs::create_symlink(name(next()), p, ec);
        break;
      case 2:
        fs::create_symlink(box.dir / name(next()), p, ec);
        break;
      case 3:
        fs::create_directory(p, ec);
        break;
      case 4:
        ::mkfifo(p.c_str(), 0644);
        break;
      case 5:
        fs::create_symlink("/dev/null", p, ec);
        break;
      default:
        fs::create_symlink(p.filename(), p, ec);  // a loop
        break;
    }
  }
  const std::map<std::string, std::string> before = Snapshot(box.dir);
  // Outputs: 1..4.
  OutputSet outputs;
  struct Declared {
    std::string option, path, contents;
  };
  std::vector<Declared> declared;
  const int count = 1 + next() % 4;
  for (int o = 0; o < count; ++o) {
    const unsigned char where = next();
    std::string path = where % 16 == 0   ? "/dev/null"
                       : where % 16 == 1 ? "/dev/full"
                                         : (box.dir / name(where / 16)).string();
    const std::string option = "--out" + std::to_string(o);
    if (!outputs.Declare(option, path).ok()) continue;
    std::string contents = "contents of " + option + " " + std::to_string(next());
    outputs.Set(option, contents);
    declared.push_back({option, path, contents});
  }
  const Status committed = outputs.Commit();
  const std::map<std::string, std::string> after = Snapshot(box.dir);
  for (const auto& [rel, what] : after) {
    if (rel.find(".tmp.") != std::string::npos) return Internal("temporary left: " + rel);
  }
  if (!committed.ok()) {
    if (before != after)
      return Internal("a failed commit changed the sandbox: " + committed.message());
    return committed;
  }
  for (const auto& [rel, what] : before) {  // kinds are kept: no link, FIFO or folder replaced
    auto it = after.find(rel);
    if (it == after.end()) return Internal(rel + " disappeared");
    if (what.rfind("file:", 0) != 0 && it->second != what) {
      return Internal(rel + " was " + what + ", is now " + it->second);
    }
  }
  for (const Declared& d : declared) {
    if (d.path.rfind("/dev/", 0) == 0) continue;
    struct stat st {};
    if (::stat(d.path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;  // FIFO, /dev/null
    StatusOr<std::string> got = ReadFile(d.path);
    if (!got.ok() || *got != d.contents) {
      return Internal(d.option + " " + d.path + " does not hold its contents");
    }
  }
  return OkStatus();
}

std::string MutateHlo(std::string_view text, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(text);
  auto pick = [&](size_t n) { return n == 0 ? size_t{0} : static_cast<size_t>(rng() % n); };
  static const char* kNumbers[] = {"0",
                                   "1",
                                   "-1",
                                   "2",
                                   "3",
                                   "2147483647",
                                   "2147483648",
                                   "4294967295",
                                   "9223372036854775807",
                                   "4611686018427387904",
                                   "-9223372036854775808",
                                   "1e400",
                                   "nan",
                                   "65536",
                                   "1000000"};
  static const char* kOpcodes[] = {"add",
                                   "multiply",
                                   "dot",
                                   "reduce",
                                   "broadcast",
                                   "transpose",
                                   "reshape",
                                   "all-reduce",
                                   "tuple",
                                   "negate",
                                   "get-tuple-element",
                                   "while",
                                   "collective-permute",
                                   "slice",
                                   "concatenate",
                                   "convert"};
  switch (rng() % 6) {
    case 0: {  // a number -> an extreme value
      std::vector<size_t> starts;
      for (size_t k = 0; k < s.size(); ++k) {
        if (std::isdigit(static_cast<unsigned char>(s[k])) &&
            (k == 0 || !std::isalnum(static_cast<unsigned char>(s[k - 1])))) {
          starts.push_back(k);
        }
      }
      if (starts.empty()) break;
      const size_t at = starts[pick(starts.size())];
      size_t end = at;
      while (end < s.size() && std::isalnum(static_cast<unsigned char>(s[end]))) ++end;
      s.replace(at, end - at, kNumbers[pick(std::size(kNumbers))]);
      break;
    }
    case 1:
    case 2: {  // delete or duplicate a line
      std::vector<size_t> lines{0};
      for (size_t k = 0; k < s.size(); ++k) {
        if (s[k] == '\n') lines.push_back(k + 1);
      }
      const size_t l = pick(lines.size());
      size_t end = s.find('\n', lines[l]);
      end = end == std::string::npos ? s.size() : end + 1;
      const std::string line = s.substr(lines[l], end - lines[l]);
      if (rng() % 2 == 0) {
        s.erase(lines[l], end - lines[l]);
      } else {
        s.insert(end, line);
      }
      break;
    }
    case 3: {  // an opcode -> another
      for (int tries = 0; tries < 8; ++tries) {
        const std::string from = kOpcodes[pick(std::size(kOpcodes))];
        const size_t at = s.find(" " + from + "(");
        if (at == std::string::npos) continue;
        s.replace(at + 1, from.size(), kOpcodes[pick(std::size(kOpcodes))]);
        break;
      }
      break;
    }
    case 4: {  // an operand -> another name
      std::vector<size_t> names;
      for (size_t k = 0; k < s.size(); ++k) {
        if (s[k] == '%') names.push_back(k);
      }
      if (names.size() < 2) break;
      const size_t a = names[pick(names.size())], b = names[pick(names.size())];
      auto word_end = [&](size_t k) {
        size_t e = k + 1;
        while (e < s.size() && (std::isalnum(static_cast<unsigned char>(s[e])) || s[e] == '.' ||
                                s[e] == '_' || s[e] == '-')) {
          ++e;
        }
        return e;
      };
      const std::string replacement = s.substr(b, word_end(b) - b);
      s.replace(a, word_end(a) - a, replacement);
      break;
    }
    default: {  // a list attribute -> another list
      static const char* kLists[] = {"{}",
                                     "{0}",
                                     "{1,1}",
                                     "{0,1,2,3,4,5,6,7,8}",
                                     "{{}}",
                                     "{{0,1},{1,0}}",
                                     "{{0,4611686018427387904}}",
                                     "{-1}"};
      const size_t at = s.find("={", pick(s.size()));
      if (at == std::string::npos) break;
      size_t depth = 0, end = at + 1;
      for (; end < s.size(); ++end) {
        if (s[end] == '{') ++depth;
        if (s[end] == '}' && --depth == 0) break;
      }
      if (end >= s.size()) break;
      s.replace(at + 1, end - at, kLists[pick(std::size(kLists))]);
      break;
    }
  }
  return s;
}

}  // namespace tpusim::fuzz
