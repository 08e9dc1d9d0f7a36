#include "compiler/passes/rng_bit_generator_expander.h"

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "compiler/passes/hlo_builder.h"
#include "hlo/eval/kernels/rng_xla.h"

namespace tpusim::compiler {
namespace {

using hlo::ComparisonDirection;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;
using hlo::Shape;

constexpr PrimitiveType kU32 = PrimitiveType::kU32;
constexpr PrimitiveType kU64 = PrimitiveType::kU64;

bool Expandable(const HloInstruction& r) {
  if (r.opcode() != HloOpcode::kRngBitGenerator ||
      r.rng_algorithm() == hlo::RandomAlgorithm::kDefault || r.operand_count() != 1 ||
      !r.shape().IsTuple() || r.shape().tuple_shapes_size() != 2) {
    return false;
  }
  const Shape& bits = r.shape().tuple_shapes(1);
  return hlo::XlaRngUnsupported(r.rng_algorithm(), r.operand(0)->shape(), bits).empty() &&
         bits.ElementCount() > 0;
}

// The HLO of XLA's generators, on 1-D arrays of n elements unless said otherwise.
class Gen {
 public:
  explicit Gen(HloBuilder& b) : b_(b) {}

  HloInstruction* Scalar(PrimitiveType t, uint64_t v) {
    return b_.ScalarConstant(t, static_cast<double>(v), "c");
  }
  HloInstruction* Splat(HloInstruction* scalar, int64_t n) {
    return b_.Broadcast(scalar, Shape(scalar->shape().element_type(), {n}), {}, "splat");
  }
  HloInstruction* Splat(PrimitiveType t, uint64_t v, int64_t n) { return Splat(Scalar(t, v), n); }
  HloInstruction* Op(HloOpcode op, HloInstruction* a, HloInstruction* b) {
    return b_.Binary(op, a, b, "rbg");
  }
  HloInstruction* Add(HloInstruction* a, HloInstruction* b) { return Op(HloOpcode::kAdd, a, b); }
  HloInstruction* Xor(HloInstruction* a, HloInstruction* b) { return Op(HloOpcode::kXor, a, b); }
  // A u64 scalar or array shifted right by 32 (a constant of x's dimensions).
  HloInstruction* High(HloInstruction* x) {
    HloInstruction* k = Scalar(kU64, 32);
    if (x->shape().rank() != 0) k = Splat(k, x->shape().dimensions(0));
    return b_.Convert(Op(HloOpcode::kShiftRightLogical, x, k), kU32, "hi");
  }
  HloInstruction* Low(HloInstruction* x) { return b_.Convert(x, kU32, "lo"); }
  // u64 lo | hi << 32 of two u32[n].
  HloInstruction* Join(HloInstruction* lo, HloInstruction* hi) {
    const int64_t n = lo->shape().dimensions(0);
    HloInstruction* h = Op(HloOpcode::kShiftLeft, b_.Convert(hi, kU64, "wide"), Splat(kU64, 32, n));
    return Op(HloOpcode::kOr, b_.Convert(lo, kU64, "wide"), h);
  }
  HloInstruction* Iota64(int64_t n) {
    auto i = std::make_unique<HloInstruction>(HloOpcode::kIota, Shape(kU64, {n}),
                                              b_.UniqueName("rbg.iota"));
    i->set_iota_dimension(0);
    return b_.Add(std::move(i));
  }
  // Element `i` of u64[m] `state` as a u64[] scalar.
  HloInstruction* Element(HloInstruction* state, int64_t i) {
    return b_.Reshape(b_.Slice(state, {i}, {i + 1}, {1}, "state"), {}, "state");
  }
  // {high ? x + 1 : x} where `carry`: the high word of a 128-bit add.
  HloInstruction* Carry(HloInstruction* carry, HloInstruction* hi) {
    HloInstruction* one = Scalar(kU64, 1);
    if (hi->shape().rank() != 0) one = Splat(one, hi->shape().dimensions(0));
    return b_.Select(carry, Add(hi, one), hi, "carry");
  }
  HloBuilder& b() { return b_; }

  // Threefry-2x32-20 of counters (x0, x1) under key words (k0, k1) (u32[] scalars): as
  // common/threefry.cc.
  std::array<HloInstruction*, 2> Threefry(std::array<HloInstruction*, 2> x, HloInstruction* k0,
                                          HloInstruction* k1) {
    const int64_t n = x[0]->shape().dimensions(0);
    constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
    HloInstruction* k2 = Xor(Xor(Scalar(kU32, 0x1BD11BDA), k0), k1);
    const std::array<HloInstruction*, 3> ks = {Splat(k0, n), Splat(k1, n), Splat(k2, n)};
    x = {Add(x[0], ks[0]), Add(x[1], ks[1])};
    for (int block = 0; block < 5; ++block) {
      for (int r = 0; r < 4; ++r) {
        const auto rot = static_cast<uint64_t>(kRotations[(block % 2) * 4 + r]);
        x[0] = Add(x[0], x[1]);
        HloInstruction* left = Op(HloOpcode::kShiftLeft, x[1], Splat(kU32, rot, n));
        HloInstruction* right = Op(HloOpcode::kShiftRightLogical, x[1], Splat(kU32, 32 - rot, n));
        x[1] = Xor(Op(HloOpcode::kOr, left, right), x[0]);
      }
      x[0] = Add(x[0], ks[static_cast<size_t>((block + 1) % 3)]);
      x[1] = Add(Add(x[1], ks[static_cast<size_t>((block + 2) % 3)]),
                 Splat(kU32, static_cast<uint64_t>(block + 1), n));
    }
    return x;
  }

  // Philox-4x32-10 of counters x under key words (k0, k1) (u32[] scalars): as common/philox.cc,
  // the 32x32 -> 64-bit products as u64 multiplies (XLA's mul_hi_low).
  std::array<HloInstruction*, 4> Philox(std::array<HloInstruction*, 4> x, HloInstruction* k0,
                                        HloInstruction* k1) {
    const int64_t n = x[0]->shape().dimensions(0);
    constexpr uint64_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u, kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
    for (uint64_t round = 0; round < 10; ++round) {
      HloInstruction* key0 = Splat(Add(k0, Scalar(kU32, (kW0 * round) & 0xFFFFFFFFu)), n);
      HloInstruction* key1 = Splat(Add(k1, Scalar(kU32, (kW1 * round) & 0xFFFFFFFFu)), n);
      HloInstruction* p0 =
          Op(HloOpcode::kMultiply, b_.Convert(x[0], kU64, "wide"), Splat(kU64, kM0, n));
      HloInstruction* p1 =
          Op(HloOpcode::kMultiply, b_.Convert(x[2], kU64, "wide"), Splat(kU64, kM1, n));
      x = {Xor(Xor(High(p1), x[1]), key0), Low(p1), Xor(Xor(High(p0), x[3]), key1), Low(p0)};
    }
    return x;
  }

 private:
  HloBuilder& b_;
};

// `parts` (each u32[n] or u64[n]) interleaved: element j * parts + p is parts[p][j]; the first
// `count` of them in `dims`.
HloInstruction* Interleave(Gen& g, const std::vector<HloInstruction*>& parts, int64_t count,
                           const std::vector<int64_t>& dims) {
  const int64_t n = parts[0]->shape().dimensions(0);
  const auto k = static_cast<int64_t>(parts.size());
  std::vector<HloInstruction*> columns;
  for (HloInstruction* p : parts) columns.push_back(g.b().Reshape(p, {n, 1}, "column"));
  HloInstruction* flat = g.b().Reshape(g.b().Concatenate(columns, 1, "words"), {n * k}, "words");
  if (n * k != count) flat = g.b().Slice(flat, {0}, {count}, {1}, "words");
  return g.b().Reshape(flat, dims, "bits");
}

// rng_three_fry: {new counter, bits} (see hlo/eval/kernels/rng_xla.h).
std::array<HloInstruction*, 2> ThreeFry(Gen& g, HloInstruction* key, HloInstruction* counter,
                                        const Shape& bits) {
  HloBuilder& b = g.b();
  HloInstruction* k0 = g.Low(key);
  HloInstruction* k1 = g.High(key);
  const std::vector<int64_t>& dims = bits.dimensions();
  const bool wide = hlo::BitWidth(bits.element_type()) == 64;
  const int64_t split = wide ? -1 : hlo::ThreeFrySplitDimension(dims);
  std::vector<int64_t> half = dims;  // the half shape with XLA's extra dimension of 1
  if (split >= 0) {
    half[static_cast<size_t>(split)] = (dims[static_cast<size_t>(split)] + 1) / 2;
    half.insert(half.begin() + split + 1, 1);
  }
  int64_t m = 1;
  for (int64_t d : (wide ? dims : half)) m *= d;
  HloInstruction* in = g.Add(g.Splat(counter, m), g.Iota64(m));
  const std::array<HloInstruction*, 2> w = g.Threefry({g.Low(in), g.High(in)}, k0, k1);
  HloInstruction* next = g.Add(counter, g.Scalar(kU64, static_cast<uint64_t>(m)));
  if (wide) return {next, b.Reshape(g.Join(w[0], w[1]), dims, "bits")};
  if (split < 0) return {next, b.Reshape(w[0], {}, "bits")};  // a scalar: half shape [1]
  HloInstruction* both =
      b.Concatenate({b.Reshape(w[0], half, "half"), b.Reshape(w[1], half, "half")}, split + 1,
                    "halves");
  std::vector<int64_t> even = dims;
  even[static_cast<size_t>(split)] = 2 * half[static_cast<size_t>(split)];
  HloInstruction* v = b.Reshape(both, even, "bits");
  if (even != dims) {
    v = b.Slice(v, std::vector<int64_t>(dims.size(), 0), dims,
                std::vector<int64_t>(dims.size(), 1), "bits");
  }
  return {next, v};
}

// rng_philox: {new low, new high, bits} of the 128-bit counter (low, high).
std::array<HloInstruction*, 3> Philox(Gen& g, HloInstruction* key, HloInstruction* low,
                                      HloInstruction* high, const Shape& bits) {
  const int64_t count = bits.ElementCount();
  const bool wide = hlo::BitWidth(bits.element_type()) == 64;
  const int64_t per_block = wide ? 2 : 4;
  const int64_t n = (count + per_block - 1) / per_block;
  HloInstruction* lo = g.Add(g.Splat(low, n), g.Iota64(n));
  HloInstruction* carry = g.b().Compare(lo, g.Splat(low, n), ComparisonDirection::kLt, "carry");
  HloInstruction* hi = g.Carry(carry, g.Splat(high, n));
  const std::array<HloInstruction*, 4> w =
      g.Philox({g.Low(lo), g.High(lo), g.Low(hi), g.High(hi)}, g.Low(key), g.High(key));
  std::vector<HloInstruction*> parts(w.begin(), w.end());
  if (wide) parts = {g.Join(w[0], w[1]), g.Join(w[2], w[3])};
  HloInstruction* next_low = g.Add(low, g.Scalar(kU64, static_cast<uint64_t>(n)));
  HloInstruction* wrapped = g.b().Compare(next_low, low, ComparisonDirection::kLt, "carry");
  return {next_low, g.Carry(wrapped, high), Interleave(g, parts, count, bits.dimensions())};
}

void Expand(hlo::HloComputation& comp, HloInstruction* r) {
  HloBuilder b(&comp, r);
  Gen g(b);
  HloInstruction* state = r->operand(0);
  const Shape& bits = r->shape().tuple_shapes(1);
  HloInstruction* key = g.Element(state, 0);
  std::vector<HloInstruction*> next = {key};
  HloInstruction* value = nullptr;
  if (r->rng_algorithm() == hlo::RandomAlgorithm::kThreeFry) {
    const std::array<HloInstruction*, 2> out = ThreeFry(g, key, g.Element(state, 1), bits);
    next.push_back(out[0]);
    value = out[1];
  } else {
    const bool three = state->shape().dimensions(0) == 3;
    HloInstruction* high = three ? g.Element(state, 2) : key;  // XLA: Rev(state) for u64[2]
    const std::array<HloInstruction*, 3> out = Philox(g, key, g.Element(state, 1), high, bits);
    next.push_back(out[0]);
    if (three) next.push_back(out[1]);
    value = out[2];
  }
  if (value->shape().element_type() != bits.element_type()) {
    value = b.Convert(value, bits.element_type(), "narrow");  // u8/u16: the low bits
  }
  std::vector<HloInstruction*> words;
  for (HloInstruction* s : next) words.push_back(b.Reshape(s, {1}, "state"));
  HloInstruction* new_state = b.Concatenate(words, 0, "state");
  HloInstruction* t = b.Tuple({new_state, value}, "expanded");
  r->ReplaceAllUsesWith(t);
  comp.RemoveInstruction(r);
}

}  // namespace

StatusOr<bool> RngBitGeneratorExpander::Run(hlo::HloModule& module) {
  return RewriteEach(module, Expandable, Expand);
}

}  // namespace tpusim::compiler
