#include "common/json.h"

#include <fmt/format.h>

#include <cmath>

namespace tpusim {

Json& Json::operator[](std::string_view key) {
  if (std::holds_alternative<std::nullptr_t>(v_)) v_ = Object{};
  auto& obj = std::get<Object>(v_);
  for (auto& [k, v] : obj) {
    if (k == key) return v;
  }
  obj.emplace_back(std::string(key), Json());
  return obj.back().second;
}

void Json::push_back(Json v) {
  if (std::holds_alternative<std::nullptr_t>(v_)) v_ = Array{};
  std::get<Array>(v_).push_back(std::move(v));
}

const Json* Json::Find(std::string_view key) const {
  if (!is_object()) return nullptr;
  for (const auto& [k, v] : std::get<Object>(v_)) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::string JsonQuote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<int>(c));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string Json::Dump(int indent) const {
  std::string out;
  DumpTo(out, indent, 0);
  if (indent > 0) out += "\n";
  return out;
}

void Json::DumpTo(std::string& out, int indent, int depth) const {
  auto newline = [&](int d) {
    if (indent <= 0) return;
    out += "\n";
    out.append(static_cast<size_t>(indent * d), ' ');
  };
  if (std::holds_alternative<std::nullptr_t>(v_)) {
    out += "null";
  } else if (const bool* b = std::get_if<bool>(&v_)) {
    out += *b ? "true" : "false";
  } else if (const int64_t* i = std::get_if<int64_t>(&v_)) {
    out += std::to_string(*i);
  } else if (const double* d = std::get_if<double>(&v_)) {
    if (!std::isfinite(*d)) {
      out += "null";
    } else {
      std::string s = fmt::format("{}", *d);  // shortest round-trip form
      out += s;
    }
  } else if (const std::string* s = std::get_if<std::string>(&v_)) {
    out += JsonQuote(*s);
  } else if (const Array* a = std::get_if<Array>(&v_)) {
    if (a->empty()) {
      out += "[]";
      return;
    }
    out += "[";
    for (size_t k = 0; k < a->size(); ++k) {
      if (k) out += ",";
      newline(depth + 1);
      (*a)[k].DumpTo(out, indent, depth + 1);
    }
    newline(depth);
    out += "]";
  } else if (const Object* o = std::get_if<Object>(&v_)) {
    if (o->empty()) {
      out += "{}";
      return;
    }
    out += "{";
    for (size_t k = 0; k < o->size(); ++k) {
      if (k) out += ",";
      newline(depth + 1);
      out += JsonQuote((*o)[k].first);
      out += indent > 0 ? ": " : ":";
      (*o)[k].second.DumpTo(out, indent, depth + 1);
    }
    newline(depth);
    out += "}";
  }
}

}  // namespace tpusim
