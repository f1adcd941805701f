// Qwen3-VL images against outside references (tests/data/vision/qwen3vl, README there): a tiny
// random-weight qwen3vl_merger projector, the text model derived from shared qwen3-tiny.gguf by
// the README's recipe (arch qwen3vl, rope.dimension_sections [6, 5, 5, 0], 2 deepstack layers).
// - preprocessing (transformers' smart_resize + Pillow's bicubic) and the encoder's embeddings
//   (main + deepstack) against the float64 numpy forward of transformers' semantics;
// - the text model without images against the same weights as qwen3 (M-RoPE with text positions
//   is plain RoPE);
// - prompts with images through the whole engine (encoder, M-RoPE positions, deepstack features,
//   the text after an image at st + max(grid)) against ik_llama.cpp's qwen3vl forward fed those
//   embeddings and positions: the token layout, the last prompt logits, greedy ids to the first
//   near-tie; chunked prefill and prefix caching give the same ids;
// - the MoE form (qwen3vlmoe, from shared qwen3moe-tiny.gguf) the same way against its own golden.
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/llm_engine.h"
#include "engine/loader/gguf/gguf_file_writer.h"
#include "engine/loader/gguf/gguf_reader.h"
#include "engine/multimodal/image_decode.h"
#include "engine/multimodal/mm_prompt.h"
#include "engine/text/tokenizer.h"
#include "engine/vision/vision_encoder.h"
#include "engine_test_utils.h"
#include "vision_test_util.h"

using namespace pagedchat;
using namespace visiontest;

namespace {

const QString kDir = QStringLiteral(QWEN3VL_DIR);
std::string dataFile(const std::string& name) { return (kDir + "/").toStdString() + name; }

const Golden& encoderGolden() {
  static const Golden g = loadGolden(dataFile("golden_hf"));
  return g;
}
const Golden& llmGolden() {
  static const Golden g = loadGolden(dataFile("golden_hf_llm"));
  return g;
}

const std::string& textModel() {
  static QTemporaryDir dir;
  static const std::string path = [] {
    const std::string p = dir.filePath("qwen3vl-tiny.gguf").toStdString();
    deriveVlTextModel(testpaths::modelFile("arch/qwen3-tiny.gguf").toStdString(), "qwen3", "qwen3vl", {6, 5, 5, 0}, 2,
                      p);
    return p;
  }();
  return path;
}

// The MoE form (tests/data/vision/qwen3vlmoe/README.md): qwen3moe-tiny.gguf by the same recipe.
const std::string& moeTextModel() {
  static QTemporaryDir dir;
  static const std::string path = [] {
    const std::string p = dir.filePath("qwen3vlmoe-tiny.gguf").toStdString();
    deriveVlTextModel(testpaths::modelFile("arch/qwen3moe-tiny.gguf").toStdString(), "qwen3moe", "qwen3vlmoe",
                      {6, 5, 5, 0}, 2, p);
    return p;
  }();
  return path;
}

const Golden& moeGolden() {
  static const Golden g = loadGolden(dataFile("../qwen3vlmoe/golden_hf_llm"));
  return g;
}

EngineConfig visionConfig() {
  EngineConfig c;
  c.model = textModel();
  c.mmproj = dataFile("qwen3vl-tiny-mmproj.gguf");
  c.image_min_tokens = 8;  // the golden's limits (README: 512 and 4096 pixels)
  c.image_max_tokens = 64;
  c.num_threads = 2;
  c.max_model_len = 512;
  c.kv_cache_dtype = KvCacheDType::kFloat16;  // as the reference's cache
  return c;
}

// 12 greedy ids of a fixed text prompt on the engine `c` makes.
std::vector<int> textGreedyIds(const EngineConfig& c) {
  LLMEngine engine(c);
  engine.add_request("t", std::vector<int>{74785, 220, 304, 825, 1555, 13, 3838, 374}, testutil::greedy(12));
  return testutil::runToCompletion(engine).at("t").outputs.at(0).token_ids;
}

ImagePrompt promptOf(const LLMEngine& engine, const nlohmann::json& p) {
  return qwenImagePrompt(engine, p, kDir.toStdString());
}

}  // namespace

class TestVisionQwen3Vl : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { REQUIRE_MODEL_FILE(testpaths::modelFile("arch/qwen3-tiny.gguf")); }

  // Smart resize, Pillow's bicubic and the normalisation give transformers' floats; the encoder
  // gives the numpy forward's embeddings (main and both deepstack features) on every image.
  void encoderMatchesTransformers() {
    VisionOptions o;
    o.min_tokens = 8;
    o.max_tokens = 64;
    auto enc = VisionEncoder::open(dataFile("qwen3vl-tiny-mmproj.gguf"), 2, o);
    QCOMPARE(enc->config().deepstack, 2);
    QCOMPARE(enc->config().output_width(), 192);
    const Golden& g = encoderGolden();
    for (const auto& im : g.j["images"]) {
      const std::string name = im["image"];
      const RgbImage fitted = enc->fit(decode_image_file(dataFile(name)));
      QCOMPARE(fitted.width, int(im["hf_preproc"]["nx"]));
      QCOMPARE(fitted.height, int(im["hf_preproc"]["ny"]));
      const ImageGrid grid = enc->grid(fitted);
      QCOMPARE(grid.grid_w, int(im["grid"]["tokens_x"]));
      QCOMPARE(grid.grid_h, int(im["grid"]["tokens_y"]));
      const std::vector<float> px = enc->preprocess(fitted);
      const double dp = maxAbsDiff(px, g.block(im["hf_preproc"]["floats"]));
      QVERIFY2(dp <= 1e-6, (name + ": preprocessing differs by " + std::to_string(dp)).c_str());
      const ImageEmbeddings e = enc->encode_preprocessed(px, fitted.width, fitted.height);
      QCOMPARE(e.num_tokens, int(im["hf_embd"]["n_tokens"]));
      QCOMPARE(e.width, int(im["hf_embd"]["n_embd"]));
      const double d = maxAbsDiff(e.data, g.block(im["hf_embd"]["floats"]));
      qInfo("%s: %dx%d, %d tokens, embeddings within %.2e", name.c_str(), fitted.width, fitted.height, e.num_tokens, d);
      QVERIFY2(d <= 2e-4, (name + ": embeddings differ by " + std::to_string(d)).c_str());
    }
    // Sizes it does not take, and images it refuses.
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, enc->encode_preprocessed(std::vector<float>(30 * 20 * 3), 30, 20));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, enc->fit_size(1000, 4));  // sides 250 times apart
  }

  // Whatever the limits (equal ones included) and the picture's size, a fitted picture is one the
  // encoder takes, within the largest size; sides 200 times apart are refused by name.
  void fitSizesAreTaken() {
    for (const auto& [lo, hi] : std::vector<std::pair<int, int>>{{8, 64}, {64, 64}, {1, 1}, {64, 100}, {8, 9}}) {
      VisionOptions o;
      o.min_tokens = lo;
      o.max_tokens = hi;
      auto enc = VisionEncoder::open(dataFile("qwen3vl-tiny-mmproj.gguf"), 1, o);
      for (int w : {1, 3, 7, 8, 13, 24, 56, 80, 99, 200, 640, 1000})
        for (int h : {1, 5, 8, 16, 48, 56, 77, 300, 480, 1000}) {
          if (std::max(w, h) > 200 * std::min(w, h)) continue;
          const auto [fw, fh] = enc->fit_size(w, h);
          RgbImage fitted{fw, fh, std::vector<uint8_t>(std::size_t(fw) * std::size_t(fh) * 3)};
          const std::string what = std::to_string(w) + "x" + std::to_string(h) + " with " + std::to_string(lo) + ".." +
                                   std::to_string(hi) + " -> " + std::to_string(fw) + "x" + std::to_string(fh);
          ImageGrid g;
          try {
            g = enc->grid(fitted);
          } catch (const std::exception& e) {
            QFAIL((what + ": " + e.what()).c_str());
          }
          // At most the largest, unless a side is one merged patch (a narrow picture).
          QVERIFY2(g.tokens >= 1 && (g.tokens <= hi || std::min(g.grid_w, g.grid_h) == 1), what.c_str());
          // The encoder encodes what it takes (one size per limits, kept small).
          if (w == 3 && h == 300) {
            const ImageEmbeddings e = enc->encode(fitted);
            QCOMPARE(e.num_tokens, g.tokens);
          }
          // Fitting a fitted picture again gives one the encoder takes too.
          const auto [rw, rh] = enc->fit_size(fw, fh);
          RgbImage refit{rw, rh, std::vector<uint8_t>(std::size_t(rw) * std::size_t(rh) * 3)};
          try {
            enc->grid(refit);
          } catch (const std::exception& e) {
            QFAIL((what + " refitted: " + e.what()).c_str());
          }
        }
    }
    // A 199:1 picture (transformers takes it) fits to 1992x8, 249:1 after rounding: taken again as it
    // is (a request's picture is fitted once more when its prompt is laid out).
    {
      auto enc = VisionEncoder::open(dataFile("qwen3vl-tiny-mmproj.gguf"), 1);
      const auto [fw, fh] = enc->fit_size(1990, 10);
      QCOMPARE(fw, 1992);
      QCOMPARE(fh, 8);
      QCOMPARE(enc->fit_size(fw, fh), std::make_pair(fw, fh));
      QVERIFY_THROWS_EXCEPTION(std::invalid_argument, enc->fit_size(2010, 10));
      // Past max_pixels with a side of one merged patch (transformers' rule cannot shrink it): the
      // fitted size is its own fit too, so a request's tokens are transformers' one smart_resize.
      VisionOptions small;
      small.max_tokens = 64;
      auto narrow = VisionEncoder::open(dataFile("qwen3vl-tiny-mmproj.gguf"), 1, small);
      const auto [nw, nh] = narrow->fit_size(1990, 10);
      QCOMPARE(nh, 8);
      QVERIFY(int64_t(nw) * nh > 64 * 64);
      QCOMPARE(narrow->fit_size(nw, nh), std::make_pair(nw, nh));
    }
    VisionOptions wrong;
    wrong.min_tokens = 100;
    wrong.max_tokens = 10;
    try {
      VisionEncoder::open(dataFile("qwen3vl-tiny-mmproj.gguf"), 1, wrong);
      QFAIL("min above max was taken");
    } catch (const std::exception& e) {
      QVERIFY2(std::string(e.what()).find("--image-min-tokens") != std::string::npos, e.what());
    }
  }

  // Without images the qwen3vl model is qwen3 (text positions (p, p, p) are plain RoPE).
  void textOnlyIsQwen3() {
    EngineConfig a = visionConfig();
    a.mmproj.clear();
    a.image_min_tokens = a.image_max_tokens = 0;  // image options need a projector
    EngineConfig b = a;
    b.model = testpaths::modelFile("arch/qwen3-tiny.gguf").toStdString();
    QCOMPARE(textGreedyIds(a), textGreedyIds(b));
  }

  // The engine on the golden prompts: mtmd's token layout, and greedy ids as ik_llama.cpp's
  // qwen3vl forward gives them from the same embeddings and transformers' positions.
  void promptsAndGreedyMatchReference() {
    LLMEngine engine(visionConfig());
    int n = 0;
    for (const auto& p : llmGolden().j["prompts"]) {
      const ImagePrompt prompt = promptOf(engine, p);
      std::string why;
      QVERIFY2(sameQwenLayout(prompt, p, &why), why.c_str());
      const std::vector<int> ids = greedyIds(engine, "p" + std::to_string(n++), prompt, 16);
      const NearTieCheck c = compareToNearTie(ids, p["steps"]);
      QVERIFY2(c.mismatch < 0, c.why().c_str());
      qInfo("%s: %d greedy steps checked", std::string(p["name"]).c_str(), c.checked);
      QVERIFY(c.checked >= 6);
    }
  }

  // Qwen3-VL-MoE (qwen3vlmoe): without images it is qwen3moe; with the projector, ik_llama.cpp's
  // qwen3vlmoe forward fed the same embeddings (tests/data/vision/qwen3vlmoe): the layout, the
  // first step's logit differences and greedy ids to the first near-tie. Its three layers take
  // both deepstack features before the logits (zeroing them moves these by 0.2 to 0.4; ik's +1
  // rule after an image by 0.12 to 0.15, swapped h and w by 0.03 to 0.06; float activations
  // against ik's int8-rounded ones differ by up to ~4e-3).
  void moeTextOnlyIsQwen3Moe() {
    EngineConfig a = visionConfig();
    a.model = moeTextModel();
    a.mmproj.clear();
    a.image_min_tokens = a.image_max_tokens = 0;  // image options need a projector
    EngineConfig b = a;
    b.model = testpaths::modelFile("arch/qwen3moe-tiny.gguf").toStdString();
    QCOMPARE(textGreedyIds(a), textGreedyIds(b));
  }

  void moePromptsMatchReference() {
    EngineConfig config = visionConfig();
    config.model = moeTextModel();
    config.kv_cache_dtype = KvCacheDType::kFloat32;  // the reference's K cache (its V is float16)
    LLMEngine engine(config);
    int n = 0;
    for (const auto& p : moeGolden().j["prompts"]) {
      const std::string name = p["name"];
      const GoldenPromptRun r = runGoldenPrompt(engine, promptOf(engine, p), p, "m" + std::to_string(n++));
      QVERIFY2(r.layout_error.empty(), (name + ": " + r.layout_error).c_str());
      const double worst = r.logit_error;
      const int compared = r.compared;
      const NearTieCheck& c = r.near;
      qInfo("%s: %d logit differences within %.2e; %d greedy steps checked", name.c_str(), compared, worst, c.checked);
      QVERIFY2(worst >= 0, (name + ": the reference's most likely token is not among ours").c_str());
      QVERIFY(compared >= 10);
      QVERIFY2(worst <= 1e-2, (name + ": logit differences off by " + std::to_string(worst)).c_str());
      QVERIFY2(c.mismatch < 0, (name + ": " + c.why()).c_str());
      QVERIFY(c.checked >= 6);
    }
  }

  // Chunked prefill (steps ending inside the images) and a prefix-cache hit on the same prompt
  // give the ids of the whole prompt in one step.
  void chunkingAndPrefixCache() {
    const nlohmann::json& p = llmGolden().j["prompts"][2];  // two images
    std::vector<int> whole;
    {
      LLMEngine engine(visionConfig());
      whole = greedyIds(engine, "w", promptOf(engine, p), 8);
    }
    EngineConfig c = visionConfig();
    c.max_num_batched_tokens = 8;        // the prefill in pieces that end inside the images (causal:
    c.long_prefill_token_threshold = 5;  // Qwen's image tokens may be split)
    c.block_size = 4;
    LLMEngine engine(c);
    const ImagePrompt prompt = promptOf(engine, p);
    QCOMPARE(greedyIds(engine, "c", prompt, 8), whole);
    int cached = 0;
    QCOMPARE(greedyIds(engine, "again", prompt, 8, &cached), whole);
    QVERIFY(cached > 0);
  }

  void badInput() {
    // A Qwen3-VL projector beside another model, or with a deepstack count the model lacks.
    EngineConfig c = visionConfig();
    c.model = testpaths::modelFile("arch/qwen3-tiny.gguf").toStdString();
    try {
      LLMEngine e(c);
      QFAIL("a Qwen3-VL projector beside a qwen3 model was taken");
    } catch (const std::exception& e) {
      QVERIFY2(std::string(e.what()).find("Qwen3-VL") != std::string::npos, e.what());
    }
    // A placeholder whose grid is not the image's.
    LLMEngine engine(visionConfig());
    ImagePrompt prompt = promptOf(engine, llmGolden().j["prompts"][0]);
    prompt.images[0].grid_w += 1;
    RequestOptions o;
    o.images = prompt.images;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             engine.add_request("bad", prompt.token_ids, testutil::greedy(2), o));
  }
};

QTEST_GUILESS_MAIN(TestVisionQwen3Vl)
#include "test_vision_qwen3vl.moc"
