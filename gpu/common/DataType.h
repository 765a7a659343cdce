// DataType: the element types the GPU harness moves and reduces, and their host-side encoding.
//
// Models: the NCCL data types by their nccl-tests names ("int8", "uint8", "int32", "uint32",
// "int64", "uint64", "half", "float", "double", "bfloat16"), their size in bytes, and exact
// host conversions between a double and one element's bytes (IEEE half and bfloat16 with
// round-to-nearest-even, integers with two's-complement wrap-around, as the GPU computes them).
// Leaves out: the fp8 types (NCCL reduces them only on some GPUs; the compute benchmark uses fp8
// through cuBLAS instead). No CUDA header is needed: this file is compiled on machines without a GPU.
// Units: sizes in bytes.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabricsim::gpu {

enum class DataType { kInt8, kUint8, kInt32, kUint32, kInt64, kUint64, kHalf, kFloat, kDouble, kBfloat16 };

/// The nccl-tests name of a type ("float", "bfloat16", ...).
std::string_view dataTypeName(DataType t);
/// Parses an nccl-tests type name; also accepts fp16/float16, fp32/float32, fp64, bf16, int, uint.
std::optional<DataType> parseDataType(std::string_view name);
/// All types, in nccl-tests' order.
const std::vector<DataType>& allDataTypes();
/// Bytes per element.
size_t dataTypeSize(DataType t);
bool isFloatingPoint(DataType t);
bool isSigned(DataType t);
/// Bits of significand precision (including the implicit bit) of a floating-point type; 0 for integers.
int significandBits(DataType t);

/// Writes `v` as one element of type `t` at `dst` (dataTypeSize(t) bytes). Floating-point types
/// round to nearest even; integer types truncate towards zero and wrap modulo 2^bits.
void encodeElement(DataType t, double v, void* dst);
/// Reads one element of type `t` at `src` as a double (exact for every type but 64-bit integers
/// above 2^53).
double decodeElement(DataType t, const void* src);
/// The value `v` takes after a round trip through type `t`.
double roundTo(DataType t, double v);

/// IEEE 754 binary16 and bfloat16 conversions, round to nearest even (NaN stays NaN).
uint16_t floatToHalfBits(float f);
float halfBitsToFloat(uint16_t h);
uint16_t floatToBfloat16Bits(float f);
float bfloat16BitsToFloat(uint16_t b);

}  // namespace fabricsim::gpu
