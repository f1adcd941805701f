// Resampling as Pillow does it (src/libImaging/Resample.c: separable filters whose support widens
// by the scale when shrinking, fixed-point 8-bit passes), written from its description; the
// identity is SHA-256 (OpenSSL's libcrypto).
#include "engine/multimodal/image.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace pagedchat {

namespace {

constexpr int kPrecisionBits = 32 - 8 - 2;  // Pillow's PRECISION_BITS for 8-bit images

double triangle(double x) {
  x = std::fabs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

double cubic(double x) {
  constexpr double a = -0.5;
  x = std::fabs(x);
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
  if (x < 2.0) return (((x - 5.0) * x + 8.0) * x - 4.0) * a;
  return 0.0;
}

/// One axis: for every output index its first input index, count and fixed-point weights.
struct AxisCoeffs {
  std::vector<int> first, count;
  std::vector<int32_t> weights;  // [out][ksize]
  int ksize = 0;
};

AxisCoeffs axis_coeffs(int in_size, int out_size, double (*filter)(double), double support0) {
  const double scale = double(in_size) / out_size;
  const double filter_scale = std::max(scale, 1.0);
  const double support = support0 * filter_scale;
  AxisCoeffs c;
  c.ksize = int(std::ceil(support)) * 2 + 1;
  c.first.resize(std::size_t(out_size));
  c.count.resize(std::size_t(out_size));
  c.weights.assign(std::size_t(out_size) * std::size_t(c.ksize), 0);
  std::vector<double> k(std::size_t(c.ksize));
  for (int o = 0; o < out_size; ++o) {
    const double center = (o + 0.5) * scale;
    const double inv = 1.0 / filter_scale;
    int lo = int(center - support + 0.5);
    if (lo < 0) lo = 0;
    int hi = int(center + support + 0.5);
    if (hi > in_size) hi = in_size;
    const int n = std::min(hi - lo, c.ksize);
    double sum = 0.0;
    for (int i = 0; i < n; ++i) {
      k[std::size_t(i)] = filter((i + lo - center + 0.5) * inv);
      sum += k[std::size_t(i)];
    }
    for (int i = 0; i < n; ++i) {
      const double w = sum != 0.0 ? k[std::size_t(i)] / sum : k[std::size_t(i)];
      const double f = w * double(1 << kPrecisionBits);
      c.weights[std::size_t(o) * std::size_t(c.ksize) + std::size_t(i)] = int32_t(w < 0 ? f - 0.5 : f + 0.5);
    }
    c.first[std::size_t(o)] = lo;
    c.count[std::size_t(o)] = n;
  }
  return c;
}

uint8_t clip8(int64_t acc) {
  const int64_t v = acc >> kPrecisionBits;
  return uint8_t(v < 0 ? 0 : v > 255 ? 255 : v);
}

RgbImage resample(const RgbImage& src, int width, int height, double (*filter)(double), double support) {
  if (src.empty() || src.pixels.size() != std::size_t(src.width) * std::size_t(src.height) * 3)
    throw std::invalid_argument("resize: the source image is empty or its pixel buffer has the wrong size");
  if (width <= 0 || height <= 0)
    throw std::invalid_argument("resize: target size " + std::to_string(width) + "x" + std::to_string(height) +
                                " is empty");
  const int64_t half = int64_t(1) << (kPrecisionBits - 1);
  RgbImage cur = src;
  if (width != src.width) {
    const AxisCoeffs c = axis_coeffs(src.width, width, filter, support);
    RgbImage out{width, src.height, std::vector<uint8_t>(std::size_t(width) * std::size_t(src.height) * 3)};
    for (int y = 0; y < src.height; ++y) {
      const uint8_t* row = cur.pixels.data() + std::size_t(y) * std::size_t(src.width) * 3;
      uint8_t* dst = out.pixels.data() + std::size_t(y) * std::size_t(width) * 3;
      for (int x = 0; x < width; ++x) {
        const int32_t* w = c.weights.data() + std::size_t(x) * std::size_t(c.ksize);
        const int lo = c.first[std::size_t(x)], n = c.count[std::size_t(x)];
        for (int ch = 0; ch < 3; ++ch) {
          int64_t acc = half;
          for (int i = 0; i < n; ++i) acc += int64_t(row[std::size_t(lo + i) * 3 + std::size_t(ch)]) * w[i];
          dst[std::size_t(x) * 3 + std::size_t(ch)] = clip8(acc);
        }
      }
    }
    cur = std::move(out);
  }
  if (height != src.height) {
    const AxisCoeffs c = axis_coeffs(src.height, height, filter, support);
    const std::size_t stride = std::size_t(cur.width) * 3;
    RgbImage out{cur.width, height, std::vector<uint8_t>(stride * std::size_t(height))};
    for (int y = 0; y < height; ++y) {
      const int32_t* w = c.weights.data() + std::size_t(y) * std::size_t(c.ksize);
      const int lo = c.first[std::size_t(y)], n = c.count[std::size_t(y)];
      uint8_t* dst = out.pixels.data() + std::size_t(y) * stride;
      for (std::size_t e = 0; e < stride; ++e) {
        int64_t acc = half;
        for (int i = 0; i < n; ++i) acc += int64_t(cur.pixels[std::size_t(lo + i) * stride + e]) * w[i];
        dst[e] = clip8(acc);
      }
    }
    cur = std::move(out);
  }
  return cur;
}

}  // namespace

RgbImage resize_bilinear(const RgbImage& src, int width, int height) {
  return resample(src, width, height, triangle, 1.0);
}

RgbImage resize_bicubic(const RgbImage& src, int width, int height) { return resample(src, width, height, cubic, 2.0); }

std::string image_identity(const RgbImage& image) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  if (!ctx) throw std::bad_alloc();
  const uint32_t dims[2] = {uint32_t(image.width), uint32_t(image.height)};
  const bool ok = EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) == 1 && EVP_DigestUpdate(ctx, dims, sizeof dims) == 1 &&
                  EVP_DigestUpdate(ctx, image.pixels.data(), image.pixels.size()) == 1 &&
                  EVP_DigestFinal_ex(ctx, digest, &len) == 1;
  EVP_MD_CTX_free(ctx);
  if (!ok) throw std::runtime_error("SHA-256 of an image failed (libcrypto)");
  std::string hex;
  char buf[3];
  for (unsigned int i = 0; i < len; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", digest[i]);
    hex += buf;
  }
  return hex;
}

}  // namespace pagedchat
