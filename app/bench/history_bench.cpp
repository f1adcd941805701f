// pagedchat-history-bench: the chat history at scale. Creates a database of N conversations of
// M messages each (default 5000 x 200 = 1 000 000 messages, one transaction with prepared
// statements), then measures what a user waits for:
//   open      ChatStore open + the conversation list's first page (ConversationListModel)
//   load      one conversation's shown branch into a MessageListModel
//   search    a full-text query over all messages (FTS5), common and rare word
//   window    AppController + the real QML main window (offscreen) until its first frame
//             (the pane opens the newest conversation, M messages)
// Usage: pagedchat-history-bench [--conversations N] [--messages M] [--dir PATH] [--reuse]
// With --dir and --reuse an existing database there is measured as it is (no rebuild).
// Not run by ctest; figures go to docs/benchmarks.md ("History at scale").
#include <QCommandLineParser>
#include <QDir>
#include <QElapsedTimer>
#include <QGuiApplication>
#include <QQmlApplicationEngine>
#include <QQuickWindow>
#include <QRandomGenerator>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTimer>

#include <cstdio>

#include "app/controllers/app_controller.h"
#include "app/controllers/conversation_list_model.h"
#include "app/main_window.h"
#include "app/panes/message_list_model.h"
#include "app/store/chat_store.h"

namespace {

const char* const kWords[] = {"the",    "a",    "little", "girl",   "named",  "Lily",  "loved",     "to",     "play",
                              "in",     "park", "with",   "her",    "dog",    "one",   "day",       "she",    "saw",
                              "big",    "red",  "ball",   "and",    "wanted", "it",    "Tom",       "said",   "yes",
                              "happy",  "sun",  "tree",   "bird",   "sang",   "song",  "river",     "boat",   "cake",
                              "friend", "mom",  "kernel", "cache",  "block",  "paged", "attention", "engine", "token",
                              "model",  "오늘", "날씨가", "좋아요", "산책",   "친구",  "이야기"};
constexpr int kNumWords = sizeof(kWords) / sizeof(kWords[0]);

QString sentence(QRandomGenerator& rng, int words) {
  QString s;
  for (int i = 0; i < words; ++i) {
    if (i) s += QLatin1Char(' ');
    s += QString::fromUtf8(kWords[rng.bounded(kNumWords)]);
  }
  return s + QLatin1Char('.');
}

bool check(QSqlQuery& q, bool ok) {
  if (!ok) std::fprintf(stderr, "SQL error: %s\n", qPrintable(q.lastError().text()));
  return ok;
}

/// Fills <dir>/pagedchat.sqlite3 (schema made by ChatStore) with conversations x messages.
bool populate(const QString& dir, int conversations, int messages) {
  { ChatStore schema(dir); }
  const QString name = QStringLiteral("bench-writer");
  bool ok = true;
  {
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
    db.setDatabaseName(QDir(dir).filePath(QStringLiteral("pagedchat.sqlite3")));
    if (!db.open()) return false;
    QSqlQuery q(db);
    q.exec(QStringLiteral("PRAGMA synchronous = OFF"));
    q.exec(QStringLiteral("BEGIN"));
    QSqlQuery conv(db), msg(db), leaf(db);
    ok = check(conv, conv.prepare(
                         QStringLiteral("INSERT INTO conversations(title, created_at, updated_at) VALUES(?, ?, ?)"))) &&
         check(msg, msg.prepare(QStringLiteral(
                        "INSERT INTO messages(conversation_id, parent_id, role, text, finish_reason, created_at)"
                        " VALUES(?, ?, ?, ?, ?, ?)"))) &&
         check(leaf, leaf.prepare(QStringLiteral("UPDATE conversations SET current_leaf_id = ? WHERE id = ?")));
    QRandomGenerator rng(42);
    // Spread over the last 60 days, oldest first, so every date group has rows.
    const QDateTime start = QDateTime::currentDateTimeUtc().addDays(-60);
    const qint64 spanMs = 60LL * 24 * 3600 * 1000;
    for (int c = 0; ok && c < conversations; ++c) {
      const QDateTime t0 = start.addMSecs(spanMs * c / qMax(1, conversations));
      const QString stamp = t0.toString(Qt::ISODateWithMs);
      conv.addBindValue(sentence(rng, 5));
      conv.addBindValue(stamp);
      conv.addBindValue(t0.addSecs(messages * 10).toString(Qt::ISODateWithMs));
      ok = check(conv, conv.exec());
      const qint64 cid = conv.lastInsertId().toLongLong();
      QVariant parent(QMetaType::fromType<qint64>());
      for (int m = 0; ok && m < messages; ++m) {
        const bool user = m % 2 == 0;
        msg.addBindValue(cid);
        msg.addBindValue(parent);
        msg.addBindValue(user ? QStringLiteral("user") : QStringLiteral("assistant"));
        msg.addBindValue(sentence(rng, user ? 12 : 40));
        msg.addBindValue(user ? QString(QLatin1String("")) : QStringLiteral("stop"));
        msg.addBindValue(t0.addSecs(m * 10).toString(Qt::ISODateWithMs));
        ok = check(msg, msg.exec());
        parent = msg.lastInsertId();
      }
      leaf.addBindValue(parent);
      leaf.addBindValue(cid);
      ok = ok && check(leaf, leaf.exec());
    }
    ok = ok && check(q, q.exec(QStringLiteral("COMMIT")));
    q.exec(QStringLiteral("PRAGMA wal_checkpoint(TRUNCATE)"));
    db.close();
  }
  QSqlDatabase::removeDatabase(name);
  return ok;
}

double ms(const QElapsedTimer& t) { return static_cast<double>(t.nsecsElapsed()) / 1e6; }

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QGuiApplication app(argc, argv);
  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("PagedChat history benchmark"));
  parser.addHelpOption();
  QCommandLineOption convOpt(QStringLiteral("conversations"), QStringLiteral("Conversations (5000)."),
                             QStringLiteral("n"), QStringLiteral("5000"));
  QCommandLineOption msgOpt(QStringLiteral("messages"), QStringLiteral("Messages each (200)."), QStringLiteral("n"),
                            QStringLiteral("200"));
  QCommandLineOption dirOpt(QStringLiteral("dir"), QStringLiteral("Data folder (default: a temporary one)."),
                            QStringLiteral("path"));
  QCommandLineOption reuseOpt(QStringLiteral("reuse"), QStringLiteral("Measure the database in --dir as it is."));
  parser.addOptions({convOpt, msgOpt, dirOpt, reuseOpt});
  parser.process(app);
  const int conversations = parser.value(convOpt).toInt();
  const int messages = parser.value(msgOpt).toInt();
  QTemporaryDir tmp;
  const QString dir = parser.isSet(dirOpt) ? parser.value(dirOpt) : tmp.path();
  QDir().mkpath(dir);

  if (!parser.isSet(reuseOpt)) {
    QFile::remove(QDir(dir).filePath(QStringLiteral("pagedchat.sqlite3")));
    QFile::remove(QDir(dir).filePath(QStringLiteral("pagedchat.ini")));
    QElapsedTimer t;
    t.start();
    if (!populate(dir, conversations, messages)) return 1;
    std::printf("create   %d conversations x %d messages: %.1f s (%.1f MB)\n", conversations, messages, ms(t) / 1000.0,
                QFileInfo(QDir(dir).filePath(QStringLiteral("pagedchat.sqlite3"))).size() / 1e6);
  }

  try {
    QElapsedTimer t;
    t.start();
    ChatStore store(dir);
    ConversationListModel list(&store);
    const double openMs = ms(t);
    std::printf("open     store + list first page (%d of %d rows): %.1f ms\n", list.rowCount(), list.totalCount(),
                openMs);

    const qint64 id = list.idAt(list.rowCount() / 2);
    t.restart();
    MessageListModel model;
    model.setMessages(store.branch(id));
    std::printf("load     one conversation (%d messages): %.1f ms\n", model.rowCount(), ms(t));

    for (const QString& q : {QStringLiteral("lily ball"), QStringLiteral("attention"), QStringLiteral("날씨"),
                             QStringLiteral("zzznotfound")}) {
      t.restart();
      const int hits = static_cast<int>(store.search(q).size());
      std::printf("search   \"%s\": %d hits (limit 50), %.1f ms\n", qPrintable(q), hits, ms(t));
    }
    t.restart();
    int scrolled = 0;
    while (list.canFetchMore(QModelIndex())) {
      list.fetchMore(QModelIndex());
      ++scrolled;
    }
    std::printf("scroll   all %d rows in %d pages: %.1f ms (%.2f ms per page)\n", list.rowCount(), scrolled, ms(t),
                scrolled ? ms(t) / scrolled : 0.0);
  } catch (const StoreError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }

  // The real window, as the app starts it (engine not started: the model load is not measured).
  QElapsedTimer t;
  t.start();
  AppOptions options;
  options.dataDir = dir;
  AppController controller(options);
  QQmlApplicationEngine engine;
  QQuickWindow* window = loadMainWindow(engine, &controller);
  if (!window) return 1;
  bool framed = false;
  QObject::connect(window, &QQuickWindow::frameSwapped, &app, [&] {
    if (!framed) {
      framed = true;
      app.quit();
    }
  });
  QTimer::singleShot(30000, &app, &QCoreApplication::quit);
  app.exec();
  std::printf("window   controller + QML window to first frame: %.1f ms%s\n", ms(t),
              framed ? "" : " (no frame within 30 s)");
  return framed ? 0 : 1;
}
