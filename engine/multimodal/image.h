// RgbImage: a decoded picture as the vision encoders read it (8-bit RGB, interleaved, row-major),
// the resampling rule their preprocessing uses, and the identity an image is cached under.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pagedchat {

/// An 8-bit RGB picture: pixels[(y * width + x) * 3 + c], c = 0 red, 1 green, 2 blue.
struct RgbImage {
  int width = 0, height = 0;
  std::vector<uint8_t> pixels;  ///< width * height * 3 bytes
  bool empty() const { return width <= 0 || height <= 0; }
};

/// Resamples `src` to width x height with the bilinear (triangle) filter as Pillow's
/// Image.resize(size, Image.BILINEAR) does it — what transformers' image processors call with
/// `resample=BILINEAR` (Gemma 3's SiglipImageProcessor): the filter's support widens by the
/// scale when shrinking (antialiasing), weights are normalised per output pixel and held in
/// fixed point with 22 fraction bits, the horizontal pass runs first into an 8-bit image and the
/// vertical pass reads that, each result rounded and clamped to 0..255. Source: Pillow's
/// src/libImaging/Resample.c (ImagingResample, precompute_coeffs, normalize_coeffs_8bpc).
/// Throws std::invalid_argument for an empty source or target size.
RgbImage resize_bilinear(const RgbImage& src, int width, int height);

/// Bicubic (Catmull-Rom family, a = -0.5) resampling as Pillow's Image.BICUBIC, with the same
/// passes and rounding as resize_bilinear (Qwen-VL's image processors resize with it).
RgbImage resize_bicubic(const RgbImage& src, int width, int height);

/// The identity of an image's pixels (SHA-256 of its size and pixels, 64 hex digits): the key of
/// its encoder output in the encoder cache and the extra key of the prefix-cache blocks its
/// tokens lie in, so two pictures never share KV blocks however alike their prompts are.
std::string image_identity(const RgbImage& image);

}  // namespace pagedchat
