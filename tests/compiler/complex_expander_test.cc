// complex-expander (compiler/passes/complex_expander.h): c64 arrays become f32 [.., 2] pairs; their
// arithmetic, dots and FFTs become real ops. The device's values are checked against references
// computed here in double precision with std::complex (a direct DFT for fft), independently of the
// pass's f32 expansion. The modules take and return real arrays (complex values made by `complex`,
// read by `real` / `imag`): the reference evaluator and its literals do not hold c64 yet.
#include "compiler/passes/complex_expander.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <numbers>
#include <string>
#include <vector>

#include "tests/compiler/compile_test_util.h"

namespace tpusim::compiler {
namespace {

using C = std::complex<double>;

bool AnyComplex(const hlo::HloModule& m) {
  for (const auto& i : m.entry_computation()->instructions()) {
    for (const hlo::Shape* leaf : i->shape().Leaves()) {
      if (hlo::IsComplex(leaf->element_type())) return true;
    }
  }
  return false;
}

// Deterministic test values in [-1, 1].
double Value(int64_t i, double phase) { return std::sin(0.73 * static_cast<double>(i) + phase); }

hlo::Literal F32(std::vector<int64_t> dims, double phase) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<float> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<float>(Value(i, phase)));
  return hlo::Literal::FromVector(std::move(dims), v);
}

std::vector<C> ComplexValues(int64_t n, double phase) {
  std::vector<C> v;
  for (int64_t i = 0; i < n; ++i) v.emplace_back(Value(i, phase), Value(i, phase + 1.3));
  return v;
}

// The values of a real output leaf.
std::vector<C> Values(const hlo::Literal& lit) {
  std::vector<C> out;
  for (int64_t i = 0; i < lit.element_count(); ++i) out.emplace_back(lit.GetAsDouble(i), 0);
  return out;
}

// Runs `text` on tpu-v4 with `args` and checks its output leaves `re` (and `im`, when >= 0)
// against the real (and imaginary) parts of `want`: |got - want| <= tol * (1 + |want|).
void ExpectOutput(const std::string& text, std::vector<hlo::Literal> args, size_t re, int im,
                  const std::vector<C>& want, double tol) {
  auto module = testing::Parse(text);
  ASSERT_NE(module, nullptr);
  std::vector<std::vector<hlo::Literal>> all;
  all.push_back(std::move(args));
  auto run = testing::CompileAndRun(*module, testing::Config("tpu-v4"), all);
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_LT(re, run->outputs.size());
  const std::vector<C> got_re = Values(run->outputs[re]);
  const std::vector<C> got_im =
      im >= 0 ? Values(run->outputs.at(static_cast<size_t>(im))) : std::vector<C>();
  ASSERT_EQ(got_re.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const double bound = tol * (1 + std::abs(want[i]));
    ASSERT_LE(std::abs(got_re[i].real() - want[i].real()), bound) << "element " << i;
    if (im >= 0) {
      ASSERT_LE(std::abs(got_im[i].real() - want[i].imag()), bound) << "element " << i;
    }
  }
}

// Parameters re, im (f32) of `dims`, from ComplexValues(n, phase).
std::vector<hlo::Literal> Parts(const std::vector<int64_t>& dims, const std::vector<C>& v) {
  std::vector<float> re, im;
  for (const C& c : v) {
    re.push_back(static_cast<float>(c.real()));
    im.push_back(static_cast<float>(c.imag()));
  }
  std::vector<hlo::Literal> out;
  out.push_back(hlo::Literal::FromVector(dims, re));
  out.push_back(hlo::Literal::FromVector(dims, im));
  return out;
}

// The reference's inputs as f32 values (what the device gets).
std::vector<C> Rounded(const std::vector<C>& v) {
  std::vector<C> out;
  for (const C& c : v) {
    out.emplace_back(static_cast<float>(c.real()), static_cast<float>(c.imag()));
  }
  return out;
}

constexpr char kArithmetic[] = R"(HloModule m
ENTRY e {
  a = f32[4,8] parameter(0)
  b = f32[4,8] parameter(1)
  c = f32[4,8] parameter(2)
  d = f32[4,8] parameter(3)
  x = c64[4,8] complex(a, b)
  y = c64[4,8] complex(c, d)
  p = c64[4,8] multiply(x, y)
  q = c64[4,8] divide(p, y)
  s = c64[4,8] subtract(q, x)
  t = c64[4,8] add(s, p)
  n = c64[4,8] negate(t)
  e1 = c64[4,8] exponential(x)
  r = f32[4,8] real(n)
  i = f32[4,8] imag(e1)
  m = f32[4,8] abs(y)
  eq = pred[4,8] compare(x, x), direction=EQ
  qr = f32[4,8] real(q)
  qi = f32[4,8] imag(q)
  ROOT out = (f32[4,8], f32[4,8], f32[4,8], pred[4,8], f32[4,8], f32[4,8])
      tuple(r, i, m, eq, qr, qi)
})";

TEST(ComplexExpanderTest, NoComplexArrayIsLeftAndASecondRunChangesNothing) {
  auto m = testing::Parse(kArithmetic);
  ASSERT_NE(m, nullptr);
  ComplexExpander pass;
  ASSERT_TRUE(pass.Run(*m).value());
  EXPECT_FALSE(AnyComplex(*m));
  EXPECT_FALSE(pass.Run(*m).value());
}

TEST(ComplexExpanderTest, ArithmeticOnTheDevice) {
  std::vector<hlo::Literal> args;
  for (int k = 0; k < 4; ++k) args.push_back(F32({4, 8}, 0.4 * k));
  std::vector<C> r, i, m, eq, q;
  for (int64_t j = 0; j < 32; ++j) {
    const auto f = [&](double phase) {
      return static_cast<double>(static_cast<float>(Value(j, phase)));
    };
    const C x(f(0), f(0.4)), y(f(0.8), f(1.2));
    const C p = x * y;
    r.emplace_back((-((p / y - x) + p)).real(), 0);
    i.emplace_back(std::exp(x).imag(), 0);
    m.emplace_back(std::abs(y), 0);
    eq.emplace_back(1, 0);
    q.push_back(p / y);
  }
  for (const auto& [leaf, want] : std::vector<std::pair<size_t, std::vector<C>>>{
           {0, r}, {1, i}, {2, m}, {3, eq}}) {
    SCOPED_TRACE(leaf);
    ExpectOutput(kArithmetic, args, leaf, -1, want, 1e-5);
  }
  ExpectOutput(kArithmetic, args, 4, 5, q, 1e-5);
}

// Complex data movement: the pairs move together (pad with a complex value included).
TEST(ComplexExpanderTest, DataMovement) {
  const std::vector<C> x = Rounded(ComplexValues(6 * 10, 0.2));
  std::vector<C> want;  // transpose to [10,6], rows 2..5, then padded by (1,-2): 1 row each side
  for (int64_t r = -1; r < 5; ++r) {
    for (int64_t c = 0; c < 8; ++c) {
      const bool pad = r < 0 || r >= 4 || c >= 6;
      want.push_back(pad ? C(1, -2) : x[static_cast<size_t>(c * 10 + (r + 2))]);
    }
  }
  ExpectOutput(R"(HloModule m
ENTRY e {
  a = f32[6,10] parameter(0)
  b = f32[6,10] parameter(1)
  x = c64[6,10] complex(a, b)
  y = c64[10,6] transpose(x), dimensions={1,0}
  s = c64[4,6] slice(y), slice={[2:6], [0:6]}
  z = c64[] constant((1, -2))
  p = c64[6,8] pad(s, z), padding=1_1x0_2
  re = f32[6,8] real(p)
  im = f32[6,8] imag(p)
  ROOT t = (f32[6,8], f32[6,8]) tuple(re, im)
})",
               Parts({6, 10}, x), 0, 1, want, 0);
}

TEST(ComplexExpanderTest, DotAndReduce) {
  const std::vector<C> x = Rounded(ComplexValues(8 * 16, 0.1));
  const std::vector<C> y = Rounded(ComplexValues(16 * 12, 0.9));
  std::vector<C> want(12);
  for (int64_t j = 0; j < 12; ++j) {
    for (int64_t i = 0; i < 8; ++i) {
      for (int64_t k = 0; k < 16; ++k) {
        want[static_cast<size_t>(j)] +=
            x[static_cast<size_t>(i * 16 + k)] * y[static_cast<size_t>(k * 12 + j)];
      }
    }
  }
  // At HIGHEST precision f32 accuracy; at DEFAULT the MXU rounds each part to bf16, as it does
  // f32 operands (relative error up to about 2^-8 per product).
  for (const auto& [precision, tol] : std::vector<std::pair<std::string, double>>{
           {", operand_precision={highest,highest}", 1e-5}, {"", 3e-2}}) {
    SCOPED_TRACE(precision);
    std::vector<hlo::Literal> args = Parts({8, 16}, x);
    for (hlo::Literal& l : Parts({16, 12}, y)) args.push_back(std::move(l));
    ExpectOutput(R"(HloModule m
add {
  a = c64[] parameter(0)
  b = c64[] parameter(1)
  ROOT s = c64[] add(a, b)
}
ENTRY e {
  xr = f32[8,16] parameter(0)
  xi = f32[8,16] parameter(1)
  yr = f32[16,12] parameter(2)
  yi = f32[16,12] parameter(3)
  x = c64[8,16] complex(xr, xi)
  y = c64[16,12] complex(yr, yi)
  d = c64[8,12] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0})" +
                     precision + R"(
  z = c64[] constant((0, 0))
  r = c64[12] reduce(d, z), dimensions={0}, to_apply=add
  re = f32[12] real(r)
  im = f32[12] imag(r)
  ROOT t = (f32[12], f32[12]) tuple(re, im)
})",
                 std::move(args), 0, 1, want, tol);
  }
}

// ---- fft against a direct DFT in double ----

// x [outer..., n at `axis`, inner...] row-major with `dims`: the DFT along `axis`, sign -1
// (forward) or +1 (inverse, scaled by 1/n).
std::vector<C> Dft(const std::vector<C>& x, const std::vector<int64_t>& dims, size_t axis,
                   bool inverse) {
  int64_t inner = 1, outer = 1;
  for (size_t d = axis + 1; d < dims.size(); ++d) inner *= dims[d];
  for (size_t d = 0; d < axis; ++d) outer *= dims[d];
  const int64_t n = dims[axis];
  std::vector<C> y(x.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t k = 0; k < n; ++k) {
        C s = 0;
        for (int64_t j = 0; j < n; ++j) {
          const double angle = (inverse ? 2 : -2) * std::numbers::pi *
                               static_cast<double>((j * k) % n) / static_cast<double>(n);
          s += x[static_cast<size_t>((o * n + j) * inner + i)] *
               C(std::cos(angle), std::sin(angle));
        }
        y[static_cast<size_t>((o * n + k) * inner + i)] = inverse ? s / static_cast<double>(n) : s;
      }
    }
  }
  return y;
}

// Over the trailing `k` dimensions of `dims`.
std::vector<C> DftN(std::vector<C> x, const std::vector<int64_t>& dims, size_t k, bool inverse) {
  for (size_t a = dims.size() - k; a < dims.size(); ++a) x = Dft(x, dims, a, inverse);
  return x;
}

// A module computing fft of `dims` (the input complex(re, im) of two f32 parameters, or one f32
// parameter for RFFT), returning the result's real and imaginary parts (its values for IRFFT).
std::string FftModule(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& out_dims,
                      const std::string& type, size_t k) {
  const auto join = [](const std::vector<int64_t>& d) {
    return fmt::format("{}", fmt::join(d, ","));
  };
  const std::vector<int64_t>& shape = type == "RFFT" ? in_dims : out_dims;
  const std::vector<int64_t> lengths(shape.end() - static_cast<int64_t>(k), shape.end());
  const std::string in = join(in_dims), out = join(out_dims);
  std::string text = "HloModule m\nENTRY e {\n";
  if (type == "RFFT") {
    text += fmt::format("  x = f32[{}] parameter(0)\n", in);
  } else {
    text += fmt::format(
        "  a = f32[{0}] parameter(0)\n  b = f32[{0}] parameter(1)\n  x = c64[{0}] complex(a, b)\n",
        in);
  }
  text += fmt::format("  f = {}[{}] fft(x), fft_type={}, fft_length={{{}}}\n",
                      type == "IRFFT" ? "f32" : "c64", out, type, join(lengths));
  if (type == "IRFFT") return text + "}\n";
  return text + fmt::format(
                    "  re = f32[{0}] real(f)\n  im = f32[{0}] imag(f)\n"
                    "  ROOT t = (f32[{0}], f32[{0}]) tuple(re, im)\n}}\n",
                    out);
}

TEST(ComplexExpanderTest, FftAndIfftOverOneToThreeDimensions) {
  const std::vector<std::pair<std::vector<int64_t>, size_t>> cases = {
      {{4, 16}, 1}, {{2, 6, 10}, 2}, {{2, 3, 4, 5}, 3}};
  for (const auto& [dims, k] : cases) {
    for (const bool inverse : {false, true}) {
      int64_t n = 1;
      for (int64_t d : dims) n *= d;
      SCOPED_TRACE(fmt::format("{} over {} dims", inverse ? "IFFT" : "FFT", k));
      const std::vector<C> x = Rounded(ComplexValues(n, 0.3));
      ExpectOutput(FftModule(dims, dims, inverse ? "IFFT" : "FFT", k), Parts(dims, x), 0, 1,
                   DftN(x, dims, k, inverse), 1e-5);
    }
  }
}

// As JAX writes jnp.fft.fft: the fft in a computation of its own, called from the entry (and
// named as its instruction). call-inliner copies it into the entry, fft_length included, and the
// called computation, unreferenced from then on, is dead code the expander does not refuse.
TEST(ComplexExpanderTest, AnFftInACalledComputationRuns) {
  const std::vector<int64_t> dims{4, 16};
  const std::vector<C> x = Rounded(ComplexValues(64, 0.9));
  const std::string text = R"(HloModule m
fft.1 {
  p = c64[4,16] parameter(0)
  ROOT fft.1 = c64[4,16] fft(p), fft_type=FFT, fft_length={16}
}
ENTRY e {
  a = f32[4,16] parameter(0)
  b = f32[4,16] parameter(1)
  x = c64[4,16] complex(a, b)
  f = c64[4,16] call(x), to_apply=fft.1
  re = f32[4,16] real(f)
  im = f32[4,16] imag(f)
  ROOT t = (f32[4,16], f32[4,16]) tuple(re, im)
})";
  ExpectOutput(text, Parts(dims, x), 0, 1, DftN(x, dims, 1, false), 1e-5);
}

TEST(ComplexExpanderTest, RfftKeepsTheNonNegativeFrequencies) {
  const std::vector<int64_t> dims{3, 8, 9};
  std::vector<C> x;
  for (int64_t i = 0; i < 3 * 8 * 9; ++i) {
    x.emplace_back(static_cast<float>(Value(i, 0.5)), 0);
  }
  const std::vector<C> full = DftN(x, dims, 2, false);
  std::vector<C> want;
  for (int64_t r = 0; r < 3 * 8; ++r) {
    for (int64_t f = 0; f < 5; ++f) want.push_back(full[static_cast<size_t>(r * 9 + f)]);
  }
  std::vector<hlo::Literal> args;
  args.push_back(F32(dims, 0.5));
  ExpectOutput(FftModule(dims, {3, 8, 5}, "RFFT", 2), std::move(args), 0, 1, want, 1e-5);
}

// IRFFT reads the Hermitian half: the spectrum of length N is X[f] for f <= N/2 and conj(X[N - f])
// above, the imaginary parts of X[0] and X[N/2] unused; the dimensions before the last are
// inverted first (numpy.fft.irfftn's order).
TEST(ComplexExpanderTest, IrfftReadsTheHermitianHalf) {
  const int64_t rows = 4 * 8, half = 5, N = 8;
  const std::vector<C> x = Rounded(ComplexValues(rows * half, 0.7));
  const std::vector<C> half_spectra = Dft(x, {4, 8, half}, 1, true);
  std::vector<C> full;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t f = 0; f < N; ++f) {
      C v = f < half ? half_spectra[static_cast<size_t>(r * half + f)]
                     : std::conj(half_spectra[static_cast<size_t>(r * half + (N - f))]);
      if (f == 0 || f == N / 2) v = C(v.real(), 0);
      full.push_back(v);
    }
  }
  std::vector<C> want = Dft(full, {4, 8, N}, 2, true);
  for (C& v : want) v = C(v.real(), 0);
  ExpectOutput(FftModule({4, 8, half}, {4, 8, N}, "IRFFT", 2), Parts({4, 8, half}, x), 0, -1,
               want, 1e-5);
}

TEST(ComplexExpanderTest, WhatIsNotLoweredIsRefusedByName) {
  const auto refused = [](const std::string& text) {
    auto m = testing::Parse(text);
    EXPECT_NE(m, nullptr);
    if (m == nullptr) return std::string();
    auto r = ComplexExpander().Run(*m);
    EXPECT_FALSE(r.ok());
    return r.ok() ? std::string() : std::string(r.status().message());
  };
  EXPECT_NE(refused(R"(HloModule m
ENTRY e {
  x = c128[4] parameter(0)
  ROOT n = c128[4] negate(x)
})").find("c128"),
            std::string::npos);
  EXPECT_NE(refused(R"(HloModule m
ENTRY e {
  x = c64[4] parameter(0)
  ROOT n = c64[4] sqrt(x)
})").find("sqrt"),
            std::string::npos);
}

}  // namespace
}  // namespace tpusim::compiler
