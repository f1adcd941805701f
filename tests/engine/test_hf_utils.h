// Helpers shared by the Hugging Face tests (test_hf*.cpp): stories260K written as an HF folder,
// the golden sequence and its logits, safetensors header surgery, error expectations.
#pragma once

#include <QTest>

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "engine/loader/hf/hf_writer.h"
#include "engine/loader/llama2c/llama2c_loader.h"
#include "engine/model/decoder_model.h"
#include "kernels/ops.h"
#include "test_paths.h"

namespace hftest {

inline QByteArray readAll(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}
inline bool writeAll(const QString& path, const QByteArray& data) {
  QFile f(path);
  return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(data) == data.size();
}
inline QJsonObject readJson(const QString& path) { return QJsonDocument::fromJson(readAll(path)).object(); }
inline std::vector<int> toIds(const QJsonArray& a) {
  std::vector<int> v;
  for (const auto& x : a) v.push_back(x.toInt());
  return v;
}
inline QString storiesBin() { return testpaths::stories260K() + "/stories260K.bin"; }
inline QString storiesTokenizer() { return testpaths::stories260K() + "/tok512.model"; }

/// Writes stories260K as an HF folder `dir` in `dtype`.
inline void writeStories(const QString& dir, const std::string& dtype) {
  const pagedchat::LoadedModel m = pagedchat::load_llama2c(storiesBin().toStdString());
  pagedchat::write_hf_folder(m, storiesTokenizer().toStdString(), dir.toStdString(), dtype);
}

/// Copies every file of folder `from` into a new folder `to`.
inline void copyFolder(const QString& from, const QString& to) {
  QDir().mkpath(to);
  for (const QString& f : QDir(from).entryList(QDir::Files)) {
    QFile::remove(to + "/" + f);
    QFile::copy(from + "/" + f, to + "/" + f);
  }
}

/// The once_upon sequence (prompt ids, then generated ids) the golden logits were taken over.
inline std::vector<int> onceUponSequence() {
  const QJsonObject g = readJson(testpaths::stories260K() + "/golden/once_upon.json");
  std::vector<int> seq = toIds(g["prompt_ids_with_bos"].toArray());
  for (int id : toIds(g["generated_ids"].toArray())) seq.push_back(id);
  return seq;
}

/// Logits [rows, vocab] after feeding seq[0..rows) through `m` (prefill in uneven chunks).
inline std::vector<float> computeLogits(const pagedchat::LoadedModel& m, const std::vector<int>& seq, int rows) {
  using namespace pagedchat;
  auto backend = kernels::make_cpu_backend(2);
  DecoderModel llama(m.config, m.weights, *backend);
  const int bs = 16, nblocks = (rows + bs - 1) / bs;
  KVCache cache(m.config, nblocks, bs);
  std::vector<int> table(nblocks);
  for (int i = 0; i < nblocks; ++i) table[i] = nblocks - 1 - i;
  std::vector<float> all;
  int pos = 0;
  while (pos < rows) {
    const int chunk = std::min(rows - pos, pos == 0 ? 1 : 37);
    ForwardBatch b;
    b.max_blocks_per_seq = nblocks;
    b.block_tables = table;
    b.query_start_loc = {0, chunk};
    b.seq_lens = {pos + chunk};
    for (int i = 0; i < chunk; ++i) {
      const int p = pos + i;
      b.input_ids.push_back(seq[p]);
      b.positions.push_back(p);
      b.slot_mapping.push_back(int64_t(table[p / bs]) * bs + p % bs);
      b.logits_indices.push_back(i);
    }
    std::vector<float> logits;
    llama.forward(b, cache, logits);
    all.insert(all.end(), logits.begin(), logits.end());
    pos += chunk;
  }
  return all;
}

inline double maxAbsDiff(const float* a, const float* b, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; ++i) m = std::max(m, double(std::fabs(a[i] - b[i])));
  return m;
}

/// A safetensors file split into its JSON header and its data buffer, for surgery.
struct StFile {
  nlohmann::json header;
  QByteArray data;
  static StFile read(const QString& path) {
    const QByteArray all = readAll(path);
    uint64_t n = 0;
    std::memcpy(&n, all.constData(), 8);
    StFile f;
    f.header = nlohmann::json::parse(all.constData() + 8, all.constData() + 8 + n);
    f.data = all.mid(int(8 + n));
    return f;
  }
  /// The file bytes with `headerText` as the header (padded to 8) and the same data.
  QByteArray bytes(std::string headerText) const {
    headerText.append((8 - headerText.size() % 8) % 8, ' ');
    QByteArray out(8, '\0');
    const uint64_t n = headerText.size();
    std::memcpy(out.data(), &n, 8);
    out += QByteArray::fromStdString(headerText);
    out += data;
    return out;
  }
  QByteArray bytes() const { return bytes(header.dump()); }
};

/// Runs `fn`, expects an exception whose message contains every needle; returns "" or why not.
template <typename Fn>
QString expectError(Fn fn, const QStringList& needles) {
  try {
    fn();
  } catch (const std::exception& e) {
    const QString msg = QString::fromUtf8(e.what());
    for (const auto& n : needles)
      if (!msg.contains(n)) return "message '" + msg + "' lacks '" + n + "'";
    return {};
  }
  return "no exception";
}

}  // namespace hftest

#define HF_EXPECT_ERROR(expr, ...)                                                     \
  do {                                                                                 \
    const QString err_ = hftest::expectError([&] { expr; }, QStringList{__VA_ARGS__}); \
    QVERIFY2(err_.isEmpty(), qPrintable(err_));                                        \
  } while (0)
