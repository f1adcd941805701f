// Quantized weights kept in their file's type (kernels/cpu/quant_layout.h) and the integer GEMMs
// over them (kernels/cpu/quant_impl.inc): for every block type, every instruction set this CPU
// runs gives bitwise the scalar reference of kernels/quant/quant_ref.h (which reads ggml's row
// format), for k not a multiple of 256 where the type allows, n not a multiple of 16 and T = 1..33
// and 64; rows are batch invariant; the reference is within the activation-quantization bound of
// x · dequantized(W)^T; stacks of mixed types equal each part alone; float16 panels equal the
// float32 GEMM on the same values bitwise, bfloat16 ones (float32 activations) too; packed
// memory stays within 5% of the file's bytes.
#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>

#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/isa_kernels.h"
#include "kernels/cpu/packed_weights.h"
#include "kernels/ops.h"
#include "kernels/quant/quant_ref.h"

using namespace pagedchat;
using kernels::DType;
using kernels::WeightPart;

namespace {

const DType kQuantTypes[] = {DType::kQ8_0, DType::kQ4_0, DType::kQ4_1,  DType::kQ5_0,   DType::kQ5_1,  DType::kQ4_K,
                             DType::kQ5_K, DType::kQ6_K, DType::kMXFP4, DType::kIQ4_NL, DType::kIQ4_XS};

std::vector<cpu::Isa> supportedIsas() {
  std::vector<cpu::Isa> v;
  for (auto i : {cpu::Isa::kScalar, cpu::Isa::kAvx2, cpu::Isa::kAvx512, cpu::Isa::kAvx512Vnni, cpu::Isa::kAvx512Bf16})
    if (cpu::isa_supported(i)) v.push_back(i);
  return v;
}

bool sameBits(const float* a, const float* b, size_t n) { return std::memcmp(a, b, n * sizeof(float)) == 0; }

void putHalf(uint8_t* p, float v) {
  const uint16_t h = kernels::fp32_to_fp16(v);
  p[0] = uint8_t(h);
  p[1] = uint8_t(h >> 8);
}

// n rows of k values of type t: random quants and scale bytes (or every byte `fill`), the f16
// scales set to finite values of a plausible size (mins of either sign); MXFP4's E8M0 exponents
// mostly 2^-18..2^-1, one block in 16 the subnormal scales of e = 0, 1, 2.
std::vector<uint8_t> randomRows(DType t, int n, int k, std::mt19937& rng, int fill = -1) {
  const size_t rb = kernels::dtype_row_bytes(t, k);
  std::vector<uint8_t> m(rb * n);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> scale(0.002f, 0.05f), sgn(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(110, 127), tiny(0, 47);
  for (auto& b : m) b = uint8_t(fill >= 0 ? fill : byte(rng));
  const int be = kernels::dtype_block_bytes(t);
  for (size_t off = 0; off < m.size(); off += be) {
    uint8_t* b = m.data() + off;
    switch (t) {
      case DType::kQ4_1:
      case DType::kQ5_1:
        putHalf(b, scale(rng));
        putHalf(b + 2, sgn(rng) * 0.3f);
        break;
      case DType::kQ4_K:
      case DType::kQ5_K:
        putHalf(b, scale(rng) * 0.1f);
        putHalf(b + 2, scale(rng) * 0.1f);
        break;
      case DType::kQ6_K:
        putHalf(b + 208, scale(rng) * 0.1f);
        break;
      case DType::kIQ4_NL:
        putHalf(b, scale(rng) * 0.1f);
        break;
      case DType::kIQ4_XS:  // the 6-bit sub-scales stay random (ls - 32: -32..31)
        putHalf(b, scale(rng) * 0.01f);
        break;
      case DType::kMXFP4: {
        const int r = tiny(rng);
        b[0] = uint8_t(r < 3 ? r : exponent(rng));
        break;
      }
      default:
        putHalf(b, scale(rng));
        break;
    }
  }
  return m;
}

// T rows of k: normal values, with some all-zero 32-groups (scale 0) and some outliers.
std::vector<float> randomX(int T, int k, std::mt19937& rng) {
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> x(size_t(T) * k);
  for (auto& v : x) v = d(rng);
  for (int t = 0; t < T; t += 3)
    for (int i = 0; i < 32; ++i) x[size_t(t) * k + (t / 3 % (k / 32)) * 32 + i] = 0.0f;
  for (int t = 1; t < T; t += 4) x[size_t(t) * k + (t * 7) % k] = 40.0f;
  return x;
}

struct QuantX {
  std::vector<int8_t> q;
  std::vector<kernels::QuantActGroup> g;
};
QuantX quantizeX(const std::vector<float>& x, int T, int k) {
  QuantX r;
  r.q.resize(size_t(T) * k);
  r.g.resize(size_t(T) * (k / 32));
  for (int t = 0; t < T; ++t)
    kernels::quantize_activation_row(x.data() + size_t(t) * k, k, r.q.data() + size_t(t) * k,
                                     r.g.data() + size_t(t) * (k / 32));
  return r;
}

// The reference out[T, n] for rows of type t.
std::vector<float> reference(DType t, const std::vector<uint8_t>& w, int n, int k, const QuantX& qx, int T) {
  const size_t rb = kernels::dtype_row_bytes(t, k);
  std::vector<float> out(size_t(T) * n);
  for (int i = 0; i < T; ++i)
    for (int o = 0; o < n; ++o)
      out[size_t(i) * n + o] = kernels::quant_dot_reference(t, w.data() + rb * o, qx.q.data() + size_t(i) * k,
                                                            qx.g.data() + size_t(i) * (k / 32), k);
  return out;
}

std::vector<float> runLinear(kernels::Backend& be, const kernels::PackedWeights& pw, const float* x, int T) {
  std::vector<float> out(size_t(T) * pw.rows, NAN);
  be.linear(out.data(), x, pw, T);
  return out;
}

std::vector<int> ksFor(DType t) {
  if (kernels::dtype_block_elems(t) == 256) return {256, 512, 768};
  return {32, 96, 160, 256, 512, 768};
}

QString what(cpu::Isa isa, DType t, int n, int k, int T) {
  return QString("%1 %2 n=%3 k=%4 T=%5").arg(cpu::isa_name(isa)).arg(kernels::dtype_name(t)).arg(n).arg(k).arg(T);
}

}  // namespace

class TestQuantGemm : public QObject {
  Q_OBJECT
  std::mt19937 rng_{2024};

 private slots:
  void initTestCase() {
    qInfo("detected %s; testing %d instruction-set levels", cpu::isa_name(cpu::detect_isa()),
          int(supportedIsas().size()));
  }

  // Each level's vectorized activation quantizer (IsaKernels::quantize_act) gives the reference's
  // quants and group sums bit for bit: groups of every magnitude (denormals to 1e30), all zero,
  // -0.0, and groups whose amax is 127 (d = 1) holding halves, where ties round to even.
  void activationQuantizerMatchesReference() {
    const int k = 32 * 64;
    std::vector<float> x(k);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (int g = 0; g < k / 32; ++g) {
      float* xg = x.data() + 32 * g;
      const float scale = std::ldexp(1.0f, (g * 37) % 240 - 140);
      for (int i = 0; i < 32; ++i) xg[i] = nd(rng_) * scale;
      if (g % 8 == 1) std::fill(xg, xg + 32, 0.0f);
      if (g % 8 == 2) std::fill(xg, xg + 32, -0.0f);
      if (g % 8 == 3)
        for (int i = 0; i < 32; ++i) xg[i] = i == 5 ? 127.0f : float(int(nd(rng_) * 20)) + (i % 2 ? 0.5f : -0.5f);
    }
    std::vector<int8_t> q_ref(k), q(k);
    std::vector<kernels::QuantActGroup> g_ref(k / 32), g(k / 32);
    kernels::quantize_activation_row(x.data(), k, q_ref.data(), g_ref.data());
    int ties = 0;
    for (int i = 0; i < k; ++i)
      if (x[i] == std::trunc(x[i]) + 0.5f && std::abs(q_ref[i]) < 127) ++ties;
    QVERIFY(ties > 50);  // the tie case is really exercised
    for (cpu::Isa isa : supportedIsas()) {
      std::fill(q.begin(), q.end(), int8_t(99));
      cpu::isa_kernels(isa).quantize_act(x.data(), k, q.data(), g.data());
      const auto miss = std::mismatch(q.begin(), q.end(), q_ref.begin());
      if (miss.first != q.end())  // (the message reads the mismatch: only built when there is one)
        QFAIL(qPrintable(QString("%1: quant %2 is %3, the reference's %4 (x = %5)")
                             .arg(cpu::isa_name(isa))
                             .arg(miss.first - q.begin())
                             .arg(int(*miss.first))
                             .arg(int(*miss.second))
                             .arg(double(x[size_t(miss.first - q.begin())]))));
      for (int b = 0; b < k / 32; ++b) {
        QVERIFY2(std::memcmp(&g[b].d, &g_ref[b].d, 4) == 0 && std::memcmp(&g[b].ds, &g_ref[b].ds, 4) == 0 &&
                     g[b].sum == g_ref[b].sum && g[b].sum_lo == g_ref[b].sum_lo,
                 qPrintable(QString("%1 group %2").arg(cpu::isa_name(isa)).arg(b)));
      }
    }
  }

  // decode_block against dequantize_row: the integers and scales give ggml's values.
  void decodeMatchesDequantize() {
    for (DType t : kQuantTypes) {
      const int k = 512;
      const auto w = randomRows(t, 1, k, rng_);
      std::vector<float> deq(k);
      kernels::dequantize_row(t, w.data(), deq.data(), k);
      const int ne = kernels::dtype_block_elems(t);
      kernels::DecodedBlock blk;
      for (int b = 0; b < k / ne; ++b) {
        kernels::decode_block(t, w.data() + size_t(b) * kernels::dtype_block_bytes(t), blk);
        for (int i = 0; i < ne; ++i) {
          const int j = i / 32;
          const double d = kernels::fp16_to_fp32(blk.d), m = kernels::fp16_to_fp32(blk.m);
          double v = 0;
          switch (t) {
            case DType::kQ4_0:
              v = d * (blk.q[i] - 8);
              break;
            case DType::kQ5_0:
              v = d * (blk.q[i] - 16);
              break;
            case DType::kQ8_0:
              v = d * blk.q[i];
              break;
            case DType::kQ4_1:
            case DType::kQ5_1:
              v = d * blk.q[i] + m;
              break;
            case DType::kQ4_K:
            case DType::kQ5_K:
              v = d * blk.sc[j] * blk.q[i] - m * blk.mn[j];
              break;
            case DType::kQ6_K:
              v = d * blk.sc6[i / 16] * (blk.q[i] - 32);
              break;
            case DType::kMXFP4:
              v = std::ldexp(double(kernels::kMxfp4Values[blk.q[i]]), int(blk.e) - 128);
              break;
            case DType::kIQ4_NL:
              v = d * kernels::kIq4nlValues[blk.q[i]];
              break;
            case DType::kIQ4_XS:
              v = d * (int(blk.sc[j]) - 32) * kernels::kIq4nlValues[blk.q[i]];
              break;
            default:
              break;
          }
          const float got = deq[size_t(b) * ne + i];
          QVERIFY2(std::fabs(got - v) <= 1e-6 * (std::fabs(v) + 1e-3),
                   qPrintable(QString("%1 value %2: %3 vs %4").arg(kernels::dtype_name(t)).arg(i).arg(got).arg(v)));
        }
      }
    }
  }

  // The reference against x · dequantized(W)^T in double. The only approximation is the
  // activations': x_i = d q_i + e_i with |e_i| <= d / 2 (rounding to nearest; d = amax / 127 of
  // the group), so |out - exact| <= sum_g d_g / 2 * sum_{i in g} |w_i|, plus float32 rounding of
  // the weights (ggml's own float formulas) and of the accumulation: 1e-5 * sum |w_i x_i|.
  void referenceWithinQuantizationBound() {
    for (DType t : kQuantTypes)
      for (int k : ksFor(t)) {
        const int n = 9, T = 5;
        const auto w = randomRows(t, n, k, rng_);
        const auto x = randomX(T, k, rng_);
        const auto qx = quantizeX(x, T, k);
        const auto ref = reference(t, w, n, k, qx, T);
        std::vector<float> deq(k);
        for (int o = 0; o < n; ++o) {
          kernels::dequantize_row(t, w.data() + kernels::dtype_row_bytes(t, k) * o, deq.data(), k);
          for (int i = 0; i < T; ++i) {
            double exact = 0, bound = 0, mag = 0;
            for (int j = 0; j < k; ++j) {
              const double xv = x[size_t(i) * k + j];
              exact += xv * deq[j];
              bound += qx.g[size_t(i) * (k / 32) + j / 32].d / 2.0 * std::fabs(deq[j]);
              mag += std::fabs(xv * deq[j]);
            }
            bound = bound * 1.0001 + 1e-5 * mag + 1e-30;
            const double err = std::fabs(ref[size_t(i) * n + o] - exact);
            QVERIFY2(err <= bound, qPrintable(QString("%1 k=%2: |%3 - %4| = %5 > %6")
                                                  .arg(kernels::dtype_name(t))
                                                  .arg(k)
                                                  .arg(ref[size_t(i) * n + o])
                                                  .arg(exact)
                                                  .arg(err)
                                                  .arg(bound)));
          }
        }
      }
  }

  // Every ISA, every T: the reference's bits; rows batch invariant (each T reproduces the same
  // rows; a row alone equals it inside a batch of 33).
  void isasMatchReferenceBitwise_data() {
    QTest::addColumn<int>("type");
    for (DType t : kQuantTypes) QTest::newRow(kernels::dtype_name(t)) << int(t);
  }
  void isasMatchReferenceBitwise() {
    QFETCH(int, type);
    const DType t = DType(type);
    const int maxT = 64;
    for (int k : ksFor(t))
      for (int n : {37, 100}) {
        const auto w = randomRows(t, n, k, rng_);
        const auto x = randomX(maxT, k, rng_);
        const auto ref = reference(t, w, n, k, quantizeX(x, maxT, k), maxT);
        const WeightPart part{w.data(), n, t, t};
        for (cpu::Isa isa : supportedIsas()) {
          auto be = cpu::make_cpu_backend(2, isa);
          auto pw = be->pack_weights({&part, 1}, k);
          for (int T = 1; T <= 34; ++T) {
            const int TT = T == 34 ? maxT : T;
            const auto out = runLinear(*be, *pw, x.data(), TT);
            if (!sameBits(out.data(), ref.data(), out.size())) {
              size_t i = 0;
              while (std::memcmp(&out[i], &ref[i], 4) == 0) ++i;
              QFAIL(qPrintable(what(isa, t, n, k, TT) + QString(": out[%1][%2] = %3, reference %4")
                                                            .arg(i / n)
                                                            .arg(i % n)
                                                            .arg(out[i], 0, 'g', 9)
                                                            .arg(ref[i], 0, 'g', 9)));
            }
          }
          // A row alone, from the middle of the batch.
          for (int row : {0, 7, 20, 32}) {
            const auto one = runLinear(*be, *pw, x.data() + size_t(row) * k, 1);
            QVERIFY2(sameBits(one.data(), ref.data() + size_t(row) * n, n), qPrintable(what(isa, t, n, k, 1)));
          }
        }
      }
  }

  // grouped_linear (a mixture of experts' step): each group's rows through its own matrix, every
  // row bitwise what linear() gives it alone (the reference), groups of 0, 1, 2, 3 and many rows;
  // a group of another shape is refused.
  void groupedLinearMatchesLinear() {
    const int k = 256, n = 100;
    const std::vector<int> rows = {1, 0, 3, 2, 9, 1, 2};
    std::vector<int> offsets{0};
    for (int r : rows) offsets.push_back(offsets.back() + r);
    const int T = offsets.back();
    const auto x = randomX(T, k, rng_);
    for (DType t : {DType::kQ4_K, DType::kQ6_K, DType::kQ8_0, DType::kMXFP4, DType::kIQ4_XS}) {
      std::vector<std::vector<uint8_t>> mats;
      for (std::size_t g = 0; g < rows.size(); ++g) mats.push_back(randomRows(t, n, k, rng_));
      for (cpu::Isa isa : supportedIsas()) {
        auto be = cpu::make_cpu_backend(2, isa);
        std::vector<std::unique_ptr<kernels::PackedWeights>> packed;
        std::vector<const kernels::PackedWeights*> group;
        for (const auto& m : mats) {
          const WeightPart part{m.data(), n, t, t};
          packed.push_back(be->pack_weights({&part, 1}, k));
          group.push_back(packed.back().get());
        }
        std::vector<float> out(std::size_t(T) * n, NAN);
        be->grouped_linear(out.data(), x.data(), group, offsets.data());
        for (std::size_t g = 0; g < rows.size(); ++g) {
          if (rows[g] == 0) continue;
          const auto ref = reference(
              t, mats[g], n, k,
              quantizeX(std::vector<float>(x.begin() + offsets[g] * k, x.begin() + offsets[g + 1] * k), rows[g], k),
              rows[g]);
          QVERIFY2(sameBits(out.data() + std::size_t(offsets[g]) * n, ref.data(), ref.size()),
                   qPrintable(what(isa, t, n, k, rows[g])));
        }
        const auto other = randomRows(t, n + 16, k, rng_);
        const WeightPart wider{other.data(), n + 16, t, t};
        auto odd = be->pack_weights({&wider, 1}, k);
        group[2] = odd.get();
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 be->grouped_linear(out.data(), x.data(), group, offsets.data()));
      }
    }
  }

  // The integer sums at their bounds: every quant at its largest magnitude (bytes 0xFF: 15, 31 or
  // 63; Q8_0 0x80 = -128 and 0x7F; MXFP4 0xFF = -6 and 0x77 = +6, kernel operands 0 and 24)
  // against activations all +127 or all -127, where every
  // vpmaddubsw pair and every int16 run of the maddubs levels is at its largest (simd_avx2.h,
  // quant_impl.inc's i16_group_sums): a run one word too long would wrap and differ here.
  void extremeQuantsMatchReferenceBitwise() {
    const int k = 512, n = 37, T = 5;
    std::vector<float> x(size_t(T) * k);
    for (int i = 0; i < k; ++i) {
      x[i] = 1.0f;                                  // all q = 127
      x[size_t(k) + i] = -1.0f;                     // all -127
      x[size_t(2) * k + i] = i % 2 ? 1.0f : -1.0f;  // alternating
      x[size_t(3) * k + i] = i % 64 < 32 ? 3.0f : -3.0f;
      x[size_t(4) * k + i] = i < k / 2 ? 1.0f : 0.0f;
    }
    const QuantX qx = quantizeX(x, T, k);
    QCOMPARE(int(qx.q[0]), 127);
    QCOMPARE(int(qx.q[k]), -127);
    for (DType t : kQuantTypes)
      for (int fill : {0xFF, 0x80, 0x7F, 0x77, 0x00}) {
        const bool q8 = t == DType::kQ8_0 && (fill == 0x80 || fill == 0x7F), fp4 = t == DType::kMXFP4 && fill == 0x77;
        // IQ4: 0x00 holds the table's -127 everywhere and IQ4_XS's sub-scale -32 (the largest
        // integer sums); 0xFF its 113 and sub-scale 31.
        const bool iq4 = (t == DType::kIQ4_NL || t == DType::kIQ4_XS) && fill == 0x00;
        if (fill != 0xFF && !q8 && !fp4 && !iq4) continue;
        const auto w = randomRows(t, n, k, rng_, fill);
        const auto ref = reference(t, w, n, k, qx, T);
        const WeightPart part{w.data(), n, t, t};
        for (cpu::Isa isa : supportedIsas()) {
          auto be = cpu::make_cpu_backend(2, isa);
          auto pw = be->pack_weights({&part, 1}, k);
          for (int TT : {1, T}) {
            const auto out = runLinear(*be, *pw, x.data(), TT);
            QVERIFY2(sameBits(out.data(), ref.data(), out.size()),
                     qPrintable(what(isa, t, n, k, TT) + QString(" fill 0x%1: out[0] = %2, reference %3")
                                                             .arg(fill, 0, 16)
                                                             .arg(out[0], 0, 'g', 9)
                                                             .arg(ref[0], 0, 'g', 9)));
          }
        }
      }
  }

  // MXFP4 rows whose every block has one E8M0 exponent e, from the subnormal scales (e = 0, 1:
  // 2^-128, 2^-127, whose products stay subnormal) to large ones (200, 254: 2^126, where
  // 12 * 2^126 overflows to inf): each ISA's E8M0 conversion in vector registers gives the
  // reference's bits, at T = 1, 2, 3, 7, 16, 33 and k = 32, 64, 2880 (gpt-oss's width).
  void mxfp4ScaleExponentsBitwise() {
    const DType t = DType::kMXFP4;
    const int n = 21;
    for (int k : {32, 64, 2880})
      for (int e : {0, 1, 2, 127, 128, 200, 254}) {
        auto w = randomRows(t, n, k, rng_);
        for (std::size_t off = 0; off < w.size(); off += 17) w[off] = uint8_t(e);
        std::vector<float> x = randomX(33, k, rng_);
        if (e == 254)  // keep the outputs finite: |x| below 2^-20 (dw * dx = 2^126 * amax / 127)
          for (auto& v : x) v = std::ldexp(v, -40);
        const auto ref = reference(t, w, n, k, quantizeX(x, 33, k), 33);
        int nonzero = 0;
        for (float r : ref) nonzero += r != 0.0f;
        QVERIFY(nonzero > int(ref.size()) / 2);
        const WeightPart part{w.data(), n, t, t};
        for (cpu::Isa isa : supportedIsas()) {
          auto be = cpu::make_cpu_backend(2, isa);
          auto pw = be->pack_weights({&part, 1}, k);
          for (int T : {1, 2, 3, 7, 16, 33})
            QVERIFY2(sameBits(runLinear(*be, *pw, x.data(), T).data(), ref.data(), size_t(T) * n),
                     qPrintable(what(isa, t, n, k, T) + QString(" e=%1").arg(e)));
        }
      }
  }

  // 1 and 3 threads give the 2-thread bits (a matrix big enough to be split).
  void threadCountInvariant() {
    for (DType t : {DType::kQ4_K, DType::kQ6_K, DType::kQ8_0, DType::kMXFP4, DType::kIQ4_XS}) {
      const int n = 300, k = 512, T = 20;
      const auto w = randomRows(t, n, k, rng_);
      const auto x = randomX(T, k, rng_);
      const auto ref = reference(t, w, n, k, quantizeX(x, T, k), T);
      const WeightPart part{w.data(), n, t, t};
      for (cpu::Isa isa : supportedIsas())
        for (int threads : {1, 3}) {
          auto be = cpu::make_cpu_backend(threads, isa);
          auto pw = be->pack_weights({&part, 1}, k);
          for (int TT : {1, 5, T})
            QVERIFY2(sameBits(runLinear(*be, *pw, x.data(), TT).data(), ref.data(), size_t(TT) * n),
                     qPrintable(what(isa, t, n, k, TT)));
        }
    }
  }

  // [Q4_K; Q6_K; Q4_K] (a Q4_K_M stack), and a stack mixing F32, Q8_0 and F16: each segment into
  // its columns, equal to the part alone.
  void mixedSegments() {
    const int k = 512, T = 13;
    const auto x = randomX(T, k, rng_);
    std::normal_distribution<float> nd(0.0f, 0.05f);
    std::vector<float> f32(size_t(21) * k);
    for (auto& v : f32) v = nd(rng_);
    struct P {
      DType dtype, packed;
      int rows;
    };
    const std::vector<std::vector<P>> stacks = {
        {{DType::kQ4_K, DType::kQ4_K, 40}, {DType::kQ6_K, DType::kQ6_K, 23}, {DType::kQ4_K, DType::kQ4_K, 17}},
        {{DType::kF32, DType::kF32, 21},
         {DType::kQ8_0, DType::kQ8_0, 30},
         {DType::kF32, DType::kF16, 21},
         {DType::kQ5_0, DType::kQ5_0, 5},
         {DType::kF32, DType::kBF16, 21}}};
    for (cpu::Isa isa : supportedIsas()) {
      auto be = cpu::make_cpu_backend(2, isa);
      for (const auto& stack : stacks) {
        std::vector<std::vector<uint8_t>> data;
        std::vector<WeightPart> parts;
        for (const P& p : stack) {
          if (p.dtype == DType::kF32) {
            data.emplace_back(reinterpret_cast<const uint8_t*>(f32.data()),
                              reinterpret_cast<const uint8_t*>(f32.data() + f32.size()));
            QCOMPARE(p.rows, 21);
          } else {
            data.push_back(randomRows(p.dtype, p.rows, k, rng_));
          }
        }
        int total = 0;
        for (size_t i = 0; i < stack.size(); ++i) {
          parts.push_back({data[i].data(), stack[i].rows, stack[i].dtype, stack[i].packed});
          total += stack[i].rows;
        }
        auto pw = be->pack_weights(parts, k);
        QCOMPARE(pw->rows, total);
        const auto all = runLinear(*be, *pw, x.data(), T);
        int col = 0;
        for (const auto& part : parts) {
          auto alone = be->pack_weights({&part, 1}, k);
          const auto one = runLinear(*be, *alone, x.data(), T);
          for (int i = 0; i < T; ++i)
            QVERIFY2(sameBits(all.data() + size_t(i) * total + col, one.data() + size_t(i) * part.rows, part.rows),
                     qPrintable(QString("%1 %2 at column %3")
                                    .arg(cpu::isa_name(isa))
                                    .arg(kernels::dtype_name(part.packed))
                                    .arg(col)));
          col += part.rows;
        }
      }
    }
  }

  // Float16 panels: bitwise the float32 GEMM on the float16 values (from float32 rows rounded
  // when packed, or from float16 rows); bfloat16 panels with float32 activations: bitwise the
  // float32 GEMM on the bfloat16-rounded weights (same fma order), except vdpbf16ps (which rounds
  // the activations): within 1e-2 relative there.
  void halfPanelsEqualF32Gemm() {
    for (int k : {61, 256, 700})
      for (int n : {37, 100}) {
        std::normal_distribution<float> nd(0.0f, 1.0f);
        std::vector<float> w(size_t(n) * k), wh(w.size()), wb(w.size());
        std::vector<uint16_t> h16(w.size());
        for (size_t i = 0; i < w.size(); ++i) {
          w[i] = nd(rng_);
          h16[i] = kernels::fp32_to_fp16(w[i]);
          wh[i] = kernels::fp16_to_fp32(h16[i]);
          wb[i] = kernels::bf16_to_float(kernels::float_to_bf16(w[i]));
        }
        const int maxT = 33;
        std::vector<float> x(size_t(maxT) * k);
        for (auto& v : x) v = nd(rng_);
        for (cpu::Isa isa : supportedIsas()) {
          auto be = cpu::make_cpu_backend(2, isa);
          const WeightPart pf16{w.data(), n, DType::kF32, DType::kF16},
              pf16src{h16.data(), n, DType::kF16, DType::kF16}, pbf{w.data(), n, DType::kF32, DType::kBF16},
              ph32{wh.data(), n, DType::kF32, DType::kF32}, pb32{wb.data(), n, DType::kF32, DType::kF32};
          auto f16 = be->pack_weights({&pf16, 1}, k), f16src = be->pack_weights({&pf16src, 1}, k);
          auto bf = be->pack_weights({&pbf, 1}, k), h32 = be->pack_weights({&ph32, 1}, k),
               b32 = be->pack_weights({&pb32, 1}, k);
          QCOMPARE(f16->bytes, size_t(((n + 15) / 16) * 16 * k * 2 + 63) / 64 * 64);
          for (int T : {1, 2, 7, 12, 16, 17, 33}) {
            const auto want = runLinear(*be, *h32, x.data(), T);
            QVERIFY2(sameBits(runLinear(*be, *f16, x.data(), T).data(), want.data(), want.size()),
                     qPrintable(what(isa, DType::kF16, n, k, T)));
            QVERIFY2(sameBits(runLinear(*be, *f16src, x.data(), T).data(), want.data(), want.size()),
                     qPrintable(what(isa, DType::kF16, n, k, T)));
            const auto wantb = runLinear(*be, *b32, x.data(), T);
            const auto gotb = runLinear(*be, *bf, x.data(), T);
            if (isa != cpu::Isa::kAvx512Bf16) {
              QVERIFY2(sameBits(gotb.data(), wantb.data(), wantb.size()), qPrintable(what(isa, DType::kBF16, n, k, T)));
            } else {
              double num = 0, den = 0;
              for (size_t i = 0; i < gotb.size(); ++i)
                num += double(gotb[i] - wantb[i]) * (gotb[i] - wantb[i]), den += double(wantb[i]) * wantb[i];
              QVERIFY(std::sqrt(num / den) < 1e-2);
            }
          }
        }
      }
  }

  // Bytes held against the file's bytes for a 4096 x 4096 matrix of each type.
  void memoryNearFileSize() {
    const int n = 4096, k = 4096;
    auto be = cpu::make_cpu_backend(2, cpu::default_isa());
    for (DType t : kQuantTypes) {
      std::vector<uint8_t> w(kernels::dtype_row_bytes(t, k) * n, 0);
      const WeightPart part{w.data(), n, t, t};
      auto pw = be->pack_weights({&part, 1}, k);
      const double ratio = double(pw->bytes) / double(w.size());
      qInfo("%s: %zu bytes packed, %zu in the file (%.4f)", kernels::dtype_name(t), pw->bytes, w.size(), ratio);
      QVERIFY2(ratio <= 1.05, kernels::dtype_name(t));
      QVERIFY(ratio >= 1.0);
    }
  }
};

QTEST_GUILESS_MAIN(TestQuantGemm)
#include "test_quant_gemm.moc"
