// Qwen3.5 and Qwen3.5-MoE Hugging Face folders (Qwen3_5ForCausalLM, Qwen3_5ForConditionalGeneration,
// Qwen3_5MoeForCausalLM, Qwen3_5MoeForConditionalGeneration) against ik_llama.cpp's goldens. The
// folders are written from ../shared/models/arch/qwen35-tiny.gguf and test_arch_qwen35moe's
// qwen35moe-tiny (qwen35moe_tiny.h) by undoing what llama.cpp's converter does to a checkpoint
// (qwen35_hf_folder.h). The engine keeps the folder's value-head order (v_heads_grouped) instead
// of undoing it again, so the two sides are independent; a folder left in the GGUF's order is
// shown to compute another model. The Q8_0 embedding and classifier are dequantized, hence the
// 1e-2 tolerance of "weights dequantized, activations float" in the goldens' README.
#include <QTest>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "arch_golden.h"
#include "engine/llm_engine.h"
#include "engine/loader/gguf/dequant.h"
#include "engine/loader/gguf/gguf_reader.h"
#include "engine/loader/hf/hf_writer.h"
#include "engine/loader/model_loader.h"
#include "kernels/cpu/cpu_backend.h"
#include "qwen35_hf_folder.h"
#include "qwen35moe_tiny.h"
#include "test_hf_utils.h"

using namespace pagedchat;
using nlohmann::json;
using namespace qwen35hf;

namespace {

ModelBundle load(const QString& path) {
  EngineConfig c;
  c.model = path.toStdString();
  return load_model(c);
}

/// The dense model's teacher-forced comparison with its golden: the largest |Δlogit| and the
/// first argmax that differs at a step whose golden gap exceeds 1e-2.
archtest::Comparison againstGolden(const LoadedModel& m) {
  archtest::Golden g;
  QString why;
  if (!archtest::loadGolden("qwen35-tiny.gguf", g, &why)) throw std::runtime_error(why.toStdString());
  auto backend = kernels::make_cpu_backend(2);
  DecoderModel model(m.config, m.weights, *backend);
  archtest::Comparison worst;
  for (const archtest::GoldenPrompt& p : g.prompts) {
    const archtest::Comparison r = archtest::compare(p, archtest::teacherForced(model, p), 1e-2);
    worst.max_row = std::max(worst.max_row, r.max_row);
    worst.max_top5 = std::max(worst.max_top5, r.max_top5);
    worst.checked += r.checked;
    worst.mismatches += r.mismatches;
    if (worst.first_mismatch.empty()) worst.first_mismatch = r.first_mismatch;
  }
  return worst;
}

/// The dense model as a folder `name` in `tmp` (an absolute `name`: there).
QString writeDense(const QTemporaryDir& tmp, const Layout& layout, const QString& name = "folder") {
  const FolderWriter w(archtest::archPath("qwen35-tiny.gguf").toStdString(), layout);
  const QString dir = name.startsWith('/') ? name : tmp.filePath(name);
  w.write(dir, w.config(), w.tensors());
  return dir;
}

}  // namespace

class TestHfQwen35 : public QObject {
  Q_OBJECT

 private slots:
  void denseFolderMatchesIk_data() {
    QTest::addColumn<bool>("conditional");
    QTest::addColumn<bool>("layerTypes");
    QTest::addColumn<bool>("oldRope");
    QTest::newRow("Qwen3_5ForCausalLM") << false << true << false;
    QTest::newRow("Qwen3_5ForConditionalGeneration") << true << false << true;
  }
  void denseFolderMatchesIk() {
    REQUIRE_MODEL_FILE(archtest::archPath("qwen35-tiny.gguf"));
    QFETCH(bool, conditional);
    QFETCH(bool, layerTypes);
    QFETCH(bool, oldRope);
    QTemporaryDir tmp;
    Layout layout;
    layout.conditional = conditional;
    layout.layer_types = layerTypes;
    layout.old_rope = oldRope;
    // QWEN35_HF_OUT=dir keeps the folders (dir/<row name>) for trying them by hand.
    if (const char* keep = std::getenv("QWEN35_HF_OUT"))
      writeDense(tmp, layout, QString(keep) + "/" + QTest::currentDataTag());
    const ModelBundle hf = load(writeDense(tmp, layout));
    const ModelBundle gguf = load(archtest::archPath("qwen35-tiny.gguf"));
    const ModelConfig &c = hf.model.config, &g = gguf.model.config;
    QCOMPARE(c.architecture, std::string("qwen35"));
    QVERIFY(c.linear_attn.v_heads_grouped);
    QVERIFY(!g.linear_attn.v_heads_grouped);
    QCOMPARE(c.rotary_dims(), g.rotary_dims());
    QCOMPARE(c.mrope_sections, g.mrope_sections);
    QCOMPARE(c.num_recurrent_layers(), g.num_recurrent_layers());
    for (int l = 0; l < c.n_layers; ++l) QCOMPARE(int(c.layer(l).mixer), int(g.layer(l).mixer));
    QVERIFY(c.attn_output_gate);
    QCOMPARE(c.nextn_predict_layers, 0);
    QCOMPARE(c.rope_theta, g.rope_theta);

    const archtest::Comparison r = againstGolden(hf.model);
    qInfo("qwen35-tiny as a Hugging Face folder vs ik_llama.cpp: max |dlogit| %.3g, argmax checked at %d steps",
          r.max_abs(), r.checked);
    QVERIFY2(r.mismatches == 0, r.first_mismatch.c_str());
    QVERIFY2(r.max_abs() <= 1e-2, qPrintable(QString::number(r.max_abs())));
    QVERIFY(r.checked >= 40);
  }

  // The folder's mtp.* block is not loaded: asking for MTP drafts says so.
  void mtpNeedsTheGguf() {
    REQUIRE_MODEL_FILE(archtest::archPath("qwen35-tiny.gguf"));
    QTemporaryDir tmp;
    EngineConfig c;
    c.model = writeDense(tmp, Layout{}).toStdString();
    c.num_threads = 2;
    c.max_model_len = 256;
    c.speculative_config.method = SpeculativeConfig::Method::kMtp;
    c.speculative_config.num_speculative_tokens = 2;
    const QString err = hftest::expectError([&] { LLMEngine e(c); }, {"no MTP layers", "mtp.*", "GGUF"});
    QVERIFY2(err.isEmpty(), qPrintable(err));
  }

  // The same folder with its value heads left in the GGUF's order computes another model: the
  // comparison above would catch a loader that reordered them (or forgot the grouped order).
  void valueHeadOrderMatters() {
    REQUIRE_MODEL_FILE(archtest::archPath("qwen35-tiny.gguf"));
    QTemporaryDir tmp;
    Layout layout;
    layout.keep_tiled = true;
    const archtest::Comparison r = againstGolden(load(writeDense(tmp, layout)).model);
    QVERIFY2(r.max_abs() > 0.1, qPrintable(QString::number(r.max_abs())));
  }

  void moeFolderMatchesIk_data() {
    QTest::addColumn<bool>("fused");
    QTest::addColumn<bool>("conditional");
    QTest::newRow("gate_up_proj, Qwen3_5MoeForCausalLM") << true << false;
    QTest::newRow("experts by name, Qwen3_5MoeForConditionalGeneration") << false << true;
  }
  void moeFolderMatchesIk() {
    QFETCH(bool, fused);
    QFETCH(bool, conditional);
    const QString src = archtest::archPath("qwen35-tiny.gguf");
    REQUIRE_MODEL_FILE(src);
    QTemporaryDir tmp;
    std::vector<std::vector<float>> keep;
    const QString gguf = tmp.filePath("qwen35moe-tiny.gguf");
    qwen35moe_tiny::writeModel(src, gguf, keep);
    Layout layout;
    layout.fused_experts = fused;
    layout.conditional = conditional;
    const FolderWriter w(gguf.toStdString(), layout);
    const QString dir = tmp.filePath("folder");
    w.write(dir, w.config(), w.tensors());
    const ModelBundle b = load(dir);
    const ModelConfig& c = b.model.config;
    QCOMPARE(c.architecture, std::string("qwen35moe"));
    QCOMPARE(c.moe.num_experts, qwen35moe_tiny::kExperts);
    QCOMPARE(c.moe.num_experts_per_tok, qwen35moe_tiny::kTopK);
    QCOMPARE(c.moe.shared_expert_intermediate_size, qwen35moe_tiny::kSharedWidth);
    QVERIFY(c.moe.shared_expert_gated && c.moe.norm_topk_prob);

    QFile jf(QStringLiteral(QWEN35MOE_GOLDEN));
    QVERIFY2(jf.open(QIODevice::ReadOnly), qPrintable(jf.fileName()));
    const json golden = json::parse(jf.readAll().toStdString());
    auto backend = kernels::make_cpu_backend(2);
    DecoderModel m(c, b.model.weights, *backend);
    const qwen35moe_tiny::IkComparison r = qwen35moe_tiny::compareWithIk(m, golden);
    qInfo("qwen35moe-tiny as a Hugging Face folder vs ik_llama.cpp: max |dlogit| %.3g, argmax checked at %d steps",
          r.worst, r.checked);
    QVERIFY2(r.mismatch.empty(), r.mismatch.c_str());
    QVERIFY2(r.worst <= 1e-2, qPrintable(QString::number(r.worst)));
    QVERIFY(r.checked >= 10);
  }

  // Broken folders are refused by name.
  void badFolders() {
    REQUIRE_MODEL_FILE(archtest::archPath("qwen35-tiny.gguf"));
    QTemporaryDir tmp;
    const FolderWriter w(archtest::archPath("qwen35-tiny.gguf").toStdString(), Layout{});
    const json good = w.config();
    const std::vector<Tensor> tensors = w.tensors();
    int n = 0;
    auto expect = [&](const json& config, const std::vector<Tensor>& ts, const QStringList& needles) {
      const QString dir = tmp.filePath("bad" + QString::number(n++));
      w.write(dir, config, ts);
      const QString err = hftest::expectError([&] { load(dir); }, needles);
      QVERIFY2(err.isEmpty(), qPrintable(err));
    };
    json c = good;
    c["layer_types"].erase(0);
    expect(c, tensors, {"layer_types", "num_hidden_layers 4"});
    c = good;
    c["layer_types"][1] = "sliding_attention";
    expect(c, tensors, {"layer_types", "[1]", "sliding_attention"});
    c = good;
    c["linear_num_value_heads"] = 3;
    expect(c, tensors, {"linear_num_value_heads", "linear_num_key_heads"});
    c = good;
    c["rope_parameters"]["mrope_section"] = {8, 8, 8};
    expect(c, tensors, {"mrope_section", "pairs"});
    c = good;
    c["rope_parameters"]["partial_rotary_factor"] = 0.01;
    expect(c, tensors, {"partial_rotary_factor"});
    c = good;
    c["rope_parameters"]["rope_type"] = "yarn";
    expect(c, tensors, {"yarn"});

    auto without = [&](const std::string& suffix) {
      std::vector<Tensor> ts;
      for (const Tensor& t : tensors)
        if (!t.name.ends_with(suffix)) ts.push_back(t);
      return ts;
    };
    expect(good, without("layers.1.linear_attn.conv1d.weight"), {"layers.1.linear_attn.conv1d.weight", "missing"});
    expect(good, without("layers.3.self_attn.q_norm.weight"), {"layers.3.self_attn.q_norm.weight", "missing"});
    std::vector<Tensor> ts = tensors;
    for (Tensor& t : ts)
      if (t.name.ends_with("layers.0.linear_attn.A_log")) t.v[1] = 1000.0f;  // -exp(1000) overflows
    expect(good, ts, {"layers.0.linear_attn.A_log", "not a finite number"});
    ts = tensors;
    for (Tensor& t : ts)
      if (t.name.ends_with("layers.2.linear_attn.in_proj_z.weight"))
        t.shape[0] -= 1, t.v.resize(t.shape[0] * t.shape[1]);
    expect(good, ts, {"layers.2.linear_attn.in_proj_z.weight", "shape"});
    ts = tensors;
    ts.push_back({"model.layers.3.self_attn.q_proj.bias", {256}, std::vector<float>(256, 0.0f)});
    expect(good, ts, {"model.layers.3.self_attn.q_proj.bias", "bias"});
  }
};

QTEST_GUILESS_MAIN(TestHfQwen35)
#include "test_hf_qwen35.moc"
