#include "common/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace tpusim {
namespace {

const char* FileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

StatusOr<std::string> ReadFile(const std::string& path, int64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; the file kind is checked on the
  // descriptor itself (fstat), so nothing can swap it in between.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return NotFound(path + ": no such file");
    return InvalidArgument(path + ": cannot open: " + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    if (S_ISDIR(st.st_mode)) return InvalidArgument(path + ": is a directory");
    return InvalidArgument(path + ": is " + FileKind(st.st_mode) +
                           ", not a regular file; tpusim reads inputs only from regular files");
  }
  if (st.st_size > max_bytes) {
    ::close(fd);
    return InvalidArgument(path + ": " + std::to_string(st.st_size) + " bytes, more than the " +
                           std::to_string(max_bytes) + " an input may have");
  }
  std::string out;
  out.resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  // Read to end of file, but never past max_bytes (a file growing while it is read).
  while (true) {
    if (done == out.size()) {
      if (static_cast<int64_t>(out.size()) >= max_bytes) {
        char probe;
        const ssize_t n = ::read(fd, &probe, 1);
        if (n == 0) break;
        ::close(fd);
        return InvalidArgument(path + ": more than the " + std::to_string(max_bytes) +
                               " bytes an input may have");
      }
      out.resize(std::min<size_t>(static_cast<size_t>(max_bytes), out.size() + 65536));
    }
    const ssize_t n = ::read(fd, out.data() + done, out.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return InvalidArgument(path + ": read error: " + std::strerror(err));
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  out.resize(done);
  return out;
}

}  // namespace tpusim
