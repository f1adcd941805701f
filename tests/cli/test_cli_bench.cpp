// `pagedchat-cli bench`: runs the real binary (PAGEDCHAT_CLI, compiled in by CMake) on a tiny
// random model with --json and checks the shape and consistency of the reports. No timing
// thresholds: only that the figures exist, are positive and finite, and agree with each other.
#include <QTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>

#include <cmath>
#include <map>
#include <utility>

#include "test_paths.h"

namespace {

struct CliRun {
  int exit_code = -1;
  QByteArray out, err;
};

CliRun runCli(const QStringList& args) {
  QProcess p;
  p.start(QStringLiteral(PAGEDCHAT_CLI), args);
  CliRun r;
  if (!p.waitForStarted(30000)) {
    r.err = "could not start " PAGEDCHAT_CLI;
    return r;
  }
  p.waitForFinished(240000);
  r.out = p.readAllStandardOutput();
  r.err = p.readAllStandardError();
  r.exit_code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
  return r;
}

const QStringList kModel = {"--model", "random:stories260K", "--threads", "2", "--json"};

// Runs `bench <args>` and parses its JSON object; fails the test (empty object) otherwise.
QJsonObject benchJson(const QStringList& args) {
  const CliRun r = runCli(QStringList{"bench"} + args + kModel);
  if (r.exit_code != 0) {
    qWarning("exit %d, stderr: %s", r.exit_code, r.err.constData());
    return {};
  }
  QJsonParseError e{};
  const QJsonDocument doc = QJsonDocument::fromJson(r.out, &e);
  if (e.error != QJsonParseError::NoError || !doc.isObject()) {
    qWarning("bad JSON (%s): %s", qPrintable(e.errorString()), r.out.constData());
    return {};
  }
  return doc.object();
}

bool positiveFinite(const QJsonValue& v) { return v.isDouble() && std::isfinite(v.toDouble()) && v.toDouble() > 0; }

bool near(double a, double b) { return std::abs(a - b) <= 1e-6 * std::max(1.0, std::abs(b)); }

}  // namespace

class TestCliBench : public QObject {
  Q_OBJECT
 private slots:
  void throughput() {
    const QJsonObject j = benchJson({"throughput", "--num-prompts", "4", "--input-len", "16", "--output-len", "8"});
    QVERIFY(!j.isEmpty());
    QCOMPARE(j["benchmark"].toString(), QString("throughput"));
    for (const char* k : {"requests_per_s", "output_tokens_per_s", "total_tokens_per_s", "elapsed_s",
                          "kv_cache_usage_peak", "load_time_s"})
      QVERIFY2(positiveFinite(j[k]), k);
    QCOMPARE(j["num_prompts"].toInt(), 4);
    QCOMPARE(j["input_len"].toInt(), 16);
    QCOMPARE(j["output_len"].toInt(), 8);
    QCOMPARE(j["num_output_tokens"].toInt(), 4 * 8);
    QVERIFY(j.contains("num_preemptions"));
    QVERIFY(j["kv_cache_usage_peak"].toDouble() <= 1.0);
    const double elapsed = j["elapsed_s"].toDouble();
    QVERIFY(near(j["output_tokens_per_s"].toDouble() * elapsed, 4 * 8));
    QVERIFY(near(j["total_tokens_per_s"].toDouble() * elapsed, 4 * (16 + 8)));
    QVERIFY(near(j["requests_per_s"].toDouble() * elapsed, 4));
    QVERIFY(j["engine_stats"].isObject());
    QCOMPARE(j["engine_stats"]["num_generation_tokens"].toInt(), 4 * 8);
  }

  // A sliding-window model (gemma3-tiny: 5 local layers of window 8, 1 global): one group per
  // layer, each group's peak in the report; a long prompt holds at most full_layers * L +
  // local_layers * (the window and one step's chunk) tokens of K/V ("bench memory").
  void throughputSlidingWindowGroups() {
    const QString model = testpaths::modelFile("arch/gemma3-tiny.gguf");
    REQUIRE_MODEL_FILE(model);
    const int input = 600, output = 40, bs = 16, chunk = 64;
    const CliRun r = runCli({"bench", "throughput", "--model", model, "--threads", "2", "--json", "--num-prompts", "1",
                             "--input-len", QString::number(input), "--output-len", QString::number(output),
                             "--block-size", QString::number(bs), "--max-num-batched-tokens", QString::number(chunk),
                             "--max-model-len", "1024"});
    QVERIFY2(r.exit_code == 0, r.err.constData());
    const QJsonObject j = QJsonDocument::fromJson(r.out).object();
    const QJsonArray groups = j["engine_stats"]["kv_cache_groups"].toArray();
    QCOMPARE(groups.size(), 6);
    QCOMPARE(j["engine_stats"]["kv_cache_group_size"].toInt(), 1);
    QCOMPARE(groups[0]["sliding_window"].toInt(), 0);
    const int window = groups[1]["sliding_window"].toInt();
    QVERIFY(window > 0);
    const QJsonArray peaks = j["kv_cache_group_blocks_peak"].toArray();
    QCOMPARE(peaks.size(), 6);
    const int full_blocks = (input + output + bs - 1) / bs;
    QVERIFY(peaks[0].toInt() >= full_blocks - 1 && peaks[0].toInt() <= full_blocks);
    const int window_blocks = (window - 1 + chunk + bs - 1) / bs + 1;
    for (int g = 1; g < 6; ++g) QVERIFY(peaks[g].toInt() <= window_blocks);
    const double held = j["kv_layer_tokens_peak"].toDouble();
    QVERIFY(held <= 1.0 * full_blocks * bs + 5.0 * window_blocks * bs);
    QVERIFY(held < 6.0 * full_blocks * bs / 2);  // every layer holding every token: more than twice
  }

  void throughputWithoutPrefixCaching() {
    const QJsonObject j = benchJson(
        {"throughput", "--num-prompts", "2", "--input-len", "16", "--output-len", "4", "--no-prefix-caching"});
    QVERIFY(!j.isEmpty());
    QCOMPARE(j["engine"]["enable_prefix_caching"].toBool(), false);
    QCOMPARE(j["engine"]["kv_cache_dtype"].toString(), QString("bfloat16"));  // auto
    QVERIFY(positiveFinite(j["output_tokens_per_s"]));
  }

  // --same-prompt: one prompt to every request; with prefix caching the others share the first
  // one's full blocks in the first step (block size 16: 2 of a 40-token prompt's 3 blocks).
  void throughputSamePrompt() {
    const QStringList args = {"throughput",    "--num-prompts", "4", "--input-len", "40", "--output-len", "4",
                              "--same-prompt", "--block-size",  "16"};
    const QJsonObject on = benchJson(args);
    QVERIFY(!on.isEmpty());
    QCOMPARE(on["same_prompt"].toBool(), true);
    QCOMPARE(on["num_prompt_tokens"].toInt(), 4 * 40);
    QCOMPARE(on["num_prompt_tokens_computed"].toInt(), 40 + 3 * (40 - 32));
    const QJsonObject off = benchJson(args + QStringList{"--no-prefix-caching"});
    QCOMPARE(off["num_prompt_tokens_computed"].toInt(), 4 * 40);
  }

  // --kv-cache-dtype reaches the engine: float32 takes twice the bytes of float16 for the same
  // automatic block count (8 sequences of 128 positions), and the JSON names the type.
  void throughputKvCacheDtype() {
    std::map<QString, double> bytes;
    for (const char* d : {"float32", "float16"}) {
      const QJsonObject j = benchJson({"throughput", "--num-prompts", "2", "--input-len", "16", "--output-len", "4",
                                       "--kv-cache-dtype", d, "--max-model-len", "128"});
      QVERIFY(!j.isEmpty());
      QCOMPARE(j["engine"]["kv_cache_dtype"].toString(), QString(d));
      QVERIFY(positiveFinite(j["output_tokens_per_s"]));
      bytes[d] = j["engine"]["kv_cache_bytes"].toDouble();
    }
    QVERIFY(bytes["float16"] > 0);
    QCOMPARE(bytes["float32"], 2 * bytes["float16"]);
  }

  // bench memory: every word of the buffer summed (the checksum is checked), a finite rate.
  void memoryBandwidth() {
    const CliRun r = runCli({"bench", "memory", "--size-mb", "16", "--threads", "2", "--runs", "3", "--json"});
    QCOMPARE(r.exit_code, 0);
    const QJsonObject j = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(j["benchmark"].toString(), QString("memory"));
    QCOMPARE(j["bytes"].toDouble(), 16e6);
    QCOMPARE(j["samples_gb_per_s"].toArray().size(), 3);
    QVERIFY(positiveFinite(j["read_gb_per_s"]));
    QVERIFY(j["read_gb_per_s"].toDouble() >= j["read_gb_per_s_median"].toDouble());
    QVERIFY(runCli({"bench", "memory", "--threads", "0"}).exit_code != 0);
    // A size that is no number, or more than the machine has: a clear message, not std::bad_alloc.
    for (const char* size : {"nan", "1000000"}) {
      const CliRun bad = runCli({"bench", "memory", "--size-mb", size});
      QVERIFY(bad.exit_code > 0);
      QVERIFY2(bad.err.contains("--size-mb") && !bad.err.contains("bad_alloc"), bad.err.constData());
    }
  }

  // $PAGEDCHAT_CPU_ISA is matched without regard to case; an unknown name is named in a warning.
  void cpuIsaEnvironment() {
    auto run = [](const QByteArray& isa) {
      QProcess p;
      QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
      env.insert("PAGEDCHAT_CPU_ISA", QString::fromLatin1(isa));
      p.setProcessEnvironment(env);
      p.start(QStringLiteral(PAGEDCHAT_CLI),
              QStringList{"bench", "latency", "--input-len", "4", "--output-len", "2", "--num-iters", "1"} + kModel);
      p.waitForFinished(240000);
      return std::make_pair(p.exitCode(), p.readAllStandardError() + p.readAllStandardOutput());
    };
    const auto upper = run("SCALAR");
    QCOMPARE(upper.first, 0);
    QVERIFY2(!upper.second.contains("PAGEDCHAT_CPU_ISA"), upper.second.constData());
    QVERIFY2(upper.second.contains("cpu scalar"), upper.second.constData());
    const auto unknown = run("avx9000");
    QCOMPARE(unknown.first, 0);
    QVERIFY2(unknown.second.contains("PAGEDCHAT_CPU_ISA=avx9000 is not one of"), unknown.second.constData());
  }

  void badKvCacheDtype() {
    const CliRun r = runCli(QStringList{"bench", "latency", "--kv-cache-dtype", "fp8"} + kModel);
    QVERIFY(r.exit_code != 0);
    QVERIFY2(r.err.contains("kv-cache-dtype") && r.err.contains("bfloat16"), r.err.constData());
  }

  void latency() {
    const QJsonObject j = benchJson({"latency", "--input-len", "8", "--output-len", "8", "--num-iters", "1"});
    QVERIFY(!j.isEmpty());
    QCOMPARE(j["benchmark"].toString(), QString("latency"));
    for (const char* k : {"ttft_ms", "itl_ms_p50", "itl_ms_p90", "itl_ms_p99", "decode_tokens_per_s", "e2e_ms"})
      QVERIFY2(positiveFinite(j[k]), k);
    QVERIFY(j["itl_ms_p50"].toDouble() <= j["itl_ms_p90"].toDouble());
    QVERIFY(j["itl_ms_p90"].toDouble() <= j["itl_ms_p99"].toDouble());
    QVERIFY(j["e2e_ms"].toDouble() >= j["ttft_ms"].toDouble());
    QCOMPARE(j["num_iters"].toInt(), 1);
    QCOMPARE(j["iterations"].toArray().size(), 1);
    // The single iteration is the median.
    QVERIFY(near(j["iterations"][0]["e2e_ms"].toDouble(), j["e2e_ms"].toDouble()));
  }

  void chat() {
    const QJsonObject j = benchJson(
        {"chat", "--sessions", "2", "--turns", "3", "--user-len", "16", "--output-len", "8"});
    QVERIFY(!j.isEmpty());
    QCOMPARE(j["benchmark"].toString(), QString("chat"));
    QCOMPARE(j["num_sessions"].toInt(), 2);
    QCOMPARE(j["num_turns"].toInt(), 3);
    const QJsonArray turns = j["per_turn"].toArray();
    QCOMPARE(turns.size(), 3);
    for (int t = 0; t < 3; ++t) {
      const QJsonObject turn = turns[t].toObject();
      QCOMPARE(turn["turn"].toInt(), t + 1);
      QCOMPARE(turn["prompt_len"].toInt(), (t + 1) * 16 + t * 8);  // whole conversation so far
      const QJsonObject on = turn["caching_on"].toObject(), off = turn["caching_off"].toObject();
      for (const QJsonObject& pass : {on, off}) {
        QVERIFY(positiveFinite(pass["ttft_ms_mean"]));
        QVERIFY(positiveFinite(pass["kv_cache_usage_peak"]));
        QVERIFY(positiveFinite(pass["elapsed_s"]));
        QVERIFY(pass.contains("prefix_cache_hit_rate"));
      }
      QCOMPARE(off["num_cached_tokens_mean"].toDouble(), 0.0);
      QCOMPARE(off["prefix_cache_hit_rate"].toDouble(), 0.0);
      if (t >= 1) {  // the previous turn's prompt and output are in the cache
        QVERIFY2(on["num_cached_tokens_mean"].toDouble() > 0, qPrintable(QString("turn %1").arg(t + 1)));
        QVERIFY(on["prefix_cache_hit_rate"].toDouble() > 0);
        QVERIFY(on["prefix_cache_hit_rate"].toDouble() <= 1.0);
      }
    }
    const QJsonObject totals = j["totals"].toObject();
    for (const char* pass : {"caching_on", "caching_off"}) {
      const QJsonObject p = totals[pass].toObject();
      QVERIFY2(positiveFinite(p["elapsed_s"]), pass);
      QVERIFY2(positiveFinite(p["ttft_ms_mean"]), pass);
      QVERIFY2(positiveFinite(p["output_tokens_per_s"]), pass);
      QCOMPARE(p["num_output_tokens"].toInt(), 2 * 3 * 8);
      QCOMPARE(p["num_prompt_tokens"].toInt(), 2 * (16 + 40 + 64));
    }
    QVERIFY(totals["caching_on"]["num_cached_tokens"].toInt() > 0);
    QCOMPARE(totals["caching_off"]["num_cached_tokens"].toInt(), 0);
    QVERIFY(positiveFinite(j["ttft_speedup"]));
  }

  void tooLong_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("limit");
    QTest::newRow("throughput, explicit --max-model-len")
        << QStringList{"throughput", "--num-prompts",   "2", "--input-len", "60", "--output-len",
                       "8",          "--max-model-len", "64"}
        << "max_model_len 64";
    QTest::newRow("latency, the model's 512 positions")
        << QStringList{"latency", "--input-len", "500", "--output-len", "100"} << "max_model_len 512";
    QTest::newRow("chat, turns x (user + output)")
        << QStringList{"chat", "--sessions", "1", "--turns", "10", "--user-len", "32", "--output-len", "32"}
        << "max_model_len 512";
  }

  void tooLong() {
    QFETCH(QStringList, args);
    QFETCH(QString, limit);
    const CliRun r = runCli(QStringList{"bench"} + args + kModel);
    QVERIFY(r.exit_code != 0);
    QVERIFY2(r.err.contains(limit.toUtf8()), r.err.constData());
    QVERIFY(r.out.trimmed().isEmpty());
  }

  // llama-bench / llama-batched-bench terms: pp and tg rows, one batched row per --npl value
  // whose speeds agree with their times; --dtype reaches the engine.
  void llama() {
    const QJsonObject j = benchJson({"llama", "-p", "64", "-n", "16", "-r", "2", "--npp", "32", "--ntg", "8", "--npl",
                                     "1,3", "--dtype", "bfloat16"});
    QCOMPARE(j["benchmark"].toString(), QString("llama"));
    const QJsonArray tests = j["tests"].toArray();
    QCOMPARE(tests.size(), 2);
    QCOMPARE(tests[0].toObject()["test"].toString(), QString("pp64"));
    QCOMPARE(tests[1].toObject()["test"].toString(), QString("tg16"));
    for (const auto& t : tests) {
      QVERIFY(positiveFinite(t.toObject()["avg_ts"]));
      QCOMPARE(t.toObject()["samples_ts"].toArray().size(), 2);
    }
    const QJsonArray batched = j["batched"].toArray();
    QCOMPARE(batched.size(), 2);
    for (int i = 0; i < 2; ++i) {
      const QJsonObject b = batched[i].toObject();
      const int pl = i == 0 ? 1 : 3;
      QCOMPARE(b["pl"].toInt(), pl);
      QCOMPARE(b["n_kv"].toInt(), pl * (32 + 8));
      QVERIFY(positiveFinite(b["t_pp"]) && positiveFinite(b["t_tg"]));
      QVERIFY(near(b["speed_pp"].toDouble(), pl * 32 / b["t_pp"].toDouble()));
      QVERIFY(near(b["speed_tg"].toDouble(), pl * 8 / b["t_tg"].toDouble()));
      QVERIFY(near(b["t"].toDouble(), b["t_pp"].toDouble() + b["t_tg"].toDouble()));
      QVERIFY(near(b["speed"].toDouble(), pl * 40 / b["t"].toDouble()));
    }
    const QJsonObject e = j["engine"].toObject();
    QCOMPARE(e["dtype"].toString(), QString("bfloat16"));
    QVERIFY(e["backend"].toString().startsWith("cpu "));
    QVERIFY(positiveFinite(e["packed_weight_bytes"]) && positiveFinite(e["peak_rss_bytes"]));
  }

  // Only the batched test (-p 0 -n 0): its table alone, no empty pp/tg table.
  void llamaBatchedOnly() {
    const CliRun r = runCli({"bench", "llama", "--model", "random:stories260K", "--threads", "2", "-p", "0", "-n", "0",
                             "--npp", "8", "--ntg", "4", "--npl", "2", "-r", "1"});
    QCOMPARE(r.exit_code, 0);
    QVERIFY2(!r.out.contains("| model | size"), r.out.constData());
    QVERIFY2(r.out.contains("|    PP |") || r.out.contains("| PP"), r.out.constData());
  }

  void badDtype() {
    const CliRun r = runCli(QStringList{"bench", "latency", "--dtype", "int8"} + kModel);
    QVERIFY(r.exit_code != 0);
    QVERIFY2(r.err.contains("dtype"), r.err.constData());
  }

  void missingSubcommand() {
    const CliRun r = runCli({"bench"});
    QVERIFY(r.exit_code != 0);
  }
};

QTEST_GUILESS_MAIN(TestCliBench)
#include "test_cli_bench.moc"
