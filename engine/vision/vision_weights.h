// The weights of VisionEncoder (engine/vision/vision_encoder.h), shared by its loaders and
// forwards (vision_encoder.cpp: gemma3; qwen3vl_encoder.cpp: qwen3vl_merger; gemma4v_encoder.cpp:
// gemma4v).
#pragma once

#include <cmath>
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

/// A linear map with Gemma 4's optional clamps (transformers Gemma4ClippableLinear): the input
/// clamped to [in_lo, in_hi] before it, the output to [out_lo, out_hi] after (the file's
/// `<name>.input_min` / `.input_max` / `.output_min` / `.output_max` scalars; absent: none).
struct ClampedLinear {
  std::unique_ptr<kernels::PackedWeights> w;
  std::vector<float> bias;  ///< empty: none
  float in_lo = -HUGE_VALF, in_hi = HUGE_VALF, out_lo = -HUGE_VALF, out_hi = HUGE_VALF;
  bool clamps_input() const { return in_lo > -HUGE_VALF || in_hi < HUGE_VALF; }
  bool clamps_output() const { return out_lo > -HUGE_VALF || out_hi < HUGE_VALF; }
};

/// One Gemma 4 encoder block (norms are RMSNorms with weights used as stored).
struct VisionEncoder::Gemma4Layer {
  std::vector<float> ln1, ln2, q_norm, k_norm, attn_post_norm, ffn_post_norm;
  std::vector<float> out_scale;  ///< [hidden] or empty: the block's output scale
  ClampedLinear q, k, v, o, gate, up, down;
};

struct VisionEncoder::Gemma4Weights {
  std::unique_ptr<kernels::PackedWeights> patch;  // [hidden, 3 * p * p], columns (c, ky, kx)
  std::vector<float> patch_b;                     // [hidden] or empty
  int pos_size = 0;                               // rows of each position table
  std::vector<float> pos_x, pos_y;                // [pos_size, hidden] each
  std::vector<Gemma4Layer> layers;
  std::vector<float> post_ln;              // [hidden] or empty
  std::vector<float> std_bias, std_scale;  // [hidden] or empty
  ClampedLinear proj;                      // [text_hidden, hidden]
  float rope_theta = 100.0f;
};

}  // namespace pagedchat
