// Files of the new families that declare what the loader cannot serve are refused by name: a
// window, an expert count or a layer pattern that does not fit, a missing expert tensor, a top-k
// above the expert count, a family's keys on another family. Each case rewrites a real tiny model
// of ../shared/models/arch with one change (keys copied with GgufMetaWriter::kv_value, tensors
// rewritten as float32 from the file's own type) and checks the error names the culprit.
#include <QTest>

#include <QFile>
#include <QTemporaryDir>
#include <functional>
#include <stdexcept>
#include <string>

#include "engine/loader/gguf/gguf_file_writer.h"
#include "engine/loader/gguf/gguf_model.h"
#include "engine/loader/gguf/gguf_reader.h"
#include "test_paths.h"

using namespace pagedchat;

namespace {

// What a case changes: the keys (edit the copy, or return false to drop a key) and the tensors
// (drop one by name).
struct Edit {
  std::function<void(GgufMetaWriter&)> add_keys = [](GgufMetaWriter&) {};
  std::function<bool(const std::string&)> keep_key = [](const std::string&) { return true; };
  std::string drop_tensor;
  std::function<void(GgufTensorOut&)> edit_tensor = [](GgufTensorOut&) {};
};

// Writes `src` with `e` applied to `dst`.
void rewrite(const QString& src, const QString& dst, const Edit& e) {
  GgufFile f = GgufFile::open(src.toStdString());
  GgufMetaWriter meta;
  for (const auto& [k, v] : f.metadata())
    if (k != "general.alignment" && e.keep_key(k)) meta.kv_value(k, v);
  e.add_keys(meta);
  std::vector<GgufTensorOut> out;
  for (const GgufTensorInfo& t : f.tensors()) {
    if (t.name == e.drop_tensor) continue;
    GgufTensorOut o = gguf_tensor_copy(f, t);
    o.type = GgmlType::F32;
    e.edit_tensor(o);
    out.push_back(o);
  }
  write_gguf_file(dst.toStdString(), meta, out);
}

// The error loading `path` ("" when it loads).
QString loadError(const QString& path) {
  try {
    load_gguf(path.toStdString(), false);
  } catch (const std::exception& ex) {
    return QString::fromStdString(ex.what());
  }
  return {};
}

}  // namespace

class TestArchBadInput : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  int n_ = 0;

  QString arch(const char* name) { return testpaths::modelFile(QString("arch/") + name); }

  // Rewrites `model` with `e` and checks the load fails naming every string of `want`.
  void expectRefused(const char* model, const Edit& e, const QStringList& want) {
    REQUIRE_MODEL_FILE(arch(model));
    const QString path = tmp_.filePath(QString("bad%1.gguf").arg(n_++));
    rewrite(arch(model), path, e);
    const QString err = loadError(path);
    QVERIFY2(!err.isEmpty(), "loaded");
    for (const QString& w : want) QVERIFY2(err.contains(w), qPrintable(err + " lacks " + w));
  }

 private slots:
  // The rewrite itself is faithful: an unchanged copy loads.
  void unchangedCopyLoads() {
    REQUIRE_MODEL_FILE(arch("qwen3moe-tiny.gguf"));
    const QString path = tmp_.filePath("same.gguf");
    rewrite(arch("qwen3moe-tiny.gguf"), path, {});
    QCOMPARE(loadError(path), QString());
    const GgufModel g = load_gguf(path.toStdString(), false);
    QCOMPARE(g.model.config.moe.num_experts, 8);
    QCOMPARE(g.model.config.moe.num_experts_per_tok, 2);
    // Gemma 4's per-layer shapes as the file states them (README: 5 local + 3 global layers,
    // layers 5-7 reading layers 3 and 4).
    REQUIRE_MODEL_FILE(arch("gemma4-tiny.gguf"));
    const QString g4 = tmp_.filePath("same4.gguf");
    rewrite(arch("gemma4-tiny.gguf"), g4, {});
    QCOMPARE(loadError(g4), QString());
    const ModelConfig c = load_gguf(g4.toStdString(), false).model.config;
    const int kv_source[] = {-1, -1, -1, -1, -1, 3, 3, 4}, head_dim[] = {64, 128, 64, 64, 128, 64, 64, 128};
    for (int l = 0; l < 8; ++l) {
      QCOMPARE(c.layer(l).kv_source_layer, kv_source[l]);
      QCOMPARE(c.layer_head_dim(l), head_dim[l]);
      QCOMPARE(c.layer_kv_heads(l), head_dim[l] == 64 ? 2 : 1);
      QCOMPARE(c.layer(l).sliding_window, head_dim[l] == 64 ? 6 : 0);
      QCOMPARE(c.layer_intermediate_size(l), l >= 5 ? 192 : 96);
    }
    QCOMPARE(c.per_layer_input_size, 16);
    QCOMPARE(c.final_logit_softcap, 1.0f);
  }

  void expertCountDiffersFromTensors() {
    Edit e;
    e.keep_key = [](const std::string& k) { return k != "qwen3moe.expert_count"; };
    e.add_keys = [](GgufMetaWriter& m) { m.kv_u32("qwen3moe.expert_count", 16); };
    expectRefused("qwen3moe-tiny.gguf", e, {"ffn_gate_inp.weight", "shape"});
  }

  void topKAboveExpertCount() {
    Edit e;
    e.keep_key = [](const std::string& k) { return k != "qwen3moe.expert_used_count"; };
    e.add_keys = [](GgufMetaWriter& m) { m.kv_u32("qwen3moe.expert_used_count", 9); };
    expectRefused("qwen3moe-tiny.gguf", e, {"expert_used_count", "9", "expert_count 8"});
  }

  void topKZero() {
    Edit e;
    e.keep_key = [](const std::string& k) { return k != "qwen3moe.expert_used_count"; };
    e.add_keys = [](GgufMetaWriter& m) { m.kv_u32("qwen3moe.expert_used_count", 0); };
    expectRefused("qwen3moe-tiny.gguf", e, {"expert_used_count", "0"});
  }

  void expertCountMissing() {
    Edit e;
    e.keep_key = [](const std::string& k) { return k != "qwen3moe.expert_count"; };
    expectRefused("qwen3moe-tiny.gguf", e, {"qwen3moe.expert_count"});
  }

  void missingExpertTensor() {
    Edit e;
    e.drop_tensor = "blk.1.ffn_down_exps.weight";
    expectRefused("qwen3moe-tiny.gguf", e, {"blk.1.ffn_down_exps.weight", "missing"});
  }

  // Qwen3.5 (hybrid Gated DeltaNet): the keys its layers need, consistent with its tensors.
  void qwen35WithoutRopeSections() {
    Edit e;
    e.keep_key = [](const std::string& k) { return k != "qwen35.rope.dimension_sections"; };
    expectRefused("qwen35-tiny.gguf", e, {"qwen35.rope.dimension_sections"});
  }

  void qwen35InnerSizeNotPerHead() {
    Edit e;
    e.keep_key = [](const std::string& k) { return k != "qwen35.ssm.inner_size"; };
    e.add_keys = [](GgufMetaWriter& m) { m.kv_u32("qwen35.ssm.inner_size", 250); };
    expectRefused("qwen35-tiny.gguf", e, {"ssm.inner_size 250", "ssm.time_step_rank 4"});
  }

  void qwen35ValueHeadsNotMultipleOfKeyHeads() {
    Edit e;
    e.keep_key = [](const std::string& k) { return k != "qwen35.ssm.group_count"; };
    e.add_keys = [](GgufMetaWriter& m) { m.kv_u32("qwen35.ssm.group_count", 3); };
    expectRefused("qwen35-tiny.gguf", e, {"ssm.time_step_rank 4", "ssm.group_count 3"});
  }

  // A state size that does not match the head counts: the fused projection's shape says so.
  void qwen35StateSizeMismatch() {
    Edit e;
    e.keep_key = [](const std::string& k) { return k != "qwen35.ssm.state_size"; };
    e.add_keys = [](GgufMetaWriter& m) { m.kv_u32("qwen35.ssm.state_size", 32); };
    expectRefused("qwen35-tiny.gguf", e, {"blk.0.attn_qkv.weight", "shape"});
  }

  void qwen35WithoutConvKernel() {
    Edit e;
    e.keep_key = [](const std::string& k) { return k != "qwen35.ssm.conv_kernel"; };
    expectRefused("qwen35-tiny.gguf", e, {"qwen35.ssm.conv_kernel"});
  }

  void qwen35MissingDecay() {
    Edit e;
    e.drop_tensor = "blk.1.ssm_a";
    expectRefused("qwen35-tiny.gguf", e, {"blk.1.ssm_a", "missing"});
  }

  // nextn_predict_layers 1: the last block is the MTP block, whose tensors this file lacks.
  void qwen35MissingMtpTensor() {
    Edit e;
    e.add_keys = [](GgufMetaWriter& m) { m.kv_u32("qwen35.nextn_predict_layers", 1); };
    expectRefused("qwen35-tiny.gguf", e, {"blk.3.nextn.", "missing"});
  }

  void missingRouter() {
    Edit e;
    e.drop_tensor = "blk.2.ffn_gate_inp.weight";
    expectRefused("qwen3moe-tiny.gguf", e, {"blk.2.ffn_gate_inp.weight", "missing"});
  }

  // A dense family with expert keys is another model, not this one with experts ignored.
  void expertsOnDenseFamily() {
    Edit e;
    e.add_keys = [](GgufMetaWriter& m) { m.kv_u32("qwen3.expert_count", 8); };
    expectRefused("qwen3-tiny.gguf", e, {"expert_count", "qwen3"});
  }

  void gemma3WithoutWindow() {
    Edit e;
    e.keep_key = [](const std::string& k) { return k != "gemma3.attention.sliding_window"; };
    expectRefused("gemma3-tiny.gguf", e, {"gemma3.attention.sliding_window"});
  }

  void gemma3WindowZero() {
    Edit e;
    e.keep_key = [](const std::string& k) { return k != "gemma3.attention.sliding_window"; };
    e.add_keys = [](GgufMetaWriter& m) { m.kv_u32("gemma3.attention.sliding_window", 0); };
    expectRefused("gemma3-tiny.gguf", e, {"sliding_window", "0"});
  }

  void gemma3PatternOfWrongLength() {
    Edit e;
    e.add_keys = [](GgufMetaWriter& m) { m.kv_i32s("gemma3.attention.sliding_window_pattern", {1, 1, 1, 0}); };
    expectRefused("gemma3-tiny.gguf", e, {"sliding_window_pattern", "4 entries", "6 layers"});
  }

  // Gemma 4: the keys its mechanisms hang on, each refused by name when missing or inconsistent.
  void gemma4WithoutPattern() {
    Edit e;
    e.keep_key = [](const std::string& k) { return k != "gemma4.attention.sliding_window_pattern"; };
    expectRefused("gemma4-tiny.gguf", e, {"gemma4.attention.sliding_window_pattern"});
  }

  void gemma4WithoutLocalHeadSize() {
    Edit e;
    e.keep_key = [](const std::string& k) { return k != "gemma4.attention.key_length_swa"; };
    expectRefused("gemma4-tiny.gguf", e, {"gemma4.attention.key_length_swa"});
  }

  // Seven shared layers leave only layer 0 (local) to own KV: the global ones have no source.
  void gemma4SharedKvWithoutSource() {
    Edit e;
    e.keep_key = [](const std::string& k) { return k != "gemma4.attention.shared_kv_layers"; };
    e.add_keys = [](GgufMetaWriter& m) { m.kv_u32("gemma4.attention.shared_kv_layers", 7); };
    expectRefused("gemma4-tiny.gguf", e, {"layer 1", "global", "the first 1 layer(s) hold none"});
  }

  void gemma4KvHeadsNotDividing() {
    Edit e;
    e.keep_key = [](const std::string& k) { return k != "gemma4.attention.head_count_kv"; };
    e.add_keys = [](GgufMetaWriter& m) { m.kv_i32s("gemma4.attention.head_count_kv", {2, 1, 2, 3, 1, 2, 2, 1}); };
    expectRefused("gemma4-tiny.gguf", e, {"head_count_kv 3", "head_count 4"});
  }

  // A shared layer whose KV heads differ from the layer it reads (layer 5 reads layer 3).
  void gemma4SharedKvShapeMismatch() {
    Edit e;
    e.keep_key = [](const std::string& k) { return k != "gemma4.attention.head_count_kv"; };
    e.add_keys = [](GgufMetaWriter& m) { m.kv_i32s("gemma4.attention.head_count_kv", {2, 1, 2, 2, 1, 4, 2, 1}); };
    expectRefused("gemma4-tiny.gguf", e, {"layer 5", "4 KV heads", "layer 3"});
  }

  void gemma4MissingPerLayerEmbedding() {
    Edit e;
    e.drop_tensor = "blk.6.inp_gate.weight";
    expectRefused("gemma4-tiny.gguf", e, {"blk.6.inp_gate.weight", "missing"});
  }

  void gemma4Experts() {
    Edit e;
    e.add_keys = [](GgufMetaWriter& m) { m.kv_u32("gemma4.expert_count", 4); };
    expectRefused("gemma4-tiny.gguf", e, {"gemma4.expert_used_count"});
  }

  void gptOssPatternOfWrongLength() {
    Edit e;
    e.add_keys = [](GgufMetaWriter& m) { m.kv_i32s("gpt-oss.attention.sliding_window_pattern", {1, 0, 1}); };
    expectRefused("gptoss-tiny.gguf", e, {"sliding_window_pattern", "3 entries", "4 layers"});
  }

  void gptOssWithoutWindow() {
    Edit e;
    e.keep_key = [](const std::string& k) { return k != "gpt-oss.attention.sliding_window"; };
    expectRefused("gptoss-tiny.gguf", e, {"gpt-oss.attention.sliding_window"});
  }

  void gptOssSinksOfWrongSize() {
    Edit e;
    e.edit_tensor = [](GgufTensorOut& o) {
      if (o.name == "blk.2.attn_sinks.weight") o.cols = 3;
    };
    expectRefused("gptoss-tiny.gguf", e, {"blk.2.attn_sinks.weight", "[3]", "[4]"});
  }

  void gptOssMissingExpertBias() {
    Edit e;
    e.drop_tensor = "blk.1.ffn_down_exps.bias";
    expectRefused("gptoss-tiny.gguf", e, {"blk.1.ffn_down_exps.bias", "missing"});
  }

  void yarnWithoutOriginalContext() {
    Edit e;
    e.keep_key = [](const std::string& k) { return k != "gpt-oss.rope.scaling.original_context_length"; };
    expectRefused("gptoss-tiny.gguf", e, {"gpt-oss.rope.scaling.original_context_length"});
  }

  // An MXFP4 block whose E8M0 exponent is 0xFF (NaN) is refused, naming the tensor and block.
  void mxfp4NanScale() {
    REQUIRE_MODEL_FILE(arch("gptoss-tiny.gguf"));
    const QString path = tmp_.filePath("nan-scale.gguf");
    QVERIFY(QFile::copy(arch("gptoss-tiny.gguf"), path));
    QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner);
    uint64_t at = 0;
    {
      GgufFile f = GgufFile::open(path.toStdString());
      const GgufTensorInfo* t = f.find_tensor("blk.3.ffn_up_exps.weight");
      QVERIFY(t);
      at = f.data_offset() + t->offset + 5 * 17;  // block 5's exponent byte
    }
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadWrite));
    QVERIFY(file.seek(qint64(at)));
    QCOMPARE(file.write(QByteArray(1, char(0xFF))), qint64(1));
    file.close();
    const QString err = loadError(path);
    for (const char* w : {"blk.3.ffn_up_exps.weight", "MXFP4 block 5", "0xFF"})
      QVERIFY2(err.contains(w), qPrintable(err + " lacks " + w));
  }

  void windowOnFamilyWithoutOne() {
    Edit e;
    e.add_keys = [](GgufMetaWriter& m) { m.kv_u32("llama.attention.sliding_window", 4096); };
    expectRefused("llama3-tiny.gguf", e, {"llama.attention.sliding_window", "llama"});
  }

  void unknownArchitectureNamesItself() {
    Edit e;
    e.keep_key = [](const std::string& k) { return k != "general.architecture"; };
    e.add_keys = [](GgufMetaWriter& m) { m.kv_str("general.architecture", "gemma2"); };
    expectRefused("gemma3-tiny.gguf", e, {"'gemma2'", "gemma3", "qwen3moe", "exaone4"});
  }

  // A partial rotary width the heads cannot hold.
  void rotaryWiderThanHead() {
    Edit e;
    e.keep_key = [](const std::string& k) { return k != "phi3.rope.dimension_count"; };
    e.add_keys = [](GgufMetaWriter& m) { m.kv_u32("phi3.rope.dimension_count", 18); };
    expectRefused("phi4mini-tiny.gguf", e, {"phi3.rope.dimension_count", "18"});
  }
};

QTEST_GUILESS_MAIN(TestArchBadInput)
#include "test_arch_bad_input.moc"
