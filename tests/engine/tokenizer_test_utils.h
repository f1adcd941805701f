// Helpers shared by the tokenizer tests: llama.cpp's test-vector files and printing ids.
#pragma once

#include <QFile>
#include <QString>
#include <QStringList>

#include <string>
#include <vector>

namespace toktest {

struct Vector {
  std::string text;
  std::vector<int> ids;
};

/// Reads `<base>.inp` / `<base>.out` as llama.cpp's tests/test-tokenizer-0.cpp does: the input is
/// split on "\n__ggml_vocab_test__\n" (the last text ends at that separator too; nothing is
/// stripped), each output line is one text's ids separated by spaces.
inline std::vector<Vector> read_vectors(const QString& base) {
  QFile inp(base + ".inp"), out(base + ".out");
  if (!inp.open(QIODevice::ReadOnly) || !out.open(QIODevice::ReadOnly)) return {};
  const std::string raw = inp.readAll().toStdString();
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> texts;
  for (std::size_t pos = 0; pos < raw.size();) {
    const std::size_t next = raw.find(sep, pos);
    if (next == std::string::npos) {
      texts.push_back(raw.substr(pos));
      break;
    }
    texts.push_back(raw.substr(pos, next - pos));
    pos = next + sep.size();
  }
  std::vector<Vector> v;
  const QList<QByteArray> lines = out.readAll().split('\n');
  for (std::size_t i = 0; i < texts.size(); ++i) {
    Vector x;
    x.text = texts[i];
    if (int(i) < lines.size())
      for (const QByteArray& t : lines[int(i)].trimmed().split(' '))
        if (!t.isEmpty()) x.ids.push_back(t.toInt());
    v.push_back(std::move(x));
  }
  if (lines.size() < qsizetype(texts.size())) return {};
  return v;
}

inline QString show(const std::vector<int>& ids) {
  QStringList s;
  for (int id : ids) s << QString::number(id);
  return "[" + s.join(' ') + "]";
}

inline QString escaped(const std::string& s) {
  QString q = QString::fromUtf8(s.data(), qsizetype(s.size()));
  q.replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r");
  return "\"" + q + "\"";
}

}  // namespace toktest
