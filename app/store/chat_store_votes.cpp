// ChatStore's blind-compare votes: one row per vote in compare_votes (schema v2), the panes as
// JSON text.
#include <QJsonDocument>
#include <QJsonObject>

#include "app/store/chat_store.h"
#include "app/store/chat_store_sql.h"

using namespace chatstore;

qint64 ChatStore::addCompareVote(const QString& prompt, int winnerPane, const QJsonArray& panes) {
  const QString what = QStringLiteral("cannot store the vote");
  if (panes.size() < 2) fail(m_path, what, QStringLiteral("a comparison needs two panes or more"));
  if (winnerPane < -1 || winnerPane >= panes.size())
    fail(m_path, what,
         QStringLiteral("winner pane %1 is not -1 (tie) or one of the %2 panes").arg(winnerPane).arg(panes.size()));
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  const QString now = QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs);
  const QByteArray json = QJsonDocument(panes).toJson(QJsonDocument::Compact);
  QSqlQuery q = exec(db, m_path,
                     QStringLiteral("INSERT INTO compare_votes(created_at, prompt, winner_pane, panes)"
                                    " VALUES(?, ?, ?, ?)"),
                     {now, prompt.isNull() ? QString(QLatin1String("")) : prompt, winnerPane, QString::fromUtf8(json)});
  return q.lastInsertId().toLongLong();
}

QJsonArray ChatStore::compareVotes() const {
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  const QString sql = QStringLiteral(
      "SELECT id, created_at, prompt, winner_pane, panes FROM compare_votes ORDER BY id");
  QSqlQuery q = exec(db, m_path, sql);
  QJsonArray votes;
  while (nextRow(q, m_path, sql)) {
    QJsonObject vote;
    vote.insert(QStringLiteral("id"), q.value(0).toLongLong());
    vote.insert(QStringLiteral("createdAt"), q.value(1).toString());
    vote.insert(QStringLiteral("prompt"), q.value(2).toString());
    vote.insert(QStringLiteral("winnerPane"), q.value(3).toInt());
    vote.insert(QStringLiteral("panes"), QJsonDocument::fromJson(q.value(4).toString().toUtf8()).array());
    votes.append(vote);
  }
  return votes;
}
