// The per-element helpers the CUDA kernels call (kernels/float16_math.h, norm_math.h,
// softmax_math.h, rope_math.h), run on the CPU against the CPU backend and the reference
// conversions: the arithmetic a GPU does is tested on every machine, GPU or not.
#include <QTest>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/float16_math.h"
#include "kernels/norm_math.h"
#include "kernels/ops.h"
#include "kernels/quant/dtype.h"
#include "kernels/rope_math.h"
#include "kernels/softmax_math.h"

using namespace pagedchat::kernels;

namespace {

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Random float32 bit patterns plus the edges: zeros, subnormals, rounding ties, the fp16 range.
std::vector<float> sample_floats() {
  std::vector<float> v = {0.0f,
                          -0.0f,
                          1.0f,
                          -1.0f,
                          65504.0f,
                          65519.99f,
                          65520.0f,
                          1e-8f,
                          5.96e-8f,
                          6.1e-5f,
                          INFINITY,
                          -INFINITY,
                          NAN,
                          from_bits(0x7f800001u),
                          from_bits(0x3f808000u),
                          from_bits(0x3f818000u),
                          from_bits(0x38800000u),
                          from_bits(0x387fffffu),
                          from_bits(0x33000000u)};
  std::mt19937 rng(1);
  for (int i = 0; i < 400000; ++i) v.push_back(from_bits(rng()));
  std::normal_distribution<float> n(0.0f, 3.0f);
  for (int i = 0; i < 100000; ++i) v.push_back(n(rng));
  return v;
}

}  // namespace

class TestHostDeviceMath : public QObject {
  Q_OBJECT
 private slots:
  void bf16MatchesTheCpuConversion() {
    for (float f : sample_floats()) {
      const uint16_t b = bf16_from_float(f);
      QCOMPARE(b, float_to_bf16(f));
      QVERIFY(same_bits(float_from_bf16(b), bf16_to_float(b)));
    }
  }

  void fp16MatchesTheCpuConversionBitwise() {
    for (float f : sample_floats()) QCOMPARE(fp16_from_float(f), fp32_to_fp16(f));
    for (uint32_t h = 0; h < 0x10000u; ++h) {
      const float a = float_from_fp16(uint16_t(h)), b = fp16_to_fp32(uint16_t(h));
      QVERIFY2(same_bits(a, b) || (std::isnan(a) && std::isnan(b)), qPrintable(QString::number(h, 16)));
    }
  }

  // The KV cache's stores are these conversions: store_kv (the CPU's) gives the same bits.
  void kvStoresMatch() {
    const std::vector<float> v = sample_floats();
    std::vector<uint16_t> bf(v.size()), hf(v.size());
    store_kv(bf.data(), v.data(), int64_t(v.size()), KvDType::kBFloat16);
    store_kv(hf.data(), v.data(), int64_t(v.size()), KvDType::kFloat16);
    for (std::size_t i = 0; i < v.size(); ++i) {
      QCOMPARE(bf16_from_float(v[i]), bf[i]);
      QCOMPARE(fp16_from_float(v[i]), hf[i]);
    }
  }

  // rms_inv_scale / rms_norm_value against the CPU backend's rms_norm, row by row.
  void rmsNormMatchesTheCpuBackend() {
    auto be = make_cpu_backend(1);
    std::mt19937 rng(2);
    std::normal_distribution<float> n(0.0f, 1.0f);
    for (int dim : {8, 64, 100, 128, 4096}) {
      std::vector<float> x(std::size_t(3) * dim), w(dim), out(x.size());
      for (float& f : x) f = n(rng) * 4.0f;
      for (float& f : w) f = 1.0f + 0.1f * n(rng);
      be->rms_norm(out.data(), x.data(), w.data(), 3, dim, 1e-5f);
      for (int t = 0; t < 3; ++t) {
        double ss = 0.0;
        for (int i = 0; i < dim; ++i) ss += double(x[t * dim + i]) * x[t * dim + i];
        const float scale = rms_inv_scale(float(ss), dim, 1e-5f);
        for (int i = 0; i < dim; ++i) {
          const float want = out[t * dim + i], got = rms_norm_value(x[t * dim + i], scale, w[i]);
          QVERIFY2(std::fabs(got - want) <= 1e-5f * (1.0f + std::fabs(want)),
                   qPrintable(QString("dim %1 i %2").arg(dim).arg(i)));
        }
      }
    }
  }

  void siluMatchesTheCpuBackend() {
    auto be = make_cpu_backend(1);
    std::vector<float> g, u, out;
    for (float x = -30.0f; x <= 30.0f; x += 0.37f) {
      g.push_back(x);
      u.push_back(0.5f - x / 60.0f);
    }
    out.resize(g.size());
    be->silu_and_mul(out.data(), g.data(), u.data(), 1, int(g.size()));
    for (std::size_t i = 0; i < g.size(); ++i) {
      const float want = out[i], got = silu_and_mul_value(g[i], u[i]);
      QVERIFY2(std::fabs(got - want) <= 1e-6f * (1.0f + std::fabs(want)), qPrintable(QString::number(g[i])));
    }
  }

  // RoPE through the helpers (cos/sin in float64 rounded once) = the CPU backend's, bitwise, for
  // both pair layouts, positions far into a long context and llama3-like frequencies.
  void ropeMatchesTheCpuBackendBitwise() {
    auto be = make_cpu_backend(1);
    const int hd = 128, heads = 2;
    for (bool neox : {false, true}) {
      std::vector<double> inv = rope_default_inv_freq(hd, 500000.0);
      for (std::size_t i = inv.size() / 2; i < inv.size(); ++i) inv[i] /= 8.0;  // scaled low frequencies
      RopeSpec spec{hd, neox, inv.data()};
      const std::vector<int> pos = {0, 1, 17, 4095, 131071};
      const int T = int(pos.size());
      std::vector<float> q(std::size_t(T) * heads * hd), k(std::size_t(T) * hd);
      std::mt19937 rng(3);
      std::normal_distribution<float> n(0.0f, 1.0f);
      for (float& f : q) f = n(rng);
      for (float& f : k) f = n(rng);
      std::vector<float> q0 = q;
      be->rotary_embedding(q.data(), k.data(), pos.data(), T, heads, 1, spec);
      for (int t = 0; t < T; ++t)
        for (int h = 0; h < heads; ++h)
          for (int i = 0; i < hd / 2; ++i) {
            int i0, i1;
            rope_pair(i, hd, neox, &i0, &i1);
            float c, s, y0, y1;
            rope_cos_sin(pos[t], inv[i], &c, &s);
            const float* src = q0.data() + (std::size_t(t) * heads + h) * hd;
            rope_rotate(src[i0], src[i1], c, s, &y0, &y1);
            const float* got = q.data() + (std::size_t(t) * heads + h) * hd;
            QVERIFY2(same_bits(got[i0], y0) && same_bits(got[i1], y1),
                     qPrintable(QString("neox %1 pos %2 pair %3").arg(neox).arg(pos[t]).arg(i)));
          }
    }
  }

  // Online softmax, one score at a time and merged from pieces (v2's partitions, the warps of a
  // block), against the two-pass softmax in float64.
  void onlineSoftmaxMatchesTwoPass() {
    std::mt19937 rng(4);
    std::normal_distribution<float> n(0.0f, 1.0f);
    for (int len : {1, 2, 7, 64, 513, 2000}) {
      for (float spread : {0.1f, 5.0f, 60.0f}) {
        std::vector<float> score(len), value(len);
        for (int i = 0; i < len; ++i) {
          score[i] = n(rng) * spread;
          value[i] = n(rng);
        }
        double m = -INFINITY, sum = 0.0, acc = 0.0;
        for (float s : score) m = std::max(m, double(s));
        for (int i = 0; i < len; ++i) {
          sum += std::exp(score[i] - m);
          acc += std::exp(score[i] - m) * value[i];
        }
        const double want = acc / sum;
        // Pieces of 5 scores (and empty pieces), each online, then merged in order.
        SoftmaxState total = softmax_empty();
        float total_acc = 0.0f;
        for (int b = 0; b < len + 10; b += 5) {
          SoftmaxState st = softmax_empty();
          float a = 0.0f;
          for (int i = b; i < std::min(len, b + 5); ++i) {
            float p;
            const float r = softmax_add(&st, score[i], &p);
            a = a * r + p * value[i];
          }
          float ra, rb;
          softmax_merge(&total, st, &ra, &rb);
          total_acc = total_acc * ra + a * rb;
        }
        const float got = softmax_finish(total, total_acc);
        QVERIFY2(std::fabs(got - want) <= 1e-5 * (1.0 + std::fabs(want)),
                 qPrintable(QString("len %1 spread %2: %3 vs %4").arg(len).arg(spread).arg(got).arg(want)));
      }
    }
    QCOMPARE(softmax_finish(softmax_empty(), 0.0f), 0.0f);  // an empty partition adds nothing
  }
};

QTEST_GUILESS_MAIN(TestHostDeviceMath)
#include "test_host_device_math.moc"
