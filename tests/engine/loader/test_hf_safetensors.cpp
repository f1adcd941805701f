// Malformed safetensors files and shard indexes: every one a std::runtime_error naming the file
// (and the tensor where there is one), never a crash. Also run under ASan/UBSan.
#include <QTest>

#include <QTemporaryDir>

#include "engine/llm.h"
#include "engine/loader/hf/safetensors.h"
#include "test_hf_utils.h"

using namespace pagedchat;
using namespace hftest;
using nlohmann::json;

class TestHfSafetensors : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  QString good_;     // a valid stories260K F32 folder
  QByteArray file_;  // its model.safetensors
  int n_ = 0;

  /// A copy of the good folder whose model.safetensors is `bytes`; returns that file's path.
  QString folderWith(const QByteArray& bytes) {
    const QString dir = tmp_.filePath(QString("case%1").arg(n_++));
    copyFolder(good_, dir);
    writeAll(dir + "/model.safetensors", bytes);
    return dir + "/model.safetensors";
  }
  static EngineConfig config(const QString& file) {
    EngineConfig c;
    c.model = QFileInfo(file).path().toStdString();
    c.num_threads = 1;
    return c;
  }
  /// Expects both the parser alone and the whole load to fail naming the file and `needles`.
  void expectBroken(const QByteArray& bytes, const QStringList& needles) {
    const QString path = folderWith(bytes);
    HF_EXPECT_ERROR(SafetensorsSet::open_file(path.toStdString()), QStringList{path} + needles);
    HF_EXPECT_ERROR(LLM{config(path)}, QStringList{path} + needles);
  }

 private slots:
  void initTestCase() {
    REQUIRE_MODEL_FILE(storiesBin());
    QVERIFY(tmp_.isValid());
    good_ = tmp_.filePath("good");
    writeStories(good_, "f32");
    file_ = readAll(good_ + "/model.safetensors");
    QVERIFY(file_.size() > 1000);
  }

  void halfFloats() {
    QCOMPARE(f16_to_f32(0x3c00), 1.0f);
    QCOMPARE(f16_to_f32(0xc000), -2.0f);
    QCOMPARE(f16_to_f32(0x7bff), 65504.0f);
    QCOMPARE(f16_to_f32(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
    QCOMPARE(f16_to_f32(0x03ff), std::ldexp(1023.0f, -24));
    QVERIFY(std::isinf(f16_to_f32(0x7c00)) && f16_to_f32(0x7c00) > 0);
    QVERIFY(std::isnan(f16_to_f32(0x7e00)));
    QVERIFY(std::signbit(f16_to_f32(0x8000)));
    QCOMPARE(bf16_to_f32(0x3f80), 1.0f);
    QCOMPARE(f32_to_bf16(1.0f), uint16_t(0x3f80));
    // Round to nearest, ties to even: 1 + 2^-8 is halfway between 1 and 1 + 2^-7 -> 1 (even).
    QCOMPARE(f32_to_bf16(1.0f + std::ldexp(1.0f, -8)), uint16_t(0x3f80));
    QCOMPARE(f32_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), uint16_t(0x3f82));  // tie -> even (up)
    QCOMPARE(f32_to_bf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)), uint16_t(0x3f81));
    QCOMPARE(f32_to_bf16(-3.0f), uint16_t(0xc040));
    QVERIFY(std::isnan(bf16_to_f32(f32_to_bf16(std::nanf("")))));
    QCOMPARE(f32_to_bf16(std::numeric_limits<float>::max()), uint16_t(0x7f80));  // rounds to +inf
  }

  void valid() {
    const auto t = parse_safetensors(reinterpret_cast<const uint8_t*>(file_.constData()), file_.size(), "mem");
    QCOMPARE(int(t.size()), 47);
    const StTensor& q = t.at("model.layers.0.self_attn.q_proj.weight");
    QCOMPARE(q.shape, (std::vector<uint64_t>{64, 64}));
    QCOMPARE(q.dtype, StDtype::kF32);
    QCOMPARE(q.nbytes, uint64_t(64 * 64 * 4));
    QCOMPARE((reinterpret_cast<uintptr_t>(q.data) - reinterpret_cast<uintptr_t>(file_.constData())) % 4, uintptr_t(0));
  }

  void truncated_data() {
    QTest::addColumn<int>("length");
    QTest::addColumn<QString>("needle");
    uint64_t n = 0;
    std::memcpy(&n, file_.constData(), 8);
    const int header_end = int(8 + n);
    for (int len : {1, 4, 7}) QTest::newRow(qPrintable(QString::number(len))) << len << "8-byte";
    QTest::newRow("8") << 8 << "truncated";
    QTest::newRow("100") << 100 << "truncated";
    QTest::newRow("header-1") << header_end - 1 << "truncated";
    QTest::newRow("header end") << header_end << "data_offsets";
    QTest::newRow("half") << int(file_.size() / 2) << "data_offsets";
    QTest::newRow("size-1") << int(file_.size() - 1) << "data_offsets";
  }
  void truncated() {
    QFETCH(int, length);
    QFETCH(QString, needle);
    expectBroken(file_.left(length), {needle});
  }
  void emptyFile() {
    const QString path = folderWith(QByteArray());
    HF_EXPECT_ERROR(LLM{config(path)}, path);
  }

  void headerLength() {
    QByteArray b = file_;
    const uint64_t huge = uint64_t(1) << 40;
    std::memcpy(b.data(), &huge, 8);
    expectBroken(b, {"header length", "exceeds"});
    const uint64_t past = uint64_t(file_.size());
    std::memcpy(b.data(), &past, 8);
    expectBroken(b, {"truncated"});
    const uint64_t max = ~uint64_t(0);
    std::memcpy(b.data(), &max, 8);
    expectBroken(b, {"header length"});
  }

  void headerNotJson() {
    const StFile f = StFile::read(good_ + "/model.safetensors");
    expectBroken(f.bytes("this is not json"), {"not valid JSON"});
    expectBroken(f.bytes(std::string("{\"a\": \xff\xfe}")), {"not valid JSON"});
    expectBroken(f.bytes("[1, 2, 3]"), {"not a JSON object"});
    expectBroken(f.bytes("\"text\""), {"not a JSON object"});
    expectBroken(f.bytes("{\"a\": " + std::string(100000, '[') + std::string(100000, ']') + "}"), {"deeper than"});
  }

  // Header surgery on one tensor; the message must name the file and the tensor.
  void badEntry_data() {
    QTest::addColumn<QString>("tensor");
    QTest::addColumn<QString>("field");
    QTest::addColumn<QString>("value");
    QTest::addColumn<QString>("needle");
    const QString norm = "model.norm.weight", q = "model.layers.1.self_attn.q_proj.weight";
    QTest::newRow("unknown dtype") << norm << "dtype"
                                   << R"("F4")"
                                   << "F4";
    QTest::newRow("dtype not string") << norm << "dtype"
                                      << "4"
                                      << "dtype";
    QTest::newRow("unsupported dtype I32") << norm << "dtype"
                                           << R"("I32")"
                                           << "I32";
    QTest::newRow("shape too small") << q << "shape"
                                     << "[64, 63]"
                                     << "needs";
    QTest::newRow("shape negative") << q << "shape"
                                    << "[-64, 64]"
                                    << "shape";
    QTest::newRow("shape overflow") << q << "shape"
                                    << "[4294967296, 4294967296, 16]"
                                    << "overflows";
    QTest::newRow("shape not array") << q << "shape"
                                     << "4096"
                                     << "shape";
    QTest::newRow("offsets out of file") << q << "data_offsets"
                                         << "[0, 99999999999]"
                                         << "past the end";
    QTest::newRow("offsets reversed") << q << "data_offsets"
                                      << "[16384, 0]"
                                      << "reversed";
    QTest::newRow("offsets one value") << q << "data_offsets"
                                       << "[0]"
                                       << "data_offsets";
    QTest::newRow("offsets float") << q << "data_offsets"
                                   << "[0.5, 16384]"
                                   << "data_offsets";
    QTest::newRow("entry missing dtype") << q << "dtype"
                                         << "DELETE"
                                         << "dtype";
    QTest::newRow("entry missing offsets") << q << "data_offsets"
                                           << "DELETE"
                                           << "data_offsets";
    QTest::newRow("entry not object") << q << ""
                                      << "[1]"
                                      << "not a JSON object";
    QTest::newRow("missing tensor") << norm << ""
                                    << "DELETE"
                                    << "missing";
    QTest::newRow("wrong shape") << q << "shape"
                                 << "[32, 128]"
                                 << "[32, 128]";
    QTest::newRow("wrong rank") << norm << "shape"
                                << "[8, 8]"
                                << "[64]";
  }
  void badEntry() {
    QFETCH(QString, tensor);
    QFETCH(QString, field);
    QFETCH(QString, value);
    QFETCH(QString, needle);
    StFile f = StFile::read(good_ + "/model.safetensors");
    const std::string t = tensor.toStdString(), k = field.toStdString();
    QVERIFY(f.header.contains(t));
    if (value == "DELETE") {
      if (k.empty())
        f.header.erase(t);
      else
        f.header[t].erase(k);
    } else if (k.empty()) {
      f.header[t] = json::parse(value.toStdString());
    } else {
      f.header[t][k] = json::parse(value.toStdString());
    }
    const QString path = folderWith(f.bytes());
    HF_EXPECT_ERROR(LLM{config(path)}, path, tensor, needle);
  }

  void overlap() {
    StFile f = StFile::read(good_ + "/model.safetensors");
    f.header["model.layers.2.input_layernorm.weight"]["data_offsets"] =
        f.header["model.layers.3.input_layernorm.weight"]["data_offsets"];
    expectBroken(f.bytes(),
                 {"overlaps", "model.layers.2.input_layernorm.weight", "model.layers.3.input_layernorm.weight"});
    // Partial overlap: shift a norm by 4 bytes into the tensor written after it.
    f = StFile::read(good_ + "/model.safetensors");
    auto& off = f.header["model.layers.4.post_attention_layernorm.weight"]["data_offsets"];
    off = {off[0].get<uint64_t>() + 4, off[1].get<uint64_t>() + 4};
    expectBroken(f.bytes(),
                 {"overlaps", "model.layers.4.post_attention_layernorm.weight", "model.layers.4.mlp.gate_proj.weight"});
  }

  void metadataIgnored() {
    StFile f = StFile::read(good_ + "/model.safetensors");
    f.header["__metadata__"] = {{"format", "pt"}, {"anything", {1, 2, 3}}};
    const QString path = folderWith(f.bytes());
    LLM llm{config(path)};  // loads
    // An unused extra tensor (I64, e.g. position ids) is range-checked but not refused.
    f.header["model.extra.position_ids"] = {{"dtype", "I64"}, {"shape", {0}}, {"data_offsets", {0, 0}}};
    LLM llm2{config(folderWith(f.bytes()))};
    // Unaligned F32 data (odd header padding) is copied, not used in place, and still correct.
    std::string text = f.header.dump();
    text.append((8 - text.size() % 8) % 8 + 2, ' ');
    QByteArray b(8, '\0');
    const uint64_t n = text.size();
    std::memcpy(b.data(), &n, 8);
    b += QByteArray::fromStdString(text) + f.data;
    EngineConfig c = config(folderWith(b));
    const auto outs = LLM(c).generate({"Once upon a time"}, [] {
      SamplingParams p;
      p.temperature = 0;
      p.max_tokens = 8;
      return p;
    }());
    const auto ref = LLM(config(good_ + "/model.safetensors")).generate({"Once upon a time"}, [] {
      SamplingParams p;
      p.temperature = 0;
      p.max_tokens = 8;
      return p;
    }());
    QCOMPARE(outs[0].outputs[0].token_ids, ref[0].outputs[0].token_ids);
  }

  void biasRefused() {
    StFile f = StFile::read(good_ + "/model.safetensors");
    f.header["model.layers.0.self_attn.q_proj.bias"] = {{"dtype", "F32"}, {"shape", {0}}, {"data_offsets", {0, 0}}};
    const QString path = folderWith(f.bytes());
    HF_EXPECT_ERROR(LLM{config(path)}, path, "model.layers.0.self_attn.q_proj.bias", "bias");
  }

  void noCheckpoint() {
    const QString dir = tmp_.filePath("nockpt");
    copyFolder(good_, dir);
    QFile::remove(dir + "/model.safetensors");
    HF_EXPECT_ERROR(LLM{config(dir + "/x")}, dir, "model.safetensors");
    writeAll(dir + "/pytorch_model.bin", "x");
    HF_EXPECT_ERROR(LLM{config(dir + "/x")}, "PyTorch");
  }

  void shardIndex() {
    const QString dir = tmp_.filePath("shards");
    copyFolder(good_, dir);
    QFile::rename(dir + "/model.safetensors", dir + "/model-00001-of-00002.safetensors");
    const StFile f = StFile::read(dir + "/model-00001-of-00002.safetensors");
    json wm = json::object();
    for (const auto& [name, v] : f.header.items())
      if (name != "__metadata__") wm[name] = "model-00001-of-00002.safetensors";
    const QString index = dir + "/model.safetensors.index.json";
    auto writeIndex = [&](const json& j) { QVERIFY(writeAll(index, QByteArray::fromStdString(j.dump()))); };
    writeIndex({{"weight_map", wm}});
    LLM ok{config(index)};  // one shard is fine

    json bad = wm;
    bad["model.norm.weight"] = "model-00002-of-00002.safetensors";
    writeIndex({{"weight_map", bad}});
    HF_EXPECT_ERROR(LLM{config(index)}, index, "model-00002-of-00002.safetensors", "missing");
    // The shard exists but does not hold the tensor the index puts there.
    QFile::copy(storiesTokenizer(), dir + "/model-00002-of-00002.safetensors");
    HF_EXPECT_ERROR(LLM{config(index)}, "model-00002-of-00002.safetensors");
    QFile::remove(dir + "/model-00002-of-00002.safetensors");
    StFile small = StFile::read(good_ + "/model.safetensors");
    small.header = {{"x", small.header["model.norm.weight"]}};
    writeAll(dir + "/model-00002-of-00002.safetensors", small.bytes());
    HF_EXPECT_ERROR(LLM{config(index)}, index, "model.norm.weight", "does not hold it");

    bad = wm;
    bad["model.norm.weight"] = "../good/model.safetensors";
    writeIndex({{"weight_map", bad}});
    HF_EXPECT_ERROR(LLM{config(index)}, index, "not a file name");
    bad["model.norm.weight"] = 3;
    writeIndex({{"weight_map", bad}});
    HF_EXPECT_ERROR(LLM{config(index)}, index, "model.norm.weight");
    writeIndex({{"metadata", json::object()}});
    HF_EXPECT_ERROR(LLM{config(index)}, index, "weight_map");
    QVERIFY(writeAll(index, "{not json"));
    HF_EXPECT_ERROR(LLM{config(index)}, index, "JSON");
  }
};

QTEST_GUILESS_MAIN(TestHfSafetensors)
#include "test_hf_safetensors.moc"
