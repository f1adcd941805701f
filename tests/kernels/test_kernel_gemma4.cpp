// Gemma 4's ops on the CPU backend (kernels/ops.h): cache rows wider than a layer's K/V
// (kv_row_width), the weightless V norm in the fused attention prologue, the per-layer input gate
// gelu_tanh_mul, and weightless rms_norm_heads; bitwise against the narrow / composed forms and
// within float tolerance of naive float64 references, on every instruction set this CPU has.
#include <QTest>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernel_test_utils.h"

using namespace kerneltest;

class TestKernelGemma4 : public QObject {
  Q_OBJECT
  std::mt19937 rng_{20250611};

 private slots:
  // Gemma 4's ops: cache rows wider than the layer's K/V (kv_row_width: the layer writes and reads
  // the front of each row, the rest stays as it was), the weightless V norm in the fused prologue,
  // and the per-layer input gate gelu_tanh_mul. Each bitwise against the narrow / composed form.
  void gemma4Ops_data() {
    QTest::addColumn<int>("kvType");
    QTest::newRow("f32") << int(KvDType::kFloat32);
    QTest::newRow("f16") << int(KvDType::kFloat16);
    QTest::newRow("q8_0") << int(KvDType::kQ8_0);
  }
  void gemma4Ops() {
    QFETCH(int, kvType);
    const KvDType type = KvDType(kvType);
    const int hd = 32, nh = 4, nkv = 2, T = 5, nslots = 8, wide = nkv * hd + 64;
    QkvSpec s;
    s.n_heads = nh;
    s.n_kv_heads = nkv;
    s.head_dim = hd;
    const auto qn = randn(hd, rng_), kn = randn(hd, rng_);
    s.q_norm = qn.data();
    s.k_norm = kn.data();
    s.norm_eps = 1e-6f;
    const std::vector<double> inv = rope_default_inv_freq(hd, 10000.0);
    s.rope = {hd, true, inv.data(), 0};
    s.v_norm = true;
    const std::vector<int> pos = {0, 1, 2, 3, 4};
    const std::vector<int64_t> slot = {2, 7, -1, 0, 5};
    const auto qkv0 = randn(std::size_t(T) * s.width(), rng_, 2.0f);
    const std::size_t narrow_row = kv_row_bytes(type, s.kv_width()), wide_row = kv_row_bytes(type, wide);
    for (cpu::Isa isa : supportedIsas()) {
      auto be = cpu::make_cpu_backend(2, isa);
      // The V norm: the fused prologue equals rms_norm_heads(weight null) on V, then the plain path.
      auto a = qkv0, b = qkv0;
      std::vector<float> qa(std::size_t(T) * s.q_width()), qb(qa.size());
      std::vector<uint8_t> ka(nslots * narrow_row, 0xAB), va(ka), kb(ka), vb(ka);
      be->qkv_rope_and_cache(qa.data(), a.data(), pos.data(), ka.data(), va.data(), type, slot.data(), T, s);
      QkvSpec plain = s;
      plain.v_norm = false;
      be->rms_norm_heads(b.data() + s.q_width() + s.kv_width(), s.width(), nullptr, T, nkv, hd, s.norm_eps);
      be->qkv_rope_and_cache(qb.data(), b.data(), pos.data(), kb.data(), vb.data(), type, slot.data(), T, plain);
      QVERIFY(sameBits(qa, qb));
      QVERIFY(ka == kb);
      QVERIFY(va == vb);
      QVERIFY(!sameBits(a, qkv0));
      // Wide rows: the same bytes at the front of each written row, the padding untouched.
      QkvSpec ws = s;
      ws.kv_row_width = wide;
      auto c = qkv0;
      std::vector<float> qc(qa.size());
      std::vector<uint8_t> kw(nslots * wide_row, 0xCD), vw(kw);
      be->qkv_rope_and_cache(qc.data(), c.data(), pos.data(), kw.data(), vw.data(), type, slot.data(), T, ws);
      QVERIFY(sameBits(qa, qc));
      for (int sl = 0; sl < nslots; ++sl) {
        const bool written = std::find(slot.begin(), slot.end(), int64_t(sl)) != slot.end();
        for (std::size_t i = 0; i < wide_row; ++i) {
          const uint8_t want = i < narrow_row && written ? ka[sl * narrow_row + i] : uint8_t(0xCD);
          QCOMPARE(kw[sl * wide_row + i], want);
          QCOMPARE(vw[sl * wide_row + i], i < narrow_row && written ? va[sl * narrow_row + i] : uint8_t(0xCD));
        }
      }
      // Attention over the wide rows reads only the front: the narrow cache's result, bitwise.
      std::vector<int> qsl = {0, 2}, lens = {8}, tables = {1, 0};
      AttentionMetadata m{qsl.data(), lens.data(), tables.data(), 2, 1, 4};
      m.num_tokens = 2;
      for (int sl = 0; sl < nslots; ++sl)  // every slot written, so nothing reads uninitialised bytes
        if (std::find(slot.begin(), slot.end(), int64_t(sl)) == slot.end()) {
          std::memcpy(&ka[sl * narrow_row], &ka[2 * narrow_row], narrow_row);
          std::memcpy(&va[sl * narrow_row], &va[2 * narrow_row], narrow_row);
          std::memcpy(&kw[sl * wide_row], &ka[2 * narrow_row], narrow_row);
          std::memcpy(&vw[sl * wide_row], &va[2 * narrow_row], narrow_row);
        }
      const auto q = randn(std::size_t(2) * nh * hd, rng_);
      AttentionSpec as{nh, nkv, hd, 1.0f, 6, 0.0f};
      std::vector<float> on(q.size()), ow(q.size());
      be->paged_attention(on.data(), q.data(), ka.data(), va.data(), type, m, as);
      as.kv_row_width = wide;
      be->paged_attention(ow.data(), q.data(), kw.data(), vw.data(), type, m, as);
      QVERIFY(sameBits(on, ow));
      // gelu_tanh_mul (y strided) against gelu_tanh_and_mul_stacked on [gate | y] rows.
      const int n = 19, stride = 50;
      const auto x = randn(std::size_t(T) * n, rng_, 3.0f), y = randn(std::size_t(T) * stride, rng_);
      std::vector<float> stacked(std::size_t(T) * 2 * n), want(std::size_t(T) * n), got = x;
      for (int t = 0; t < T; ++t) {
        std::copy_n(x.data() + t * n, n, stacked.data() + t * 2 * n);
        std::copy_n(y.data() + t * stride, n, stacked.data() + t * 2 * n + n);
      }
      be->gelu_tanh_and_mul_stacked(want.data(), stacked.data(), T, n);
      be->gelu_tanh_mul(got.data(), y.data(), stride, T, n);
      QVERIFY(sameBits(got, want));
      Defaults d;
      auto dflt = x;
      d.gelu_tanh_mul(dflt.data(), y.data(), stride, T, n);
      QVERIFY(worst(dflt, std::vector<double>(want.begin(), want.end()), 1e-5) < 1e-5);
    }
  }

  // rms_norm_heads with no weight: x / sqrt(mean(x^2) + eps), bitwise what a weight of ones gives.
  void weightlessRmsNormHeads() {
    const int T = 4, heads = 3, hd = 40, stride = heads * hd + 9;
    const auto x0 = randn(std::size_t(T) * stride, rng_, 3.0f);
    const std::vector<float> ones(hd, 1.0f);
    for (cpu::Isa isa : supportedIsas()) {
      auto be = cpu::make_cpu_backend(2, isa);
      auto a = x0, b = x0;
      be->rms_norm_heads(a.data(), stride, nullptr, T, heads, hd, 1e-6f);
      be->rms_norm_heads(b.data(), stride, ones.data(), T, heads, hd, 1e-6f);
      QVERIFY(sameBits(a, b));
      Defaults d;
      auto c = x0;
      d.rms_norm_heads(c.data(), stride, nullptr, T, heads, hd, 1e-6f);
      QVERIFY(worst(c, std::vector<double>(a.begin(), a.end()), 1e-6) < 1e-5);
      for (int t = 0; t < T; ++t) {
        for (int h = 0; h < heads; ++h) {
          const float* v = x0.data() + std::size_t(t) * stride + h * hd;
          double ss = 0;
          for (int i = 0; i < hd; ++i) ss += double(v[i]) * v[i];
          const double r = 1.0 / std::sqrt(ss / hd + 1e-6);
          for (int i = 0; i < hd; ++i)
            QVERIFY(std::fabs(a[std::size_t(t) * stride + h * hd + i] - v[i] * r) < 1e-5 * (1 + std::fabs(v[i] * r)));
        }
        for (int i = heads * hd; i < stride; ++i)
          QCOMPARE(a[std::size_t(t) * stride + i], x0[std::size_t(t) * stride + i]);
      }
    }
  }
};

QTEST_GUILESS_MAIN(TestKernelGemma4)
#include "test_kernel_gemma4.moc"
