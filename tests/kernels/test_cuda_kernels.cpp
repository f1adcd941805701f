// The CUDA backend's ops against the CPU backend's on random inputs, outputs poisoned (NaN) first
// so an unwritten element fails: ||gpu - cpu|| / ||cpu|| within a tolerance per op. Paged
// attention over block sizes 8/16/32, head sizes 64/128, GQA group sizes 1/2/4/8, the three KV
// cache types, decode and prefill chunks, and contexts that cross v2 partitions (512 tokens).
// Skips, saying why, without a CUDA device (and so in CI, which has none).
#include <QTest>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/backend_factory.h"
#include "kernels/float16_math.h"

using namespace pagedchat::kernels;

namespace {

// Device memory for one test: uploads, poisoned outputs, downloads.
struct Device {
  Backend& b;
  std::vector<std::unique_ptr<Buffer>> keep{};
  template <typename T>
  T* up(const std::vector<T>& v) {
    keep.push_back(b.allocate(std::max<std::size_t>(v.size(), 1) * sizeof(T)));
    b.copy_to_backend(keep.back()->data(), v.data(), v.size() * sizeof(T));
    return static_cast<T*>(keep.back()->data());
  }
  template <typename T>
  T* poisoned(std::size_t n) {
    std::vector<T> v(n);
    std::memset(v.data(), 0xff, n * sizeof(T));  // NaN as float, 0xffff as a 16-bit NaN
    return up(v);
  }
  template <typename T>
  std::vector<T> down(const T* p, std::size_t n) {
    std::vector<T> v(n);
    b.copy_to_host(v.data(), p, n * sizeof(T));
    return v;
  }
};

std::vector<float> randn(std::size_t n, unsigned seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// ||got - want|| / ||want|| over the elements that are not NaN on both sides; infinite when only
// one side holds a NaN there (an element left unwritten, or a NaN computed).
double rel_err(const std::vector<float>& got, const std::vector<float>& want) {
  double d = 0, n = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(got[i]) != std::isnan(want[i])) return INFINITY;
    if (std::isnan(want[i])) continue;  // never written on either side
    d += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
    n += double(want[i]) * want[i];
  }
  return std::sqrt(d / std::max(n, 1e-30));
}

std::vector<float> widen(const std::vector<uint16_t>& v, KvDType t) {
  std::vector<float> f(v.size());
  load_kv(f.data(), v.data(), int64_t(v.size()), t);
  return f;
}

#define CHECK_CLOSE(got, want, tol, what)                                                                \
  do {                                                                                                   \
    const double e_ = rel_err(got, want);                                                                \
    QVERIFY2(e_ <= (tol), qPrintable(QString("%1: relative error %2 > %3").arg(what).arg(e_).arg(tol))); \
  } while (0)

}  // namespace

class TestCudaKernels : public QObject {
  Q_OBJECT
  std::unique_ptr<Backend> gpu_, cpu_;

 private slots:
  void initTestCase() {
    std::string why;
    if (cuda_device_count(&why) == 0)
      QSKIP(qPrintable("no CUDA GPU here, CUDA kernel tests skipped: " + QString::fromStdString(why)));
    gpu_ = make_backend({"cuda", 2});
    cpu_ = make_cpu_backend(2);
    qInfo("%s", gpu_->description().c_str());
  }

  void norms() {
    Device d{*gpu_};
    for (int dim : {64, 100, 2048, 5120}) {
      const int T = 7;
      auto x = randn(std::size_t(T) * dim, dim, 3.0f), y = randn(x.size(), dim + 1), w = randn(dim, dim + 2);
      std::vector<float> want(x.size());
      cpu_->rms_norm(want.data(), x.data(), w.data(), T, dim, 1e-6f);
      float* out = d.poisoned<float>(x.size());
      gpu_->rms_norm(out, d.up(x), d.up(w), T, dim, 1e-6f);
      CHECK_CLOSE(d.down(out, x.size()), want, 1e-6, "rms_norm");
      // fused: residual += y, out = norm(residual), out aliasing y
      std::vector<float> res = x, yy = y;
      cpu_->fused_add_rms_norm(yy.data(), res.data(), yy.data(), w.data(), T, dim, 1e-6f);
      float* gres = d.up(x);
      float* gy = d.up(y);
      gpu_->fused_add_rms_norm(gy, gres, gy, d.up(w), T, dim, 1e-6f);
      CHECK_CLOSE(d.down(gres, x.size()), res, 1e-7, "fused residual");
      CHECK_CLOSE(d.down(gy, x.size()), yy, 1e-6, "fused_add_rms_norm");
    }
    // Per-head norms inside a wider row (Qwen3's q/k norm).
    const int T = 5, heads = 6, hd = 128, stride = 1000;
    auto x = randn(std::size_t(T) * stride, 9), w = randn(hd, 10);
    std::vector<float> want = x;
    cpu_->rms_norm_heads(want.data() + 8, stride, w.data(), T, heads, hd, 1e-6f);
    float* gx = d.up(x);
    gpu_->rms_norm_heads(gx + 8, stride, d.up(w), T, heads, hd, 1e-6f);
    CHECK_CLOSE(d.down(gx, x.size()), want, 1e-6, "rms_norm_heads");
    // No weight (a weightless RMSNorm).
    std::vector<float> want0 = x;
    cpu_->rms_norm_heads(want0.data() + 8, stride, nullptr, T, heads, hd, 1e-6f);
    float* gx0 = d.up(x);
    gpu_->rms_norm_heads(gx0 + 8, stride, nullptr, T, heads, hd, 1e-6f);
    CHECK_CLOSE(d.down(gx0, x.size()), want0, 1e-6, "rms_norm_heads without weight");
  }

  void elementwise() {
    Device d{*gpu_};
    const int T = 9, hidden = 1000;
    auto gu = randn(std::size_t(T) * 2 * hidden, 11, 3.0f);
    std::vector<float> want(std::size_t(T) * hidden);
    cpu_->silu_and_mul_stacked(want.data(), gu.data(), T, hidden);
    float* out = d.poisoned<float>(want.size());
    gpu_->silu_and_mul_stacked(out, d.up(gu), T, hidden);
    CHECK_CLOSE(d.down(out, want.size()), want, 1e-6, "silu_and_mul_stacked");
    auto x = randn(std::size_t(T) * hidden, 12), y = randn(x.size(), 13), bias = randn(hidden, 14);
    std::vector<float> w2 = x;
    cpu_->add(w2.data(), y.data(), int64_t(x.size()));
    cpu_->add_bias(w2.data(), bias.data(), T, hidden);
    float* gx = d.up(x);
    gpu_->add(gx, d.up(y), int64_t(x.size()));
    gpu_->add_bias(gx, d.up(bias), T, hidden);
    CHECK_CLOSE(d.down(gx, x.size()), w2, 0.0, "add, add_bias");
    const std::vector<int> rows = {8, 0, 3};
    std::vector<float> g(rows.size() * hidden);
    cpu_->gather_rows(g.data(), x.data(), rows.data(), 3, hidden);
    float* gg = d.poisoned<float>(g.size());
    gpu_->gather_rows(gg, gx, d.up(rows), 3, hidden);
    std::vector<float> want_g(g.size());
    cpu_->gather_rows(want_g.data(), w2.data(), rows.data(), 3, hidden);
    CHECK_CLOSE(d.down(gg, g.size()), want_g, 0.0, "gather_rows");
    std::vector<float> scaled = x;
    cpu_->scale(scaled.data(), 0.37f, int64_t(x.size()));
    float* gs = d.up(x);
    gpu_->scale(gs, 0.37f, int64_t(x.size()));
    CHECK_CLOSE(d.down(gs, x.size()), scaled, 0.0, "scale");
  }

  // What supports() denies reports an error (on a backend of its own: the error stays).
  void unsupportedFeatures() {
    QVERIFY(gpu_->supports(OpFeature::kAttentionScale));
    QVERIFY(!gpu_->supports(OpFeature::kSlidingWindow));
    auto g = make_backend({"cuda", 1});
    Device d{*g};
    std::vector<int> qsl = {0, 1}, lens = {1}, table = {0};
    AttentionMetadata m{d.up(qsl), d.up(lens), d.up(table), 1, 1, 16, 1, 1, 1};
    float* q = d.up(randn(64, 3));
    float* kc = d.up(randn(16 * 64, 4));
    float* out = d.poisoned<float>(64);
    g->paged_attention(out, q, kc, kc, KvDType::kFloat32, m, {1, 1, 64, 0.0f, 8});
    bool threw = false;
    try {
      d.down(out, 64);
    } catch (const std::runtime_error& e) {
      threw = QString(e.what()).contains("sliding-window attention has no CUDA kernel");
    }
    QVERIFY(threw);
  }

  void embedding() {
    Device d{*gpu_};
    const int vocab = 300, dim = 96, T = 11;
    std::vector<int> ids;
    for (int t = 0; t < T; ++t) ids.push_back((t * 37) % vocab);
    auto table = randn(std::size_t(vocab) * dim, 15);
    for (DType dt : {DType::kF32, DType::kF16, DType::kBF16, DType::kQ8_0}) {
      std::vector<uint8_t> bytes(dtype_row_bytes(dt, dim) * vocab);
      if (dt == DType::kF32) std::memcpy(bytes.data(), table.data(), bytes.size());
      for (std::size_t i = 0; dt == DType::kF16 && i < table.size(); ++i) {
        const uint16_t h = fp16_from_float(table[i]);
        std::memcpy(bytes.data() + 2 * i, &h, 2);
      }
      for (std::size_t i = 0; dt == DType::kBF16 && i < table.size(); ++i) {
        const uint16_t h = bf16_from_float(table[i]);
        std::memcpy(bytes.data() + 2 * i, &h, 2);
      }
      std::mt19937 rng(16);
      for (std::size_t b = 0; dt == DType::kQ8_0 && b < bytes.size(); b += 34) {  // block_q8_0: half d, int8 qs[32]
        const uint16_t scale = fp16_from_float(0.01f * float(1 + rng() % 7));
        std::memcpy(bytes.data() + b, &scale, 2);
        for (int j = 0; j < 32; ++j) bytes[b + 2 + j] = uint8_t(rng());
      }
      std::vector<float> want(std::size_t(T) * dim);
      cpu_->embedding(want.data(), bytes.data(), dt, ids.data(), T, dim);
      std::unique_ptr<Buffer> holder;
      DType packed;
      const void* table_dev = gpu_->place_embedding(bytes.data(), dt, vocab, dim, holder, &packed);
      float* out = d.poisoned<float>(want.size());
      gpu_->embedding(out, table_dev, packed, d.up(ids), T, dim);
      // Quantized tables are bfloat16 on the GPU.
      CHECK_CLOSE(d.down(out, want.size()), want, dt == DType::kQ8_0 ? 4e-3 : 0.0, dtype_name(dt));
    }
  }

  void linear() {
    Device d{*gpu_};
    const int n = 384, k = 256;
    auto w = randn(std::size_t(n) * k, 17, 0.05f);
    for (int T : {1, 5, 64}) {
      auto x = randn(std::size_t(T) * k, 18 + T);
      for (DType as : {DType::kF32, DType::kF16, DType::kBF16}) {
        const WeightPart part{w.data(), n, DType::kF32, as};
        auto pc = cpu_->pack_weights({&part, 1}, k);
        auto pg = gpu_->pack_weights({&part, 1}, k);
        std::vector<float> want(std::size_t(T) * n);
        cpu_->linear(want.data(), x.data(), *pc, T);
        float* out = d.poisoned<float>(want.size());
        gpu_->linear(out, d.up(x), *pg, T);
        // float32: cuBLAS's float32 (no TF32); 16-bit: the GPU also rounds the activations.
        CHECK_CLOSE(d.down(out, want.size()), want, as == DType::kF32 ? 1e-6 : 1e-2,
                    QString("linear %1 T=%2").arg(dtype_name(as)).arg(T));
      }
    }
  }

  // qkv_rope_and_cache with bias, q/k norms and both RoPE layouts, into every cache type.
  void qkvRopeAndCache_data() {
    QTest::addColumn<int>("kv");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<bool>("neox");
    QTest::addColumn<bool>("extras");
    for (int kv : {0, 1, 2})
      for (int hd : {64, 128})
        for (bool neox : {false, true})
          for (bool extras : {false, true})
            QTest::addRow("%s hd%d %s%s", kv_dtype_name(KvDType(kv)), hd, neox ? "neox" : "interleaved",
                          extras ? " bias+qk_norm" : "")
                << kv << hd << neox << extras;
  }
  void qkvRopeAndCache() {
    QFETCH(int, kv);
    QFETCH(int, headDim);
    QFETCH(bool, neox);
    QFETCH(bool, extras);
    const KvDType type = KvDType(kv);
    Device d{*gpu_};
    const int T = 6, nh = 8, nkv = 2, num_slots = 64;
    QkvSpec s;
    s.n_heads = nh;
    s.n_kv_heads = nkv;
    s.head_dim = headDim;
    s.norm_eps = 1e-6f;
    std::vector<double> inv = rope_default_inv_freq(headDim, 10000.0);
    auto bias = randn(s.width(), 19), qn = randn(headDim, 20), kn = randn(headDim, 21);
    s.rope = {headDim, neox, inv.data()};
    if (extras) {
      s.bias = bias.data();
      s.q_norm = qn.data();
      s.k_norm = kn.data();
    }
    auto qkv = randn(std::size_t(T) * s.width(), 22);
    const std::vector<int> pos = {0, 1, 2, 700, 701, 5000};
    const std::vector<int64_t> slot = {3, -1, 17, 40, 0, 63};
    const std::size_t cache_elems = std::size_t(num_slots) * s.kv_width(),
                      cache_bytes = kv_row_bytes(type, int64_t(cache_elems));
    std::vector<float> q_want(std::size_t(T) * s.q_width());
    std::vector<uint8_t> kc(cache_bytes, 0xff), vc(cache_bytes, 0xff);
    std::vector<float> qkv_cpu = qkv;
    cpu_->qkv_rope_and_cache(q_want.data(), qkv_cpu.data(), pos.data(), kc.data(), vc.data(), type, slot.data(), T, s);
    QkvSpec gs = s;
    gs.rope.inv_freq = d.up(inv);
    if (extras) {
      gs.bias = d.up(bias);
      gs.q_norm = d.up(qn);
      gs.k_norm = d.up(kn);
    }
    float* q = d.poisoned<float>(q_want.size());
    uint8_t* gk = d.up(std::vector<uint8_t>(kc.size(), 0xff));
    uint8_t* gv = d.up(std::vector<uint8_t>(vc.size(), 0xff));
    gpu_->qkv_rope_and_cache(q, d.up(qkv), d.up(pos), gk, gv, type, d.up(slot), T, gs);
    CHECK_CLOSE(d.down(q, q_want.size()), q_want, 1e-5, "q");
    auto as_float = [&](const std::vector<uint8_t>& bytes) {
      std::vector<float> f(cache_elems);
      if (type == KvDType::kFloat32)
        std::memcpy(f.data(), bytes.data(), bytes.size());
      else {
        std::vector<uint16_t> h(cache_elems);
        std::memcpy(h.data(), bytes.data(), bytes.size());
        f = widen(h, type);
      }
      return f;
    };
    // Slots never written keep the poison on both (NaN == NaN for rel_err).
    const double tol = type == KvDType::kFloat32 ? 1e-5 : 4e-3;
    CHECK_CLOSE(as_float(d.down(gk, kc.size())), as_float(kc), tol, "key cache");
    CHECK_CLOSE(as_float(d.down(gv, vc.size())), as_float(vc), type == KvDType::kFloat32 ? 1e-6 : 4e-3, "value cache");
  }

  // Paged attention against the CPU's, over the shapes of the issue; contexts up to 1300 tokens
  // (three 512-token partitions: v2 with its reduce), prefill chunks after earlier context, and
  // block tables out of order.
  void pagedAttention_data() {
    QTest::addColumn<int>("blockSize");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<int>("group");
    QTest::addColumn<int>("kv");
    QTest::addColumn<bool>("decodeOnly");
    for (int bs : {8, 16, 32})
      for (int hd : {64, 128})
        for (int g : {1, 2, 4, 8})
          for (int kv : {0, 1, 2})
            for (bool decode : {true, false})
              QTest::addRow("bs%d hd%d gqa%d %s %s", bs, hd, g, kv_dtype_name(KvDType(kv)),
                            decode ? "decode" : "prefill")
                  << bs << hd << g << kv << decode;
  }
  void pagedAttention() {
    QFETCH(int, blockSize);
    QFETCH(int, headDim);
    QFETCH(int, group);
    QFETCH(int, kv);
    QFETCH(bool, decodeOnly);
    const KvDType type = KvDType(kv);
    Device d{*gpu_};
    const int nkv = 2, nh = nkv * group, kvw = nkv * headDim;
    // (context after the step, tokens in the step). Decode only: the per-token kernel, v1 and v2
    // (1300 tokens: three partitions). With prefill chunks (one after earlier context, one longer
    // than a query tile, a whole prompt): the tiled kernel, the step's decodes included.
    const std::vector<std::pair<int, int>> reqs =
        decodeOnly ? std::vector<std::pair<int, int>>{{1, 1}, {1300, 1}, {513, 1}, {512, 1}, {37, 1}}
                   : std::vector<std::pair<int, int>>{{1, 1}, {1300, 1}, {70, 37}, {600, 100}, {16, 16}, {5, 5}};
    std::vector<int> qsl = {0}, lens;
    int maxb = 0, max_q = 0;
    for (auto [ctx, q] : reqs) {
      qsl.push_back(qsl.back() + q);
      lens.push_back(ctx);
      maxb = std::max(maxb, (ctx + blockSize - 1) / blockSize);
      max_q = std::max(max_q, q);
    }
    const int T = qsl.back(), R = int(reqs.size());
    std::vector<int> tables(std::size_t(R) * maxb, 0);
    int next = 0;
    for (int r = 0; r < R; ++r) {
      const int nb = (lens[r] + blockSize - 1) / blockSize;
      for (int i = nb - 1; i >= 0; --i) tables[std::size_t(r) * maxb + i] = next++;  // reversed
    }
    const int blocks = next;
    const std::size_t cache_elems = std::size_t(blocks) * blockSize * kvw;
    auto kf = randn(cache_elems, 30), vf = randn(cache_elems, 31);
    std::vector<uint8_t> kc(kv_row_bytes(type, int64_t(cache_elems))), vc(kc.size());
    store_kv(kc.data(), kf.data(), int64_t(cache_elems), type);
    store_kv(vc.data(), vf.data(), int64_t(cache_elems), type);
    auto q = randn(std::size_t(T) * nh * headDim, 32, 2.0f);
    AttentionMetadata m{qsl.data(), lens.data(), tables.data(), maxb, R, blockSize, T, max_q, 1300};
    std::vector<float> want(q.size());
    // A scale of its own for some (Gemma 3's query_pre_attn_scalar^-0.5).
    const AttentionSpec spec{nh, nkv, headDim, group == 2 ? 0.09f : 0.0f};
    cpu_->paged_attention(want.data(), q.data(), kc.data(), vc.data(), type, m, spec);
    AttentionMetadata gm = m;
    gm.query_start_loc = d.up(qsl);
    gm.seq_lens = d.up(lens);
    gm.block_tables = d.up(tables);
    float* out = d.poisoned<float>(q.size());
    gpu_->paged_attention(out, d.up(q), d.up(kc), d.up(vc), type, gm, spec);
    CHECK_CLOSE(d.down(out, q.size()), want, 1e-5, "paged_attention");
  }
};

QTEST_GUILESS_MAIN(TestCudaKernels)
#include "test_cuda_kernels.moc"
