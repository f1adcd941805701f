#include "app/panes/blind_compare.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QRandomGenerator>

#include <algorithm>

#include "app/panes/message_list_model.h"
#include "app/panes/pane_list_model.h"
#include "app/panes/pane_settings.h"
#include "app/panes/pane_state.h"
#include "app/store/chat_store.h"
#include "app/store/store_health.h"

BlindCompare::BlindCompare(PaneListModel* panes, ChatStore* store, QObject* parent)
    : QObject(parent), panes_(panes), store_(store) {
  shuffle();
  connect(panes_, &PaneListModel::sentToAll, this, [this](const QString& text, const QList<int>& sent) {
    if (enabled_ && sent.size() >= 2) startRound(text, sent);
  });
  connect(panes_, &PaneListModel::anyBusyChanged, this, &BlindCompare::checkFinished);
  connect(panes_, &PaneListModel::countChanged, this, [this] {
    emit availableChanged();
    if (!isAvailable()) setEnabled(false);
    endRound();
  });
}

bool BlindCompare::isAvailable() const { return panes_->count() >= 2; }

void BlindCompare::setEnabled(bool on) {
  on = on && isAvailable();
  if (on == enabled_) return;
  enabled_ = on;
  emit enabledChanged();
  endRound();
}

QString BlindCompare::labelFor(int index) const { return labels_.value(index); }

int BlindCompare::paneForLabel(int labelIndex) const {
  return static_cast<int>(labels_.indexOf(QString(QChar(u'A' + labelIndex))));
}

void BlindCompare::shuffle() {
  QList<int> order;
  for (int i = 0; i < panes_->count(); ++i) order.append(i);
  std::shuffle(order.begin(), order.end(), *QRandomGenerator::global());
  labels_.clear();
  for (int i : order) labels_.append(QString(QChar(u'A' + i)));
}

void BlindCompare::startRound(const QString& text, const QList<int>& panes) {
  // Labels shown while idle (fresh from endRound) stay: the user may already have seen them.
  // A round after a finished one gets new ones; `labels` notifies, so the headers follow.
  if (phase_ != QLatin1String("idle")) shuffle();
  prompt_ = text.trimmed();
  roundPanes_ = panes;
  winnerPane_ = -2;
  errorText_.clear();
  setPhase(QStringLiteral("generating"));
  checkFinished();
}

void BlindCompare::endRound() {
  shuffle();
  prompt_.clear();
  roundPanes_.clear();
  winnerPane_ = -2;
  errorText_.clear();
  phase_ = QStringLiteral("idle");
  emit changed();
}

void BlindCompare::checkFinished() {
  if (phase_ != QLatin1String("generating")) return;
  for (int i : std::as_const(roundPanes_)) {
    const PaneState* s = panes_->paneAt(i);
    if (s && s->isBusy()) return;
  }
  setPhase(QStringLiteral("voting"));
}

void BlindCompare::setPhase(const QString& phase) {
  phase_ = phase;
  emit changed();
}

bool BlindCompare::vote(int winnerPane) {
  if (phase_ != QLatin1String("voting")) {
    errorText_ = tr("Vote once every pane has finished its answer.");
    emit changed();
    return false;
  }
  QJsonArray panes;
  int winner = -1;
  for (int i : std::as_const(roundPanes_)) {
    const PaneState* s = panes_->paneAt(i);
    if (!s) continue;
    const MessageListModel* m = s->messages();
    const int last = m->rowCount() - 1;
    QJsonObject pane;
    pane.insert(QStringLiteral("pane"), i);
    pane.insert(QStringLiteral("conversationId"), s->conversationId());
    pane.insert(QStringLiteral("messageId"), last >= 0 ? m->at(last).id : 0);
    pane.insert(QStringLiteral("label"), labelFor(i));
    pane.insert(QStringLiteral("settings"), s->settings()->toJson());
    pane.insert(QStringLiteral("text"), last >= 0 ? m->textAt(last) : QString());
    if (i == winnerPane) winner = static_cast<int>(panes.size());
    panes.append(pane);
  }
  if (winnerPane >= 0 && winner < 0) {
    errorText_ = tr("Pane %1 is not part of this comparison.").arg(winnerPane + 1);
    emit changed();
    return false;
  }
  try {
    lastVoteId_ = store_->addCompareVote(prompt_, winner, panes);
  } catch (const StoreError& e) {
    errorText_ = tr("The vote could not be saved: %1").arg(store_->health()->report(e));
    emit changed();
    return false;
  }
  winnerPane_ = winnerPane;
  errorText_.clear();
  setPhase(QStringLiteral("revealed"));
  return true;
}
