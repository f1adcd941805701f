// RoPE frequency scaling at the positions where it matters (arch/README.md: at <= 31 positions an
// ignored rope_freqs costs only 1.5e-5): the inverse frequencies of rope_scaling llama3 and linear
// against transformers' formulas (modeling_rope_utils.py _compute_llama3_parameters and
// _compute_linear_scaling_rope_parameters), written out again here in float64; GGUF
// rope_freqs.weight divisors against the same; the CPU rotation at positions 8000..131071
// against float64; and the llama3-tiny model from GGUF (rope_freqs) and from Hugging Face
// (rope_scaling) at positions near 100000, where scaling ignored changes the logits by far more.
#include <QTest>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

#include "arch_golden.h"
#include "engine/loader/model_loader.h"
#include "engine/model/rope_frequencies.h"
#include "kernels/cpu/cpu_backend.h"

using namespace pagedchat;

namespace {

// transformers' _compute_llama3_parameters, in float64, as a vectorised formula per element:
// wavelen > low_freq_wavelen: inv / factor; wavelen < high_freq_wavelen: inv; otherwise the
// smoothed interpolation (1 - smooth) * inv / factor + smooth * inv.
std::vector<double> transformersLlama3(int dim, double base, double factor, double low, double high, double orig) {
  std::vector<double> out;
  const double low_wavelen = orig / low, high_wavelen = orig / high;
  for (int i = 0; i < dim; i += 2) {
    const double inv = 1.0 / std::pow(base, double(i) / dim);
    const double wavelen = 2 * std::numbers::pi / inv;
    double v = wavelen > low_wavelen ? inv / factor : inv;
    const double smooth = (orig / wavelen - low) / (high - low);
    const bool medium = !(wavelen < high_wavelen) && !(wavelen > low_wavelen);
    if (medium) v = (1 - smooth) * v / factor + smooth * v;
    out.push_back(v);
  }
  return out;
}

ModelConfig llama3Config(int head_dim, double factor) {
  ModelConfig c;
  c.architecture = "llama";
  c.head_dim = head_dim;
  c.rope_theta = 500000.0f;
  c.rope_scaling = {RopeScalingType::kLlama3, factor, 1.0, 4.0, 8192};
  return c;
}

}  // namespace

class TestRopeScaling : public QObject {
  Q_OBJECT

 private slots:
  // Llama 3.1 8B (head_dim 128, factor 8) and Llama 3.2 1B (head_dim 64, factor 32).
  void llama3InvFreq_data() {
    QTest::addColumn<int>("hd");
    QTest::addColumn<double>("factor");
    QTest::newRow("3.1 8B") << 128 << 8.0;
    QTest::newRow("3.2 1B") << 64 << 32.0;
    QTest::newRow("tiny") << 16 << 8.0;
  }
  void llama3InvFreq() {
    QFETCH(int, hd);
    QFETCH(double, factor);
    const ModelConfig c = llama3Config(hd, factor);
    const std::vector<double> ours = rope_inv_freq(c), ref = transformersLlama3(hd, 500000.0, factor, 1, 4, 8192);
    QCOMPARE(ours.size(), ref.size());
    int scaled = 0, smoothed = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
      QVERIFY2(std::fabs(ours[i] / ref[i] - 1) < 1e-13, qPrintable(QString("pair %1").arg(i)));
      const double plain = std::pow(500000.0, -2.0 * double(i) / hd);
      scaled += std::fabs(ref[i] - plain / factor) < 1e-15 * plain;
      smoothed += ref[i] < plain * (1 - 1e-12) && ref[i] > plain / factor * (1 + 1e-12);
    }
    QVERIFY(scaled > 0 && smoothed > 0);  // all three regimes are exercised
    // The GGUF form (convert_hf_to_gguf.py's rope_freqs.weight, float32 divisors) gives the same
    // frequencies to float32 precision.
    ModelConfig g = c;
    g.rope_scaling = {};
    for (double d : llama3_rope_divisors(hd, 500000.0, c.rope_scaling)) g.rope_freq_factors.push_back(float(d));
    const std::vector<double> via_gguf = rope_inv_freq(g);
    for (std::size_t i = 0; i < ref.size(); ++i) QVERIFY(std::fabs(via_gguf[i] / ref[i] - 1) < 1e-7);
  }

  void linearInvFreq() {
    ModelConfig c;
    c.head_dim = 64;
    c.rope_theta = 10000.0f;
    c.rope_scaling = {RopeScalingType::kLinear, 4.0};
    const std::vector<double> f = rope_inv_freq(c);
    for (int i = 0; i < 32; ++i) QVERIFY(std::fabs(f[i] / (std::pow(10000.0, -2.0 * i / 64) / 4.0) - 1) < 1e-14);
  }

  // YaRN at gpt-oss's released shape (head_dim 64, base 150000, factor 32 from 4096, beta 32 / 1):
  // the correction range worked out by hand from ggml's formula, corr(r) = 64 ln(4096 / (2 pi r))
  // / (2 ln 150000): corr(32) = 8.09 -> 8, corr(1) = 17.4 -> 18; pairs up to 8 keep their
  // frequency, pairs from 18 on are divided by 32, pair i between takes the mix with
  // e = 1 - (i - 8) / 10. Its mscale is 1 + 0.1 ln 32.
  void yarnInvFreq() {
    ModelConfig c;
    c.head_dim = 64;
    c.rope_theta = 150000.0f;
    c.rope_scaling.type = RopeScalingType::kYarn;
    c.rope_scaling.factor = 32.0;
    c.rope_scaling.original_max_position_embeddings = 4096;
    const std::vector<double> f = rope_inv_freq(c);
    QCOMPARE(f.size(), std::size_t(32));
    for (int i = 0; i < 32; ++i) {
      const double plain = std::pow(150000.0, -2.0 * i / 64);
      const double e = i <= 8 ? 1.0 : i >= 18 ? 0.0 : 1.0 - (i - 8) / 10.0;
      QVERIFY2(std::fabs(f[i] / (plain * ((1 - e) / 32.0 + e)) - 1) < 1e-12, qPrintable(QString::number(i)));
    }
    QVERIFY(std::fabs(yarn_mscale(32.0) - (1 + 0.1 * std::log(32.0))) < 1e-15);
    QCOMPARE(yarn_mscale(1.0), 1.0);
    // Without truncation (transformers' truncate false) the range is corr(32) .. corr(1) unrounded.
    c.rope_scaling.yarn_truncate = false;
    const std::vector<double> g = rope_inv_freq(c);
    const double lo = 64 * std::log(4096 / (32 * 2 * std::numbers::pi)) / (2 * std::log(150000.0)),
                 hi = 64 * std::log(4096 / (2 * std::numbers::pi)) / (2 * std::log(150000.0));
    QVERIFY(lo > 8 && lo < 8.2 && hi > 17.3 && hi < 17.5);
    for (int i = 0; i < 32; ++i) {
      const double e = 1 - std::clamp((i - lo) / (hi - lo), 0.0, 1.0);
      QVERIFY(std::fabs(g[i] / (std::pow(150000.0, -2.0 * i / 64) * ((1 - e) / 32.0 + e)) - 1) < 1e-12);
    }
    QVERIFY(g[9] != f[9]);
  }

  void badFactors() {
    ModelConfig c = llama3Config(16, 8);
    c.rope_freq_factors = {1, 2, 3};
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, rope_inv_freq(c));
    c.rope_freq_factors.assign(8, 1.0f);
    c.rope_freq_factors[3] = 0.0f;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, rope_inv_freq(c));
    c.head_dim = 15;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, rope_inv_freq(c));
  }

  // The rotation the CPU kernels apply at long positions, against float64 with transformers'
  // frequencies, for both pair layouts; and what ignoring the scaling would cost there.
  void rotationAtLongPositions() {
    const int hd = 128, heads = 2, kvh = 1;
    const ModelConfig c = llama3Config(hd, 8);
    const std::vector<double> inv = rope_inv_freq(c), ref = transformersLlama3(hd, 500000.0, 8, 1, 4, 8192);
    const std::vector<double> plain = kernels::rope_default_inv_freq(hd, 500000.0);
    std::mt19937 rng(7);
    std::normal_distribution<float> nd;
    auto backend = kernels::make_cpu_backend(2);
    double worst = 0, worst_unscaled = 0;
    for (bool neox : {false, true})
      for (int pos : {8000, 8191, 8192, 16384, 32768, 65536, 100000, 131071}) {
        std::vector<float> q(heads * hd), k(kvh * hd);
        for (float& x : q) x = nd(rng);
        for (float& x : k) x = nd(rng);
        const std::vector<float> q0 = q;
        backend->rotary_embedding(q.data(), k.data(), &pos, 1, heads, kvh, {hd, neox, inv.data()});
        for (int h = 0; h < heads; ++h)
          for (int i = 0; i < hd / 2; ++i) {
            const int i0 = h * hd + (neox ? i : 2 * i), i1 = h * hd + (neox ? i + hd / 2 : 2 * i + 1);
            for (const auto& [f, w] : {std::pair{ref[i], &worst}, std::pair{plain[i], &worst_unscaled}}) {
              const double a = double(pos) * f;
              const double y0 = q0[i0] * std::cos(a) - q0[i1] * std::sin(a),
                           y1 = q0[i0] * std::sin(a) + q0[i1] * std::cos(a);
              *w = std::max({*w, std::fabs(q[i0] - y0), std::fabs(q[i1] - y1)});
            }
          }
      }
    qInfo("positions 8000..131071: max |rotation - float64 transformers| %.3g; without the scaling it would be %.3g",
          worst, worst_unscaled);
    QVERIFY(worst < 2e-6);
    QVERIFY(worst_unscaled > 0.5);
  }

  // llama3-tiny from GGUF (rope_freqs.weight) and from Hugging Face (rope_scaling llama3) agree
  // when the tokens lie up to 96000 positions apart (RoPE sees only distances: the 9 tokens are
  // put at positions 0, 12000, 24000, ...); the same model with the scaling removed does not.
  void tinyModelAtLongPositions() {
    const QString gguf = archtest::archDir() + "/llama3-tiny.gguf", hf = archtest::archDir() + "/llama3-tiny-hf";
    REQUIRE_MODEL_FILE(gguf);
    REQUIRE_MODEL_FILE(hf);
    EngineConfig ea, eb;
    ea.model = gguf.toStdString();
    eb.model = hf.toStdString();
    const ModelBundle a = load_model(ea), b = load_model(eb);
    QVERIFY(!a.model.config.rope_freq_factors.empty());
    QCOMPARE(b.model.config.rope_scaling.type, RopeScalingType::kLlama3);
    ModelConfig unscaled = b.model.config;
    unscaled.rope_scaling = {};
    auto backend = kernels::make_cpu_backend(2);
    DecoderModel ma(a.model.config, a.model.weights, *backend), mb(b.model.config, b.model.weights, *backend),
        mu(unscaled, b.model.weights, *backend);
    const std::vector<int> ids = {128000, 755, 1925, 4019, 262, 1194, 7, 7, 7};
    auto run = [&](DecoderModel& m, int gap) {
      KVCache cache(m.config(), 1, 16);
      ForwardBatch fb;
      fb.max_blocks_per_seq = 1;
      fb.block_tables = {0};
      fb.query_start_loc = {0, int(ids.size())};
      fb.seq_lens = {int(ids.size())};
      for (std::size_t i = 0; i < ids.size(); ++i) {
        fb.input_ids.push_back(ids[i]);
        fb.positions.push_back(gap * int(i));  // RoPE positions; the KV context is the 9 tokens
        fb.slot_mapping.push_back(int64_t(i));
        fb.logits_indices.push_back(int(i));
      }
      std::vector<float> logits;
      m.forward(fb, cache, logits);
      return logits;
    };
    auto maxdiff = [](const std::vector<float>& x, const std::vector<float>& y) {
      double d = 0;
      for (std::size_t i = 0; i < x.size(); ++i) d = std::max(d, double(std::fabs(x[i] - y[i])));
      return d;
    };
    for (int gap : {1, 12000}) {
      const auto la = run(ma, gap), lb = run(mb, gap), lu = run(mu, gap);
      const double gguf_vs_hf = maxdiff(la, lb), scaled_vs_not = maxdiff(lb, lu);
      qInfo("positions 0, %d, ..., %d: GGUF vs HF max |dlogit| %.3g; scaling ignored: %.3g", gap, 8 * gap, gguf_vs_hf,
            scaled_vs_not);
      QVERIFY(gguf_vs_hf < 1e-5);
      if (gap > 1) QVERIFY(scaled_vs_not > 100 * std::max(gguf_vs_hf, 1e-6));
    }
  }
};

QTEST_GUILESS_MAIN(TestRopeScaling)
#include "test_rope_scaling.moc"
