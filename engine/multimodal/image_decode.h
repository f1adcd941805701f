// decode_image: PNG, JPEG and WebP files to RgbImage, with libpng, libjpeg-turbo (TurboJPEG) and
// libwebp (Debian's packages), refusing what a hostile or broken file could do to memory.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

#include "engine/multimodal/image.h"

namespace pagedchat {

/// A file that is not an image this engine reads, or one past the limits: the message says which
/// and why ("a 20000x20000 image is larger than the 8192 x 8192 ... limit").
struct ImageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// What decode_image accepts. A picture's size is read from its header and checked before any
/// pixel memory is taken, so a decompression bomb (a small file declaring a huge picture) is
/// refused without decoding it.
struct ImageLimits {
  int max_side = 16384;                    ///< pixels along either side
  int64_t max_pixels = int64_t(64) << 20;  ///< width * height (64 Mi: 8192 x 8192)
  std::size_t max_file_bytes = 64u << 20;  ///< encoded bytes
};

/// The format of `bytes` from its signature: "png", "jpeg", "webp", or "" for anything else.
std::string sniff_image_format(std::span<const uint8_t> bytes);

/// Decodes a PNG (any bit depth, palette, grey, alpha, interlaced; 16-bit reduced to 8), a JPEG
/// (baseline or progressive; greyscale, YCbCr; CMYK / YCCK converted by Pillow's rule, inks
/// taken as stored inverted, as Pillow takes them) or a WebP (lossy or lossless, still) into 8-bit RGB. An
/// alpha channel is dropped (the colour values are kept as they are, as Pillow's convert("RGB")
/// does); grey is replicated into R, G and B. Throws ImageError naming the format and the
/// problem: an unknown format, a truncated or corrupt file, an animated WebP, or a size past
/// `limits`. A file's EXIF orientation is applied (engine/multimodal/
/// exif_orientation.h): the picture comes out upright, as a photo viewer shows it.
RgbImage decode_image(std::span<const uint8_t> bytes, const ImageLimits& limits = {});

/// Reads the file at `path` (at most limits.max_file_bytes) and decodes it; ImageError names the
/// path when the file cannot be read.
RgbImage decode_image_file(const std::string& path, const ImageLimits& limits = {});

}  // namespace pagedchat
