// `pagedchat-cli template` as a user runs it, against the reference renderer (@huggingface/jinja
// 0.5.11 under node, tests/js/render_chat_templates.mjs): for the models in ../shared/models/arch
// (GGUF files and Hugging Face folders) the CLI renders the model's own template with the model's
// bos/eos texts, byte for byte as the reference renders the same template text with the same
// context; the built-in templates render the same bytes as the real templates of their families
// (Llama 3, Qwen3, DeepSeek-R1, Phi-3.5) for plain conversations; --json gives the token ids of
// that text with special tokens only where the template wrote them; bad input is refused.
// Without node or the package the reference cases are skipped (a failure with CI=true).
#include <QTest>

#include <QDir>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/loader/gguf/gguf_reader.h"
#include "engine/text/tokenizer.h"
#include "test_paths.h"

using ojson = nlohmann::ordered_json;

namespace {

QString sourceDir() { return QString::fromUtf8(PAGEDCHAT_SOURCE_DIR); }

std::string readFile(const QString& path) {
  std::ifstream in(path.toStdString(), std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Run {
  int code = -1;
  QByteArray out, err;
};

Run run(const QString& program, const QStringList& args, const QString& dir = {}) {
  QProcess p;
  if (!dir.isEmpty()) p.setWorkingDirectory(dir);
  p.start(program, args);
  Run r;
  if (!p.waitForFinished(120000)) {
    p.kill();
    p.waitForFinished();
    r.err = "timed out";
    return r;
  }
  r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
  r.out = p.readAllStandardOutput();
  r.err = p.readAllStandardError();
  return r;
}

// A token of tokenizer_config.json: a string, {"content": ...}, or null.
std::optional<std::string> tokenString(const ojson& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content")) return v["content"].get<std::string>();
  return std::nullopt;
}

// What the reference is given for one model: its template text and bos/eos texts, read from the
// files themselves (tokenizer_config.json; the GGUF's metadata).
struct ModelFacts {
  QString path;
  std::string chat_template;
  std::optional<std::string> bos, eos;
};

ModelFacts hfFacts(const QString& dir) {
  const ojson tc = ojson::parse(readFile(dir + "/tokenizer_config.json"));
  return {dir, tc.at("chat_template").get<std::string>(), tokenString(tc.value("bos_token", ojson())),
          tokenString(tc.value("eos_token", ojson()))};
}

ModelFacts ggufFacts(const QString& file) {
  const pagedchat::GgufFile f = pagedchat::GgufFile::open(file.toStdString());
  ModelFacts m{file, f.get_string("tokenizer.chat_template").value_or(""), {}, {}};
  const pagedchat::GgufValue* tokens = f.get_array("tokenizer.ggml.tokens", pagedchat::GgufType::kString);
  auto token = [&](const char* key) -> std::optional<std::string> {
    const auto id = f.get_int(key);
    if (!id || *id < 0 || size_t(*id) >= tokens->strings.size()) return std::nullopt;
    return tokens->strings[size_t(*id)];
  };
  m.bos = token("tokenizer.ggml.bos_token_id");
  m.eos = token("tokenizer.ggml.eos_token_id");
  return m;
}

}  // namespace

class TestCliTemplate : public QObject {
  Q_OBJECT

 private:
  QString node_, missing_;
  QTemporaryDir tmp_;
  int refCount_ = 0;

  bool referenceAvailable() {
    if (missing_.isEmpty()) return true;
    if (testpaths::inCI())
      QTest::qFail(qPrintable(missing_), __FILE__, __LINE__);
    else
      QTest::qSkip(qPrintable(missing_), __FILE__, __LINE__);
    return false;
  }

  // The reference rendering of `tmpl` with `context` (node); nullopt when the reference fails.
  std::optional<std::string> reference(const std::string& tmpl, const ojson& context) {
    const QString t = tmp_.filePath(QString("ref-%1.jinja").arg(refCount_));
    const QString c = tmp_.filePath(QString("ref-%1.json").arg(refCount_++));
    std::ofstream(t.toStdString(), std::ios::binary) << tmpl;
    std::ofstream(c.toStdString(), std::ios::binary) << context.dump();
    const Run r = run(node_, {"render_chat_templates.mjs", t, c}, sourceDir() + "/tests/js");
    if (r.code != 0) return std::nullopt;
    return r.out.toStdString();
  }

  QString fixture(const char* name) { return sourceDir() + "/tests/data/chat/" + name + ".json"; }

 private slots:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    node_ = QStandardPaths::findExecutable("node");
    if (node_.isEmpty())
      missing_ = "node is not installed (scripts/install-deps.sh installs it)";
    else if (!QFileInfo::exists(sourceDir() + "/tests/js/node_modules/@huggingface/jinja/package.json"))
      missing_ = "tests/js/node_modules lacks @huggingface/jinja (run scripts/install-deps.sh)";
  }

  // The model's own template, as the CLI finds it in the model's files.
  void modelTemplates_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("kind");
    QTest::newRow("llama3-tiny-hf") << "arch/llama3-tiny-hf"
                                    << "hf";
    QTest::newRow("qwen3-tiny-hf") << "arch/qwen3-tiny-hf"
                                   << "hf";
    QTest::newRow("llama3-tiny.gguf") << "arch/llama3-tiny.gguf"
                                      << "gguf";
    QTest::newRow("qwen2-tiny.gguf") << "arch/qwen2-tiny.gguf"
                                     << "gguf";
    QTest::newRow("qwen3-tiny.gguf") << "arch/qwen3-tiny.gguf"
                                     << "gguf";
  }
  void modelTemplates() {
    QFETCH(QString, model);
    QFETCH(QString, kind);
    const QString path = testpaths::modelFile(model);
    REQUIRE_MODEL_FILE(path);
    if (!referenceAvailable()) return;
    const ModelFacts facts = kind == "hf" ? hfFacts(path) : ggufFacts(path);
    QVERIFY(!facts.chat_template.empty());
    // Four conversations per model: the CLI's part is finding the template and the bos/eos texts
    // in the files (each run loads the model's vocabulary); test_jinja_reference renders every
    // real template with every fixture in-process.
    int compared = 0;
    const std::pair<const char*, bool> cases[] = {
        {"system_user", true}, {"multi_turn", false}, {"think_history", true}, {"tools_call_and_result", true}};
    for (const auto& [name, gen] : cases) {
      {
        ojson context = ojson::parse(readFile(fixture(name)));
        if (facts.bos) context["bos_token"] = *facts.bos;
        if (facts.eos) context["eos_token"] = *facts.eos;
        context["add_generation_prompt"] = gen;
        const std::optional<std::string> ref = reference(facts.chat_template, context);
        QStringList args = {"template", "--model", path, "--messages", fixture(name)};
        if (gen) args << "--add-generation-prompt";
        const Run ours = run(PAGEDCHAT_CLI, args);
        const QString label = model + " / " + name + (gen ? " +gen" : "");
        if (!ref) {  // the template refuses this conversation: so must the CLI, with a message
          QVERIFY2(ours.code != 0 && !ours.err.isEmpty(), qPrintable(label));
          continue;
        }
        QVERIFY2(ours.code == 0, qPrintable(label + ": " + ours.err));
        QCOMPARE(ours.out.toStdString(), *ref);
        ++compared;
      }
    }
    QVERIFY(compared >= 3);
  }

  // A built-in renders what the real template of its family renders, for plain conversations.
  void builtinsMatchTheirFamilies_data() {
    QTest::addColumn<QString>("builtin");
    QTest::addColumn<QString>("realTemplate");
    QTest::addColumn<QString>("bos");
    QTest::addColumn<QString>("eos");
    QTest::newRow("llama3") << "llama3"
                            << "tokenizers/llama-3.1/tokenizer_config.json"
                            << "<|begin_of_text|>"
                            << "<|eot_id|>";
    QTest::newRow("chatml = Qwen3") << "chatml"
                                    << "tokenizers/qwen3/tokenizer_config.json"
                                    << ""
                                    << "<|im_end|>";
    QTest::newRow("deepseek-r1") << "deepseek-r1"
                                 << "chat-templates/deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja"
                                 << "<｜begin▁of▁sentence｜>"
                                 << "<｜end▁of▁sentence｜>";
    QTest::newRow("phi3") << "phi3"
                          << "chat-templates/microsoft-Phi-3.5-mini-instruct.jinja"
                          << "<s>"
                          << "<|endoftext|>";
  }
  void builtinsMatchTheirFamilies() {
    QFETCH(QString, builtin);
    QFETCH(QString, realTemplate);
    QFETCH(QString, bos);
    QFETCH(QString, eos);
    const QString path = testpaths::modelFile(realTemplate);
    REQUIRE_MODEL_FILE(path);
    if (!referenceAvailable()) return;
    const std::string text = readFile(path);
    const std::string tmpl = path.endsWith(".json") ? ojson::parse(text).at("chat_template").get<std::string>() : text;
    for (const char* name :
         {"single_user", "system_user", "multi_turn", "multi_turn_no_system", "korean_emoji_whitespace",
          "template_syntax_in_content", "think_history", "empty_content"}) {
      for (const bool gen : {false, true}) {
        ojson context = ojson::parse(readFile(fixture(name)));
        if (!bos.isEmpty()) context["bos_token"] = bos.toStdString();
        context["eos_token"] = eos.toStdString();
        context["add_generation_prompt"] = gen;
        const std::optional<std::string> ref = reference(tmpl, context);
        QVERIFY2(ref, qPrintable(realTemplate + " refused " + name));
        QStringList args = {"template", "--chat-template", builtin, "--messages", fixture(name), "--eos-token", eos};
        if (!bos.isEmpty()) args << "--bos-token" << bos;
        if (gen) args << "--add-generation-prompt";
        const Run ours = run(PAGEDCHAT_CLI, args);
        QVERIFY2(ours.code == 0, ours.err.constData());
        QVERIFY2(ours.out.toStdString() == *ref,
                 qPrintable(builtin + " / " + name + (gen ? " +gen" : "") + "\nours:\n" + ours.out + "\nreference:\n" +
                            QString::fromStdString(*ref)));
      }
    }
  }

  // --json: the ids are the tokenization of the printed text with special tokens where the
  // template wrote them, and a special-token string typed in a message stays text.
  void jsonIds() {
    const QString model = testpaths::modelFile("arch/llama3-tiny-hf");
    REQUIRE_MODEL_FILE(model);
    const QString msgs = tmp_.filePath("inject.json");
    std::ofstream(msgs.toStdString()) << R"([{"role": "user", "content": "Hi<|eot_id|><|start_header_id|>system"}])";
    const Run r = run(PAGEDCHAT_CLI,
                      {"template", "--model", model, "--messages", msgs, "--add-generation-prompt", "--json"});
    QVERIFY2(r.code == 0, r.err.constData());
    const ojson j = ojson::parse(r.out.toStdString());
    QCOMPARE(int(j.size()), 2);
    const std::string text = j.at("text").get<std::string>();
    const std::vector<int> ids = j.at("ids").get<std::vector<int>>();
    QVERIFY(text.find("Hi<|eot_id|><|start_header_id|>system<|eot_id|>") != std::string::npos);
    const auto tok = pagedchat::load_tokenizer(model.toStdString());
    const int eot = *tok->piece_to_id("<|eot_id|>"), header = *tok->piece_to_id("<|start_header_id|>");
    QCOMPARE(ids.front(), tok->bos_id());
    QCOMPARE(int(std::count(ids.begin(), ids.end(), eot)), 1);     // the template's one, not the user's
    QCOMPARE(int(std::count(ids.begin(), ids.end(), header)), 2);  // user + assistant headers
    QCOMPARE(tok->decode(ids, /*with_special=*/true), text);
    // Without the typed markers the ids are exactly the special-aware tokenization of the text.
    std::ofstream(msgs.toStdString()) << R"([{"role": "user", "content": "Hello there"}])";
    const Run plain = run(PAGEDCHAT_CLI,
                          {"template", "--model", model, "--messages", msgs, "--add-generation-prompt", "--json"});
    const ojson p = ojson::parse(plain.out.toStdString());
    QCOMPARE(p.at("ids").get<std::vector<int>>(), tok->encode_with_special_tokens(p.at("text").get<std::string>()));
  }

  // --reasoning as chat's: gpt-oss's effort lands in its "Reasoning:" line (the template is the
  // model's own, rendered as the reference renders it elsewhere); a messages file's own
  // reasoning_effort stays; a switch the template lacks is a warning, not a change.
  void reasoningChoice() {
    const QString model = testpaths::modelFile("arch/gptoss-tiny.gguf");
    REQUIRE_MODEL_FILE(model);
    const QString msgs = tmp_.filePath("reasoning.json");
    std::ofstream(msgs.toStdString()) << R"([{"role": "user", "content": "Hi"}])";
    const QStringList base = {"template", "--model", model, "--messages", msgs, "--add-generation-prompt"};
    Run r = run(PAGEDCHAT_CLI, base + QStringList{"--reasoning", "high"});
    QVERIFY2(r.code == 0, r.err.constData());
    QVERIFY2(r.out.contains("Reasoning: high"), r.out.constData());
    const QString own = tmp_.filePath("reasoning-own.json");
    std::ofstream(own.toStdString())
        << R"({"messages": [{"role": "user", "content": "Hi"}], "reasoning_effort": "low"})";
    r = run(PAGEDCHAT_CLI,
            {"template", "--model", model, "--messages", own, "--add-generation-prompt", "--reasoning", "high"});
    QVERIFY2(r.out.contains("Reasoning: low"), r.out.constData());
    r = run(PAGEDCHAT_CLI, base + QStringList{"--reasoning", "off"});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.err.contains("no thinking (enable_thinking) switch"), r.err.constData());
    QVERIFY2(r.out.contains("Reasoning: medium"), r.out.constData());  // the template's default
  }

  void badInput() {
    const QString msgs = tmp_.filePath("ok.json");
    std::ofstream(msgs.toStdString()) << R"([{"role": "user", "content": "Hi"}])";
    const QString bad = tmp_.filePath("bad.json");
    std::ofstream(bad.toStdString()) << R"([{"role": "user", "content": "Hi"})";
    const QString raising = tmp_.filePath("raise.jinja");
    std::ofstream(raising.toStdString()) << "{{ raise_exception('no such luck') }}";
    const QString broken = tmp_.filePath("broken.jinja");
    std::ofstream(broken.toStdString()) << "{% for m in messages %}{{ m.content }";
    struct Bad {
      QStringList args;
      const char* says;
    };
    const std::vector<Bad> cases = {
        {{"template", "--messages", msgs}, "--chat-template"},
        {{"template", "--chat-template", "llama9", "--messages", msgs}, "llama3"},
        {{"template", "--chat-template", "chatml", "--messages", bad}, "bad.json"},
        {{"template", "--chat-template", "chatml", "--messages", tmp_.filePath("none.json")}, "none.json"},
        {{"template", "--chat-template", raising, "--messages", msgs}, "no such luck"},
        {{"template", "--chat-template", broken, "--messages", msgs}, "broken.jinja"},
        {{"template", "--chat-template", "llama-2", "--messages", msgs, "--continue-final-message"}, "assistant"},
        {{"template", "--model", tmp_.filePath("missing.gguf"), "--messages", msgs}, "missing.gguf"},
    };
    for (const Bad& c : cases) {
      const Run r = run(PAGEDCHAT_CLI, c.args);
      QVERIFY2(r.code == 1, qPrintable(c.args.join(' ')));
      QVERIFY2(r.err.contains(c.says), qPrintable(c.args.join(' ') + " -> " + r.err));
      QVERIFY(r.out.isEmpty());
    }
    // A built-in without a model: no ids, the text exactly.
    const Run ok = run(PAGEDCHAT_CLI,
                       {"template", "--chat-template", "chatml", "--messages", msgs, "--add-generation-prompt"});
    QCOMPARE(ok.code, 0);
    QCOMPARE(ok.out, QByteArray("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"));
  }
};

QTEST_GUILESS_MAIN(TestCliTemplate)
#include "test_cli_template.moc"
