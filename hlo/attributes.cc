#include "hlo/attributes.h"

#include <cstring>

namespace tpusim::hlo {

std::string_view PrecisionName(Precision p) {
  switch (p) {
    case Precision::kDefault:
      return "default";
    case Precision::kHigh:
      return "high";
    case Precision::kHighest:
      return "highest";
  }
  return "default";
}

std::string_view ComparisonDirectionName(ComparisonDirection d) {
  switch (d) {
    case ComparisonDirection::kEq:
      return "EQ";
    case ComparisonDirection::kNe:
      return "NE";
    case ComparisonDirection::kGe:
      return "GE";
    case ComparisonDirection::kGt:
      return "GT";
    case ComparisonDirection::kLe:
      return "LE";
    case ComparisonDirection::kLt:
      return "LT";
  }
  return "EQ";
}

std::string_view ComparisonTypeName(ComparisonType t) {
  switch (t) {
    case ComparisonType::kDefault:
      return "";
    case ComparisonType::kFloat:
      return "FLOAT";
    case ComparisonType::kTotalOrder:
      return "TOTALORDER";
    case ComparisonType::kSigned:
      return "SIGNED";
    case ComparisonType::kUnsigned:
      return "UNSIGNED";
  }
  return "";
}

std::string_view FusionKindName(FusionKind k) {
  switch (k) {
    case FusionKind::kLoop:
      return "kLoop";
    case FusionKind::kInput:
      return "kInput";
    case FusionKind::kOutput:
      return "kOutput";
    case FusionKind::kCustom:
      return "kCustom";
  }
  return "kLoop";
}

std::string_view RandomDistributionName(RandomDistribution d) {
  return d == RandomDistribution::kNormal ? "rng_normal" : "rng_uniform";
}

std::string_view RandomAlgorithmName(RandomAlgorithm a) {
  switch (a) {
    case RandomAlgorithm::kDefault:
      return "rng_default";
    case RandomAlgorithm::kThreeFry:
      return "rng_three_fry";
    case RandomAlgorithm::kPhilox:
      return "rng_philox";
  }
  return "rng_default";
}

std::string_view FftTypeName(FftType t) {
  switch (t) {
    case FftType::kFft:
      return "FFT";
    case FftType::kIfft:
      return "IFFT";
    case FftType::kRfft:
      return "RFFT";
    case FftType::kIrfft:
      return "IRFFT";
  }
  return "FFT";
}

bool LiteralValues::operator==(const LiteralValues& o) const {
  // Bitwise on the doubles so that nan == nan and -0 != 0: a round trip must keep both.
  if (elided != o.elided || int_values != o.int_values || tuple_elements != o.tuple_elements ||
      float_values.size() != o.float_values.size()) {
    return false;
  }
  return float_values.empty() || std::memcmp(float_values.data(), o.float_values.data(),
                                             float_values.size() * sizeof(double)) == 0;
}

}  // namespace tpusim::hlo
