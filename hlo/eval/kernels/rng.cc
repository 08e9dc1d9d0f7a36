#include "hlo/eval/kernels/rng.h"

#include <fmt/format.h>

#include <array>
#include <cstring>

#include "common/philox.h"

namespace tpusim::hlo {

StatusOr<Literal> RngBitGenerator(const Literal& state, const Shape& out,
                                  const KernelOptions& options) {
  if (!out.IsTuple() || out.tuple_shapes_size() != 2 ||
      state.element_type() != PrimitiveType::kU64 || state.element_count() < 2 ||
      !out.tuple_shapes(0).Compatible(state.shape())) {
    return InvalidArgument(
        fmt::format("rng-bit-generator: state {} / result {} are not (u64[n>=2], "
                    "(u64[n], bits))",
                    state.shape().ToString(false), out.ToString(false)));
  }
  const Shape& vs = out.tuple_shapes(1);
  const int bits = BitWidth(vs.element_type());
  if (!IsInteger(vs.element_type()) || (bits != 32 && bits != 64)) {
    return Unimplemented(fmt::format("rng-bit-generator producing {} (32/64-bit integers only)",
                                     vs.ToString(false)));
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal values, Literal::Create(vs, options.max_bytes));
  const uint64_t* st = state.data<uint64_t>();
  std::array<uint32_t, 2> key{static_cast<uint32_t>(st[0]), static_cast<uint32_t>(st[0] >> 32)};
  const int64_t n = values.element_count();
  const int64_t per_block = bits == 32 ? 4 : 2;
  const int64_t blocks = (n + per_block - 1) / per_block;
  uint8_t* dst = values.mutable_raw();
  for (int64_t b = 0; b < blocks; ++b) {
    uint64_t c = st[1] + static_cast<uint64_t>(b);
    std::array<uint32_t, 4> r =
        Philox4x32({static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32),
                    static_cast<uint32_t>(b >> 32), 0u},
                   key);
    for (int64_t j = 0; j < per_block; ++j) {
      int64_t i = b * per_block + j;
      if (i >= n) break;
      if (bits == 32) {
        std::memcpy(dst + i * 4, &r[static_cast<size_t>(j)], 4);
      } else {
        uint64_t v = static_cast<uint64_t>(r[static_cast<size_t>(2 * j)]) |
                     (static_cast<uint64_t>(r[static_cast<size_t>(2 * j + 1)]) << 32);
        std::memcpy(dst + i * 8, &v, 8);
      }
    }
  }
  Literal new_state = state;
  new_state.mutable_data<uint64_t>()[1] = st[1] + static_cast<uint64_t>(blocks);
  new_state.ReshapeInPlace(out.tuple_shapes(0));
  return Literal::MakeTuple({std::move(new_state), std::move(values)});
}

}  // namespace tpusim::hlo
