// transformers.js (@lenml/tokenizers, tests/js/tokenize.mjs under Node) as the outside reference
// for tokenizer.json files. Needs `node` on PATH and tests/js/node_modules (scripts/install-deps.sh);
// REQUIRE_TRANSFORMERS_JS fails the test when either is missing and CI=true, else skips it.
#pragma once

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <optional>
#include <string>
#include <vector>

#include "test_paths.h"

namespace jsref {

inline QString js_dir() { return QStringLiteral(PAGEDCHAT_JS_DIR); }
inline QString node() { return QStandardPaths::findExecutable("node"); }
/// Why transformers.js cannot run here, or "" when it can.
inline QString missing() {
  if (node().isEmpty()) return "node is not on PATH";
  if (!QFileInfo::exists(js_dir() + "/node_modules/@lenml/tokenizers/dist/main.mjs"))
    return "tests/js/node_modules/@lenml/tokenizers is missing (run scripts/install-deps.sh)";
  return {};
}

struct Result {
  std::vector<std::vector<int>> ids;
  std::vector<std::string> texts;  ///< decode(ids) with skip_special_tokens=false, when asked for
  std::vector<QString> errors;     ///< per text: what transformers.js threw, or ""
  QString error;
};

/// Tokenizes `texts` (valid UTF-8) with the tokenizer.json at `json_path` (and the
/// tokenizer_config.json beside it). `plain`: special added tokens removed first (their strings
/// are text, HF split_special_tokens=True).
inline Result tokenize(const QString& json_path, const std::vector<std::string>& texts, bool plain = false,
                       bool decode = false, bool add_special = false) {
  Result r;
  QTemporaryDir tmp;
  QJsonArray arr;
  for (const auto& t : texts) arr.append(QString::fromUtf8(t.data(), qsizetype(t.size())));
  const QString in = tmp.filePath("texts.json");
  QFile f(in);
  if (!f.open(QIODevice::WriteOnly)) {
    r.error = "cannot write " + in;
    return r;
  }
  f.write(QJsonDocument(arr).toJson(QJsonDocument::Compact));
  f.close();
  QStringList args{js_dir() + "/tokenize.mjs", json_path, in};
  if (plain) args << "--plain";
  if (decode) args << "--decode";
  if (add_special) args << "--add-special";
  QProcess p;
  p.start(node(), args);
  if (!p.waitForFinished(300000) || p.exitCode() != 0) {
    r.error = "node failed: " + QString::fromUtf8(p.readAllStandardError().right(1500));
    return r;
  }
  const QJsonDocument doc = QJsonDocument::fromJson(p.readAllStandardOutput());
  for (const QJsonValue& v : doc.array()) {
    if (v.toObject().contains("error"))
      r.errors.push_back(v.toObject()["error"].toString());
    else
      r.errors.push_back({});
    std::vector<int> ids;
    for (const QJsonValue& id : v.toObject()["ids"].toArray()) ids.push_back(id.toInt());
    r.ids.push_back(std::move(ids));
    if (decode) r.texts.push_back(v.toObject()["text"].toString().toStdString());
  }
  if (r.ids.size() != texts.size()) r.error = "node returned " + QString::number(r.ids.size()) + " results";
  return r;
}

}  // namespace jsref

#define REQUIRE_TRANSFORMERS_JS()                                                      \
  do {                                                                                 \
    const QString why = jsref::missing();                                              \
    if (!why.isEmpty()) {                                                              \
      if (testpaths::inCI()) QFAIL(qPrintable("transformers.js unavailable: " + why)); \
      QSKIP(qPrintable("transformers.js unavailable: " + why));                        \
    }                                                                                  \
  } while (0)
