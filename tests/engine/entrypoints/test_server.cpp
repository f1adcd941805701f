// pagedchat-cli serve, used as outside programs use it: the official OpenAI Node client (npm
// `openai`, tests/js/openai_client.mjs) and curl, against servers this test starts on free loopback
// ports. Greedy completions of stories260K are checked against llama2.c run.c's golden text.
#include <QTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>

#include <memory>

#include "js_reference.h"
#include "serve_process.h"
#include "test_paths.h"

namespace {

struct Http {
  int status = -1;
  QByteArray body;
};

/// curl: `method` on `url` with an optional JSON body and headers; the status and the body.
Http curl(const QString& method, const QString& url, const QByteArray& body = {}, const QStringList& headers = {}) {
  QStringList args{"-s", "-S", "-X", method, "-o", "-", "-w", "\n%{http_code}", url};
  for (const QString& h : headers) args << "-H" << h;
  if (!body.isNull())
    args << "-H"
         << "Content-Type: application/json"
         << "--data-binary"
         << "@-";
  QProcess p;
  p.start("curl", args);
  p.waitForStarted();
  if (!body.isNull()) p.write(body);
  p.closeWriteChannel();
  Http r;
  if (!p.waitForFinished(120000)) return r;
  const QByteArray out = p.readAllStandardOutput();
  const int nl = out.lastIndexOf('\n');
  r.status = out.mid(nl + 1).trimmed().toInt();
  r.body = out.left(nl);
  return r;
}

QJsonObject json(const QByteArray& b) { return QJsonDocument::fromJson(b).object(); }

/// One Prometheus sample's value ("name{labels} value"), or -1.
double metric(const QByteArray& text, const QString& name) {
  for (const QByteArray& line : text.split('\n'))
    if (line.startsWith(name.toUtf8() + "{") || line.startsWith(name.toUtf8() + " "))
      return line.split(' ').last().toDouble();
  return -1;
}

QJsonObject runClient(const QStringList& args, QString* error) {
  QProcess p;
  p.start(jsref::node(), QStringList{jsref::js_dir() + "/openai_client.mjs"} + args);
  if (!p.waitForFinished(240000) || p.exitCode() != 0) {
    *error = "openai_client.mjs failed: " + QString::fromUtf8(p.readAllStandardError().right(3000));
    return {};
  }
  const QByteArray out = p.readAllStandardOutput();
  QJsonParseError pe;
  const QJsonDocument d = QJsonDocument::fromJson(out, &pe);
  if (!d.isObject()) *error = "openai_client.mjs printed no JSON object: " + QString::fromUtf8(out.right(2000));
  return d.object();
}

QString goldenContinuation(int chars) {
  QFile f(testpaths::stories260K() + "/golden/once_upon.json");
  if (!f.open(QIODevice::ReadOnly)) return {};
  const QString full = json(f.readAll())["full_text"].toString();
  return full.mid(QStringLiteral("Once upon a time").size(), chars);
}

}  // namespace

class TestServer : public QObject {
  Q_OBJECT

  std::unique_ptr<Server> stories_;

 private slots:
  void initTestCase() {
    REQUIRE_MODEL_FILE(testpaths::stories260K() + "/stories260K.bin");
    if (QStandardPaths::findExecutable("curl").isEmpty()) QFAIL("curl is not on PATH (scripts/install-deps.sh)");
    stories_ = std::make_unique<Server>(
        QStringList{"--model", testpaths::stories260K(), "--served-model-name", "stories260K", "--max-num-seqs", "8"});
    QVERIFY2(stories_->waitReady(), stories_->stderrText().constData());
  }

  void healthModelsAndErrors() {
    QCOMPARE(curl("GET", stories_->base() + "/health").status, 200);
    const Http models = curl("GET", stories_->v1() + "/models");
    QCOMPARE(models.status, 200);
    QCOMPARE(json(models.body)["data"].toArray()[0].toObject()["id"].toString(), QString("stories260K"));

    const Http notFound = curl("GET", stories_->v1() + "/nothing");
    QCOMPARE(notFound.status, 404);
    QVERIFY(json(notFound.body)["error"].toObject()["message"].toString().contains("/v1/nothing"));

    // The wrong method on a path that exists: 405, not 404.
    const Http getPost = curl("GET", stories_->v1() + "/chat/completions");
    QCOMPARE(getPost.status, 405);
    QVERIFY2(json(getPost.body)["error"].toObject()["message"].toString().contains("takes POST"),
             getPost.body.constData());
    QCOMPARE(curl("POST", stories_->v1() + "/models", "{}").status, 405);
    QCOMPARE(curl("DELETE", stories_->v1() + "/completions", "{}").status, 405);

    // A whole number beyond any 64-bit integer says so; tools must be a list.
    const Http hugeMax = curl("POST", stories_->v1() + "/completions",
                              R"({"model": "stories260K", "prompt": "a", "max_tokens": 1e30})");
    QCOMPARE(hugeMax.status, 400);
    QVERIFY2(json(hugeMax.body)["error"].toObject()["message"].toString().contains("out of range"),
             hugeMax.body.constData());
    const Http hugeNegative = curl("POST", stories_->v1() + "/completions",
                                   R"({"model": "stories260K", "prompt": "a", "max_tokens": -1e30})");
    QVERIFY2(json(hugeNegative.body)["error"].toObject()["message"].toString().contains("out of range"),
             hugeNegative.body.constData());
    // 1e16 is the integer 10000000000000000, written either way.
    QCOMPARE(curl("POST", stories_->v1() + "/completions",
                  R"({"model": "stories260K", "prompt": "a", "max_tokens": 2, "seed": 1e16})")
                 .status,
             200);
    const Http toolsString = curl(
        "POST", stories_->v1() + "/chat/completions",
        R"({"model": "stories260K", "messages": [{"role": "user", "content": "hi"}], "tools": "x"})");
    QCOMPARE(toolsString.status, 400);
    QCOMPARE(json(toolsString.body)["error"].toObject()["param"].toString(), QString("tools"));

    const Http badJson = curl("POST", stories_->v1() + "/completions", "{\"model\": ");
    QCOMPARE(badJson.status, 400);
    QCOMPARE(json(badJson.body)["error"].toObject()["type"].toString(), QString("invalid_request_error"));

    const Http hugeNumber = curl("POST", stories_->v1() + "/completions",
                                 R"({"model": "stories260K", "prompt": "a", "temperature": 1e400})");
    QCOMPARE(hugeNumber.status, 400);
    // Finite in JSON, beyond a float: named as out of range, not reported as "inf".
    const Http beyondFloat = curl("POST", stories_->v1() + "/completions",
                                  R"({"model": "stories260K", "prompt": "a", "temperature": 1e308})");
    QCOMPARE(beyondFloat.status, 400);
    QVERIFY2(json(beyondFloat.body)["error"].toObject()["message"].toString().contains("out of range"),
             beyondFloat.body.constData());

    const Http noPrompt = curl("POST", stories_->v1() + "/completions", R"({"model": "stories260K"})");
    QCOMPARE(noPrompt.status, 400);
    QCOMPARE(json(noPrompt.body)["error"].toObject()["param"].toString(), QString("prompt"));

    const Http badN = curl("POST", stories_->v1() + "/completions",
                           R"({"model": "stories260K", "prompt": "a", "n": 0})");
    QCOMPARE(badN.status, 400);
    QCOMPARE(json(badN.body)["error"].toObject()["param"].toString(), QString("n"));

    // A chat message without a role, or with one that is not text: 400 naming the field and why.
    const Http noRole = curl("POST", stories_->v1() + "/chat/completions",
                             R"({"model": "stories260K", "messages": [{"content": "hi"}]})");
    QCOMPARE(noRole.status, 400);
    QCOMPARE(json(noRole.body)["error"].toObject()["param"].toString(), QString("messages[0].role"));
    QVERIFY2(json(noRole.body)["error"].toObject()["message"].toString().contains("is required"),
             noRole.body.constData());
    const Http numberRole = curl("POST", stories_->v1() + "/chat/completions",
                                 R"({"model": "stories260K", "messages": [{"role": 7, "content": "hi"}]})");
    QCOMPARE(numberRole.status, 400);
    QVERIFY2(json(numberRole.body)["error"].toObject()["message"].toString().contains("must be a string, got a number"),
             numberRole.body.constData());

    // A role outside the API's (a template would drop its text without a word): 400 naming it.
    const Http wizard = curl("POST", stories_->v1() + "/chat/completions",
                             R"({"model": "stories260K", "messages": [{"role": "wizard", "content": "hi"}]})");
    QCOMPARE(wizard.status, 400);
    QCOMPARE(json(wizard.body)["error"].toObject()["param"].toString(), QString("messages[0].role"));
    QVERIFY2(json(wizard.body)["error"].toObject()["message"].toString().contains("\"wizard\""),
             wizard.body.constData());

    // No model named (or null): the served one, as vLLM and llama.cpp's server take it.
    for (const char* body :
         {R"({"prompt": "a", "max_tokens": 2})", R"({"model": null, "prompt": "a", "max_tokens": 2})"}) {
      const Http unnamed = curl("POST", stories_->v1() + "/completions", body);
      QVERIFY2(unnamed.status == 200, unnamed.body.constData());
      QCOMPARE(json(unnamed.body)["model"].toString(), QString("stories260K"));
    }

    // allowed_token_ids: every generated token is one of them (two different single ids give two
    // different runs of one repeated token); empty or out of the vocabulary: 400 naming it.
    QStringList runs;
    for (int id : {100, 200}) {
      const Http only = curl(
          "POST", stories_->v1() + "/completions",
          QByteArray(R"({"prompt": [1, 300], "max_tokens": 4, "logprobs": 0, "allowed_token_ids": [)") +
              QByteArray::number(id) + "]}");
      QVERIFY2(only.status == 200, only.body.constData());
      const QJsonArray tokens =
          json(only.body)["choices"].toArray()[0].toObject()["logprobs"].toObject()["tokens"].toArray();
      QCOMPARE(tokens.size(), 4);
      for (const auto t : tokens) QCOMPARE(t.toString(), tokens[0].toString());
      runs << tokens[0].toString();
    }
    QVERIFY2(runs[0] != runs[1], qPrintable(runs.join(", ")));
    for (const char* bad : {"[]", "[99999999]", "\"x\""}) {
      const Http refused = curl("POST", stories_->v1() + "/completions",
                                QByteArray(R"({"prompt": "a", "allowed_token_ids": )") + bad + "}");
      QCOMPARE(refused.status, 400);
      QVERIFY2(json(refused.body)["error"].toObject()["message"].toString().contains("allowed_token_ids"),
               refused.body.constData());
    }
    // Restrictions no token satisfies (only EOS allowed while min_tokens masks it): the engine
    // ends that request alone, and the server says why: a 400, or in a stream an error object
    // before [DONE].
    const QByteArray impossible = R"("prompt": "a", "max_tokens": 5, "allowed_token_ids": [2], "min_tokens": 3)";
    const Http whole = curl("POST", stories_->v1() + "/completions", "{" + impossible + "}");
    QCOMPARE(whole.status, 400);
    QVERIFY2(json(whole.body)["error"].toObject()["message"].toString().contains("no token satisfies"),
             whole.body.constData());
    const Http streamed = curl("POST", stories_->v1() + "/completions", "{" + impossible + R"(, "stream": true})");
    QCOMPARE(streamed.status, 200);
    const qsizetype errorAt = streamed.body.indexOf("no token satisfies");
    QVERIFY2(errorAt > 0 && streamed.body.indexOf("data: [DONE]") > errorAt, streamed.body.constData());
    QVERIFY2(streamed.body.contains(R"("code":400)") || streamed.body.contains(R"("code": 400)"),
             streamed.body.constData());
    // vLLM's other sampling extras are refused by name, not ignored; their "off" values pass.
    const Http badWords = curl("POST", stories_->v1() + "/completions", R"({"prompt": "a", "bad_words": ["the"]})");
    QCOMPARE(badWords.status, 400);
    QCOMPARE(json(badWords.body)["error"].toObject()["param"].toString(), QString("bad_words"));
    // Several at once: all named, the first as the param.
    const Http several = curl("POST", stories_->v1() + "/completions",
                              R"({"prompt": "a", "use_beam_search": true, "prompt_logprobs": 1, "bad_words": ["x"]})");
    QCOMPARE(several.status, 400);
    QCOMPARE(json(several.body)["error"].toObject()["param"].toString(), QString("bad_words"));
    const QString severalText = json(several.body)["error"].toObject()["message"].toString();
    QVERIFY2(severalText.contains("use_beam_search") && severalText.contains("prompt_logprobs"),
             qPrintable(severalText));
    QCOMPARE(curl("POST", stories_->v1() + "/completions",
                  R"({"prompt": "a", "max_tokens": 1, "bad_words": [], "use_beam_search": false})")
                 .status,
             200);

    // An earlier answer without text (null or left out) is an empty one; a question is not.
    const Http nullAnswer = curl("POST", stories_->v1() + "/chat/completions",
                                 R"({"model": "stories260K", "max_tokens": 2, "messages": [{"role": "user",
                                 "content": "hi"}, {"role": "assistant", "content": null}, {"role": "user",
                                 "content": "again"}]})");
    QVERIFY2(nullAnswer.status == 200, nullAnswer.body.constData());
    const Http noCalls = curl("POST", stories_->v1() + "/chat/completions",
                              R"({"model": "stories260K", "max_tokens": 2, "messages": [{"role": "user",
                              "content": "hi"}, {"role": "assistant", "content": null, "tool_calls": []},
                              {"role": "user", "content": "again"}]})");
    QVERIFY2(noCalls.status == 200, noCalls.body.constData());  // an empty list is no calls
    const Http nullQuestion = curl("POST", stories_->v1() + "/chat/completions",
                                   R"({"model": "stories260K", "messages": [{"role": "user", "content": null}]})");
    QCOMPARE(nullQuestion.status, 400);
    QCOMPARE(json(nullQuestion.body)["error"].toObject()["param"].toString(), QString("messages[0].content"));

    // An unknown model whose name holds a NUL: 404 naming it whole (escaped), not cut at the NUL.
    const Http nulModel = curl("POST", stories_->v1() + "/completions", R"({"model": "abc\u0000def", "prompt": "a"})");
    QCOMPARE(nulModel.status, 404);
    QVERIFY2(json(nulModel.body)["error"].toObject()["message"].toString().contains(QStringLiteral("abc\\u0000def")),
             nulModel.body.constData());

    // A role the template does not know, with a NUL in it: the message names it whole (escaped).
    const Http nulRole = curl("POST", stories_->v1() + "/chat/completions",
                              R"({"model": "stories260K", "messages": [{"role": "us\u0000er", "content": "hi"}]})");
    QCOMPARE(nulRole.status, 400);
    const QString nulMessage = json(nulRole.body)["error"].toObject()["message"].toString();
    QVERIFY2(nulMessage.contains(QStringLiteral("\"us\\u0000er\"")) && nulMessage.contains(QStringLiteral("roles are")),
             nulRole.body.constData());

    // A prompt over max_model_len (512 for the llama2.c checkpoint): 400 naming the lengths.
    QByteArray longPrompt = "{\"model\": \"stories260K\", \"prompt\": [";
    for (int i = 0; i < 600; ++i) longPrompt += (i ? ",100" : "100");
    longPrompt += "]}";
    const Http tooLong = curl("POST", stories_->v1() + "/completions", longPrompt);
    QCOMPARE(tooLong.status, 400);
    QVERIFY2(json(tooLong.body)["error"].toObject()["message"].toString().contains("maximum context length is 512"),
             tooLong.body.constData());

    // max_tokens at INT_MAX: the total in the message is computed without overflowing.
    const Http hugeMaxTokens = curl("POST", stories_->v1() + "/completions",
                                    R"({"model": "stories260K", "prompt": [100, 101], "max_tokens": 2147483647})");
    QCOMPARE(hugeMaxTokens.status, 400);
    QVERIFY2(
        json(hugeMaxTokens.body)["error"].toObject()["message"].toString().contains("you requested 2147483649 tokens"),
        hugeMaxTokens.body.constData());
  }

  void greedyCompletionMatchesRunC() {
    const Http r = curl(
        "POST", stories_->v1() + "/completions",
        R"({"model": "stories260K", "prompt": "Once upon a time", "max_tokens": 30, "temperature": 0})");
    QCOMPARE(r.status, 200);
    const QJsonObject o = json(r.body);
    const QString text = o["choices"].toArray()[0].toObject()["text"].toString();
    const QString golden = goldenContinuation(text.size());
    QVERIFY(!golden.isEmpty());
    QCOMPARE(text, golden);
    QCOMPARE(o["choices"].toArray()[0].toObject()["finish_reason"].toString(), QString("length"));
    QCOMPARE(o["usage"].toObject()["prompt_tokens"].toInt(), 5);  // BOS + 4, as run.c's golden
    QCOMPARE(o["usage"].toObject()["completion_tokens"].toInt(), 30);
  }

  void streamedByCurl() {
    const Http r = curl(
        "POST", stories_->v1() + "/completions",
        R"({"model": "stories260K", "prompt": "Once upon a time", "max_tokens": 20, "temperature": 0, "stream": true})");
    QCOMPARE(r.status, 200);
    QString text;
    int events = 0;
    bool done = false;
    for (const QByteArray& line : r.body.split('\n')) {
      if (!line.startsWith("data: ")) continue;
      const QByteArray data = line.mid(6);
      QVERIFY2(!done, "an event after [DONE]");
      if (data == "[DONE]") {
        done = true;
        continue;
      }
      ++events;
      for (const auto c : json(data)["choices"].toArray()) text += c.toObject()["text"].toString();
    }
    QVERIFY(done);
    QVERIFY(events >= 2);
    QCOMPARE(text, goldenContinuation(text.size()));
    QVERIFY(text.size() > 40);
  }

  void officialClientCompletions() {
    if (!jsref::missing().isEmpty()) QFAIL(qPrintable(jsref::missing()));
    QString error;
    const QJsonObject o = runClient({"completions", stories_->v1(), "stories260K"}, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QCOMPARE(o["models"].toArray()[0].toString(), QString("stories260K"));
    const QJsonObject c = o["completion"].toObject();
    QCOMPARE(c["text"].toString(), goldenContinuation(c["text"].toString().size()));
    QCOMPARE(c["object"].toString(), QString("text_completion"));
    QCOMPARE(c["usage"].toObject()["completion_tokens"].toInt(), 40);
    const QJsonObject s = o["completion_stream"].toObject();
    QCOMPARE(s["text"].toString(), c["text"].toString());  // streamed = not streamed
    QCOMPARE(s["finish_reason"].toString(), QString("length"));
    QCOMPARE(s["usage"].toObject()["total_tokens"].toInt(), 45);  // include_usage: the last chunk
    // n = 2 with a seed: two choices, reproducible.
    const QJsonArray n2 = o["n2"].toArray();
    QCOMPARE(n2.size(), 2);
    QCOMPARE(n2[0].toObject()["index"].toInt(), 0);
    QCOMPARE(n2[1].toObject()["index"].toInt(), 1);
    QCOMPARE(o["n2_again"].toArray()[0].toString(), n2[0].toObject()["text"].toString());
    QCOMPARE(o["n2_again"].toArray()[1].toString(), n2[1].toObject()["text"].toString());
    // A stop string ends the text before it ("...a little girl named Lily" in the golden).
    const QJsonObject stop = o["stop"].toObject();
    QCOMPARE(stop["finish_reason"].toString(), QString("stop"));
    QCOMPARE(stop["stop_reason"].toString(), QString("Lily"));
    QVERIFY(!stop["text"].toString().contains("Lily"));
    QCOMPARE(stop["text"].toString(), goldenContinuation(stop["text"].toString().size()));
    QVERIFY(goldenContinuation(stop["text"].toString().size() + 4).endsWith("Lily"));
    // logprobs: 5 tokens, each with its top-3 alternatives, greedy = the most likely.
    const QJsonObject lp = o["logprobs"].toObject();
    QCOMPARE(lp["tokens"].toArray().size(), 5);
    QCOMPARE(lp["token_logprobs"].toArray().size(), 5);
    for (const auto t : lp["top_logprobs"].toArray()) {
      QVERIFY(t.toObject().size() >= 3);
      double best = -1e30;
      for (const auto v : t.toObject()) best = std::max(best, v.toDouble());
      QVERIFY(best <= 0);
    }
    for (int i = 0; i < 5; ++i) {
      double best = -1e30;
      for (const auto v : lp["top_logprobs"].toArray()[i].toObject()) best = std::max(best, v.toDouble());
      QCOMPARE(lp["token_logprobs"].toArray()[i].toDouble(), best);
    }
    // Errors as the client sees them.
    QCOMPARE(o["bad_temperature"].toObject()["status"].toInt(), 400);
    QCOMPARE(o["bad_temperature"].toObject()["param"].toString(), QString("temperature"));
    QCOMPARE(o["bad_model"].toObject()["status"].toInt(), 404);
    QCOMPARE(o["too_long"].toObject()["status"].toInt(), 400);
    // The aborted stream: the client stopped reading; its request is freed.
    QCOMPARE(o["abort_chunks"].toInt(), 3);
    QTRY_VERIFY_WITH_TIMEOUT(metric(curl("GET", stories_->base() + "/metrics").body, "vllm:num_requests_running") == 0,
                             30000);
    const QByteArray m = curl("GET", stories_->base() + "/metrics").body;
    QCOMPARE(metric(m, "vllm:num_free_kv_cache_blocks"), metric(m, "vllm:num_kv_cache_blocks"));
    // One KV-cache group of every layer (no sliding windows), nothing held now.
    QVERIFY2(m.contains("pagedchat:kv_cache_group_blocks_in_use{model_name=\"stories260K\",group=\"0\",kind=\"full_"
                        "attention\",sliding_window=\"0\",layers=\"5\"} 0\n"),
             m.constData());
    QVERIFY(metric(m, "vllm:generation_tokens_total") >= 40 + 40 + 48 + 48);
    QVERIFY(m.contains("vllm:time_to_first_token_seconds_bucket{model_name=\"stories260K\",le=\"+Inf\"}"));
    // stories260K makes the aborted stream's 400 tokens in ~40 ms: on a loaded machine they can all
    // be made before the client's close arrives, so the request ends "abort" or "length" (a
    // deterministic abort of a stream: test_security_server's goneClientAborts, on a slow model).
    // (Two more ended "abort" earlier: the requests no token satisfies.)
    const bool aborted = m.contains(
        "vllm:request_success_total{model_name=\"stories260K\",finished_reason=\"abort\"} 3\n");
    QVERIFY2(
        aborted || m.contains("vllm:request_success_total{model_name=\"stories260K\",finished_reason=\"abort\"} 2\n"),
        m.constData());
  }

  // A sliding-window model reserves the null block (KV block 0): the start-up line counts the
  // blocks requests can hold, as /metrics does.
  // --speculative-config: the same completions as the server without it, streamed or not, and
  // vLLM's spec_decode counters in /metrics.
  void speculativeDecodingServer() {
    Server s({"--model", testpaths::stories260K(), "--served-model-name", "stories260K", "--speculative-config",
              "{\"method\": \"ngram\", \"num_speculative_tokens\": 4, \"prompt_lookup_min\": 1}"});
    QVERIFY2(s.waitReady(), s.stderrText().constData());
    QCOMPARE(metric(curl("GET", s.base() + "/metrics").body, "vllm:spec_decode_num_drafts_total"), 0.0);
    const QByteArray body =
        "{\"model\": \"stories260K\", \"prompt\": \"The cat sat on the mat. The cat sat on the mat. The cat\", "
        "\"max_tokens\": 80, \"temperature\": 0}";
    const Http plain = curl("POST", stories_->v1() + "/completions", body);
    const Http spec = curl("POST", s.v1() + "/completions", body);
    QCOMPARE(plain.status, 200);
    QCOMPARE(spec.status, 200);
    const auto text = [](const QByteArray& b) {
      return QJsonDocument::fromJson(b).object().value("choices").toArray().first().toObject().value("text").toString();
    };
    QVERIFY(!text(plain.body).isEmpty());
    QCOMPARE(text(spec.body), text(plain.body));
    const QByteArray m = curl("GET", s.base() + "/metrics").body;
    const double drafts = metric(m, "vllm:spec_decode_num_draft_tokens_total");
    const double accepted = metric(m, "vllm:spec_decode_num_accepted_tokens_total");
    QVERIFY2(metric(m, "vllm:spec_decode_num_drafts_total") > 0 && accepted > 0 && accepted <= drafts, m.constData());
    QVERIFY2(m.contains("vllm:spec_decode_num_accepted_tokens_per_pos_total{"), m.constData());
  }

  void startupLineCountsUsableBlocks() {
    const QString gemma = testpaths::modelFile("arch/gemma3-tiny.gguf");
    REQUIRE_MODEL_FILE(gemma);
    Server s({"--model", gemma, "--served-model-name", "g", "--max-model-len", "256"});
    QVERIFY2(s.waitReady(), s.stderrText().constData());
    static const QRegularExpression re(QStringLiteral(R"((\d+) KV blocks of)"));
    const auto m = re.match(QString::fromUtf8(s.stderrText()));
    QVERIFY2(m.hasMatch(), s.stderrText().constData());
    QCOMPARE(metric(curl("GET", s.base() + "/metrics").body, "vllm:num_kv_cache_blocks"), m.captured(1).toDouble());
  }

  void chatWithApiKeyAndLimits() {
    if (!jsref::missing().isEmpty()) QFAIL(qPrintable(jsref::missing()));
    const QString gguf = testpaths::modelFile("arch/llama3-tiny.gguf");
    REQUIRE_MODEL_FILE(gguf);
    Server s({"--model", gguf, "--served-model-name", "llama3-tiny", "--api-key", "sekrit", "--max-model-len", "1024",
              "--max-body-bytes", "65536"});
    QVERIFY2(s.waitReady(), s.stderrText().constData());
    QString error;
    const QJsonObject o = runClient({"chat", s.v1(), "llama3-tiny", "sekrit"}, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    const QJsonObject c = o["chat"].toObject();
    QCOMPARE(c["object"].toString(), QString("chat.completion"));
    QCOMPARE(c["role"].toString(), QString("assistant"));
    QVERIFY(!c["content"].toString().isEmpty());
    QCOMPARE(o["chat_stream"].toObject()["text"].toString(), c["content"].toString());
    QCOMPARE(o["chat_stream"].toObject()["finish_reason"].toString(), c["finish_reason"].toString());
    // The prompt is the Llama 3.1 template's rendering: BOS, the system header (with its date
    // lines), the user turn and the assistant header, far more than the 7 words of the messages.
    QVERIFY(c["usage"].toObject()["prompt_tokens"].toInt() > 20);
    const QJsonArray content = o["chat_logprobs"].toObject()["content"].toArray();
    QVERIFY(!content.isEmpty());
    QCOMPARE(content[0].toObject()["top_logprobs"].toArray().size(), 3);
    QCOMPARE(o["chat_n2"].toArray().size(), 2);
    QCOMPARE(o["wrong_key"].toObject()["status"].toInt(), 401);
    QCOMPARE(o["bad_messages"].toObject()["status"].toInt(), 400);

    // curl without the key: 401; /health needs none; an oversized body: 413.
    QCOMPARE(curl("GET", s.v1() + "/models").status, 401);
    QCOMPARE(curl("GET", s.base() + "/health").status, 200);
    QByteArray big = "{\"model\": \"llama3-tiny\", \"messages\": [{\"role\": \"user\", \"content\": \"";
    big += QByteArray(100000, 'a') + "\"}]}";
    const Http tooBig = curl("POST", s.v1() + "/chat/completions", big, {"Authorization: Bearer sekrit"});
    QCOMPARE(tooBig.status, 413);
    QVERIFY(json(tooBig.body)["error"].toObject()["message"].toString().contains("too large"));
    // The same body sent chunked (no Content-Length): also 413, before any tokenizing.
    const Http chunked = curl("POST", s.v1() + "/chat/completions", big,
                              {"Authorization: Bearer sekrit", "Transfer-Encoding: chunked"});
    QCOMPARE(chunked.status, 413);
  }

  // response_format (json_schema, json_object) and vLLM's guided_choice through the official
  // client: what the server returns validates with ajv, streamed or not; a keyword the grammars
  // cannot express is a 400 naming it, with param response_format.
  void structuredOutputsThroughTheClient() {
    if (!jsref::missing().isEmpty()) QFAIL(qPrintable(jsref::missing()));
    const QString gguf = testpaths::modelFile("arch/llama3-tiny.gguf");
    REQUIRE_MODEL_FILE(gguf);
    Server s({"--model", gguf, "--served-model-name", "llama3-tiny", "--max-model-len", "1024"});
    QVERIFY2(s.waitReady(), s.stderrText().constData());
    QString error;
    const QJsonObject o = runClient({"structured", s.v1(), "llama3-tiny"}, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    int finished = 0;
    for (const QJsonValue& v : o["outputs"].toArray()) {
      const QJsonObject out = v.toObject();
      if (out["finish_reason"].toString() != "stop") continue;
      ++finished;
      QVERIFY2(out["valid"].toBool(), qPrintable(out["text"].toString()));
    }
    QVERIFY2(finished >= 2, qPrintable(QJsonDocument(o).toJson()));
    const QJsonObject stream = o["stream"].toObject();
    if (stream["finish_reason"].toString() == "stop")
      QVERIFY2(stream["valid"].toBool(), qPrintable(stream["text"].toString()));
    const QJsonObject any = o["json_object"].toObject();
    if (any["finish_reason"].toString() == "stop")
      QVERIFY2(any["isObject"].toBool(), qPrintable(any["text"].toString()));
    QVERIFY2(QStringList({"red", "green", "blue"}).contains(o["choice"].toString()),
             qPrintable(o["choice"].toString()));
    const QJsonObject bad = o["unsupported"].toObject();
    QCOMPARE(bad["status"].toInt(), 400);
    QCOMPARE(bad["param"].toString(), QString("response_format"));
    QVERIFY2(bad["message"].toString().contains("uniqueItems"), qPrintable(bad["message"].toString()));
  }

  // Tools with tool_choice "auto" on a Qwen3 template: a reply in its <tool_call> form (forced by
  // guided_regex: a random model would not write one) comes back as tool_calls, whole, streamed
  // (deltas as OpenAI sends them) and through the client's own stream helper; plain text stays
  // content; the conversation goes on with the tool's result. tool_choice "required" and a named
  // function make calls by constrained decoding whose arguments ajv validates; a leading <think>
  // block comes back as reasoning_content.
  // Images as OpenAI image_url parts (data: URLs) through the official client, on Gemma 3 with its
  // projector (tests/data/vision): streamed equals non-streamed, a picture sent again comes from
  // the prefix cache and another picture does not, bad URLs and files are 400s naming the part.
  void imagesThroughTheClient() {
    if (!jsref::missing().isEmpty()) QFAIL(qPrintable(jsref::missing()));
    const QString gguf = testpaths::modelFile("arch/gemma3-tiny.gguf"), dir = QStringLiteral(VISION_DIR);
    REQUIRE_MODEL_FILE(gguf);
    Server s({"--model", gguf, "--mmproj", dir + "/gemma3-tiny-mmproj.gguf", "--served-model-name", "gemma3-tiny",
              "--chat-template", "gemma", "--max-model-len", "512"});
    QVERIFY2(s.waitReady(), s.stderrText().constData());
    QString error;
    const QJsonObject o = runClient({"images", s.v1(), "gemma3-tiny", dir + "/square.png", dir + "/gray.png"}, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    const QByteArray all = QJsonDocument(o).toJson();
    QVERIFY2(!o["content"].toString().isEmpty(), all.constData());
    QCOMPARE(o["stream_content"].toString(), o["content"].toString());
    QCOMPARE(o["again_content"].toString(), o["content"].toString());
    // 16 positions per image (the projector's pooled grid) plus its begin and end text.
    QVERIFY2(o["prompt_tokens"].toInt() >= o["text_prompt_tokens"].toInt() + 18, all.constData());
    QVERIFY2(o["two_prompt_tokens"].toInt() >= o["text_prompt_tokens"].toInt() + 36, all.constData());
    QVERIFY2(o["again_cached"].toInt() >= 16, all.constData());
    QCOMPARE(o["other_prompt_tokens"].toInt(), o["prompt_tokens"].toInt());
    QVERIFY2(o["other_cached"].toInt() < o["again_cached"].toInt(), all.constData());
    for (const char* bad : {"remote", "bad_base64", "not_image", "truncated"}) {
      const QJsonObject e = o[bad].toObject();
      QVERIFY2(e["status"].toInt() == 400, (QByteArray(bad) + ": " + all).constData());
      QVERIFY2(e["param"].toString().contains("image_url"), (QByteArray(bad) + ": " + all).constData());
    }
    QVERIFY2(!o["after"].toString().isEmpty(), all.constData());
    // A server without the projector refuses images by saying so.
    Server text({"--model", gguf, "--served-model-name", "gemma3-tiny", "--chat-template", "gemma"});
    QVERIFY2(text.waitReady(), text.stderrText().constData());
    QFile png(dir + "/square.png");
    QVERIFY(png.open(QIODevice::ReadOnly));
    const QByteArray body =
        QJsonDocument(
            QJsonObject{
                {"model", "gemma3-tiny"},
                {"messages",
                 QJsonArray{QJsonObject{
                     {"role", "user"},
                     {"content", QJsonArray{QJsonObject{
                                     {"type", "image_url"},
                                     {"image_url", QJsonObject{{"url", "data:image/png;base64," +
                                                                           QString(png.readAll().toBase64())}}}}}}}}}})
            .toJson();
    const Http r = curl("POST", text.v1() + "/chat/completions", body);
    QCOMPARE(r.status, 400);
    QVERIFY2(r.body.contains("--mmproj"), r.body.constData());
  }

  void toolCallsThroughTheClient() {
    if (!jsref::missing().isEmpty()) QFAIL(qPrintable(jsref::missing()));
    const QString gguf = testpaths::modelFile("arch/qwen3-tiny.gguf");
    REQUIRE_MODEL_FILE(gguf);
    Server s({"--model", gguf, "--served-model-name", "qwen3-tiny", "--max-model-len", "1024"});
    QVERIFY2(s.waitReady(), s.stderrText().constData());
    QString error;
    const QJsonObject o = runClient({"tools", s.v1(), "qwen3-tiny"}, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    const QByteArray all = QJsonDocument(o).toJson();
    auto checkCall = [&](const QJsonObject& call) {
      QCOMPARE(call["type"].toString(), QString("function"));
      QVERIFY(call["id"].toString().startsWith("call_"));
      const QJsonObject fn = call["function"].toObject();
      QCOMPARE(fn["name"].toString(), QString("get_weather"));
      QCOMPARE(QJsonDocument::fromJson(fn["arguments"].toString().toUtf8()).object()["city"].toString(),
               QString("Paris"));
    };
    const QJsonObject call = o["call"].toObject();
    QCOMPARE(call["finish_reason"].toString(), QString("tool_calls"));
    QVERIFY2(call["content"].isNull(), all.constData());
    QCOMPARE(call["tool_calls"].toArray().size(), 1);
    checkCall(call["tool_calls"].toArray()[0].toObject());
    const QJsonObject stream = o["stream"].toObject();
    QCOMPARE(stream["finish_reason"].toString(), QString("tool_calls"));
    QCOMPARE(stream["content"].toString(), QString());  // no tag shown as text
    QCOMPARE(stream["calls"].toArray().size(), 1);
    const QJsonObject streamed = stream["calls"].toArray()[0].toObject();
    checkCall({{"type", "function"},
               {"id", streamed["id"]},
               {"function", QJsonObject{{"name", streamed["name"]}, {"arguments", streamed["arguments"]}}}});
    QCOMPARE(o["helper"].toObject()["tool_calls"].toArray().size(), 1);
    checkCall(o["helper"].toObject()["tool_calls"].toArray()[0].toObject());
    const QJsonObject plain = o["plain"].toObject();
    QCOMPARE(plain["content"].toString(), QString("Hello there"));
    QVERIFY(plain["tool_calls"].isNull());
    QCOMPARE(plain["finish_reason"].toString(), QString("stop"));
    // tool_choice "required": one call or more, each to a listed tool with valid arguments.
    auto checkForced = [&](const QJsonArray& calls, const QString& only) {
      QVERIFY2(!calls.isEmpty(), all.constData());
      for (const QJsonValue& v : calls) {
        const QJsonObject c = v.toObject();
        QVERIFY2(c["valid"].toBool(), all.constData());
        QVERIFY(c["id"].toString().startsWith("call_"));
        if (!only.isEmpty()) QCOMPARE(c["name"].toString(), only);
      }
    };
    for (const QJsonValue& v : o["required"].toArray()) {
      QCOMPARE(v["calls"].toArray().size(), 1);  // parallel_tool_calls false
      checkForced(v["calls"].toArray(), {});
      QCOMPARE(v["finish_reason"].toString(), QString("tool_calls"));
      QVERIFY(v["content"].isNull());
    }
    const QJsonObject requiredStream = o["required_stream"].toObject();
    checkForced(requiredStream["calls"].toArray(), {});
    QCOMPARE(requiredStream["finish_reason"].toString(), QString("tool_calls"));
    QCOMPARE(requiredStream["content"].toString(), QString());
    // A named function: exactly its call; "stop" as OpenAI ends a forced call.
    for (const QJsonValue& v : o["named"].toArray()) {
      QCOMPARE(v["calls"].toArray().size(), 1);
      checkForced(v["calls"].toArray(), "get_time");
      QCOMPARE(v["finish_reason"].toString(), QString("stop"));
    }
    const QJsonObject namedStream = o["named_stream"].toObject();
    QCOMPARE(namedStream["calls"].toArray().size(), 1);
    checkForced(namedStream["calls"].toArray(), "get_time");
    QVERIFY2(namedStream["pieces"].toInt() > 1, all.constData());  // the arguments stream in pieces
    QCOMPARE(o["unknown_name"].toObject()["status"].toInt(), 400);
    QVERIFY2(o["unknown_name"].toObject()["message"].toString().contains("no_such_tool"), all.constData());
    QCOMPARE(o["required_and_format"].toObject()["status"].toInt(), 400);
    // Reasoning apart from the answer, whole and streamed, and beside a call.
    QCOMPARE(o["reasoning"]["reasoning"].toString(), QString("Let me see."));
    QCOMPARE(o["reasoning"]["content"].toString(), QString("Hello there"));
    QCOMPARE(o["reasoning_stream"]["reasoning"].toString().trimmed(), QString("Let me see."));
    QCOMPARE(o["reasoning_stream"]["content"].toString(), QString("Hello there"));
    QCOMPARE(o["reasoning_call"]["reasoning"].toString(), QString("A call."));
    QVERIFY2(o["reasoning_call"]["content"].isNull(), all.constData());
    QCOMPARE(o["reasoning_call"]["calls"].toArray().size(), 1);
    checkForced(o["reasoning_call"]["calls"].toArray(), "get_weather");
    // Requests the tools part refuses, each a 400 naming the field, the server unharmed.
    const QByteArray head =
        "{\"model\": \"qwen3-tiny\", \"max_tokens\": 4, \"messages\": [{\"role\": \"user\", "
        "\"content\": \"hi\"}], ";
    const QByteArray multipleOf =
        "\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"f\", "
        "\"parameters\": {\"type\": \"object\", \"properties\": {\"x\": {\"type\": "
        "\"integer\", \"multipleOf\": 3}}}}}]";
    const QList<QPair<QByteArray, QString>> refused{
        {multipleOf + ", \"tool_choice\": {\"type\": \"function\", \"function\": {\"name\": \"f\"}}}",
         "tools[0].function.parameters"},
        {multipleOf + ", \"tool_choice\": \"required\", \"stream\": true}", "tools[0].function.parameters"},
        {"\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"f\", \"parameters\": {\"type\": "
         "\"string\"}}}], \"tool_choice\": \"required\"}",
         "tools[0].function.parameters"},
        {"\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"f\"}}, {\"type\": \"function\", "
         "\"function\": {\"name\": \"f\"}}]}",
         "tools[1].function.name"},
        {"\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"f\", \"description\": \"" +
             QByteArray(1100000, 'x') + "\"}}]}",
         "tools"}};
    for (const auto& [tail, param] : refused) {
      const Http h = curl("POST", s.v1() + "/chat/completions", head + tail);
      QVERIFY2(h.status == 400, h.body.left(300).constData());
      QCOMPARE(json(h.body)["error"].toObject()["param"].toString(), param);
    }
    const Http badCalls = curl("POST", s.v1() + "/chat/completions",
                               "{\"model\": \"qwen3-tiny\", \"messages\": [{\"role\": \"user\", \"content\": "
                               "\"hi\"}, {\"role\": \"assistant\", \"content\": null, \"tool_calls\": \"x\"}]}");
    QCOMPARE(badCalls.status, 400);
    QCOMPARE(json(badCalls.body)["error"].toObject()["param"].toString(), QString("messages[1].tool_calls"));
    // A tool without arguments ("properties": {}) gets exactly {}.
    const Http none = curl("POST", s.v1() + "/chat/completions",
                           head +
                               "\"temperature\": 1, \"seed\": 5, \"max_tokens\": 120, \"parallel_tool_calls\": false, "
                               "\"tools\": [{\"type\": "
                               "\"function\", \"function\": {\"name\": \"ping\", \"parameters\": {\"type\": "
                               "\"object\", \"properties\": {}}}}], \"tool_choice\": \"required\"}");
    QCOMPARE(none.status, 200);
    const QJsonArray calls =
        json(none.body)["choices"].toArray()[0].toObject()["message"].toObject()["tool_calls"].toArray();
    QVERIFY2(!calls.isEmpty(), none.body.constData());
    for (const QJsonValue& c : calls) QCOMPARE(c["function"]["arguments"].toString(), QString("{}"));
    QVERIFY2(!o["next_finish"].toString().isEmpty(), all.constData());
  }

  // 100 requests at once through the official client on a KV cache that holds 4 full-length
  // sequences (32 blocks of 16 tokens, max_model_len 128): all are queued, run, preempted and
  // resumed as the cache allows, and each ends with its full length and the same greedy text as the
  // same request alone (a request's tokens do not depend on the batch); every block is free after.
  void hundredConcurrentRequestsOnSmallCache() {
    if (!jsref::missing().isEmpty()) QFAIL(qPrintable(jsref::missing()));
    // stories260K: 5 layers x K,V x 4 KV heads x 8 x 2 bytes (bfloat16) = 640 bytes per token.
    Server s({"--model", testpaths::stories260K(), "--served-model-name", "stories260K", "--max-model-len", "128",
              "--kv-cache-bytes", QString::number(32 * 16 * 640), "--max-num-seqs", "32"});
    QVERIFY2(s.waitReady(), s.stderrText().constData());
    QCOMPARE(metric(curl("GET", s.base() + "/metrics").body, "vllm:num_kv_cache_blocks"), 32.0);
    const Http alone = curl("POST", s.v1() + "/completions",
                            R"({"model": "stories260K", "prompt": "Once upon a time", "max_tokens": 109,
                                "temperature": 0, "ignore_eos": true})");
    QCOMPARE(alone.status, 200);
    const QString reference = json(alone.body)["choices"].toArray()[0].toObject()["text"].toString();
    QVERIFY(!reference.isEmpty());

    QString error;
    const QJsonObject o = runClient({"concurrent", s.v1(), "stories260K", "100"}, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    const QJsonArray results = o["results"].toArray();
    QCOMPARE(results.size(), 100);
    for (const QJsonValue& v : results) {
      const QJsonObject r = v.toObject();
      const QByteArray what = QJsonDocument(r).toJson(QJsonDocument::Compact).left(400);
      if (r.contains("error")) QFAIL(qPrintable(QString::fromUtf8(what + "\nserver: " + s.stderrText().right(4000))));
      QCOMPARE(r["finish_reason"].toString(), QString("length"));
      QCOMPARE(r["completion_tokens"].toInt(), r["max_tokens"].toInt());
      const QString text = r["text"].toString();
      QVERIFY2(!text.isEmpty() && reference.startsWith(text), what.constData());
    }
    // n = 3: three completions, each counted in request_success_total (vLLM v1 counts the child
    // requests), so 100 + 1 + 3 ended with "length".
    const Http n3 = curl("POST", s.v1() + "/completions",
                         R"({"model": "stories260K", "prompt": "Lily", "max_tokens": 5, "n": 3, "ignore_eos": true})");
    QCOMPARE(n3.status, 200);
    QCOMPARE(json(n3.body)["choices"].toArray().size(), 3);
    QTRY_VERIFY_WITH_TIMEOUT(metric(curl("GET", s.base() + "/metrics").body, "vllm:num_requests_running") == 0, 30000);
    const QByteArray m = curl("GET", s.base() + "/metrics").body;
    QVERIFY2(m.contains("vllm:request_success_total{model_name=\"stories260K\",finished_reason=\"length\"} 104"),
             m.constData());
    QVERIFY(m.contains("vllm:request_success_total{model_name=\"stories260K\",finished_reason=\"abort\"} 0"));
    QCOMPARE(metric(m, "vllm:num_requests_waiting"), 0.0);
    QCOMPARE(metric(m, "vllm:num_free_kv_cache_blocks"), 32.0);
    QVERIFY2(metric(m, "vllm:num_preemptions_total") > 0, "the cache never filled: the test does not test preemption");
  }

  void refusesBadStart() {
    // A model that cannot load: the error, exit 1 (not a server answering 503 forever).
    QProcess bad;
    bad.start(QStringLiteral(PAGEDCHAT_CLI), {"serve", "--model", "/nonexistent/model.gguf", "--port", "0"});
    QVERIFY(bad.waitForFinished(60000));
    QCOMPARE(bad.exitCode(), 1);
    QVERIFY(bad.readAllStandardError().contains("/nonexistent/model.gguf"));
    // Another machine's reach without a key is refused; a port in use fails at once.
    QProcess p;
    p.start(QStringLiteral(PAGEDCHAT_CLI), {"serve", "--model", testpaths::stories260K(), "--host", "0.0.0.0"});
    QVERIFY(p.waitForFinished(60000));
    QVERIFY(p.exitCode() != 0);
    QVERIFY(p.readAllStandardError().contains("--api-key"));
    const QString port = stories_->base().section(':', -1);
    QProcess q;
    q.start(QStringLiteral(PAGEDCHAT_CLI), {"serve", "--model", testpaths::stories260K(), "--port", port});
    QVERIFY(q.waitForFinished(60000));
    QVERIFY(q.exitCode() != 0);
    QVERIFY(q.readAllStandardError().contains("cannot listen"));
  }

  void stopsOnSigterm() {
    stories_->process().terminate();
    QVERIFY(stories_->process().waitForFinished(30000));
    QCOMPARE(stories_->process().exitStatus(), QProcess::NormalExit);
    QCOMPARE(stories_->process().exitCode(), 0);
  }
};

QTEST_GUILESS_MAIN(TestServer)
#include "test_server.moc"
