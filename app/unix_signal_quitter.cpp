#include "app/unix_signal_quitter.h"

#include <QCoreApplication>
#include <QSocketNotifier>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cerrno>
#include <csignal>

namespace {
int g_fds[2] = {-1, -1};  // [0]: written by the handler, [1]: read by the notifier
constexpr int kSignals[] = {SIGTERM, SIGINT, SIGHUP};
}  // namespace

UnixSignalQuitter::UnixSignalQuitter(QObject* parent) : QObject(parent) {
  if (g_fds[0] != -1) return;  // one instance per process
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, g_fds) != 0) {
    g_fds[0] = g_fds[1] = -1;
    return;
  }
  ::fcntl(g_fds[0], F_SETFL, ::fcntl(g_fds[0], F_GETFL) | O_NONBLOCK);  // never block in the handler
  notifier_ = new QSocketNotifier(g_fds[1], QSocketNotifier::Read, this);
  connect(notifier_, &QSocketNotifier::activated, this, &UnixSignalQuitter::onReadable);

  struct sigaction action = {};
  action.sa_handler = &UnixSignalQuitter::handle;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int s : kSignals) ::sigaction(s, &action, nullptr);
}

UnixSignalQuitter::~UnixSignalQuitter() {
  if (!notifier_) return;
  restoreDefaults();
  delete notifier_;
  notifier_ = nullptr;
  ::close(g_fds[0]);
  ::close(g_fds[1]);
  g_fds[0] = g_fds[1] = -1;
}

void UnixSignalQuitter::handle(int signalNumber) {
  // Async-signal-safe only: write() one byte and keep errno as it was.
  const int savedErrno = errno;
  const char byte = static_cast<char>(signalNumber);
  [[maybe_unused]] const ssize_t n = ::write(g_fds[0], &byte, 1);
  errno = savedErrno;
}

void UnixSignalQuitter::restoreDefaults() {
  struct sigaction action = {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  for (int s : kSignals) ::sigaction(s, &action, nullptr);
}

void UnixSignalQuitter::onReadable() {
  char byte = 0;
  if (::read(g_fds[1], &byte, 1) != 1) return;
  restoreDefaults();  // a second signal while shutting down ends the process the usual way
  emit signalReceived(static_cast<unsigned char>(byte));
  QCoreApplication::quit();
}
