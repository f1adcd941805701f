#include "engine/multimodal/exif_orientation.h"

#include <cstring>

namespace pagedchat {

namespace {

// The Orientation tag (0x0112, SHORT) of IFD0 in a TIFF blob; 1 when absent or malformed.
int tiff_orientation(std::span<const uint8_t> t) {
  if (t.size() < 8) return 1;
  const bool little = t[0] == 'I' && t[1] == 'I';
  if (!little && !(t[0] == 'M' && t[1] == 'M')) return 1;
  auto u16 = [&](std::size_t at) -> uint32_t {
    return little ? uint32_t(t[at]) | uint32_t(t[at + 1]) << 8 : uint32_t(t[at]) << 8 | uint32_t(t[at + 1]);
  };
  auto u32 = [&](std::size_t at) -> uint32_t {
    return little ? u16(at) | u16(at + 2) << 16 : u16(at) << 16 | u16(at + 2);
  };
  if (u16(2) != 42) return 1;
  const uint32_t ifd = u32(4);
  if (ifd > t.size() || t.size() - ifd < 2) return 1;
  const uint32_t entries = u16(ifd);
  for (uint32_t i = 0; i < entries; ++i) {
    const std::size_t e = std::size_t(ifd) + 2 + std::size_t(i) * 12;
    if (e + 12 > t.size()) return 1;
    if (u16(e) != 0x0112) continue;
    // One SHORT (type 3; the value in the field's first two bytes), or one LONG (type 4) as some
    // writers store it and Pillow reads it.
    const uint32_t type = u16(e + 2);
    if ((type != 3 && type != 4) || u32(e + 4) != 1) return 1;
    const uint32_t v = type == 3 ? u16(e + 8) : u32(e + 8);
    return v >= 1 && v <= 8 ? int(v) : 1;
  }
  return 1;
}

bool is_exif_header(std::span<const uint8_t> s) { return s.size() >= 6 && std::memcmp(s.data(), "Exif\0\0", 6) == 0; }

int jpeg_orientation(std::span<const uint8_t> b) {
  // Markers after SOI: FFxx with a 2-byte big-endian length (which counts itself) until SOS.
  std::size_t at = 2;
  while (at + 4 <= b.size()) {
    if (b[at] != 0xFF) return 1;
    const uint8_t marker = b[at + 1];
    if (marker == 0xFF) {  // fill byte
      ++at;
      continue;
    }
    if (marker == 0xDA || marker == 0xD9) return 1;  // start of scan / end of image: no EXIF before
    const std::size_t len = std::size_t(b[at + 2]) << 8 | b[at + 3];
    if (len < 2 || at + 2 + len > b.size()) return 1;
    const std::span<const uint8_t> seg = b.subspan(at + 4, len - 2);
    if (marker == 0xE1 && is_exif_header(seg)) return tiff_orientation(seg.subspan(6));
    at += 2 + len;
  }
  return 1;
}

int png_orientation(std::span<const uint8_t> b) {
  // Chunks after the 8-byte signature: length (big-endian), type, data, CRC; eXIf holds TIFF
  // (before or after the image data: the PNG 1.5 extension allows both, and Pillow reads both).
  std::size_t at = 8;
  while (at + 12 <= b.size()) {
    const std::size_t len = std::size_t(b[at]) << 24 | std::size_t(b[at + 1]) << 16 | std::size_t(b[at + 2]) << 8 |
                            std::size_t(b[at + 3]);
    if (len > b.size() - at - 12) return 1;
    const std::span<const uint8_t> type = b.subspan(at + 4, 4);
    if (std::memcmp(type.data(), "eXIf", 4) == 0) return tiff_orientation(b.subspan(at + 8, len));
    if (std::memcmp(type.data(), "IEND", 4) == 0) return 1;
    at += 12 + len;
  }
  return 1;
}

int webp_orientation(std::span<const uint8_t> b) {
  // RIFF chunks after "RIFF" size "WEBP": fourcc, size (little-endian), data padded to even. The
  // EXIF chunk counts only in the extended format, whose first chunk VP8X flags it (bit 3), as
  // libwebp's demuxer (and so Pillow) reads it.
  std::size_t at = 12;
  if (b.size() < at + 9 || std::memcmp(b.data() + at, "VP8X", 4) != 0 || !(b[at + 8] & 0x08)) return 1;
  while (at + 8 <= b.size()) {
    const std::size_t len = std::size_t(b[at + 4]) | std::size_t(b[at + 5]) << 8 | std::size_t(b[at + 6]) << 16 |
                            std::size_t(b[at + 7]) << 24;
    if (len > b.size() - at - 8) return 1;
    if (std::memcmp(b.data() + at, "EXIF", 4) == 0) {
      std::span<const uint8_t> d = b.subspan(at + 8, len);
      return tiff_orientation(is_exif_header(d) ? d.subspan(6) : d);  // some writers keep the header
    }
    at += 8 + len + (len & 1);
  }
  return 1;
}

}  // namespace

int exif_orientation(std::span<const uint8_t> file, std::string_view format) {
  if (format == "jpeg") return jpeg_orientation(file);
  if (format == "png") return png_orientation(file);
  if (format == "webp") return webp_orientation(file);
  return 1;
}

RgbImage apply_exif_orientation(RgbImage image, int orientation) {
  if (orientation < 2 || orientation > 8 || image.empty()) return image;
  const int W = image.width, H = image.height;
  const bool swap = orientation >= 5;
  RgbImage out{swap ? H : W, swap ? W : H, std::vector<uint8_t>(image.pixels.size())};
  for (int y = 0; y < out.height; ++y)
    for (int x = 0; x < out.width; ++x) {
      int sx = x, sy = y;  // the source pixel of output (x, y)
      switch (orientation) {
        case 2:
          sx = W - 1 - x;
          break;  // mirror left-right
        case 3:
          sx = W - 1 - x, sy = H - 1 - y;
          break;  // 180°
        case 4:
          sy = H - 1 - y;
          break;  // mirror top-bottom
        case 5:
          sx = y, sy = x;
          break;  // transpose
        case 6:
          sx = y, sy = H - 1 - x;
          break;  // 90° clockwise
        case 7:
          sx = W - 1 - y, sy = H - 1 - x;
          break;  // transverse
        case 8:
          sx = W - 1 - y, sy = x;
          break;  // 90° counter-clockwise
      }
      std::memcpy(&out.pixels[(std::size_t(y) * std::size_t(out.width) + std::size_t(x)) * 3],
                  &image.pixels[(std::size_t(sy) * std::size_t(W) + std::size_t(sx)) * 3], 3);
    }
  return out;
}

}  // namespace pagedchat
