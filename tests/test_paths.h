// Where tests find ../shared/models: $PAGEDCHAT_MODELS_DIR, else the path CMake compiled in.
// With CI=true a missing model is a failure (QFAIL), otherwise the test is skipped.
#pragma once

#include <QDir>
#include <QFileInfo>
#include <QString>
#include <QTest>

namespace testpaths {

inline QString modelsDir() {
  const QByteArray env = qgetenv("PAGEDCHAT_MODELS_DIR");
  return env.isEmpty() ? QString::fromUtf8(PAGEDCHAT_MODELS_DIR) : QString::fromLocal8Bit(env);
}
inline QString stories260K() { return modelsDir() + "/stories260K"; }
inline QString modelFile(const QString& rel) { return modelsDir() + "/" + rel; }
inline bool inCI() { return qgetenv("CI") == "true"; }

}  // namespace testpaths

/// Use at the top of a test function: fails in CI, skips elsewhere, when `path` does not exist.
#define REQUIRE_MODEL_FILE(path)                                                        \
  do {                                                                                  \
    if (!QFileInfo::exists(path)) {                                                     \
      if (testpaths::inCI()) QFAIL(qPrintable("missing model data: " + QString(path))); \
      QSKIP(qPrintable("missing model data: " + QString(path)));                        \
    }                                                                                   \
  } while (0)
