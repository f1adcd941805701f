// Images through Gemma 3's vision tower, against outside references (tests/data/vision/README.md):
// transformers' preprocessing written out with Pillow, ik_llama.cpp's clip encoder and its mtmd
// prompt layout and greedy decoding (gemma3-tiny + a random-weight projector made with its
// gguf-py). Also the engine's own rules: images never share prefix-cache blocks with other
// images, a bidirectional image is never split across steps, bad files are refused by name.
#include <QTest>

#include <QFile>
#include <QTemporaryDir>
#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "engine/llm_engine.h"
#include "engine/multimodal/exif_orientation.h"
#include "engine/multimodal/image_decode.h"
#include "engine/multimodal/mm_prompt.h"
#include "engine/text/tokenizer.h"
#include "engine/vision/vision_encoder.h"
#include "engine_test_utils.h"
#include "vision_test_util.h"

using namespace pagedchat;
using namespace visiontest;

namespace {

const QString kDir = QStringLiteral(VISION_DIR);
std::string dataFile(const char* name) { return (kDir + "/" + name).toStdString(); }
std::string textModel() { return testpaths::modelFile("arch/gemma3-tiny.gguf").toStdString(); }

const Golden& golden() {
  static const Golden loaded = loadGolden(dataFile("golden"));
  return loaded;
}

// The 8-bit picture ik_llama.cpp encoded: its preprocessed floats are (u8 / 255 - 0.5) / 0.5.
std::shared_ptr<const RgbImage> ikPixels(const std::string& name) {
  const nlohmann::json& im = golden().image(name);
  const std::vector<float> f = golden().block(im["ik_preproc"]["floats"]);
  auto img = std::make_shared<RgbImage>();
  img->width = im["ik_preproc"]["nx"];
  img->height = im["ik_preproc"]["ny"];
  for (float v : f) img->pixels.push_back(uint8_t(std::lround((v * 0.5f + 0.5f) * 255.0f)));
  return img;
}

EngineConfig visionConfig() {
  EngineConfig c;
  c.model = textModel();
  c.mmproj = dataFile("gemma3-tiny-mmproj.gguf");
  c.num_threads = 2;
  c.max_model_len = 512;
  c.kv_cache_dtype = KvCacheDType::kFloat16;  // as the reference's cache
  return c;
}

// The prompt of a golden case as the engine lays it out: the text with kImageMarker where mtmd's
// marker was, tokenized as mtmd does (parse special, BOS first).
ImagePrompt promptOf(const LLMEngine& engine, const nlohmann::json& p,
                     const std::vector<std::shared_ptr<const RgbImage>>& images) {
  std::string text = p["prompt"];
  const std::string marker = golden().j["mtmd_default_marker"];
  for (std::size_t at; (at = text.find(marker)) != std::string::npos;) text.replace(at, marker.size(), kImageMarker);
  TemplatedText t;
  t.append(text, false);
  return encode_image_prompt(engine.tokenizer(), *engine.vision_encoder(), t, images, engine.tokenizer().bos_id(),
                             image_placeholder_id(engine.tokenizer()));
}

std::vector<std::shared_ptr<const RgbImage>> ikImages(const nlohmann::json& p) {
  std::vector<std::shared_ptr<const RgbImage>> v;
  for (const auto& name : p["images"]) v.push_back(ikPixels(name));
  return v;
}

// The pictures of a Pillow golden folder (golden.json {"images": [{"file", "width", "height",
// "offset"}]} over golden.rgb, 8-bit RGB) decoded: each file's largest difference from Pillow's
// pixels (-1 for another size); the pictures themselves in *decoded.
std::vector<std::pair<std::string, int>> pillowDifferences(const std::string& dir,
                                                           std::vector<RgbImage>* decoded = nullptr) {
  std::ifstream js(dir + "/golden.json");
  const nlohmann::json g = nlohmann::json::parse(js);
  std::ifstream bin(dir + "/golden.rgb", std::ios::binary);
  const std::vector<uint8_t> rgb((std::istreambuf_iterator<char>(bin)), std::istreambuf_iterator<char>());
  std::vector<std::pair<std::string, int>> out;
  for (const auto& e : g["images"]) {
    const std::string name = e["file"];
    const RgbImage img = decode_image_file(dir + "/" + name);
    int worst = -1;
    if (img.width == int(e["width"]) && img.height == int(e["height"])) {
      worst = 0;
      for (std::size_t i = 0, off = e["offset"]; i < img.pixels.size(); ++i)
        worst = std::max(worst, std::abs(int(img.pixels[i]) - int(rgb.at(off + i))));
    }
    out.emplace_back(name, worst);
    if (decoded) decoded->push_back(img);
  }
  return out;
}

}  // namespace

class TestVision : public QObject {
  Q_OBJECT
 private slots:
  // Our decoding + Pillow-rule resize + normalisation against transformers' preprocessing done
  // with Pillow itself (decoded bytes' SHA-256 and the normalised floats).
  void preprocessingMatchesTransformers() {
    auto enc = VisionEncoder::open(dataFile("gemma3-tiny-mmproj.gguf"), 2);
    for (const auto& im : golden().j["images"]) {
      const std::string name = im["image"];
      const RgbImage img = decode_image_file(dataFile(name.c_str()));
      QCOMPARE(QString::fromStdString(image_identity(img)).size(), 64);
      const std::vector<float> want = golden().block(im["hf_preproc"]["floats"]);
      const double d = maxAbsDiff(enc->preprocess(img), want);
      qInfo("%s: %dx%d, preprocessing max |diff| %.3g", name.c_str(), img.width, img.height, d);
      QVERIFY2(d <= 1e-6, name.c_str());
    }
  }

  // The encoder (SigLIP ViT, pooling, soft-embedding norm, projection) against ik_llama.cpp's clip
  // fed the same normalised pixels. ik rounds the pixels to F16 in its patch convolution
  // (README: 6.7e-4 on the embeddings), hence the tolerance.
  void embeddingsMatchReference() {
    auto enc = VisionEncoder::open(dataFile("gemma3-tiny-mmproj.gguf"), 2);
    QCOMPARE(enc->config().tokens_per_image(), 16);
    QCOMPARE(enc->config().text_hidden_size, 64);
    for (const auto& im : golden().j["images"]) {
      if (!im.contains("hf_embd")) continue;
      const ImageEmbeddings e = enc->encode_preprocessed(golden().block(im["hf_preproc"]["floats"]));
      const std::vector<float> want = golden().block(im["hf_embd"]["floats"]);
      double scale = 0;
      for (float v : want) scale = std::max(scale, double(std::fabs(v)));
      const double d = maxAbsDiff(e.data, want);
      qInfo("%s: embeddings max |diff| %.3g (max |value| %.3g)", std::string(im["image"]).c_str(), d, scale);
      QVERIFY(scale > 0.1);
      QVERIFY2(d <= 3e-3, std::string(im["image"]).c_str());
    }
  }

  // Token ids and image positions as mtmd lays the golden prompts out; then greedy decoding
  // through the whole engine (encoder cache, scheduler, bidirectional image attention) equals
  // ik_llama.cpp's ids up to the first near-tie.
  void promptsAndGreedyMatchReference() {
    LLMEngine engine(visionConfig());
    int n = 0;
    for (const auto& p : golden().j["prompts"]) {
      const ImagePrompt prompt = promptOf(engine, p, ikImages(p));
      std::vector<int> want;
      std::vector<int> offsets;
      for (const auto& c : p["chunks"]) {
        if (c["type"] == "text") {
          for (int id : c["ids"]) want.push_back(id);
        } else {
          offsets.push_back(int(want.size()));
          want.insert(want.end(), std::size_t(c["n_tokens"]), prompt.token_ids.at(want.size()));
        }
      }
      QCOMPARE(prompt.token_ids, want);
      QCOMPARE(int(prompt.images.size()), int(offsets.size()));
      for (std::size_t k = 0; k < offsets.size(); ++k) QCOMPARE(prompt.images[k].offset, offsets[k]);
      const std::vector<int> ids = greedyIds(engine, "p" + std::to_string(n++), prompt, 16);
      const NearTieCheck c = compareToNearTie(ids, p["steps"]);
      QVERIFY2(c.mismatch < 0, c.why().c_str());
      qInfo("%s: %d greedy steps checked", std::string(p["name"]).c_str(), c.checked);
      QVERIFY(c.checked >= 6);
    }
  }

  // Attention among an image's tokens runs both ways: the first token of P1 is the non-causal
  // reference's, which the causal decoding of the same prompt does not give.
  void imageTokensAttendBothWays() {
    const nlohmann::json& p = golden().j["prompts"][0];
    const int noncausal = p["steps"][0]["id"], causal = p["causal_image_first_step"]["id"];
    QVERIFY(noncausal != causal);
    LLMEngine engine(visionConfig());
    QCOMPARE(greedyIds(engine, "a", promptOf(engine, p, ikImages(p)), 1).at(0), noncausal);
  }

  // Chunked prefill never splits an image (its uncached part runs in one step) and gives the
  // unchunked run's tokens; the same image hits the prefix cache, another image does not.
  void chunkingAndPrefixCache() {
    const nlohmann::json& p = golden().j["prompts"][2];  // two images
    std::vector<int> whole;
    {
      LLMEngine engine(visionConfig());
      whole = greedyIds(engine, "w", promptOf(engine, p, ikImages(p)), 8);
    }
    EngineConfig c = visionConfig();
    c.max_num_batched_tokens = 24;  // an image (16) fits, two pieces of text around it do not
    c.long_prefill_token_threshold = 7;
    c.block_size = 16;
    LLMEngine engine(c);
    const ImagePrompt prompt = promptOf(engine, p, ikImages(p));
    QCOMPARE(greedyIds(engine, "c", prompt, 8), whole);
    // The same prompt again: every full block is cached, images included.
    int cached = 0;
    QCOMPARE(greedyIds(engine, "again", prompt, 8, &cached), whole);
    QVERIFY(cached >= int(prompt.token_ids.size()) / 16 * 16 - 16);
    // The same text with the second image swapped: no block past that image's start is shared.
    std::vector<std::shared_ptr<const RgbImage>> other = ikImages(p);
    auto flipped = std::make_shared<RgbImage>(*other[1]);
    for (auto& v : flipped->pixels) v = uint8_t(255 - v);
    other[1] = flipped;
    const ImagePrompt swapped = promptOf(engine, p, other);
    QCOMPARE(swapped.token_ids, prompt.token_ids);  // the same ids: only the image differs
    greedyIds(engine, "swapped", swapped, 1, &cached);
    QVERIFY2(cached <= swapped.images[1].offset, std::to_string(cached).c_str());
    QVERIFY(cached >= 16);
  }

  // Bad input: refused by name, nothing crashes, the engine keeps serving text.
  // CMYK JPEGs (tests/data/vision/cmyk): Pillow's RGB reading of a file with the Adobe marker and
  // of one without it (Pillow takes the inks as stored inverted either way; the same JPEG decoder:
  // equal, or a level off where IDCTs round apart).
  void cmykJpeg() {
    std::vector<RgbImage> decoded;
    const auto diffs = pillowDifferences(dataFile("cmyk"), &decoded);
    QCOMPARE(int(diffs.size()), 2);
    for (const auto& [name, worst] : diffs)
      QVERIFY2(worst >= 0 && worst <= 1, (name + ": " + std::to_string(worst)).c_str());
    QVERIFY(decoded[0].pixels == decoded[1].pixels);
  }

  // Pictures come out upright by their EXIF orientation, as transformers' load_image reads them
  // (Pillow's exif_transpose; tests/data/vision/exif): all eight values in JPEG, and the PNG eXIf
  // and WebP EXIF chunks. Corrupted or cut EXIF data never reads past the file.
  void exifOrientation() {
    const std::string dir = dataFile("exif");
    const auto diffs = pillowDifferences(dir);
    QCOMPARE(int(diffs.size()), 10);
    for (const auto& [name, worst] : diffs) {
      // Lossless files equal Pillow's pixels; JPEG decoders may differ by a few levels (the
      // quadrants are 255 apart, so a wrong turn is far off).
      const bool lossless = name.ends_with(".png") || name.ends_with(".webp");
      QVERIFY2(worst >= 0 && worst <= (lossless ? 0 : 8), (name + ": differs by " + std::to_string(worst)).c_str());
    }
    // Every prefix and every single-byte change of a file with EXIF: a picture or ImageError.
    std::ifstream in(dir + "/orient6.jpg", std::ios::binary);
    const std::vector<uint8_t> jpg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    int decoded = 0;
    for (std::size_t n = 0; n <= jpg.size(); ++n) {
      try {
        decode_image(std::span<const uint8_t>(jpg.data(), n));
        ++decoded;
      } catch (const ImageError&) {
      }
    }
    for (std::size_t i = 2; i < 120 && i < jpg.size(); ++i)
      for (uint8_t v : {uint8_t(0x00), uint8_t(0xFF), uint8_t(jpg[i] ^ 0x5A)}) {
        std::vector<uint8_t> bad = jpg;
        bad[i] = v;
        try {
          const RgbImage img = decode_image(bad);
          QVERIFY(img.width * img.height == 48 * 32);
          ++decoded;
        } catch (const ImageError&) {
        }
      }
    QVERIFY(decoded > 0);
  }

  // The tag as files carry it, on hand-made bytes: either byte order, SHORT or LONG, PNG eXIf
  // before or after the image data, WebP EXIF only when VP8X flags it; anything else reads as 1.
  void exifOrientationTag() {
    using Bytes = std::vector<uint8_t>;
    // A TIFF blob whose IFD0 holds `entries` copies of (tag 0x0112, type, count 1, value).
    const auto tiff = [](bool little, int type, uint32_t value, uint32_t entries = 1, uint32_t ifd = 8) {
      Bytes t = little ? Bytes{'I', 'I', 42, 0} : Bytes{'M', 'M', 0, 42};
      const auto put = [&](uint32_t v, int n) {
        for (int i = 0; i < n; ++i) t.push_back(uint8_t(little ? v >> (8 * i) : v >> (8 * (n - 1 - i))));
      };
      put(ifd, 4);
      put(entries, 2);
      put(0x0112, 2);
      put(uint32_t(type), 2);
      put(1, 4);
      if (type == 3) {
        put(value, 2);
        put(0, 2);
      } else {
        put(value, 4);
      }
      put(0, 4);
      return t;
    };
    const auto jpeg = [](const Bytes& t) {
      Bytes b{0xFF, 0xD8, 0xFF, 0xE1, uint8_t((t.size() + 8) >> 8), uint8_t(t.size() + 8), 'E', 'x', 'i', 'f', 0, 0};
      b.insert(b.end(), t.begin(), t.end());
      b.insert(b.end(), {0xFF, 0xDA, 0, 2});
      return b;
    };
    QCOMPARE(exif_orientation(jpeg(tiff(true, 3, 6)), "jpeg"), 6);
    QCOMPARE(exif_orientation(jpeg(tiff(false, 3, 8)), "jpeg"), 8);
    QCOMPARE(exif_orientation(jpeg(tiff(true, 4, 5)), "jpeg"), 5);
    QCOMPARE(exif_orientation(jpeg(tiff(false, 4, 3)), "jpeg"), 3);
    QCOMPARE(exif_orientation(jpeg(tiff(true, 3, 9)), "jpeg"), 1);           // out of range
    QCOMPARE(exif_orientation(jpeg(tiff(true, 2, 6)), "jpeg"), 1);           // ASCII
    QCOMPARE(exif_orientation(jpeg(tiff(true, 3, 6, 60000)), "jpeg"), 6);    // entries past the end: the first is read
    QCOMPARE(exif_orientation(jpeg(tiff(true, 3, 6, 1, 4000)), "jpeg"), 1);  // IFD past the end
    const auto chunk = [](const char* type, const Bytes& data) {
      Bytes c{uint8_t(data.size() >> 24), uint8_t(data.size() >> 16), uint8_t(data.size() >> 8), uint8_t(data.size())};
      c.insert(c.end(), type, type + 4);
      c.insert(c.end(), data.begin(), data.end());
      c.insert(c.end(), {0, 0, 0, 0});  // CRC (not checked here)
      return c;
    };
    for (const bool after : {false, true}) {
      Bytes png{0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
      const Bytes ihdr = chunk("IHDR", Bytes(13, 0)), idat = chunk("IDAT", Bytes(5, 0)),
                  exif = chunk("eXIf", tiff(false, 3, 6)), iend = chunk("IEND", {});
      for (const Bytes* c : after ? std::vector<const Bytes*>{&ihdr, &idat, &exif, &iend}
                                  : std::vector<const Bytes*>{&ihdr, &exif, &idat, &iend})
        png.insert(png.end(), c->begin(), c->end());
      QCOMPARE(exif_orientation(png, "png"), 6);
    }
    const auto riff = [](uint8_t vp8x_flags) {
      Bytes w{'R', 'I', 'F', 'F', 0, 0, 0, 0, 'W', 'E', 'B', 'P', 'V', 'P', '8', 'X', 10, 0, 0, 0, vp8x_flags};
      w.insert(w.end(), 9, 0);
      Bytes data{'E', 'x', 'i', 'f', 0, 0};  // the header some writers keep (read either way)
      const Bytes tf = Bytes{'I', 'I', 42, 0, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0};
      data.insert(data.end(), tf.begin(), tf.end());
      w.insert(w.end(), {'E', 'X', 'I', 'F', uint8_t(data.size()), 0, 0, 0});
      w.insert(w.end(), data.begin(), data.end());
      return w;
    };
    QCOMPARE(exif_orientation(riff(0x08), "webp"), 8);
    QCOMPARE(exif_orientation(riff(0x00), "webp"), 1);  // not flagged: libwebp (and Pillow) ignore it
  }

  void badInput() {
    // A projector for another model (gemma3 projector, qwen3 text model).
    {
      EngineConfig c = visionConfig();
      c.model = testpaths::modelFile("arch/qwen3-tiny.gguf").toStdString();
      try {
        LLMEngine e(c);
        QFAIL("a gemma3 projector loaded beside qwen3");
      } catch (const std::exception& e) {
        QVERIFY2(std::string(e.what()).find("Gemma 3 image projector") != std::string::npos, e.what());
      }
    }
    // The model file given as the projector; a truncated projector.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    {
      try {
        VisionEncoder::open(textModel());
        QFAIL("the text model opened as a projector");
      } catch (const std::runtime_error& e) {
        QVERIFY2(std::string(e.what()).find("not an image projector") != std::string::npos, e.what());
      }
      QFile in(QString::fromStdString(dataFile("gemma3-tiny-mmproj.gguf")));
      QVERIFY(in.open(QIODevice::ReadOnly));
      const QByteArray all = in.readAll();
      for (int cut : {16, 200, int(all.size()) / 2, int(all.size()) - 8}) {
        const QString path = dir.filePath("cut.gguf");
        QFile out(path);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(all.left(cut));
        out.close();
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, VisionEncoder::open(path.toStdString()));
      }
    }
    // Images: truncated, not an image, a decompression bomb (a tiny PNG declaring 20000 x 20000).
    {
      QFile in(QString::fromStdString(dataFile("square.png")));
      QVERIFY(in.open(QIODevice::ReadOnly));
      const QByteArray png = in.readAll();
      const std::vector<uint8_t> bytes(png.begin(), png.end());
      QVERIFY_THROWS_EXCEPTION(ImageError, decode_image({bytes.data(), bytes.size() - 20}));
      QVERIFY_THROWS_EXCEPTION(ImageError, decode_image({bytes.data() + 1, bytes.size() - 1}));
      std::vector<uint8_t> bomb = bytes;  // IHDR width and height at bytes 16..23, its CRC at 29..32
      for (int i : {16, 20}) {
        bomb[std::size_t(i)] = 0;
        bomb[std::size_t(i) + 1] = 0;
        bomb[std::size_t(i) + 2] = 0x4e;
        bomb[std::size_t(i) + 3] = 0x20;
      }
      uint32_t crc = 0xffffffffu;  // CRC-32 (PNG's) of the chunk type and data, bytes 12..28
      for (int i = 12; i < 29; ++i) {
        crc ^= bomb[std::size_t(i)];
        for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
      }
      crc = ~crc;
      for (int k = 0; k < 4; ++k) bomb[std::size_t(29 + k)] = uint8_t(crc >> (24 - 8 * k));
      try {
        decode_image(bomb);
        QFAIL("a 20000x20000 PNG decoded");
      } catch (const ImageError& e) {
        QVERIFY2(std::string(e.what()).find("20000x20000") != std::string::npos, e.what());
      }
      ImageLimits small;
      small.max_side = 16;
      try {
        decode_image(bytes, small);
        QFAIL("a 32x32 PNG passed a 16-pixel limit");
      } catch (const ImageError& e) {
        QVERIFY2(std::string(e.what()).find("32x32") != std::string::npos, e.what());
      }
    }
    // Requests: images without a projector; a placeholder of the wrong length; markers and
    // images that do not pair up. The engine then still answers a text request.
    LLMEngine engine(visionConfig());
    const nlohmann::json& p = golden().j["prompts"][0];
    ImagePrompt prompt = promptOf(engine, p, ikImages(p));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, promptOf(engine, p, {}));
    ImagePrompt bad = prompt;
    bad.images[0].length = 15;
    RequestOptions o;
    o.images = bad.images;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, engine.add_request("bad", bad.token_ids, testutil::greedy(2), o));
    {
      EngineConfig c = visionConfig();
      c.mmproj.clear();
      LLMEngine text(c);
      o.images = prompt.images;
      try {
        text.add_request("img", prompt.token_ids, testutil::greedy(2), o);
        QFAIL("an image went to an engine without a projector");
      } catch (const std::invalid_argument& e) {
        QVERIFY2(std::string(e.what()).find("reads no images") != std::string::npos, e.what());
      }
    }
    engine.add_request("text", std::vector<int>{1, 450, 4996}, testutil::greedy(3));
    QCOMPARE(int(testutil::runToCompletion(engine).at("text").outputs.at(0).token_ids.size()), 3);
  }
};

QTEST_GUILESS_MAIN(TestVision)
#include "test_vision.moc"
