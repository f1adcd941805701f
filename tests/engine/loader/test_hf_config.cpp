// config.json / tokenizer_config.json / generation_config.json parsing: accepted variants
// (eos lists, head_dim, Mistral) and refusals that name the file and the key.
#include <QTest>

#include <QTemporaryDir>

#include "engine/llm.h"
#include "engine/loader/hf/hf_config.h"
#include "engine/sample/sampling_defaults.h"
#include "test_hf_utils.h"

using namespace pagedchat;
using nlohmann::json;

namespace {
/// stories260K's shape as transformers writes it.
json baseConfig() {
  return {{"architectures", {"LlamaForCausalLM"}},
          {"model_type", "llama"},
          {"hidden_size", 64},
          {"intermediate_size", 172},
          {"num_hidden_layers", 5},
          {"num_attention_heads", 8},
          {"num_key_value_heads", 4},
          {"rms_norm_eps", 1e-5},
          {"max_position_embeddings", 512},
          {"vocab_size", 512},
          {"tie_word_embeddings", true},
          {"bos_token_id", 1},
          {"eos_token_id", 2},
          {"rope_theta", 10000.0},
          {"rope_scaling", nullptr},
          {"hidden_act", "silu"}};
}
HfModelConfig parse(const json& j) { return parse_hf_config(j.dump(), "dir/config.json"); }
}  // namespace

class TestHfConfig : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

 private slots:
  void basics() {
    const HfModelConfig h = parse(baseConfig());
    const ModelConfig& c = h.config;
    QCOMPARE(h.architecture, std::string("LlamaForCausalLM"));
    QCOMPARE(c.hidden_size, 64);
    QCOMPARE(c.intermediate_size, 172);
    QCOMPARE(c.n_layers, 5);
    QCOMPARE(c.n_heads, 8);
    QCOMPARE(c.n_kv_heads, 4);
    QCOMPARE(c.head_dim, 8);
    QCOMPARE(c.vocab_size, 512);
    QCOMPARE(c.max_seq_len, 512);
    QVERIFY(c.max_seq_len_is_soft);
    QCOMPARE(c.rope_style, RopeStyle::kNeox);
    QCOMPARE(c.norm_eps, 1e-5f);
    QCOMPARE(c.rope_theta, 10000.0f);
    QVERIFY(c.shared_classifier);
    QVERIFY(!c.stop_on_bos);
    QCOMPARE(c.bos_id, 1);
    QCOMPARE(c.eos_id, 2);
    QVERIFY(c.extra_eos_ids.empty());
  }

  void defaults() {
    json j = baseConfig();
    for (const char* k : {"num_key_value_heads", "rope_theta", "tie_word_embeddings", "bos_token_id", "eos_token_id",
                          "rope_scaling", "hidden_act", "architectures"})
      j.erase(k);
    const HfModelConfig h = parse(j);  // model_type "llama" stands in for architectures
    QCOMPARE(h.config.n_kv_heads, 8);
    QCOMPARE(h.config.rope_theta, 10000.0f);
    QVERIFY(!h.config.shared_classifier);
    QVERIFY(!h.has_bos_id);
    QVERIFY(!h.has_eos_id);
    j["num_key_value_heads"] = nullptr;  // null counts as absent
    QCOMPARE(parse(j).config.n_kv_heads, 8);
  }

  void eosList() {
    json j = baseConfig();
    j["eos_token_id"] = {2, 9, 11};
    const HfModelConfig h = parse(j);
    QCOMPARE(h.config.eos_id, 2);
    QCOMPARE(h.config.extra_eos_ids, (std::vector<int>{9, 11}));
    j["eos_token_id"] = json::array();
    HF_EXPECT_ERROR(parse(j), "dir/config.json", "eos_token_id");
    j["eos_token_id"] = {2, 600};
    HF_EXPECT_ERROR(parse(j), "eos_token_id", "600");
    j["eos_token_id"] = "2";
    HF_EXPECT_ERROR(parse(j), "eos_token_id");
  }

  void headDim() {
    json j = baseConfig();
    j["head_dim"] = 8;  // consistent
    QCOMPARE(parse(j).config.head_dim, 8);
    j["head_dim"] = nullptr;
    QCOMPARE(parse(j).config.head_dim, 8);
    j["head_dim"] = 7;
    HF_EXPECT_ERROR(parse(j), "dir/config.json", "head_dim", "odd");
    j["head_dim"] = 0;
    HF_EXPECT_ERROR(parse(j), "head_dim");
    j["head_dim"] = 16;  // parses (Mistral-Nemo style) ...
    QCOMPARE(parse(j).config.head_dim, 16);
    // ... but the stories260K tensors do not fit it: the loader names the tensor.
    const QString dir = tmp_.filePath("hd16");
    hftest::writeStories(dir, "f32");
    json cfg = json::parse(hftest::readAll(dir + "/config.json").toStdString());
    cfg["head_dim"] = 16;
    QVERIFY(hftest::writeAll(dir + "/config.json", QByteArray::fromStdString(cfg.dump())));
    EngineConfig ec;
    ec.model = dir.toStdString();
    HF_EXPECT_ERROR(LLM{ec}, "model.layers.0.self_attn.q_proj.weight", "model.safetensors", "[64, 64]", "[128, 64]");
    // Without head_dim, hidden_size must split evenly over the heads.
    j.erase("head_dim");
    j["num_attention_heads"] = 6;
    j["num_key_value_heads"] = 3;
    HF_EXPECT_ERROR(parse(j), "hidden_size", "num_attention_heads");
  }

  void architectures() {
    json j = baseConfig();
    j["architectures"] = {"GPT2LMHeadModel"};
    HF_EXPECT_ERROR(parse(j), "dir/config.json", "GPT2LMHeadModel", "LlamaForCausalLM");
    j["architectures"] = {"MistralForCausalLM"};
    QCOMPARE(parse(j).architecture, std::string("MistralForCausalLM"));
    j["architectures"] = {"Qwen2MoeForCausalLM"};
    HF_EXPECT_ERROR(parse(j), "Qwen2MoeForCausalLM", "Qwen3ForCausalLM");
    // Qwen3.5: Qwen3_5TextConfig's defaults fill what the file leaves out (test_hf_qwen35 runs
    // whole folders); the multimodal class needs its text_config.
    j["architectures"] = {"Qwen3_5ForCausalLM"};
    const ModelConfig q35 = parse(j).config;
    QCOMPARE(q35.architecture, std::string("qwen35"));
    QCOMPARE(q35.head_dim, 256);
    QCOMPARE(q35.rotary_dims(), 64);
    QCOMPARE(q35.linear_attn.num_k_heads, 16);
    QCOMPARE(q35.linear_attn.num_v_heads, 32);
    QVERIFY(q35.linear_attn.v_heads_grouped);
    QCOMPARE(q35.num_recurrent_layers(), q35.n_layers - q35.n_layers / 4);
    j["architectures"] = {"Qwen3_5MoeForConditionalGeneration"};
    HF_EXPECT_ERROR(parse(j), "Qwen3_5MoeForConditionalGeneration", "text_config");
    j["architectures"] = {"Qwen2ForCausalLM"};
    QCOMPARE(parse(j).config.architecture, std::string("qwen2"));
    QVERIFY(parse(j).config.attention_qkv_bias);  // Qwen2Attention: q/k/v biases always
    QVERIFY(!parse(j).config.attention_out_bias);
    j["architectures"] = {"Qwen3ForCausalLM"};
    QCOMPARE(parse(j).config.architecture, std::string("qwen3"));
    QVERIFY(parse(j).config.qk_norm);
    QVERIFY(!parse(j).config.attention_qkv_bias);
    QCOMPARE(parse(j).config.head_dim, 128);  // Qwen3Config's default when config.json has none
    j.erase("architectures");
    j["model_type"] = "qwen2";
    QCOMPARE(parse(j).architecture, std::string("Qwen2ForCausalLM"));
    j["model_type"] = "gemma";
    HF_EXPECT_ERROR(parse(j), "gemma");
    j["architectures"] = "LlamaForCausalLM";
    HF_EXPECT_ERROR(parse(j), "architectures");
  }

  void ropeScaling() {
    json j = baseConfig();
    j["rope_scaling"] = {{"type", "yarn"}, {"factor", 4.0}};
    HF_EXPECT_ERROR(parse(j), "dir/config.json", "rope_scaling", "yarn");
    for (const char* t : {"dynamic", "longrope", "su", "mrope"}) {
      j["rope_scaling"] = {{"rope_type", t}, {"factor", 4.0}};
      HF_EXPECT_ERROR(parse(j), "rope_scaling", t);
    }
    j["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}};  // the other three are required
    HF_EXPECT_ERROR(parse(j), "llama3", "low_freq_factor");
    j["rope_scaling"] = {{"rope_type", "llama3"},
                         {"factor", 8.0},
                         {"low_freq_factor", 1.0},
                         {"high_freq_factor", 4.0},
                         {"original_max_position_embeddings", 8192}};
    {
      const RopeScaling rs = parse(j).config.rope_scaling;
      QCOMPARE(rs.type, RopeScalingType::kLlama3);
      QCOMPARE(rs.factor, 8.0);
      QCOMPARE(rs.low_freq_factor, 1.0);
      QCOMPARE(rs.high_freq_factor, 4.0);
      QCOMPARE(rs.original_max_position_embeddings, 8192);
    }
    j["rope_scaling"]["high_freq_factor"] = 0.5;
    HF_EXPECT_ERROR(parse(j), "high_freq_factor");
    j["rope_scaling"]["high_freq_factor"] = 4.0;
    j["rope_scaling"]["original_max_position_embeddings"] = 8192.5;
    HF_EXPECT_ERROR(parse(j), "original_max_position_embeddings");
    j["rope_scaling"] = {{"type", "linear"}, {"factor", 2.0}};
    QCOMPARE(parse(j).config.rope_scaling.type, RopeScalingType::kLinear);
    QCOMPARE(parse(j).config.rope_scaling.factor, 2.0);
    j["rope_scaling"] = {{"type", "linear"}, {"factor", -2.0}};
    HF_EXPECT_ERROR(parse(j), "factor");
    j["rope_scaling"] = {{"rope_type", "default"}};  // transformers' name for "no scaling"
    QCOMPARE(parse(j).config.max_seq_len, 512);
    j["rope_scaling"] = json::object();
    HF_EXPECT_ERROR(parse(j), "rope_scaling");
  }

  // Qwen2/Qwen3: a layer uses the window when use_sliding_window and its index reaches
  // max_window_layers; Qwen2.5's "use_sliding_window": false with a window set is full attention.
  void qwenSlidingWindow() {
    json j = baseConfig();
    j["architectures"] = {"Qwen2ForCausalLM"};
    j["sliding_window"] = 4096;
    j["max_window_layers"] = 2;
    j["use_sliding_window"] = false;
    QCOMPARE(parse(j).config.architecture, std::string("qwen2"));
    j["use_sliding_window"] = true;
    HF_EXPECT_ERROR(parse(j), "dir/config.json", "use_sliding_window", "max_window_layers", "4096");
    j["max_window_layers"] = j["num_hidden_layers"];  // no layer reaches it
    QCOMPARE(parse(j).config.architecture, std::string("qwen2"));
    j["layer_types"] = {"full_attention", "sliding_attention"};
    HF_EXPECT_ERROR(parse(j), "layer_types", "sliding_attention");
  }

  void otherRefusals() {
    json j = baseConfig();
    j["quantization_config"] = {{"quant_method", "awq"}, {"bits", 4}};
    HF_EXPECT_ERROR(parse(j), "dir/config.json", "quantization_config", "awq");
    j.erase("quantization_config");
    j["partial_rotary_factor"] = 0.5;
    HF_EXPECT_ERROR(parse(j), "partial_rotary_factor");
    j.erase("partial_rotary_factor");
    j["num_local_experts"] = 8;
    HF_EXPECT_ERROR(parse(j), "num_local_experts", "mixture-of-experts");
    j.erase("num_local_experts");
    j["attention_bias"] = true;  // Llama: q/k/v and o_proj biases
    QVERIFY(parse(j).config.attention_qkv_bias && parse(j).config.attention_out_bias);
    j["architectures"] = {"MistralForCausalLM"};  // MistralAttention has no biases
    QVERIFY(!parse(j).config.attention_qkv_bias && !parse(j).config.attention_out_bias);
  }

  void slidingWindow() {
    json j = baseConfig();
    j["architectures"] = {"MistralForCausalLM"};
    j["max_position_embeddings"] = 32768;
    j["sliding_window"] = 4096;
    HF_EXPECT_ERROR(parse(j), "dir/config.json", "sliding_window", "4096", "32768");
    j["sliding_window"] = 32768;
    QCOMPARE(parse(j).config.max_seq_len, 32768);
    j["sliding_window"] = nullptr;
    QCOMPARE(parse(j).config.max_seq_len, 32768);
  }

  void missingKeys() {
    json j = baseConfig();
    j.erase("hidden_size");
    j.erase("vocab_size");
    j.erase("rms_norm_eps");
    HF_EXPECT_ERROR(parse(j), "dir/config.json", "missing", "hidden_size", "vocab_size", "rms_norm_eps");
    QVERIFY(!hftest::expectError([&] { parse(j); }, {"intermediate_size"}).isEmpty());  // present: not named
  }

  void badValues_data() {
    QTest::addColumn<QString>("key");
    QTest::addColumn<QString>("value");
    QTest::newRow("hidden string") << "hidden_size"
                                   << R"("64")";
    QTest::newRow("hidden float") << "hidden_size"
                                  << "64.5";
    QTest::newRow("hidden negative") << "hidden_size"
                                     << "-64";
    QTest::newRow("hidden huge") << "hidden_size"
                                 << "100000000000000000000";
    QTest::newRow("layers 0") << "num_hidden_layers"
                              << "0";
    QTest::newRow("kv > heads") << "num_key_value_heads"
                                << "16";
    QTest::newRow("kv not dividing") << "num_key_value_heads"
                                     << "3";
    QTest::newRow("vocab huge") << "vocab_size"
                                << "2000000000";
    QTest::newRow("eps 0") << "rms_norm_eps"
                           << "0";
    QTest::newRow("eps string") << "rms_norm_eps"
                                << R"("1e-5")";
    QTest::newRow("theta negative") << "rope_theta"
                                    << "-1";
    QTest::newRow("tie string") << "tie_word_embeddings"
                                << R"("yes")";
    QTest::newRow("bos out of vocab") << "bos_token_id"
                                      << "512";
    QTest::newRow("gelu") << "hidden_act"
                          << R"("gelu")";
    QTest::newRow("attention bias string") << "attention_bias"
                                           << R"("yes")";
    QTest::newRow("mlp bias") << "mlp_bias"
                              << "true";
  }
  void badValues() {
    QFETCH(QString, key);
    QFETCH(QString, value);
    json j = baseConfig();
    j[key.toStdString()] = json::parse(value.toStdString());
    HF_EXPECT_ERROR(parse(j), "dir/config.json", key);
  }

  void notJson() {
    HF_EXPECT_ERROR(parse_hf_config("{\"hidden_size\": ", "x/config.json"), "x/config.json", "JSON");
    HF_EXPECT_ERROR(parse_hf_config("[1, 2]", "x/config.json"), "x/config.json", "object");
    HF_EXPECT_ERROR(parse_hf_config("", "x/config.json"), "x/config.json");
    // Nested 100 000 deep (a 200 kB file): refused before anything walks it recursively (a copy of
    // it overflowed the stack); 128 levels are allowed.
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    HF_EXPECT_ERROR(parse_hf_config(R"({"hidden_size": )" + deep + "}", "x/config.json"), "x/config.json",
                    "deeper than 128");
    HF_EXPECT_ERROR(parse_hf_config(R"({"x": )" + std::string(126, '[') + std::string(126, ']') + "}", "x/config.json"),
                    "x/config.json", "architectures");  // parsed; then the usual checks
  }

  void tokenizerConfig() {
    HfTokenizerConfig t = parse_tokenizer_config(
        R"({"add_bos_token": false, "add_eos_token": true, "bos_token": "<s>",
            "eos_token": {"__type": "AddedToken", "content": "</s>"}, "unk_token": null,
            "chat_template": "{% for m in messages %}{{ m['content'] }}{% endfor %}"})",
        "t.json");
    QCOMPARE(t.add_bos_token, std::optional<bool>(false));
    QCOMPARE(t.add_eos_token, std::optional<bool>(true));
    QCOMPARE(t.bos_token, std::string("<s>"));
    QCOMPARE(t.eos_token, std::string("</s>"));
    QCOMPARE(t.unk_token, std::string());
    QVERIFY(t.chat_template.rfind("{% for", 0) == 0);
    t = parse_tokenizer_config(
        R"({"chat_template": [{"name": "rag", "template": "R"}, {"name": "default", "template": "D"}]})", "t.json");
    QCOMPARE(t.chat_template, std::string("D"));
    QVERIFY(!parse_tokenizer_config("{}", "t.json").add_bos_token.has_value());
    HF_EXPECT_ERROR(parse_tokenizer_config(R"({"chat_template": 5})", "t.json"), "t.json", "chat_template");
    HF_EXPECT_ERROR(parse_tokenizer_config(R"({"chat_template": [{"name": "x"}]})", "t.json"), "chat_template");
    HF_EXPECT_ERROR(parse_tokenizer_config(R"({"eos_token": 2})", "t.json"), "eos_token");
    HF_EXPECT_ERROR(parse_tokenizer_config(R"({"add_bos_token": "yes"})", "t.json"), "add_bos_token");
  }

  void generationConfig() {
    const HfGenerationConfig g = parse_generation_config(
        R"({"do_sample": true, "temperature": 0.7, "top_p": 0.95, "top_k": 50, "repetition_penalty": 1.2,
            "max_new_tokens": 256, "eos_token_id": [128001, 128009], "bos_token_id": 128000,
            "transformers_version": "4.45.0"})",
        "g.json");
    QCOMPARE(*g.defaults.temperature, 0.7f);
    QCOMPARE(*g.defaults.top_p, 0.95f);
    QCOMPARE(*g.defaults.top_k, 50);
    QCOMPARE(*g.defaults.repetition_penalty, 1.2f);
    QCOMPARE(*g.defaults.max_new_tokens, 256);
    QCOMPARE(g.eos_ids, (std::vector<int>{128001, 128009}));
    QCOMPARE(*g.bos_id, 128000);
    const HfGenerationConfig empty = parse_generation_config(R"({"temperature": null, "_from_model_config": true})",
                                                             "g.json");
    QVERIFY(empty.defaults.empty());
    QVERIFY(empty.eos_ids.empty());
    HF_EXPECT_ERROR(parse_generation_config(R"({"temperature": -1})", "g.json"), "g.json", "temperature");
    HF_EXPECT_ERROR(parse_generation_config(R"({"top_p": 0})", "g.json"), "top_p");
    HF_EXPECT_ERROR(parse_generation_config(R"({"top_p": 1.5})", "g.json"), "top_p");
    HF_EXPECT_ERROR(parse_generation_config(R"({"top_k": -5})", "g.json"), "top_k");
    HF_EXPECT_ERROR(parse_generation_config(R"({"repetition_penalty": 0})", "g.json"), "repetition_penalty");
    HF_EXPECT_ERROR(parse_generation_config(R"({"max_new_tokens": 0})", "g.json"), "max_new_tokens");
    HF_EXPECT_ERROR(parse_generation_config(R"({"temperature": "hot"})", "g.json"), "temperature");
    HF_EXPECT_ERROR(parse_generation_config("nope", "g.json"), "g.json", "JSON");
    HF_EXPECT_ERROR(parse_generation_config(R"({"min_p": 2})", "g.json"), "min_p");
    HF_EXPECT_ERROR(parse_generation_config(R"({"do_sample": "no"})", "g.json"), "do_sample");
  }

  // How the model's defaults become a request's params (vLLM's get_default_sampling_params, with
  // transformers' do_sample false = greedy): what the model sets replaces the engine's default,
  // what the caller set stays.
  void samplingDefaultsApply() {
    const HfGenerationConfig qwen3 = parse_generation_config(
        R"({"do_sample": true, "temperature": 0.6, "top_k": 20, "top_p": 0.95, "min_p": 0.0,
            "eos_token_id": [151645, 151643]})",
        "g.json");
    SamplingParams p;
    apply_sampling_defaults(qwen3.defaults, p);
    QCOMPARE(p.temperature, 0.6f);
    QCOMPARE(p.top_k, 20);
    QCOMPARE(p.top_p, 0.95f);
    QCOMPARE(p.min_p, 0.0f);
    QCOMPARE(p.repetition_penalty, 1.0f);  // not in the file: the engine's default
    QCOMPARE(p.max_tokens, SamplingParams{}.max_tokens);

    SamplingParams mine;
    mine.temperature = 1.3f;
    mine.top_k = 5;
    SamplingFieldsSet set;
    set.temperature = set.top_k = true;
    apply_sampling_defaults(qwen3.defaults, mine, set);
    QCOMPARE(mine.temperature, 1.3f);
    QCOMPARE(mine.top_k, 5);
    QCOMPARE(mine.top_p, 0.95f);

    // do_sample false: greedy, whatever temperature sits beside it, unless the caller chose one.
    const HfGenerationConfig greedy = parse_generation_config(
        R"({"do_sample": false, "temperature": 0.9, "max_new_tokens": 40})", "g.json");
    QCOMPARE(*greedy.defaults.do_sample, false);
    SamplingParams g;
    apply_sampling_defaults(greedy.defaults, g);
    QCOMPARE(g.temperature, 0.0f);
    QCOMPARE(g.max_tokens, 40);
    SamplingParams hot;
    hot.temperature = 0.7f;
    SamplingFieldsSet t;
    t.temperature = true;
    apply_sampling_defaults(greedy.defaults, hot, t);
    QCOMPARE(hot.temperature, 0.7f);

    SamplingParams none;
    apply_sampling_defaults(parse_generation_config("{}", "g.json").defaults, none);
    QCOMPARE(none.temperature, SamplingParams{}.temperature);
  }

  // A broken side file stops the load with its name.
  void brokenSideFiles() {
    REQUIRE_MODEL_FILE(hftest::storiesBin());
    const QString dir = tmp_.filePath("side");
    hftest::writeStories(dir, "f32");
    EngineConfig ec;
    ec.model = dir.toStdString();
    QVERIFY(hftest::writeAll(dir + "/generation_config.json", "{"));
    HF_EXPECT_ERROR(LLM{ec}, "generation_config.json");
    QFile::remove(dir + "/generation_config.json");
    QVERIFY(hftest::writeAll(dir + "/tokenizer_config.json", R"({"chat_template": 1})"));
    HF_EXPECT_ERROR(LLM{ec}, "tokenizer_config.json", "chat_template");
    QFile::remove(dir + "/tokenizer_config.json");
    LLM ok{ec};  // both are optional
    QVERIFY(hftest::writeAll(dir + "/config.json", R"({"architectures": ["LlamaForCausalLM"]})"));
    HF_EXPECT_ERROR(LLM{ec}, dir + "/config.json", "hidden_size");
  }
};

QTEST_GUILESS_MAIN(TestHfConfig)
#include "test_hf_config.moc"
