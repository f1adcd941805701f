// ajv (npm, JSON Schema draft 2020-12 with ajv-formats; tests/js/validate_json.mjs under Node) as
// the outside reference for structured outputs. Needs `node` on PATH and tests/js/node_modules
// (scripts/install-deps.sh); REQUIRE_AJV fails the test when either is missing and CI=true, else
// skips it.
#pragma once

#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "test_paths.h"

namespace ajvref {

inline QString js_dir() { return QStringLiteral(PAGEDCHAT_JS_DIR); }
/// Why ajv cannot run here, or "" when it can.
inline QString missing() {
  if (QStandardPaths::findExecutable("node").isEmpty()) return "node is not on PATH";
  if (!QFileInfo::exists(js_dir() + "/node_modules/ajv/dist/2020.js") ||
      !QFileInfo::exists(js_dir() + "/node_modules/ajv-formats/package.json"))
    return "tests/js/node_modules/ajv or ajv-formats is missing (run scripts/install-deps.sh)";
  return {};
}

/// One schema and the texts to check against it.
struct Case {
  nlohmann::ordered_json schema;
  std::vector<std::string> outputs;
};

/// ajv's verdict per case (validate_json.mjs's output: [{"outputs": [{"parses", "valid",
/// "errors"}]} or {"schemaError"}]); {"error": why} when node failed.
inline nlohmann::json validate(const std::vector<Case>& cases) {
  nlohmann::ordered_json in = nlohmann::ordered_json::array();
  for (const Case& c : cases) in.push_back({{"schema", c.schema}, {"outputs", c.outputs}});
  QTemporaryDir tmp;
  const QString path = tmp.filePath("cases.json");
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly)) return {{"error", "cannot write " + path.toStdString()}};
  const std::string text = in.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  f.write(text.data(), qint64(text.size()));
  f.close();
  QProcess p;
  p.start(QStandardPaths::findExecutable("node"), {js_dir() + "/validate_json.mjs", path});
  if (!p.waitForFinished(120000) || p.exitCode() != 0)
    return {{"error", "node failed: " + p.readAllStandardError().right(1500).toStdString()}};
  try {
    return nlohmann::json::parse(p.readAllStandardOutput().toStdString());
  } catch (const nlohmann::json::exception& e) {
    return {{"error", std::string("unreadable ajv output: ") + e.what()}};
  }
}

}  // namespace ajvref

#define REQUIRE_AJV()                                                      \
  do {                                                                     \
    const QString why = ajvref::missing();                                 \
    if (!why.isEmpty()) {                                                  \
      if (testpaths::inCI()) QFAIL(qPrintable("ajv unavailable: " + why)); \
      QSKIP(qPrintable("ajv unavailable: " + why));                        \
    }                                                                      \
  } while (0)
