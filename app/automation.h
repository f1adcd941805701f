// Automation: the hidden --automation test hook (commands on stdin, events on stdout).
#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QObject>
#include <QSet>

class AppController;
class PaneState;
class QSocketNotifier;

/// Lets a test drive the running app from outside (tests/app/store/test_crash_safety.cpp kills it with
/// SIGKILL and checks the database against what it reported). Started by the hidden command-line
/// option `--automation`; never in normal use.
///
/// Commands, one a line on stdin (ids are the database's; P is a pane index from 0):
///   panes N             make sure there are at least N panes
///   send P TEXT         send TEXT in pane P (as "send to all" does for one pane)
///   new P               pane P shows no conversation (the next send starts one)
///   stop P              stop pane P's reply
///   rename ID TITLE     rename conversation ID (as the sidebar does)
///   delete ID           delete conversation ID (hidden, undoable: the sidebar's Delete)
///   purge               delete the hidden conversations for good (the undo time ran out)
/// Events, one JSON object a line on stdout, flushed at once; "t" is the monotonic clock in ms
/// (QElapsedTimer's reference, CLOCK_MONOTONIC: comparable across processes):
///   {"event":"ready"}                                          the model is loaded
///   {"event":"sent","pane","ok","conversationId","userId","replyId","text","t"}  after the
///       user's message was committed (ok false: refused, "error" says why)
///   {"event":"delta","pane","replyId","text","t"}              streamed text as the pane shows it
///   {"event":"finished","pane","replyId","reason","t"}         after the reply was saved
///   {"event":"renamed","conversationId","title","t"}           after the rename was committed
///   {"event":"deleted","conversationId","t"}                   after the hiding was committed
///   {"event":"purged","t"}                                     after the purge
///   {"event":"error","text"}                                   an unknown or malformed command
class Automation : public QObject {
  Q_OBJECT
 public:
  /// Reads stdin from now on; prints "ready" once the controller's engine is ready.
  explicit Automation(AppController* app);

 private:
  void onReadable();
  void run(const QByteArray& line);
  void watch(PaneState* session);
  void emitEvent(QJsonObject event);
  int paneOf(const PaneState* session) const;

  AppController* app_;
  QSocketNotifier* notifier_ = nullptr;
  QByteArray buffer_;
  QSet<const PaneState*> watched_;  ///< sessions whose replies are reported
  bool readySent_ = false;
};
