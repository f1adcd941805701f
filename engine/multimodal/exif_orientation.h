// The EXIF Orientation tag of a picture file, and turning decoded pixels upright by it: what
// transformers' load_image does with Pillow's ImageOps.exif_transpose before any image processor
// sees a photo (a phone's portrait photo is stored sideways with Orientation 6). Formats: the
// EXIF/TIFF layout (CIPA DC-008, TIFF 6.0: "II"/"MM" byte order, IFD0 tag 0x0112) carried in a
// JPEG APP1 "Exif\0\0" segment, a PNG eXIf chunk or a WebP EXIF chunk.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "engine/multimodal/image.h"

namespace pagedchat {

/// The Orientation value (1..8) of a file in `format` ("jpeg", "png" or "webp", as
/// sniff_image_format names them); 1 (as stored) when the file carries none, or carries a
/// malformed or out-of-range one (every offset is checked against the file: never reads past it).
int exif_orientation(std::span<const uint8_t> file, std::string_view format);

/// `image` turned upright by an EXIF orientation, as Pillow's exif_transpose: 2 mirrored
/// left-right, 3 turned 180°, 4 mirrored top-bottom, 5 transposed, 6 turned 90° clockwise,
/// 7 transversed, 8 turned 90° counter-clockwise (5 to 8 swap width and height); 1 or any other
/// value returns it unchanged.
RgbImage apply_exif_orientation(RgbImage image, int orientation);

}  // namespace pagedchat
