#include "common/file_util.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tpusim {

StatusOr<std::string> ReadFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return NotFound(path + ": no such file");
  if (std::filesystem::is_directory(path, ec)) return InvalidArgument(path + ": is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidArgument(path + ": cannot open: " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return InvalidArgument(path + ": read error");
  return ss.str();
}

namespace {

// The temporary files of the WriteFileAtomic calls in progress, for RemovePendingTemporaryFiles.
// This is the one piece of mutable global state in tpusim, because a signal handler can reach
// nothing else: fixed-size storage (no allocation), each slot published by an atomic flag after its
// path is written and withdrawn before the path changes.
constexpr int kPendingSlots = 8;
constexpr size_t kPendingPathBytes = 4096;
struct PendingTemporary {
  std::atomic<bool> claimed{false};  // owned by one WriteFileAtomic call
  std::atomic<bool> live{false};     // `path` is complete and may exist on disk
  char path[kPendingPathBytes];
};
PendingTemporary g_pending[kPendingSlots];
static_assert(std::atomic<bool>::is_always_lock_free, "needed in a signal handler");

// Registers `tmp` while it exists; more concurrent writes than slots are simply not registered.
class PendingTemporaryGuard {
 public:
  explicit PendingTemporaryGuard(const std::string& tmp) {
    if (tmp.size() >= kPendingPathBytes) return;
    for (PendingTemporary& p : g_pending) {
      bool expected = false;
      if (p.claimed.compare_exchange_strong(expected, true)) {
        std::memcpy(p.path, tmp.c_str(), tmp.size() + 1);
        p.live.store(true);
        slot_ = &p;
        return;
      }
    }
  }
  ~PendingTemporaryGuard() {
    if (slot_ == nullptr) return;
    slot_->live.store(false);
    slot_->claimed.store(false);
  }
  PendingTemporaryGuard(const PendingTemporaryGuard&) = delete;
  PendingTemporaryGuard& operator=(const PendingTemporaryGuard&) = delete;

 private:
  PendingTemporary* slot_ = nullptr;
};

}  // namespace

void RemovePendingTemporaryFiles() {
  for (PendingTemporary& p : g_pending) {
    if (p.live.load()) ::unlink(p.path);  // ENOENT (not created yet, or renamed) is fine
  }
}

Status WriteFileAtomic(const std::string& path, const std::string& contents) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  PendingTemporaryGuard pending(tmp);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return InvalidArgument(path + ": cannot write: " + std::strerror(errno));
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      return InvalidArgument(path + ": write failed");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    std::remove(tmp.c_str());
    return InvalidArgument(path + ": cannot write: " + std::strerror(err));
  }
  return OkStatus();
}

}  // namespace tpusim
