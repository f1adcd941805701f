// CPU kernels against naive references on random inputs; batch invariance of matmul.
#include <QTest>

#include <cmath>
#include <random>

#include "kernels/ops.h"

using namespace pagedchat::kernels;

namespace {
std::vector<float> randomVec(size_t n, std::mt19937& rng) {
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}
double relErr(const std::vector<float>& a, const std::vector<float>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * double(a[i] - b[i]);
    den += double(b[i]) * b[i];
  }
  return std::sqrt(num / std::max(den, 1e-30));
}
}  // namespace

class TestCpuKernels : public QObject {
  Q_OBJECT
  std::mt19937 rng_{42};

 private slots:
  void matmulMatchesReferenceAndIsBatchInvariant() {
    auto be = make_cpu_backend(2);
    const int T = 7, n = 37, k = 61;
    auto x = randomVec(size_t(T) * k, rng_), w = randomVec(size_t(n) * k, rng_);
    std::vector<float> out(size_t(T) * n), ref(size_t(T) * n);
    be->matmul(out.data(), x.data(), w.data(), T, n, k);
    for (int t = 0; t < T; ++t)
      for (int o = 0; o < n; ++o) {
        double s = 0;
        for (int j = 0; j < k; ++j) s += double(x[size_t(t) * k + j]) * w[size_t(o) * k + j];
        ref[size_t(t) * n + o] = float(s);
      }
    QVERIFY(relErr(out, ref) < 1e-6);
    for (int t = 0; t < T; ++t) {  // each row alone: bitwise the same
      std::vector<float> one(n);
      be->matmul(one.data(), x.data() + size_t(t) * k, w.data(), 1, n, k);
      QVERIFY(std::memcmp(one.data(), out.data() + size_t(t) * n, sizeof(float) * n) == 0);
    }
  }

  void pagedAttentionMatchesContiguous_data() {
    QTest::addColumn<int>("blockSize");
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("kvHeads");
    QTest::newRow("bs16 mha") << 16 << 4 << 4;
    QTest::newRow("bs8 gqa2") << 8 << 8 << 4;
    QTest::newRow("bs32 gqa4") << 32 << 8 << 2;
    QTest::newRow("bs4 mqa") << 4 << 4 << 1;
  }
  void pagedAttentionMatchesContiguous() {
    QFETCH(int, blockSize);
    QFETCH(int, heads);
    QFETCH(int, kvHeads);
    auto be = make_cpu_backend(2);
    const int hd = 16, kvw = kvHeads * hd;
    // Two requests: one decoding at context 45, one prefilling 5 tokens after 20 cached.
    const std::vector<int> ctx = {45, 25}, qlen = {1, 5};
    const int num_blocks = 40;
    std::vector<float> kc = randomVec(size_t(num_blocks) * blockSize * kvw, rng_), vc = randomVec(kc.size(), rng_);
    std::vector<int> perm(num_blocks);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng_);
    const int maxb = (45 + blockSize - 1) / blockSize;
    std::vector<int> tables(2 * maxb, 0);
    int next = 0;
    for (int r = 0; r < 2; ++r)
      for (int b = 0; b < (ctx[r] + blockSize - 1) / blockSize; ++b) tables[r * maxb + b] = perm[next++];
    const int T = 6;
    auto q = randomVec(size_t(T) * heads * hd, rng_);
    std::vector<int> qsl = {0, 1, 6};
    AttentionMetadata m{qsl.data(), ctx.data(), tables.data(), maxb, 2, blockSize};
    std::vector<float> out(q.size(), NAN), ref(q.size());
    be->paged_attention(out.data(), q.data(), kc.data(), vc.data(), KvDType::kFloat32, m, {heads, kvHeads, hd});
    for (int t = 0; t < T; ++t) {
      const int r = t < 1 ? 0 : 1;
      const int pos = ctx[r] - qlen[r] + (t - qsl[r]);
      for (int h = 0; h < heads; ++h) {
        std::vector<double> s(pos + 1);
        double mx = -1e300;
        auto kv_at = [&](const std::vector<float>& c, int p) {
          const int slot = tables[r * maxb + p / blockSize] * blockSize + p % blockSize;
          return &c[size_t(slot) * kvw + size_t(h / (heads / kvHeads)) * hd];
        };
        for (int p = 0; p <= pos; ++p) {
          double d = 0;
          for (int i = 0; i < hd; ++i) d += double(q[size_t(t) * heads * hd + h * hd + i]) * kv_at(kc, p)[i];
          s[p] = d / std::sqrt(double(hd));
          mx = std::max(mx, s[p]);
        }
        double sum = 0;
        for (auto& v : s) sum += (v = std::exp(v - mx));
        for (int i = 0; i < hd; ++i) {
          double o = 0;
          for (int p = 0; p <= pos; ++p) o += s[p] / sum * kv_at(vc, p)[i];
          ref[size_t(t) * heads * hd + h * hd + i] = float(o);
        }
      }
    }
    const double err = relErr(out, ref);
    QVERIFY2(err < 1e-5, qPrintable(QString::number(err)));
  }

  void rotaryMatchesFormula() {
    auto be = make_cpu_backend(1);
    const int hd = 8, heads = 2, kvh = 1;
    auto q = randomVec(heads * hd, rng_), k = randomVec(kvh * hd, rng_);
    auto q0 = q, k0 = k;
    const int pos = 37;
    const std::vector<double> inv = rope_default_inv_freq(hd, 10000.0);
    be->rotary_embedding(q.data(), k.data(), &pos, 1, heads, kvh, {hd, false, inv.data()});
    for (int h = 0; h < heads; ++h)
      for (int i = 0; i < hd; i += 2) {
        const double a = pos * std::pow(10000.0, -double(i) / hd);
        const double x0 = q0[h * hd + i], x1 = q0[h * hd + i + 1];
        QVERIFY(std::fabs(q[h * hd + i] - (x0 * std::cos(a) - x1 * std::sin(a))) < 1e-4);
        QVERIFY(std::fabs(q[h * hd + i + 1] - (x0 * std::sin(a) + x1 * std::cos(a))) < 1e-4);
      }
    QVERIFY(k != k0);
    // Rotate-half ("neox") pairs i with i + hd/2.
    auto qn = q0, kn = k0;
    be->rotary_embedding(qn.data(), kn.data(), &pos, 1, heads, kvh, {hd, true, inv.data()});
    for (int h = 0; h < heads; ++h)
      for (int i = 0; i < hd / 2; ++i) {
        const double a = pos * std::pow(10000.0, -2.0 * i / hd);
        const double x0 = q0[h * hd + i], x1 = q0[h * hd + i + hd / 2];
        QVERIFY(std::fabs(qn[h * hd + i] - (x0 * std::cos(a) - x1 * std::sin(a))) < 1e-4);
        QVERIFY(std::fabs(qn[h * hd + i + hd / 2] - (x0 * std::sin(a) + x1 * std::cos(a))) < 1e-4);
      }
  }

  void reshapeAndCacheSkipsPadding() {
    auto be = make_cpu_backend(1);
    const int kvw = 4;
    std::vector<float> k = {1, 2, 3, 4, 5, 6, 7, 8}, v = {9, 10, 11, 12, 13, 14, 15, 16};
    std::vector<float> kc(4 * kvw, 0), vc(4 * kvw, 0);
    const int64_t slot_mapping[2] = {2, -1};
    be->reshape_and_cache(k.data(), v.data(), kc.data(), vc.data(), KvDType::kFloat32, slot_mapping, 2, kvw);
    QCOMPARE(kc[8], 1.0f);
    QCOMPARE(vc[11], 12.0f);
    QCOMPARE(std::count(kc.begin(), kc.end(), 0.0f), 12L);
  }

  void rmsNormAndSilu() {
    auto be = make_cpu_backend(1);
    std::vector<float> x = {1, -2, 3, -4}, w = {1, 1, 2, 0.5f}, out(4);
    be->rms_norm(out.data(), x.data(), w.data(), 1, 4, 1e-5f);
    const float inv = 1.0f / std::sqrt((1 + 4 + 9 + 16) / 4.0f + 1e-5f);
    QVERIFY(std::fabs(out[2] - 2 * 3 * inv) < 1e-6);
    std::vector<float> g = {0, 1, -1}, u = {2, 2, 2}, s(3);
    be->silu_and_mul(s.data(), g.data(), u.data(), 1, 3);
    QCOMPARE(s[0], 0.0f);
    QVERIFY(std::fabs(s[1] - 2 * (1 / (1 + std::exp(-1.0f)))) < 1e-6);
  }
};

QTEST_GUILESS_MAIN(TestCpuKernels)
#include "test_cpu_kernels.moc"
