#include "gpu/common/DataType.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace fabricsim::gpu {
namespace {

struct TypeInfo {
  DataType type;
  const char* name;
  size_t size;
  bool floating;
  bool isSigned;
  int significand;
};

constexpr TypeInfo kTypes[] = {
    {DataType::kInt8, "int8", 1, false, true, 0},     {DataType::kUint8, "uint8", 1, false, false, 0},
    {DataType::kInt32, "int32", 4, false, true, 0},   {DataType::kUint32, "uint32", 4, false, false, 0},
    {DataType::kInt64, "int64", 8, false, true, 0},   {DataType::kUint64, "uint64", 8, false, false, 0},
    {DataType::kHalf, "half", 2, true, true, 11},     {DataType::kFloat, "float", 4, true, true, 24},
    {DataType::kDouble, "double", 8, true, true, 53}, {DataType::kBfloat16, "bfloat16", 2, true, true, 8},
};

const TypeInfo& info(DataType t) {
  return kTypes[static_cast<int>(t)];
}

// Integer conversion: truncate towards zero, then wrap modulo 2^64 (and modulo 2^bits on the store).
uint64_t wrapToU64(double v) {
  if (!std::isfinite(v)) return 0;
  const double t = std::trunc(v);
  const double two63 = 9223372036854775808.0;
  if (t >= -two63 && t < two63)
    return static_cast<uint64_t>(static_cast<int64_t>(t));  // exact, wraps negatives
  const double two64 = 18446744073709551616.0;
  double m = std::fmod(t, two64);
  if (m < 0) m += two64;
  if (m >= two64) m = 0;
  return static_cast<uint64_t>(m);
}

}  // namespace

std::string_view dataTypeName(DataType t) {
  return info(t).name;
}

std::optional<DataType> parseDataType(std::string_view name) {
  for (const auto& ti : kTypes)
    if (name == ti.name) return ti.type;
  if (name == "fp16" || name == "float16") return DataType::kHalf;
  if (name == "fp32" || name == "float32") return DataType::kFloat;
  if (name == "fp64" || name == "float64") return DataType::kDouble;
  if (name == "bf16") return DataType::kBfloat16;
  if (name == "int") return DataType::kInt32;
  if (name == "uint") return DataType::kUint32;
  if (name == "char") return DataType::kInt8;
  return std::nullopt;
}

const std::vector<DataType>& allDataTypes() {
  static const std::vector<DataType> all = [] {
    std::vector<DataType> v;
    for (const auto& ti : kTypes) v.push_back(ti.type);
    return v;
  }();
  return all;
}

size_t dataTypeSize(DataType t) {
  return info(t).size;
}
bool isFloatingPoint(DataType t) {
  return info(t).floating;
}
bool isSigned(DataType t) {
  return info(t).isSigned;
}
int significandBits(DataType t) {
  return info(t).significand;
}

uint16_t floatToHalfBits(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) return static_cast<uint16_t>(sign | (absx > 0x7f800000u ? 0x7e00u : 0x7c00u));
  // 65520 and up round to infinity.
  if (absx >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);
  const int exp = static_cast<int>(absx >> 23) - 127;
  uint32_t mant = (absx & 0x7fffffu) | 0x800000u;  // 24-bit significand with the implicit bit
  if (exp >= -14) {
    // Normal half: keep 11 significant bits, round to nearest even on the 13 dropped ones.
    uint32_t h = (static_cast<uint32_t>(exp + 15) << 10) | ((mant >> 13) & 0x3ffu);
    const uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // may carry into the exponent: correct
    return static_cast<uint16_t>(sign | h);
  }
  // Subnormal half (or zero): value = m * 2^-24.
  const int shift = -exp - 14 + 13;  // bits dropped from the 24-bit significand
  if (shift > 24) return static_cast<uint16_t>(sign);
  uint32_t h = mant >> shift;
  const uint32_t rest = mant & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1);
  if (rest > half || (rest == half && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

float halfBitsToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    const float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
}

uint16_t floatToBfloat16Bits(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  const uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

float bfloat16BitsToFloat(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

void encodeElement(DataType t, double v, void* dst) {
  switch (t) {
    case DataType::kInt8:
    case DataType::kUint8: {
      const auto b = static_cast<uint8_t>(wrapToU64(v));
      std::memcpy(dst, &b, 1);
      return;
    }
    case DataType::kInt32:
    case DataType::kUint32: {
      const auto w = static_cast<uint32_t>(wrapToU64(v));
      std::memcpy(dst, &w, 4);
      return;
    }
    case DataType::kInt64:
    case DataType::kUint64: {
      const uint64_t w = wrapToU64(v);
      std::memcpy(dst, &w, 8);
      return;
    }
    case DataType::kHalf: {
      const uint16_t h = floatToHalfBits(static_cast<float>(v));
      std::memcpy(dst, &h, 2);
      return;
    }
    case DataType::kBfloat16: {
      const uint16_t h = floatToBfloat16Bits(static_cast<float>(v));
      std::memcpy(dst, &h, 2);
      return;
    }
    case DataType::kFloat: {
      const auto f = static_cast<float>(v);
      std::memcpy(dst, &f, 4);
      return;
    }
    case DataType::kDouble:
      std::memcpy(dst, &v, 8);
      return;
  }
}

double decodeElement(DataType t, const void* src) {
  switch (t) {
    case DataType::kInt8: {
      int8_t x;
      std::memcpy(&x, src, 1);
      return x;
    }
    case DataType::kUint8: {
      uint8_t x;
      std::memcpy(&x, src, 1);
      return x;
    }
    case DataType::kInt32: {
      int32_t x;
      std::memcpy(&x, src, 4);
      return x;
    }
    case DataType::kUint32: {
      uint32_t x;
      std::memcpy(&x, src, 4);
      return x;
    }
    case DataType::kInt64: {
      int64_t x;
      std::memcpy(&x, src, 8);
      return static_cast<double>(x);
    }
    case DataType::kUint64: {
      uint64_t x;
      std::memcpy(&x, src, 8);
      return static_cast<double>(x);
    }
    case DataType::kHalf: {
      uint16_t h;
      std::memcpy(&h, src, 2);
      return halfBitsToFloat(h);
    }
    case DataType::kBfloat16: {
      uint16_t h;
      std::memcpy(&h, src, 2);
      return bfloat16BitsToFloat(h);
    }
    case DataType::kFloat: {
      float f;
      std::memcpy(&f, src, 4);
      return f;
    }
    case DataType::kDouble: {
      double d;
      std::memcpy(&d, src, 8);
      return d;
    }
  }
  return 0;
}

double roundTo(DataType t, double v) {
  unsigned char buf[8];
  encodeElement(t, v, buf);
  return decodeElement(t, buf);
}

}  // namespace fabricsim::gpu
