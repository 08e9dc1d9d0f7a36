// Elementwise maps over a literal's elements in fixed blocks (parallel.h: bit-identical for any
// thread count), shared by the elementwise and complex kernels, and the error both give for an
// opcode an element type does not define.
#pragma once

#include <fmt/format.h>

#include <cstdint>

#include "common/status.h"
#include "hlo/eval/kernels/kernel_options.h"
#include "hlo/eval/kernels/parallel.h"
#include "hlo/eval/literal.h"
#include "hlo/opcode.h"
#include "hlo/shape.h"

namespace tpusim::hlo {

/// Elements per block of a map (a cache-sized run of the output).
inline constexpr int64_t kMapBlock = int64_t{1} << 16;

/// out[i] = fn(x[i]) for every element; x holds In, out holds Out (same element count).
template <typename In, typename Out, typename F>
void MapUnary(const Literal& x, Literal& out, const KernelOptions& opt, F fn,
              int64_t block = kMapBlock) {
  const In* src = x.data<In>();
  Out* dst = out.mutable_data<Out>();
  ParallelForBlocks(x.element_count(), block, opt.threads, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) dst[i] = fn(src[i]);
  });
}

/// A function as a callable type of its own (`Call<ew::Add<T>>{}`), so that the kernels' element
/// loops inline it: a function pointer passed as F is called indirectly for every element.
template <auto Fn>
struct Call {
  template <typename... A>
  auto operator()(A... a) const {
    return Fn(a...);
  }
};

/// out[i] = fn(a[i], b[i]) for every element; a and b hold T, out holds Out.
template <typename T, typename Out, typename F>
void MapBinary(const Literal& a, const Literal& b, Literal& out, const KernelOptions& opt, F fn,
               int64_t block = kMapBlock) {
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  Out* dst = out.mutable_data<Out>();
  ParallelForBlocks(out.element_count(), block, opt.threads, [&](int64_t s, int64_t e) {
    for (int64_t i = s; i < e; ++i) dst[i] = fn(pa[i], pb[i]);
  });
}

/// Unimplemented: "'<opcode>' is not defined for element type <type>".
inline Status ElementTypeError(HloOpcode op, PrimitiveType t) {
  return Unimplemented(fmt::format("'{}' is not defined for element type {}", HloOpcodeString(op),
                                   PrimitiveTypeName(t)));
}

}  // namespace tpusim::hlo
