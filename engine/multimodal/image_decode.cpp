// Image decoding through the system's libraries: libpng's simplified API (png_image_*),
// TurboJPEG (tj3-less 2.1 API: tjDecompressHeader3 / tjDecompress2) and libwebp's simple
// decoding API (WebPGetFeatures / WebPDecodeRGBInto).
#include "engine/multimodal/image_decode.h"

#include <png.h>
#include <turbojpeg.h>
#include <webp/decode.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <memory>

#include "engine/multimodal/exif_orientation.h"

namespace pagedchat {

namespace {

std::string dims(int64_t w, int64_t h) { return std::to_string(w) + "x" + std::to_string(h); }

void check_size(const char* format, int64_t w, int64_t h, const ImageLimits& limits) {
  if (w <= 0 || h <= 0) throw ImageError(std::string("the ") + format + " image declares an empty size " + dims(w, h));
  if (w > limits.max_side || h > limits.max_side || w * h > limits.max_pixels)
    throw ImageError(std::string("a ") + dims(w, h) + " " + format + " image is larger than the limit (" +
                     std::to_string(limits.max_side) + " pixels a side, " +
                     std::to_string(limits.max_pixels / (1 << 20)) + " Mi pixels in all)");
}

RgbImage decode_png(std::span<const uint8_t> bytes, const ImageLimits& limits) {
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  struct Guard {
    png_image* p;
    ~Guard() { png_image_free(p); }
  } guard{&image};
  if (!png_image_begin_read_from_memory(&image, bytes.data(), bytes.size()))
    throw ImageError(std::string("the PNG image cannot be read: ") + image.message);
  check_size("PNG", image.width, image.height, limits);
  // RGBA then alpha dropped: libpng would otherwise composite onto a background.
  image.format = PNG_FORMAT_RGBA;
  std::vector<uint8_t> rgba(std::size_t(PNG_IMAGE_SIZE(image)));
  if (!png_image_finish_read(&image, nullptr, rgba.data(), 0, nullptr))
    throw ImageError(std::string("the PNG image is corrupt or truncated: ") + image.message);
  RgbImage out{int(image.width), int(image.height), {}};
  const std::size_t n = std::size_t(out.width) * std::size_t(out.height);
  out.pixels.resize(n * 3);
  for (std::size_t i = 0; i < n; ++i) std::memcpy(&out.pixels[i * 3], &rgba[i * 4], 3);
  return out;
}

RgbImage decode_jpeg(std::span<const uint8_t> bytes, const ImageLimits& limits) {
  tjhandle tj = tjInitDecompress();
  if (!tj) throw ImageError("the JPEG decoder cannot start");
  struct Guard {
    tjhandle h;
    ~Guard() { tjDestroy(h); }
  } guard{tj};
  int w = 0, h = 0, subsamp = 0, colorspace = 0;
  if (tjDecompressHeader3(tj, bytes.data(), static_cast<unsigned long>(bytes.size()), &w, &h, &subsamp, &colorspace) !=
      0)
    throw ImageError(std::string("the JPEG image cannot be read: ") + tjGetErrorStr2(tj));
  check_size("JPEG", w, h, limits);
  RgbImage out{w, h, std::vector<uint8_t>(std::size_t(w) * std::size_t(h) * 3)};
  if (colorspace == TJCS_CMYK || colorspace == TJCS_YCCK) {
    // CMYK (print workflows): decoded to its four inks, taken as stored inverted (Photoshop's
    // convention, which Pillow assumes for every CMYK JPEG: rawmode "CMYK;I", Adobe marker or
    // not), then Pillow's CMYK -> RGB rule (Convert.c cmyk2rgb): each channel
    // (255 - k) - ink * (255 - k) / 255, rounded as its MULDIV255.
    std::vector<uint8_t> cmyk(std::size_t(w) * std::size_t(h) * 4);
    if (tjDecompress2(tj, bytes.data(), static_cast<unsigned long>(bytes.size()), cmyk.data(), w, 0, h, TJPF_CMYK,
                      TJFLAG_ACCURATEDCT) != 0)
      throw ImageError(std::string("the JPEG image is corrupt or truncated: ") + tjGetErrorStr2(tj));
    auto muldiv255 = [](int a, int b) {
      const int t = a * b + 128;
      return ((t >> 8) + t) >> 8;
    };
    for (std::size_t i = 0, n = std::size_t(w) * std::size_t(h); i < n; ++i) {
      const uint8_t* p = &cmyk[i * 4];
      const int nk = p[3];  // 255 - k, k stored inverted
      for (int c = 0; c < 3; ++c) {
        const int ink = 255 - p[c];
        out.pixels[i * 3 + std::size_t(c)] = uint8_t(std::clamp(nk - muldiv255(ink, nk), 0, 255));
      }
    }
    return out;
  }
  if (tjDecompress2(tj, bytes.data(), static_cast<unsigned long>(bytes.size()), out.pixels.data(), w, 0, h, TJPF_RGB,
                    TJFLAG_ACCURATEDCT) != 0)
    throw ImageError(std::string("the JPEG image is corrupt or truncated: ") + tjGetErrorStr2(tj));
  return out;
}

RgbImage decode_webp(std::span<const uint8_t> bytes, const ImageLimits& limits) {
  WebPBitstreamFeatures f;
  if (WebPGetFeatures(bytes.data(), bytes.size(), &f) != VP8_STATUS_OK)
    throw ImageError("the WebP image cannot be read (corrupt or truncated)");
  if (f.has_animation) throw ImageError("animated WebP images are not supported");
  check_size("WebP", f.width, f.height, limits);
  RgbImage out{f.width, f.height, std::vector<uint8_t>(std::size_t(f.width) * std::size_t(f.height) * 3)};
  if (!WebPDecodeRGBInto(bytes.data(), bytes.size(), out.pixels.data(), out.pixels.size(), f.width * 3))
    throw ImageError("the WebP image is corrupt or truncated");
  return out;
}

}  // namespace

std::string sniff_image_format(std::span<const uint8_t> b) {
  if (b.size() >= 8 && std::memcmp(b.data(), "\x89PNG\r\n\x1a\n", 8) == 0) return "png";
  if (b.size() >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF) return "jpeg";
  if (b.size() >= 12 && std::memcmp(b.data(), "RIFF", 4) == 0 && std::memcmp(b.data() + 8, "WEBP", 4) == 0)
    return "webp";
  return "";
}

RgbImage decode_image(std::span<const uint8_t> bytes, const ImageLimits& limits) {
  if (bytes.size() > limits.max_file_bytes)
    throw ImageError("the image file has " + std::to_string(bytes.size()) + " bytes, more than the limit of " +
                     std::to_string(limits.max_file_bytes));
  const std::string format = sniff_image_format(bytes);
  RgbImage image;
  if (format == "png")
    image = decode_png(bytes, limits);
  else if (format == "jpeg")
    image = decode_jpeg(bytes, limits);
  else if (format == "webp")
    image = decode_webp(bytes, limits);
  else
    throw ImageError(bytes.empty() ? "the image is empty" : "not a PNG, JPEG or WebP image");
  // Upright, as transformers' load_image (exif_transpose) gives it to the image processors.
  return apply_exif_orientation(std::move(image), exif_orientation(bytes, format));
}

RgbImage decode_image_file(const std::string& path, const ImageLimits& limits) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ImageError(path + ": cannot open the file");
  std::vector<uint8_t> bytes;
  char buf[65536];
  while (in) {
    in.read(buf, sizeof buf);
    bytes.insert(bytes.end(), buf, buf + in.gcount());
    if (bytes.size() > limits.max_file_bytes)
      throw ImageError(path + ": the file is larger than the image limit of " + std::to_string(limits.max_file_bytes) +
                       " bytes");
  }
  if (in.bad()) throw ImageError(path + ": read error");
  try {
    return decode_image(bytes, limits);
  } catch (const ImageError& e) {
    throw ImageError(path + ": " + e.what());
  }
}

}  // namespace pagedchat
