#include "hlo/eval/kernels/rng_xla.h"

#include <fmt/format.h>

#include <array>
#include <cstring>
#include <vector>

#include "common/philox.h"
#include "common/threefry.h"

namespace tpusim::hlo {
namespace {

std::array<uint32_t, 2> Words(uint64_t v) {
  return {static_cast<uint32_t>(v), static_cast<uint32_t>(v >> 32)};
}

uint64_t Join(uint32_t lo, uint32_t hi) {
  return static_cast<uint64_t>(lo) | (static_cast<uint64_t>(hi) << 32);
}

// Stores the low BitWidth(t) bits of `v` as element i of `values`.
void Store(Literal& values, int64_t i, uint64_t v) {
  const int bytes = BitWidth(values.element_type()) / 8;
  std::memcpy(values.mutable_raw() + i * bytes, &v, static_cast<size_t>(bytes));  // little-endian
}

// rng_three_fry: fills `values`, returns the new counter.
uint64_t ThreeFry(uint64_t key, uint64_t counter, Literal& values) {
  const std::array<uint32_t, 2> k = Words(key);
  const Shape& shape = values.shape();
  const int64_t n = shape.ElementCount();
  if (BitWidth(shape.element_type()) == 64) {
    for (int64_t i = 0; i < n; ++i) {
      const std::array<uint32_t, 2> w = Threefry2x32(Words(counter + static_cast<uint64_t>(i)), k);
      Store(values, i, Join(w[0], w[1]));
    }
    return counter + static_cast<uint64_t>(n);
  }
  const std::vector<int64_t>& dims = shape.dimensions();
  const int64_t split = ThreeFrySplitDimension(dims);
  if (split < 0) {  // a scalar: half shape [1], word 0
    Store(values, 0, Threefry2x32(Words(counter), k)[0]);
    return counter + 1;
  }
  std::vector<int64_t> half = dims;
  half[static_cast<size_t>(split)] = (dims[static_cast<size_t>(split)] + 1) / 2;
  int64_t half_count = 1;
  for (int64_t d : half) half_count *= d;
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t h = 0;  // row-major index in the half shape
    for (size_t d = 0; d < dims.size(); ++d) {
      const int64_t x = static_cast<int64_t>(d) == split ? index[d] / 2 : index[d];
      h = h * half[d] + x;
    }
    const std::array<uint32_t, 2> w = Threefry2x32(Words(counter + static_cast<uint64_t>(h)), k);
    Store(values, i, w[static_cast<size_t>(index[static_cast<size_t>(split)] % 2)]);
    for (size_t d = dims.size(); d-- > 0;) {  // next row-major index
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
  return counter + static_cast<uint64_t>(half_count);
}

// rng_philox: fills `values`, advances the 128-bit counter {low, high}.
void Philox(uint64_t key, std::array<uint64_t, 2>& counter, Literal& values) {
  const std::array<uint32_t, 2> k = Words(key);
  const int64_t n = values.element_count();
  const bool wide = BitWidth(values.element_type()) == 64;
  const int64_t per_block = wide ? 2 : 4;
  const int64_t blocks = (n + per_block - 1) / per_block;
  for (int64_t b = 0; b < blocks; ++b) {
    const uint64_t lo = counter[0] + static_cast<uint64_t>(b);
    const uint64_t hi = counter[1] + (lo < counter[0] ? 1 : 0);
    const std::array<uint32_t, 2> l = Words(lo), h = Words(hi);
    const std::array<uint32_t, 4> w = Philox4x32({l[0], l[1], h[0], h[1]}, k);
    for (int64_t j = 0; j < per_block && b * per_block + j < n; ++j) {
      const auto s = static_cast<size_t>(j);
      Store(values, b * per_block + j, wide ? Join(w[2 * s], w[2 * s + 1]) : w[s]);
    }
  }
  const uint64_t lo = counter[0] + static_cast<uint64_t>(blocks);
  counter = {lo, counter[1] + (lo < counter[0] ? 1 : 0)};
}

}  // namespace

std::string XlaRngUnsupported(RandomAlgorithm algorithm, const Shape& state, const Shape& bits) {
  const bool philox = algorithm == RandomAlgorithm::kPhilox;
  const int64_t n = state.IsArray() && state.rank() == 1 ? state.dimensions(0) : -1;
  if (!state.IsArray() || state.element_type() != PrimitiveType::kU64 ||
      (philox ? n != 2 && n != 3 : n != 2)) {
    return fmt::format("the state is {}; XLA's {} takes u64[{}]", state.ToString(false),
                       RandomAlgorithmName(algorithm), philox ? "2] or u64[3" : "2");
  }
  const PrimitiveType t = bits.IsArray() ? bits.element_type() : PrimitiveType::kInvalid;
  if (t != PrimitiveType::kU8 && t != PrimitiveType::kU16 && t != PrimitiveType::kU32 &&
      t != PrimitiveType::kU64) {
    return fmt::format("{} random values (XLA's generator writes u8, u16, u32 or u64 bits)",
                       bits.ToString(false));
  }
  return "";
}

int64_t ThreeFrySplitDimension(const std::vector<int64_t>& dims) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] % 2 == 0) return static_cast<int64_t>(i);
  }
  int64_t split = dims.empty() ? -1 : 0;
  for (size_t i = 1; i < dims.size(); ++i) {
    if (dims[i] > dims[static_cast<size_t>(split)]) split = static_cast<int64_t>(i);
  }
  return split;
}

StatusOr<Literal> XlaRngBitGenerator(const Literal& state, const Shape& out,
                                     RandomAlgorithm algorithm, const KernelOptions& options) {
  if (!out.IsTuple() || out.tuple_shapes_size() != 2 ||
      !out.tuple_shapes(0).Compatible(state.shape())) {
    return InvalidArgument(fmt::format("rng-bit-generator: state {} / result {} are not "
                                       "(u64[n], (u64[n], bits))",
                                       state.shape().ToString(false), out.ToString(false)));
  }
  if (const std::string why = XlaRngUnsupported(algorithm, state.shape(), out.tuple_shapes(1));
      !why.empty()) {
    return Unimplemented("rng-bit-generator algorithm=" +
                         std::string(RandomAlgorithmName(algorithm)) + ": " + why);
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal values, Literal::Create(out.tuple_shapes(1), options.max_bytes));
  Literal new_state = state;
  uint64_t* st = new_state.mutable_data<uint64_t>();
  if (algorithm == RandomAlgorithm::kThreeFry) {
    st[1] = ThreeFry(st[0], st[1], values);
  } else {
    const bool three = state.element_count() == 3;
    std::array<uint64_t, 2> counter = {st[1], three ? st[2] : st[0]};
    Philox(st[0], counter, values);
    st[1] = counter[0];
    if (three) st[2] = counter[1];
  }
  new_state.ReshapeInPlace(out.tuple_shapes(0));
  return Literal::MakeTuple({std::move(new_state), std::move(values)});
}

}  // namespace tpusim::hlo
