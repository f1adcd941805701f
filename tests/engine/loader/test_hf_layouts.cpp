// Gemma 4 and gpt-oss from Hugging Face folders (the families' config.json hooks in
// engine/model/arch/ and the folder loader). Gemma 4: a folder laid out as transformers saves Gemma 4 — its tensor
// names and shapes (model.layers.N.self_attn.*, router.proj / router.scale / router.per_expert_scale,
// experts.gate_up_proj [E, 2I, H] with each expert's gate rows first, layer_scalar, the per-layer
// embedding tensors), its config.json keys (layer_types, head_dim / global_head_dim,
// num_global_key_value_heads with attention_k_eq_v, rope_parameters per layer type with the global
// layers' proportional RoPE, num_kv_shared_layers, use_double_wide_mlp, enable_moe_block) — is
// written here from a GGUF file with the name table llama.cpp's converter applies (HF -> GGUF,
// read backwards; docs/hf-layouts.md), then loaded and run against ik_llama.cpp's golden of that
// GGUF file. Both forms: Gemma4ForCausalLM (flat, model.*) and Gemma4ForConditionalGeneration
// (text_config, model.language_model.*, towers that are skipped). gpt-oss: the release's layout —
// the experts as MXFP4 `*_blocks` U8 [E, rows, k/32, 16] (value 2j in byte j's low nibble, 2j + 1
// in its high one) and `*_scales` U8 [E, rows, k/32], gate_up_proj's rows interleaved (2j gate,
// 2j + 1 up) and its bias likewise, self_attn.sinks, mlp.router — written from gptoss-tiny.gguf by
// the inverse of llama.cpp's conversion/gpt_oss.py (docs/hf-layouts.md section 1), run against
// ik_llama.cpp's golden of that file.
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <cstring>
#include <functional>
#include <limits>
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
                        const std::vector<std::string>& extra,
                        const std::function<bool(const std::string&, std::vector<float>&)>& tweak = {}) {
  std::vector<std::vector<float>> data;
  std::vector<StTensorOut> out;
  data.reserve(f.tensors().size() + extra.size());
  for (const GgufTensorInfo& t : f.tensors()) {
    std::string name;
    // "blk.<layer>.<rest>"
    const std::size_t dot = t.name.rfind("blk.", 0) == 0 ? t.name.find('.', 4) : std::string::npos;
    if (dot != std::string::npos && dot > 4 && t.name.find_first_not_of("0123456789", 4) == dot) {
      const auto it = kLayerNames.find(t.name.substr(dot + 1));
      QVERIFY2(it != kLayerNames.end(), t.name.c_str());
      name = prefix + "layers." + t.name.substr(4, dot - 4) + "." + it->second;
    } else if (t.name == "rope_freqs.weight") {
      continue;
    } else {
      const auto it = kGlobalNames.find(t.name);
      QVERIFY2(it != kGlobalNames.end(), t.name.c_str());
      name = prefix + it->second;
    }
    std::vector<float> v(t.n_elements);
    dequantize(t.type, f.tensor_data(t), v.data(), t.n_elements);
    if (tweak && !tweak(name, v)) continue;  // left out
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

// gptoss-tiny.gguf as the gpt-oss release lays it out: every tensor under transformers' name,
// the MXFP4 experts back in the release's block order. Returns false (with a QFAIL) on a surprise.
void writeGptOssFolder(const GgufFile& f, const std::string& dir, int layers, bool bf16_experts = false) {
  std::vector<std::vector<uint8_t>> bytes;
  std::vector<StTensorOut> out;
  bytes.reserve(f.tensors().size() * 2);
  auto add = [&](const std::string& name, StDtype dtype, std::vector<uint64_t> shape, std::vector<uint8_t> data) {
    bytes.push_back(std::move(data));
    out.push_back({name, dtype, std::move(shape), bytes.back().data()});
  };
  auto floats = [&](const GgufTensorInfo& t) {
    std::vector<float> v(t.n_elements);
    dequantize(t.type, f.tensor_data(t), v.data(), t.n_elements);
    std::vector<uint8_t> b(v.size() * 4);
    std::memcpy(b.data(), v.data(), b.size());
    return b;
  };
  auto plain = [&](const std::string& gguf, const std::string& hf) {
    const GgufTensorInfo* t = f.find_tensor(gguf);
    QVERIFY2(t, gguf.c_str());
    add(hf, StDtype::kF32, std::vector<uint64_t>(t->ne.rbegin(), t->ne.rend()), floats(*t));
  };
  plain("token_embd.weight", "model.embed_tokens.weight");
  plain("output_norm.weight", "model.norm.weight");
  plain("output.weight", "lm_head.weight");
  for (int l = 0; l < layers; ++l) {
    const std::string g = "blk." + std::to_string(l) + ".", h = "model.layers." + std::to_string(l) + ".";
    plain(g + "attn_norm.weight", h + "input_layernorm.weight");
    plain(g + "post_attention_norm.weight", h + "post_attention_layernorm.weight");
    for (const auto& [a, b] : std::vector<std::pair<std::string, std::string>>{
             {"attn_q", "q_proj"}, {"attn_k", "k_proj"}, {"attn_v", "v_proj"}, {"attn_output", "o_proj"}}) {
      plain(g + a + ".weight", h + "self_attn." + b + ".weight");
      plain(g + a + ".bias", h + "self_attn." + b + ".bias");
    }
    plain(g + "attn_sinks.weight", h + "self_attn.sinks");
    plain(g + "ffn_gate_inp.weight", h + "mlp.router.weight");
    plain(g + "ffn_gate_inp.bias", h + "mlp.router.bias");
    // Experts: GGUF MXFP4 [E][rows][k/32 x {e, qs[16]}] -> blocks [E, rows, k/32, 16] + scales.
    const GgufTensorInfo *gate = f.find_tensor(g + "ffn_gate_exps.weight"),
                         *up = f.find_tensor(g + "ffn_up_exps.weight"),
                         *down = f.find_tensor(g + "ffn_down_exps.weight");
    QVERIFY(gate && up && down && gate->type == GgmlType::MXFP4);
    auto blocks_of = [&](std::initializer_list<const GgufTensorInfo*> parts, const std::string& name) {
      // parts interleaved row by row (gate_up: gate row j, then up row j).
      const uint64_t k = parts.begin()[0]->ne[0], rows = parts.begin()[0]->ne[1], E = parts.begin()[0]->ne[2],
                     nb = k / 32, n = parts.size();
      std::vector<uint8_t> blocks(E * rows * n * nb * 16), scales(E * rows * n * nb);
      for (uint64_t e = 0; e < E; ++e)
        for (uint64_t r = 0; r < rows; ++r)
          for (uint64_t part = 0; part < n; ++part) {
            const uint8_t* src = f.tensor_data(*parts.begin()[part]) + ((e * rows + r) * nb) * 17;
            const uint64_t out_row = e * rows * n + r * n + part;
            for (uint64_t i = 0; i < nb; ++i, src += 17) {
              scales[out_row * nb + i] = src[0];
              auto value = [src](int v) { return v < 16 ? src[1 + v] & 15 : src[1 + v - 16] >> 4; };
              for (int j = 0; j < 16; ++j)
                blocks[(out_row * nb + i) * 16 + j] = uint8_t(value(2 * j) | value(2 * j + 1) << 4);
            }
          }
      add(name + "_blocks", StDtype::kU8, {E, rows * n, nb, 16}, std::move(blocks));
      add(name + "_scales", StDtype::kU8, {E, rows * n, nb}, std::move(scales));
    };
    if (bf16_experts) {
      add(h + "mlp.experts.gate_up_proj", StDtype::kF32, {gate->ne[2], gate->ne[0], 2 * gate->ne[1]},
          std::vector<uint8_t>(gate->ne[2] * gate->ne[0] * 2 * gate->ne[1] * 4));
    } else {
      blocks_of({gate, up}, h + "mlp.experts.gate_up_proj");
      blocks_of({down}, h + "mlp.experts.down_proj");
    }
    // Biases: [E][I] each -> gate_up_proj_bias [E, 2I] interleaved.
    const GgufTensorInfo *gb = f.find_tensor(g + "ffn_gate_exps.bias"), *ub = f.find_tensor(g + "ffn_up_exps.bias");
    QVERIFY(gb && ub);
    const std::vector<uint8_t> gv = floats(*gb), uv = floats(*ub);
    const uint64_t I = gb->ne[0], E = gb->ne[1];
    std::vector<uint8_t> gu(E * 2 * I * 4);
    for (uint64_t e = 0; e < E; ++e)
      for (uint64_t j = 0; j < I; ++j) {
        std::memcpy(&gu[(e * 2 * I + 2 * j) * 4], &gv[(e * I + j) * 4], 4);
        std::memcpy(&gu[(e * 2 * I + 2 * j + 1) * 4], &uv[(e * I + j) * 4], 4);
      }
    add(h + "mlp.experts.gate_up_proj_bias", StDtype::kF32, {E, 2 * I}, std::move(gu));
    plain(g + "ffn_down_exps.bias", h + "mlp.experts.down_proj_bias");
  }
  write_safetensors(dir + "/model.safetensors", out);
}

// config.json of gptoss-tiny.gguf (../shared/models/arch/README.md), as the release spells it.
nlohmann::json gptOssConfig() {
  return nlohmann::json::parse(R"({
    "architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "hidden_size": 64,
    "intermediate_size": 64, "head_dim": 32, "num_attention_heads": 4, "num_key_value_heads": 2,
    "num_hidden_layers": 4, "num_local_experts": 4, "num_experts_per_tok": 2, "experts_per_token": 2,
    "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention"],
    "sliding_window": 8, "rope_theta": 150000, "rope_scaling": {"rope_type": "yarn", "factor": 32.0,
    "beta_fast": 32.0, "beta_slow": 1.0, "original_max_position_embeddings": 4096, "truncate": true},
    "initial_context_length": 4096, "max_position_embeddings": 131072, "rms_norm_eps": 1e-05,
    "attention_bias": true, "hidden_act": "silu", "swiglu_limit": 7.0, "tie_word_embeddings": false,
    "vocab_size": 201088, "eos_token_id": 200002, "pad_token_id": 199999,
    "quantization_config": {"quant_method": "mxfp4", "modules_to_not_convert":
      ["model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"]}})");
}

}  // namespace

class TestHfLayouts : public QObject {
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

  // gpt-oss as released: MXFP4 experts (rewritten into GGUF's block order, bit for bit the GGUF
  // file's logits), sinks, router and expert biases, YaRN; against ik_llama.cpp's golden.
  void gptOssRelease() {
    const QString gguf = testpaths::modelFile("arch/gptoss-tiny.gguf");
    REQUIRE_MODEL_FILE(gguf);
    REQUIRE_GOLDEN_FILES(gguf, g);
    const QString dir = tmp_.filePath("gptoss");
    QVERIFY(QDir().mkpath(dir));
    writeText(dir + "/config.json", gptOssConfig().dump(2));
    const GgufFile f = GgufFile::open(gguf.toStdString());
    writeGptOssFolder(f, dir.toStdString(), 4);
    if (QTest::currentTestFailed()) return;
    const ModelBundle hf = load(dir, gguf), orig = load(gguf);
    const ModelConfig &a = orig.model.config, &b = hf.model.config;
    QCOMPARE(b.architecture, std::string("gpt-oss"));
    QCOMPARE(b.moe.num_experts, a.moe.num_experts);
    QCOMPARE(b.moe.expert_intermediate_size, a.moe.expert_intermediate_size);
    QCOMPARE(b.rope_scaling.factor, a.rope_scaling.factor);
    QCOMPARE(b.rope_attn_factor, a.rope_attn_factor);
    QVERIFY(b.attention_sinks && b.attention_out_bias);
    for (int l = 0; l < a.n_layers; ++l) QCOMPARE(b.layer(l).sliding_window, a.layer(l).sliding_window);
    // Every expert matrix rewritten into GGUF's MXFP4 blocks is the file's, byte for byte.
    const std::size_t ef = a.moe.expert_intermediate_size, dim = a.hidden_size;
    for (int l = 0; l < a.n_layers; ++l) {
      const MoeWeights &x = hf.model.weights.layers[l].moe, &y = orig.model.weights.layers[l].moe;
      QCOMPARE(x.gate.size(), y.gate.size());
      for (std::size_t e = 0; e < x.gate.size(); ++e) {
        QCOMPARE(x.gate[e].dtype, kernels::DType::kMXFP4);
        QVERIFY(std::memcmp(x.gate[e].data, y.gate[e].data, x.gate[e].bytes(ef * dim)) == 0);
        QVERIFY(std::memcmp(x.up[e].data, y.up[e].data, x.up[e].bytes(ef * dim)) == 0);
        QVERIFY(std::memcmp(x.down[e].data, y.down[e].data, x.down[e].bytes(ef * dim)) == 0);
        QVERIFY(std::memcmp(x.gate_bias[e], y.gate_bias[e], ef * 4) == 0);
        QVERIFY(std::memcmp(x.up_bias[e], y.up_bias[e], ef * 4) == 0);
        QVERIFY(std::memcmp(x.down_bias[e], y.down_bias[e], dim * 4) == 0);
      }
    }
    // The experts stay MXFP4; the rest float32 both ways (the file's Q8_0 embedding and classifier
    // would otherwise meet int8 activations).
    auto backend = kernels::make_cpu_backend(2);
    DecoderModel mh(b, hf.model.weights, *backend, WeightDType::kAuto),
        mo(a, orig.model.weights, *backend, WeightDType::kAuto);
    double worst = 0, vs_gguf = 0;
    for (const GoldenPrompt& p : g.prompts) {
      QCOMPARE(hf.tokenizer->encode(p.prompt, b.add_bos), p.prompt_ids);
      const auto steps = teacherForced(mh, p), ref = teacherForced(mo, p);
      const Comparison r = compare(p, steps, 2e-2);
      worst = std::max(worst, r.max_abs());
      QVERIFY2(r.mismatches == 0, r.first_mismatch.c_str());
      for (std::size_t s = 0; s < steps.size(); ++s)
        for (std::size_t i = 0; i < steps[s].size(); ++i)
          vs_gguf = std::max(vs_gguf, double(std::fabs(steps[s][i] - ref[s][i])));
    }
    qInfo("gpt-oss folder vs ik_llama.cpp golden max |dlogit| %.3g, vs the GGUF file %.3g", worst, vs_gguf);
    QVERIFY2(worst <= 2e-2, qPrintable(QString("max |dlogit| %1").arg(worst)));
    // The expert weights are the file's, byte for byte; only the classifier and embedding differ
    // (float32 from the folder vs Q8_0 in the file).
    QVERIFY2(vs_gguf <= 2e-2, qPrintable(QString::number(vs_gguf)));

    // Through the engine (its runner releases the rewritten experts' pages once packed): greedy
    // ids equal the golden's up to its first near-tie.
    {
      EngineConfig ec;
      ec.model = dir.toStdString();
      ec.tokenizer = gguf.toStdString();
      ec.max_model_len = 160;
      ec.num_threads = 2;
      LLMEngine engine(ec);
      SamplingParams sp{.temperature = 0.0f, .max_tokens = 24, .ignore_eos = true};
      for (const GoldenPrompt& p : g.prompts) engine.add_request(p.name, p.prompt, sp);
      std::map<std::string, std::vector<int>> ids;
      while (engine.has_unfinished_requests())
        for (auto& o : engine.step())
          if (o.finished) ids[o.request_id] = o.outputs[0].token_ids;
      int checked = 0;
      for (const GoldenPrompt& p : g.prompts) {
        const int n = reliablePrefix(p, 2e-2);
        for (int i = 0; i < n; ++i) QCOMPARE(ids.at(p.name).at(std::size_t(i)), p.generated_ids[std::size_t(i)]);
        checked += n;
      }
      QVERIFY(checked > 0);
    }

    // The release's config says truncate false: transformers' uncorrected YaRN range, as it says.
    nlohmann::json config = gptOssConfig();
    config["rope_scaling"]["truncate"] = false;
    writeText(dir + "/config.json", config.dump());
    QVERIFY(!load(dir, gguf).model.config.rope_scaling.yarn_truncate);
    // The bfloat16 ("dequantized") form and another quantization are refused by name.
    config["quantization_config"]["quant_method"] = "gptq";
    writeText(dir + "/config.json", config.dump());
    try {
      load(dir, gguf);
      QFAIL("a gptq checkpoint was accepted");
    } catch (const std::exception& e) {
      QVERIFY2(std::string(e.what()).find("gptq") != std::string::npos, e.what());
    }
    const QString bf = tmp_.filePath("gptoss-bf16");
    QVERIFY(QDir().mkpath(bf));
    config.erase("quantization_config");
    writeText(bf + "/config.json", config.dump());
    writeGptOssFolder(f, bf.toStdString(), 4, /*bf16_experts=*/true);
    try {
      load(bf, gguf);
      QFAIL("bfloat16 experts were accepted");
    } catch (const std::exception& e) {
      QVERIFY2(std::string(e.what()).find("MXFP4") != std::string::npos, e.what());
    }
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
        {"null head size", R"({"global_head_dim": null})", "global_head_dim"},
    };
    for (const Bad& b : bad) {
      nlohmann::json config = moeTextConfig();
      config["architectures"] = {"Gemma4ForCausalLM"};
      const nlohmann::json patch = nlohmann::json::parse(b.patch);
      for (const auto& [key, value] : patch.items()) config[key] = value;  // a null stays a null
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
    // Without rope_parameters, transformers' default: the global layers' proportional RoPE 0.25.
    {
      nlohmann::json config = moeTextConfig();
      config["architectures"] = {"Gemma4ForCausalLM"};
      config.erase("rope_parameters");
      const QString dir = tmp_.filePath("default-rope");
      QVERIFY(QDir().mkpath(dir));
      writeText(dir + "/config.json", config.dump());
      writeFolderWeights(f, dir.toStdString(), "model.", {});
      const ModelConfig c = load(dir, gguf).model.config;
      QCOMPARE(c.rope_freq_factors, load(gguf).model.config.rope_freq_factors);
      QCOMPARE(c.layer(1).rope_theta, 1e6);
      QCOMPARE(c.layer(0).rope_theta, 1e4);
    }
    // A missing layer_scalar is refused (not taken as 1); a router scale that is not a number too.
    struct Tweak {
      const char* tensor;
      bool drop;
      const char* expect;
    };
    for (const Tweak& t : {Tweak{"model.layers.1.layer_scalar", true, "model.layers.1.layer_scalar"},
                           Tweak{"model.layers.2.router.per_expert_scale", false, "router.per_expert_scale"},
                           Tweak{"model.layers.0.router.scale", false, "router.scale"}}) {
      nlohmann::json config = moeTextConfig();
      config["architectures"] = {"Gemma4ForCausalLM"};
      const QString dir = tmp_.filePath(QString("tweak-") + t.tensor);
      QVERIFY(QDir().mkpath(dir));
      writeText(dir + "/config.json", config.dump());
      writeFolderWeights(f, dir.toStdString(), "model.", {}, [&](const std::string& name, std::vector<float>& v) {
        if (name != t.tensor) return true;
        v[0] = std::numeric_limits<float>::quiet_NaN();
        return !t.drop;
      });
      try {
        load(dir, gguf);
        QFAIL(qPrintable(QString("accepted: ") + t.tensor));
      } catch (const std::exception& e) {
        QVERIFY2(std::string(e.what()).find(t.expect) != std::string::npos, e.what());
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

QTEST_GUILESS_MAIN(TestHfLayouts)
#include "test_hf_layouts.moc"
