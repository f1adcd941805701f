// Qwen3.5 and Qwen3.5-MoE Hugging Face folders (Qwen3_5ForCausalLM, Qwen3_5ForConditionalGeneration,
// Qwen3_5MoeForCausalLM, Qwen3_5MoeForConditionalGeneration) against ik_llama.cpp's goldens. The
// folders are written here from ../shared/models/arch/qwen35-tiny.gguf and test_arch_qwen35moe's
// qwen35moe-tiny (qwen35moe_tiny.h) by undoing, tensor by tensor, what llama.cpp's
// convert_hf_to_gguf.py (Qwen3NextModel.modify_tensors, _LinearAttentionVReorderBase,
// Qwen3_5TextModel) does to a checkpoint, and laid out as transformers' modeling_qwen3_5.py /
// modeling_qwen3_5_moe.py name them: RMSNorm weights stored as w for (1 + w) (not the DeltaNet's
// gated norm), A_log = log(-ssm_a), conv1d [channels, 1, taps], the value heads back from the
// GGUF's tiled order to the checkpoint's grouped one (in_proj_qkv's v rows, in_proj_z, in_proj_b
// / _a, A_log, dt_bias, the conv's v channels, out_proj's columns), the experts as transformers 5
// stores them (gate_up_proj [E, 2I, H], down_proj [E, H, I]) or one per name, the shared expert
// and its gate [1, H]. The engine keeps the folder's order (v_heads_grouped) instead of undoing it
// again, so the two sides are independent. Weights are written as float32 (the tiny models'
// values are not bfloat16-exact); the Q8_0 embedding and classifier are dequantized, hence the
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
#include "engine/loader/gguf/dequant.h"
#include "engine/loader/gguf/gguf_reader.h"
#include "engine/loader/hf/hf_writer.h"
#include "engine/loader/model_loader.h"
#include "kernels/cpu/cpu_backend.h"
#include "qwen35moe_tiny.h"
#include "test_hf_utils.h"

using namespace pagedchat;
using nlohmann::json;

namespace {

/// How a folder is laid out.
struct Layout {
  bool conditional = false;   ///< ...ForConditionalGeneration: text_config, model.language_model.*
  bool layer_types = true;    ///< layer_types, else full_attention_interval
  bool old_rope = false;      ///< rope_theta / partial_rotary_factor / rope_scaling instead of rope_parameters
  bool fused_experts = true;  ///< experts.gate_up_proj / down_proj, else experts.N.*
  bool keep_tiled = false;    ///< leave the value heads in the GGUF's order (a wrong folder)
};

struct Tensor {
  std::string name;
  std::vector<uint64_t> shape;
  std::vector<float> v;
};

class FolderWriter {
 public:
  FolderWriter(const std::string& gguf, const Layout& layout) : f_(GgufFile::open(gguf)), layout_(layout) {
    arch_ = *f_.get_string("general.architecture");
    key_heads_ = int(key("ssm.group_count"));
    value_heads_ = int(key("ssm.time_step_rank"));
    head_k_ = int(key("ssm.state_size"));
    head_v_ = int(key("ssm.inner_size")) / value_heads_;
  }

  int64_t key(const std::string& k) const { return *f_.get_int(arch_ + "." + k); }

  /// The folder's config.json.
  json config() const {
    const int layers = int(key("block_count")), interval = int(key("full_attention_interval"));
    json t;
    t["hidden_size"] = key("embedding_length");
    t["num_hidden_layers"] = layers;
    t["num_attention_heads"] = key("attention.head_count");
    t["num_key_value_heads"] = key("attention.head_count_kv");
    t["head_dim"] = key("attention.key_length");
    t["rms_norm_eps"] = *f_.get_float(arch_ + ".attention.layer_norm_rms_epsilon");
    t["vocab_size"] = f_.find_tensor("token_embd.weight")->ne[1];
    t["max_position_embeddings"] = key("context_length");
    t["tie_word_embeddings"] = false;
    t["hidden_act"] = "silu";
    t["linear_conv_kernel_dim"] = key("ssm.conv_kernel");
    t["linear_key_head_dim"] = head_k_;
    t["linear_value_head_dim"] = head_v_;
    t["linear_num_key_heads"] = key_heads_;
    t["linear_num_value_heads"] = value_heads_;
    t["mtp_num_hidden_layers"] = 1;
    if (layout_.layer_types) {
      json lt = json::array();
      for (int l = 0; l < layers; ++l) lt.push_back((l + 1) % interval ? "linear_attention" : "full_attention");
      t["layer_types"] = lt;
    } else {
      t["full_attention_interval"] = interval;
    }
    const GgufValue* sec = f_.get_array(arch_ + ".rope.dimension_sections", GgufType::kInt32);
    json sections = json::array();
    for (std::size_t i = 0; i < 3; ++i) sections.push_back(sec->ints.empty() ? int64_t(sec->uints[i]) : sec->ints[i]);
    const double partial = double(key("rope.dimension_count")) / double(key("attention.key_length"));
    const double theta = *f_.get_float(arch_ + ".rope.freq_base");
    if (layout_.old_rope) {
      t["rope_theta"] = theta;
      t["partial_rotary_factor"] = partial;
      t["rope_scaling"] = {{"type", "default"}, {"mrope_section", sections}, {"mrope_interleaved", true}};
    } else {
      t["rope_parameters"] = {{"rope_type", "default"},
                              {"rope_theta", theta},
                              {"partial_rotary_factor", partial},
                              {"mrope_section", sections},
                              {"mrope_interleaved", true}};
    }
    const bool moe = arch_ == "qwen35moe";
    if (moe) {
      t["num_experts"] = key("expert_count");
      t["num_experts_per_tok"] = key("expert_used_count");
      t["moe_intermediate_size"] = key("expert_feed_forward_length");
      t["shared_expert_intermediate_size"] = key("expert_shared_feed_forward_length");
    } else {
      t["intermediate_size"] = key("feed_forward_length");
    }
    t["eos_token_id"] = 151645;
    if (!layout_.conditional) {
      t["architectures"] = {moe ? "Qwen3_5MoeForCausalLM" : "Qwen3_5ForCausalLM"};
      t["model_type"] = moe ? "qwen3_5_moe_text" : "qwen3_5_text";
      return t;
    }
    t["model_type"] = moe ? "qwen3_5_moe_text" : "qwen3_5_text";
    return {{"architectures", {moe ? "Qwen3_5MoeForConditionalGeneration" : "Qwen3_5ForConditionalGeneration"}},
            {"model_type", moe ? "qwen3_5_moe" : "qwen3_5"},
            {"text_config", t},
            {"vision_config", {{"depth", 1}, {"hidden_size", 16}, {"out_hidden_size", 64}}},
            {"image_token_id", 248056},
            {"tie_word_embeddings", false}};
  }

  /// The folder's tensors.
  std::vector<Tensor> tensors() const {
    std::vector<Tensor> out;
    const std::string m = layout_.conditional ? "model.language_model." : "model.";
    for (const GgufTensorInfo& t : f_.tensors()) {
      std::vector<float> v(t.n_elements);
      dequantize(t.type, f_.tensor_data(t), v.data(), t.n_elements);
      const std::vector<uint64_t> shape(t.ne.rbegin(), t.ne.rend());
      if (t.name == "token_embd.weight") {
        out.push_back({m + "embed_tokens.weight", shape, v});
      } else if (t.name == "output.weight") {
        out.push_back({"lm_head.weight", shape, v});
      } else if (t.name == "output_norm.weight") {
        out.push_back({m + "norm.weight", shape, minusOne(v)});
      } else {
        layerTensor(t, m, shape, std::move(v), out);
      }
    }
    // A vision tower's and an MTP block's tensors, which the text model leaves alone.
    out.push_back({"mtp.fc.weight", {4, 4}, std::vector<float>(16, 0.5f)});
    if (layout_.conditional) out.push_back({"model.visual.merger.norm.weight", {16}, std::vector<float>(16, 1.0f)});
    return out;
  }

  /// Writes config.json, model.safetensors and the Qwen tokenizer to `dir`.
  void write(const QString& dir, const json& config, const std::vector<Tensor>& ts) const {
    QDir().mkpath(dir);
    QFile cf(dir + "/config.json");
    if (!cf.open(QIODevice::WriteOnly)) throw std::runtime_error("cannot write config.json");
    cf.write(QByteArray::fromStdString(config.dump(2)));
    cf.close();
    std::vector<StTensorOut> st;
    for (const Tensor& t : ts) st.push_back({t.name, StDtype::kF32, t.shape, t.v.data()});
    write_safetensors((dir + "/model.safetensors").toStdString(), st);
    for (const char* name : {"tokenizer.json", "tokenizer_config.json"})
      if (!QFile::copy(testpaths::modelFile("tokenizers/qwen3/") + name, dir + "/" + name))
        throw std::runtime_error(std::string("cannot copy ") + name);
  }

 private:
  static std::vector<float> minusOne(std::vector<float> v) {
    for (float& x : v) x -= 1.0f;
    return v;
  }

  /// Rows [first, first + value_heads * per_head) of a [rows, cols] matrix from the GGUF's tiled
  /// value-head order (head r * key_heads + g) to the grouped one (head g * per_key + r): the
  /// inverse of _LinearAttentionVReorderBase._reorder_v_heads.
  std::vector<float> groupRows(const std::vector<float>& v, uint64_t cols, uint64_t first, uint64_t per_head) const {
    if (layout_.keep_tiled) return v;
    std::vector<float> out = v;
    const int per_key = value_heads_ / key_heads_;
    for (int g = 0; g < key_heads_; ++g)
      for (int r = 0; r < per_key; ++r) {
        const uint64_t to = first + uint64_t(g * per_key + r) * per_head,
                       from = first + uint64_t(r * key_heads_ + g) * per_head;
        std::copy(v.begin() + int64_t(from * cols), v.begin() + int64_t((from + per_head) * cols),
                  out.begin() + int64_t(to * cols));
      }
    return out;
  }
  /// The same along the columns of a [rows, value_heads * per_head] matrix (out_proj).
  std::vector<float> groupColumns(const std::vector<float>& v, uint64_t rows, uint64_t per_head) const {
    if (layout_.keep_tiled) return v;
    const uint64_t cols = uint64_t(value_heads_) * per_head;
    std::vector<float> out(v.size());
    for (uint64_t i = 0; i < rows; ++i) {
      // Each row, as a column vector of value heads.
      std::vector<float> row(v.begin() + int64_t(i * cols), v.begin() + int64_t((i + 1) * cols));
      const std::vector<float> grouped = groupRows(row, 1, 0, per_head);
      std::copy(grouped.begin(), grouped.end(), out.begin() + int64_t(i * cols));
    }
    return out;
  }

  void layerTensor(const GgufTensorInfo& t, const std::string& m, std::vector<uint64_t> shape, std::vector<float> v,
                   std::vector<Tensor>& out) const {
    const std::size_t dot = t.name.find('.', 4);
    const std::string blk = t.name.substr(4, dot - 4), what = t.name.substr(dot + 1);
    const std::string p = m + "layers." + blk + ".";
    const uint64_t kd = uint64_t(key_heads_) * uint64_t(head_k_);
    static const std::map<std::string, std::string> plain = {
        {"attn_q.weight", "self_attn.q_proj.weight"},
        {"attn_k.weight", "self_attn.k_proj.weight"},
        {"attn_v.weight", "self_attn.v_proj.weight"},
        {"attn_output.weight", "self_attn.o_proj.weight"},
        {"ffn_gate.weight", "mlp.gate_proj.weight"},
        {"ffn_up.weight", "mlp.up_proj.weight"},
        {"ffn_down.weight", "mlp.down_proj.weight"},
        {"ffn_gate_inp.weight", "mlp.gate.weight"},
        {"ffn_gate_shexp.weight", "mlp.shared_expert.gate_proj.weight"},
        {"ffn_up_shexp.weight", "mlp.shared_expert.up_proj.weight"},
        {"ffn_down_shexp.weight", "mlp.shared_expert.down_proj.weight"},
        {"ssm_norm.weight", "linear_attn.norm.weight"}};
    static const std::map<std::string, std::string> norms = {
        {"attn_norm.weight", "input_layernorm.weight"},
        {"post_attention_norm.weight", "post_attention_layernorm.weight"},
        {"attn_q_norm.weight", "self_attn.q_norm.weight"},
        {"attn_k_norm.weight", "self_attn.k_norm.weight"}};
    if (auto it = plain.find(what); it != plain.end()) {
      out.push_back({p + it->second, shape, std::move(v)});
    } else if (auto n = norms.find(what); n != norms.end()) {
      out.push_back({p + n->second, shape, minusOne(std::move(v))});
    } else if (what == "attn_qkv.weight") {
      out.push_back({p + "linear_attn.in_proj_qkv.weight", shape, groupRows(v, shape[1], 2 * kd, uint64_t(head_v_))});
    } else if (what == "attn_gate.weight") {
      out.push_back({p + "linear_attn.in_proj_z.weight", shape, groupRows(v, shape[1], 0, uint64_t(head_v_))});
    } else if (what == "ssm_beta.weight" || what == "ssm_alpha.weight") {
      const std::string name = what == "ssm_beta.weight" ? "in_proj_b" : "in_proj_a";
      out.push_back({p + "linear_attn." + name + ".weight", shape, groupRows(v, shape[1], 0, 1)});
    } else if (what == "ssm_conv1d.weight") {
      out.push_back({p + "linear_attn.conv1d.weight",
                     {shape[0], 1, shape[1]},
                     groupRows(v, shape[1], 2 * kd, uint64_t(head_v_))});
    } else if (what == "ssm_dt.bias") {
      out.push_back({p + "linear_attn.dt_bias", shape, groupRows(v, 1, 0, 1)});
    } else if (what == "ssm_a") {
      for (float& x : v) x = std::log(-x);  // ssm_a = -exp(A_log)
      out.push_back({p + "linear_attn.A_log", shape, groupRows(v, 1, 0, 1)});
    } else if (what == "ssm_out.weight") {
      out.push_back({p + "linear_attn.out_proj.weight", shape, groupColumns(v, shape[0], uint64_t(head_v_))});
    } else if (what == "ffn_gate_inp_shexp.weight") {
      out.push_back({p + "mlp.shared_expert_gate.weight", {1, shape[0]}, std::move(v)});
    } else if (what == "ffn_gate_exps.weight" || what == "ffn_up_exps.weight" || what == "ffn_down_exps.weight") {
      experts(p, what, shape, std::move(v), out);
    } else {
      throw std::runtime_error("test: no Hugging Face name for " + t.name);
    }
  }

  // [E, rows, cols] expert tensors: one per expert, or (transformers 5) gate and up fused as
  // gate_up_proj [E, 2I, H] once both are seen.
  void experts(const std::string& p, const std::string& what, const std::vector<uint64_t>& shape, std::vector<float> v,
               std::vector<Tensor>& out) const {
    const uint64_t E = shape[0], rows = shape[1], cols = shape[2];
    const std::string kind = what.substr(4, what.find("_exps") - 4);  // gate, up, down
    if (!layout_.fused_experts) {
      for (uint64_t e = 0; e < E; ++e)
        out.push_back(
            {p + "mlp.experts." + std::to_string(e) + "." + kind + "_proj.weight",
             {rows, cols},
             std::vector<float>(v.begin() + int64_t(e * rows * cols), v.begin() + int64_t((e + 1) * rows * cols))});
      return;
    }
    if (kind == "down") {
      out.push_back({p + "mlp.experts.down_proj", shape, std::move(v)});
      return;
    }
    pending_[p + kind] = std::move(v);
    if (!pending_.count(p + "gate") || !pending_.count(p + "up")) return;
    const std::vector<float>&gate = pending_[p + "gate"], &up = pending_[p + "up"];
    std::vector<float> gu;
    for (uint64_t e = 0; e < E; ++e) {
      gu.insert(gu.end(), gate.begin() + int64_t(e * rows * cols), gate.begin() + int64_t((e + 1) * rows * cols));
      gu.insert(gu.end(), up.begin() + int64_t(e * rows * cols), up.begin() + int64_t((e + 1) * rows * cols));
    }
    out.push_back({p + "mlp.experts.gate_up_proj", {E, 2 * rows, cols}, std::move(gu)});
  }

  GgufFile f_;
  Layout layout_;
  std::string arch_;
  int key_heads_ = 0, value_heads_ = 0, head_k_ = 0, head_v_ = 0;
  mutable std::map<std::string, std::vector<float>> pending_;
};

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
