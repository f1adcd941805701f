// The stop-string automaton (engine/sample/stop_automaton.h) against the direct search it replaces
// in the engine (find_stop_string / stop_string_holdback, which look at every stop string on
// every token): random stop sets over small alphabets (so that strings overlap, nest, repeat and
// share prefixes) with multi-byte UTF-8 characters, texts grown in random pieces as a detokenizer
// grows them, stops not reported before min_tokens and then reported, include_stop_str both ways.
// Every match and every hold-back must be the same.
#include <QTest>

#include <random>
#include <string>
#include <vector>

#include "engine/sample/stop_automaton.h"
#include "engine/sample/stop_checker.h"

using namespace pagedchat;

namespace {

const std::vector<std::string> kAlphabet = {"a", "b", "c", "é", "😀", " "};

std::string randomText(std::mt19937& rng, int chars) {
  std::string s;
  for (int i = 0; i < chars; ++i) s += kAlphabet[rng() % kAlphabet.size()];
  return s;
}

}  // namespace

class TestStopAutomaton : public QObject {
  Q_OBJECT
 private slots:
  void sameAsDirectSearch_data() {
    QTest::addColumn<int>("seed");
    for (int seed = 1; seed <= 400; ++seed) QTest::addRow("seed %d", seed) << seed;
  }

  void sameAsDirectSearch() {
    QFETCH(int, seed);
    std::mt19937 rng(static_cast<unsigned>(seed));
    std::vector<std::string> stops;
    const int n = 1 + int(rng() % 8);
    for (int i = 0; i < n; ++i) stops.push_back(rng() % 10 == 0 ? std::string() : randomText(rng, 1 + int(rng() % 5)));
    const bool include = rng() % 2;
    const std::size_t quiet_until = rng() % 3 == 0 ? rng() % 20 : 0;  // min_tokens: not reported before
    const StopAutomaton automaton(stops);
    StopAutomaton::Cursor cursor;
    std::string text;
    for (int piece = 0; piece < 60; ++piece) {
      const std::size_t before = text.size();
      text += randomText(rng, int(rng() % 4));  // a token may decode to nothing
      const bool report = std::size_t(piece) >= quiet_until;
      const auto got = automaton.feed(text, cursor, include, report);
      const auto want = report && text.size() > before ? find_stop_string(text, before, stops, include) : std::nullopt;
      QCOMPARE(got.has_value(), want.has_value());
      if (want) {
        QCOMPARE(got->stop, want->stop);
        QCOMPARE(got->text_length, want->text_length);
        return;  // the request finishes here
      }
      // Reports resume after min_tokens: a stop completed in the quiet part was skipped by both.
      QCOMPARE(automaton.holdback(text, cursor), stop_string_holdback(text, stops));
    }
  }

  // Many long stop strings: built once, and a text fed in pieces finds the one it holds.
  void manyLongStops() {
    std::mt19937 rng(7);
    std::vector<std::string> stops;
    for (int i = 0; i < 2000; ++i) stops.push_back(randomText(rng, 100));
    const StopAutomaton automaton(stops);
    StopAutomaton::Cursor cursor;
    std::string text = randomText(rng, 5000);
    QVERIFY(!automaton.feed(text, cursor, false, true).has_value());  // none of them in random text
    cursor = {};
    text = std::string(300, 'x') + stops[1234] + "tail";
    std::optional<StopStringMatch> m;
    for (std::size_t end = 7; !m; end += 7) {  // in pieces of 7 bytes, the last one shorter
      m = automaton.feed(text.substr(0, std::min(end, text.size())), cursor, false, true);
      if (end >= text.size()) break;
    }
    QVERIFY(m.has_value());
    QCOMPARE(m->text_length, std::size_t(300));
  }
};

QTEST_GUILESS_MAIN(TestStopAutomaton)
#include "test_stop_automaton.moc"
