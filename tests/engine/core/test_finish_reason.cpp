// FinishReason's text: vLLM's/OpenAI's exact words both ways, and nothing else parsed.
#include <QTest>

#include <string>

#include "engine/finish_reason.h"

using namespace pagedchat;

class TestFinishReason : public QObject {
  Q_OBJECT
 private slots:
  void text() {
    QCOMPARE(std::string(to_string(FinishReason::kStop)), std::string("stop"));
    QCOMPARE(std::string(to_string(FinishReason::kLength)), std::string("length"));
    QCOMPARE(std::string(to_string(FinishReason::kAbort)), std::string("abort"));
  }

  void roundTrip() {
    for (FinishReason r : kFinishReasons) QCOMPARE(parse_finish_reason(to_string(r)), std::optional(r));
  }

  void unknownText() {
    for (const char* s : {"", "Stop", "STOP", "stop ", " length", "aborted", "content_filter", "tool_calls"})
      QVERIFY2(!parse_finish_reason(s), s);
  }
};

QTEST_GUILESS_MAIN(TestFinishReason)
#include "test_finish_reason.moc"
