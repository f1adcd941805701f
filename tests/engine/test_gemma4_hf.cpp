// Gemma 4 from a Hugging Face folder (engine/model/arch/gemma4.cpp's config.json hook and the
// folder loader): a folder laid out as transformers saves Gemma 4 — its tensor names and shapes
// (model.layers.N.self_attn.*, router.proj / router.scale / router.per_expert_scale,
// experts.gate_up_proj [E, 2I, H] with each expert's gate rows first, layer_scalar, the per-layer
// embedding tensors), its config.json keys (layer_types, head_dim / global_head_dim,
// num_global_key_value_heads with attention_k_eq_v, rope_parameters per layer type with the global
// layers' proportional RoPE, num_kv_shared_layers, use_double_wide_mlp, enable_moe_block) — is
// written here from a GGUF file with the name table llama.cpp's converter applies (HF -> GGUF,
// read backwards; docs/hf-layouts.md), then loaded and run against ik_llama.cpp's golden of that
// GGUF file. Both forms: Gemma4ForCausalLM (flat, model.*) and Gemma4ForConditionalGeneration
// (text_config, model.language_model.*, towers that are skipped).
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <map>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "arch_golden.h"
#include "engine/loader/gguf/dequant.h"
#include "engine/loader/gguf/gguf_reader.h"
#include "engine/loader/hf/hf_writer.h"
#include "engine/loader/model_loader.h"

using namespace pagedchat;
using namespace archtest;

namespace {

// GGUF tensor name -> transformers' (after the text model's prefix), per layer "blk.N." ->
// "layers.N.". Source: llama.cpp's gguf-py tensor_mapping.py and conversion/gemma.py for gemma4
// (docs/hf-layouts.md section 2.4).
const std::map<std::string, std::string> kLayerNames = {
    {"attn_norm.weight", "input_layernorm.weight"},
    {"attn_q.weight", "self_attn.q_proj.weight"},
    {"attn_k.weight", "self_attn.k_proj.weight"},
    {"attn_v.weight", "self_attn.v_proj.weight"},
    {"attn_output.weight", "self_attn.o_proj.weight"},
    {"attn_q_norm.weight", "self_attn.q_norm.weight"},
    {"attn_k_norm.weight", "self_attn.k_norm.weight"},
    {"post_attention_norm.weight", "post_attention_layernorm.weight"},
    {"ffn_norm.weight", "pre_feedforward_layernorm.weight"},
    {"ffn_gate.weight", "mlp.gate_proj.weight"},
    {"ffn_up.weight", "mlp.up_proj.weight"},
    {"ffn_down.weight", "mlp.down_proj.weight"},
    {"post_ffw_norm.weight", "post_feedforward_layernorm.weight"},
    {"layer_output_scale.weight", "layer_scalar"},
    {"inp_gate.weight", "per_layer_input_gate.weight"},
    {"proj.weight", "per_layer_projection.weight"},
    {"post_norm.weight", "post_per_layer_input_norm.weight"},
    {"ffn_gate_inp.weight", "router.proj.weight"},
    {"ffn_gate_inp.scale", "router.scale"},
    {"ffn_down_exps.scale", "router.per_expert_scale"},
    {"ffn_gate_up_exps.weight", "experts.gate_up_proj"},
    {"ffn_down_exps.weight", "experts.down_proj"},
    {"pre_ffw_norm_2.weight", "pre_feedforward_layernorm_2.weight"},
    {"post_ffw_norm_1.weight", "post_feedforward_layernorm_1.weight"},
    {"post_ffw_norm_2.weight", "post_feedforward_layernorm_2.weight"},
};
const std::map<std::string, std::string> kGlobalNames = {
    {"token_embd.weight", "embed_tokens.weight"},
    {"output_norm.weight", "norm.weight"},
    {"per_layer_token_embd.weight", "embed_tokens_per_layer.weight"},
    {"per_layer_model_proj.weight", "per_layer_model_projection.weight"},
    {"per_layer_proj_norm.weight", "per_layer_projection_norm.weight"},
};

// Writes `gguf`'s tensors (float32) under transformers' names and shapes into dir/model.safetensors
// with the text model under `prefix`; rope_freqs is config (rope_parameters), not a tensor.
// `extra` tensors are added as they are (a vision tower to be skipped).
void writeFolderWeights(const GgufFile& f, const std::string& dir, const std::string& prefix,
                        const std::vector<std::string>& extra) {
  std::vector<std::vector<float>> data;
  std::vector<StTensorOut> out;
  data.reserve(f.tensors().size() + extra.size());
  static const std::regex layer(R"(blk\.(\d+)\.(.+))");
  for (const GgufTensorInfo& t : f.tensors()) {
    std::string name;
    std::smatch m;
    if (std::regex_match(t.name, m, layer)) {
      const auto it = kLayerNames.find(m[2]);
      QVERIFY2(it != kLayerNames.end(), t.name.c_str());
      name = prefix + "layers." + std::string(m[1]) + "." + it->second;
    } else if (t.name == "rope_freqs.weight") {
      continue;
    } else {
      const auto it = kGlobalNames.find(t.name);
      QVERIFY2(it != kGlobalNames.end(), t.name.c_str());
      name = prefix + it->second;
    }
    std::vector<float> v(t.n_elements);
    dequantize(t.type, f.tensor_data(t), v.data(), t.n_elements);
    data.push_back(std::move(v));
    out.push_back({name, StDtype::kF32, std::vector<uint64_t>(t.ne.rbegin(), t.ne.rend()), data.back().data()});
  }
  for (const std::string& name : extra) {
    data.push_back(std::vector<float>(8, 0.5f));
    out.push_back({name, StDtype::kF32, {2, 4}, data.back().data()});
  }
  write_safetensors(dir + "/model.safetensors", out);
}

void writeText(const QString& path, const std::string& text) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(text.data(), qint64(text.size()));
}

ModelBundle load(const QString& model, const QString& tokenizer = {}) {
  EngineConfig c;
  c.model = model.toStdString();
  c.tokenizer = tokenizer.toStdString();
  return load_model(c);
}

// config.json's text keys of gemma4moe-tiny.gguf (tests/data/gemma4moe/README.md), as
// transformers' Gemma4TextConfig spells them.
nlohmann::json moeTextConfig() {
  return nlohmann::json::parse(R"({
    "model_type": "gemma4_text", "hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 4,
    "num_key_value_heads": 2, "num_global_key_value_heads": 1, "attention_k_eq_v": true,
    "head_dim": 64, "global_head_dim": 128, "intermediate_size": 64, "vocab_size": 521,
    "rms_norm_eps": 1e-6, "max_position_embeddings": 8192, "sliding_window": 6,
    "layer_types": ["sliding_attention", "full_attention", "sliding_attention"],
    "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                        "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25,
                                           "rope_theta": 1000000.0}},
    "num_kv_shared_layers": 0, "hidden_size_per_layer_input": 0, "final_logit_softcapping": 30.0,
    "hidden_activation": "gelu_pytorch_tanh", "tie_word_embeddings": true, "attention_bias": false,
    "enable_moe_block": true, "num_experts": 4, "top_k_experts": 2, "moe_intermediate_size": 32,
    "use_bidirectional_attention": "vision", "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 0})");
}

// gemma4ple-tiny.gguf's (tests/data/gemma4ple/README.md): per-layer embeddings, the last two
// layers reading the KV of layers 2 and 3 with a double-wide MLP, K = V on the global layers.
nlohmann::json pleConfig() {
  return nlohmann::json::parse(R"({
    "architectures": ["Gemma4ForCausalLM"], "model_type": "gemma4_text", "hidden_size": 64,
    "num_hidden_layers": 6, "num_attention_heads": 2, "num_key_value_heads": 2,
    "num_global_key_value_heads": 1, "attention_k_eq_v": true, "head_dim": 64, "global_head_dim": 128,
    "intermediate_size": 64, "use_double_wide_mlp": true, "vocab_size": 521, "rms_norm_eps": 1e-6,
    "max_position_embeddings": 8192, "sliding_window": 6,
    "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention",
                    "sliding_attention", "full_attention"],
    "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                        "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25,
                                           "rope_theta": 1000000.0}},
    "num_kv_shared_layers": 2, "hidden_size_per_layer_input": 16, "vocab_size_per_layer_input": 521,
    "final_logit_softcapping": 30.0, "hidden_activation": "gelu_pytorch_tanh", "tie_word_embeddings": true,
    "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 0})");
}

}  // namespace

class TestGemma4Hf : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

  // Writes the folder, loads it (the GGUF's vocabulary as its tokenizer) and checks it against
  // ik_llama.cpp's golden and against the GGUF file itself.
  void checkFolder(const QString& gguf, const QString& golden, const nlohmann::json& config, const std::string& prefix,
                   const std::vector<std::string>& extra, const QString& name, double tol) {
    REQUIRE_GOLDEN_FILES(golden, g);
    const QString dir = tmp_.filePath(name);
    QVERIFY(QDir().mkpath(dir));
    writeText(dir + "/config.json", config.dump(2));
    writeFolderWeights(GgufFile::open(gguf.toStdString()), dir.toStdString(), prefix, extra);
    if (QTest::currentTestFailed()) return;
    const ModelBundle hf = load(dir, gguf), orig = load(gguf);
    QCOMPARE(hf.format, std::string("huggingface"));
    const ModelConfig &a = orig.model.config, &b = hf.model.config;
    QCOMPARE(b.architecture, std::string("gemma4"));
    QCOMPARE(b.head_dim, a.head_dim);
    QCOMPARE(b.n_kv_heads, a.n_kv_heads);
    QCOMPARE(b.rope_freq_factors, a.rope_freq_factors);
    QCOMPARE(b.final_logit_softcap, a.final_logit_softcap);
    QCOMPARE(b.per_layer_input_size, a.per_layer_input_size);
    QCOMPARE(b.moe.num_experts, a.moe.num_experts);
    QCOMPARE(b.moe.parallel_dense, a.moe.parallel_dense);
    for (int l = 0; l < a.n_layers; ++l) {
      QCOMPARE(b.layer_head_dim(l), a.layer_head_dim(l));
      QCOMPARE(b.layer_kv_heads(l), a.layer_kv_heads(l));
      QCOMPARE(b.layer_rotary_dim(l), a.layer_rotary_dim(l));
      QCOMPARE(b.layer_intermediate_size(l), a.layer_intermediate_size(l));
      QCOMPARE(b.layer(l).sliding_window, a.layer(l).sliding_window);
      QCOMPARE(b.layer(l).rope_theta, a.layer(l).rope_theta);
      QCOMPARE(b.layer(l).rope_scaled, a.layer(l).rope_scaled);
      QCOMPARE(b.layer(l).kv_source_layer, a.layer(l).kv_source_layer);
      QCOMPARE(b.layer(l).moe, a.layer(l).moe);
      QCOMPARE(b.layer(l).k_eq_v, a.layer(l).k_eq_v);
    }
    // Float32 weights both ways (the GGUF's own types would differ by its int8 activations), and
    // a 16-bit K/V cache as the golden ran.
    auto backend = kernels::make_cpu_backend(2);
    DecoderModel mh(b, hf.model.weights, *backend, WeightDType::kFloat32),
        mo(a, orig.model.weights, *backend, WeightDType::kFloat32);
    double worst = 0, vs_gguf = 0;
    for (const GoldenPrompt& p : g.prompts) {
      QCOMPARE(hf.tokenizer->encode(p.prompt, b.add_bos), p.prompt_ids);
      const auto steps = teacherForced(mh, p, kernels::KvDType::kFloat16),
                 ref = teacherForced(mo, p, kernels::KvDType::kFloat16);
      const Comparison r = compare(p, steps, tol);
      worst = std::max(worst, r.max_abs());
      QVERIFY2(r.mismatches == 0, r.first_mismatch.c_str());
      for (std::size_t s = 0; s < steps.size(); ++s)
        for (std::size_t i = 0; i < steps[s].size(); ++i)
          vs_gguf = std::max(vs_gguf, double(std::fabs(steps[s][i] - ref[s][i])));
    }
    qInfo("%s: folder vs ik_llama.cpp golden max |dlogit| %.3g, vs the GGUF file %.3g", qPrintable(name), worst,
          vs_gguf);
    QVERIFY2(worst <= tol, qPrintable(QString("max |dlogit| %1 > %2").arg(worst).arg(tol)));
    QVERIFY(vs_gguf == 0.0);  // the same weights and arithmetic: bit for bit
  }

 private slots:
  void initTestCase() { QVERIFY(tmp_.isValid()); }

  // E2B / E4B: per-layer embeddings, KV-shared layers (no k/v weights of their own) with the
  // double-wide MLP, K = V on the global layers, proportional RoPE.
  void perLayerEmbeddingsSharedKv() {
    const QString gguf = GEMMA4PLE_DIR "/gemma4ple-tiny.gguf";
    REQUIRE_MODEL_FILE(gguf);
    // The arch README's Gemma 4 tolerance (ik's flash attention on f16 K/V; the GGUF file itself is
    // as far from the golden, test_arch_golden).
    checkFolder(gguf, gguf, pleConfig(), "model.", {}, "ple", 3e-2);
  }

  // The 26B-A4B's experts beside the dense MLP, K = V on the global layer, proportional RoPE.
  void mixtureOfExpertsCausalLm() {
    const QString gguf = GEMMA4MOE_DIR "/gemma4moe-tiny.gguf";
    REQUIRE_MODEL_FILE(gguf);
    nlohmann::json config = moeTextConfig();
    config["architectures"] = {"Gemma4ForCausalLM"};
    checkFolder(gguf, gguf, config, "model.", {}, "moe-causal", 3e-3);
  }

  // The same as the released multimodal class: text keys in text_config, the text model under
  // model.language_model., the vision and audio towers beside it (not run).
  void mixtureOfExpertsConditional() {
    const QString gguf = GEMMA4MOE_DIR "/gemma4moe-tiny.gguf";
    REQUIRE_MODEL_FILE(gguf);
    nlohmann::json text = moeTextConfig();
    nlohmann::json config = {{"architectures", {"Gemma4ForConditionalGeneration"}},
                             {"model_type", "gemma4"},
                             {"tie_word_embeddings", true},
                             {"text_config", text},
                             {"vision_config", {{"model_type", "gemma4_vision"}}},
                             {"bos_token_id", 1},
                             {"eos_token_id", 2}};
    checkFolder(gguf, gguf, config, "model.language_model.",
                {"model.vision_tower.encoder.layers.0.weight", "model.embed_vision.embedding_projection.weight",
                 "model.audio_tower.conv.weight"},
                "moe-conditional", 3e-3);
  }

  // What the folder's config.json cannot serve is refused by name, and a tensor the config does
  // not account for (a v_proj on a global layer with attention_k_eq_v) is not silently used.
  void refusals() {
    const QString gguf = GEMMA4MOE_DIR "/gemma4moe-tiny.gguf";
    REQUIRE_MODEL_FILE(gguf);
    const GgufFile f = GgufFile::open(gguf.toStdString());
    struct Bad {
      const char* name;
      const char* patch;  // merged into the good config
      const char* expect;
    };
    const Bad bad[] = {
        {"rope", R"({"rope_parameters": {"full_attention": {"rope_type": "yarn", "factor": 8, "rope_theta": 1e6}}})",
         "rope_type"},
        {"layer types", R"({"layer_types": ["sliding_attention", "chunked_attention", "sliding_attention"]})",
         "chunked_attention"},
        {"top-k", R"({"top_k_experts": 5})", "top_k_experts"},
        {"k_eq_v", R"({"num_global_key_value_heads": null})", "num_global_key_value_heads"},
        {"activation", R"({"hidden_activation": "relu"})", "hidden_activation"},
        {"shared", R"({"num_kv_shared_layers": 3})", "num_kv_shared_layers"},
    };
    for (const Bad& b : bad) {
      nlohmann::json config = moeTextConfig();
      config["architectures"] = {"Gemma4ForCausalLM"};
      config.merge_patch(nlohmann::json::parse(b.patch));
      const QString dir = tmp_.filePath(QString("bad-") + b.name);
      QVERIFY(QDir().mkpath(dir));
      writeText(dir + "/config.json", config.dump());
      writeFolderWeights(f, dir.toStdString(), "model.", {});
      try {
        load(dir, gguf);
        QFAIL(qPrintable(QString("accepted: ") + b.name));
      } catch (const std::exception& e) {
        QVERIFY2(std::string(e.what()).find(b.expect) != std::string::npos, e.what());
      }
    }
    // A v_proj on the global layer of an attention_k_eq_v model is not part of it.
    nlohmann::json config = moeTextConfig();
    config["architectures"] = {"Gemma4ForCausalLM"};
    const QString dir = tmp_.filePath("extra-v");
    QVERIFY(QDir().mkpath(dir));
    writeText(dir + "/config.json", config.dump());
    writeFolderWeights(f, dir.toStdString(), "model.", {"model.layers.1.self_attn.v_proj.weight"});
    try {
      load(dir, gguf);
      QFAIL("a v_proj on a K = V layer was accepted");
    } catch (const std::exception& e) {
      QVERIFY2(std::string(e.what()).find("model.layers.1.self_attn.v_proj.weight") != std::string::npos, e.what());
    }
  }
};

QTEST_GUILESS_MAIN(TestGemma4Hf)
#include "test_gemma4_hf.moc"
