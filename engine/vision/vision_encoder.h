// VisionEncoder: the image half of a vision-language model, read from the projector file users
// download beside the model (llama.cpp's `mmproj-*.gguf`, its "clip" format: `clip.*` /
// `clip.vision.*` keys, `v.*` encoder tensors, `mm.*` projector tensors), run on the CPU.
//
// Supported projector types (clip.projector_type):
//   gemma3 — Gemma 3's SigLIP ViT: patches of patch_size² pixels (a strided convolution, with
//     bias) plus learned position embeddings; per block x += attn(LN1(x)), x += FFN(LN2(x)) with
//     LayerNorm (weight and bias, eps clip.vision.attention.layer_norm_epsilon), multi-head
//     attention without mask, scale 1/sqrt(head_dim), q/k/v/out biases, FFN down(act(up(h)))
//     with biases; a final LayerNorm (v.post_ln); then the projector: average pooling of the
//     patch grid by merge x merge (clip.vision.projector.scale_factor, 4 when absent), RMSNorm with
//     mm.soft_emb_norm (eps as above), and mm.input_projection ([vision, text] in the file): one
//     embedding per pooled cell, row-major (y outer). Images are resized to image_size² with
//     Pillow's bilinear rule, scaled to [0, 1] and normalised with image_mean / image_std.
//     In the prompt an image is "<start_of_image>" + its embeddings + "<end_of_image>", and the
//     text model attends among an image's tokens in both directions (Gemma 3's bidirectional image
//     mask). Sources: transformers modeling_siglip.py, modeling_gemma3.py
//     (Gemma3MultiModalProjector), image_processing_siglip.py; the GGUF names and the pooling
//     layout as ik_llama.cpp's examples/mtmd/clip.cpp reads and builds them.
//   qwen3vl_merger — Qwen3-VL's ViT (engine/vision/qwen3vl_encoder.cpp): any image size (smart
//     resize to multiples of patch * merge within min/max pixels, Pillow's bicubic rule), patches
//     in 2 x 2 merge-block order, learned position embeddings interpolated bilinearly to the
//     grid, 2-D RoPE, blocks with a fused qkv, deepstack mergers on some blocks, the final merger;
//     its embeddings are [main | deepstack features] for Qwen3-VL's text model, which places them
//     with M-RoPE positions between <|vision_start|> and <|vision_end|>.
//   gemma4v — Gemma 4's ViT (engine/vision/gemma4v_encoder.cpp): any aspect (resized to the most
//     patches within a token budget, sides multiples of patch * pooling kernel), learned x and y
//     position tables, RMS-normed blocks with q/k/v norms and 2-D RoPE, average pooling to one
//     token per kernel² patches; between "<|image>" and "<image|>" in the prompt.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engine/multimodal/image.h"

namespace pagedchat {

namespace kernels {
class Backend;
class PackedWeights;
}  // namespace kernels
class GgufFile;

/// A projector file's hyperparameters (what VisionEncoder::open read and checked).
struct VisionConfig {
  std::string projector_type;  ///< clip.projector_type, e.g. "gemma3"
  int image_size = 0;          ///< the encoder's input side, pixels
  int patch_size = 0;
  int hidden_size = 0;  ///< clip.vision.embedding_length
  int intermediate_size = 0;
  int num_layers = 0;
  int num_heads = 0;
  float eps = 1e-6f;
  /// The encoder FFN's activation (clip.use_gelu: GELU-tanh; clip.use_silu: SiLU; neither: the
  /// "quick" GELU x·sigmoid(1.702 x), as llama.cpp's clip reads the keys).
  enum class Activation { kGeluTanh, kSilu, kGeluQuick, kGeluErf };
  Activation activation = Activation::kGeluTanh;
  std::array<float, 3> image_mean{0.5f, 0.5f, 0.5f}, image_std{0.5f, 0.5f, 0.5f};
  int merge = 1;               ///< pooling kernel per side (gemma3)
  int text_hidden_size = 0;    ///< the embeddings' width: the text model's hidden_size
  std::string image_begin;     ///< text before an image's embeddings in the prompt
  std::string image_end;       ///< text after them
  bool bidirectional = false;  ///< the text model attends among an image's tokens both ways
  /// With bidirectional: an image token sees its whole image on sliding-window layers too
  /// (MultiModalPlaceholder::window_spans_image; gemma4v).
  bool window_spans_image = false;
  /// Images keep their aspect (qwen3vl, gemma4v): fitted to multiples of patch_size * merge with
  /// at least min_pixels and at most max_pixels; image_size is then the learned position grid's
  /// side in pixels (qwen3vl). False: every image is image_size² (gemma3).
  bool dynamic_size = false;
  int64_t min_pixels = 0, max_pixels = 0;
  /// How a dynamic-size encoder fits an image (fit_size()): Qwen's smart resize between
  /// min_pixels and max_pixels, or Gemma 4's largest size within max_pixels (no minimum).
  enum class SizeRule { kSmartResize, kPatchBudget };
  SizeRule size_rule = SizeRule::kSmartResize;
  int deepstack = 0;  ///< deepstack features after the main embedding (qwen3vl)

  int patches_per_side() const { return image_size / patch_size; }
  /// Embeddings a fixed-size image becomes (gemma3).
  int tokens_per_image() const { return (patches_per_side() / merge) * (patches_per_side() / merge); }
  /// The most embeddings an image becomes.
  int64_t max_tokens_per_image() const {
    return dynamic_size ? max_pixels / (int64_t(patch_size) * merge * patch_size * merge) : tokens_per_image();
  }
  /// Floats per embedding row: the text model's hidden size, times 1 + deepstack.
  int output_width() const { return text_hidden_size * (1 + deepstack); }
};

/// Where the encoder's output of one (fitted) image goes: its token count, and for dynamic-size
/// encoders the token grid (grid_w * grid_h == tokens, row-major; 0 for fixed-size encoders).
struct ImageGrid {
  int tokens = 0, grid_w = 0, grid_h = 0;
};

/// Choices about images made when the projector is opened (ik_llama.cpp's --image-min-tokens /
/// --image-max-tokens, vLLM's min_pixels / max_pixels): the tokens an image may become, for
/// dynamic-size encoders; 0 = the file's keys, else the defaults (qwen3vl: 64 and 4096 tokens;
/// gemma4v: at most 280, transformers' max_soft_tokens, and no minimum — min_tokens is not used).
struct VisionOptions {
  int min_tokens = 0, max_tokens = 0;
  /// Whether the text model attends among an image's tokens both ways (ModelConfig::
  /// bidirectional_images); unset: the projector type's rule (gemma3 and gemma4v: yes).
  std::optional<bool> bidirectional;
};

/// An image's encoder output: num_tokens rows of `width` floats, each the input embedding of one
/// prompt position (replacing a token embedding).
struct ImageEmbeddings {
  int num_tokens = 0, width = 0;
  std::vector<float> data;  ///< [num_tokens, width]
};

/// Thrown by VisionEncoder::encode when its stop check says so (between the encoder's layers).
struct VisionEncodeStopped : std::runtime_error {
  VisionEncodeStopped() : std::runtime_error("image encoding stopped") {}
};

/// Asked before each encoder layer: true stops the encode (VisionEncodeStopped). Empty: never.
using VisionStopCheck = std::function<bool()>;

class VisionEncoder {
 public:
  /// Reads and checks `path`: an mmproj GGUF, or a Hugging Face folder whose config.json has a
  /// vision_config (hf_vision.h converts its vision tower in memory). Throws std::runtime_error naming the file and the
  /// problem: not a projector file, no vision encoder, an unsupported projector type (named),
  /// missing or misshaped tensors (named with both shapes), hyperparameters out of range.
  /// `num_threads`: the encoder's CPU threads (0 = all).
  static std::unique_ptr<VisionEncoder> open(const std::string& path, int num_threads = 0,
                                             const VisionOptions& options = {});
  ~VisionEncoder();

  const VisionConfig& config() const { return config_; }
  const std::string& path() const { return path_; }
  /// Throws std::runtime_error unless the projector's output width is `text_hidden_size` (the text
  /// model's hidden size), naming both (an mmproj for another model).
  void check_text_model(int text_hidden_size, const std::string& text_model_name) const;

  /// `image` at the encoder's input size (gemma3: image_size², Pillow's bilinear rule; qwen3vl:
  /// fit_size(), Pillow's bicubic rule; itself when it is that size): what a request keeps of a
  /// picture, so a large photo's pixels are let go at once.
  RgbImage fit(const RgbImage& image) const;
  /// The size fit() gives a width x height image. qwen3vl: transformers' smart_resize with factor
  /// patch_size * merge: each side rounded to a multiple of it (Python's round, half to even; at
  /// least one factor), then scaled down (floor) to max_pixels or up (ceil) to min_pixels keeping
  /// the aspect. gemma4v: transformers' get_aspect_ratio_preserving_size: both sides scaled by
  /// sqrt(max_pixels / (width * height)), each floored to a multiple of patch_size * merge (a side
  /// that floors to 0 becomes one multiple, the other floor(long / short) of them, capped).
  /// qwen3vl: a size the rule gives (whole merged patches within the limits, or past max_pixels with
  /// a side of one merged patch) is returned as it is, so fitting a fitted picture changes nothing.
  /// std::invalid_argument for an image without pixels or (qwen3vl) with sides more than 200 times
  /// apart, unless it is such a size already (rounding may have taken it past 200).
  std::pair<int, int> fit_size(int width, int height) const;
  /// The tokens and grid of a fitted image (one of fit()'s sizes; std::invalid_argument otherwise).
  ImageGrid grid(const RgbImage& fitted) const;
  /// The normalised pixels the encoder reads: [height, width, 3] float32 of the fitted image,
  /// row-major, interleaved RGB ((resized / 255 - mean) / std).
  std::vector<float> preprocess(const RgbImage& image) const;
  /// Encodes preprocessed pixels (as preprocess() returns them) of a width x height image (gemma3:
  /// image_size²). Throws std::invalid_argument for a size the encoder does not take, and
  /// VisionEncodeStopped when `stop` answers true before a layer.
  ImageEmbeddings encode_preprocessed(const std::vector<float>& pixels, int width, int height,
                                      const VisionStopCheck& stop = {});
  ImageEmbeddings encode_preprocessed(const std::vector<float>& pixels) {
    return encode_preprocessed(pixels, config_.image_size, config_.image_size);
  }
  /// fit() (unless grid() takes the picture as it is: a fitted one — so give a picture of unknown
  /// size fit() first), normalisation and encode_preprocessed(): output_width() floats per token;
  /// `stop` as encode_preprocessed's.
  ImageEmbeddings encode(const RgbImage& image, const VisionStopCheck& stop = {});
  /// Bytes of weights the encoder holds.
  std::size_t weight_bytes() const;

 private:
  VisionEncoder() = default;
  struct Layer;
  struct Weights;
  struct Merger;
  struct Gemma4Layer;
  struct Gemma4Weights;
  void open_qwen3vl(const GgufFile& f, const VisionOptions& options);
  void open_gemma4v(const GgufFile& f, const VisionOptions& options);
  ImageEmbeddings encode_gemma4v(const std::vector<float>& pixels, int width, int height, const VisionStopCheck& stop);
  std::pair<int, int> fit_size_gemma4v(int width, int height) const;
  ImageGrid grid_gemma4v(int width, int height) const;
  /// (pixels / 255 - mean) / std of an image as it is.
  std::vector<float> normalized(const RgbImage& sized) const;
  /// Whether grid() takes a picture of width x height pixels as it is.
  bool takes_size(int width, int height) const;
  ImageEmbeddings encode_qwen3vl(const std::vector<float>& pixels, int width, int height, const VisionStopCheck& stop);
  std::string path_;
  VisionConfig config_;
  std::unique_ptr<kernels::Backend> backend_;
  int threads_ = 1;  ///< the backend's threads: the encoder's own loops split rows over as many
  std::unique_ptr<Weights> w_;
  std::unique_ptr<Gemma4Weights> g4_;
};

}  // namespace pagedchat
