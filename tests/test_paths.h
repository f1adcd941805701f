// Where tests find ../shared/models: $PAGEDCHAT_MODELS_DIR, else the path CMake compiled in.
// With CI=true a missing model is a failure (QFAIL), otherwise the test is skipped.
#pragma once

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QString>
#include <QTest>

#include <cstring>
#include <limits>

namespace testpaths {

inline QString modelsDir() {
  const QByteArray env = qgetenv("PAGEDCHAT_MODELS_DIR");
  return env.isEmpty() ? QString::fromUtf8(PAGEDCHAT_MODELS_DIR) : QString::fromLocal8Bit(env);
}
inline QString stories260K() { return modelsDir() + "/stories260K"; }
inline QString modelFile(const QString& rel) { return modelsDir() + "/" + rel; }
inline bool inCI() { return qgetenv("CI") == "true"; }

/// stories260K (its .bin and tok512.model) copied into `dir` with every token embedding NaN (the
/// 512 x 64 table after the .bin's 7-int header): every logit is NaN, so an engine step that
/// samples throws. False when a file cannot be copied or written.
inline bool writeNanStories260K(const QString& dir) {
  for (const char* name : {"stories260K.bin", "tok512.model"})
    if (!QFile::copy(stories260K() + "/" + name, dir + "/" + QString::fromLatin1(name))) return false;
  QFile bin(dir + "/stories260K.bin");
  if (!bin.open(QIODevice::ReadWrite)) return false;
  QByteArray nan(4 * 512 * 64, '\0');
  const float q = std::numeric_limits<float>::quiet_NaN();
  for (int i = 0; i < 512 * 64; ++i) std::memcpy(nan.data() + 4 * i, &q, 4);
  return bin.seek(28) && bin.write(nan) == nan.size();
}

}  // namespace testpaths

/// Use at the top of a test function: fails in CI, skips elsewhere, when `path` does not exist.
#define REQUIRE_MODEL_FILE(path)                                                        \
  do {                                                                                  \
    if (!QFileInfo::exists(path)) {                                                     \
      if (testpaths::inCI()) QFAIL(qPrintable("missing model data: " + QString(path))); \
      QSKIP(qPrintable("missing model data: " + QString(path)));                        \
    }                                                                                   \
  } while (0)
