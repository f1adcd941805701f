// Reasoning replies (app/engine/reasoning.h): the split of "<think>…</think> answer" texts, the
// MessageListModel roles the bubble shows, and the engine worker's side: a prompt whose template
// opens the reasoning (DeepSeek-R1's generation prompt ends with "<think>\n") gives a reply whose
// text starts with the tag, so that it is shown, stored and sent again like any reasoning reply;
// the conversation sent again keeps the stored text and the template drops the old reasoning.
// The pane's reasoning setting: the choices the loaded model's template offers, what a choice
// does to the prompt the worker sends, and the max-tokens default of a model that reasons.
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include "app/engine/engine_worker.h"
#include "app/engine/reasoning.h"
#include "app/panes/message_list_model.h"
#include "app/panes/pane_settings.h"
#include "app_test_util.h"
#include "engine/text/chat_template.h"
#include "engine/text/tokenizer.h"

class TestReasoning : public QObject {
  Q_OBJECT

 private slots:
  void split_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("reasoning");
    QTest::addColumn<QString>("answer");
    QTest::addColumn<bool>("has");
    QTest::addColumn<bool>("open");
    QTest::newRow("qwen3") << "<think>\nAdd them.\n</think>\n\n4"
                           << "Add them."
                           << "4" << true << false;
    QTest::newRow("leading space") << "  <think>a</think>b"
                                   << "a"
                                   << "b" << true << false;
    QTest::newRow("still thinking") << "<think>\nLet me"
                                    << "Let me"
                                    << "" << true << true;
    QTest::newRow("only the tag") << "<think>"
                                  << ""
                                  << "" << true << true;
    QTest::newRow("empty reasoning") << "<think>\n\n</think>\n\nHi"
                                     << ""
                                     << "Hi" << true << false;
    QTest::newRow("no reasoning") << "Plain answer"
                                  << ""
                                  << "Plain answer" << false << false;
    QTest::newRow("tag later") << "See <think>x</think> here"
                               << ""
                               << "See <think>x</think> here" << false << false;
    QTest::newRow("close only") << "thoughts</think>answer"
                                << ""
                                << "thoughts</think>answer" << false << false;
    QTest::newRow("two blocks") << "<think>a</think>b<think>c</think>d"
                                << "a"
                                << "b<think>c</think>d" << true << false;
    QTest::newRow("korean") << "<think>생각 중</think>\n안녕하세요"
                            << "생각 중"
                            << "안녕하세요" << true << false;
  }
  void split() {
    QFETCH(QString, text);
    QFETCH(QString, reasoning);
    QFETCH(QString, answer);
    QFETCH(bool, has);
    QFETCH(bool, open);
    const ReasoningSplit s = splitReasoning(text);
    QCOMPARE(s.reasoning, reasoning);
    QCOMPARE(s.answer, answer);
    QCOMPARE(s.hasReasoning, has);
    QCOMPARE(s.open, open);
  }

  void modelRoles() {
    MessageListModel m;
    MessageRecord user;
    user.role = MessageRole::kUser;
    user.text = QStringLiteral("<think>mine</think>");
    MessageRecord reply;
    reply.role = MessageRole::kAssistant;
    reply.text = QStringLiteral("<think>\nPondering");
    m.append(user);
    const int row = m.append(reply, /*streaming=*/true);
    const QModelIndex u = m.index(0), r = m.index(row);
    QCOMPARE(m.data(u, MessageListModel::AnswerRole).toString(), user.text);  // a user's text is never split
    QCOMPARE(m.data(u, MessageListModel::ReasoningRole).toString(), QString());
    QCOMPARE(m.data(r, MessageListModel::ReasoningRole).toString(), QStringLiteral("Pondering"));
    QVERIFY(m.data(r, MessageListModel::ThinkingRole).toBool());
    QSignalSpy changed(&m, &QAbstractItemModel::dataChanged);
    m.appendText(row, QStringLiteral("</think>\n\nDone."));
    m.flushTextChanges();
    QVERIFY(!changed.isEmpty());
    const QList<int> roles = changed.last().at(2).value<QList<int>>();
    QVERIFY(roles.contains(MessageListModel::AnswerRole) && roles.contains(MessageListModel::ThinkingRole));
    QCOMPARE(m.data(r, MessageListModel::AnswerRole).toString(), QStringLiteral("Done."));
    QVERIFY(!m.data(r, MessageListModel::ThinkingRole).toBool());
    QCOMPARE(m.data(r, MessageListModel::TextRole).toString(), QStringLiteral("<think>\nPondering</think>\n\nDone."));
    QVERIFY(m.roleNames().values().contains("reasoning"));
  }

  // DeepSeek-R1's template opens <think> in the prompt: the worker starts the reply's text with it.
  void promptThatOpensReasoning() {
    REQUIRE_MODEL_FILE(testpaths::stories260K());
    for (const char* name : {"deepseek-r1", "chatml"}) {
      auto* worker = new EngineWorker(apptest::storiesConfig(), QString::fromLatin1(name));
      QThread thread;
      worker->moveToThread(&thread);
      connect(&thread, &QThread::finished, worker, &QObject::deleteLater);
      thread.start();
      QSignalSpy loaded(worker, &EngineWorker::modelLoaded);
      QString text;
      bool finished = false;
      connect(
          worker, &EngineWorker::stepFinished, this,
          [&](const QList<RequestDelta>& deltas) {
            for (const RequestDelta& d : deltas) {
              text += d.text;
              finished = finished || d.finished;
            }
          },
          Qt::QueuedConnection);
      QMetaObject::invokeMethod(worker, &EngineWorker::loadModel, Qt::QueuedConnection);
      QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 60000);
      pagedchat::SamplingParams p;
      p.temperature = 0;
      p.max_tokens = 6;
      p.output_kind = pagedchat::RequestOutputKind::kDelta;
      const QList<PromptMessage> messages = {{MessageRole::kUser, QStringLiteral("Hi")}};
      QMetaObject::invokeMethod(
          worker, [worker, messages, p] { worker->submit(QStringLiteral("r"), messages, p); }, Qt::QueuedConnection);
      QTRY_VERIFY_WITH_TIMEOUT(finished, 30000);
      thread.quit();
      thread.wait();
      if (QByteArray(name) == "deepseek-r1") {
        QVERIFY2(text.startsWith(QStringLiteral("<think>\n")), qPrintable(text));
        QVERIFY(splitReasoning(text).hasReasoning);
      } else {
        QVERIFY2(!text.startsWith(QStringLiteral("<think>")), qPrintable(text));
      }
    }
  }

  // The setting itself: validated, stored, reset to the model's default; the choices come with
  // the model's suggestions and the summary names a choice only where the model has it.
  void paneSetting() {
    PaneSettings s;
    QCOMPARE(s.reasoning(), QString());
    QVERIFY(s.reasoningChoices().isEmpty());
    QVERIFY(s.validate({{QStringLiteral("reasoning"), QStringLiteral("max")}}).contains(QStringLiteral("reasoning")));
    QVERIFY(!s.apply({{QStringLiteral("reasoning"), QStringLiteral("maximum")}}).isEmpty());
    QCOMPARE(s.reasoning(), QString());
    QSignalSpy changed(&s, &PaneSettings::changed);
    QVERIFY(s.apply({{QStringLiteral("reasoning"), QStringLiteral("high")}}).isEmpty());
    QCOMPARE(s.reasoning(), QStringLiteral("high"));
    QCOMPARE(changed.count(), 1);
    QVERIFY(!s.summary().contains(QStringLiteral("reasoning")));  // the model has no effort
    s.setModelDefaults({{QStringLiteral("reasoningChoices"), QStringList{"low", "medium", "high"}}});
    QCOMPARE(changed.count(), 2);
    QCOMPARE(s.reasoningChoices(), (QStringList{"low", "medium", "high"}));
    QVERIFY2(s.summary().contains(QStringLiteral("reasoning high")), qPrintable(s.summary()));
    PaneSettings restored;
    restored.fromMap(s.toMap());
    QCOMPARE(restored.reasoning(), QStringLiteral("high"));
    QVariantMap stored = s.toMap();
    stored.insert(QStringLiteral("reasoning"), QStringLiteral("bogus"));  // a hand-edited file
    restored.fromMap(stored);
    QCOMPARE(restored.reasoning(), QStringLiteral("high"));
    s.reset();
    QCOMPARE(s.reasoning(), QString());
  }

  // The worker offers the choices of the template it loaded, gives a model that reasons the
  // context as its max tokens, and renders each request with its choice: Gemma 4's thinking
  // switch and a template's reasoning_effort change the prompt; a choice the template has no
  // switch for leaves it as the template's default.
  void workerAppliesChoice() {
    REQUIRE_MODEL_FILE(testpaths::stories260K());
    QTemporaryDir dir;
    const QString effortTemplate = dir.filePath(QStringLiteral("effort.jinja"));
    {
      QFile f(effortTemplate);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(
          "{% for m in messages %}{{ m.content }}\n{% endfor %}"
          "{% if reasoning_effort is defined %}Reasoning effort is {{ reasoning_effort }} today\n{% endif %}");
    }
    struct Case {
      QString chatTemplate;
      QStringList choices;
      bool reasons;
    };
    for (const Case& c :
         {Case{QStringLiteral("gemma4"), {"on", "off"}, true}, Case{effortTemplate, {"low", "medium", "high"}, true},
          Case{QStringLiteral("llama-2"), {}, false}}) {
      auto* worker = new EngineWorker(apptest::storiesConfig(), c.chatTemplate);
      QThread thread;
      worker->moveToThread(&thread);
      connect(&thread, &QThread::finished, worker, &QObject::deleteLater);
      thread.start();
      QSignalSpy loaded(worker, &EngineWorker::modelLoaded);
      QSignalSpy defaults(worker, &EngineWorker::samplingDefaultsKnown);
      QHash<QString, int> promptTokens;
      connect(
          worker, &EngineWorker::stepFinished, this,
          [&](const QList<RequestDelta>& deltas) {
            for (const RequestDelta& d : deltas)
              if (d.finished) promptTokens.insert(d.requestId, d.numPromptTokens);
          },
          Qt::QueuedConnection);
      QMetaObject::invokeMethod(worker, &EngineWorker::loadModel, Qt::QueuedConnection);
      QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 60000);
      QCOMPARE(defaults.count(), 1);
      const QVariantMap d = defaults.at(0).at(0).toMap();
      QCOMPARE(d.value(QStringLiteral("reasoningChoices")).toStringList(), c.choices);
      // stories260K's context is 512 and it has no generation_config.json.
      QCOMPARE(d.contains(QStringLiteral("maxTokens")), c.reasons);
      if (c.reasons) QCOMPARE(d.value(QStringLiteral("maxTokens")).toInt(), 512);
      pagedchat::SamplingParams p;
      p.temperature = 0;
      p.max_tokens = 1;
      const QList<PromptMessage> messages = {{MessageRole::kUser, QStringLiteral("Hi")}};
      const QStringList all = {"", "on", "off", "low", "high"};
      for (const QString& choice : all)
        QMetaObject::invokeMethod(
            worker, [worker, messages, p, choice] { worker->submit("r" + choice, messages, p, false, choice); },
            Qt::QueuedConnection);
      QTRY_COMPARE_WITH_TIMEOUT(promptTokens.size(), all.size(), 30000);
      thread.quit();
      thread.wait();
      const int base = promptTokens.value(QStringLiteral("r"));
      QVERIFY(base > 0);
      for (const QString& choice : all) {
        const int n = promptTokens.value("r" + choice);
        // Gemma 4's default is thinking off; "on" adds the system turn with <|think|>.
        const bool changes = c.choices.contains(choice) && choice != QLatin1String("off");
        QVERIFY2((n != base) == changes,
                 qPrintable(QStringLiteral("%1 '%2': %3 vs %4 tokens").arg(c.chatTemplate, choice).arg(n).arg(base)));
      }
    }
  }

  // The stored reply goes back to the template as it is; DeepSeek-R1's and Qwen3's drop the old
  // reasoning, so the next prompt holds only the answer.
  void historyDropsOldReasoning() {
    const std::vector<pagedchat::ChatMessage> m = {
        {"user", "2+2?"}, {"assistant", "<think>\nadding\n</think>\n\n4"}, {"user", "and 3+3?"}};
    pagedchat::ChatRenderOptions o;
    o.bos_token = "";
    o.eos_token = "";
    for (const char* name : {"deepseek-r1", "chatml"}) {
      const std::string prompt = pagedchat::ChatTemplate::builtin(name).render(m, o).text;
      QVERIFY2(prompt.find("adding") == std::string::npos, prompt.c_str());
      QVERIFY2(prompt.find("4") != std::string::npos, prompt.c_str());
    }
    QVERIFY(pagedchat::prompt_opens_reasoning(pagedchat::ChatTemplate::builtin("deepseek-r1").render(m, o)));
    QVERIFY(!pagedchat::prompt_opens_reasoning(pagedchat::ChatTemplate::builtin("chatml").render(m, o)));
    o.enable_thinking = false;  // Qwen3: an empty, closed <think></think>
    QVERIFY(!pagedchat::prompt_opens_reasoning(pagedchat::ChatTemplate::builtin("chatml").render(m, o)));
    // "<think>" a user typed at the end of a continued reply is data, not the template's.
    pagedchat::TemplatedText typed;
    typed.append("<|im_start|>assistant\n", false);
    typed.append("<think>", true);
    QVERIFY(!pagedchat::prompt_opens_reasoning(typed));
  }
};

QTEST_GUILESS_MAIN(TestReasoning)
#include "test_reasoning.moc"
