// MultiModalPlaceholder: where an image sits in a request's prompt (vLLM's PlaceholderRange with
// its MultiModalKwargs item): the positions its encoder output fills, the pixels, and the
// identity prefix caching and the encoder cache key on.
#pragma once

#include <algorithm>
#include <memory>
#include <string>

#include "engine/multimodal/image.h"

namespace pagedchat {

struct ImageEmbeddings;

struct MultiModalPlaceholder {
  int offset = 0;        ///< first prompt position of the image's embeddings
  int length = 0;        ///< positions it takes (the encoder's tokens for it)
  std::string identity;  ///< image_identity(*image)
  std::shared_ptr<const RgbImage> image;
  /// The text model attends among this image's positions in both directions (Gemma 3), so the
  /// scheduler never splits its uncached part across steps.
  bool bidirectional = false;
  /// With bidirectional: on sliding-window layers its tokens see the whole image too, however far
  /// back it starts (transformers ORs Gemma 4's image mask with the window). False: the window
  /// bounds the keys before a token (ik_llama.cpp's Gemma 3 rule).
  bool window_spans_image = false;
  /// M-RoPE models (Qwen3-VL): the image's token grid, row-major (grid_w * grid_h == length); its
  /// token (y, x) takes positions (t, t + y, t + x) where t is the image's first position, and the
  /// text after it continues at t + max(grid_w, grid_h) (transformers get_rope_index). 0: one
  /// position per token.
  int grid_w = 0, grid_h = 0;
  /// The encoder output ([length, hidden_size]), set by the engine when a step first needs it
  /// (from its encoder cache when another request already encoded the same picture).
  std::shared_ptr<const ImageEmbeddings> embeddings;
  int end() const { return offset + length; }
  /// Rotary positions the image takes: max(grid_w, grid_h) with a grid, else its length.
  int rope_span() const { return grid_w > 0 ? std::max(grid_w, grid_h) : length; }
};

}  // namespace pagedchat
