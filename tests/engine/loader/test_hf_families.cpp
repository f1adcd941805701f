// config.json of Gemma 3 (and Gemma3ForConditionalGeneration's text part), Qwen3-MoE, Phi-3 /
// Phi-4-mini and SmolLM3 (engine/loader/hf/hf_config.h): the ModelConfig each key gives, as the
// family's GGUF hook would (per-layer windows, RoPE bases, NoPE layers, experts, LongRoPE), and
// refusals that name the key; transformers 5's rope_parameters. With the tiny models of
// ../shared/models/arch written as folders: a router that does not match num_experts, a
// Gemma3ForConditionalGeneration folder (computes as the text-only one), Qwen3-MoE with a dense
// layer (mlp_only_layers), and what the writers refuse to write because the other format cannot
// say it.
#include <QTest>

#include <QTemporaryDir>
#include <cmath>

#include "engine/loader/gguf/gguf_vocab_writer.h"
#include "engine/loader/gguf/gguf_writer.h"
#include "engine/loader/hf/hf_config.h"
#include "engine/loader/hf/hf_loader.h"
#include "engine/loader/hf/safetensors.h"
#include "engine/loader/model_loader.h"
#include "test_hf_utils.h"

using namespace pagedchat;
using nlohmann::json;

namespace {

HfModelConfig parse(const json& j) { return parse_hf_config(j.dump(), "dir/config.json"); }

/// google/gemma-3-1b-it's config.json (the keys that matter).
json gemma3Config() {
  return {{"architectures", {"Gemma3ForCausalLM"}},
          {"model_type", "gemma3_text"},
          {"hidden_size", 1152},
          {"intermediate_size", 6912},
          {"num_hidden_layers", 26},
          {"num_attention_heads", 4},
          {"num_key_value_heads", 1},
          {"head_dim", 256},
          {"query_pre_attn_scalar", 256},
          {"sliding_window", 512},
          {"sliding_window_pattern", 6},
          {"rope_theta", 1000000.0},
          {"rope_local_base_freq", 10000.0},
          {"rope_scaling", nullptr},
          {"hidden_activation", "gelu_pytorch_tanh"},
          {"max_position_embeddings", 32768},
          {"rms_norm_eps", 1e-6},
          {"vocab_size", 262144},
          {"final_logit_softcapping", nullptr},
          {"attn_logit_softcapping", nullptr},
          {"bos_token_id", 2},
          {"eos_token_id", {1, 106}}};
}

/// Qwen/Qwen3-30B-A3B's config.json.
json qwen3moeConfig() {
  return {{"architectures", {"Qwen3MoeForCausalLM"}},
          {"model_type", "qwen3_moe"},
          {"hidden_size", 2048},
          {"intermediate_size", 6144},
          {"num_hidden_layers", 48},
          {"num_attention_heads", 32},
          {"num_key_value_heads", 4},
          {"head_dim", 128},
          {"num_experts", 128},
          {"num_experts_per_tok", 8},
          {"moe_intermediate_size", 768},
          {"norm_topk_prob", true},
          {"decoder_sparse_step", 1},
          {"mlp_only_layers", json::array()},
          {"max_position_embeddings", 40960},
          {"rms_norm_eps", 1e-6},
          {"rope_theta", 1000000.0},
          {"vocab_size", 151936},
          {"use_sliding_window", false},
          {"sliding_window", nullptr},
          {"tie_word_embeddings", false}};
}

/// microsoft/Phi-4-mini-instruct's config.json (LongRoPE factors shortened to ramps).
json phi3Config() {
  json shorts = json::array(), longs = json::array();
  for (int i = 0; i < 48; ++i) {
    shorts.push_back(1.0 + i / 100.0);
    longs.push_back(1.0 + i);
  }
  return {{"architectures", {"Phi3ForCausalLM"}},
          {"model_type", "phi3"},
          {"hidden_size", 3072},
          {"intermediate_size", 8192},
          {"num_hidden_layers", 32},
          {"num_attention_heads", 24},
          {"num_key_value_heads", 8},
          {"partial_rotary_factor", 0.75},
          {"max_position_embeddings", 131072},
          {"original_max_position_embeddings", 4096},
          {"rope_scaling", {{"type", "longrope"}, {"short_factor", shorts}, {"long_factor", longs}}},
          {"rope_theta", 10000.0},
          {"rms_norm_eps", 1e-5},
          {"sliding_window", 262144},
          {"vocab_size", 200064},
          {"hidden_act", "silu"},
          {"tie_word_embeddings", true}};
}

/// HuggingFaceTB/SmolLM3-3B's config.json.
json smollm3Config() {
  json no_rope = json::array();
  for (int l = 0; l < 36; ++l) no_rope.push_back((l + 1) % 4 != 0 ? 1 : 0);
  return {{"architectures", {"SmolLM3ForCausalLM"}},
          {"model_type", "smollm3"},
          {"hidden_size", 2048},
          {"intermediate_size", 11008},
          {"num_hidden_layers", 36},
          {"num_attention_heads", 16},
          {"num_key_value_heads", 4},
          {"max_position_embeddings", 65536},
          {"rms_norm_eps", 1e-6},
          {"rope_theta", 5000000.0},
          {"rope_scaling", nullptr},
          {"vocab_size", 128256},
          {"no_rope_layers", no_rope},
          {"no_rope_layer_interval", 4},
          {"use_sliding_window", false},
          {"sliding_window", nullptr},
          {"tie_word_embeddings", true}};
}

QString arch(const QString& rel) { return testpaths::modelFile("arch/" + rel); }

ModelBundle load(const QString& model, const QString& tokenizer = {}) {
  EngineConfig c;
  c.model = model.toStdString();
  c.tokenizer = tokenizer.toStdString();
  return load_model(c);
}

/// Logits of every position of `ids`, in one batch.
std::vector<float> logitsOf(const LoadedModel& m, const std::vector<int>& ids) {
  auto backend = kernels::make_cpu_backend(2);
  DecoderModel model(m.config, m.weights, *backend);
  const int bs = 16, nblocks = (int(ids.size()) + bs - 1) / bs;
  const int groups = KVCacheGroups::of(m.config).num_groups();
  KVCache cache(m.config, nblocks * groups, bs, kernels::KvDType::kFloat32);
  ForwardBatch b;
  b.max_blocks_per_seq = nblocks;
  for (int i = 0; i < nblocks; ++i) b.block_tables.push_back(i);
  b.query_start_loc = {0, int(ids.size())};
  b.seq_lens = {int(ids.size())};
  for (int p = 0; p < int(ids.size()); ++p) {
    b.input_ids.push_back(ids[std::size_t(p)]);
    b.positions.push_back(p);
    b.slot_mapping.push_back(p);
    b.logits_indices.push_back(p);
  }
  b.add_shifted_groups(groups, nblocks, bs);
  std::vector<float> logits;
  model.forward(b, cache, logits);
  return logits;
}

/// A safetensors file of `st`'s tensors renamed by `rename` ("" drops one), plus `extra` (name,
/// F32 values, shape).
void rewriteTensors(const SafetensorsSet& st, const QString& path,
                    const std::function<std::string(std::string)>& rename,
                    const std::vector<std::tuple<std::string, std::vector<float>*, std::vector<uint64_t>>>& extra) {
  std::vector<StTensorOut> out;
  for (const auto& [name, t] : st.tensors()) {
    const std::string to = rename(name);
    if (!to.empty()) out.push_back({to, t.dtype, t.shape, t.data});
  }
  for (const auto& [name, v, shape] : extra) out.push_back({name, StDtype::kF32, shape, v->data()});
  write_safetensors(path.toStdString(), out);
}

}  // namespace

class TestHfFamilies : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

 private slots:
  void gemma3() {
    const HfModelConfig h = parse(gemma3Config());
    const ModelConfig& c = h.config;
    QCOMPARE(h.architecture, std::string("Gemma3ForCausalLM"));
    QCOMPARE(c.architecture, std::string("gemma3"));
    QVERIFY(c.pre_norm && c.post_norm && c.qk_norm);
    QCOMPARE(c.activation, MlpActivation::kGeluTanh);
    QCOMPARE(h.norm_weight_offset, 1.0f);  // Gemma3RMSNorm: x * (1 + w)
    QVERIFY(!h.multimodal);
    QVERIFY(c.shared_classifier);  // Gemma3TextConfig's default
    QCOMPARE(c.embedding_scale, std::sqrt(1152.0f));
    QCOMPARE(c.attention_scale, 0.0f);  // query_pre_attn_scalar == head_dim: 1 / sqrt(head_dim)
    QCOMPARE(c.rope_style, RopeStyle::kNeox);
    QCOMPARE(int(c.layer_specs.size()), 26);
    for (int l = 0; l < 26; ++l) {
      const LayerSpec s = c.layer(l);
      const bool global = (l + 1) % 6 == 0;
      QCOMPARE(s.sliding_window, global ? 0 : 512);
      QCOMPARE(s.rope_theta, global ? 1e6 : 1e4);
      QCOMPARE(s.rope_scaled, global);
      QVERIFY(s.use_rope);
    }
    QCOMPARE(c.eos_id, 1);
    QCOMPARE(c.extra_eos_ids, std::vector<int>{106});

    json j = gemma3Config();
    j["sliding_window_pattern"] = 2;
    QCOMPARE(parse(j).config.layer(1).sliding_window, 0);
    QCOMPARE(parse(j).config.layer(2).sliding_window, 512);
    // layer_types wins over the pattern.
    j["layer_types"] = json::array();
    for (int l = 0; l < 26; ++l) j["layer_types"].push_back(l == 0 ? "full_attention" : "sliding_attention");
    QCOMPARE(parse(j).config.layer(0).sliding_window, 0);
    QCOMPARE(parse(j).config.layer(5).sliding_window, 512);
    j["layer_types"][3] = "chunked_attention";
    HF_EXPECT_ERROR(parse(j), "dir/config.json", "layer_types", "[3]", "chunked_attention", "unknown layer type");
    j["layer_types"] = {"sliding_attention", "full_attention"};
    HF_EXPECT_ERROR(parse(j), "layer_types", "26");
    j.erase("layer_types");

    // Gemma 3 4B-27B: rope_scaling (linear 8) on the global layers only; 27B's query_pre_attn_scalar.
    j = gemma3Config();
    j["rope_scaling"] = {{"rope_type", "linear"}, {"factor", 8.0}};
    j["head_dim"] = 128;
    j["query_pre_attn_scalar"] = 168;
    {
      const ModelConfig g = parse(j).config;
      QCOMPARE(g.rope_scaling.type, RopeScalingType::kLinear);
      QCOMPARE(g.rope_scaling.factor, 8.0);
      QVERIFY(g.layer(5).rope_scaled && !g.layer(0).rope_scaled);
      QCOMPARE(g.attention_scale, 1.0f / std::sqrt(168.0f));
    }
    j = gemma3Config();
    j["final_logit_softcapping"] = 30.0;
    QCOMPARE(parse(j).config.final_logit_softcap, 30.0f);
    for (const auto& [key, value, needle] :
         {std::tuple<const char*, json, const char*>{"hidden_activation", "gelu", "hidden_activation"},
          {"attn_logit_softcapping", 50.0, "attn_logit_softcapping"},
          {"attention_bias", true, "attention_bias"},
          {"sliding_window", nullptr, "sliding_window"},
          {"sliding_window", 0, "sliding_window"}}) {
      j = gemma3Config();
      j[key] = value;
      HF_EXPECT_ERROR(parse(j), "dir/config.json", needle);
    }
    j = gemma3Config();
    j["hidden_activation"] = nullptr;  // Gemma3TextConfig's default, gelu_pytorch_tanh
    QCOMPARE(parse(j).config.activation, MlpActivation::kGeluTanh);
    j.erase("architectures");  // model_type gemma3_text stands in
    QCOMPARE(parse(j).architecture, std::string("Gemma3ForCausalLM"));
    j["model_type"] = "gemma2";
    HF_EXPECT_ERROR(parse(j), "gemma2");
  }

  // Gemma 3 4B-27B ship as Gemma3ForConditionalGeneration: text_config holds the text model with
  // most keys left to Gemma3TextConfig's defaults (google/gemma-3-4b-it's config.json).
  void gemma3Multimodal() {
    const json j = {{"architectures", {"Gemma3ForConditionalGeneration"}},
                    {"model_type", "gemma3"},
                    {"boi_token_index", 255999},
                    {"eos_token_id", {1, 106}},
                    {"image_token_index", 262144},
                    {"mm_tokens_per_image", 256},
                    {"text_config",
                     {{"hidden_size", 2560},
                      {"intermediate_size", 10240},
                      {"model_type", "gemma3_text"},
                      {"num_hidden_layers", 34},
                      {"rope_scaling", {{"factor", 8.0}, {"rope_type", "linear"}}},
                      {"sliding_window", 1024}}},
                    {"vision_config", {{"hidden_size", 1152}, {"model_type", "siglip_vision_model"}}}};
    const HfModelConfig h = parse(j);
    const ModelConfig& c = h.config;
    QVERIFY(h.multimodal);
    QCOMPARE(c.architecture, std::string("gemma3"));
    QCOMPARE(c.hidden_size, 2560);
    QCOMPARE(c.n_layers, 34);
    QCOMPARE(c.n_heads, 8);
    QCOMPARE(c.n_kv_heads, 4);
    QCOMPARE(c.head_dim, 256);
    QCOMPARE(c.vocab_size, 262208);
    QCOMPARE(c.max_seq_len, 131072);
    QCOMPARE(c.norm_eps, 1e-6f);
    QCOMPARE(c.rope_theta, 1e6f);
    QVERIFY(c.shared_classifier);
    QCOMPARE(c.eos_id, 1);
    QCOMPARE(c.extra_eos_ids, std::vector<int>{106});
    QCOMPARE(c.layer(0).sliding_window, 1024);
    QCOMPARE(c.layer(5).sliding_window, 0);
    QCOMPARE(c.rope_scaling.factor, 8.0);
    json bad = j;
    bad.erase("text_config");
    HF_EXPECT_ERROR(parse(bad), "dir/config.json", "Gemma3ForConditionalGeneration", "text_config");
    bad = j;
    bad["quantization_config"] = {{"quant_method", "bitsandbytes"}};
    HF_EXPECT_ERROR(parse(bad), "quantization_config", "bitsandbytes");
  }

  void qwen3moe() {
    const ModelConfig c = parse(qwen3moeConfig()).config;
    QCOMPARE(c.architecture, std::string("qwen3moe"));
    QVERIFY(c.qk_norm);
    QCOMPARE(c.intermediate_size, 0);  // every layer has experts: no dense MLP (as the GGUF loader)
    QCOMPARE(c.moe.num_experts, 128);
    QCOMPARE(c.moe.num_experts_per_tok, 8);
    QCOMPARE(c.moe.expert_intermediate_size, 768);
    QVERIFY(c.moe.norm_topk_prob && c.moe.softmax_before_topk);
    for (int l = 0; l < 48; ++l) QVERIFY(c.layer(l).moe);

    json j = qwen3moeConfig();
    j.erase("norm_topk_prob");
    QVERIFY(!parse(j).config.moe.norm_topk_prob);  // Qwen3MoeConfig's default
    j["mlp_only_layers"] = {0, 47};
    {
      const ModelConfig m = parse(j).config;
      QVERIFY(!m.layer(0).moe && m.layer(1).moe && !m.layer(47).moe);
      QCOMPARE(m.intermediate_size, 6144);  // the dense layers' MLP
    }
    j["mlp_only_layers"] = json::array();
    j["decoder_sparse_step"] = 2;
    QVERIFY(!parse(j).config.layer(0).moe && parse(j).config.layer(1).moe);
    j.erase("decoder_sparse_step");
    j.erase("intermediate_size");
    QCOMPARE(parse(j).config.intermediate_size, 0);  // not needed without dense layers
    j["mlp_only_layers"] = {3};
    HF_EXPECT_ERROR(parse(j), "dir/config.json", "intermediate_size");
    j = qwen3moeConfig();
    j["num_local_experts"] = j["num_experts"];  // transformers 5's name
    j.erase("num_experts");
    QCOMPARE(parse(j).config.moe.num_experts, 128);

    // Refusals: top-k above the expert count, missing expert keys, a layer index out of range.
    j = qwen3moeConfig();
    j["num_experts_per_tok"] = 129;
    HF_EXPECT_ERROR(parse(j), "dir/config.json", "num_experts_per_tok", "129", "above the expert count", "128");
    j = qwen3moeConfig();
    j.erase("moe_intermediate_size");
    HF_EXPECT_ERROR(parse(j), "moe_intermediate_size");
    j = qwen3moeConfig();
    j["mlp_only_layers"] = {48};
    HF_EXPECT_ERROR(parse(j), "mlp_only_layers", "48");
    j = qwen3moeConfig();
    j["use_sliding_window"] = true;
    j["sliding_window"] = 4096;
    j["max_window_layers"] = 28;
    HF_EXPECT_ERROR(parse(j), "use_sliding_window");
    // Experts stay refused elsewhere.
    j = qwen3moeConfig();
    j["architectures"] = {"Qwen3ForCausalLM"};
    HF_EXPECT_ERROR(parse(j), "num_experts", "mixture-of-experts");
  }

  void phi3() {
    const ModelConfig c = parse(phi3Config()).config;
    QCOMPARE(c.architecture, std::string("phi3"));
    QCOMPARE(c.head_dim, 128);
    QCOMPARE(c.rotary_dim, 96);  // partial_rotary_factor 0.75
    QCOMPARE(c.rope_style, RopeStyle::kNeox);
    QCOMPARE(int(c.rope_freq_factors.size()), 48);
    QCOMPARE(c.rope_freq_factors[1], 1.01f);
    QCOMPARE(c.rope_freq_factors_long[47], 48.0f);
    QCOMPARE(c.rope_long_threshold, 4096);
    // transformers' _compute_longrope_parameters: factor = 131072 / 4096 = 32,
    // attention factor sqrt(1 + ln 32 / ln 4096) (1.190238...), squared on the scores.
    const float af = float(std::sqrt(1.0 + std::log(32.0) / std::log(4096.0)));
    QCOMPARE(c.rope_attn_factor, float(double(af) * double(af)));
    QVERIFY(std::fabs(c.rope_attn_factor - 1.41666667f) < 1e-6);
    QVERIFY(!c.has_sliding_window());  // 262144 is never reached
    QVERIFY(c.shared_classifier);
    QCOMPARE(c.rope_scaling.type, RopeScalingType::kNone);

    json j = phi3Config();
    j["rope_scaling"]["attention_factor"] = 1.5;
    QCOMPARE(parse(j).config.rope_attn_factor, 2.25f);
    j = phi3Config();
    j["rope_scaling"]["original_max_position_embeddings"] = 8192;  // rope_scaling's own wins
    QCOMPARE(parse(j).config.rope_long_threshold, 8192);
    j = phi3Config();
    j["rope_scaling"]["type"] = "su";  // the older name
    QCOMPARE(int(parse(j).config.rope_freq_factors.size()), 48);
    j["max_position_embeddings"] = 4096;  // no extension: attention factor 1
    QCOMPARE(parse(j).config.rope_attn_factor, 1.0f);
    j = phi3Config();
    j["rope_scaling"] = nullptr;
    QVERIFY(parse(j).config.rope_freq_factors.empty());
    QCOMPARE(parse(j).config.rope_attn_factor, 1.0f);
    // Phi-3-mini-4k: a window every layer uses.
    j = phi3Config();
    j["max_position_embeddings"] = 4096;
    j["sliding_window"] = 2047;
    j["partial_rotary_factor"] = 1.0;
    j["rope_scaling"] = nullptr;
    QCOMPARE(parse(j).config.rotary_dim, 0);
    for (int l = 0; l < 32; ++l) QCOMPARE(parse(j).config.layer(l).sliding_window, 2047);

    for (const auto& [change, needles] : std::vector<std::pair<std::function<void(json&)>, QStringList>>{
             {[](json& x) { x["rope_scaling"]["short_factor"].erase(0); }, {"short_factor", "48"}},
             {[](json& x) { x["rope_scaling"]["long_factor"][3] = -1.0; }, {"long_factor", "-1"}},
             {[](json& x) {
                x["rope_scaling"] = {{"type", "yarn"}, {"factor", 4.0}};
              },
              {"yarn", "Phi-3"}},
             {[](json& x) { x["partial_rotary_factor"] = 0.0; }, {"partial_rotary_factor"}},
             {[](json& x) { x["rope_scaling"]["attention_factor"] = 0.0; }, {"attention_factor"}},
         }) {
      j = phi3Config();
      change(j);
      const QString err = hftest::expectError([&] { parse(j); }, needles);
      QVERIFY2(err.isEmpty(), qPrintable(err));
    }
    // LongRoPE and partial rotary stay Phi-3's.
    j = phi3Config();
    j["architectures"] = {"LlamaForCausalLM"};
    HF_EXPECT_ERROR(parse(j), "rope_scaling", "longrope");
  }

  void smollm3() {
    const ModelConfig c = parse(smollm3Config()).config;
    QCOMPARE(c.architecture, std::string("smollm3"));
    QCOMPARE(c.rope_style, RopeStyle::kNeox);
    for (int l = 0; l < 36; ++l) {
      QCOMPARE(c.layer(l).use_rope, (l + 1) % 4 != 0);  // HF: no_rope_layers[l] == 1 means RoPE
      QCOMPARE(c.layer(l).rope_theta, 5e6);
    }
    json j = smollm3Config();
    j.erase("no_rope_layers");
    j["no_rope_layer_interval"] = 3;
    QVERIFY(parse(j).config.layer(1).use_rope && !parse(j).config.layer(2).use_rope);
    j = smollm3Config();
    j["no_rope_layers"].push_back(1);  // "at least num_hidden_layers" entries
    QVERIFY(!parse(j).config.layer(3).use_rope);
    j["no_rope_layers"] = {1, 1, 1, 0};
    HF_EXPECT_ERROR(parse(j), "dir/config.json", "no_rope_layers", "36");
    j = smollm3Config();
    j["no_rope_layers"][5] = 2;
    HF_EXPECT_ERROR(parse(j), "no_rope_layers", "[5]");
    j = smollm3Config();
    j["use_sliding_window"] = true;
    j["sliding_window"] = 4096;
    HF_EXPECT_ERROR(parse(j), "use_sliding_window", "NoPE");
    j = smollm3Config();
    j["rope_scaling"] = {{"type", "yarn"}, {"factor", 2.0}, {"original_max_position_embeddings", 65536}};
    HF_EXPECT_ERROR(parse(j), "rope_scaling", "yarn");
  }

  // transformers 5 saves RoPE as rope_parameters (per layer type for Gemma 3).
  void ropeParameters() {
    json j = qwen3moeConfig();
    j.erase("rope_theta");
    j["rope_parameters"] = {{"rope_theta", 2000000.0}, {"rope_type", "default"}};
    QCOMPARE(parse(j).config.rope_theta, 2e6f);
    j = gemma3Config();
    j.erase("rope_theta");
    j.erase("rope_local_base_freq");
    j.erase("rope_scaling");
    j["rope_parameters"] = {{"full_attention", {{"rope_type", "linear"}, {"factor", 8.0}, {"rope_theta", 1e6}}},
                            {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 20000.0}}}};
    const ModelConfig g = parse(j).config;
    QCOMPARE(g.rope_scaling.type, RopeScalingType::kLinear);
    QCOMPARE(g.layer(0).rope_theta, 20000.0);
    QCOMPARE(g.layer(5).rope_theta, 1e6);
    j = phi3Config();
    j["rope_parameters"] = j["rope_scaling"];
    j["rope_parameters"]["rope_theta"] = 250000.0;
    j["rope_parameters"]["partial_rotary_factor"] = 0.75;
    j.erase("rope_scaling");
    j.erase("rope_theta");
    j.erase("partial_rotary_factor");
    QCOMPARE(parse(j).config.rope_theta, 250000.0f);
    QCOMPARE(parse(j).config.rotary_dim, 96);
    QCOMPARE(int(parse(j).config.rope_freq_factors.size()), 48);
    j["rope_parameters"]["partial_rotary_factor"] = 0.5;
    HF_EXPECT_ERROR(parse(j), "short_factor", "32");  // 48 factors for 64 / 2 pairs
  }

  // A router whose rows are not num_experts, and experts beyond it.
  void qwen3moeRouterMismatch() {
    REQUIRE_MODEL_FILE(arch("qwen3moe-tiny.gguf"));
    const ModelBundle g = load(arch("qwen3moe-tiny.gguf"));
    const QString dir = tmp_.filePath("qwen3moe-hf");
    write_hf_folder(g.model, "", dir.toStdString(), "f32");
    const std::string cfg = hftest::readAll(dir + "/config.json").toStdString();
    for (int n : {4, 16}) {
      json j = json::parse(cfg);
      j["num_experts"] = n;
      const HfModelConfig h = parse_hf_config(j.dump(), dir.toStdString() + "/config.json");
      HF_EXPECT_ERROR(load_hf_weights(dir.toStdString(), h), "model.layers.0.mlp.gate.weight", "routes to 8 experts",
                      QString::number(n), "num_experts", "does not match the router");
    }
  }

  // Gemma3ForConditionalGeneration: the text model under language_model (either naming), the
  // vision tower and projector skipped; the logits are the text-only folder's, bit for bit.
  void gemma3MultimodalFolder() {
    REQUIRE_MODEL_FILE(arch("gemma3-tiny.gguf"));
    const ModelBundle g = load(arch("gemma3-tiny.gguf"));
    const QString text = tmp_.filePath("gemma3-text");
    write_hf_folder(g.model, "", text.toStdString(), "f32");
    const ModelBundle base = load(text, arch("gemma3-tiny.gguf"));
    const std::vector<int> ids = {2, 651, 6037, 576, 5803, 18, 573, 1, 31999, 7};
    const std::vector<float> want = logitsOf(base.model, ids);

    json causal = json::parse(hftest::readAll(text + "/config.json").toStdString());
    json mm = {{"architectures", {"Gemma3ForConditionalGeneration"}},
               {"model_type", "gemma3"},
               {"eos_token_id", causal["eos_token_id"]},
               {"vision_config", {{"model_type", "siglip_vision_model"}}}};
    causal.erase("architectures");
    causal.erase("eos_token_id");
    mm["text_config"] = causal;
    std::vector<float> patch(16, 0.5f), proj(8, 0.25f);
    for (const auto& naming :
         {std::pair<std::string, std::string>{"language_model.model.", ""}, {"model.language_model.", "model."}}) {
      const std::string prefix = naming.first, skip = naming.second;  // lambdas below capture them
      const QString dir = tmp_.filePath(QString::fromStdString("gemma3-mm-" + prefix));
      QDir().mkpath(dir);
      QVERIFY(hftest::writeAll(dir + "/config.json", QByteArray::fromStdString(mm.dump(2))));
      {
        SafetensorsSet st = SafetensorsSet::open_folder(text.toStdString());
        rewriteTensors(st, dir + "/model.safetensors", [&](std::string n) { return prefix + n.substr(6); },
                       {{skip + "vision_tower.vision_model.embeddings.patch_embedding.weight", &patch, {4, 4}},
                        {skip + "multi_modal_projector.mm_input_projection_weight", &proj, {2, 4}}});
      }
      const ModelBundle b = load(dir, arch("gemma3-tiny.gguf"));
      QCOMPARE(b.model.config.n_layers, base.model.config.n_layers);
      const std::vector<float> got = logitsOf(b.model, ids);
      QVERIFY2(got == want, prefix.c_str());
      // A tensor of neither the text model nor the image side is still refused.
      const QString odd = dir + "-odd";
      QDir().mkpath(odd);
      QVERIFY(hftest::writeAll(odd + "/config.json", QByteArray::fromStdString(mm.dump(2))));
      {
        SafetensorsSet st = SafetensorsSet::open_folder(text.toStdString());
        rewriteTensors(st, odd + "/model.safetensors", [&](std::string n) { return prefix + n.substr(6); },
                       {{"audio_tower.conv.weight", &proj, {2, 4}}});
      }
      EngineConfig ec;
      ec.model = odd.toStdString();
      ec.tokenizer = arch("gemma3-tiny.gguf").toStdString();
      HF_EXPECT_ERROR(load_model(ec), "audio_tower.conv.weight");
    }
  }

  // Qwen3-MoE with a dense layer (mlp_only_layers [0]): layer 0's MLP is expert 0 as a dense
  // MLP; the same model with every expert of layer 0 a copy of expert 0 (renormalised top-k
  // weights sum to 1) computes the same. GGUF cannot hold the dense layer (llama.cpp's qwen3moe
  // has experts on every layer): refused by name.
  void qwen3moeDenseLayer() {
    REQUIRE_MODEL_FILE(arch("qwen3moe-tiny.gguf"));
    const ModelBundle g = load(arch("qwen3moe-tiny.gguf"));
    const QString dir = tmp_.filePath("qwen3moe-src");
    write_hf_folder(g.model, "", dir.toStdString(), "f32");
    SafetensorsSet st = SafetensorsSet::open_folder(dir.toStdString());
    const std::string e0 = "model.layers.0.mlp.experts.0.";
    json cfg = json::parse(hftest::readAll(dir + "/config.json").toStdString());

    const QString same = tmp_.filePath("qwen3moe-same-experts");
    QDir().mkpath(same);
    QVERIFY(hftest::writeAll(same + "/config.json", QByteArray::fromStdString(cfg.dump())));
    {
      std::vector<StTensorOut> out;
      for (const auto& [name, t] : st.tensors()) {
        const std::string prefix = "model.layers.0.mlp.experts.";
        StTensorOut o{name, t.dtype, t.shape, t.data};
        if (name.rfind(prefix, 0) == 0) {  // expert e of layer 0 := expert 0
          const std::string rest = name.substr(name.find('.', prefix.size()) + 1);
          o.data = st.find(e0 + rest)->data;
        }
        out.push_back(o);
      }
      write_safetensors((same + "/model.safetensors").toStdString(), out);
    }
    const QString dense = tmp_.filePath("qwen3moe-dense0");
    QDir().mkpath(dense);
    cfg["mlp_only_layers"] = {0};
    cfg["intermediate_size"] = cfg["moe_intermediate_size"];
    QVERIFY(hftest::writeAll(dense + "/config.json", QByteArray::fromStdString(cfg.dump())));
    {
      std::vector<StTensorOut> out;
      for (const auto& [name, t] : st.tensors()) {
        if (name.rfind("model.layers.0.mlp.", 0) == 0) continue;
        out.push_back({name, t.dtype, t.shape, t.data});
      }
      for (const char* m : {"gate_proj", "up_proj", "down_proj"}) {
        const StTensor* t = st.find(e0 + m + ".weight");
        out.push_back({std::string("model.layers.0.mlp.") + m + ".weight", t->dtype, t->shape, t->data});
      }
      write_safetensors((dense + "/model.safetensors").toStdString(), out);
    }
    const QString tok = arch("qwen3moe-tiny.gguf");
    const ModelBundle a = load(same, tok), b = load(dense, tok);
    QVERIFY(!b.model.config.layer(0).moe && b.model.config.layer(1).moe);
    QCOMPARE(b.model.config.intermediate_size, 32);
    const std::vector<int> ids = {12522, 5193, 264, 882, 11, 279, 3974};
    const std::vector<float> x = logitsOf(a.model, ids), y = logitsOf(b.model, ids);
    const double d = hftest::maxAbsDiff(x.data(), y.data(), x.size());
    qInfo("dense layer 0 vs identical experts: max |dlogit| %.3g", d);
    QVERIFY(d < 1e-5);

    // The folder writer keeps the dense layer (mlp_only_layers); GGUF refuses it.
    const QString again = tmp_.filePath("qwen3moe-dense0-again");
    write_hf_folder(b.model, "", again.toStdString(), "f32");
    QVERIFY(json::parse(hftest::readAll(again + "/config.json").toStdString())["mlp_only_layers"] == json::array({0}));
    QVERIFY(!load(again, tok).model.config.layer(0).moe);
    const GgufVocab vocab = gguf_vocab_of(*g.tokenizer, g.model.config.vocab_size);
    HF_EXPECT_ERROR(write_gguf(b.model, vocab, tmp_.filePath("dense.gguf").toStdString(), "f32"), "layer 0",
                    "dense MLP", "experts", "qwen3moe");
  }

  // What one format holds and the other cannot is refused by name, before anything is written.
  void writerRefusals() {
    REQUIRE_MODEL_FILE(arch("smollm3-tiny.gguf"));
    REQUIRE_MODEL_FILE(arch("gemma3-tiny.gguf"));
    REQUIRE_MODEL_FILE(arch("qwen3moe-tiny.gguf"));
    const ModelBundle smol = load(arch("smollm3-tiny.gguf")), gemma = load(arch("gemma3-tiny.gguf")),
                      moe = load(arch("qwen3moe-tiny.gguf"));
    auto with = [](const ModelBundle& b, const std::function<void(ModelConfig&)>& change) {
      LoadedModel m;
      m.config = b.model.config;
      m.weights = b.model.weights;
      change(m.config);
      return m;
    };
    auto gguf = [&](const ModelBundle& b, const LoadedModel& m, const QStringList& needles) {
      const QString path = tmp_.filePath("refused.gguf");
      const GgufVocab vocab = gguf_vocab_of(*b.tokenizer, b.model.config.vocab_size);
      const QString err = hftest::expectError([&] { write_gguf(m, vocab, path.toStdString(), "f32"); }, needles);
      QVERIFY2(err.isEmpty(), qPrintable(err));
      QVERIFY(!QFile::exists(path));
    };
    // SmolLM3's NoPE layers are a rule in code (every 4th): another arrangement has no key.
    gguf(smol, with(smol, [](ModelConfig& c) { c.layer_specs[0].use_rope = false; }),
         {"layer 0", "no RoPE", "smollm3"});
    // llama.cpp's qwen3moe renormalises the top-k weights always.
    gguf(moe, with(moe, [](ModelConfig& c) { c.moe.norm_topk_prob = false; }), {"norm_topk_prob", "qwen3moe"});
    // Gemma 3: the attention scale follows from the shape; the local RoPE base is 10000.
    gguf(gemma, with(gemma, [](ModelConfig& c) { c.attention_scale = 0.1f; }), {"attention scale", "gemma3"});
    gguf(gemma, with(gemma, [](ModelConfig& c) { c.layer_specs[0].rope_theta = 20000.0; }),
         {"layer 0", "20000", "10000"});
    gguf(gemma, with(gemma, [](ModelConfig& c) { c.layer_specs[0].sliding_window = 4; }),
         {"different sliding windows", "8", "4"});
    // Both writers: a window on a family without one.
    gguf(smol, with(smol, [](ModelConfig& c) { c.layer_specs[1].sliding_window = 16; }), {"layer 1", "window 16"});
    HF_EXPECT_ERROR(write_hf_folder(with(smol, [](ModelConfig& c) { c.layer_specs[1].sliding_window = 16; }), "",
                                    tmp_.filePath("refused-hf").toStdString(), "f32"),
                    "layer 1", "window 16", "config.json");
    HF_EXPECT_ERROR(write_hf_folder(with(gemma, [](ModelConfig& c) { c.embedding_scale = 2.0f; }), "",
                                    tmp_.filePath("refused-hf").toStdString(), "f32"),
                    "embedding scale");
    QVERIFY(!QFileInfo::exists(tmp_.filePath("refused-hf")));
  }
};

QTEST_GUILESS_MAIN(TestHfFamilies)
#include "test_hf_families.moc"
