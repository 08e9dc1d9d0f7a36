// The VPU and XLU opcodes' semantics (opcodes.def): one function over the VMEM of a core. Every
// value goes through numerics.h.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

#include "common/philox.h"
#include "isa/execute.h"
#include "isa/execute_internal.h"
#include "isa/footprint.h"
#include "isa/numerics.h"

namespace tpusim::isa {
namespace {

using internal::ReadElems;
using internal::WriteBytes;

// One step of vpu.reduce on float values in their compute type T: double for f64 (binary64),
// float for the others (bf16, f16, f8 and f32 compute in f32, numerics.h).
template <typename T>
T ReduceFloat(ReduceOp op, T acc, T x) {
  if (op == ReduceOp::kSum) return acc + x;
  return op == ReduceOp::kMax ? MaxFloat(acc, x) : MinFloat(acc, x);
}

double LoadF64(const char* p) {
  double v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// The compute values of the float elements in `bytes` (type t): f32 through LoadFloats, or the f64
// values themselves when T is double (t is f64).
template <typename T>
std::vector<T> LoadFloatValues(const std::string& bytes, DType t) {
  std::vector<T> v(bytes.size() / static_cast<size_t>(DTypeBytes(t)));
  if constexpr (std::is_same_v<T, double>) {
    std::memcpy(v.data(), bytes.data(), v.size() * sizeof(double));
  } else {
    LoadFloats(bytes.data(), t, v.size(), v.data());
  }
  return v;
}

template <typename T>
void StoreFloatValues(char* p, DType t, const std::vector<T>& v) {
  if constexpr (std::is_same_v<T, double>) {
    std::memcpy(p, v.data(), v.size() * sizeof(double));
  } else {
    StoreFloats(p, t, v.size(), v.data());
  }
}

// Where a broadcast operand's element (r, c) of a [rows, cols] region is: r * row + c * col
// (BroadcastOperandIndex, with its case chosen once per instruction).
struct BroadcastSteps {
  uint64_t row, col;
};
BroadcastSteps StepsOf(Broadcast b, uint64_t cols) {
  const uint64_t at_1_0 = BroadcastOperandIndex(b, 1, 0, cols);
  const uint64_t at_0_1 = cols > 1 ? BroadcastOperandIndex(b, 0, 1, cols) : 0;
  return {at_1_0, at_0_1};
}

// A [rows, cols] region computed from two broadcast operands.
struct Operand2 {
  uint64_t rows, cols;
  BroadcastSteps a, b;
};

// z[r * cols + c] = f(x[a(r, c)], y[b(r, c)]) over the region (row-major), in a container of R
// (std::string for pred bytes, std::vector otherwise).
template <class R, class T, class F>
auto MapRegion(const Operand2& s, const std::vector<T>& x, const std::vector<T>& y, F f) {
  using Out = std::conditional_t<std::is_same_v<R, char>, std::string, std::vector<R>>;
  Out z(s.rows * s.cols, R{});
  R* o = z.data();
  for (uint64_t r = 0; r < s.rows; ++r) {
    const T* pa = x.data() + r * s.a.row;
    const T* pb = y.data() + r * s.b.row;
    for (uint64_t c = 0; c < s.cols; ++c) *o++ = f(pa[c * s.a.col], pb[c * s.b.col]);
  }
  return z;
}

// MapRegion of ApplyBinaryF, with the four arithmetic operators' case taken out of the element
// loop (the same IEEE operation either way).
template <typename T>
std::vector<T> MapFloatBinary(BinaryOp op, const Operand2& s, const std::vector<T>& x,
                              const std::vector<T>& y) {
  switch (op) {
    case BinaryOp::kAdd:
      return MapRegion<T>(s, x, y, [](T a, T b) { return a + b; });
    case BinaryOp::kSub:
      return MapRegion<T>(s, x, y, [](T a, T b) { return a - b; });
    case BinaryOp::kMul:
      return MapRegion<T>(s, x, y, [](T a, T b) { return a * b; });
    case BinaryOp::kDiv:
      return MapRegion<T>(s, x, y, [](T a, T b) { return a / b; });
    default:
      return MapRegion<T>(s, x, y, [op](T a, T b) { return ApplyBinaryFloat(op, a, b); });
  }
}

// vpu.binary / vpu.compare on float operands `av`, `bv` of type dt: the result's bytes.
template <typename T>
std::string BinaryOrCompareFloat(bool cmp, BinaryOp bop, CompareOp cop, DType dt,
                                 const Operand2& shape, const std::string& av,
                                 const std::string& bv) {
  const std::vector<T> x = LoadFloatValues<T>(av, dt), y = LoadFloatValues<T>(bv, dt);
  if (cmp) {
    return MapRegion<char>(shape, x, y,
                           [cop](T a, T b) -> char { return CompareValues(cop, a, b) ? 1 : 0; });
  }
  const std::vector<T> z = MapFloatBinary<T>(bop, shape, x, y);
  std::string out(z.size() * static_cast<size_t>(DTypeBytes(dt)), '\0');
  StoreFloatValues(out.data(), dt, z);
  return out;
}

// vpu.unary on the float elements in `buf` (type t), in place.
template <typename T>
void UnaryFloat(UnaryOp op, DType t, std::string& buf) {
  std::vector<T> x = LoadFloatValues<T>(buf, t);
  for (T& v : x) v = ApplyUnaryFloat(op, v);
  StoreFloatValues(buf.data(), t, x);
}

// One element of vpu.convert when either side is f64: the f64 value computes in binary64 and
// narrows once (NarrowF64); a float widens exactly; an integer converts once (IntToF64).
void ConvertF64Element(const char* p, DType from, char* q, DType to) {
  if (from == DType::kF64) {
    const double x = LoadF64(p);
    if (to == DType::kF64) {
      std::memcpy(q, &x, sizeof x);
    } else if (IsFloat(to)) {
      StoreFloat(q, to, NarrowF64(x, to));
    } else {
      StoreInt(q, to, FloatToInt(x, to));  // saturating; pred is x != 0
    }
    return;
  }
  const double x = IsFloat(from) ? static_cast<double>(LoadFloat(p, from))
                                 : IntToF64(LoadInt(p, from), from);
  std::memcpy(q, &x, sizeof x);
}

// MapRegion of ApplyBinaryI for a result stored with StoreInts: add, sub, mul, and, or and xor
// leave the element loop without their case and without NormalizeInt, whose wrap StoreInts'
// truncation to the element type's bits performs (the same stored bits).
std::vector<int64_t> MapIntBinary(BinaryOp op, DType t, const Operand2& s,
                                  const std::vector<int64_t>& x, const std::vector<int64_t>& y) {
  using U = uint64_t;
  auto wrap = [](U v) { return static_cast<int64_t>(v); };
  switch (op) {
    case BinaryOp::kAdd:
      return MapRegion<int64_t>(s, x, y, [&](int64_t a, int64_t b) { return wrap(U(a) + U(b)); });
    case BinaryOp::kSub:
      return MapRegion<int64_t>(s, x, y, [&](int64_t a, int64_t b) { return wrap(U(a) - U(b)); });
    case BinaryOp::kMul:
      return MapRegion<int64_t>(s, x, y, [&](int64_t a, int64_t b) { return wrap(U(a) * U(b)); });
    case BinaryOp::kAnd:
      return MapRegion<int64_t>(s, x, y, [](int64_t a, int64_t b) { return a & b; });
    case BinaryOp::kOr:
      return MapRegion<int64_t>(s, x, y, [](int64_t a, int64_t b) { return a | b; });
    case BinaryOp::kXor:
      return MapRegion<int64_t>(s, x, y, [](int64_t a, int64_t b) { return a ^ b; });
    default:
      return MapRegion<int64_t>(
          s, x, y, [op, t](int64_t a, int64_t b) { return ApplyBinaryI(op, a, b, t); });
  }
}

// One function per VPU/XLU opcode; ExecuteVector dispatches on the opcode.

Status ExecuteVpuUnary(SparseMemory& vm, const Instruction& inst) {
  auto u = inst.As<op::VpuUnary>();
  if (!UnarySupports(u.op, u.dtype)) {
    return InvalidArgument(
        fmt::format("op={} is not defined for {}", Name(u.op), Name(u.dtype)));
  }
  TPUSIM_ASSIGN_OR_RETURN(std::string buf, ReadElems(vm, u.src, u.count, u.dtype, "src"));
  if (u.dtype == DType::kF64) {
    UnaryFloat<double>(u.op, u.dtype, buf);
  } else if (IsFloat(u.dtype)) {
    UnaryFloat<float>(u.op, u.dtype, buf);
  } else {
    std::vector<int64_t> x(u.count);
    LoadInts(buf.data(), u.dtype, u.count, x.data());
    for (int64_t& v : x) v = ApplyUnaryI(u.op, v, u.dtype);
    StoreInts(buf.data(), u.dtype, u.count, x.data());
  }
  return WriteBytes(vm, u.dst, buf, "dst");
}

Status ExecuteVpuBinaryOrCompare(SparseMemory& vm, const Instruction& inst) {
  bool cmp = inst.opcode == Opcode::kVpuCompare;
  DType dt;
  uint64_t dst, a_addr, b_addr, rows, cols;
  Broadcast ab, bb;
  BinaryOp bop{};
  CompareOp cop{};
  if (cmp) {
    auto x = inst.As<op::VpuCompare>();
    dt = x.dtype, dst = x.dst, a_addr = x.a, b_addr = x.b, rows = x.rows, cols = x.cols;
    ab = x.a_bcast, bb = x.b_bcast, cop = x.op;
  } else {
    auto x = inst.As<op::VpuBinary>();
    dt = x.dtype, dst = x.dst, a_addr = x.a, b_addr = x.b, rows = x.rows, cols = x.cols;
    ab = x.a_bcast, bb = x.b_bcast, bop = x.op;
    if (!BinarySupports(bop, dt)) {
      return InvalidArgument(fmt::format("op={} is not defined for {}", Name(bop), Name(dt)));
    }
  }
  if (rows > vm.capacity() || cols > vm.capacity() || rows * cols > vm.capacity()) {
    return InvalidArgument(fmt::format("a {}x{} region does not fit in VMEM", rows, cols));
  }
  TPUSIM_ASSIGN_OR_RETURN(
      std::string av, ReadElems(vm, a_addr, BroadcastOperandElements(ab, rows, cols), dt, "a"));
  TPUSIM_ASSIGN_OR_RETURN(
      std::string bv, ReadElems(vm, b_addr, BroadcastOperandElements(bb, rows, cols), dt, "b"));
  const Operand2 shape{rows, cols, StepsOf(ab, cols), StepsOf(bb, cols)};
  std::string out;
  if (dt == DType::kF64) {
    out = BinaryOrCompareFloat<double>(cmp, bop, cop, dt, shape, av, bv);
  } else if (IsFloat(dt)) {
    out = BinaryOrCompareFloat<float>(cmp, bop, cop, dt, shape, av, bv);
  } else {
    std::vector<int64_t> x(av.size() / DTypeBytes(dt)), y(bv.size() / DTypeBytes(dt));
    LoadInts(av.data(), dt, x.size(), x.data());
    LoadInts(bv.data(), dt, y.size(), y.data());
    if (cmp) {
      out = MapRegion<char>(shape, x, y, [cop, dt](int64_t a, int64_t b) -> char {
        return CompareI(cop, a, b, dt) ? 1 : 0;
      });
    } else {
      std::vector<int64_t> z = MapIntBinary(bop, dt, shape, x, y);
      out.assign(z.size() * DTypeBytes(dt), '\0');
      StoreInts(out.data(), dt, z.size(), z.data());
    }
  }
  return WriteBytes(vm, dst, out, "dst");
}

Status ExecuteVpuSelect(SparseMemory& vm, const Instruction& inst) {
  auto s = inst.As<op::VpuSelect>();
  if (s.rows > vm.capacity() || s.cols > vm.capacity() || s.rows * s.cols > vm.capacity()) {
    return InvalidArgument(fmt::format("a {}x{} region does not fit in VMEM", s.rows, s.cols));
  }
  TPUSIM_ASSIGN_OR_RETURN(
      std::string pv, ReadElems(vm, s.pred, BroadcastOperandElements(s.pred_bcast, s.rows, s.cols),
                                DType::kPred, "pred"));
  TPUSIM_ASSIGN_OR_RETURN(
      std::string av,
      ReadElems(vm, s.a, BroadcastOperandElements(s.a_bcast, s.rows, s.cols), s.dtype, "a"));
  TPUSIM_ASSIGN_OR_RETURN(
      std::string bv,
      ReadElems(vm, s.b, BroadcastOperandElements(s.b_bcast, s.rows, s.cols), s.dtype, "b"));
  const uint64_t eb = DTypeBytes(s.dtype);
  std::string out(s.rows * s.cols * eb, '\0');
  for (uint64_t r = 0; r < s.rows; ++r) {
    for (uint64_t c = 0; c < s.cols; ++c) {
      const bool take_a = pv[BroadcastOperandIndex(s.pred_bcast, r, c, s.cols)] != 0;
      const char* from = take_a ? av.data() + BroadcastOperandIndex(s.a_bcast, r, c, s.cols) * eb
                                : bv.data() + BroadcastOperandIndex(s.b_bcast, r, c, s.cols) * eb;
      std::memcpy(out.data() + (r * s.cols + c) * eb, from, eb);
    }
  }
  return WriteBytes(vm, s.dst, out, "dst");
}

Status ExecuteVpuRngBits(SparseMemory& vm, const Instruction& inst) {
  auto g = inst.As<op::VpuRngBits>();
  TPUSIM_ASSIGN_OR_RETURN(std::string st, ReadElems(vm, g.state, 2, DType::kU64, "state"));
  uint64_t key, ctr;
  std::memcpy(&key, st.data(), 8);
  std::memcpy(&ctr, st.data() + 8, 8);
  const uint64_t blocks = (g.count + 3) / 4;
  std::string out(g.count * 4, '\0');
  for (uint64_t b = 0; b < blocks; ++b) {
    const uint64_t c = ctr + b;  // mod 2^64
    const std::array<uint32_t, 4> r =
        Philox4x32({static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32),
                    static_cast<uint32_t>(b >> 32), 0u},
                   {static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32)});
    for (uint64_t j = 0; j < 4 && 4 * b + j < g.count; ++j) {
      std::memcpy(out.data() + (4 * b + j) * 4, &r[j], 4);
    }
  }
  TPUSIM_RETURN_IF_ERROR(WriteBytes(vm, g.dst, out, "dst"));
  const uint64_t next = ctr + blocks;
  std::memcpy(st.data() + 8, &next, 8);
  return WriteBytes(vm, g.state, st, "state");
}

Status ExecuteVpuConvert(SparseMemory& vm, const Instruction& inst) {
  auto v = inst.As<op::VpuConvert>();
  TPUSIM_ASSIGN_OR_RETURN(std::string in, ReadElems(vm, v.src, v.count, v.src_dtype, "src"));
  const int ib = DTypeBytes(v.src_dtype), ob = DTypeBytes(v.dtype);
  std::string out(v.count * ob, '\0');
  for (uint64_t i = 0; i < v.count; ++i) {
    const char* p = in.data() + i * ib;
    char* q = out.data() + i * ob;
    if (v.src_dtype == DType::kF64 || v.dtype == DType::kF64) {
      ConvertF64Element(p, v.src_dtype, q, v.dtype);
    } else if (IsFloat(v.src_dtype)) {
      const float x = LoadFloat(p, v.src_dtype);
      if (IsFloat(v.dtype)) {
        StoreFloat(q, v.dtype, x);
      } else {
        StoreInt(q, v.dtype, FloatToInt(x, v.dtype));  // saturating; pred is x != 0
      }
    } else {
      const int64_t x = LoadInt(p, v.src_dtype);
      if (IsFloat(v.dtype)) {
        StoreFloat(q, v.dtype, IntToFloat(x, v.src_dtype, v.dtype));
      } else {
        StoreInt(q, v.dtype, x);  // keeps the low bits; pred is x != 0
      }
    }
  }
  return WriteBytes(vm, v.dst, out, "dst");
}

Status ExecuteVpuReduce(SparseMemory& vm, const Instruction& inst) {
  auto r = inst.As<op::VpuReduce>();
  if (r.rows * r.cols > vm.capacity() || r.rows > vm.capacity() || r.cols > vm.capacity()) {
    return InvalidArgument(fmt::format("a {}x{} region does not fit in VMEM", r.rows, r.cols));
  }
  if (r.rows == 0 || r.cols == 0) return InvalidArgument("rows and cols must be >= 1");
  TPUSIM_ASSIGN_OR_RETURN(std::string in,
                          ReadElems(vm, r.src, r.rows * r.cols, r.dtype, "src"));
  const int eb = DTypeBytes(r.dtype);
  // outer x inner: the result index and the reduced index for each axis.
  uint64_t outs = r.axis == ReduceAxis::kLanes      ? r.rows
                  : r.axis == ReduceAxis::kSublanes ? r.cols
                                                    : 1;
  uint64_t inner = (r.rows * r.cols) / outs;
  std::string out(outs * eb, '\0');
  if (r.acc) {  // each result continues from its dst value
    TPUSIM_ASSIGN_OR_RETURN(out, ReadElems(vm, r.dst, outs, r.dtype, "dst"));
  }
  for (uint64_t o = 0; o < outs; ++o) {
    auto at = [&](uint64_t i) -> const char* {
      uint64_t idx = r.axis == ReduceAxis::kLanes      ? o * r.cols + i
                     : r.axis == ReduceAxis::kSublanes ? i * r.cols + o
                                                       : i;
      return in.data() + idx * eb;
    };
    char* res = out.data() + o * eb;
    if (r.dtype == DType::kF64) {
      double acc = r.acc ? ReduceFloat(r.op, LoadF64(res), LoadF64(at(0))) : LoadF64(at(0));
      for (uint64_t i = 1; i < inner; ++i) acc = ReduceFloat(r.op, acc, LoadF64(at(i)));
      std::memcpy(res, &acc, sizeof acc);
    } else if (IsFloat(r.dtype)) {
      float acc = r.acc ? ReduceFloat(r.op, LoadFloat(res, r.dtype), LoadFloat(at(0), r.dtype))
                        : LoadFloat(at(0), r.dtype);
      for (uint64_t i = 1; i < inner; ++i) acc = ReduceFloat(r.op, acc, LoadFloat(at(i), r.dtype));
      StoreFloat(res, r.dtype, acc);
    } else {
      const int64_t x0 = LoadInt(at(0), r.dtype);
      int64_t acc = r.acc ? ReduceI(r.op, LoadInt(res, r.dtype), x0, r.dtype) : x0;
      for (uint64_t i = 1; i < inner; ++i) {
        acc = ReduceI(r.op, acc, LoadInt(at(i), r.dtype), r.dtype);
      }
      StoreInt(res, r.dtype, acc);
    }
  }
  return WriteBytes(vm, r.dst, out, "dst");
}

Status ExecuteVpuBroadcast(SparseMemory& vm, const Instruction& inst) {
  auto b = inst.As<op::VpuBroadcast>();
  if (b.mode == Broadcast::kNone) return InvalidArgument("mode must be scalar, row or col");
  if (b.rows * b.cols > vm.capacity() || b.rows > vm.capacity() || b.cols > vm.capacity()) {
    return InvalidArgument(fmt::format("a {}x{} region does not fit in VMEM", b.rows, b.cols));
  }
  TPUSIM_ASSIGN_OR_RETURN(
      std::string in,
      ReadElems(vm, b.src, BroadcastOperandElements(b.mode, b.rows, b.cols), b.dtype, "src"));
  const int eb = DTypeBytes(b.dtype);
  std::string out(b.rows * b.cols * eb, '\0');
  for (uint64_t r = 0; r < b.rows; ++r) {
    for (uint64_t col = 0; col < b.cols; ++col) {
      std::memcpy(out.data() + (r * b.cols + col) * eb,
                  in.data() + BroadcastOperandIndex(b.mode, r, col, b.cols) * eb, eb);
    }
  }
  return WriteBytes(vm, b.dst, out, "dst");
}

Status ExecuteXluTranspose(SparseMemory& vm, const Instruction& inst) {
  auto t = inst.As<op::XluTranspose>();
  if (t.rows * t.cols > vm.capacity() || t.rows > vm.capacity() || t.cols > vm.capacity()) {
    return InvalidArgument(fmt::format("a {}x{} region does not fit in VMEM", t.rows, t.cols));
  }
  TPUSIM_ASSIGN_OR_RETURN(std::string in,
                          ReadElems(vm, t.src, t.rows * t.cols, t.dtype, "src"));
  const int eb = DTypeBytes(t.dtype);
  std::string out(in.size(), '\0');
  for (uint64_t r = 0; r < t.rows; ++r) {
    for (uint64_t col = 0; col < t.cols; ++col) {
      std::memcpy(out.data() + (col * t.rows + r) * eb, in.data() + (r * t.cols + col) * eb,
                  eb);
    }
  }
  return WriteBytes(vm, t.dst, out, "dst");
}

Status ExecuteVpuCopy(SparseMemory& vm, const Instruction& inst) {
  auto cp = inst.As<op::VpuCopy>();
  const int64_t eb = DTypeBytes(cp.dtype);
  uint64_t total = cp.n0 * cp.n1 * cp.n2;  // each < 2^24, product < 2^72 is checked below
  if (cp.n0 > vm.capacity() || cp.n1 > vm.capacity() || cp.n2 > vm.capacity() ||
      cp.n0 * cp.n1 > vm.capacity() || total > vm.capacity()) {
    return InvalidArgument("copy larger than VMEM");
  }
  std::string buf(total * eb, '\0');
  auto addr = [&](uint64_t base, int64_t s0, int64_t s1, int64_t s2, uint64_t i0, uint64_t i1,
                  uint64_t i2, uint64_t& out) -> Status {
    // |i| < 2^24 and |s| < 2^31 per term, eb <= 4, base < 2^32: no int64 overflow.
    int64_t off = (static_cast<int64_t>(i2) * s2 + static_cast<int64_t>(i1) * s1 +
                   static_cast<int64_t>(i0) * s0) *
                      eb +
                  static_cast<int64_t>(base);
    if (off < 0 || static_cast<uint64_t>(off) + eb > vm.capacity()) {
      return InvalidArgument(fmt::format("element ({}, {}, {}) is outside VMEM", i2, i1, i0));
    }
    out = static_cast<uint64_t>(off);
    return OkStatus();
  };
  size_t k = 0;
  for (uint64_t i2 = 0; i2 < cp.n2; ++i2) {
    for (uint64_t i1 = 0; i1 < cp.n1; ++i1) {
      for (uint64_t i0 = 0; i0 < cp.n0; ++i0, ++k) {
        uint64_t a;
        TPUSIM_RETURN_IF_ERROR(addr(cp.src, cp.src_s0, cp.src_s1, cp.src_s2, i0, i1, i2, a));
        TPUSIM_RETURN_IF_ERROR(vm.Read(a, buf.data() + k * eb, eb));
      }
    }
  }
  k = 0;
  for (uint64_t i2 = 0; i2 < cp.n2; ++i2) {
    for (uint64_t i1 = 0; i1 < cp.n1; ++i1) {
      for (uint64_t i0 = 0; i0 < cp.n0; ++i0, ++k) {
        uint64_t a;
        TPUSIM_RETURN_IF_ERROR(addr(cp.dst, cp.dst_s0, cp.dst_s1, cp.dst_s2, i0, i1, i2, a));
        TPUSIM_RETURN_IF_ERROR(vm.Write(a, buf.data() + k * eb, eb));
      }
    }
  }
  return OkStatus();
}

Status ExecuteVpuFill(SparseMemory& vm, const Instruction& inst) {
  auto f = inst.As<op::VpuFill>();
  if (f.count > vm.capacity()) return InvalidArgument("fill larger than VMEM");
  const int eb = DTypeBytes(f.dtype);
  std::string one(eb, '\0');
  if (IsFloat(f.dtype)) {
    StoreFloat(one.data(), f.dtype, std::bit_cast<float>(f.value));
  } else {
    // The 32-bit immediate, sign-extended for a 64-bit type.
    StoreInt(one.data(), f.dtype, static_cast<int32_t>(f.value));
  }
  std::string out;
  out.reserve(f.count * eb);
  for (uint64_t i = 0; i < f.count; ++i) out += one;
  return WriteBytes(vm, f.dst, out, "dst");
}

Status ExecuteVpuIota(SparseMemory& vm, const Instruction& inst) {
  auto io = inst.As<op::VpuIota>();
  if (io.rows * io.cols > vm.capacity() || io.rows > vm.capacity() || io.cols > vm.capacity()) {
    return InvalidArgument(
        fmt::format("a {}x{} region does not fit in VMEM", io.rows, io.cols));
  }
  const int eb = DTypeBytes(io.dtype);
  std::string out(io.rows * io.cols * eb, '\0');
  for (uint64_t r = 0; r < io.rows; ++r) {
    for (uint64_t col = 0; col < io.cols; ++col) {
      uint64_t v = io.axis == ReduceAxis::kLanes      ? col
                   : io.axis == ReduceAxis::kSublanes ? r
                                                      : r * io.cols + col;
      char* p = out.data() + (r * io.cols + col) * eb;
      if (IsFloat(io.dtype)) {
        StoreFloat(p, io.dtype, static_cast<float>(v));
      } else {
        StoreInt(p, io.dtype, static_cast<int64_t>(v));
      }
    }
  }
  return WriteBytes(vm, io.dst, out, "dst");
}
}  // namespace

Status ExecuteVector(MachineState& state, int core, const Instruction& inst) {
  SparseMemory& vm = state.vmem(core);
  switch (inst.opcode) {
    case Opcode::kVpuUnary:
      return ExecuteVpuUnary(vm, inst);
    case Opcode::kVpuBinary:
    case Opcode::kVpuCompare:
      return ExecuteVpuBinaryOrCompare(vm, inst);
    case Opcode::kVpuSelect:
      return ExecuteVpuSelect(vm, inst);
    case Opcode::kVpuRngBits:
      return ExecuteVpuRngBits(vm, inst);
    case Opcode::kVpuConvert:
      return ExecuteVpuConvert(vm, inst);
    case Opcode::kVpuReduce:
      return ExecuteVpuReduce(vm, inst);
    case Opcode::kVpuBroadcast:
      return ExecuteVpuBroadcast(vm, inst);
    case Opcode::kXluTranspose:
      return ExecuteXluTranspose(vm, inst);
    case Opcode::kVpuCopy:
      return ExecuteVpuCopy(vm, inst);
    case Opcode::kVpuFill:
      return ExecuteVpuFill(vm, inst);
    case Opcode::kVpuIota:
      return ExecuteVpuIota(vm, inst);
    default:
      break;
  }
  TPUSIM_CHECK(false) << "ExecuteVector: not a VPU/XLU instruction: " << Mnemonic(inst.opcode);
  return OkStatus();
}

namespace {

// [lo, hi) element offsets of a strided 3-D walk with signed strides.
std::pair<int64_t, int64_t> StridedRange(int64_t n0, int64_t n1, int64_t n2, int64_t s0, int64_t s1,
                                         int64_t s2) {
  int64_t lo = 0, hi = 0;
  for (auto [n, s] : {std::pair{n0, s0}, std::pair{n1, s1}, std::pair{n2, s2}}) {
    const int64_t far = (std::max<int64_t>(n, 1) - 1) * s;
    if (far < 0) lo += far;
    if (far > 0) hi += far;
  }
  return {lo, hi + 1};
}

// The VMEM region of a [rows, cols] operand at `addr` read with broadcast `mode` (types.h).
Region BroadcastOperandRegion(int core, uint64_t addr, Broadcast mode, uint64_t rows,
                              uint64_t cols, DType dtype) {
  return VmemRegion(core, addr, BroadcastOperandElements(mode, rows, cols) * ElemBytes(dtype));
}

// The regions of an instruction of the two-operand shape (VpuBinary, VpuCompare, and VpuSelect's
// a and b): operands a and b read with their broadcasts, the [rows, cols] dst written in
// `dst_dtype` (default: the operands' dtype).
template <typename Op>
void AddTwoOperandRegions(Footprint& f, int core, const Op& o, std::optional<DType> dst_dtype) {
  f.reads.push_back(BroadcastOperandRegion(core, o.a, o.a_bcast, o.rows, o.cols, o.dtype));
  f.reads.push_back(BroadcastOperandRegion(core, o.b, o.b_bcast, o.rows, o.cols, o.dtype));
  f.writes.push_back(
      VmemRegion(core, o.dst, o.rows * o.cols * ElemBytes(dst_dtype.value_or(o.dtype))));
}

}  // namespace

Footprint VectorFootprint(const Instruction& inst, int core) {
  Footprint f;
  switch (inst.opcode) {
    case Opcode::kVpuUnary: {
      auto o = inst.As<op::VpuUnary>();
      f.reads.push_back(VmemRegion(core, o.src, o.count * ElemBytes(o.dtype)));
      f.writes.push_back(VmemRegion(core, o.dst, o.count * ElemBytes(o.dtype)));
      break;
    }
    case Opcode::kVpuBinary:
      AddTwoOperandRegions(f, core, inst.As<op::VpuBinary>(), std::nullopt);
      break;
    case Opcode::kVpuCompare:
      AddTwoOperandRegions(f, core, inst.As<op::VpuCompare>(), DType::kPred);
      break;
    case Opcode::kVpuSelect: {
      auto o = inst.As<op::VpuSelect>();
      f.reads.push_back(
          BroadcastOperandRegion(core, o.pred, o.pred_bcast, o.rows, o.cols, DType::kPred));
      AddTwoOperandRegions(f, core, o, std::nullopt);
      break;
    }
    case Opcode::kVpuRngBits: {
      auto o = inst.As<op::VpuRngBits>();
      f.reads.push_back(VmemRegion(core, o.state, 16));
      f.writes.push_back(VmemRegion(core, o.state, 16));
      f.writes.push_back(VmemRegion(core, o.dst, o.count * 4));
      break;
    }
    case Opcode::kVpuConvert: {
      auto o = inst.As<op::VpuConvert>();
      f.reads.push_back(VmemRegion(core, o.src, o.count * ElemBytes(o.src_dtype)));
      f.writes.push_back(VmemRegion(core, o.dst, o.count * ElemBytes(o.dtype)));
      break;
    }
    case Opcode::kVpuReduce: {
      auto o = inst.As<op::VpuReduce>();
      uint64_t out = o.axis == ReduceAxis::kLanes      ? o.rows
                     : o.axis == ReduceAxis::kSublanes ? o.cols
                                                       : 1;
      f.reads.push_back(VmemRegion(core, o.src, o.rows * o.cols * ElemBytes(o.dtype)));
      if (o.acc) f.reads.push_back(VmemRegion(core, o.dst, out * ElemBytes(o.dtype)));
      f.writes.push_back(VmemRegion(core, o.dst, out * ElemBytes(o.dtype)));
      break;
    }
    case Opcode::kVpuBroadcast: {
      auto o = inst.As<op::VpuBroadcast>();
      f.reads.push_back(BroadcastOperandRegion(core, o.src, o.mode, o.rows, o.cols, o.dtype));
      f.writes.push_back(VmemRegion(core, o.dst, o.rows * o.cols * ElemBytes(o.dtype)));
      break;
    }
    case Opcode::kXluTranspose: {
      auto o = inst.As<op::XluTranspose>();
      f.reads.push_back(VmemRegion(core, o.src, o.rows * o.cols * ElemBytes(o.dtype)));
      f.writes.push_back(VmemRegion(core, o.dst, o.rows * o.cols * ElemBytes(o.dtype)));
      break;
    }
    case Opcode::kVpuCopy: {
      auto o = inst.As<op::VpuCopy>();
      const int64_t n0 = static_cast<int64_t>(o.n0), n1 = static_cast<int64_t>(o.n1),
                    n2 = static_cast<int64_t>(o.n2),
                    size = static_cast<int64_t>(ElemBytes(o.dtype));
      auto [slo, shi] = StridedRange(n0, n1, n2, o.src_s0, o.src_s1, o.src_s2);
      auto [dlo, dhi] = StridedRange(n0, n1, n2, o.dst_s0, o.dst_s1, o.dst_s2);
      // Negative offsets would be out of bounds (the data path reports it); clamp the region at 0.
      auto region = [&](uint64_t base, int64_t lo, int64_t hi) {
        int64_t a = static_cast<int64_t>(base) + lo * size;
        int64_t b = static_cast<int64_t>(base) + hi * size;
        a = std::max<int64_t>(a, 0);
        b = std::max<int64_t>(b, a + 1);
        return VmemRegion(core, static_cast<uint64_t>(a), static_cast<uint64_t>(b - a));
      };
      f.reads.push_back(region(o.src, slo, shi));
      f.writes.push_back(region(o.dst, dlo, dhi));
      break;
    }
    case Opcode::kVpuFill: {
      auto o = inst.As<op::VpuFill>();
      f.writes.push_back(VmemRegion(core, o.dst, o.count * ElemBytes(o.dtype)));
      break;
    }
    case Opcode::kVpuIota: {
      auto o = inst.As<op::VpuIota>();
      f.writes.push_back(VmemRegion(core, o.dst, o.rows * o.cols * ElemBytes(o.dtype)));
      break;
    }
    default:
      TPUSIM_CHECK(false) << "VectorFootprint: " << Mnemonic(inst.opcode);
  }
  return f;
}

}  // namespace tpusim::isa
