// The recurrent core of a Gated DeltaNet layer (Backend::gated_delta_net) on every
// instruction-set level this CPU runs: each gives bitwise what the scalar kernels give (the
// delta rule's rows go 16 at a time through one transposed reduction, the rest one by one: the same
// arithmetic), for head sizes that are and are not multiples of 16, two sequences with a
// checkpoint; and all are within float32 rounding of a double-precision reference written from
// the formulas of Backend::gated_delta_net's comment (conv, SiLU, L2 norms, the delta rule, the
// gated RMSNorm, the state clamped to +-1e6), also with a state whose elements reach the clamp and
// with the value heads in either order; a state driven below float's normal range is flushed to zero.
#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "isa_test_utils.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/isa_kernels.h"
#include "kernels/ops.h"

using namespace pagedchat;
using isatest::randomVec;
using isatest::supportedIsas;

namespace {

double relErr(const std::vector<float>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return std::sqrt(num / std::max(den, 1e-30));
}

}  // namespace

class TestIsaDeltaNet : public QObject {
  Q_OBJECT
  std::mt19937 rng_{7};

 private slots:
  void initTestCase() {
    QString names;
    for (cpu::Isa i : supportedIsas()) names += QString(" ") + cpu::isa_name(i);
    qInfo("instruction-set levels tested:%s", qPrintable(names));
  }

  void deltaNetSameBitsEveryIsa_data() {
    QTest::addColumn<int>("headK");
    QTest::addColumn<int>("headV");
    QTest::addColumn<float>("stateScale");  // of the initial state; 9e5: with decay ~1, the clamp acts
    QTest::addColumn<bool>("grouped");      // value heads grouped by key head (Hugging Face order)
    QTest::newRow("dk 32 dv 32") << 32 << 32 << 0.1f << false;
    QTest::newRow("dk 128 dv 128") << 128 << 128 << 0.1f << false;
    QTest::newRow("dk 64 dv 48") << 64 << 48 << 0.1f << false;
    QTest::newRow("dk 40 dv 24") << 40 << 24 << 0.1f << false;  // rows past the last 16, chunks past the last 16
    QTest::newRow("dk 16 dv 50") << 16 << 50 << 0.1f << false;
    QTest::newRow("dk 128 dv 128 clamped") << 128 << 128 << 9e5f << false;
    QTest::newRow("dk 40 dv 24 clamped") << 40 << 24 << 9e5f << false;
    QTest::newRow("dk 64 dv 48 grouped") << 64 << 48 << 0.1f << true;
  }
  // Two sequences (9 and 21 tokens, the second with a checkpoint after 13), 2 key heads and 4
  // value heads, a state that starts non-zero.
  void deltaNetSameBitsEveryIsa() {
    QFETCH(int, headK);
    QFETCH(int, headV);
    QFETCH(float, stateScale);
    QFETCH(bool, grouped);
    kernels::GatedDeltaNetSpec spec;
    spec.num_k_heads = 2;
    spec.num_v_heads = 4;
    spec.v_heads_grouped = grouped;
    spec.head_k_dim = headK;
    spec.head_v_dim = headV;
    spec.conv_kernel = 4;
    const int C = spec.conv_dim(), Vd = spec.value_dim(), W = spec.proj_width(), nk = 2, nv = 4, dk = headK, dv = headV,
              K = 4;
    const std::vector<float> conv = randomVec(size_t(C) * K, rng_, 0.5f), dt_bias = randomVec(size_t(nv), rng_),
                             norm = randomVec(size_t(dv), rng_);
    std::vector<float> a(static_cast<size_t>(nv));
    for (auto& x : a)
      x = stateScale > 1.0f ? -1e-3f : -std::exp(std::uniform_real_distribution<float>(0.0f, 2.0f)(rng_));
    spec.conv1d = conv.data();
    spec.dt_bias = dt_bias.data();
    spec.a = a.data();
    spec.norm = norm.data();
    const std::vector<int> lens = {9, 21};
    const int T = 30;
    const std::vector<float> proj = randomVec(size_t(T) * W, rng_);
    const std::vector<float> state0 = randomVec(size_t(spec.state_floats()) * 2, rng_, stateScale);

    // The double reference, token by token.
    int64_t clamped = 0;
    std::vector<double> ref(size_t(T) * Vd), refState(state0.begin(), state0.end()), refSave;
    for (int s = 0, start = 0; s < 2; start += lens[size_t(s)], ++s) {
      double* st = refState.data() + size_t(s) * spec.state_floats();
      std::vector<double> window(st, st + size_t(K - 1) * C);  // the conv's last inputs
      for (int t = 0; t < lens[size_t(s)]; ++t) {
        const float* pr = proj.data() + size_t(start + t) * W;
        std::vector<double> x(static_cast<size_t>(C));
        for (int c = 0; c < C; ++c) {
          double acc = 0;
          for (int i = 0; i < K - 1; ++i) acc += double(conv[size_t(c) * K + i]) * window[size_t(i) * C + c];
          acc += double(conv[size_t(c) * K + K - 1]) * pr[c];
          x[size_t(c)] = acc / (1 + std::exp(-acc));
        }
        window.erase(window.begin(), window.begin() + C);
        window.insert(window.end(), pr, pr + C);
        for (int h = 0; h < 2 * nk; ++h) {
          double n2 = 0;
          for (int i = 0; i < dk; ++i) n2 += x[size_t(h * dk + i)] * x[size_t(h * dk + i)];
          const double inv = 1 / std::max(std::sqrt(n2), double(spec.norm_eps));
          for (int i = 0; i < dk; ++i) x[size_t(h * dk + i)] *= inv;
        }
        for (int j = 0; j < nv; ++j) {
          const int kj = grouped ? j / (nv / nk) : j % nk;  // the key head value head j reads
          const double* qh = &x[size_t(kj) * dk];
          const double* kh = &x[size_t(nk + kj) * dk];
          const double* vh = &x[size_t(2 * nk) * dk + size_t(j) * dv];
          const double beta = 1 / (1 + std::exp(-double(pr[C + Vd + j])));
          const double sp = std::log1p(std::exp(double(pr[C + Vd + nv + j]) + dt_bias[size_t(j)]));
          const double decay = std::exp(a[size_t(j)] * sp);
          double* S = st + size_t(K - 1) * C + size_t(j) * dv * dk;
          std::vector<double> o(static_cast<size_t>(dv));
          for (int r = 0; r < dv; ++r) {
            double sk = 0;
            for (int i = 0; i < dk; ++i) sk += (S[size_t(r) * dk + i] *= decay) * kh[i];
            const double delta = beta * (vh[r] - sk);
            double sq = 0;
            for (int i = 0; i < dk; ++i) {
              double& e = S[size_t(r) * dk + i];
              const double u = e + delta * kh[i];
              e = std::clamp(u, -1e6, 1e6);  // the kernel's clamp (ik_llama.cpp's)
              clamped += e != u;
              sq += e * qh[i];
            }
            o[size_t(r)] = sq / std::sqrt(double(dk));
          }
          double ms = 0;
          for (double v : o) ms += v * v;
          const double inv = 1 / std::sqrt(ms / dv + spec.norm_eps);
          for (int r = 0; r < dv; ++r) {
            const double z = pr[C + size_t(j) * dv + r];
            ref[size_t(start + t) * Vd + size_t(j) * dv + r] = o[size_t(r)] * inv * norm[size_t(r)] * z /
                                                               (1 + std::exp(-z));
          }
        }
        if (s == 1 && t + 1 == 13) {
          refSave.assign(window.begin(), window.end());
          refSave.insert(refSave.end(), st + size_t(K - 1) * C, st + spec.state_floats());
        }
      }
      std::copy(window.begin(), window.end(), st);
    }

    if (stateScale > 1.0f) QVERIFY2(clamped > 100, qPrintable(QString("the clamp acted %1 times").arg(clamped)));
    std::vector<float> wantOut, wantState, wantSave;
    for (cpu::Isa isa : supportedIsas()) {
      auto be = cpu::make_cpu_backend(2, isa);
      std::vector<float> out(size_t(T) * Vd, NAN), state = state0, save(size_t(spec.state_floats()), NAN);
      kernels::DeltaNetSequence seqs[2];
      seqs[0].start = 0;
      seqs[0].len = 9;
      seqs[0].state = state.data();
      seqs[1].start = 9;
      seqs[1].len = 21;
      seqs[1].state = state.data() + spec.state_floats();
      seqs[1].num_saves = 1;
      seqs[1].save_after[0] = 13;
      seqs[1].save_to[0] = save.data();
      be->gated_delta_net(out.data(), proj.data(), spec, seqs, 2);
      const QString name = cpu::isa_name(isa);
      const double err = relErr(out, ref);
      QVERIFY2(err < 1e-5, qPrintable(QString("%1: output relative error %2").arg(name).arg(err)));
      QVERIFY2(relErr(state, refState) < 1e-5, qPrintable(name + ": state"));
      QVERIFY2(relErr(save, refSave) < 1e-5, qPrintable(name + ": checkpoint"));
      if (wantOut.empty()) {
        wantOut = out;
        wantState = state;
        wantSave = save;
        continue;
      }
      QVERIFY2(std::memcmp(out.data(), wantOut.data(), sizeof(float) * out.size()) == 0, qPrintable(name + ": output"));
      QVERIFY2(std::memcmp(state.data(), wantState.data(), sizeof(float) * state.size()) == 0,
               qPrintable(name + ": state"));
      QVERIFY2(std::memcmp(save.data(), wantSave.data(), sizeof(float) * save.size()) == 0,
               qPrintable(name + ": checkpoint"));
    }
  }

  // A strong decay and no new values drive the state below float's normal range: it is flushed to
  // zero (no subnormal is left, which every later multiply would take a microcode assist for), on
  // every level alike.
  void subnormalStateFlushed() {
    kernels::GatedDeltaNetSpec spec;
    spec.num_k_heads = spec.num_v_heads = 1;
    spec.head_k_dim = spec.head_v_dim = 32;
    spec.conv_kernel = 4;
    const int C = spec.conv_dim(), W = spec.proj_width(), T = 1;
    const std::vector<float> conv = randomVec(size_t(C) * 4, rng_, 0.5f), norm(32, 1.0f);
    const std::vector<float> dt_bias(1, 0.0f), a(1, -60.0f);  // decay exp(-60 * softplus(0)) = 8.6e-19
    spec.conv1d = conv.data();
    spec.dt_bias = dt_bias.data();
    spec.a = a.data();
    spec.norm = norm.data();
    std::vector<float> proj = randomVec(size_t(T) * W, rng_);
    std::fill_n(proj.begin() + 2 * 32, 32, 0.0f);  // v = silu(conv(0)) = 0: nothing new is written
    proj[size_t(W - 1)] = 0.0f;                    // the decay's input: softplus(0)
    for (cpu::Isa isa : supportedIsas()) {
      auto be = cpu::make_cpu_backend(2, isa);
      std::vector<float> state(size_t(spec.state_floats()), 1e-20f), out(size_t(T) * 32);
      std::fill_n(state.begin(), 3 * C, 0.0f);  // the conv's inputs
      kernels::DeltaNetSequence seq;
      seq.len = T;
      seq.state = state.data();
      be->gated_delta_net(out.data(), proj.data(), spec, &seq, 1);
      int subnormal = 0, zero = 0;
      for (float x : std::vector<float>(state.begin() + 3 * C, state.end())) {
        subnormal += std::fpclassify(x) == FP_SUBNORMAL;
        zero += x == 0.0f;
      }
      QVERIFY2(subnormal == 0,
               qPrintable(QString("%1: %2 subnormal state elements").arg(cpu::isa_name(isa)).arg(subnormal)));
      QCOMPARE(zero, 32 * 32);  // 1e-20 * 8.6e-19 = 8.6e-39, below FLT_MIN: flushed, every element
    }
  }
};

QTEST_GUILESS_MAIN(TestIsaDeltaNet)
#include "test_isa_delta_net.moc"
