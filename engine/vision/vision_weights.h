// The weights of VisionEncoder (engine/vision/vision_encoder.h), shared by its loaders and
// forwards (vision_encoder.cpp: gemma3; qwen3vl_encoder.cpp: qwen3vl_merger).
#pragma once

#include <memory>
#include <vector>

#include "engine/vision/vision_encoder.h"
#include "kernels/ops.h"

namespace pagedchat {

struct VisionEncoder::Layer {
  std::vector<float> ln1_w, ln1_b, ln2_w, ln2_b;
  std::unique_ptr<kernels::PackedWeights> qkv, out, up, down;
  std::vector<float> qkv_b, out_b, up_b, down_b;
};

/// A patch merger (Qwen3-VL): rows of merge² patches concatenated, LayerNorm over that width (or,
/// for the final merger, over each patch before), fc1, GELU, fc2 to the text model's width.
struct VisionEncoder::Merger {
  int block = -1;  ///< the encoder block whose output it reads (deepstack); -1: the final one
  std::vector<float> norm_w, norm_b;
  std::unique_ptr<kernels::PackedWeights> fc1, fc2;
  std::vector<float> fc1_b, fc2_b;
};

struct VisionEncoder::Weights {
  std::unique_ptr<kernels::PackedWeights> patch;  // [hidden, 3 * p * p], columns (c, ky, kx)
  std::vector<float> patch_b, pos;                // [hidden], [patches, hidden]
  std::vector<Layer> layers;
  std::vector<float> post_ln_w, post_ln_b;
  std::vector<float> soft_norm;                  // [hidden]
  std::unique_ptr<kernels::PackedWeights> proj;  // [text_hidden, hidden]
  // qwen3vl_merger: the learned position grid's side, the deepstack mergers (block order), the
  // final merger (post_ln per patch, then mm.0, GELU, mm.2 over 2 x 2 merged patches).
  int pos_side = 0;
  std::vector<Merger> deepstack;
  Merger final_merger;
  std::size_t bytes = 0;
};

}  // namespace pagedchat
