// Dequantization of ggml blocks: hand-built Q4_0 / Q8_0 / Q4_K / Q6_K / MXFP4 blocks (packed here from
// chosen integer quants and scales, following ggml-common.h's layouts) must give exactly the values
// the spec formulas give; F16/BF16 conversions are exact; the Q8_0 quantizer follows
// quantize_row_q8_0_ref; MXFP4 rows with a NaN scale are found (mxfp4_row_valid).
#include <QTest>

#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <random>

#include "engine/loader/gguf/dequant.h"

using namespace pagedchat;

namespace {
void putHalf(std::vector<uint8_t>& b, std::size_t at, float v) {
  const uint16_t h = fp32_to_fp16(v);
  b[at] = uint8_t(h & 0xFF);
  b[at + 1] = uint8_t(h >> 8);
}
// Scales exactly representable in F16, so expected values need no rounding model.
constexpr float kD = 0.03125f, kDmin = 0.0078125f;
}  // namespace

class TestGgufDequant : public QObject {
  Q_OBJECT
 private slots:
  void typeTable() {
    QCOMPARE(ggml_type_info(8).block_bytes, 34u);
    QCOMPARE(ggml_type_info(12).block_bytes, 144u);
    QCOMPARE(ggml_type_info(14).block_bytes, 210u);
    QCOMPARE(ggml_type_info(2).block_bytes, 18u);
    QVERIFY(ggml_type_info(4).name == nullptr);  // removed Q4_2
    QCOMPARE(ggml_type_name(99), std::string("type 99"));
    QCOMPARE(ggml_row_bytes(GgmlType::Q8_0, 64), std::size_t(68));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, ggml_row_bytes(GgmlType::Q8_0, 33));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, dequantize(GgmlType::Q3_K, nullptr, nullptr, 256));
  }

  // Every half value converts to float and back to the same bits (NaNs stay NaN).
  void halfExhaustive() {
    for (uint32_t h = 0; h < 65536; ++h) {
      const float f = fp16_to_fp32(uint16_t(h));
      if (std::isnan(f)) {
        QVERIFY(std::isnan(fp16_to_fp32(fp32_to_fp16(f))));
        continue;
      }
      QCOMPARE(fp32_to_fp16(f), uint16_t(h));
    }
    QCOMPARE(fp16_to_fp32(0x3C00), 1.0f);
    QCOMPARE(fp16_to_fp32(0xC000), -2.0f);
    QCOMPARE(fp16_to_fp32(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
    QCOMPARE(fp16_to_fp32(0x7BFF), 65504.0f);
  }

  void halfRounding() {
    QCOMPARE(fp32_to_fp16(1.0f + std::ldexp(1.0f, -11)), uint16_t(0x3C00));      // tie -> even (down)
    QCOMPARE(fp32_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)), uint16_t(0x3C02));  // tie -> even (up)
    QCOMPARE(fp32_to_fp16(65519.0f), uint16_t(0x7BFF));
    QCOMPARE(fp32_to_fp16(65520.0f), uint16_t(0x7C00));  // rounds to inf
    QCOMPARE(fp32_to_fp16(-1e9f), uint16_t(0xFC00));
    QCOMPARE(fp32_to_fp16(std::ldexp(1.0f, -25)), uint16_t(0x0000));            // tie -> even (zero)
    QCOMPARE(fp32_to_fp16(3 * std::ldexp(1.0f, -25)), uint16_t(0x0002));        // tie -> even
    QCOMPARE(fp32_to_fp16(std::ldexp(1.0f, -14) * 0.9999f), uint16_t(0x0400));  // up to the smallest normal
    QCOMPARE(bf16_to_fp32(0x3F80), 1.0f);
    QCOMPARE(bf16_to_fp32(0xC0A0), -5.0f);
  }

  void q4_0() {
    std::vector<uint8_t> b(2 * 18);
    std::vector<int> q(64);
    for (int i = 0; i < 64; ++i) q[i] = (i * 7 + 3) % 16;
    for (int blk = 0; blk < 2; ++blk) {
      putHalf(b, blk * 18, blk ? -kD : kD);
      for (int i = 0; i < 32; ++i) {  // value i < 16: low nibble of qs[i]; i >= 16: high nibble of qs[i - 16]
        uint8_t& byte = b[blk * 18 + 2 + (i % 16)];
        byte |= uint8_t(q[blk * 32 + i] << (i < 16 ? 0 : 4));
      }
    }
    std::vector<float> y(64);
    dequantize(GgmlType::Q4_0, b.data(), y.data(), 64);
    for (int i = 0; i < 64; ++i) QCOMPARE(y[i], float(q[i] - 8) * (i < 32 ? kD : -kD));
  }

  void q8_0() {
    std::vector<uint8_t> b(34);
    putHalf(b, 0, kD);
    for (int i = 0; i < 32; ++i) b[2 + i] = uint8_t(int8_t(i * 8 - 128));
    std::vector<float> y(32);
    dequantize(GgmlType::Q8_0, b.data(), y.data(), 32);
    for (int i = 0; i < 32; ++i) QCOMPARE(y[i], float(i * 8 - 128) * kD);
  }

  void q4_K() {
    int sc[8], m[8], q[256];
    for (int j = 0; j < 8; ++j) sc[j] = (j * 13 + 5) % 64, m[j] = (j * 29 + 50) % 64;
    for (int i = 0; i < 256; ++i) q[i] = (i * 5 + i / 7) % 16;
    std::vector<uint8_t> b(144);
    putHalf(b, 0, kD);
    putHalf(b, 2, kDmin);
    uint8_t* s = b.data() + 4;  // 6-bit scales/mins: low 6 bits in bytes 0..7, the rest split
    for (int j = 0; j < 4; ++j) {
      s[j] = uint8_t((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
      s[j + 4] = uint8_t((m[j] & 63) | ((m[j + 4] >> 4) << 6));
      s[j + 8] = uint8_t((sc[j + 4] & 0xF) | ((m[j + 4] & 0xF) << 4));
    }
    for (int i = 0; i < 256; ++i) {  // 64 values per 32 bytes: first 32 low nibbles, next 32 high
      const int chunk = i / 64, k = i % 64;
      b[16 + chunk * 32 + k % 32] |= uint8_t(q[i] << (k < 32 ? 0 : 4));
    }
    std::vector<float> y(256);
    dequantize(GgmlType::Q4_K, b.data(), y.data(), 256);
    for (int i = 0; i < 256; ++i) {
      const int sub = i / 32;
      QCOMPARE(y[i], kD * float(sc[sub]) * float(q[i]) - kDmin * float(m[sub]));
    }
  }

  void q6_K() {
    int q[256], scales[16];
    for (int i = 0; i < 256; ++i) q[i] = (i * 11 + i / 5) % 64;
    for (int j = 0; j < 16; ++j) scales[j] = (j * 37) % 256 - 128;
    std::vector<uint8_t> b(210);
    for (int i = 0; i < 256; ++i) {  // halves of 128; in each, groups g of 32 share ql/qh bytes
      const int half = i / 128, g = (i % 128) / 32, l = i % 32;
      b[half * 64 + l + (g % 2) * 32] |= uint8_t((q[i] & 0xF) << (g < 2 ? 0 : 4));
      b[128 + half * 32 + l] |= uint8_t((q[i] >> 4) << (2 * g));
    }
    for (int j = 0; j < 16; ++j) b[192 + j] = uint8_t(int8_t(scales[j]));
    putHalf(b, 208, kD);
    std::vector<float> y(256);
    dequantize(GgmlType::Q6_K, b.data(), y.data(), 256);
    for (int i = 0; i < 256; ++i) {
      const int half = i / 128, g = (i % 128) / 32, l = i % 32;
      const int s = scales[half * 8 + g * 2 + l / 16];  // one scale per 16 values
      QCOMPARE(y[i], kD * float(s) * float(q[i] - 32));
    }
  }

  // MXFP4 (ggml type 39): blocks of an E8M0 byte e and 16 bytes of FP4 E2M1 nibbles (value i < 16
  // the low nibble of byte 1 + i, value i >= 16 the high nibble of byte 1 + i - 16). Expected
  // values from the OCP MX v1.0 definitions, computed here in double without ggml's table: E2M1
  // code c = (sign, 2-bit exponent x, mantissa m) is (-1)^sign * (x ? (1 + m / 2) 2^(x - 1) :
  // m / 2); E8M0 e is 2^(e - 127). Every code in every position, scales e = 0 and 1 (float32
  // subnormal results), 2, 127, 128 and 254 (6 * 2^127 overflows float32: inf, as ggml's float
  // product gives).
  void mxfp4() {
    QCOMPARE(ggml_type_info(39).block_bytes, 17u);
    QCOMPARE(ggml_type_name(39), std::string("mxfp4"));
    QVERIFY(dtype_of(GgmlType::MXFP4) == kernels::DType::kMXFP4);
    QCOMPARE(kernels::dtype_row_bytes(kernels::DType::kMXFP4, 64), std::size_t(34));
    QCOMPARE(std::string(kernels::dtype_name(kernels::DType::kMXFP4)), std::string("mxfp4"));
    const int exps[] = {0, 1, 2, 127, 128, 254};
    const int nb = 2 * int(std::size(exps));  // per e: two blocks, codes in two orders
    std::vector<uint8_t> b(std::size_t(nb) * 17, 0);
    std::vector<int> code(std::size_t(nb) * 32);
    for (int blk = 0; blk < nb; ++blk) {
      b[std::size_t(blk) * 17] = uint8_t(exps[blk / 2]);
      for (int i = 0; i < 32; ++i) {
        const int c = blk % 2 ? (31 - i) * 5 % 16 : i % 16;  // every code at least twice per block
        code[std::size_t(blk) * 32 + i] = c;
        b[std::size_t(blk) * 17 + 1 + i % 16] |= uint8_t(c << (i < 16 ? 0 : 4));
      }
    }
    std::vector<float> y(code.size());
    dequantize(GgmlType::MXFP4, b.data(), y.data(), y.size());
    std::vector<float> y2(code.size());
    kernels::dequantize_row_as(kernels::DType::kMXFP4, kernels::DType::kMXFP4, b.data(), y2.data(), int64_t(y2.size()));
    QVERIFY(std::memcmp(y.data(), y2.data(), y.size() * sizeof(float)) == 0);
    for (std::size_t v = 0; v < code.size(); ++v) {
      const int c = code[v], e = exps[v / 64];
      const int sign = c >> 3, x = (c >> 1) & 3, m = c & 1;
      const double fp4 = (sign ? -1.0 : 1.0) * (x ? (1.0 + m / 2.0) * std::ldexp(1.0, x - 1) : m / 2.0);
      const double want = fp4 * std::ldexp(1.0, e - 127);
      const float wantf = std::fabs(want) > double(std::numeric_limits<float>::max())
                              ? std::copysign(std::numeric_limits<float>::infinity(), float(want))
                              : float(want);
      if (!std::isinf(wantf)) QVERIFY2(double(wantf) == want, "the expected value is not a float32");
      QVERIFY2(
          std::memcmp(&y[v], &wantf, 4) == 0 || (y[v] == 0.0f && wantf == 0.0f && !std::signbit(y[v])),
          qPrintable(QString("value %1 (code %2, e %3): %4, expected %5").arg(v).arg(c).arg(e).arg(y[v]).arg(wantf)));
    }
    // e = 0: 0.5 * 2^-127 = 2^-128, the float32 subnormal 0x00200000; code 8 (-0) reads +0 (ggml's
    // table has 0, not -0).
    QCOMPARE(y[1], std::ldexp(1.0f, -128));
    // Stored as BF16 / F16 (the CUDA backend's load path): the float values rounded once.
    std::vector<float> bf(code.size()), hf(code.size());
    kernels::dequantize_row_as(kernels::DType::kMXFP4, kernels::DType::kBF16, b.data(), bf.data(), int64_t(bf.size()));
    kernels::dequantize_row_as(kernels::DType::kMXFP4, kernels::DType::kF16, b.data(), hf.data(), int64_t(hf.size()));
    for (std::size_t v = 0; v < code.size(); ++v) {
      QCOMPARE(bf[v], kernels::bf16_to_float(kernels::float_to_bf16(y[v])));
      QCOMPARE(hf[v], fp16_to_fp32(fp32_to_fp16(y[v])));
    }
  }

  // mxfp4_row_valid: finds the first block whose E8M0 byte is 0xFF (NaN), reports its index.
  void mxfp4RowValid() {
    std::vector<uint8_t> row(5 * 17, 0x77);
    for (int blk = 0; blk < 5; ++blk) row[std::size_t(blk) * 17] = uint8_t(blk == 0 ? 0xFE : blk);
    int64_t bad = -7;
    QVERIFY(kernels::mxfp4_row_valid(row.data(), 160, &bad));
    QCOMPARE(bad, int64_t(-7));  // untouched
    QVERIFY(kernels::mxfp4_row_valid(row.data(), 0, &bad));
    row[3 * 17] = 0xFF;
    row[4 * 17] = 0xFF;
    QVERIFY(!kernels::mxfp4_row_valid(row.data(), 160, &bad));
    QCOMPARE(bad, int64_t(3));
    QVERIFY(kernels::mxfp4_row_valid(row.data(), 96));  // the first three blocks only
    QVERIFY(!kernels::mxfp4_row_valid(row.data(), 128));
    row[3 * 17 + 5] = 0xFF;  // a quant byte of 0xFF is a valid code pair, not a scale
    row[3 * 17] = 0x80;
    QVERIFY(!kernels::mxfp4_row_valid(row.data(), 160, &bad));
    QCOMPARE(bad, int64_t(4));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, kernels::mxfp4_row_valid(row.data(), 48, &bad));
  }

  // quantize_row_q8_0_ref: d = max|x| / 127 (stored as F16), q = round(x / d) away from zero.
  void quantizeQ8_0() {
    std::mt19937 rng(7);
    std::normal_distribution<float> dist(0.0f, 0.5f);
    std::vector<float> x(96);
    for (float& v : x) v = dist(rng);
    x[40] = 0.0f;
    std::fill(x.begin() + 64, x.end(), 0.0f);  // an all-zero block: d = 0, q = 0
    std::vector<uint8_t> b(3 * 34);
    quantize_q8_0(x.data(), b.data(), 96);
    std::vector<float> y(96);
    dequantize(GgmlType::Q8_0, b.data(), y.data(), 96);
    for (int blk = 0; blk < 3; ++blk) {
      float amax = 0;
      for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[blk * 32 + i]));
      const float d = amax / 127.0f, id = d ? 1.0f / d : 0.0f;
      for (int i = 0; i < 32; ++i) {
        const int qi = int(std::round(x[blk * 32 + i] * id));
        QCOMPARE(int(int8_t(b[blk * 34 + 2 + i])), qi);
        QVERIFY(std::fabs(y[blk * 32 + i] - x[blk * 32 + i]) <= d * 0.5f + 1e-3f * amax);
      }
    }
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, quantize_q8_0(x.data(), b.data(), 40));
    x[3] = NAN;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, quantize_q8_0(x.data(), b.data(), 32));
  }

  void quantizeF16() {
    const std::vector<float> x = {0.0f, 1.0f, -2.5f, 65504.0f, 1e-8f, 3.14159f};
    std::vector<uint8_t> b(x.size() * 2);
    quantize_f16(x.data(), b.data(), x.size());
    std::vector<float> y(x.size());
    dequantize(GgmlType::F16, b.data(), y.data(), x.size());
    for (std::size_t i = 0; i < x.size(); ++i) QCOMPARE(y[i], fp16_to_fp32(fp32_to_fp16(x[i])));
    QCOMPARE(y[2], -2.5f);
  }
};

QTEST_GUILESS_MAIN(TestGgufDequant)
#include "test_gguf_dequant.moc"
