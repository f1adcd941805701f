// CPU GEMM kernels (kernels/cpu): float32 and bfloat16 linear() on every instruction set this
// machine runs, against double-precision references; bitwise agreement between instruction sets;
// bitwise batch invariance for T = 1..33 and across thread counts; bfloat16 rounding and the
// packed layout's round trip.
#include <QTest>

#include <cmath>
#include <cstring>
#include <random>

#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/packed_weights.h"
#include "kernels/ops.h"

using namespace pagedchat;
using kernels::WeightPart;
using WeightType = kernels::DType;

namespace {

std::vector<float> randomVec(size_t n, std::mt19937& rng) {
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

float roundBf16(float x) { return kernels::bf16_to_float(kernels::float_to_bf16(x)); }

std::vector<cpu::Isa> supportedIsas() {
  std::vector<cpu::Isa> v;
  for (auto i : {cpu::Isa::kScalar, cpu::Isa::kAvx2, cpu::Isa::kAvx512, cpu::Isa::kAvx512Vnni, cpu::Isa::kAvx512Bf16})
    if (cpu::isa_supported(i)) v.push_back(i);
  return v;
}

bool sameBits(const float* a, const float* b, size_t n) { return std::memcmp(a, b, n * sizeof(float)) == 0; }

struct Shape {
  int n, k;
};
// Edge cases: n not a multiple of the 16-wide panel, odd k (bfloat16 pads), k past the 256 k-block.
const Shape kShapes[] = {{37, 61}, {16, 1}, {64, 64}, {100, 300}, {50, 700}, {3, 17}};

// out = x · W^T with W stacked from two parts, on `be`.
std::vector<float> runLinear(kernels::Backend& be, const std::vector<float>& x, const std::vector<float>& w, int T,
                             Shape s, WeightType type) {
  const int n0 = s.n / 2;
  const WeightPart parts[] = {{w.data(), n0, WeightType::kF32, type},
                              {w.data() + size_t(n0) * s.k, s.n - n0, WeightType::kF32, type}};
  auto packed = be.pack_weights(parts, s.k);
  std::vector<float> out(size_t(T) * s.n, NAN);
  be.linear(out.data(), x.data(), *packed, T);
  return out;
}

}  // namespace

class TestCpuGemm : public QObject {
  Q_OBJECT
  std::mt19937 rng_{7};

 private slots:
  void initTestCase() {
    qInfo("detected %s; testing %d instruction-set levels", cpu::isa_name(cpu::detect_isa()),
          int(supportedIsas().size()));
  }

  void bf16Rounding() {
    QCOMPARE(kernels::float_to_bf16(1.0f), uint16_t(0x3f80));
    QCOMPARE(kernels::float_to_bf16(1.0f + 0x1p-8f), uint16_t(0x3f80));      // tie -> even (down)
    QCOMPARE(kernels::float_to_bf16(1.0f + 3 * 0x1p-8f), uint16_t(0x3f82));  // tie -> even (up)
    QCOMPARE(kernels::float_to_bf16(1.0f + 0x1p-8f + 0x1p-20f), uint16_t(0x3f81));
    QCOMPARE(kernels::float_to_bf16(-0.0f), uint16_t(0x8000));
    QCOMPARE(kernels::float_to_bf16(INFINITY), uint16_t(0x7f80));
    QCOMPARE(kernels::float_to_bf16(3.4e38f), uint16_t(0x7f80));  // rounds past the largest bfloat16
    QVERIFY(std::isnan(kernels::bf16_to_float(kernels::float_to_bf16(NAN))));
    for (uint32_t b = 0; b < 0x10000; ++b) {  // every bfloat16 survives float and back
      const float f = kernels::bf16_to_float(uint16_t(b));
      if (!std::isnan(f)) QCOMPARE(kernels::float_to_bf16(f), uint16_t(b));
    }
  }

  void packRoundTrip_data() {
    QTest::addColumn<int>("type");
    QTest::newRow("float32") << int(WeightType::kF32);
    QTest::newRow("bfloat16") << int(WeightType::kBF16);
  }
  void packRoundTrip() {
    QFETCH(int, type);
    const WeightType t = WeightType(type);
    for (const Shape s : kShapes) {
      auto w = randomVec(size_t(s.n) * s.k, rng_);
      const int n0 = s.n / 3;
      const WeightPart parts[] = {{w.data(), n0, WeightType::kF32, t},
                                  {w.data() + size_t(n0) * s.k, s.n - n0, WeightType::kF32, t}};
      cpu::CpuPackedWeights p(parts, s.k);
      p.fill(0, p.num_panels());
      QCOMPARE(p.rows, s.n);
      QCOMPARE(p.num_panels(), (s.n + 15) / 16);
      QCOMPARE(p.padded_k(), t == WeightType::kBF16 ? (s.k + 1) / 2 * 2 : s.k);
      QVERIFY(p.bytes >= size_t(p.num_panels()) * 16 * p.padded_k() * (t == WeightType::kBF16 ? 2 : 4));
      for (int r = 0; r < s.n; ++r)
        for (int c = 0; c < s.k; ++c) {
          const float v = w[size_t(r) * s.k + c];
          QCOMPARE(p.at(r, c), t == WeightType::kBF16 ? roundBf16(v) : v);
        }
      for (int r = s.n; r < p.num_panels() * 16; ++r)  // padding rows and columns are zero
        for (int c = 0; c < p.padded_k(); ++c) QCOMPARE(p.at(r, c), 0.0f);
    }
  }

  // for_each_source maps panels back to the source rows they are packed from: each panel's
  // rows, whole rows inside one part, every row of every part exactly once over all panels (the
  // loader drops a mapped file's pages by these ranges while a matrix is packed).
  void sourceRangesOfPanels() {
    const int k = 8;
    auto w = randomVec(size_t(57) * k, rng_);
    const int rows[] = {20, 7, 30};  // segments: float32 rows 0..19, bfloat16 rows 20..56
    const WeightPart parts[] = {{w.data(), rows[0], WeightType::kF32, WeightType::kF32},
                                {w.data() + 20 * k, rows[1], WeightType::kF32, WeightType::kBF16},
                                {w.data() + 27 * k, rows[2], WeightType::kF32, WeightType::kBF16}};
    cpu::CpuPackedWeights p(parts, k);
    QCOMPARE(int(p.segments().size()), 2);
    std::vector<int> seen(57, 0);
    const auto* base = reinterpret_cast<const uint8_t*>(w.data());
    for (int panel = 0; panel < p.num_panels(); ++panel) {
      const auto& seg = panel < p.segments()[1].first_panel ? p.segments()[0] : p.segments()[1];
      p.for_each_source(panel, panel + 1, [&](const void* data, std::size_t bytes) {
        const std::ptrdiff_t off = static_cast<const uint8_t*>(data) - base;
        QVERIFY(off >= 0 && off % (k * 4) == 0 && bytes % (k * 4) == 0 && bytes > 0);
        const int r0 = int(off / (k * 4)), r1 = r0 + int(bytes / (k * 4));
        QVERIFY((r0 < 20) == (r1 <= 20) && (r0 < 27) == (r1 <= 27));  // inside one part
        for (int r = r0; r < r1; ++r) {
          QCOMPARE((r - seg.row0) / 16, panel - seg.first_panel);
          ++seen[r];
        }
      });
    }
    for (int r = 0; r < 57; ++r) QCOMPARE(seen[r], 1);
    // pack_weights reports the same rows as it packs (one band for a matrix this small).
    std::fill(seen.begin(), seen.end(), 0);
    auto be = cpu::make_cpu_backend(2, cpu::detect_isa());
    auto packed = be->pack_weights(parts, k, [&](const void* data, std::size_t bytes) {
      const int r0 = int((static_cast<const uint8_t*>(data) - base) / (k * 4));
      for (int r = r0; r < r0 + int(bytes / (k * 4)); ++r) ++seen[r];
    });
    for (int r = 0; r < 57; ++r) QCOMPARE(seen[r], 1);
  }

  // Each level against a double reference: float32 rel. error < 1e-6; bfloat16 computes with W
  // rounded to bfloat16 and x as it is (vdpbf16ps, kAvx512Bf16: x rounded to bfloat16 too), rel.
  // error < 1e-6 against that.
  void linearMatchesReference() {
    for (cpu::Isa isa : supportedIsas())
      for (WeightType t : {WeightType::kF32, WeightType::kBF16}) {
        auto be = cpu::make_cpu_backend(2, isa);
        for (const Shape s : kShapes) {
          const int T = 13;
          auto x = randomVec(size_t(T) * s.k, rng_), w = randomVec(size_t(s.n) * s.k, rng_);
          const auto out = runLinear(*be, x, w, T, s, t);
          double num = 0, den = 0;
          for (int i = 0; i < T; ++i)
            for (int o = 0; o < s.n; ++o) {
              double ref = 0;
              for (int j = 0; j < s.k; ++j) {
                float xv = x[size_t(i) * s.k + j], wv = w[size_t(o) * s.k + j];
                if (t == WeightType::kBF16) wv = roundBf16(wv);
                if (t == WeightType::kBF16 && isa == cpu::Isa::kAvx512Bf16) xv = roundBf16(xv);
                ref += double(xv) * wv;
              }
              const double d = out[size_t(i) * s.n + o] - ref;
              num += d * d;
              den += ref * ref;
            }
          const double err = std::sqrt(num / den);
          QVERIFY2(err < 1e-6, qPrintable(QString("%1 %2 n=%3 k=%4: rel err %5")
                                              .arg(cpu::isa_name(isa))
                                              .arg(t == WeightType::kBF16 ? "bf16" : "f32")
                                              .arg(s.n)
                                              .arg(s.k)
                                              .arg(err)));
        }
      }
  }

  // Float32: every level gives the scalar path's bits (the same fma sequence per element).
  // Bfloat16: every level but vdpbf16ps (kAvx512Bf16, which rounds x) agrees bitwise, and with
  // the float32 GEMM on the rounded weights.
  void linearBitwiseAcrossIsas() {
    auto scalar = cpu::make_cpu_backend(1, cpu::Isa::kScalar);
    for (WeightType t : {WeightType::kF32, WeightType::kBF16})
      for (const Shape s : kShapes) {
        const int T = 11;
        auto x = randomVec(size_t(T) * s.k, rng_), w = randomVec(size_t(s.n) * s.k, rng_);
        const auto ref = runLinear(*scalar, x, w, T, s, t);
        if (t == WeightType::kBF16) {
          std::vector<float> wr(w.size());
          for (size_t i = 0; i < w.size(); ++i) wr[i] = roundBf16(w[i]);
          const auto f32 = runLinear(*scalar, x, wr, T, s, WeightType::kF32);
          QVERIFY(sameBits(f32.data(), ref.data(), ref.size()));
        }
        for (cpu::Isa isa : supportedIsas()) {
          if (t == WeightType::kBF16 && isa == cpu::Isa::kAvx512Bf16) continue;
          auto be = cpu::make_cpu_backend(2, isa);
          const auto out = runLinear(*be, x, w, T, s, t);
          QVERIFY2(sameBits(out.data(), ref.data(), out.size()),
                   qPrintable(QString("%1 n=%2 k=%3").arg(cpu::isa_name(isa)).arg(s.n).arg(s.k)));
        }
      }
  }

  // Row t of linear() is bitwise the same for T = 1..33 (tiles of every height, with and without
  // k-blocking) and for 1, 2 or 3 threads.
  void linearBatchInvariant() {
    const int maxT = 33;
    for (cpu::Isa isa : supportedIsas())
      for (WeightType t : {WeightType::kF32, WeightType::kBF16})
        for (const Shape s : {Shape{37, 61}, Shape{50, 700}, Shape{130, 40}}) {
          auto x = randomVec(size_t(maxT) * s.k, rng_), w = randomVec(size_t(s.n) * s.k, rng_);
          auto be2 = cpu::make_cpu_backend(2, isa);
          const auto full = runLinear(*be2, x, w, maxT, s, t);
          for (int threads : {1, 3}) {
            auto be = cpu::make_cpu_backend(threads, isa);
            QVERIFY(sameBits(runLinear(*be, x, w, maxT, s, t).data(), full.data(), full.size()));
          }
          for (int T = 1; T <= maxT; ++T) {
            const auto part = runLinear(*be2, x, w, T, s, t);
            QVERIFY2(sameBits(part.data(), full.data(), part.size()),
                     qPrintable(QString("%1 T=%2 n=%3 k=%4").arg(cpu::isa_name(isa)).arg(T).arg(s.n).arg(s.k)));
          }
          for (int row = 0; row < maxT; row += 5) {  // a row alone, from anywhere in the batch
            std::vector<float> one(x.begin() + size_t(row) * s.k, x.begin() + size_t(row + 1) * s.k);
            const auto out = runLinear(*be2, one, w, 1, s, t);
            QVERIFY(sameBits(out.data(), full.data() + size_t(row) * s.n, size_t(s.n)));
          }
        }
  }

  // matmul() on an unpacked matrix equals linear() on its float32 packing, bitwise.
  void matmulEqualsLinear() {
    auto be = kernels::make_cpu_backend(2);
    const Shape s{37, 61};
    const int T = 9;
    auto x = randomVec(size_t(T) * s.k, rng_), w = randomVec(size_t(s.n) * s.k, rng_);
    std::vector<float> out(size_t(T) * s.n);
    be->matmul(out.data(), x.data(), w.data(), T, s.n, s.k);
    QVERIFY(sameBits(out.data(), runLinear(*be, x, w, T, s, WeightType::kF32).data(), out.size()));
  }
};

QTEST_GUILESS_MAIN(TestCpuGemm)
#include "test_cpu_gemm.moc"
