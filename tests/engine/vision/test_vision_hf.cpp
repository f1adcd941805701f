// Images from Hugging Face folders (engine/vision/hf_vision.h): a Gemma3ForConditionalGeneration,
// Gemma4ForConditionalGeneration, Qwen3VLForConditionalGeneration or Qwen3_5ForConditionalGeneration
// folder reads pictures with the vision tower it holds, no mmproj beside it. The folders here are
// the tiny projectors of tests/data/vision (gemma3, gemma4, qwen3vl, qwen35) laid out as transformers saves them
// (hf_towers.h, written independently of the loader's table), so the outside goldens of those projectors hold for the
// folders: the encoders' embeddings (ik_llama.cpp's clip for Gemma 3, float64 numpy forwards of transformers for Gemma
// 4 and Qwen3-VL), and the greedy ids of ik_llama.cpp for Gemma 3, Qwen3-VL and Qwen3.5 prompts through the whole
// engine loaded from one folder (Qwen3-VL's text model from its text_config: M-RoPE sections, deepstack layers;
// Qwen3.5's hybrid one). Misshaped, missing and unknown tensors and unsupported configs are refused by name; an engine
// whose folder's tower cannot be read still loads the text model, with a warning.
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "engine/llm_engine.h"
#include "engine/loader/gguf/dequant.h"
#include "engine/loader/gguf/gguf_reader.h"
#include "engine/loader/hf/hf_writer.h"
#include "engine/loader/hf/safetensors.h"
#include "engine/loader/model_loader.h"
#include "engine/multimodal/image_decode.h"
#include "engine/multimodal/mm_prompt.h"
#include "engine/vision/hf_vision.h"
#include "engine/vision/vision_encoder.h"
#include "engine_test_utils.h"
#include "hf_towers.h"
#include "qwen35_hf_folder.h"
#include "vision_test_util.h"

using namespace pagedchat;
using namespace visiontest;
using namespace hftowers;
using nlohmann::json;

namespace {

void writeJson(const QString& path, const json& j) {
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly) || f.write(QByteArray::fromStdString(j.dump(2))) < 0)
    throw std::runtime_error("cannot write " + path.toStdString());
}

/// `dir` with config.json = `config` and model.safetensors = `tensors` (and `more`, borrowed).
void writeFolder(const QString& dir, const json& config, const std::vector<HfTensor>& tensors,
                 const std::vector<StTensorOut>& more = {}) {
  QDir().mkpath(dir);
  writeJson(dir + "/config.json", config);
  std::vector<StTensorOut> out = more;
  for (const HfTensor& t : tensors) out.push_back({t.name, t.dtype, t.shape, t.bytes.data()});
  write_safetensors((dir + "/model.safetensors").toStdString(), out);
}

/// A ...ForConditionalGeneration folder `dir` from a text-only folder `text` (written by
/// write_hf_folder): config.json = `config` with `text` config.json as its text_config (less
/// `drop` keys, which go to the top), the text tensors under model.language_model., the tower.
void writeConditionalFolder(const QString& text, const QString& dir, json config, const std::vector<HfTensor>& tower,
                            const std::vector<std::string>& drop = {"architectures", "eos_token_id"}) {
  QFile cf(text + "/config.json");
  if (!cf.open(QIODevice::ReadOnly)) throw std::runtime_error("no config.json in " + text.toStdString());
  json causal = json::parse(cf.readAll().toStdString());
  for (const std::string& k : drop) {
    if (k != "architectures" && causal.contains(k)) config[k] = causal[k];
    causal.erase(k);
  }
  for (auto it = config["text_config"].begin(); it != config["text_config"].end(); ++it) causal[it.key()] = it.value();
  config["text_config"] = causal;
  const SafetensorsSet st = SafetensorsSet::open_folder(text.toStdString());
  std::vector<StTensorOut> lm;
  for (const auto& [name, t] : st.tensors())
    lm.push_back(
        {name.starts_with("model.") ? "model.language_model." + name.substr(6) : name, t.dtype, t.shape, t.data});
  writeFolder(dir, config, tower, lm);
}

/// `gguf` (a text model) written as a Hugging Face folder `dir` in float32 (write_hf_folder).
void writeTextFolder(const QString& gguf, const QString& dir) {
  EngineConfig c;
  c.model = gguf.toStdString();
  write_hf_folder(load_model(c).model, "", dir.toStdString(), "f32");
}

/// The encoder's output for every golden image with preprocessed pixels of the Gemma 3 golden.
std::vector<std::vector<float>> gemma3Embeddings(VisionEncoder& enc, const Golden& g) {
  std::vector<std::vector<float>> out;
  for (const auto& im : g.j["images"])
    if (im.contains("hf_embd")) out.push_back(enc.encode_preprocessed(g.block(im["hf_preproc"]["floats"])).data);
  return out;
}

/// Runs `body`, which must throw an exception whose message holds every one of `parts`.
void expectError(const std::function<void()>& body, const std::vector<std::string>& parts) {
  try {
    body();
  } catch (const std::exception& e) {
    const std::string what = e.what();
    for (const std::string& p : parts)
      QVERIFY2(what.find(p) != std::string::npos, ("'" + p + "' not in: " + what).c_str());
    return;
  }
  QFAIL("no error");
}

}  // namespace

class TestVisionHf : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

 private slots:
  void initTestCase() { QVERIFY(tmp_.isValid()); }

  // Gemma 3's tower from a folder computes what the clip file computes, bit for bit (both
  // naming generations), and so stays within ik_llama.cpp's clip golden; BF16 matrices (as
  // released) stay near it.
  void gemma3Encoder() {
    const Golden g = loadGolden(kVision + "/golden");
    auto gguf = VisionEncoder::open(gemma3Projector(), 2);
    const auto want = gemma3Embeddings(*gguf, g);
    QVERIFY(!want.empty());
    for (const char* prefix : {"model.", ""}) {
      const QString dir = tmp_.filePath(QString("g3-") + prefix);
      writeFolder(dir, gemma3Config(), gemma3Tower(prefix));
      QVERIFY(hf_folder_has_vision(dir.toStdString()));
      auto enc = VisionEncoder::open(dir.toStdString(), 2);
      QCOMPARE(enc->config().projector_type, std::string("gemma3"));
      QCOMPARE(enc->config().tokens_per_image(), 16);
      QCOMPARE(enc->config().text_hidden_size, 64);
      QVERIFY(enc->config().activation == VisionConfig::Activation::kGeluTanh);
      const auto got = gemma3Embeddings(*enc, g);
      QVERIFY2(got == want, prefix);
      std::size_t k = 0;
      for (const auto& im : g.j["images"])
        if (im.contains("hf_embd")) QVERIFY(maxAbsDiff(got[k++], g.block(im["hf_embd"]["floats"])) <= 3e-3);
    }
    std::vector<HfTensor> bf = gemma3Tower("model.");
    toBf16(bf);
    const QString dir = tmp_.filePath("g3-bf16");
    writeFolder(dir, gemma3Config(), bf);
    auto enc = VisionEncoder::open(dir.toStdString(), 2);
    const auto got = gemma3Embeddings(*enc, g);
    double worst = 0, scale = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      worst = std::max(worst, maxAbsDiff(got[i], want[i]));
      for (float v : want[i]) scale = std::max(scale, double(std::fabs(v)));
    }
    qInfo("BF16 tower: embeddings within %.2e of the F16 one (max |value| %.2f)", worst, scale);
    QVERIFY(worst > 0 && worst <= 2e-2 * scale);  // BF16 keeps 8 bits of mantissa
  }

  // Gemma 4's tower (patch projection reordered, clamp scalars, std bias / scale) from a folder:
  // the clip file's embeddings bit for bit, and so transformers' float64 golden.
  void gemma4Encoder() {
    const Golden g = loadGolden(kVision + "/gemma4/golden_hf");
    const QString dir = tmp_.filePath("g4");
    writeFolder(dir, gemma4Config(), gemma4Tower());
    int checked = 0;
    for (int budget : {70, 280}) {
      VisionOptions o;
      o.max_tokens = budget;
      auto hf = VisionEncoder::open(dir.toStdString(), 2, o), gguf = VisionEncoder::open(gemma4Projector(), 2, o);
      QCOMPARE(hf->config().projector_type, std::string("gemma4v"));
      QCOMPARE(hf->config().merge, 3);
      QCOMPARE(hf->config().output_width(), 64);
      for (const auto& im : g.j["images"]) {
        if (int(im["max_soft_tokens"]) != budget) continue;
        const RgbImage img = hf->fit(decode_image_file(kVision + "/gemma4/" + im["image"].get<std::string>()));
        const ImageEmbeddings a = hf->encode(img), b = gguf->encode(img);
        QVERIFY(a.data == b.data);
        const double d = maxAbsDiff(a.data, g.block(im["hf_embd"]["floats"]));
        QVERIFY2(d <= 2e-4, (im["image"].get<std::string>() + ": " + std::to_string(d)).c_str());
        ++checked;
      }
    }
    QCOMPARE(checked, 8);
    // The config says which of the tensors transformers reads: without use_clipped_linears no
    // clamp, without standardize no std bias / scale; standardize with them missing is refused.
    json plain = gemma4Config();
    plain["vision_config"]["use_clipped_linears"] = false;
    plain["vision_config"]["standardize"] = false;
    const QString pdir = tmp_.filePath("g4-plain");
    writeFolder(pdir, plain, gemma4Tower());
    const std::vector<uint8_t> bytes = hf_vision_projector(pdir.toStdString());
    const GgufFile f = GgufFile::parse(bytes.data(), bytes.size(), "converted");
    QVERIFY(!f.find_tensor("v.std_bias") && !f.find_tensor("v.blk.0.attn_q.input_min"));
    QVERIFY(f.find_tensor("v.blk.1.ffn_down.weight"));
    std::vector<HfTensor> no_std = gemma4Tower();
    no_std.erase(
        std::remove_if(no_std.begin(), no_std.end(), [](const HfTensor& t) { return t.name.ends_with("std_scale"); }),
        no_std.end());
    const QString sdir = tmp_.filePath("g4-no-std");
    writeFolder(sdir, gemma4Config(), no_std);
    expectError([&] { hf_vision_projector(sdir.toStdString()); }, {"model.vision_tower.std_scale", "missing"});
  }

  // A whole Gemma3ForConditionalGeneration folder (the text model under model.language_model.,
  // written from gemma3-tiny.gguf; the tower beside it): the engine reads images with no
  // --mmproj, and the golden prompts give ik_llama.cpp's mtmd ids up to the first near-tie.
  void gemma3EngineFromFolder() {
    const QString gguf = testpaths::modelFile("arch/gemma3-tiny.gguf");
    REQUIRE_MODEL_FILE(gguf);
    const QString text = tmp_.filePath("g3-text"), dir = tmp_.filePath("g3-full");
    writeTextFolder(gguf, text);
    writeConditionalFolder(text, dir, gemma3Config(), gemma3Tower("model."));

    EngineConfig c;
    c.model = dir.toStdString();
    c.tokenizer = gguf.toStdString();
    c.num_threads = 2;
    c.max_model_len = 512;
    c.kv_cache_dtype = KvCacheDType::kFloat16;  // as the reference's cache
    LLMEngine engine(c);
    QVERIFY(engine.vision_encoder() != nullptr);
    QCOMPARE(engine.vision_encoder()->config().projector_type, std::string("gemma3"));
    const Golden g = loadGolden(kVision + "/golden");
    int n = 0;
    for (const auto& p : g.j["prompts"]) {
      std::string prompt_text = p["prompt"];
      const std::string marker = g.j["mtmd_default_marker"];
      for (std::size_t at; (at = prompt_text.find(marker)) != std::string::npos;)
        prompt_text.replace(at, marker.size(), kImageMarker);
      TemplatedText t;
      t.append(prompt_text, false);
      std::vector<std::shared_ptr<const RgbImage>> images;
      for (const auto& name : p["images"]) {
        // The 8-bit picture ik encoded: its preprocessed floats are (u8 / 255 - 0.5) / 0.5.
        const json& im = g.image(name);
        auto img = std::make_shared<RgbImage>();
        img->width = im["ik_preproc"]["nx"];
        img->height = im["ik_preproc"]["ny"];
        for (float v : g.block(im["ik_preproc"]["floats"]))
          img->pixels.push_back(uint8_t(std::lround((v * 0.5f + 0.5f) * 255.0f)));
        images.push_back(img);
      }
      const ImagePrompt prompt = encode_image_prompt(engine.tokenizer(), *engine.vision_encoder(), t, images,
                                                     engine.tokenizer().bos_id(),
                                                     image_placeholder_id(engine.tokenizer()));
      const NearTieCheck r = compareToNearTie(greedyIds(engine, "p" + std::to_string(n++), prompt, 16), p["steps"]);
      QVERIFY2(r.mismatch < 0, r.why().c_str());
      qInfo("%s: %d greedy steps checked", std::string(p["name"]).c_str(), r.checked);
      QVERIFY(r.checked >= 6);
    }
    QVERIFY(n >= 2);
  }

  // Qwen3-VL's tower (Conv3d frames split into the clip kernels, deepstack mergers by block) from
  // a folder: the clip file's embeddings bit for bit, and transformers' numpy golden.
  void qwen3vlEncoder() {
    const std::string dir = kVision + "/qwen3vl";
    const Golden g = loadGolden(dir + "/golden_hf");
    const QString folder = tmp_.filePath("q3vl");
    writeFolder(folder, qwen3vlConfig(), qwen3vlTower());
    VisionOptions o;
    o.min_tokens = 8;  // the golden's limits
    o.max_tokens = 64;
    auto hf = VisionEncoder::open(folder.toStdString(), 2, o),
         gguf = VisionEncoder::open(dir + "/qwen3vl-tiny-mmproj.gguf", 2, o);
    QCOMPARE(hf->config().projector_type, std::string("qwen3vl_merger"));
    QCOMPARE(hf->config().deepstack, 2);
    QCOMPARE(hf->config().output_width(), 192);
    int checked = 0;
    for (const auto& im : g.j["images"]) {
      const RgbImage img = decode_image_file(dir + "/" + im["image"].get<std::string>());
      const ImageEmbeddings a = hf->encode(img), b = gguf->encode(img);
      QVERIFY(a.data == b.data);
      const double d = maxAbsDiff(a.data, g.block(im["hf_embd"]["floats"]));
      QVERIFY2(d <= 2e-4, (im["image"].get<std::string>() + ": " + std::to_string(d)).c_str());
      ++checked;
    }
    QVERIFY(checked >= 5);
    // Absent, deepstack_visual_indexes is transformers' [8, 16, 24]: blocks this 3-block tower lacks.
    json absent = qwen3vlConfig();
    absent["vision_config"].erase("deepstack_visual_indexes");
    const QString adir = tmp_.filePath("q3vl-deep-absent");
    writeFolder(adir, absent, qwen3vlTower());
    expectError([&] { hf_vision_projector(adir.toStdString()); }, {"deepstack_visual_indexes [8,16,24]", "0..2"});
    // deepstack_visual_indexes names vision blocks: entry K's merger follows block indexes[K].
    json other = qwen3vlConfig();
    other["vision_config"]["deepstack_visual_indexes"] = {0, 2};
    const QString moved = tmp_.filePath("q3vl-deep");
    writeFolder(moved, other, qwen3vlTower());
    const std::vector<uint8_t> bytes = hf_vision_projector(moved.toStdString());
    const GgufFile f = GgufFile::parse(bytes.data(), bytes.size(), "converted");
    QVERIFY(f.find_tensor("v.deepstack.2.fc1.weight") && !f.find_tensor("v.deepstack.1.fc1.weight"));
    QVERIFY(f.find_tensor("v.patch_embd.weight.1"));
  }

  // A whole Qwen3VLForConditionalGeneration folder (text from qwen3-tiny.gguf under
  // model.language_model. with rope_scaling's mrope_section, the tower beside it): its text model
  // is qwen3vl with M-RoPE and both deepstack features, and the golden prompts give the ids of
  // ik_llama.cpp's qwen3vl forward fed transformers' embeddings and positions up to the first
  // near-tie.
  void qwen3vlEngineFromFolder() {
    const QString gguf = testpaths::modelFile("arch/qwen3-tiny.gguf");
    REQUIRE_MODEL_FILE(gguf);
    const QString text = tmp_.filePath("q3-text"), dir = tmp_.filePath("q3vl-full");
    writeTextFolder(gguf, text);
    json config = qwen3vlConfig();
    config["text_config"]["rope_scaling"] = {
        {"rope_type", "default"}, {"mrope_section", {6, 5, 5}}, {"mrope_interleaved", true}};
    writeConditionalFolder(text, dir, config, qwen3vlTower());
    EngineConfig c;
    c.model = dir.toStdString();
    c.tokenizer = gguf.toStdString();
    c.image_min_tokens = 8;  // the golden's limits: an image option without --mmproj
    c.image_max_tokens = 64;
    c.num_threads = 2;
    c.max_model_len = 512;
    c.kv_cache_dtype = KvCacheDType::kFloat16;  // as the reference's cache
    LLMEngine engine(c);
    QVERIFY(engine.vision_encoder() != nullptr);
    QCOMPARE(engine.model_config().architecture, std::string("qwen3vl"));
    QCOMPARE(engine.model_config().deepstack_layers, 2);
    QCOMPARE(engine.model_config().mrope_sections[1], 5);
    const Golden g = loadGolden(kVision + "/qwen3vl/golden_hf_llm");
    int n = 0;
    for (const auto& p : g.j["prompts"]) {
      const ImagePrompt prompt = qwenImagePrompt(engine, p, kVision + "/qwen3vl");
      std::string why;
      QVERIFY2(sameQwenLayout(prompt, p, &why), why.c_str());
      const NearTieCheck r = compareToNearTie(greedyIds(engine, "q" + std::to_string(n++), prompt, 16), p["steps"]);
      QVERIFY2(r.mismatch < 0, r.why().c_str());
      qInfo("%s: %d greedy steps checked", std::string(p["name"]).c_str(), r.checked);
      QVERIFY(r.checked >= 6);
    }
    QVERIFY(n >= 2);
    // The mrope_section is what the positions follow: another split is refused or computes otherwise.
    config["text_config"]["rope_scaling"]["mrope_section"] = {20, 5, 5};
    const QString bad = tmp_.filePath("q3vl-bad-mrope");
    writeConditionalFolder(text, bad, config, qwen3vlTower());
    c.model = bad.toStdString();
    expectError([&] { LLMEngine e(c); }, {"mrope_section", "30 pairs"});
    // A bad image option is the user's: refused as with an mmproj file, not taken for a broken tower.
    c.model = dir.toStdString();
    c.image_min_tokens = 0;
    c.image_max_tokens = 4;  // below the default minimum of 64
    expectError([&] { LLMEngine e(c); }, {"--image-min-tokens", "--image-max-tokens"});
  }

  // A whole Qwen3_5ForConditionalGeneration folder (the text model: qwen35-tiny as transformers
  // lays it out, qwen35_hf_folder.h; the tower: tests/data/vision/qwen35's under Qwen3_5VisionModel's
  // names, no deepstack): the encoder equals the mmproj file's bit for bit, and the golden prompts
  // give ik_llama.cpp's qwen35 ids (test_vision_qwen35's goldens) to the first near-tie.
  void qwen35EngineFromFolder() {
    const QString gguf = testpaths::modelFile("arch/qwen35-tiny.gguf");
    REQUIRE_MODEL_FILE(gguf);
    const std::string data = kVision + "/qwen35";
    qwen35hf::Layout layout;
    layout.conditional = true;
    layout.visual_placeholder = false;
    const qwen35hf::FolderWriter w(gguf.toStdString(), layout);
    json config = w.config();
    config["vision_config"] = qwen35VisionConfig();
    const std::vector<HfTensor> tower = qwen3vlTower(data + "/qwen35-tiny-mmproj.gguf");
    std::vector<StTensorOut> more;
    for (const HfTensor& t : tower) more.push_back({t.name, t.dtype, t.shape, t.bytes.data()});
    const QString dir = tmp_.filePath("q35-full");
    w.write(dir, config, w.tensors(), more);

    VisionOptions o;
    o.min_tokens = 8;  // the goldens' limits
    o.max_tokens = 64;
    auto hf = VisionEncoder::open(dir.toStdString(), 2, o),
         mm = VisionEncoder::open(data + "/qwen35-tiny-mmproj.gguf", 2, o);
    QCOMPARE(hf->config().deepstack, 0);
    const Golden eg = loadGolden(data + "/golden_hf");
    for (const auto& im : eg.j["images"]) {
      const RgbImage img = decode_image_file(kVision + "/qwen3vl/" + im["image"].get<std::string>());
      QVERIFY(hf->encode(img).data == mm->encode(img).data);
    }

    EngineConfig c;
    c.model = dir.toStdString();
    c.tokenizer = gguf.toStdString();
    c.image_min_tokens = 8;
    c.image_max_tokens = 64;
    c.num_threads = 2;
    c.max_model_len = 256;
    c.kv_cache_dtype = KvCacheDType::kFloat32;  // the reference's K cache
    LLMEngine engine(c);
    QVERIFY(engine.vision_encoder() != nullptr);
    QCOMPARE(engine.model_config().architecture, std::string("qwen35"));
    const Golden g = loadGolden(data + "/golden_hf_llm");
    int n = 0;
    for (const auto& p : g.j["prompts"]) {
      const GoldenPromptRun r = runGoldenPrompt(engine, qwenImagePrompt(engine, p, kVision + "/qwen3vl"), p,
                                                "q35-" + std::to_string(n++));
      QVERIFY2(r.layout_error.empty(), r.layout_error.c_str());
      qInfo("%s: %d logit differences within %.2e; %d greedy steps checked", std::string(p["name"]).c_str(), r.compared,
            r.logit_error, r.near.checked);
      // The folder's classifier is the GGUF's Q8_0 one dequantized: float activations against
      // ik's int8-rounded ones (the goldens' README: 1e-2).
      QVERIFY2(r.logit_error >= 0 && r.logit_error <= 1e-2, std::to_string(r.logit_error).c_str());
      QVERIFY2(r.near.mismatch < 0, r.near.why().c_str());
      QVERIFY(r.near.checked >= 6);
    }
    QVERIFY(n >= 2);
  }

  // What the converter refuses, by name; and the engine keeps the text model when the folder's
  // tower cannot be read.
  void badFolders() {
    auto variant = [&](const QString& name, json config, std::vector<HfTensor> ts) {
      const QString dir = tmp_.filePath("bad-" + name);
      writeFolder(dir, config, ts);
      return dir.toStdString();
    };
    const std::vector<HfTensor> g3 = gemma3Tower("model.");
    {
      std::vector<HfTensor> ts = g3;
      ts.erase(std::remove_if(ts.begin(), ts.end(),
                              [](const HfTensor& t) { return t.name.ends_with("layers.1.mlp.fc2.weight"); }),
               ts.end());
      const std::string dir = variant("missing", gemma3Config(), ts);
      expectError([&] { hf_vision_projector(dir); },
                  {dir, "model.vision_tower.vision_model.encoder.layers.1.mlp.fc2.weight", "missing"});
    }
    {
      std::vector<HfTensor> ts = g3;
      for (HfTensor& t : ts)
        if (t.name.ends_with("position_embedding.weight")) t.shape = {32, 64};  // transposed
      const std::string dir = variant("shape", gemma3Config(), ts);
      expectError([&] { hf_vision_projector(dir); }, {"position_embedding.weight", "(32, 64)", "(64, 32)"});
    }
    {
      std::vector<HfTensor> ts = g3;
      ts.push_back(floats("model.vision_tower.vision_model.head.probe", {1, 32}, std::vector<float>(32, 0.f)));
      const std::string dir = variant("unknown", gemma3Config(), ts);
      expectError([&] { hf_vision_projector(dir); }, {"head.probe", "unknown tensor"});
    }
    {
      json c = gemma3Config();
      c["mm_tokens_per_image"] = 15;
      const std::string dir = variant("tokens", c, g3);
      expectError([&] { hf_vision_projector(dir); }, {"mm_tokens_per_image 15"});
      // An empty vision_config: SigLIP's defaults (224 / 16: 14x14 patches) cannot pool to the
      // 16x16 tokens; the message says where the grid came from.
      c = gemma3Config();
      c["vision_config"] = json::object();
      c["mm_tokens_per_image"] = 256;
      const std::string empty = variant("vc-empty", c, g3);
      expectError([&] { hf_vision_projector(empty); },
                  {"mm_tokens_per_image 256 (a 16x16 grid)", "14x14 patches",
                   "image_size 224 (absent: SigLIP's default)", "patch_size 16 (absent"});
      c = gemma3Config();
      c["vision_config"]["hidden_act"] = "relu";
      const std::string act = variant("act", c, g3);
      expectError([&] { hf_vision_projector(act); }, {"hidden_act 'relu'"});
      c = gemma3Config();
      c["vision_config"]["num_hidden_layers"] = 3;
      const std::string deep = variant("layers", c, g3);
      expectError([&] { hf_vision_projector(deep); }, {"encoder.layers.2.", "missing"});
    }
    {
      json c = gemma4Config();
      c["vision_config"]["head_dim"] = 8;
      const std::string dir = variant("g4-heads", c, gemma4Tower());
      expectError([&] { hf_vision_projector(dir); }, {"head_dim", "8"});
      c = gemma4Config();
      c["vision_config"]["rope_parameters"]["rope_theta"] = 10000.0;
      const std::string theta = variant("g4-theta", c, gemma4Tower());
      expectError([&] { hf_vision_projector(theta); }, {"rope_theta"});
    }
    {
      // Keys of the wrong type are named, not read as their defaults or thrown as JSON errors.
      json c = gemma3Config();
      c["vision_config"]["vision_use_head"] = "true";
      expectError([&] { hf_vision_projector(variant("head-str", c, g3)); }, {"vision_use_head", "true or false"});
      c = gemma3Config();
      c["vision_config"]["hidden_act"] = 5;
      expectError([&] { hf_vision_projector(variant("act-num", c, g3)); }, {"hidden_act", "string"});
      c = gemma3Config();
      c["vision_config"] = "x";
      const std::string odd = variant("vc-str", c, g3);
      QVERIFY(hf_folder_has_vision(odd));  // said when loading, not skipped
      expectError([&] { hf_vision_projector(odd); }, {"vision_config is not an object"});
      // Without "architectures" the model_type names the class.
      c = gemma3Config();
      c.erase("architectures");
      QVERIFY(hf_folder_has_vision(variant("model-type", c, g3)));
    }
    {
      // Non-finite values: a weight, and a normalisation that would make every pixel one.
      std::vector<HfTensor> ts = g3;
      for (HfTensor& t : ts)
        if (t.name.ends_with("layers.0.self_attn.k_proj.weight")) {
          const uint16_t nan = 0x7E00;  // F16
          std::memcpy(t.bytes.data() + 6, &nan, 2);
        }
      expectError([&] { hf_vision_projector(variant("nan", gemma3Config(), ts)); },
                  {"layers.0.self_attn.k_proj.weight", "not finite"});
      const std::string dir = variant("inf-mean", gemma3Config(), g3);
      writeJson(QString::fromStdString(dir) + "/preprocessor_config.json",
                json::parse(R"({"image_mean": [1e300, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]})"));
      expectError([&] { hf_vision_projector(dir); }, {"preprocessor_config.json", "image_mean", "finite"});
      // Finite, but the normalised pixels would overflow the encoder.
      writeJson(QString::fromStdString(dir) + "/preprocessor_config.json",
                json::parse(R"({"image_mean": [3e38, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]})"));
      expectError([&] { hf_vision_projector(dir); }, {"preprocessor_config.json", "image_mean", "outside"});
      writeJson(QString::fromStdString(dir) + "/preprocessor_config.json", json::parse("[1, 2, 3]"));
      expectError([&] { hf_vision_projector(dir); }, {"preprocessor_config.json", "not a JSON object"});
    }
    {
      json c = gemma3Config();
      c["architectures"] = {"Gemma3ForCausalLM"};
      const std::string dir = variant("causal", c, g3);
      QVERIFY(!hf_folder_has_vision(dir));
      expectError([&] { hf_vision_projector(dir); }, {"no image side", "Gemma3ForCausalLM"});
      QVERIFY(!hf_folder_has_vision(tmp_.filePath("nowhere").toStdString()));
    }
  }

  // A tower that cannot be read leaves a loadable model: the text part runs, a warning says why;
  // image options are taken for a folder with a tower, refused for one without.
  void engineKeepsTextModel() {
    const QString gguf = testpaths::modelFile("arch/gemma3-tiny.gguf");
    REQUIRE_MODEL_FILE(gguf);
    const QString text = tmp_.filePath("g3-keep-text"), dir = tmp_.filePath("g3-keep");
    writeTextFolder(gguf, text);
    json config = gemma3Config();
    config["vision_config"]["hidden_act"] = "quick_gelu";  // not SigLIP's
    writeConditionalFolder(text, dir, config, gemma3Tower("model."));
    std::vector<std::string> warnings;
    EngineConfig c;
    c.model = dir.toStdString();
    c.tokenizer = gguf.toStdString();
    c.num_threads = 2;
    c.max_model_len = 256;
    c.image_max_tokens = 64;  // an image option with no --mmproj: the folder has a tower
    c.on_warning = [&](const std::string& w) { warnings.push_back(w); };
    LLMEngine engine(c);
    QVERIFY(engine.vision_encoder() == nullptr);
    bool said = false;
    for (const std::string& w : warnings)
      said |= w.find("vision tower was not loaded") != std::string::npos && w.find("quick_gelu") != std::string::npos;
    QVERIFY(said);
    QVERIFY(!greedyIds(engine, "t", ImagePrompt{{2, 651, 6037, 576}, {}}, 4).empty());
    c.model = text.toStdString();  // no tower
    expectError([&] { LLMEngine e(c); }, {"--image-max-tokens", "--mmproj"});

    // The conditional class with its vision_config null (or gone) but the tower's tensors still
    // there: the text model loads and a warning says that no images are read.
    for (const bool gone : {false, true}) {
      json nulled = gemma3Config();
      if (gone)
        nulled.erase("vision_config");
      else
        nulled["vision_config"] = nullptr;
      const QString nd = tmp_.filePath(gone ? "g3-no-vision" : "g3-null-vision");
      writeConditionalFolder(text, nd, nulled, gemma3Tower("model."));
      QVERIFY(!hf_folder_has_vision(nd.toStdString()));
      QVERIFY(hf_folder_vision_gap(nd.toStdString()).find(gone ? "absent" : "null") != std::string::npos);
      warnings.clear();
      c.model = nd.toStdString();
      c.image_max_tokens = 0;
      LLMEngine e(c);
      QVERIFY(e.vision_encoder() == nullptr);
      said = false;
      for (const std::string& w : warnings)
        said |= w.find("Gemma3ForConditionalGeneration") != std::string::npos &&
                w.find("reads no images") != std::string::npos;
      QVERIFY2(said, nd.toUtf8().constData());
      QVERIFY(!greedyIds(e, "t", ImagePrompt{{2, 651, 6037, 576}, {}}, 4).empty());
    }
    QVERIFY(hf_folder_vision_gap(dir.toStdString()).empty());   // a tower (a broken one) is there
    QVERIFY(hf_folder_vision_gap(text.toStdString()).empty());  // a causal class: nothing to say
  }
};

QTEST_GUILESS_MAIN(TestVisionHf)
#include "test_vision_hf.moc"
