// The non-GEMM CPU kernels on every instruction set this machine runs: paged attention, RMSNorm
// (plain and fused with the residual add), SwiGLU, bias add, per-head RMSNorm and the fused Q/K/V
// prologue (bias, q/k norm, RoPE with any inverse frequencies, cache write) agree
// bitwise with the scalar path and with the default (composed) implementations in kernels/ops.h;
// attention gives bitwise the same result for a prompt whether it is prefilled in one chunk, in
// pieces, or batched with other requests. Bfloat16 and float16 KV caches: written rounded to
// nearest even (the float16 conversion checked against F16C), and attention over them is bitwise
// attention over a float32 cache holding the rounded values, on every instruction set.
#include <QTest>

#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include "isa_test_utils.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/ops.h"

using namespace pagedchat;
using isatest::randomVec;
using isatest::supportedIsas;
using kernels::AttentionMetadata;

namespace {

bool sameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// A KV cache of `type` holding `values` (rounded), and those rounded values as float32.
struct TypedCache {
  std::vector<uint8_t> bytes;
  std::vector<float> rounded;
  TypedCache(const std::vector<float>& values, kernels::KvDType type)
      : bytes(kernels::kv_row_bytes(type, int64_t(values.size()))), rounded(values.size()) {
    kernels::store_kv(bytes.data(), values.data(), int64_t(values.size()), type);
    kernels::load_kv(rounded.data(), bytes.data(), int64_t(values.size()), type);
  }
};

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("f16c"))) uint16_t hwFloatToHalf(float x) { return uint16_t(_cvtss_sh(x, 0)); }
__attribute__((target("f16c"))) float hwHalfToFloat(uint16_t h) { return _cvtsh_ss(h); }
// CPUID leaf 1 (clang 14's __builtin_cpu_supports does not know "f16c"), as cpu_features.cpp.
bool hasF16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C);
}
#endif

// The Backend base-class (default) implementations of the fused ops, over a CPU backend's basic
// ops: what the fused CPU kernels must reproduce.
class Composed final : public kernels::Backend {
 public:
  explicit Composed(kernels::Backend& b) : b_(b) {}
  const char* name() const override { return "composed"; }
  int num_threads() const override { return b_.num_threads(); }
  void embedding(float* o, const void* t, kernels::DType dt, const int* ids, int T, int d) override {
    b_.embedding(o, t, dt, ids, T, d);
  }
  void rms_norm(float* o, const float* x, const float* w, int T, int d, float e) override {
    b_.rms_norm(o, x, w, T, d, e);
  }
  void matmul(float* o, const float* x, const float* w, int T, int n, int k) override { b_.matmul(o, x, w, T, n, k); }
  void rotary_embedding(float* q, float* k, const int* p, int T, int h, int kvh, const kernels::RopeSpec& r) override {
    b_.rotary_embedding(q, k, p, T, h, kvh, r);
  }
  void reshape_and_cache(const float* k, const float* v, void* kc, void* vc, kernels::KvDType dt, const int64_t* s,
                         int T, int w) override {
    b_.reshape_and_cache(k, v, kc, vc, dt, s, T, w);
  }
  void paged_attention(float* o, const float* q, const void* kc, const void* vc, kernels::KvDType dt,
                       const AttentionMetadata& m, const kernels::AttentionSpec& spec) override {
    b_.paged_attention(o, q, kc, vc, dt, m, spec);
  }
  void silu_and_mul(float* o, const float* g, const float* u, int T, int h) override { b_.silu_and_mul(o, g, u, T, h); }
  void add(float* x, const float* y, int64_t n) override { b_.add(x, y, n); }

 private:
  kernels::Backend& b_;
};

// One request's paged layout: context `ctx` in shuffled blocks of `bs` tokens.
struct Paged {
  std::vector<int> table;
  int maxb = 0;
};

}  // namespace

class TestCpuIsa : public QObject {
  Q_OBJECT
  std::mt19937 rng_{11};

 private slots:
  void rowwiseOpsBitwiseAcrossIsas() {
    const int T = 5, dim = 37, hidden = 45;
    auto x = randomVec(size_t(T) * dim, rng_), y = randomVec(x.size(), rng_), w = randomVec(dim, rng_);
    auto gu = randomVec(size_t(T) * 2 * hidden, rng_, 4.0f);
    gu[3] = -120.0f;  // exp underflow and overflow paths of SiLU
    gu[4] = 100.0f;
    std::vector<std::vector<float>> ref;
    for (cpu::Isa isa : supportedIsas()) {
      auto be = cpu::make_cpu_backend(2, isa);
      std::vector<float> norm(x.size()), fused(x.size()), res = x, swiglu(size_t(T) * hidden), sum = x;
      be->rms_norm(norm.data(), x.data(), w.data(), T, dim, 1e-5f);
      be->fused_add_rms_norm(fused.data(), res.data(), y.data(), w.data(), T, dim, 1e-5f);
      be->silu_and_mul_stacked(swiglu.data(), gu.data(), T, hidden);
      be->add(sum.data(), y.data(), int64_t(sum.size()));
      // Against the definitions.
      for (int t = 0; t < T; ++t) {
        double ss = 0;
        for (int j = 0; j < dim; ++j) ss += double(x[t * dim + j]) * x[t * dim + j];
        const double inv = 1.0 / std::sqrt(ss / dim + 1e-5);
        for (int j = 0; j < dim; ++j) QVERIFY(std::fabs(norm[t * dim + j] - w[j] * x[t * dim + j] * inv) < 1e-5);
        for (int j = 0; j < hidden; ++j) {
          const double g = gu[t * 2 * hidden + j], u = gu[t * 2 * hidden + hidden + j];
          const double want = g / (1.0 + std::exp(-g)) * u;
          QVERIFY2(std::fabs(swiglu[t * hidden + j] - want) <= 1e-6 * std::max(1.0, std::fabs(want)),
                   qPrintable(QString("%1: silu(%2) * %3 = %4, want %5")
                                  .arg(cpu::isa_name(isa))
                                  .arg(g)
                                  .arg(u)
                                  .arg(swiglu[t * hidden + j])
                                  .arg(want)));
        }
      }
      for (size_t i = 0; i < x.size(); ++i) QCOMPARE(res[i], x[i] + y[i]);
      QVERIFY(sameBits(res, sum));
      // The fused op equals add then rms_norm.
      std::vector<float> twostep(x.size());
      be->rms_norm(twostep.data(), sum.data(), w.data(), T, dim, 1e-5f);
      QVERIFY(sameBits(fused, twostep));
      const std::vector<std::vector<float>> outs = {norm, fused, swiglu};
      if (ref.empty()) ref = outs;
      for (size_t i = 0; i < outs.size(); ++i) QVERIFY2(sameBits(outs[i], ref[i]), cpu::isa_name(isa));
    }
  }

  // The fused attention prologue against the composed ops, for every variant a model config can
  // ask for: plain Llama, q/k/v biases (Qwen2), per-head q/k RMSNorm (Qwen3), both, scaled
  // frequencies (llama3), interleaved and rotate-half pairs; head sizes 8 and 32.
  void qkvRopeAndCacheMatchesComposed_data() {
    QTest::addColumn<int>("hd");
    QTest::addColumn<bool>("bias");
    QTest::addColumn<bool>("qkNorm");
    QTest::addColumn<bool>("scaled");
    QTest::newRow("plain hd8") << 8 << false << false << false;
    QTest::newRow("bias hd8") << 8 << true << false << false;
    QTest::newRow("qk norm hd32") << 32 << false << true << false;
    QTest::newRow("bias qk norm scaled hd32") << 32 << true << true << true;
    QTest::newRow("scaled hd8") << 8 << false << false << true;
  }
  void qkvRopeAndCacheMatchesComposed() {
    QFETCH(int, hd);
    QFETCH(bool, bias);
    QFETCH(bool, qkNorm);
    QFETCH(bool, scaled);
    const int T = 4, heads = 4, kvh = 2, qw = heads * hd, kvw = kvh * hd, w = qw + 2 * kvw;
    const auto qkv = randomVec(size_t(T) * w, rng_);
    const auto b = randomVec(w, rng_, 0.1f), qn = randomVec(hd, rng_), kn = randomVec(hd, rng_);
    std::vector<double> inv = kernels::rope_default_inv_freq(hd, 500000.0);
    if (scaled)
      for (size_t i = inv.size() / 2; i < inv.size(); ++i) inv[i] /= 1.0 + double(i);
    const std::vector<int> pos = {0, 7, 8, 100000};
    const std::vector<int64_t> slotMap = {5, -1, 0, 9};
    std::vector<std::vector<float>> ref;
    for (cpu::Isa isa : supportedIsas())
      for (bool neox : {false, true}) {
        auto be = cpu::make_cpu_backend(2, isa);
        Composed composed(*be);
        kernels::QkvSpec spec;
        spec.n_heads = heads;
        spec.n_kv_heads = kvh;
        spec.head_dim = hd;
        spec.bias = bias ? b.data() : nullptr;
        spec.q_norm = qkNorm ? qn.data() : nullptr;
        spec.k_norm = qkNorm ? kn.data() : nullptr;
        spec.norm_eps = 1e-6f;
        spec.rope = {hd, neox, inv.data()};
        std::vector<float> q1(size_t(T) * qw), q2(q1.size()), kc1(10 * kvw, 0), vc1(kc1), kc2(kc1), vc2(kc1);
        auto in1 = qkv, in2 = qkv;
        be->qkv_rope_and_cache(q1.data(), in1.data(), pos.data(), kc1.data(), vc1.data(), kernels::KvDType::kFloat32,
                               slotMap.data(), T, spec);
        composed.qkv_rope_and_cache(q2.data(), in2.data(), pos.data(), kc2.data(), vc2.data(),
                                    kernels::KvDType::kFloat32, slotMap.data(), T, spec);
        QVERIFY(sameBits(q1, q2));
        QVERIFY(sameBits(kc1, kc2));
        QVERIFY(sameBits(vc1, vc2));
        QVERIFY(sameBits(in1, in2));
        // 16-bit caches: the fused and the composed op write the float32 cache's values rounded.
        for (auto dt : {kernels::KvDType::kBFloat16, kernels::KvDType::kFloat16}) {
          std::vector<uint16_t> k16a(kc1.size(), 0xffff), v16a(k16a), k16b(k16a), v16b(k16a);
          std::vector<float> q3(q1.size()), q4(q1.size());
          auto in3 = qkv, in4 = qkv;
          be->qkv_rope_and_cache(q3.data(), in3.data(), pos.data(), k16a.data(), v16a.data(), dt, slotMap.data(), T,
                                 spec);
          composed.qkv_rope_and_cache(q4.data(), in4.data(), pos.data(), k16b.data(), v16b.data(), dt, slotMap.data(),
                                      T, spec);
          QVERIFY(sameBits(q3, q1) && sameBits(q4, q1) && sameBits(in3, in1) && sameBits(in4, in1));
          QVERIFY(k16a == k16b && v16a == v16b);
          for (int t = 0; t < T; ++t) {
            const int64_t slot = slotMap[t];
            if (slot < 0) continue;
            std::vector<uint16_t> want(kvw);
            kernels::store_kv(want.data(), kc1.data() + slot * kvw, kvw, dt);
            QVERIFY(std::memcmp(want.data(), k16a.data() + slot * kvw, kvw * 2) == 0);
            kernels::store_kv(want.data(), vc1.data() + slot * kvw, kvw, dt);
            QVERIFY(std::memcmp(want.data(), v16a.data() + slot * kvw, kvw * 2) == 0);
          }
          QCOMPARE(k16a[size_t(1) * kvw], uint16_t(0xffff));  // slot 1 is never written
        }
        // Against the definition, in float64: bias, per-head RMSNorm, rotation by pos * inv_freq.
        for (int t = 0; t < T; ++t) {
          std::vector<double> row(qkv.begin() + size_t(t) * w, qkv.begin() + size_t(t + 1) * w);
          if (bias)
            for (int i = 0; i < w; ++i) row[i] += b[i];
          if (qkNorm)
            for (int h = 0; h < heads + kvh; ++h) {
              double ss = 0;
              for (int i = 0; i < hd; ++i) ss += row[h * hd + i] * row[h * hd + i];
              const double r = 1.0 / std::sqrt(ss / hd + 1e-6);
              for (int i = 0; i < hd; ++i) row[h * hd + i] *= r * (h < heads ? qn[i] : kn[i]);
            }
          for (int h = 0; h < heads; ++h)
            for (int i = 0; i < hd / 2; ++i) {
              const int i0 = neox ? i : 2 * i, i1 = neox ? i + hd / 2 : 2 * i + 1;
              const double a = pos[t] * inv[i], x0 = row[h * hd + i0], x1 = row[h * hd + i1];
              const double y0 = x0 * std::cos(a) - x1 * std::sin(a), y1 = x0 * std::sin(a) + x1 * std::cos(a);
              QVERIFY2(std::fabs(q1[size_t(t) * qw + h * hd + i0] - y0) < 2e-5 * (1 + std::fabs(y0)) &&
                           std::fabs(q1[size_t(t) * qw + h * hd + i1] - y1) < 2e-5 * (1 + std::fabs(y1)),
                       qPrintable(QString("t %1 h %2 pair %3").arg(t).arg(h).arg(i)));
            }
        }
        if (ref.size() < 2) ref.push_back(q1);
        QVERIFY2(sameBits(q1, ref[neox]), cpu::isa_name(isa));
      }
  }

  // fp32_to_fp16 / fp16_to_fp32: every half survives the round trip; float -> half rounds to
  // nearest even (midpoints between neighbours, subnormals, overflow, NaN), as F16C's vcvtps2ph
  // does where the CPU has it; store_kv / load_kv convert as the scalar functions.
  void float16Conversions() {
    for (uint32_t h = 0; h < 0x10000; ++h) {
      const float x = kernels::fp16_to_fp32(uint16_t(h));
      const bool nan = (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu);
      if (nan) {
        QVERIFY(std::isnan(x));
        QCOMPARE(kernels::fp32_to_fp16(x), uint16_t(h | 0x200u));  // quiet, payload kept
      } else {
        QCOMPARE(kernels::fp32_to_fp16(x), uint16_t(h));
      }
    }
    // Midpoints between consecutive finite halves go to the even one.
    for (uint32_t h = 0; h < 0x7bff; ++h) {
      const double lo = kernels::fp16_to_fp32(uint16_t(h)), hi = kernels::fp16_to_fp32(uint16_t(h + 1));
      const float mid = float((lo + hi) / 2);  // exact in float32
      QCOMPARE(kernels::fp32_to_fp16(mid), uint16_t(h % 2 == 0 ? h : h + 1));
      QCOMPARE(kernels::fp32_to_fp16(std::nextafter(mid, 0.0f)), uint16_t(h));
      QCOMPARE(kernels::fp32_to_fp16(std::nextafter(mid, 1e9f)), uint16_t(h + 1));
      QCOMPARE(kernels::fp32_to_fp16(-mid), uint16_t(0x8000u | (h % 2 == 0 ? h : h + 1)));
    }
    QCOMPARE(kernels::fp32_to_fp16(65504.0f), uint16_t(0x7bff));
    QCOMPARE(kernels::fp32_to_fp16(65519.99f), uint16_t(0x7bff));
    QCOMPARE(kernels::fp32_to_fp16(65520.0f), uint16_t(0x7c00));
    QCOMPARE(kernels::fp32_to_fp16(-INFINITY), uint16_t(0xfc00));
    QCOMPARE(kernels::fp32_to_fp16(1e-9f), uint16_t(0));
    QCOMPARE(kernels::fp32_to_fp16(-1e-9f), uint16_t(0x8000));
#if defined(__x86_64__) || defined(__i386__)
    if (hasF16c()) {
      std::mt19937 bits(5);
      for (int i = 0; i < 2000000; ++i) {
        uint32_t u = bits();
        if (i % 2) u = (u & 0x80000000u) | (0x33000000u + u % 0x14800000u);  // around the half range
        float x;
        std::memcpy(&x, &u, 4);
        if (std::isnan(x)) continue;
        QCOMPARE(kernels::fp32_to_fp16(x), hwFloatToHalf(x));
      }
      for (uint32_t h = 0; h < 0x10000; ++h) {
        const float a = kernels::fp16_to_fp32(uint16_t(h)), b = hwHalfToFloat(uint16_t(h));
        QVERIFY2(std::memcmp(&a, &b, 4) == 0, qPrintable(QString::number(h, 16)));
      }
    }
#endif
    const std::vector<float> v = {1.0f, -2.5f, 1.00390625f, 3.14159f, 1e-6f, 70000.0f, -0.0f, NAN};
    std::vector<uint16_t> b(v.size()), f(v.size());
    kernels::store_kv(b.data(), v.data(), int64_t(v.size()), kernels::KvDType::kBFloat16);
    kernels::store_kv(f.data(), v.data(), int64_t(v.size()), kernels::KvDType::kFloat16);
    std::vector<float> bw(v.size()), fw(v.size());
    kernels::load_kv(bw.data(), b.data(), int64_t(v.size()), kernels::KvDType::kBFloat16);
    kernels::load_kv(fw.data(), f.data(), int64_t(v.size()), kernels::KvDType::kFloat16);
    for (size_t i = 0; i < v.size(); ++i) {
      QCOMPARE(b[i], kernels::float_to_bf16(v[i]));
      QCOMPARE(f[i], kernels::fp32_to_fp16(v[i]));
      const float wb = kernels::bf16_to_float(b[i]), wf = kernels::fp16_to_fp32(f[i]);
      QVERIFY(std::memcmp(&bw[i], &wb, 4) == 0 && std::memcmp(&fw[i], &wf, 4) == 0);
    }
    QCOMPARE(f[5], uint16_t(0x7c00));  // 70000 overflows float16
    QCOMPARE(b[2], uint16_t(0x3f80));  // 1 + 2^-8 is a tie: to even (1.0)
  }

  // The q8_0 cache rows: ggml's block_q8_0 (f16 d = max|x| / 127, then 32 int8 q = round(x / d),
  // quantize_row_q8_0_ref), 34 bytes per 32 values; read back as d * q; a block holding a NaN or
  // an infinity reads back as NaN (never a finite wrong value); all-zero blocks stay zero.
  void q8KvRows() {
    QCOMPARE(kernels::kv_row_bytes(kernels::KvDType::kQ8_0, 96), std::size_t(102));
    QCOMPARE(kernels::kv_row_bytes(kernels::KvDType::kBFloat16, 96), std::size_t(192));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, kernels::kv_row_bytes(kernels::KvDType::kQ8_0, 48));
    std::vector<float> x = randomVec(128, rng_);
    for (int j = 64; j < 96; ++j) x[j] = 0.0f;
    x[100] = NAN;
    x[5] = 3.0f;  // the first block's max: d = 3 / 127
    std::vector<uint8_t> q(kernels::kv_row_bytes(kernels::KvDType::kQ8_0, 128));
    kernels::store_kv(q.data(), x.data(), 128, kernels::KvDType::kQ8_0);
    std::vector<float> back(128);
    kernels::load_kv(back.data(), q.data(), 128, kernels::KvDType::kQ8_0);
    for (int blk = 0; blk < 4; ++blk) {
      const uint8_t* p = q.data() + 34 * blk;
      const uint16_t dh = uint16_t(p[0] | (p[1] << 8));
      if (blk == 3) {
        for (int j = 96; j < 128; ++j) QVERIFY(std::isnan(back[j]));
        continue;
      }
      float amax = 0;
      for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[32 * blk + j]));
      const float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
      QCOMPARE(dh, kernels::fp32_to_fp16(d));
      for (int j = 0; j < 32; ++j) {
        const float v = x[32 * blk + j];
        QCOMPARE(int(int8_t(p[2 + j])), int(std::round(v * id)));
        QCOMPARE(back[32 * blk + j], kernels::fp16_to_fp32(dh) * float(int8_t(p[2 + j])));
        QVERIFY(std::fabs(back[32 * blk + j] - v) <= 0.51f * d + 1e-3f * std::fabs(v));
      }
    }
    QCOMPARE(int(int8_t(q[2 + 5])), 127);
    for (int j = 64; j < 96; ++j) QCOMPARE(back[j], 0.0f);
  }

  // add_bias and rms_norm_heads against their definitions, bitwise across instruction sets.
  void biasAndHeadNormAcrossIsas() {
    const int T = 3, n = 70, heads = 3, hd = 20, stride = 70;
    const auto x = randomVec(size_t(T) * n, rng_), b = randomVec(n, rng_), wn = randomVec(hd, rng_);
    std::vector<std::vector<float>> ref;
    for (cpu::Isa isa : supportedIsas()) {
      auto be = cpu::make_cpu_backend(2, isa);
      auto biased = x, normed = x;
      be->add_bias(biased.data(), b.data(), T, n);
      be->rms_norm_heads(normed.data() + 5, stride, wn.data(), T, heads, hd, 1e-6f);
      for (int t = 0; t < T; ++t) {
        for (int i = 0; i < n; ++i) QCOMPARE(biased[t * n + i], x[t * n + i] + b[i]);
        for (int i = 0; i < 5; ++i) QCOMPARE(normed[t * stride + i], x[t * stride + i]);  // outside the heads
        for (int i = 5 + heads * hd; i < stride; ++i) QCOMPARE(normed[t * stride + i], x[t * stride + i]);
        for (int h = 0; h < heads; ++h) {
          const float* in = x.data() + t * stride + 5 + h * hd;
          double ss = 0;
          for (int i = 0; i < hd; ++i) ss += double(in[i]) * in[i];
          const double r = 1.0 / std::sqrt(ss / hd + 1e-6);
          for (int i = 0; i < hd; ++i)
            QVERIFY(std::fabs(normed[t * stride + 5 + h * hd + i] - in[i] * r * wn[i]) <
                    1e-5 * (1 + std::fabs(in[i] * r * wn[i])));
        }
      }
      if (ref.empty()) ref = {biased, normed};
      QVERIFY2(sameBits(biased, ref[0]) && sameBits(normed, ref[1]), cpu::isa_name(isa));
    }
  }

  // Three requests (a 9-token prefill after 20 cached, a decode at 45, a 40-token prefill from 0)
  // in one call, against each one alone and against the prefill split into chunks; every
  // instruction set gives the scalar result. Head dims 8, 48 and 64 (partial and whole vectors).
  void attentionChunkAndBatchInvariant_data() {
    QTest::addColumn<int>("hd");
    QTest::addColumn<int>("bs");
    QTest::addColumn<int>("dtype");  // kernels::KvDType
    const int f32 = int(kernels::KvDType::kFloat32), bf16 = int(kernels::KvDType::kBFloat16),
              f16 = int(kernels::KvDType::kFloat16);
    QTest::newRow("hd8 bs4") << 8 << 4 << f32;
    QTest::newRow("hd48 bs16") << 48 << 16 << f32;
    QTest::newRow("hd64 bs16") << 64 << 16 << f32;
    QTest::newRow("hd20 bs32") << 20 << 32 << f32;
    QTest::newRow("hd16 bs16") << 16 << 16 << f32;
    QTest::newRow("hd32 bs16") << 32 << 16 << f32;
    // Chunk counts the register blocking splits unevenly (5 of 6, 9 of 16) and the largest.
    QTest::newRow("hd80 bs8") << 80 << 8 << f32;
    QTest::newRow("hd136 bs16") << 136 << 16 << f32;
    QTest::newRow("hd256 bs16") << 256 << 16 << f32;
    QTest::newRow("bf16 hd256 bs16") << 256 << 16 << bf16;
    QTest::newRow("bf16 hd8 bs4") << 8 << 4 << bf16;
    QTest::newRow("bf16 hd20 bs32") << 20 << 32 << bf16;
    QTest::newRow("bf16 hd64 bs16") << 64 << 16 << bf16;
    QTest::newRow("bf16 hd128 bs16") << 128 << 16 << bf16;
    QTest::newRow("f16 hd8 bs4") << 8 << 4 << f16;
    QTest::newRow("f16 hd20 bs32") << 20 << 32 << f16;
    QTest::newRow("f16 hd64 bs16") << 64 << 16 << f16;
    QTest::newRow("f16 hd128 bs16") << 128 << 16 << f16;
    const int q8 = int(kernels::KvDType::kQ8_0);
    QTest::newRow("q8_0 hd32 bs4") << 32 << 4 << q8;
    QTest::newRow("q8_0 hd64 bs16") << 64 << 16 << q8;
    QTest::newRow("q8_0 hd128 bs32") << 128 << 32 << q8;
  }
  // With a bfloat16, float16 or q8_0 cache, every result is also bitwise that of a float32 cache
  // holding the rounded values (and the float64 reference uses those values).
  void attentionChunkAndBatchInvariant() {
    QFETCH(int, hd);
    QFETCH(int, bs);
    QFETCH(int, dtype);
    const auto dt = kernels::KvDType(dtype);
    const int heads = 4, kvh = 2, qw = heads * hd, kvw = kvh * hd, nblocks = 40;
    const std::vector<int> ctx = {29, 45, 40}, qlen = {9, 1, 40};
    const TypedCache kt(randomVec(size_t(nblocks) * bs * kvw, rng_), dt), vt(randomVec(kt.rounded.size(), rng_), dt);
    const std::vector<float>&kc = kt.rounded, &vc = vt.rounded;
    std::vector<int> perm(nblocks);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng_);
    const int maxb = (45 + bs - 1) / bs;
    std::vector<int> tables(3 * maxb, 0);
    for (int r = 0, next = 0; r < 3; ++r)
      for (int b = 0; b < (ctx[r] + bs - 1) / bs; ++b) tables[r * maxb + b] = perm[next++];
    const int T = 50;
    auto q = randomVec(size_t(T) * qw, rng_);
    const std::vector<int> qsl = {0, 9, 10, 50};
    auto run = [&](kernels::Backend& be, const std::vector<int>& reqs, const std::vector<std::pair<int, int>>& spans,
                   bool asFloat32 = false) {
      // spans: per request (first query index within it, query count); returns out rows for them.
      std::vector<int> loc = {0}, lens, tab;
      std::vector<float> qq;
      for (size_t i = 0; i < reqs.size(); ++i) {
        const int r = reqs[i], first = spans[i].first, n = spans[i].second;
        for (int j = 0; j < n; ++j) {
          const float* src = q.data() + size_t(qsl[r] + first + j) * qw;
          qq.insert(qq.end(), src, src + qw);
        }
        loc.push_back(loc.back() + n);
        lens.push_back(ctx[r] - qlen[r] + first + n);
        tab.insert(tab.end(), tables.begin() + r * maxb, tables.begin() + (r + 1) * maxb);
      }
      AttentionMetadata m{loc.data(), lens.data(), tab.data(), maxb, int(reqs.size()), bs};
      std::vector<float> out(qq.size(), NAN);
      if (asFloat32)
        be.paged_attention(out.data(), qq.data(), kc.data(), vc.data(), kernels::KvDType::kFloat32, m,
                           {heads, kvh, hd});
      else
        be.paged_attention(out.data(), qq.data(), kt.bytes.data(), vt.bytes.data(), dt, m, {heads, kvh, hd});
      return out;
    };
    std::vector<float> ref;
    for (cpu::Isa isa : supportedIsas()) {
      auto be = cpu::make_cpu_backend(2, isa);
      const auto all = run(*be, {0, 1, 2}, {{0, 9}, {0, 1}, {0, 40}});
      if (ref.empty()) ref = all;
      QVERIFY2(sameBits(all, ref), cpu::isa_name(isa));
      if (dt != kernels::KvDType::kFloat32)
        QVERIFY2(sameBits(run(*be, {0, 1, 2}, {{0, 9}, {0, 1}, {0, 40}}, true), all), cpu::isa_name(isa));
      // Each request alone.
      for (int r = 0; r < 3; ++r) {
        const auto alone = run(*be, {r}, {{0, qlen[r]}});
        QVERIFY(std::memcmp(alone.data(), all.data() + size_t(qsl[r]) * qw, alone.size() * sizeof(float)) == 0);
      }
      // Request 2's prefill in chunks 1 + 6 + 33 (as chunked prefill would run it).
      int first = 0;
      for (int n : {1, 6, 33}) {
        const auto part = run(*be, {2}, {{first, n}});
        QVERIFY(std::memcmp(part.data(), all.data() + size_t(qsl[2] + first) * qw, part.size() * sizeof(float)) == 0);
        first += n;
      }
    }
    // And the values: a double-precision softmax attention for a few rows.
    for (int t : {0, 8, 9, 10, 49}) {
      const int r = t < 9 ? 0 : t < 10 ? 1 : 2;
      const int pos = ctx[r] - qlen[r] + (t - qsl[r]);
      for (int h = 0; h < heads; ++h) {
        auto kv = [&](const std::vector<float>& c, int p) {
          return &c[size_t(tables[r * maxb + p / bs] * bs + p % bs) * kvw + size_t(h / (heads / kvh)) * hd];
        };
        std::vector<double> s(pos + 1);
        double mx = -1e300, sum = 0;
        for (int p = 0; p <= pos; ++p) {
          double d = 0;
          for (int i = 0; i < hd; ++i) d += double(q[size_t(t) * qw + h * hd + i]) * kv(kc, p)[i];
          mx = std::max(mx, s[p] = d / std::sqrt(double(hd)));
        }
        for (auto& v : s) sum += (v = std::exp(v - mx));
        for (int i = 0; i < hd; ++i) {
          double o = 0;
          for (int p = 0; p <= pos; ++p) o += s[p] / sum * kv(vc, p)[i];
          QVERIFY(std::fabs(ref[size_t(t) * qw + h * hd + i] - o) < 1e-5);
        }
      }
    }
  }
};

QTEST_GUILESS_MAIN(TestCpuIsa)
#include "test_cpu_isa.moc"
