// Complex element types (c64, c128) and fft in the parser, printer, shape inference and verifier,
// against XLA's rules (xla/service/shape_inference.cc; shapes worked out by hand in comments).
#include <gtest/gtest.h>

#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo/shape_inference.h"
#include "hlo/verifier.h"

namespace tpusim::hlo {
namespace {

// Wraps `body` in an entry computation; the verifier's first message line ("" if it passes).
std::string Verify(const std::string& body, const std::string& extra = "") {
  const std::string text = "HloModule m\n" + extra + "ENTRY e {\n" + body + "}\n";
  StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, "c.hlo");
  if (!m.ok()) return "parse: " + m.status().message().substr(0, m.status().message().find('\n'));
  Status s = VerifyModule(**m, text);
  return s.ok() ? "" : s.message().substr(0, s.message().find('\n'));
}

const char* kAddC64 =
    "addc {\n  a = c64[] parameter(0)\n  b = c64[] parameter(1)\n  ROOT s = c64[] add(a, b)\n}\n";

TEST(ComplexShapeTest, ComposeAndTakeApart) {
  const std::string f32 = "  re = f32[8] parameter(0)\n  im = f32[8] parameter(1)\n";
  const std::string f64 = "  re = f64[8] parameter(0)\n  im = f64[8] parameter(1)\n";
  EXPECT_EQ(Verify(f32 + "  ROOT c = c64[8] complex(re, im)\n"), "");
  EXPECT_EQ(Verify(f64 + "  ROOT c = c128[8] complex(re, im)\n"), "");
  // complex(f64, f64) is c128, not c64.
  EXPECT_EQ(Verify(f64 + "  ROOT c = c64[8] complex(re, im)\n"),
            "c.hlo:5:8: error: '%c' (complex): shape mismatch: the operands give c128[8] but the "
            "instruction is written as c64[8]");
  // XLA: "Complex component type is not implemented" for anything but f32/f64 pairs.
  EXPECT_EQ(Verify("  a = bf16[2] parameter(0)\n  ROOT c = c64[2] complex(a, a)\n"),
            "c.hlo:4:8: error: '%c' (complex): complex takes (f32, f32) -> c64 or (f64, f64) -> "
            "c128, got (bf16, bf16)");
  const std::string c64 = "  c = c64[2,3] parameter(0)\n";
  const std::string c128 = "  c = c128[2,3] parameter(0)\n";
  for (const char* op : {"real", "imag", "abs"}) {
    EXPECT_EQ(Verify(c64 + "  ROOT r = f32[2,3] " + op + "(c)\n"), "") << op;
    EXPECT_EQ(Verify(c128 + "  ROOT r = f64[2,3] " + op + "(c)\n"), "") << op;
  }
  // real/imag of a floating-point operand keep its type (XLA), of an integer are refused.
  EXPECT_EQ(Verify("  a = bf16[2] parameter(0)\n  ROOT r = bf16[2] imag(a)\n"), "");
  EXPECT_EQ(Verify("  a = s32[2] parameter(0)\n  ROOT r = s32[2] real(a)\n"),
            "c.hlo:4:8: error: '%r' (real): real takes a complex or floating-point operand, got "
            "s32");
}

TEST(ComplexShapeTest, ElementwiseDotConvolutionReduceAccepted) {
  const std::string c = "  a = c64[4,4] parameter(0)\n  b = c64[4,4] parameter(1)\n";
  for (const char* op : {"add", "subtract", "multiply", "divide", "power", "atan2"}) {
    EXPECT_EQ(Verify(c + "  ROOT r = c64[4,4] " + op + "(a, b)\n"), "") << op;
  }
  for (const char* op : {"negate", "exponential", "log", "sqrt", "rsqrt", "tanh", "sine", "cosine",
                         "sign", "exponential-minus-one", "log-plus-one", "copy"}) {
    EXPECT_EQ(Verify(c + "  ROOT r = c64[4,4] " + std::string(op) + "(a)\n"), "") << op;
  }
  EXPECT_EQ(Verify(c + "  ROOT r = pred[4,4] compare(a, b), direction=EQ\n"), "");
  EXPECT_EQ(Verify(c + "  ROOT r = pred[4,4] compare(a, b), direction=NE\n"), "");
  EXPECT_EQ(Verify(c + "  s = pred[4,4] parameter(2)\n  ROOT r = c64[4,4] select(s, a, b)\n"), "");
  EXPECT_EQ(Verify(c + "  ROOT d = c64[4,4] dot(a, b), lhs_contracting_dims={1}, "
                       "rhs_contracting_dims={0}\n"),
            "");
  EXPECT_EQ(Verify("  x = c64[1,5,2] parameter(0)\n  k = c64[3,2,4] parameter(1)\n"
                   "  ROOT y = c64[1,3,4] convolution(x, k), window={size=3}, dim_labels=b0f_0io->b0f\n"),
            "");
  EXPECT_EQ(Verify(c + "  z = c64[] constant((0, 0))\n"
                       "  ROOT r = c64[4] reduce(a, z), dimensions={1}, to_apply=addc\n",
                   kAddC64),
            "");
  // real -> complex and complex -> complex converts are allowed.
  EXPECT_EQ(Verify("  a = f32[3] parameter(0)\n  ROOT r = c64[3] convert(a)\n"), "");
  EXPECT_EQ(Verify("  a = s32[3] parameter(0)\n  ROOT r = c128[3] convert(a)\n"), "");
  EXPECT_EQ(Verify("  a = c64[3] parameter(0)\n  ROOT r = c128[3] convert(a)\n"), "");
  EXPECT_EQ(Verify("  a = c64[3] parameter(0)\n  ROOT r = c64[3] bitcast-convert(a)\n"), "");
}

TEST(ComplexShapeTest, WhatXlaRefusesOnComplexIsALocatedError) {
  const std::string c = "  a = c64[4] parameter(0)\n";
  EXPECT_EQ(Verify(c + "  ROOT r = pred[4] compare(a, a), direction=LT\n"),
            "c.hlo:4:8: error: '%r' (compare): compare direction=LT is not defined on complex "
            "operands (c64): complex values have no order, only EQ and NE compare them");
  EXPECT_NE(Verify(c + "  ROOT r = pred[4] compare(a, a), direction=GE\n"), "");
  for (const char* op : {"floor", "ceil", "round-nearest-even", "not", "popcnt"}) {
    EXPECT_EQ(Verify(c + "  ROOT r = c64[4] " + std::string(op) + "(a)\n"),
              "c.hlo:4:8: error: '%r' (" + std::string(op) + "): " + op +
                  " is not defined on complex operands (c64)");
  }
  EXPECT_NE(Verify(c + "  ROOT r = pred[4] is-finite(a)\n"), "");
  EXPECT_NE(Verify(c + "  ROOT r = c64[4] and(a, a)\n"), "");
  // XLA: "Conversion from complex to real type ... is not implemented".
  EXPECT_EQ(Verify(c + "  ROOT r = f32[4] convert(a)\n"),
            "c.hlo:4:8: error: '%r' (convert): conversion from complex to real type c64 => f32 "
            "is not supported by XLA; use real(), imag() or abs()");
  EXPECT_NE(Verify(c + "  ROOT r = f32[4,2] bitcast-convert(a)\n"), "");
  EXPECT_NE(Verify("  a = f64[4] parameter(0)\n  ROOT r = c64[4] bitcast-convert(a)\n"), "");
}

TEST(ComplexShapeTest, FftShapesPerType) {
  // FFT / IFFT: complex in, same shape out.
  EXPECT_EQ(Verify("  x = c64[4,16] parameter(0)\n"
                   "  ROOT f = c64[4,16] fft(x), fft_type=FFT, fft_length={16}\n"),
            "");
  EXPECT_EQ(Verify("  x = c128[2,4,8] parameter(0)\n"
                   "  ROOT f = c128[2,4,8] fft(x), fft_type=IFFT, fft_length={2,4,8}\n"),
            "");
  // RFFT f32[8,32] over {32}: c64[8, 32/2+1 = 17].
  EXPECT_EQ(Verify("  x = f32[8,32] parameter(0)\n"
                   "  ROOT f = c64[8,17] fft(x), fft_type=RFFT, fft_length={32}\n"),
            "");
  EXPECT_EQ(Verify("  x = f64[8,6,5] parameter(0)\n"
                   "  ROOT f = c128[8,6,3] fft(x), fft_type=RFFT, fft_length={6,5}\n"),
            "");
  // IRFFT c64[4,8,5] over {8,8}: 5 = 8/2+1, result f32[4,8,8].
  EXPECT_EQ(Verify("  x = c64[4,8,5] parameter(0)\n"
                   "  ROOT f = f32[4,8,8] fft(x), fft_type=IRFFT, fft_length={8,8}\n"),
            "");
  // An odd length: IRFFT {7} takes 7/2+1 = 4 and gives 7.
  EXPECT_EQ(Verify("  x = c64[4] parameter(0)\n"
                   "  ROOT f = f32[7] fft(x), fft_type=IRFFT, fft_length={7}\n"),
            "");
  EXPECT_EQ(Verify("  x = f32[8,32] parameter(0)\n"
                   "  ROOT f = c64[8,32] fft(x), fft_type=RFFT, fft_length={32}\n"),
            "c.hlo:4:8: error: '%f' (fft): shape mismatch: the operands give c64[8,17] but the "
            "instruction is written as c64[8,32]");
}

TEST(ComplexShapeTest, FftRefusals) {
  auto fft = [](const std::string& operand, const std::string& result, const std::string& attrs) {
    return Verify("  x = " + operand + " parameter(0)\n  ROOT f = " + result + " fft(x), " +
                  attrs + "\n");
  };
  const std::string at = "c.hlo:4:8: error: '%f' (fft): ";
  EXPECT_EQ(fft("f32[8]", "f32[8]", "fft_type=FFT, fft_length={8}"),
            at + "FFT needs a complex operand, got f32");
  EXPECT_EQ(fft("c64[8]", "c64[5]", "fft_type=RFFT, fft_length={8}"),
            at + "RFFT needs an f32 or f64 operand, got c64");
  EXPECT_EQ(fft("f32[4,8]", "c64[4,5]", "fft_type=RFFT, fft_length={4,9}"),
            at + "RFFT: operand dimension 1 is 8 but fft_length[1] is 9");
  EXPECT_EQ(fft("c64[4,6]", "f32[4,8]", "fft_type=IRFFT, fft_length={4,8}"),
            at + "IRFFT: the last operand dimension is 6 but must be fft_length[1]/2+1 = 5");
  EXPECT_EQ(fft("c64[3,5]", "f32[3,8]", "fft_type=IRFFT, fft_length={4,8}"),
            at + "IRFFT: operand dimension 0 is 3 but fft_length[0] is 4");
  EXPECT_EQ(fft("f32[8]", "c64[5]", "fft_type=IRFFT, fft_length={8}"),
            at + "IRFFT needs a complex operand, got f32");
  EXPECT_EQ(fft("c64[2,2,2,2]", "c64[2,2,2,2]", "fft_type=FFT, fft_length={2,2,2,2}"),
            at + "fft_length must name 1 to 3 dimensions, has 4");
  EXPECT_EQ(fft("c64[8]", "c64[8]", "fft_type=FFT, fft_length={}"),
            at + "fft_length must name 1 to 3 dimensions, has 0");
  EXPECT_EQ(fft("c64[8]", "c64[8]", "fft_type=FFT, fft_length={2,8}"),
            at + "an FFT of rank 2 needs an operand of rank >= 2, got c64[8]");
  // XLA's parser requires both attributes and knows four fft_type values.
  EXPECT_EQ(fft("c64[8]", "c64[8]", "fft_length={8}"),
            "parse: c.hlo:4:8: error: '%f' (fft) is missing attribute 'fft_type'");
  EXPECT_EQ(fft("c64[8]", "c64[8]", "fft_type=DCT, fft_length={8}").substr(0, 27),
            "parse: c.hlo:4:36: error: u");
}

TEST(ComplexShapeTest, ParsePrintRoundTrip) {
  const std::string text =
      "HloModule m\n\nENTRY e {\n  c = c64[2]{0} constant({(1, 2), (3, -4.5)})\n"
      "  f = c64[2]{0} fft(c), fft_type=IFFT, fft_length={2}\n"
      "  d = c128[] constant((0.25, -1e+300))\n"
      "  ROOT t = (c64[2]{0}, c128[]) tuple(f, d)\n}\n";
  StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, "c.hlo");
  ASSERT_TRUE(m.ok()) << m.status().message();
  const HloInstruction* f = (*m)->entry_computation()->FindInstruction("f");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->fft_type(), FftType::kIfft);
  EXPECT_EQ(f->fft_length(), std::vector<int64_t>{2});
  EXPECT_TRUE(f->raw_attributes().empty());
  const std::string printed = PrintModule(**m);
  EXPECT_NE(printed.find("%c), fft_type=IFFT, fft_length={2}"), std::string::npos) << printed;
  EXPECT_NE(printed.find("constant({(1, 2), (3, -4.5)})"), std::string::npos) << printed;
  StatusOr<std::unique_ptr<HloModule>> again = ParseHloModule(printed, "c2.hlo");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(PrintModule(**again), printed);
  EXPECT_TRUE(VerifyModule(**again, printed).ok());
}

}  // namespace
}  // namespace tpusim::hlo
