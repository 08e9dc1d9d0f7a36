// The evaluator on complex values (c64, c128) and fft. Expected values are numpy's (np.fft, complex
// arithmetic), from the expression quoted at each test, printed with repr().
#include <gtest/gtest.h>

#include <complex>
#include <string>
#include <vector>

#include "hlo/eval/npy.h"
#include "tests/eval/test_util.h"

namespace tpusim::hlo {
namespace {

using testing::EvalHlo;
using testing::EvalHloStatus;
using Cd = std::complex<double>;

std::vector<Cd> Complexes(const Literal& l) {
  std::vector<Cd> v;
  for (int64_t i = 0; i < l.element_count(); ++i) {
    v.emplace_back(l.GetComponentAsDouble(2 * i), l.GetComponentAsDouble(2 * i + 1));
  }
  return v;
}

void ExpectNear(const std::vector<Cd>& got, const std::vector<Cd>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got[i].real(), want[i].real(), tol) << "element " << i;
    EXPECT_NEAR(got[i].imag(), want[i].imag(), tol) << "element " << i;
  }
}

void ExpectNear(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

TEST(EvalComplexTest, ComposeMultiplyTakeApart) {
  // (1+0.5i)^2 = 0.75+1i; (2-1i)^2 = 3-4i; (-3+2i)^2 = 5-12i; 0.5^2 = 0.25.
  const char* kText = R"(
HloModule m
ENTRY e {
  re = f32[4] constant({1, 2, -3, 0.5})
  im = f32[4] constant({0.5, -1, 2, 0})
  c = c64[4] complex(re, im)
  m = c64[4] multiply(c, c)
  r = f32[4] real(m)
  i = f32[4] imag(m)
  a = f32[4] abs(c)
  n = c64[4] negate(m)
  d = c64[4] divide(m, c)
  eq = pred[4] compare(d, c), direction=EQ
  ROOT t = (f32[4], f32[4], f32[4], c64[4], pred[4]) tuple(r, i, a, n, eq)
})";
  Literal t = EvalHlo(kText);
  ASSERT_TRUE(t.IsTuple());
  ExpectNear(testing::Values(t.element(0)), {0.75, 3, 5, 0.25}, 0);
  ExpectNear(testing::Values(t.element(1)), {1, -4, -12, 0}, 0);
  ExpectNear(testing::Values(t.element(2)), {std::sqrt(1.25), std::sqrt(5.0), std::sqrt(13.0), 0.5},
             1e-6);
  ExpectNear(Complexes(t.element(3)), {{-0.75, -1}, {-3, 4}, {-5, 12}, {-0.25, 0}}, 0);
  ExpectNear(testing::Values(t.element(4)), {1, 1, 1, 1}, 0);
}

TEST(EvalComplexTest, ConstantsConvertAndRandomArguments) {
  const char* kText = R"(
HloModule m
ENTRY e {
  c = c64[2] constant({(1, 2), (3, -4)})
  w = c128[2] convert(c)
  x = f32[2] constant({1.5, -2})
  y = c64[2] convert(x)
  e = c64[2] exponential(y)
  ROOT t = (c128[2], c64[2], c64[2]) tuple(w, y, e)
})";
  Literal t = EvalHlo(kText);
  ExpectNear(Complexes(t.element(0)), {{1, 2}, {3, -4}}, 0);
  ExpectNear(Complexes(t.element(1)), {{1.5, 0}, {-2, 0}}, 0);
  ExpectNear(Complexes(t.element(2)), {{std::exp(1.5), 0}, {std::exp(-2.0), 0}}, 1e-6);
  EXPECT_EQ(t.element(0).ToString(), "c128[2] {(1, 2), (3, -4)}");
  // Random c64 arguments: both parts drawn, each in [-1, 1).
  auto lit = Literal::Create(Shape(PrimitiveType::kC64, {64}));
  ASSERT_TRUE(lit.ok());
  FillRandom(*lit, 7, "x");
  bool imag_nonzero = false;
  for (int64_t j = 0; j < lit->component_count(); ++j) {
    EXPECT_GE(lit->GetComponentAsDouble(j), -1.0);
    EXPECT_LT(lit->GetComponentAsDouble(j), 1.0);
    imag_nonzero = imag_nonzero || (j % 2 == 1 && lit->GetComponentAsDouble(j) != 0);
  }
  EXPECT_TRUE(imag_nonzero);
}

TEST(EvalComplexTest, DotReduceAndDataMovement) {
  // numpy: a @ b with a = [[1+2j, -1j, 3], [0.5, 2+2j, -1-1j]], b = [[1j, 2], [1-1j, 0.5j],
  // [-2, 1+1j]] -> [[-9, 5.5+7j], [6+2.5j, -1j]].
  const char* kText = R"(
HloModule m
addc {
  p = c64[] parameter(0)
  q = c64[] parameter(1)
  ROOT s = c64[] add(p, q)
}
ENTRY e {
  a = c64[2,3] constant({{(1, 2), (0, -1), (3, 0)}, {(0.5, 0), (2, 2), (-1, -1)}})
  b = c64[3,2] constant({{(0, 1), (2, 0)}, {(1, -1), (0, 0.5)}, {(-2, 0), (1, 1)}})
  d = c64[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  z = c64[] constant((0, 0))
  r = c64[2] reduce(a, z), dimensions={1}, to_apply=addc
  tr = c64[3,2] transpose(a), dimensions={1,0}
  sl = c64[1,2] slice(tr), slice={[1:2], [0:2]}
  bc = c64[2,2] broadcast(z), dimensions={}
  pr = pred[2,2] compare(d, bc), direction=NE
  se = c64[2,2] select(pr, d, bc)
  ROOT t = (c64[2,2], c64[2], c64[1,2], c64[2,2]) tuple(d, r, sl, se)
})";
  Literal t = EvalHlo(kText);
  ExpectNear(Complexes(t.element(0)), {{-9, 0}, {5.5, 7}, {6, 2.5}, {0, -1}}, 1e-6);
  ExpectNear(Complexes(t.element(1)), {{4, 1}, {1.5, 1}}, 0);
  ExpectNear(Complexes(t.element(2)), {{0, -1}, {2, 2}}, 0);
  ExpectNear(Complexes(t.element(3)), {{-9, 0}, {5.5, 7}, {6, 2.5}, {0, -1}}, 1e-6);
}

// numpy: np.fft.fft(x, axis=-1) for x = [[1, 2-1j, 0.5j, -3], [0.25, -1+1j, 2, 4-2j]].
TEST(EvalComplexTest, FftAndIfftAlongRows) {
  const std::string x =
      "c64[2,4] constant({{(1, 0), (2, -1), (0, 0.5), (-3, 0)}, "
      "{(0.25, 0), (-1, 1), (2, 0), (4, -2)}})";
  const std::string text = "HloModule m\nENTRY e {\n  x = " + x +
                           "\n  f = c64[2,4] fft(x), fft_type=FFT, fft_length={4}\n"
                           "  b = c64[2,4] fft(f), fft_type=IFFT, fft_length={4}\n"
                           "  ROOT t = (c64[2,4], c64[2,4]) tuple(f, b)\n}\n";
  Literal t = EvalHlo(text);
  ExpectNear(Complexes(t.element(0)),
             {{0, -0.5}, {0, -5.5}, {2, 1.5}, {2, 4.5}, {5.25, -1}, {1.25, 5}, {-0.75, 1},
              {-4.75, -5}},
             1e-5);
  ExpectNear(Complexes(t.element(1)),
             {{1, 0}, {2, -1}, {0, 0.5}, {-3, 0}, {0.25, 0}, {-1, 1}, {2, 0}, {4, -2}}, 1e-6);
}

// numpy: np.fft.ifft2(np.arange(12).reshape(3, 4) * (0.5 - 0.25j) + 1j).
TEST(EvalComplexTest, Ifft2OverTwoAxesScalesByOneOverN) {
  const char* kText = R"(
HloModule m
ENTRY e {
  i = s32[3,4] iota(), iota_dimension=1
  j = s32[3,4] iota(), iota_dimension=0
  c4 = s32[] constant(4)
  four = s32[3,4] broadcast(c4), dimensions={}
  j4 = s32[3,4] multiply(j, four)
  k = s32[3,4] add(i, j4)
  kc = c128[3,4] convert(k)
  cf = c128[] constant((0.5, -0.25))
  f = c128[3,4] broadcast(cf), dimensions={}
  ci = c128[] constant((0, 1))
  o = c128[3,4] broadcast(ci), dimensions={}
  kf = c128[3,4] multiply(kc, f)
  y = c128[3,4] add(kf, o)
  ROOT g = c128[3,4] fft(y), fft_type=IFFT, fft_length={3,4}
})";
  Literal g = EvalHlo(kText);
  ExpectNear(Complexes(g),
             {{2.75, -0.375}, {-0.375, -0.125}, {-0.25, 0.125}, {-0.125, 0.375},
              {-1.2886751345948126, -0.07735026918962573}, {0, 0}, {0, 0}, {0, 0},
              {-0.7113248654051871, 1.0773502691896257}, {0, 0}, {0, 0}, {0, 0}},
             1e-12);
}

// numpy: np.fft.rfft(z, axis=-1), z = [[1, -2, 3, 0.5, 0, 1], [2, 2, -1, -1, 0.25, 3]]; and
// np.fft.rfft2(np.arange(15.).reshape(3, 5) ** 1.5 - 4).
TEST(EvalComplexTest, RfftKeepsHalfTheSpectrum) {
  const char* kText = R"(
HloModule m
ENTRY e {
  z = f32[2,6] constant({{1, -2, 3, 0.5, 0, 1}, {2, 2, -1, -1, 0.25, 3}})
  f = c64[2,4] fft(z), fft_type=RFFT, fft_length={6}
  w = f64[3,5] constant({{-4.0, -3.0, -1.1715728752538097, 1.196152422706632, 4.0}, {7.180339887498949, 10.696938456699069, 14.520259177452132, 18.627416997969522, 23.0}, {27.622776601683793, 32.4828726939094, 37.569219381653056, 42.87216658103186, 48.38320341483518}})
  g = c128[3,3] fft(w), fft_type=RFFT, fft_length={3,5}
  ROOT t = (c64[2,4], c128[3,3]) tuple(f, g)
})";
  Literal t = EvalHlo(kText);
  ExpectNear(Complexes(t.element(0)),
             {{3.5, 0}, {-1.5, 0}, {0.5, 5.196152422706632}, {4.5, 0}, {5.25, 0},
              {5.875, 1.9485571585149868}, {-1.1249999999999996, -0.2165063509461096},
              {-2.75, 0}},
             1e-5);
  ExpectNear(Complexes(t.element(1)),
             {{259.9797727401858, 0}, {-25.401315005339086, 40.40325057342652},
              {-27.58078014179695, 9.490652531963217}, {-134.45301704891367, 99.51089510599498},
              {3.5628025353929735, -10.936405963144246}, {5.74201375007008, -4.639170640730433},
              {-134.45301704891367, -99.51089510599498}, {10.705907638260816, -5.319515733221201},
              {7.43450190223293, 0.7364866866426638}},
             1e-10);
}

// numpy: h = np.fft.rfft2(np.arange(18.).reshape(3, 6) - 5); h[0, 0] += 0.5j; h[1, 3] += 0.25j;
// np.fft.irfft2(h, s=(3, 6)); and np.fft.irfft([1+1j, 2-0.5j, -1+0.25j], n=5).
TEST(EvalComplexTest, IrfftInvertsTheHalfSpectrum) {
  const char* kText = R"(
HloModule m
ENTRY e {
  h = c128[3,4] constant({{(63.0, 0.5), (-9.0, 15.588457268119896), (-9.0, 5.196152422706632), (-9.0, 0.0)}, {(-54.0, 31.17691453623979), (0.0, 0.0), (0.0, 0.0), (0.0, 0.25)}, {(-54.0, -31.17691453623979), (0.0, 0.0), (0.0, 0.0), (0.0, 0.0)}})
  r = f64[3,6] fft(h), fft_type=IRFFT, fft_length={3,6}
  o = c64[3] constant({(1, 1), (2, -0.5), (-1, 0.25)})
  s = f32[5] fft(o), fft_type=IRFFT, fft_length={5}
  ROOT t = (f64[3,6], f32[5]) tuple(r, s)
})";
  Literal t = EvalHlo(kText);
  ExpectNear(testing::Values(t.element(0)),
             {-5.0, -4.0, -3.0, -2.0, -1.0, 0, 0.9879718693918829, 2.012028130608117,
              2.987971869391883, 4.012028130608117, 4.987971869391883, 6.012028130608116,
              7.012028130608117, 7.987971869391882, 9.012028130608117, 9.987971869391881,
              11.012028130608117, 11.987971869391881},
             1e-12);
  ExpectNear(testing::Values(t.element(1)),
             {0.6000000000000001, 0.9022531712797204, -0.35815769116192697, -0.783483095337947,
              0.6393876152201536},
             1e-6);
}

TEST(EvalComplexTest, UnsupportedOpsOnComplexAreNamed) {
  const Status s = EvalHloStatus(R"(
HloModule m
ENTRY e {
  c = c64[2] constant({(1, 2), (3, -4)})
  ROOT m = c64[2] maximum(c, c)
})");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'maximum' is not defined for element type c64"), std::string::npos)
      << s.message();
}

TEST(EvalComplexTest, NpyRoundTripsComplex) {
  auto lit = Literal::Create(Shape(PrimitiveType::kC128, {2}));
  ASSERT_TRUE(lit.ok());
  for (int64_t j = 0; j < 4; ++j) lit->SetComponentFromDouble(j, 0.5 * static_cast<double>(j) - 1);
  StatusOr<std::string> bytes = EncodeNpy(*lit);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  EXPECT_NE(bytes->find("'descr': '<c16'"), std::string::npos);
  StatusOr<Literal> back = DecodeNpy(*bytes, "x.npy");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(back->BitwiseEqual(*lit));
  auto c64 = Literal::Create(Shape(PrimitiveType::kC64, {1}));
  ASSERT_TRUE(c64.ok());
  StatusOr<std::string> b64 = EncodeNpy(*c64);
  ASSERT_TRUE(b64.ok());
  EXPECT_NE(b64->find("'descr': '<c8'"), std::string::npos);
}

}  // namespace
}  // namespace tpusim::hlo
