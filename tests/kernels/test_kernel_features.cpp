// The op-interface features of the newer model families (kernels/ops.h: RopeSpec::rotary_dim and
// NoPE, AttentionSpec's scale / sliding window / logit soft-cap, gelu_tanh_and_mul_stacked, scale,
// softcap, scatter_add_rows, Backend::supports) on the CPU backend (Gemma 4's: test_kernel_gemma4),
// against naive float64 references, on every instruction set this CPU has (bitwise the same).
#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernel_test_utils.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/ops.h"

using namespace pagedchat;
using namespace pagedchat::kernels;

using namespace kerneltest;

namespace {

// The float64 rotary embedding of one head (RopeSpec's definition).
void ropeRef(double* y, const float* x, int hd, int rd, bool neox, int pos, const double* inv) {
  for (int i = 0; i < hd; ++i) y[i] = x[i];
  if (!inv) return;
  for (int i = 0; i < rd / 2; ++i) {
    const int i0 = neox ? i : 2 * i, i1 = neox ? i + rd / 2 : 2 * i + 1;
    const double a = double(pos) * inv[i];
    y[i0] = x[i0] * std::cos(a) - double(x[i1]) * std::sin(a);
    y[i1] = x[i0] * std::sin(a) + double(x[i1]) * std::cos(a);
  }
}

// 0.5 x (1 + tanh(z)), z = sqrt(2/pi) (x + 0.044715 x^3), as x / (1 + exp(-2z)) (1 + tanh z = 2 / (1 +
// e^-2z)): in float64 1 + tanh(z) is 0 from z < -19 on, where gelu is still ~1e-16.
double geluTanhRef(double x) {
  const double z = std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
  return x / (1.0 + std::exp(-2.0 * z));
}

// A paged cache for attention tests: requests with their own (shuffled) blocks.
struct PagedCase {
  int block_size = 0, kvw = 0, maxb = 0;
  std::vector<int> qsl, lens, tables;
  std::vector<float> kf, vf;  // [slots, kvw], the values the cache holds (after rounding)
  std::vector<uint8_t> kc, vc;
  KvDType type = KvDType::kFloat32;
  int num_tokens() const { return qsl.back(); }
  AttentionMetadata meta() const {
    AttentionMetadata m{qsl.data(), lens.data(), tables.data(), maxb, int(lens.size()), block_size};
    m.num_tokens = num_tokens();
    return m;
  }
};

// Requests (context length, query length); blocks wholly before a request's earliest query's
// window get a table entry that is an absurd block id (odd blocks) or a block full of NaN (even
// ones); the slots before that window start inside its first block hold NaN too.
PagedCase makeCase(const std::vector<std::pair<int, int>>& reqs, int block_size, int kvw, KvDType type, int window,
                   std::mt19937& rng) {
  PagedCase c;
  c.block_size = block_size;
  c.kvw = kvw;
  c.type = type;
  c.qsl = {0};
  int blocks = 1;  // block 0: the NaN block
  for (auto [ctx, q] : reqs) {
    c.lens.push_back(ctx);
    c.qsl.push_back(c.qsl.back() + q);
    c.maxb = std::max(c.maxb, (ctx + block_size - 1) / block_size);
    blocks += (ctx + block_size - 1) / block_size;
  }
  std::vector<int> perm(blocks - 1);
  for (int i = 0; i < blocks - 1; ++i) perm[i] = i + 1;
  std::shuffle(perm.begin(), perm.end(), rng);
  const std::size_t nslots = std::size_t(blocks) * block_size;
  c.kf = randn(nslots * kvw, rng);
  c.vf = randn(nslots * kvw, rng);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::fill(c.kf.begin(), c.kf.begin() + std::ptrdiff_t(block_size) * kvw, nan);
  std::fill(c.vf.begin(), c.vf.begin() + std::ptrdiff_t(block_size) * kvw, nan);
  c.tables.assign(std::size_t(reqs.size()) * c.maxb, -1);
  int next = 0;
  for (std::size_t r = 0; r < reqs.size(); ++r) {
    const auto [ctx, q] = reqs[r];
    const int start = window > 0 ? std::max(0, ctx - q + 1 - window) : 0;  // earliest query's first key
    for (int b = 0; b < (ctx + block_size - 1) / block_size; ++b) {
      const int id = perm[next++];
      int& entry = c.tables[r * c.maxb + b];
      if ((b + 1) * block_size <= start) {
        entry = b % 2 ? (1 << 30) + b : 0;  // freed: garbage id or the NaN block
        continue;
      }
      entry = id;
      for (int o = 0; o < block_size; ++o)
        if (b * block_size + o < start) {
          std::fill_n(c.kf.begin() + (std::ptrdiff_t(id) * block_size + o) * kvw, kvw, nan);
          std::fill_n(c.vf.begin() + (std::ptrdiff_t(id) * block_size + o) * kvw, kvw, nan);
        }
    }
  }
  c.kc.resize(kv_row_bytes(type, int64_t(nslots) * kvw));
  c.vc.resize(c.kc.size());
  store_kv(c.kc.data(), c.kf.data(), int64_t(nslots) * kvw, type);
  store_kv(c.vc.data(), c.vf.data(), int64_t(nslots) * kvw, type);
  load_kv(c.kf.data(), c.kc.data(), int64_t(nslots) * kvw, type);  // what the cache holds
  load_kv(c.vf.data(), c.vc.data(), int64_t(nslots) * kvw, type);
  return c;
}

// float64 attention of every query token (AttentionSpec's definition).
std::vector<double> attentionRef(const PagedCase& c, const std::vector<float>& q, const AttentionSpec& s) {
  const int qw = s.n_heads * s.head_dim, group = s.n_heads / s.n_kv_heads;
  const double scale = s.scale != 0.0f ? s.scale : 1.0 / std::sqrt(double(s.head_dim));
  std::vector<double> out(std::size_t(c.num_tokens()) * qw);
  for (std::size_t r = 0; r + 1 < c.qsl.size(); ++r)
    for (int t = c.qsl[r]; t < c.qsl[r + 1]; ++t) {
      const int pos = c.lens[r] - (c.qsl[r + 1] - c.qsl[r]) + (t - c.qsl[r]);
      const int first = s.sliding_window > 0 ? std::max(0, pos + 1 - s.sliding_window) : 0;
      for (int h = 0; h < s.n_heads; ++h) {
        const int kvh = h / group;
        std::vector<double> w;
        double mx = -INFINITY;
        for (int p = first; p <= pos; ++p) {
          const int64_t slot = int64_t(c.tables[r * c.maxb + p / c.block_size]) * c.block_size + p % c.block_size;
          double d = 0;
          for (int i = 0; i < s.head_dim; ++i)
            d += double(q[std::size_t(t) * qw + h * s.head_dim + i]) * c.kf[slot * c.kvw + kvh * s.head_dim + i];
          d *= scale;
          if (s.logit_softcap > 0) d = s.logit_softcap * std::tanh(d / s.logit_softcap);
          w.push_back(d);
          mx = std::max(mx, d);
        }
        if (s.sinks) mx = std::max(mx, double(s.sinks[h]));
        double sum = s.sinks ? std::exp(double(s.sinks[h]) - mx) : 0.0;  // the sink's column, dropped
        for (double& x : w) sum += (x = std::exp(x - mx));
        for (int i = 0; i < s.head_dim; ++i) {
          double o = 0;
          for (int p = first; p <= pos; ++p) {
            const int64_t slot = int64_t(c.tables[r * c.maxb + p / c.block_size]) * c.block_size + p % c.block_size;
            o += w[p - first] / sum * c.vf[slot * c.kvw + kvh * s.head_dim + i];
          }
          out[std::size_t(t) * qw + h * s.head_dim + i] = o;
        }
      }
    }
  return out;
}

std::vector<float> runAttention(Backend& be, const PagedCase& c, const std::vector<float>& q, const AttentionSpec& s) {
  std::vector<float> out(q.size(), NAN);
  be.paged_attention(out.data(), q.data(), c.kc.data(), c.vc.data(), c.type, c.meta(), s);
  return out;
}

}  // namespace

class TestKernelFeatures : public QObject {
  Q_OBJECT
  std::mt19937 rng_{20250611};

 private slots:
  void featureNamesAndCpuSupport() {
    auto be = make_cpu_backend(2);
    for (OpFeature f : {OpFeature::kSlidingWindow, OpFeature::kAttentionScale, OpFeature::kLogitSoftcap,
                        OpFeature::kPartialRotary, OpFeature::kNoRope, OpFeature::kGeluTanh, OpFeature::kScale,
                        OpFeature::kMixtureOfExperts, OpFeature::kAttentionSinks, OpFeature::kSwigluOai}) {
      QVERIFY(be->supports(f));
      QVERIFY(std::strlen(op_feature_name(f)) > 3);
      QVERIFY(std::strcmp(op_feature_name(f), "?") != 0);
    }
    QCOMPARE(op_feature_name(OpFeature::kSlidingWindow), "sliding-window attention");
  }

  // Partial rotary (rotary_dim < head_dim) in both pair layouts against float64, with two ropes
  // alternating (as Gemma 3's local and global layers, and a partial one) so the per-rope tables
  // are reused and never mixed up; also after the values behind a pointer change.
  void partialRotary_data() {
    QTest::addColumn<bool>("neox");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<int>("rotaryDim");
    QTest::newRow("neox 64/16") << true << 64 << 16;
    QTest::newRow("neox 96/24 (phi4-mini)") << true << 96 << 24;
    QTest::newRow("interleaved 64/16") << false << 64 << 16;
    QTest::newRow("interleaved 40/10") << false << 40 << 10;
    QTest::newRow("neox whole (rotary_dim = head_dim)") << true << 32 << 32;
    QTest::newRow("interleaved whole (rotary_dim 0)") << false << 32 << 0;
  }
  void partialRotary() {
    QFETCH(bool, neox);
    QFETCH(int, headDim);
    QFETCH(int, rotaryDim);
    const int rd = rotaryDim > 0 ? rotaryDim : headDim, heads = 3, kvh = 1, T = 5;
    std::vector<double> local = rope_default_inv_freq(rd, 10000.0), global = rope_default_inv_freq(rd, 1e6);
    std::vector<double> whole = rope_default_inv_freq(headDim, 500000.0);
    const std::vector<int> pos = {0, 1, 17, 1234, 40000};
    const auto q0 = randn(std::size_t(T) * heads * headDim, rng_), k0 = randn(std::size_t(T) * kvh * headDim, rng_);
    std::vector<float> ref;
    for (cpu::Isa isa : supportedIsas()) {
      auto be = cpu::make_cpu_backend(2, isa);
      std::vector<float> got;
      for (int round = 0; round < 3; ++round)
        for (const std::vector<double>* inv : {&local, &whole, &global}) {
          const int r = inv == &whole ? headDim : rd;
          const RopeSpec spec{headDim, neox, inv->data(), inv == &whole ? 0 : rotaryDim};
          auto q = q0, k = k0;
          be->rotary_embedding(q.data(), k.data(), pos.data(), T, heads, kvh, spec);
          std::vector<double> y(headDim);
          double err = 0;
          for (int t = 0; t < T; ++t) {
            for (int h = 0; h < heads; ++h) {
              const std::size_t o = (std::size_t(t) * heads + h) * headDim;
              ropeRef(y.data(), q0.data() + o, headDim, r, neox, pos[t], inv->data());
              for (int i = 0; i < headDim; ++i) err = std::max(err, std::fabs(q[o + i] - y[i]));
              for (int i = r; i < headDim; ++i) QCOMPARE(q[o + i], q0[o + i]);  // passed through, bitwise
            }
            const std::size_t o = std::size_t(t) * kvh * headDim;
            ropeRef(y.data(), k0.data() + o, headDim, r, neox, pos[t], inv->data());
            for (int i = 0; i < headDim; ++i) err = std::max(err, std::fabs(k[o + i] - y[i]));
          }
          QVERIFY2(err < 2e-5, qPrintable(QString("max error %1").arg(err)));
          if (round == 2) got.insert(got.end(), q.begin(), q.end());
        }
      // The same pointer with other values (a table keyed by the pointer alone would be stale).
      std::vector<double> saved = local;
      for (double& f : local) f *= 0.5;
      auto q = q0, k = k0;
      be->rotary_embedding(q.data(), k.data(), pos.data(), T, heads, kvh, {headDim, neox, local.data(), rotaryDim});
      std::vector<double> y(headDim);
      for (int t = 0; t < T; ++t) {
        ropeRef(y.data(), q0.data() + std::size_t(t) * heads * headDim, headDim, rd, neox, pos[t], local.data());
        for (int i = 0; i < headDim; ++i) QVERIFY(std::fabs(q[std::size_t(t) * heads * headDim + i] - y[i]) < 2e-5);
      }
      local = saved;
      if (ref.empty())
        ref = got;
      else
        QVERIFY2(sameBits(got, ref), cpu::isa_name(isa));
    }
  }

  // NoPE (inv_freq null): rotary_embedding changes nothing; qkv_rope_and_cache still adds the
  // bias, normalises the heads and writes the cache, bitwise as the composed ops; with a partial
  // rope too; every KV dtype.
  void noRopeAndFusedPrologue_data() {
    QTest::addColumn<int>("kvType");
    QTest::addColumn<int>("rotaryDim");  // -1: NoPE
    QTest::newRow("f32 nope") << int(KvDType::kFloat32) << -1;
    QTest::newRow("bf16 nope") << int(KvDType::kBFloat16) << -1;
    QTest::newRow("f16 nope") << int(KvDType::kFloat16) << -1;
    QTest::newRow("q8_0 nope") << int(KvDType::kQ8_0) << -1;
    QTest::newRow("f32 partial") << int(KvDType::kFloat32) << 16;
    QTest::newRow("bf16 partial") << int(KvDType::kBFloat16) << 16;
  }
  void noRopeAndFusedPrologue() {
    QFETCH(int, kvType);
    QFETCH(int, rotaryDim);
    const KvDType type = KvDType(kvType);
    const int hd = 64, nh = 4, nkv = 2, T = 6, nslots = 16;
    QkvSpec s;
    s.n_heads = nh;
    s.n_kv_heads = nkv;
    s.head_dim = hd;
    const auto bias = randn(std::size_t(s.width()), rng_), qn = randn(hd, rng_), kn = randn(hd, rng_);
    s.bias = bias.data();
    s.q_norm = qn.data();
    s.k_norm = kn.data();
    s.norm_eps = 1e-6f;
    const std::vector<double> inv = rope_default_inv_freq(rotaryDim > 0 ? rotaryDim : hd, 10000.0);
    s.rope = {hd, true, rotaryDim > 0 ? inv.data() : nullptr, rotaryDim > 0 ? rotaryDim : 0};
    const std::vector<int> pos = {3, 4, 5, 6, 7, 100};
    const std::vector<int64_t> slot = {0, 1, -1, 5, 9, 15};
    const auto qkv0 = randn(std::size_t(T) * s.width(), rng_);
    const std::size_t cache_bytes = kv_row_bytes(type, int64_t(nslots) * s.kv_width());
    for (cpu::Isa isa : supportedIsas()) {
      auto be = cpu::make_cpu_backend(2, isa);
      // Fused.
      auto qkv = qkv0;
      std::vector<float> q(std::size_t(T) * s.q_width(), NAN);
      std::vector<uint8_t> kc(cache_bytes, 0xAB), vc(cache_bytes, 0xAB);
      be->qkv_rope_and_cache(q.data(), qkv.data(), pos.data(), kc.data(), vc.data(), type, slot.data(), T, s);
      // Composed.
      auto qkv2 = qkv0;
      be->add_bias(qkv2.data(), s.bias, T, s.width());
      be->rms_norm_heads(qkv2.data(), s.width(), s.q_norm, T, nh, hd, s.norm_eps);
      be->rms_norm_heads(qkv2.data() + s.q_width(), s.width(), s.k_norm, T, nkv, hd, s.norm_eps);
      QVERIFY(sameBits(qkv, qkv2));
      std::vector<float> q2(q.size()), k2(std::size_t(T) * s.kv_width()), v2(k2.size());
      for (int t = 0; t < T; ++t) {
        const float* row = qkv2.data() + std::size_t(t) * s.width();
        std::copy_n(row, s.q_width(), q2.data() + std::size_t(t) * s.q_width());
        std::copy_n(row + s.q_width(), s.kv_width(), k2.data() + std::size_t(t) * s.kv_width());
        std::copy_n(row + s.q_width() + s.kv_width(), s.kv_width(), v2.data() + std::size_t(t) * s.kv_width());
      }
      const auto qUnrotated = q2, kUnrotated = k2;
      be->rotary_embedding(q2.data(), k2.data(), pos.data(), T, nh, nkv, s.rope);
      if (rotaryDim < 0) {  // NoPE: nothing rotated
        QVERIFY(sameBits(q2, qUnrotated));
        QVERIFY(sameBits(k2, kUnrotated));
      } else {
        QVERIFY(!sameBits(q2, qUnrotated));
      }
      std::vector<uint8_t> kc2(cache_bytes, 0xAB), vc2(cache_bytes, 0xAB);
      be->reshape_and_cache(k2.data(), v2.data(), kc2.data(), vc2.data(), type, slot.data(), T, s.kv_width());
      QVERIFY(sameBits(q, q2));
      QVERIFY(kc == kc2);
      QVERIFY(vc == vc2);
    }
  }

  // Sliding-window attention (with GQA, a scale, a soft-cap, every KV dtype) against float64 over
  // a paged cache whose blocks before the window are freed (absurd ids, NaN blocks): a prefill
  // from 0 crossing the window edge, a chunk deep in the context, decodes, a short request.
  void slidingWindowAttention_data() {
    QTest::addColumn<int>("kvType");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<int>("window");
    QTest::addColumn<float>("scale");
    QTest::addColumn<float>("softcap");
    QTest::addColumn<int>("blockSize");
    QTest::newRow("f32 w13 hd20 bs4") << int(KvDType::kFloat32) << 20 << 13 << 0.0f << 0.0f << 4;
    QTest::newRow("bf16 w13 hd20 bs4") << int(KvDType::kBFloat16) << 20 << 13 << 0.0f << 0.0f << 4;
    QTest::newRow("f16 w16 hd64 bs16") << int(KvDType::kFloat16) << 64 << 16 << 0.0f << 0.0f << 16;
    QTest::newRow("q8_0 w7 hd64 bs8") << int(KvDType::kQ8_0) << 64 << 7 << 0.0f << 0.0f << 8;
    QTest::newRow("f32 w1 hd32") << int(KvDType::kFloat32) << 32 << 1 << 0.0f << 0.0f << 4;
    QTest::newRow("f32 w37 scale softcap") << int(KvDType::kFloat32) << 48 << 37 << 0.35f << 2.5f << 16;
    QTest::newRow("bf16 w37 scale softcap") << int(KvDType::kBFloat16) << 48 << 37 << 0.35f << 2.5f << 16;
    QTest::newRow("bf16 no window, softcap") << int(KvDType::kBFloat16) << 256 << 0 << 0.0625f << 1.0f << 16;
    QTest::newRow("f32 no window, scale") << int(KvDType::kFloat32) << 128 << 0 << 0.2f << 0.0f << 16;
  }
  void slidingWindowAttention() {
    QFETCH(int, kvType);
    QFETCH(int, headDim);
    QFETCH(int, window);
    QFETCH(float, scale);
    QFETCH(float, softcap);
    QFETCH(int, blockSize);
    const int nh = 6, nkv = 2;
    const AttentionSpec spec{nh, nkv, headDim, scale, window, softcap};
    // (context, query length): prefill from 0; a chunk at 60..68; decodes; a request shorter than the window.
    const std::vector<std::pair<int, int>> reqs = {{50, 50}, {69, 9}, {100, 1}, {41, 1}, {5, 2}, {33, 4}};
    const PagedCase c = makeCase(reqs, blockSize, nkv * headDim, KvDType(kvType), window, rng_);
    const auto q = randn(std::size_t(c.num_tokens()) * nh * headDim, rng_, 1.5f);
    const std::vector<double> ref = attentionRef(c, q, spec);  // outputs ~0.1-1: atol 1e-2 below
    std::vector<float> first;
    for (cpu::Isa isa : supportedIsas()) {
      auto be = cpu::make_cpu_backend(3, isa);
      const auto out = runAttention(*be, c, q, spec);
      const double err = worst(out, ref, 1e-2);
      QVERIFY2(err < 2e-4, qPrintable(QString("%1: worst relative error %2").arg(cpu::isa_name(isa)).arg(err)));
      if (first.empty())
        first = out;
      else
        QVERIFY2(sameBits(out, first), cpu::isa_name(isa));
    }
    // The soft-cap matters here: without it the reference is far off the kernel's result.
    if (softcap > 0) {
      const std::vector<double> uncapped = attentionRef(c, q, AttentionSpec{nh, nkv, headDim, scale, window, 0.0f});
      double diff = 0;
      for (std::size_t i = 0; i < ref.size(); ++i) diff = std::max(diff, std::fabs(uncapped[i] - first[i]));
      QVERIFY2(diff > 1e-2, qPrintable(QString("the soft-cap changed only %1").arg(diff)));
    }
  }

  // A query's result does not depend on how its request's tokens are grouped: a windowed prefill
  // equals bitwise the same positions decoded one at a time and in chunks of 3.
  void slidingWindowChunkInvariance() {
    const int nh = 4, nkv = 1, hd = 40, window = 11, ctx = 45;
    const AttentionSpec spec{nh, nkv, hd, 0.0f, window, 3.0f};
    const PagedCase full = makeCase({{ctx, ctx}}, 4, nkv * hd, KvDType::kBFloat16, window, rng_);
    const auto q = randn(std::size_t(ctx) * nh * hd, rng_);
    auto be = make_cpu_backend(2);
    const auto all = runAttention(*be, full, q, spec);
    for (int chunk : {1, 3, 5}) {
      for (int p0 = 0; p0 < ctx; p0 += chunk) {
        const int n = std::min(chunk, ctx - p0);
        PagedCase c = full;
        c.lens = {p0 + n};
        c.qsl = {0, n};
        // Blocks before this chunk's window: freed.
        for (int b = 0; (b + 1) * c.block_size <= std::max(0, p0 + 1 - window); ++b) c.tables[b] = 1 << 29;
        std::vector<float> qc(q.begin() + std::ptrdiff_t(p0) * nh * hd, q.begin() + std::ptrdiff_t(p0 + n) * nh * hd);
        const auto out = runAttention(*be, c, qc, spec);
        QVERIFY2(std::memcmp(out.data(), all.data() + std::size_t(p0) * nh * hd, out.size() * sizeof(float)) == 0,
                 qPrintable(QString("chunk %1 at %2").arg(chunk).arg(p0)));
      }
    }
    // A window as long as the context is full attention, bitwise.
    const AttentionSpec wide{nh, nkv, hd, 0.0f, ctx, 3.0f}, none{nh, nkv, hd, 0.0f, 0, 3.0f};
    QVERIFY(sameBits(runAttention(*be, full, q, wide), runAttention(*be, full, q, none)));
    // Window 1: each query sees only itself, so out = its own V row exactly.
    const auto own = runAttention(*be, full, q, AttentionSpec{nh, nkv, hd, 0.0f, 1, 0.0f});
    for (int p = 0; p < ctx; ++p) {
      const int64_t slot = int64_t(full.tables[p / 4]) * 4 + p % 4;
      for (int h = 0; h < nh; ++h)
        for (int i = 0; i < hd; ++i)
          QCOMPARE(own[(std::size_t(p) * nh + h) * hd + i], full.vf[std::size_t(slot) * nkv * hd + i]);
    }
  }

  // Attention sinks (gpt-oss): one extra logit per head in each softmax, with and without a
  // window, against float64 on every ISA (bitwise equal), split into chunks bitwise as one prefill,
  // and a sink that matters (far from the sink-less result).
  void attentionSinks_data() {
    QTest::addColumn<int>("kvType");
    QTest::addColumn<int>("window");
    QTest::newRow("f32 full") << int(KvDType::kFloat32) << 0;
    QTest::newRow("f32 w8") << int(KvDType::kFloat32) << 8;
    QTest::newRow("f16 w13") << int(KvDType::kFloat16) << 13;
  }
  void attentionSinks() {
    QFETCH(int, kvType);
    QFETCH(int, window);
    const int nh = 4, nkv = 2, hd = 32;
    std::vector<float> sinks = {-2.0f, 0.5f, 1.75f, 3.0f};
    AttentionSpec spec{nh, nkv, hd, 0.0f, window, 0.0f};
    spec.sinks = sinks.data();
    const std::vector<std::pair<int, int>> reqs = {{30, 30}, {41, 5}, {17, 1}, {3, 3}};
    const PagedCase c = makeCase(reqs, 4, nkv * hd, KvDType(kvType), window, rng_);
    const auto q = randn(std::size_t(c.num_tokens()) * nh * hd, rng_, 1.5f);
    const std::vector<double> ref = attentionRef(c, q, spec);
    std::vector<float> first;
    for (cpu::Isa isa : supportedIsas()) {
      auto be = cpu::make_cpu_backend(2, isa);
      const auto out = runAttention(*be, c, q, spec);
      const double err = worst(out, ref, 1e-2);
      QVERIFY2(err < 2e-4, qPrintable(QString("%1: worst relative error %2").arg(cpu::isa_name(isa)).arg(err)));
      if (first.empty())
        first = out;
      else
        QVERIFY2(sameBits(out, first), cpu::isa_name(isa));
    }
    AttentionSpec plain = spec;
    plain.sinks = nullptr;
    const std::vector<double> without = attentionRef(c, q, plain);
    double diff = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) diff = std::max(diff, std::fabs(without[i] - first[i]));
    QVERIFY2(diff > 1e-2, qPrintable(QString("the sinks changed only %1").arg(diff)));
    // The first request's prompt decoded one token at a time: the same bits.
    auto be = make_cpu_backend(2);
    for (int p0 = 0; p0 < 30; ++p0) {
      PagedCase one = c;
      one.lens = {p0 + 1};
      one.qsl = {0, 1};
      std::vector<float> qc(q.begin() + std::ptrdiff_t(p0) * nh * hd, q.begin() + std::ptrdiff_t(p0 + 1) * nh * hd);
      const auto out = runAttention(*be, one, qc, spec);
      QVERIFY2(std::memcmp(out.data(), first.data() + std::size_t(p0) * nh * hd, out.size() * sizeof(float)) == 0,
               qPrintable(QString("position %1").arg(p0)));
    }
  }

  // gpt-oss's clamped SwiGLU against its formula in double, around the clamps.
  void swigluOai() {
    const int T = 3, hidden = 37;
    std::vector<float> gu(std::size_t(T) * 2 * hidden);
    std::uniform_real_distribution<float> wide(-12.0f, 12.0f);
    for (auto& x : gu) x = wide(rng_);
    gu[0] = 7.0f;
    gu[hidden] = -7.5f;
    std::vector<float> out(std::size_t(T) * hidden);
    make_cpu_backend(1)->swiglu_oai_stacked(out.data(), gu.data(), T, hidden, 1.702f, 7.0f);
    for (int t = 0; t < T; ++t)
      for (int i = 0; i < hidden; ++i) {
        const double g = std::min<double>(gu[std::size_t(t) * 2 * hidden + i], 7.0);
        const double u = std::clamp<double>(gu[std::size_t(t) * 2 * hidden + hidden + i], -7.0, 7.0);
        const double ref = (u + 1.0) * g / (1.0 + std::exp(-1.702 * g));
        QVERIFY2(
            std::fabs(out[std::size_t(t) * hidden + i] - ref) <= 1e-5 * std::max(1.0, std::fabs(ref)),
            qPrintable(QString("t %1 i %2: %3 vs %4").arg(t).arg(i).arg(out[std::size_t(t) * hidden + i]).arg(ref)));
      }
  }

  void geluTanhAndMul() {
    const int T = 5, hidden = 1000 + 7;
    std::vector<float> gu(std::size_t(T) * 2 * hidden);
    std::uniform_real_distribution<float> wide(-12.0f, 12.0f);
    for (auto& x : gu) x = wide(rng_);
    const float special[] = {0.0f,  -0.0f, 1e-20f, -1e-20f, 1e-4f,  -3.0f, -5.0f,
                             -8.0f, -9.5f, 3.0f,   20.0f,   -20.0f, 1e4f,  -1e4f};
    for (std::size_t i = 0; i < std::size(special); ++i) gu[i] = special[i];
    for (double x : {-3.0, -1.0, -0.1, 0.0, 0.5, 2.0, 7.0})  // the formula as written, where it is well conditioned
      QVERIFY(std::fabs(geluTanhRef(x) - 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)))) <
              1e-14);
    std::vector<double> ref(std::size_t(T) * hidden);
    for (int t = 0; t < T; ++t)
      for (int i = 0; i < hidden; ++i)
        ref[std::size_t(t) * hidden + i] = geluTanhRef(gu[std::size_t(t) * 2 * hidden + i]) *
                                           gu[std::size_t(t) * 2 * hidden + hidden + i];
    // Relative error allowed: 2e-6, plus float32's rounding of the exponent 2z where that is large
    // (x < -5: the result is below 1e-7 |x|, and its condition number ~|2z|); nothing below 1e-20.
    auto check = [&](const std::vector<float>& out, const char* what) {
      double w = 0;
      for (int t = 0; t < T; ++t)
        for (int i = 0; i < hidden; ++i) {
          const double x = gu[std::size_t(t) * 2 * hidden + i];
          const double two_z = std::fabs(2 * std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x));
          const double r = ref[std::size_t(t) * hidden + i], o = out[std::size_t(t) * hidden + i];
          w = std::max(w, std::fabs(o - r) / ((2e-6 + 1.2e-7 * two_z) * std::fabs(r) + 1e-20));
        }
      QVERIFY2(w <= 1.0, qPrintable(QString("%1: error %2 times the bound").arg(what).arg(w)));
    };
    std::vector<float> first;
    for (cpu::Isa isa : supportedIsas()) {
      auto be = cpu::make_cpu_backend(2, isa);
      std::vector<float> out(ref.size(), NAN);
      be->gelu_tanh_and_mul_stacked(out.data(), gu.data(), T, hidden);
      check(out, cpu::isa_name(isa));
      if (first.empty())
        first = out;
      else
        QVERIFY2(sameBits(out, first), cpu::isa_name(isa));
    }
    // The host-loop default (ops_default.cpp) too.
    Defaults d;
    std::vector<float> out(ref.size(), NAN);
    d.gelu_tanh_and_mul_stacked(out.data(), gu.data(), T, hidden);
    check(out, "default");
  }

  void scaleAndSoftcap() {
    const int64_t n = 100003;  // threaded, with a tail
    auto x0 = randn(std::size_t(n), rng_, 30.0f);
    x0[0] = 0.0f;
    x0[1] = 1e-30f;
    x0[2] = -1e-6f;
    x0[3] = 1e30f;
    x0[4] = -INFINITY;
    std::vector<float> firstS, firstC;
    for (cpu::Isa isa : supportedIsas()) {
      auto be = cpu::make_cpu_backend(3, isa);
      auto s = x0;
      be->scale(s.data(), 0.7f, n);
      for (int64_t i = 0; i < n; ++i) QCOMPARE(s[i], x0[i] * 0.7f);
      for (float cap : {30.0f, 15.0f, 0.5f}) {
        auto c = x0;
        be->softcap(c.data(), cap, n);
        std::vector<double> ref(static_cast<std::size_t>(n));
        for (int64_t i = 0; i < n; ++i) ref[i] = cap * std::tanh(double(x0[i]) / cap);
        const double err = worst(c, ref, 1e-30);
        QVERIFY2(err < 2e-6,
                 qPrintable(QString("%1 cap %2: worst relative error %3").arg(cpu::isa_name(isa)).arg(cap).arg(err)));
        if (isa == supportedIsas().front()) {  // the host-loop default agrees
          Defaults d;
          auto c2 = x0;
          d.softcap(c2.data(), cap, n);
          QVERIFY(worst(c2, ref, 1e-30) < 1e-6);
        }
        if (cap == 30.0f) {
          if (firstC.empty())
            firstC = c;
          else
            QVERIFY2(sameBits(c, firstC), cpu::isa_name(isa));
        }
      }
    }
  }

  // Each row's softmax (the vision encoders' attention): a float64 reference within 2e-6
  // relative to the weight plus 1e-6 (x - max rounds to float first: a weight e^-17 carries
  // ~2e-6 relative error, e^-64 ~4e-6) on every instruction set and the host-loop default; rows
  // of any width (a tail, one column), large and -inf scores; a row alone gives its bits among
  // others.
  void softmaxRows() {
    for (const auto& [T, n] : std::vector<std::pair<int, int>>{{1, 1}, {3, 17}, {64, 1000}, {5, 4099}}) {
      auto x0 = randn(std::size_t(T) * std::size_t(n), rng_, 8.0f);
      x0[0] = n > 1 ? -INFINITY : x0[0];
      if (n > 2) x0[std::size_t(n) - 1] = 80.0f;  // exp overflows without the max taken out
      std::vector<double> ref(x0.size());
      for (int t = 0; t < T; ++t) {
        const float* r = x0.data() + std::size_t(t) * std::size_t(n);
        double m = -INFINITY, sum = 0;
        for (int i = 0; i < n; ++i) m = std::max(m, double(r[i]));
        for (int i = 0; i < n; ++i) sum += std::exp(double(r[i]) - m);
        for (int i = 0; i < n; ++i)
          ref[std::size_t(t) * std::size_t(n) + std::size_t(i)] = std::exp(double(r[i]) - m) / sum;
      }
      const QString what = QString("%1 rows of %2").arg(T).arg(n);
      for (cpu::Isa isa : supportedIsas()) {
        auto be = cpu::make_cpu_backend(3, isa);
        auto x = x0;
        be->softmax_rows(x.data(), T, n);
        QVERIFY2(worst(x, ref, 1e-6) < 2e-6, qPrintable(what + " " + cpu::isa_name(isa)));
        auto last = std::vector<float>(x0.end() - n, x0.end());
        be->softmax_rows(last.data(), 1, n);
        QVERIFY2(sameBits(last, std::vector<float>(x.end() - n, x.end())), qPrintable(what + " alone"));
      }
      Defaults d;
      auto x = x0;
      d.softmax_rows(x.data(), T, n);
      QVERIFY2(worst(x, ref, 1e-6) < 2e-6, qPrintable(what + " default"));
    }
  }

  // x[rows[s]] += w[s] * y[s] with repeated rows: float64 reference; bitwise the same for any
  // thread count and instruction set; a row's result depends only on its own entries.
  void scatterAddRows_data() {
    QTest::addColumn<int>("dim");
    QTest::newRow("small") << 37;
    QTest::newRow("threaded") << 4096 + 5;
  }
  void scatterAddRows() {
    QFETCH(int, dim);
    const int rowsX = 6, S = 17;
    const std::vector<int> rows = {3, 0, 3, 5, 1, 3, 0, 2, 2, 5, 3, 4, 0, 1, 3, 5, 2};
    QCOMPARE(int(rows.size()), S);
    const auto x0 = randn(std::size_t(rowsX) * dim, rng_), y = randn(std::size_t(S) * dim, rng_);
    const auto w = randn(S, rng_);
    std::vector<double> ref(x0.begin(), x0.end());
    for (int s = 0; s < S; ++s)
      for (int i = 0; i < dim; ++i) ref[std::size_t(rows[s]) * dim + i] += double(w[s]) * y[std::size_t(s) * dim + i];
    std::vector<float> first;
    for (cpu::Isa isa : supportedIsas())
      for (int threads : {1, 4}) {
        auto be = cpu::make_cpu_backend(threads, isa);
        auto x = x0;
        be->scatter_add_rows(x.data(), y.data(), rows.data(), w.data(), S, dim);
        QVERIFY(worst(x, ref, 1.0) < 1e-6);
        if (first.empty())
          first = x;
        else
          QVERIFY2(sameBits(x, first), cpu::isa_name(isa));
        // Row 3 alone (its entries in the same order): the same bits.
        std::vector<int> r3;
        std::vector<float> y3, w3;
        for (int s = 0; s < S; ++s)
          if (rows[s] == 3) {
            r3.push_back(0);
            w3.push_back(w[s]);
            y3.insert(y3.end(), y.begin() + std::ptrdiff_t(s) * dim, y.begin() + std::ptrdiff_t(s + 1) * dim);
          }
        std::vector<float> one(x0.begin() + 3 * dim, x0.begin() + 4 * dim);
        be->scatter_add_rows(one.data(), y3.data(), r3.data(), w3.data(), int(r3.size()), dim);
        QVERIFY(std::memcmp(one.data(), x.data() + 3 * dim, sizeof(float) * dim) == 0);
      }
    Defaults d;
    auto x = x0;
    d.scatter_add_rows(x.data(), y.data(), rows.data(), w.data(), S, dim);
    QVERIFY(worst(x, ref, 1.0) < 1e-6);
    x = x0;
    d.scale(x.data(), -2.5f, int64_t(x.size()));
    for (std::size_t i = 0; i < x.size(); ++i) QCOMPARE(x[i], x0[i] * -2.5f);
  }

  // Backend's default grouped_linear (a backend without its own: linear() per group) against
  // float64 references, and the same bits as the CPU backend's one-dispatch version.
  void groupedLinearDefault() {
    const int k = 48, n = 20;
    const std::vector<int> offsets = {0, 2, 2, 5, 6};
    const int T = offsets.back(), groups = int(offsets.size()) - 1;
    const auto x = randn(std::size_t(T) * k, rng_);
    std::vector<std::vector<float>> mats;
    for (int g = 0; g < groups; ++g) mats.push_back(randn(std::size_t(n) * k, rng_, 0.1f));
    Defaults d;
    auto cpu = cpu::make_cpu_backend(2, cpu::default_isa());
    std::vector<std::unique_ptr<PackedWeights>> packedD, packedC;
    std::vector<const PackedWeights*> gd, gc;
    for (const auto& m : mats) {
      const WeightPart part{m.data(), n, DType::kF32, DType::kF32};
      packedD.push_back(d.pack_weights({&part, 1}, k));
      packedC.push_back(cpu->pack_weights({&part, 1}, k));
      gd.push_back(packedD.back().get());
      gc.push_back(packedC.back().get());
    }
    std::vector<float> outD(std::size_t(T) * n, NAN), outC(outD);
    d.grouped_linear(outD.data(), x.data(), gd, offsets.data());
    cpu->grouped_linear(outC.data(), x.data(), gc, offsets.data());
    std::vector<double> ref(std::size_t(T) * n, 0.0);
    for (int g = 0; g < groups; ++g)
      for (int t = offsets[g]; t < offsets[g + 1]; ++t)
        for (int o = 0; o < n; ++o)
          for (int i = 0; i < k; ++i)
            ref[std::size_t(t) * n + o] += double(x[std::size_t(t) * k + i]) * mats[g][std::size_t(o) * k + i];
    QVERIFY(worst(outD, ref, 1e-3) < 1e-4);
    QVERIFY(sameBits(outD, outC));
  }
};

QTEST_GUILESS_MAIN(TestKernelFeatures)
#include "test_kernel_features.moc"
