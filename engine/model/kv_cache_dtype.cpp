#include "engine/model/kv_cache_dtype.h"

#include <stdexcept>

namespace pagedchat {

KvCacheDType parse_kv_cache_dtype(const std::string& name) {
  for (KvCacheDType t : {KvCacheDType::kAuto, KvCacheDType::kFloat32, KvCacheDType::kBFloat16, KvCacheDType::kFloat16,
                         KvCacheDType::kQ8_0})
    if (name == kv_cache_dtype_name(t)) return t;
  throw std::invalid_argument(
      "kv_cache_dtype must be \"auto\", \"float32\", \"bfloat16\", \"float16\" or \"q8_0\", got \"" + name + "\"");
}

const char* kv_cache_dtype_name(KvCacheDType type) {
  switch (type) {
    case KvCacheDType::kAuto:
      return "auto";
    case KvCacheDType::kFloat32:
      return "float32";
    case KvCacheDType::kBFloat16:
      return "bfloat16";
    case KvCacheDType::kFloat16:
      return "float16";
    case KvCacheDType::kQ8_0:
      return "q8_0";
  }
  return "invalid";
}

kernels::KvDType resolve_kv_cache_dtype(KvCacheDType type) {
  switch (type) {
    case KvCacheDType::kAuto:
    case KvCacheDType::kBFloat16:
      return kernels::KvDType::kBFloat16;
    case KvCacheDType::kFloat32:
      return kernels::KvDType::kFloat32;
    case KvCacheDType::kFloat16:
      return kernels::KvDType::kFloat16;
    case KvCacheDType::kQ8_0:
      return kernels::KvDType::kQ8_0;
  }
  throw std::invalid_argument("kv_cache_dtype has no such value (" + std::to_string(static_cast<int>(type)) + ")");
}

KvCacheDType kv_cache_dtype_of(kernels::KvDType type) {
  switch (type) {
    case kernels::KvDType::kFloat32:
      return KvCacheDType::kFloat32;
    case kernels::KvDType::kBFloat16:
      return KvCacheDType::kBFloat16;
    case kernels::KvDType::kFloat16:
      return KvCacheDType::kFloat16;
    case kernels::KvDType::kQ8_0:
      return KvCacheDType::kQ8_0;
  }
  return KvCacheDType::kBFloat16;
}

}  // namespace pagedchat
