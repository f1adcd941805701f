// ChatStore's blind-compare votes: one row per vote in compare_votes, the panes as JSON text.
// The table is created on first use (CREATE TABLE IF NOT EXISTS); it has no foreign key, so a
// vote outlives the conversations it compared.
#include <QDir>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>

#include "app/chat_store.h"

namespace {

[[noreturn]] void failVotes(const QString& path, const QString& what, const QString& detail) {
  throw StoreError(QStringLiteral("ChatStore: %1: %2 (database: %3)")
                       .arg(what, detail.trimmed(), QDir::toNativeSeparators(path))
                       .toStdString());
}

QSqlDatabase votesConnection(const QString& name, const QString& path) {
  if (name.isEmpty()) failVotes(path, QStringLiteral("the store is closed"), QString());
  QSqlDatabase db = QSqlDatabase::database(name, false);
  if (!db.isOpen()) failVotes(path, QStringLiteral("the store is closed"), QString());
  return db;
}

QSqlQuery run(const QSqlDatabase& db, const QString& path, const QString& sql, const QVariantList& binds = {}) {
  QSqlQuery q(db);
  q.setForwardOnly(true);
  bool ok = q.prepare(sql);
  if (ok) {
    for (const QVariant& v : binds) q.addBindValue(v);
    ok = q.exec();
  }
  if (!ok) failVotes(path, QStringLiteral("\"%1\" failed").arg(sql.simplified()), q.lastError().text());
  return q;
}

}  // namespace

void ChatStore::ensureVotesTable() const {
  const QSqlDatabase db = votesConnection(m_connectionName, m_path);
  run(db, m_path,
      QStringLiteral("CREATE TABLE IF NOT EXISTS compare_votes("
                     " id INTEGER PRIMARY KEY AUTOINCREMENT,"
                     " created_at TEXT NOT NULL,"
                     " prompt TEXT NOT NULL,"
                     " winner_pane INTEGER NOT NULL,"
                     " panes TEXT NOT NULL)"));
}

qint64 ChatStore::addCompareVote(const QString& prompt, int winnerPane, const QJsonArray& panes) {
  if (panes.size() < 2)
    failVotes(m_path, QStringLiteral("cannot store the vote"), QStringLiteral("a comparison needs two panes or more"));
  if (winnerPane < -1 || winnerPane >= panes.size())
    failVotes(m_path, QStringLiteral("cannot store the vote"),
              QStringLiteral("winner pane %1 is not -1 (tie) or one of the %2 panes").arg(winnerPane).arg(panes.size()));
  ensureVotesTable();
  const QSqlDatabase db = votesConnection(m_connectionName, m_path);
  const QString now = QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs);
  const QByteArray json = QJsonDocument(panes).toJson(QJsonDocument::Compact);
  QSqlQuery q = run(db, m_path,
                    QStringLiteral("INSERT INTO compare_votes(created_at, prompt, winner_pane, panes)"
                                   " VALUES(?, ?, ?, ?)"),
                    {now, prompt.isNull() ? QString(QLatin1String("")) : prompt, winnerPane,
                     QString::fromUtf8(json)});
  return q.lastInsertId().toLongLong();
}

QJsonArray ChatStore::compareVotes() const {
  ensureVotesTable();
  const QSqlDatabase db = votesConnection(m_connectionName, m_path);
  const QString sql = QStringLiteral("SELECT id, created_at, prompt, winner_pane, panes FROM compare_votes ORDER BY id");
  QSqlQuery q = run(db, m_path, sql);
  QJsonArray votes;
  while (q.next()) {
    QJsonObject vote;
    vote.insert(QStringLiteral("id"), q.value(0).toLongLong());
    vote.insert(QStringLiteral("createdAt"), q.value(1).toString());
    vote.insert(QStringLiteral("prompt"), q.value(2).toString());
    vote.insert(QStringLiteral("winnerPane"), q.value(3).toInt());
    vote.insert(QStringLiteral("panes"), QJsonDocument::fromJson(q.value(4).toString().toUtf8()).array());
    votes.append(vote);
  }
  if (q.lastError().isValid())
    failVotes(m_path, QStringLiteral("\"%1\" failed").arg(sql), q.lastError().text());
  return votes;
}
