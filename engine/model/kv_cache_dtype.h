// The KV cache's element-type option (vLLM's `kv_cache_dtype`) and its names.
#pragma once

#include <string>

#include "kernels/ops.h"

namespace pagedchat {

/// vLLM's `kv_cache_dtype` (EngineConfig::kv_cache_dtype). kAuto: bfloat16 (on the CPU and on
/// CUDA). kFloat32, kBFloat16, kFloat16: K and V stored in that type, rounded to nearest even.
/// kQ8_0: per 32 values, ggml's block_q8_0 (1.0625 bytes per value; head sizes that are multiples
/// of 32; CPU only).
enum class KvCacheDType { kAuto, kFloat32, kBFloat16, kFloat16, kQ8_0 };

/// "auto", "float32", "bfloat16", "float16", "q8_0" -> KvCacheDType; std::invalid_argument naming
/// the allowed values otherwise.
KvCacheDType parse_kv_cache_dtype(const std::string& name);

/// The name parse_kv_cache_dtype() reads ("auto", "float32", ...); "invalid" for a value outside
/// the enum.
const char* kv_cache_dtype_name(KvCacheDType type);

/// The element type the KV cache's blocks hold (kAuto -> bfloat16); std::invalid_argument for a
/// value outside the enum.
kernels::KvDType resolve_kv_cache_dtype(KvCacheDType type);

/// The option naming what the cache holds (kernels::KvDType -> KvCacheDType, never kAuto).
KvCacheDType kv_cache_dtype_of(kernels::KvDType type);

}  // namespace pagedchat
