// What the layer building blocks (engine/model/layers/) share: packing weight matrices for a
// backend under a WeightDType policy, and activation buffers in backend memory that grow to the
// largest batch seen and are then reused (no per-step allocation).
#pragma once

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "engine/model/model_weights.h"
#include "engine/model/weight_dtype.h"
#include "kernels/ops.h"

namespace pagedchat::layers {

/// Packs weight matrices for one backend as a WeightDType policy says (kAuto: each in the type
/// the backend wants for its file type, quantized types stay quantized), counting the packed
/// types for DecoderModel::packed_types() and reporting each source's bytes to `packed` (the
/// loader then drops the file's pages).
class WeightPacker {
 public:
  using PackedCallback = std::function<void(const void* data, std::size_t bytes)>;
  WeightPacker(kernels::Backend& backend, WeightDType dtype, PackedCallback packed)
      : ops_(backend), dtype_(dtype), packed_(std::move(packed)) {}

  /// One matrix: a part {tensor, rows, name} of rows x k.
  struct Part {
    const WeightTensor& tensor;
    int rows;
    const char* name;
  };
  /// The parts (each [rows, k], in the file's type) stacked along the output dimension as one
  /// PackedWeights. Throws std::invalid_argument naming `where` + the part when k is not whole
  /// blocks of its type.
  std::unique_ptr<kernels::PackedWeights> pack(std::initializer_list<Part> parts, int k, const std::string& where);
  /// The same for a list built at run time (consecutive parts with one name count as one matrix
  /// in type_summary(): row ranges of one file tensor).
  std::unique_ptr<kernels::PackedWeights> pack(std::span<const Part> parts, int k, const std::string& where);
  /// "q4_K x 115, q6_K x 30": the packed types, most used first.
  std::string type_summary() const;
  kernels::Backend& backend() { return ops_; }

 private:
  kernels::Backend& ops_;
  WeightDType dtype_;
  PackedCallback packed_;
  std::map<std::string, int> type_counts_;
};

/// An activation buffer in backend memory of at least n elements of T, grown (never shrunk).
class Scratch {
 public:
  template <typename T>
  T* get(kernels::Backend& ops, std::size_t n) {
    if (!buf_ || buf_->bytes() < n * sizeof(T)) {
      buf_.reset();  // free the smaller one first
      buf_ = ops.allocate(n * sizeof(T));
    }
    return static_cast<T*>(buf_->data());
  }
  /// `host` copied into the buffer (grown to fit); a step input in backend memory.
  template <typename T>
  const T* upload(kernels::Backend& ops, const std::vector<T>& host) {
    T* p = get<T>(ops, std::max<std::size_t>(host.size(), 1));
    ops.copy_to_backend(p, host.data(), host.size() * sizeof(T));
    return p;
  }

 private:
  std::unique_ptr<kernels::Buffer> buf_;
};

/// Host arrays (norm weights, biases) copied into backend memory for the owner's lifetime
/// (Backend::place: on the CPU the host memory itself, which must then stay alive).
class Placed {
 public:
  /// `host` [n] in backend memory; null stays null.
  template <typename T>
  const T* place(kernels::Backend& ops, const T* host, std::size_t n) {
    if (!host) return nullptr;
    holders_.emplace_back();
    return static_cast<const T*>(ops.place(host, n * sizeof(T), holders_.back()));
  }

 private:
  std::vector<std::unique_ptr<kernels::Buffer>> holders_;
};

/// The activation buffers the layers share (one set per model, not per layer: a layer's
/// intermediates are dead once its output is written).
struct Workspace {
  Scratch qkv, q, attn;                                         // attention: [T, q + 2 kv], [T, q], [T, q]
  Scratch gate_up, hidden;                                      // MLPs: [T, 2 * width], [T, width]
  Scratch router_logits, expert_in, expert_out, rows, weights;  // mixture of experts
  Scratch gate;                                                 // attention output gate: [T, q]
  Scratch shared_out;                                           // a shared expert's output: [T, hidden]
  Scratch proj, mixed;                                          // Gated DeltaNet: [T, proj_width], [T, value_dim]
};

}  // namespace pagedchat::layers
