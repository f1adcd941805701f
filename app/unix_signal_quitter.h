// UnixSignalQuitter: SIGTERM / SIGINT / SIGHUP end the application through its event loop.
#pragma once

#include <QObject>

class QSocketNotifier;

/// Turns SIGTERM (logout, shutdown, `kill`), SIGINT (Ctrl+C in a terminal) and SIGHUP (terminal
/// closed) into QCoreApplication::quit(), so exec() returns and the normal shutdown runs: every
/// chat session stops its generation and saves the partial reply (finish reason "abort").
///
/// The documented Qt pattern ("Calling Qt Functions From Unix Signal Handlers"): the handler only
/// write()s the signal number to one end of a socketpair; a QSocketNotifier on the other end reads
/// it in the GUI thread. After the first signal the default dispositions are restored, so a second
/// signal (a shutdown that hangs, Ctrl+C pressed twice) ends the process at once.
///
/// One instance per process, created after the Q(Gui)Application; its destructor restores the
/// default dispositions.
class UnixSignalQuitter : public QObject {
  Q_OBJECT
 public:
  explicit UnixSignalQuitter(QObject* parent = nullptr);
  ~UnixSignalQuitter() override;

  /// False when the socketpair or a handler could not be installed (the signals then keep
  /// their default action).
  bool isInstalled() const { return notifier_ != nullptr; }

 signals:
  /// Emitted in the GUI thread before quit() is called.
  void signalReceived(int signalNumber);

 private:
  void onReadable();
  static void handle(int signalNumber);
  static void restoreDefaults();

  QSocketNotifier* notifier_ = nullptr;
};
