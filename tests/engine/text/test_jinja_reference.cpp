// Differential test of pagedchat's Jinja interpreter (engine/text/jinja) against the reference
// renderer, @huggingface/jinja 0.5.11 (tests/js, installed by scripts/install-deps.sh): the same
// (template, context) pairs go through both, and each pair must give byte-identical output, or both
// must fail; a raise_exception() must carry the same message in both.
//
// Pairs: every real chat template of the shared models (chat-templates/*.jinja and the
// chat_template of tokenizers/*/ and arch/*-hf/ tokenizer_config.json) x every conversation in
// tests/data/chat x add_generation_prompt false/true, with each model's bos/eos tokens; and every
// synthetic template of tests/data/jinja/*.jinja with tests/data/jinja/context.json. Node renders
// them all in one batch (render_chat_templates.mjs --batch); strftime_now reads one fixed instant
// in UTC on both sides. A last case runs the jinja_render tool itself against node's output.
//
// Without node or the package the test is skipped, and fails with CI=true.
// JINJA_REFERENCE_VERBOSE=1 lists the pairs that fail in both, with both errors.
#include <QTest>

#include <QDir>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <ctime>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/loader/gguf/gguf_reader.h"
#include "engine/loader/gguf/gguf_tokenizer.h"
#include "engine/text/jinja/jinja.h"
#include "test_paths.h"

using ojson = nlohmann::ordered_json;
namespace jinja = pagedchat::jinja;

namespace {

constexpr std::time_t kNow = 1721980800;  // 2024-07-26 08:00:00 UTC

QString sourceDir() { return QString::fromUtf8(PAGEDCHAT_SOURCE_DIR); }

std::string readFile(const QString& path) {
  std::ifstream in(path.toStdString(), std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A token of tokenizer_config.json: a string, {"content": ...}, or null (absent).
std::optional<std::string> tokenString(const ojson& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content")) return v["content"].get<std::string>();
  return std::nullopt;
}

std::string chatTemplateOf(const ojson& config) {
  const ojson& ct = config.at("chat_template");
  if (ct.is_string()) return ct.get<std::string>();
  for (const ojson& e : ct) {
    if (e.value("name", "") == "default") return e.at("template").get<std::string>();
  }
  return ct.at(0).at("template").get<std::string>();
}

// "=== name" sections of a synthetic template file (see tests/data/jinja/README.md).
std::vector<std::pair<std::string, std::string>> sections(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t line_end = text.find('\n', pos);
    if (text.compare(pos, 4, "=== ") != 0 || line_end == std::string::npos) {
      pos = line_end == std::string::npos ? text.size() : line_end + 1;
      continue;
    }
    std::string name = text.substr(pos + 4, line_end - pos - 4);
    while (!name.empty() && (name.back() == '\r' || name.back() == ' ')) name.pop_back();
    std::size_t next = line_end + 1;
    while (next < text.size() && text.compare(next, 4, "=== ") != 0) {
      const std::size_t nl = text.find('\n', next);
      next = nl == std::string::npos ? text.size() : nl + 1;
    }
    std::string body = text.substr(line_end + 1, next - line_end - 1);
    if (!body.empty() && body.back() == '\n') body.pop_back();
    out.emplace_back(std::move(name), std::move(body));
    pos = next;
  }
  return out;
}

// Every key is data except the trusted ones.
jinja::Value contextValue(const ojson& ctx) {
  static const std::set<std::string> trusted = {
      "bos_token", "eos_token", "pad_token", "unk_token", "add_generation_prompt", "enable_thinking"};
  jinja::Value v = jinja::Value::dict();
  for (auto it = ctx.begin(); it != ctx.end(); ++it) {
    v.set(it.key(), jinja::value_from_json(it.value(), !trusted.count(it.key())));
  }
  return v;
}

struct Case {
  std::string id;
  std::string tmpl;
  ojson context;
};

struct Outcome {
  bool ok = false;
  std::string text;  // the rendering, or the error
  bool raised = false;
  std::string raised_message;
};

Outcome renderOurs(const Case& c) {
  Outcome o;
  try {
    const jinja::Template t(c.tmpl, c.id);
    o.text = t.render(contextValue(c.context), {}, kNow).text;
    o.ok = true;
  } catch (const jinja::Error& e) {
    o.text = e.what();
    o.raised = e.kind() == jinja::Error::Kind::kRaised;
    o.raised_message = e.message();
  }
  return o;
}

std::string excerpt(const std::string& s) { return s.size() > 400 ? s.substr(0, 400) + "..." : s; }

// The first difference of two renderings, with some context.
std::string firstDifference(const std::string& a, const std::string& b) {
  std::size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  const std::size_t from = i > 60 ? i - 60 : 0;
  return "at byte " + std::to_string(i) + "\n      ours: " + ojson(a.substr(from, 160)).dump() +
         "\n      ref:  " + ojson(b.substr(from, 160)).dump();
}

}  // namespace

// At the top of a test function (QSKIP / QFAIL return from the function they are in): fails in CI,
// skips elsewhere, when node or the package is missing.
#define REQUIRE_REFERENCE()                               \
  do {                                                    \
    if (!missing_.isEmpty()) {                            \
      if (testpaths::inCI()) QFAIL(qPrintable(missing_)); \
      QSKIP(qPrintable(missing_));                        \
    }                                                     \
  } while (0)

class TestJinjaReference : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    qputenv("TZ", "UTC");
    tzset();
    node_ = QStandardPaths::findExecutable("node");
    const QString pkg = sourceDir() + "/tests/js/node_modules/@huggingface/jinja/package.json";
    if (node_.isEmpty()) {
      missing_ = "node is not installed (scripts/install-deps.sh installs it)";
    } else if (!QFileInfo::exists(pkg)) {
      missing_ = "tests/js/node_modules lacks @huggingface/jinja (run scripts/install-deps.sh)";
    } else {
      const ojson p = ojson::parse(readFile(pkg));
      if (p.value("version", "") != "0.5.11") missing_ = "@huggingface/jinja is not version 0.5.11";
    }
  }

  void realTemplatesMatchReference() {
    REQUIRE_REFERENCE();
    struct Real {
      QString file;  // relative to the models folder
      std::optional<std::string> bos, eos;
    };
    std::vector<Real> templates = {
        {"chat-templates/Qwen-Qwen2.5-7B-Instruct.jinja", std::nullopt, "<|im_end|>"},
        {"chat-templates/deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", "<｜begin▁of▁sentence｜>",
         "<｜end▁of▁sentence｜>"},
        {"chat-templates/meta-llama-Llama-3.1-8B-Instruct.jinja", "<|begin_of_text|>", "<|eot_id|>"},
        {"chat-templates/microsoft-Phi-3.5-mini-instruct.jinja", "<s>", "<|endoftext|>"},
        {"chat-templates/mistralai-Mistral-Nemo-Instruct-2407.jinja", "<s>", "</s>"},
        {"tokenizers/llama-3.1/tokenizer_config.json", {}, {}},
        {"tokenizers/qwen3/tokenizer_config.json", {}, {}},
    };
    for (const QString& d : QDir(testpaths::modelFile("arch")).entryList({"*-hf"}, QDir::Dirs)) {
      templates.push_back({"arch/" + d + "/tokenizer_config.json", {}, {}});
    }
    // Qwen3.5's template as the GGUF carries it (reasoning, tools in its XML form).
    templates.push_back({"arch/qwen35-tiny.gguf", std::nullopt, "<|im_end|>"});
    // gpt-oss's Harmony template (channels, reasoning_effort, tool namespaces).
    templates.push_back({"arch/gptoss-tiny.gguf", std::nullopt, "<|return|>"});
    // Gemma 4's template (its turns, thought channel, tool declarations with <|"|> quotes), as
    // tests/data/gemma4moe's file carries it.
    templates.push_back({sourceDir() + "/tests/data/gemma4moe/gemma4moe-tiny.gguf", "<s>", "<turn|>"});
    const QStringList fixtures = QDir(sourceDir() + "/tests/data/chat").entryList({"*.json"}, QDir::Files, QDir::Name);
    QVERIFY2(fixtures.size() >= 15, "tests/data/chat holds the conversation fixtures");
    std::vector<Case> cases;
    for (Real& r : templates) {
      const QString path = r.file.startsWith('/') ? r.file : testpaths::modelFile(r.file);
      REQUIRE_MODEL_FILE(path);
      std::string tmpl = r.file.endsWith(".gguf")
                             ? pagedchat::read_gguf_chat_template(pagedchat::GgufFile::open(path.toStdString()))
                             : readFile(path);
      if (r.file.endsWith(".json")) {
        const ojson config = ojson::parse(tmpl);
        tmpl = chatTemplateOf(config);
        r.bos = tokenString(config.value("bos_token", ojson()));
        r.eos = tokenString(config.value("eos_token", ojson()));
      }
      for (const QString& f : fixtures) {
        for (const bool agp : {false, true}) {
          ojson ctx = ojson::parse(readFile(sourceDir() + "/tests/data/chat/" + f));
          if (r.bos) ctx["bos_token"] = *r.bos;
          if (r.eos) ctx["eos_token"] = *r.eos;
          ctx["add_generation_prompt"] = agp;
          cases.push_back({r.file.toStdString() + " x " + f.toStdString() + (agp ? " +gen" : ""), tmpl, ctx});
          if (r.file.endsWith(".gguf")) {  // reasoning off too (gpt-oss: a low reasoning effort)
            ctx["enable_thinking"] = false;
            ctx["reasoning_effort"] = "low";
            cases.push_back(
                {r.file.toStdString() + " x " + f.toStdString() + (agp ? " +gen" : "") + " -think", tmpl, ctx});
          }
        }
      }
    }
    compare(cases, static_cast<int>(cases.size() / 2));
  }

  void syntheticTemplatesMatchReference() {
    REQUIRE_REFERENCE();
    const QString dir = sourceDir() + "/tests/data/jinja";
    const ojson ctx = ojson::parse(readFile(dir + "/context.json"));
    std::vector<Case> cases;
    std::size_t error_cases = 0;
    for (const QString& f : QDir(dir).entryList({"*.jinja"}, QDir::Files, QDir::Name)) {
      for (auto& [name, body] : sections(readFile(dir + "/" + f))) {
        cases.push_back({f.toStdString() + ":" + name, body, ctx});
        if (f == "errors.jinja") ++error_cases;
      }
    }
    QVERIFY2(cases.size() >= 120, "the synthetic templates are there");
    // errors.jinja must fail in both; edge_cases.jinja mixes both kinds.
    compare(cases, static_cast<int>(cases.size() * 2 / 3), static_cast<int>(error_cases));
  }

  // The jinja_render tool (what the differential test's renderer is for people) prints exactly
  // what node prints, for a real template with tools.
  void renderToolMatchesReference() {
    REQUIRE_REFERENCE();
    const QString config = testpaths::modelFile("tokenizers/qwen3/tokenizer_config.json");
    REQUIRE_MODEL_FILE(config);
    QTemporaryDir tmp;
    ojson ctx = ojson::parse(readFile(sourceDir() + "/tests/data/chat/tools_string_arguments.json"));
    ctx["eos_token"] = "<|im_end|>";
    ctx["add_generation_prompt"] = true;
    const QString ctx_path = tmp.filePath("context.json");
    std::ofstream(ctx_path.toStdString()) << ctx.dump();
    const QStringList common = {config, ctx_path, "--now=" + QString::number(kNow)};
    QProcess ours;
    ours.start(QString::fromUtf8(JINJA_RENDER), common);
    QVERIFY(ours.waitForFinished(60000));
    QCOMPARE(ours.exitCode(), 0);
    QProcess ref;
    ref.setWorkingDirectory(sourceDir() + "/tests/js");
    ref.start(node_, QStringList{"render_chat_templates.mjs"} + common);
    QVERIFY(ref.waitForFinished(60000));
    QCOMPARE(ref.exitCode(), 0);
    const QByteArray a = ours.readAllStandardOutput(), b = ref.readAllStandardOutput();
    QVERIFY(a.size() > 500);
    QCOMPARE(a, b);
  }

 private:
  // Renders `cases` with node in one batch and here; every pair must agree. At least
  // `min_rendered` pairs must render (so the comparison is not vacuous) and at least
  // `min_failed` must fail in both.
  void compare(const std::vector<Case>& cases, int min_rendered, int min_failed = 0) {
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    ojson manifest = ojson::array();
    for (const Case& c : cases)
      manifest.push_back({{"id", c.id}, {"template", c.tmpl}, {"context", c.context}, {"now", kNow}});
    const QString manifest_path = tmp.filePath("manifest.json"), results_path = tmp.filePath("results.json");
    std::ofstream(manifest_path.toStdString(), std::ios::binary) << manifest.dump();
    QProcess node;
    node.setWorkingDirectory(sourceDir() + "/tests/js");
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("TZ", "UTC");
    node.setProcessEnvironment(env);
    node.start(node_, {"render_chat_templates.mjs", "--batch", manifest_path, results_path});
    QVERIFY2(node.waitForFinished(300000), "node finished");
    QVERIFY2(node.exitCode() == 0, node.readAllStandardError().constData());
    const ojson results = ojson::parse(readFile(results_path));

    int same = 0, both_failed = 0;
    std::vector<std::string> problems;
    for (const Case& c : cases) {
      const ojson& r = results.at(c.id);
      const Outcome ours = renderOurs(c);
      const bool ref_ok = r.at("ok").get<bool>();
      if (ours.ok && ref_ok) {
        const std::string ref_text = r.at("text").get<std::string>();
        if (ours.text == ref_text) {
          ++same;
        } else {
          problems.push_back(c.id + ": different output " + firstDifference(ours.text, ref_text));
        }
      } else if (!ours.ok && !ref_ok) {
        ++both_failed;
        const std::string ref_error = r.at("error").get<std::string>();
        if (qEnvironmentVariableIsSet("JINJA_REFERENCE_VERBOSE")) {
          qInfo("both fail: %s\n    ours: %s\n    ref:  %s", c.id.c_str(), excerpt(ours.text).c_str(),
                excerpt(ref_error).c_str());
        }
        if (ours.raised && ours.raised_message != ref_error) {
          problems.push_back(c.id + ": raise_exception messages differ: ours " + ojson(ours.raised_message).dump() +
                             ", ref " + ojson(ref_error).dump());
        }
      } else if (ours.ok) {
        problems.push_back(c.id + ": only the reference fails (" + excerpt(r.at("error").get<std::string>()) + ")");
      } else {
        problems.push_back(c.id + ": only ours fails (" + excerpt(ours.text) + ")");
      }
    }
    qInfo("%zu pairs compared: %d identical renderings, %d failing in both, %zu problems", cases.size(), same,
          both_failed, problems.size());
    std::string report;
    for (std::size_t i = 0; i < problems.size() && i < 15; ++i) report += "\n  " + problems[i];
    QVERIFY2(problems.empty(), report.c_str());
    QVERIFY2(same >= min_rendered, qPrintable(QString("only %1 pairs rendered").arg(same)));
    QVERIFY2(both_failed >= min_failed, qPrintable(QString("only %1 pairs failed in both").arg(both_failed)));
  }

  QString node_;
  QString missing_;
};

QTEST_GUILESS_MAIN(TestJinjaReference)
#include "test_jinja_reference.moc"
