// BlindCompare: the blind-compare mode of the side-by-side panes.
#pragma once

#include <QList>
#include <QObject>
#include <QString>
#include <QStringList>

class ChatStore;
class PaneListModel;

/// Blind compare: with two panes or more, the user turns it on and sends one prompt to all panes
/// (PaneListModel::sendToAll). The panes are then shown as "A", "B", ... in a shuffled order and
/// their settings are hidden; once every pane has finished, the user votes (vote(pane) or a tie,
/// vote(-1)); the vote goes to the store (ChatStore::addCompareVote) and the panes are revealed.
/// Phases: "idle" (no round yet), "generating", "voting", "revealed". Each new round reshuffles
/// the labels (a round started from "idle" keeps the labels already shown). Closing or adding a
/// pane ends the round unvoted.
class BlindCompare : public QObject {
  Q_OBJECT
  Q_PROPERTY(bool enabled READ isEnabled WRITE setEnabled NOTIFY enabledChanged)
  /// Enough panes (two or more) to compare.
  Q_PROPERTY(bool available READ isAvailable NOTIFY availableChanged)
  Q_PROPERTY(QString phase READ phase NOTIFY changed)
  /// Settings and titles are hidden (enabled and not revealed yet).
  Q_PROPERTY(bool hidden READ isHidden NOTIFY changed)
  /// Label of each pane, by pane index ("A", "B", ...; shuffled).
  Q_PROPERTY(QStringList labels READ labels NOTIFY changed)
  /// The round's prompt; the pane index voted for (-1 = tie, -2 = no vote yet).
  Q_PROPERTY(QString prompt READ prompt NOTIFY changed)
  Q_PROPERTY(int winnerPane READ winnerPane NOTIFY changed)
  Q_PROPERTY(QString errorText READ errorText NOTIFY changed)

 public:
  BlindCompare(PaneListModel* panes, ChatStore* store, QObject* parent = nullptr);

  bool isEnabled() const { return enabled_; }
  void setEnabled(bool on);
  bool isAvailable() const;
  QString phase() const { return phase_; }
  bool isHidden() const { return enabled_ && phase_ != QLatin1String("revealed"); }
  QStringList labels() const { return labels_; }
  QString prompt() const { return prompt_; }
  int winnerPane() const { return winnerPane_; }
  QString errorText() const { return errorText_; }

  /// Label of pane `index` ("" when out of range).
  Q_INVOKABLE QString labelFor(int index) const;
  /// Pane index carrying label number `labelIndex` (0 = "A"), or -1.
  Q_INVOKABLE int paneForLabel(int labelIndex) const;
  /// Records the vote for pane `winnerPane` (-1 = tie) and reveals. Only in phase "voting";
  /// returns false (errorText says why) otherwise or when the store fails.
  Q_INVOKABLE bool vote(int winnerPane);
  /// Id of the last stored vote (0 = none).
  qint64 lastVoteId() const { return lastVoteId_; }

 signals:
  void enabledChanged();
  void availableChanged();
  void changed();

 private:
  void startRound(const QString& text, const QList<int>& panes);
  void endRound();
  void shuffle();
  void checkFinished();
  void setPhase(const QString& phase);

  PaneListModel* panes_;
  ChatStore* store_;
  bool enabled_ = false;
  QString phase_ = QStringLiteral("idle");
  QStringList labels_;
  QString prompt_;
  QList<int> roundPanes_;
  int winnerPane_ = -2;
  QString errorText_;
  qint64 lastVoteId_ = 0;
};
