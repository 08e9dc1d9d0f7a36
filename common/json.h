// A small JSON value for tpusim's reports and --json outputs: objects keep insertion order (so
// reports are stable and diffable), doubles print in the shortest form that reads back to the same
// value, and non-finite doubles print as null (JSON has no inf/nan). Writing only; tpusim reads no
// JSON.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace tpusim {

class Json {
 public:
  using Array = std::vector<Json>;
  using Object = std::vector<std::pair<std::string, Json>>;

  Json() : v_(nullptr) {}
  Json(std::nullptr_t) : v_(nullptr) {}              // NOLINT
  Json(bool b) : v_(b) {}                            // NOLINT
  Json(int v) : v_(static_cast<int64_t>(v)) {}       // NOLINT
  Json(int64_t v) : v_(v) {}                         // NOLINT
  Json(uint64_t v) : v_(static_cast<int64_t>(v)) {}  // NOLINT
  Json(double v) : v_(v) {}                          // NOLINT
  Json(const char* s) : v_(std::string(s)) {}        // NOLINT
  Json(std::string s) : v_(std::move(s)) {}          // NOLINT
  Json(std::string_view s) : v_(std::string(s)) {}   // NOLINT
  Json(Array a) : v_(std::move(a)) {}                // NOLINT
  Json(Object o) : v_(std::move(o)) {}               // NOLINT

  static Json MakeArray() { return Json(Array{}); }
  static Json MakeObject() { return Json(Object{}); }

  /// Object access: returns the member `key`, appending a null member if absent. Turns null into
  /// {}.
  Json& operator[](std::string_view key);
  /// Appends to an array. Turns null into [].
  void push_back(Json v);

  bool is_object() const { return std::holds_alternative<Object>(v_); }
  bool is_array() const { return std::holds_alternative<Array>(v_); }
  /// The member `key` of an object, or nullptr.
  const Json* Find(std::string_view key) const;
  const Array& array() const { return std::get<Array>(v_); }
  const Object& object() const { return std::get<Object>(v_); }

  /// Serializes; indent > 0 pretty-prints with that many spaces per level.
  std::string Dump(int indent = 2) const;

 private:
  void DumpTo(std::string& out, int indent, int depth) const;
  std::variant<std::nullptr_t, bool, int64_t, double, std::string, Array, Object> v_;
};

/// `s` as a JSON string literal, with quotes and escapes.
std::string JsonQuote(std::string_view s);

}  // namespace tpusim
