// The weights of a decoder-only transformer (Llama, Qwen2, Qwen3 families), whatever file they came
// from: matrices in their file's own type (WeightTensor: F32, F16, BF16 or a ggml quantization),
// norms and biases as float32 vectors; they live in a memory-mapped file or in buffers the loader
// owns.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "engine/config.h"
#include "engine/loader/mapped_file.h"
#include "kernels/quant/dtype.h"

namespace pagedchat {

/// A row-major weight matrix as its file stores it: rows of `dtype` values (kernels/quant/dtype.h;
/// a row of n values is dtype_row_bytes(dtype, n) bytes) at `data`, any alignment. The shape comes
/// from the ModelConfig. Null data = absent. A float pointer converts to an F32 tensor.
struct WeightTensor {
  const void* data = nullptr;
  kernels::DType dtype = kernels::DType::kF32;

  WeightTensor() = default;
  WeightTensor(const float* p) : data(p) {}  // NOLINT: implicit, float32 is the common case
  WeightTensor(const void* p, kernels::DType t) : data(p), dtype(t) {}
  explicit operator bool() const { return data != nullptr; }
  bool operator==(const WeightTensor&) const = default;
  /// The data as floats; throws std::logic_error unless dtype is F32.
  const float* f32() const;
  /// Bytes of `n` values (n a multiple of the type's block size).
  std::size_t bytes(std::size_t n) const { return kernels::dtype_row_bytes(dtype, int64_t(n)); }
};

/// The float32 values of the first n elements of t (dequantized; n a multiple of its block size).
std::vector<float> to_float(const WeightTensor& t, std::size_t n);

/// One transformer layer. Matrices are WeightTensors, vectors float32. Shapes (rows x cols, row-major): wq [n_heads*hd,
/// dim], wk/wv [n_kv_heads*hd, dim], wo [dim, n_heads*hd], w1 (gate)/w3 (up) [hidden, dim], w2 (down) [dim, hidden],
/// norms [dim]; the optional tensors (null when the config does not use them): bq [n_heads*hd], bk/bv [n_kv_heads*hd]
/// (config.attention_qkv_bias; a null one of them counts as zero), bo [dim] (config.attention_out_bias), q_norm/k_norm
/// [hd] (config.qk_norm).
struct LayerWeights {
  const float* rms_att = nullptr;
  WeightTensor wq;
  WeightTensor wk;
  WeightTensor wv;
  WeightTensor wo;
  const float* bq = nullptr;
  const float* bk = nullptr;
  const float* bv = nullptr;
  const float* bo = nullptr;
  const float* q_norm = nullptr;
  const float* k_norm = nullptr;
  const float* rms_ffn = nullptr;
  WeightTensor w1;
  WeightTensor w2;
  WeightTensor w3;
};

/// The weights of a decoder-only transformer (see ModelConfig).
struct ModelWeights {
  WeightTensor token_embedding;  ///< [vocab, dim]
  std::vector<LayerWeights> layers;
  const float* rms_final = nullptr;  ///< [dim]
  WeightTensor wcls;                 ///< [vocab, dim]; == token_embedding when tied
};

/// A loaded model: its shape, its weights and whatever keeps them alive.
struct LoadedModel {
  ModelConfig config;
  ModelWeights weights;
  std::vector<std::unique_ptr<MappedFile>> files;        ///< mappings weights point into
  std::vector<std::vector<float>> buffers;               ///< weights converted or built in memory
  std::vector<std::vector<unsigned char>> byte_buffers;  ///< typed weights copied out of a file

  /// A new owned float32 buffer of n values (stable address).
  float* allocate(std::size_t n) {
    buffers.emplace_back(n);
    return buffers.back().data();
  }
  /// A new owned buffer of n bytes (stable address).
  unsigned char* allocate_bytes(std::size_t n) {
    byte_buffers.emplace_back(n);
    return byte_buffers.back().data();
  }
  /// Bytes of weights held: owned buffers plus mapped files (whether their pages are resident or
  /// not).
  std::size_t resident_bytes() const {
    std::size_t n = 0;
    for (const auto& b : buffers) n += b.size() * sizeof(float);
    for (const auto& b : byte_buffers) n += b.size();
    for (const auto& f : files) n += f->size();
    return n;
  }
};

}  // namespace pagedchat
