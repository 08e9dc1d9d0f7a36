#include "hlo/eval/npy.h"

#include <fmt/format.h>

#include <charconv>
#include <cstring>
#include <optional>

#include "common/file_util.h"

namespace tpusim::hlo {
namespace {

const char kMagic[] = "\x93NUMPY";

std::optional<std::string> DescrFor(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kPred:
      return "|b1";
    case PrimitiveType::kS8:
      return "|i1";
    case PrimitiveType::kS16:
      return "<i2";
    case PrimitiveType::kS32:
      return "<i4";
    case PrimitiveType::kS64:
      return "<i8";
    case PrimitiveType::kU8:
      return "|u1";
    case PrimitiveType::kU16:
      return "<u2";
    case PrimitiveType::kU32:
      return "<u4";
    case PrimitiveType::kU64:
      return "<u8";
    case PrimitiveType::kF16:
      return "<f2";
    case PrimitiveType::kF32:
    case PrimitiveType::kBF16:
      return "<f4";
    case PrimitiveType::kF64:
      return "<f8";
    case PrimitiveType::kC64:
      return "<c8";
    case PrimitiveType::kC128:
      return "<c16";
    default:
      return std::nullopt;
  }
}

std::optional<PrimitiveType> TypeForDescr(std::string d) {
  if (d.size() == 3 && (d[0] == '<' || d[0] == '|' || d[0] == '=')) d[0] = '<';
  if (d == "<b1") return PrimitiveType::kPred;
  if (d == "<i1") return PrimitiveType::kS8;
  if (d == "<i2") return PrimitiveType::kS16;
  if (d == "<i4") return PrimitiveType::kS32;
  if (d == "<i8") return PrimitiveType::kS64;
  if (d == "<u1") return PrimitiveType::kU8;
  if (d == "<u2") return PrimitiveType::kU16;
  if (d == "<u4") return PrimitiveType::kU32;
  if (d == "<u8") return PrimitiveType::kU64;
  if (d == "<f2") return PrimitiveType::kF16;
  if (d == "<f4") return PrimitiveType::kF32;
  if (d == "<f8") return PrimitiveType::kF64;
  if (d == "<c8") return PrimitiveType::kC64;
  if (d == "<c16" || d == "=c16") return PrimitiveType::kC128;
  return std::nullopt;
}

// Finds `'key':` in the header dict and returns the position just after the colon, or npos.
size_t FindKey(const std::string& header, const std::string& key) {
  for (char q : {'\'', '"'}) {
    std::string pat = std::string(1, q) + key + std::string(1, q);
    size_t p = header.find(pat);
    if (p == std::string::npos) continue;
    p = header.find(':', p + pat.size());
    if (p != std::string::npos) return p + 1;
  }
  return std::string::npos;
}

}  // namespace

StatusOr<std::string> EncodeNpy(const Literal& array) {
  if (!array.IsArray()) return InvalidArgument("only arrays can be written as .npy");
  auto descr = DescrFor(array.element_type());
  if (!descr) {
    return Unimplemented(
        fmt::format("no .npy dtype for {}", PrimitiveTypeName(array.element_type())));
  }
  // Python tuple syntax: "()", "(4,)", "(2, 3)".
  const auto& dims = array.shape().dimensions();
  std::string shape = "(";
  for (size_t k = 0; k < dims.size(); ++k) shape += (k ? ", " : "") + std::to_string(dims[k]);
  shape += dims.size() == 1 ? ",)" : ")";
  std::string dict =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", *descr, shape);
  // v1.0: 6 magic + 2 version + 2 length; v2.0 uses a 4-byte length.
  bool v2 = dict.size() + 1 + 10 > 65535;
  size_t prefix = v2 ? 12 : 10;
  size_t total = prefix + dict.size() + 1;
  size_t pad = (64 - total % 64) % 64;
  dict.append(pad, ' ');
  dict.push_back('\n');
  std::string out(kMagic, 6);
  out.push_back(static_cast<char>(v2 ? 2 : 1));
  out.push_back(0);
  uint32_t len = static_cast<uint32_t>(dict.size());
  for (size_t i = 0; i < (v2 ? 4u : 2u); ++i)
    out.push_back(static_cast<char>((len >> (8 * i)) & 0xff));
  out += dict;
  // Payload, little-endian (the host is little-endian: x86-64 / aarch64 as built here).
  if (array.element_type() == PrimitiveType::kBF16) {
    const Eigen::bfloat16* d = array.data<Eigen::bfloat16>();
    for (int64_t i = 0; i < array.element_count(); ++i) {
      float f = static_cast<float>(d[i]);
      char b[4];
      std::memcpy(b, &f, 4);
      out.append(b, 4);
    }
  } else {
    out.append(reinterpret_cast<const char*>(array.raw()), static_cast<size_t>(array.size_bytes()));
  }
  return out;
}

StatusOr<Literal> DecodeNpy(const std::string& bytes, const std::string& name, int64_t max_bytes) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument(fmt::format("{}: not a valid .npy file: {}", name, why));
  };
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, 6) != 0) return bad("missing magic");
  int major = static_cast<uint8_t>(bytes[6]);
  size_t hlen_bytes = major == 1 ? 2 : (major == 2 || major == 3) ? 4 : 0;
  if (hlen_bytes == 0) return bad(fmt::format("unsupported version {}", major));
  if (bytes.size() < 8 + hlen_bytes) return bad("truncated header");
  size_t hlen = 0;
  for (size_t i = 0; i < hlen_bytes; ++i) {
    hlen |= static_cast<size_t>(static_cast<uint8_t>(bytes[8 + i])) << (8 * i);
  }
  size_t data_start = 8 + hlen_bytes + hlen;
  if (bytes.size() < data_start) return bad("truncated header");
  std::string header = bytes.substr(8 + hlen_bytes, hlen);

  // numpy's header is a Python dict literal: a key given twice is malformed, not "last wins".
  for (const char* key : {"descr", "fortran_order", "shape"}) {
    int count = 0;
    for (char q : {'\'', '"'}) {
      const std::string pat = std::string(1, q) + key + std::string(1, q);
      for (size_t at = header.find(pat); at != std::string::npos; at = header.find(pat, at + 1)) {
        ++count;
      }
    }
    if (count > 1) return bad(fmt::format("the header names '{}' {} times", key, count));
  }
  size_t p = FindKey(header, "descr");
  if (p == std::string::npos) return bad("no 'descr'");
  size_t q1 = header.find_first_of("'\"", p);
  size_t q2 = q1 == std::string::npos ? q1 : header.find(header[q1], q1 + 1);
  if (q2 == std::string::npos) return bad("bad 'descr'");
  std::string descr = header.substr(q1 + 1, q2 - q1 - 1);
  if (!descr.empty() && descr[0] == '>') {
    return InvalidArgument(fmt::format("{}: big-endian .npy ('{}') is not supported", name, descr));
  }
  auto type = TypeForDescr(descr);
  if (!type) return Unimplemented(fmt::format("{}: unsupported .npy dtype '{}'", name, descr));

  p = FindKey(header, "fortran_order");
  if (p == std::string::npos) return bad("no 'fortran_order'");
  if (header.compare(header.find_first_not_of(' ', p), 4, "True") == 0) {
    return Unimplemented(fmt::format("{}: Fortran-order .npy files are not supported", name));
  }

  p = FindKey(header, "shape");
  if (p == std::string::npos) return bad("no 'shape'");
  size_t open = header.find('(', p), close = header.find(')', p);
  if (open == std::string::npos || close == std::string::npos) return bad("bad 'shape'");
  std::vector<int64_t> dims;
  std::string inner = header.substr(open + 1, close - open - 1);
  size_t i = 0;
  while (i < inner.size()) {
    while (i < inner.size() && (inner[i] == ' ' || inner[i] == ',')) ++i;
    if (i >= inner.size()) break;
    size_t j = i;
    while (j < inner.size() && std::isdigit(static_cast<unsigned char>(inner[j]))) ++j;
    if (j == i) return bad("bad 'shape'");
    int64_t d = 0;
    const auto [end, ec] = std::from_chars(inner.data() + i, inner.data() + j, d);
    if (ec != std::errc() || end != inner.data() + j) {
      return bad(
          fmt::format("dimension '{}' of 'shape' does not fit int64", inner.substr(i, j - i)));
    }
    if (dims.size() >= 64) return bad("'shape' has more than 64 dimensions");
    dims.push_back(d);
    i = j;
  }
  StatusOr<Literal> created = Literal::Create(Shape(*type, dims), max_bytes);
  if (!created.ok()) return created.status().WithPrefix(name);
  Literal lit = std::move(created).value();
  if (bytes.size() - data_start < static_cast<size_t>(lit.size_bytes())) {
    return bad(fmt::format("payload has {} bytes, {} needs {}", bytes.size() - data_start,
                           lit.shape().ToString(false), lit.size_bytes()));
  }
  std::memcpy(lit.mutable_raw(), bytes.data() + data_start, static_cast<size_t>(lit.size_bytes()));
  if (*type == PrimitiveType::kPred) {  // normalize any nonzero byte to true
    uint8_t* d = lit.mutable_raw();
    for (int64_t k = 0; k < lit.size_bytes(); ++k) d[k] = d[k] != 0;
  }
  return lit;
}

Status WriteNpy(const std::string& path, const Literal& array) {
  TPUSIM_ASSIGN_OR_RETURN(std::string bytes, EncodeNpy(array));
  return WriteFileAtomic(path, bytes);
}

StatusOr<Literal> ReadNpyAs(const std::string& path, const Shape& expected, int64_t max_bytes) {
  TPUSIM_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  TPUSIM_ASSIGN_OR_RETURN(Literal lit, DecodeNpy(bytes, path, max_bytes));
  bool dims_ok = lit.shape().dimensions() == expected.dimensions();
  bool type_ok = lit.element_type() == expected.element_type() ||
                 (expected.element_type() == PrimitiveType::kBF16 &&
                  lit.element_type() == PrimitiveType::kF32);
  if (!dims_ok || !type_ok) {
    return InvalidArgument(fmt::format("{}: holds {} but {} is expected", path,
                                       lit.shape().ToString(false), expected.ToString(false)));
  }
  if (lit.element_type() != expected.element_type()) {
    TPUSIM_ASSIGN_OR_RETURN(lit, ConvertLiteral(lit, expected.element_type(), max_bytes));
  }
  Literal out = std::move(lit);
  out.ReshapeInPlace(expected);
  return out;
}

}  // namespace tpusim::hlo
