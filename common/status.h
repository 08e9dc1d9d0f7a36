// Status / StatusOr: how tpusim reports the user's mistakes (bad HLO, bad config, a program that
// does not fit in memory, an unsupported op). Broken internal invariants use TPUSIM_CHECK (check.h)
// instead.
//
// Each Status carries a code that maps one-to-one onto the `tpusim` command's exit codes:
//   kOk -> 0, kCheckFailed -> 1 (a numerical check failed), kInvalidArgument / kNotFound /
//   kUnimplemented / kResourceExhausted -> 2 (bad input or usage), kInternal -> 3 (a bug in
//   tpusim).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace tpusim {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,    // malformed input: HLO text, assembly, config value, command-line value.
  kNotFound,           // a file, key, computation or instruction that does not exist.
  kUnimplemented,      // valid input tpusim cannot handle yet (an op with no lowering, say).
  kResourceExhausted,  // a program or tensor that does not fit (VMEM, HBM, --max-check-bytes,
                       // limits).
  kCheckFailed,        // simulated values disagree with the reference.
  kInternal,           // a bug in tpusim.
};

/// Process exit code for a status code: 0 ok, 1 a check failed, 2 bad input or usage, 3 internal
/// error.
int ExitCodeFor(StatusCode code);
const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  /// "message" for user-facing output (the message already names the file/key/location).
  std::string ToString() const;
  /// A copy with `prefix + ": "` put before the message (e.g. a file name or a key path).
  Status WithPrefix(const std::string& prefix) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status OkStatus() { return Status(); }
inline Status InvalidArgument(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status Unimplemented(std::string m) { return {StatusCode::kUnimplemented, std::move(m)}; }
inline Status ResourceExhausted(std::string m) {
  return {StatusCode::kResourceExhausted, std::move(m)};
}
inline Status CheckFailed(std::string m) { return {StatusCode::kCheckFailed, std::move(m)}; }
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

/// Either a value or a non-ok Status.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(const T& value) : value_(value) {}              // NOLINT(runtime/explicit)
  StatusOr(T&& value) : value_(std::move(value)) {}        // NOLINT(runtime/explicit)
  StatusOr(Status status) : status_(std::move(status)) {}  // NOLINT(runtime/explicit)

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  Status status_;  // ok when value_ is set
  std::optional<T> value_;
};

}  // namespace tpusim

#define TPUSIM_CONCAT_INNER_(a, b) a##b
#define TPUSIM_CONCAT_(a, b) TPUSIM_CONCAT_INNER_(a, b)

/// Returns the Status from the enclosing function if `expr` is not ok.
#define TPUSIM_RETURN_IF_ERROR(expr)         \
  do {                                       \
    ::tpusim::Status _tpusim_st = (expr);    \
    if (!_tpusim_st.ok()) return _tpusim_st; \
  } while (0)

#define TPUSIM_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()

/// `TPUSIM_ASSIGN_OR_RETURN(auto x, MakeX());` — assigns the value or returns the error.
#define TPUSIM_ASSIGN_OR_RETURN(lhs, expr) \
  TPUSIM_ASSIGN_OR_RETURN_IMPL_(TPUSIM_CONCAT_(_tpusim_so_, __LINE__), lhs, expr)
