// The stdio transport: the server is a child process (posix_spawnp, its own process group) whose
// stdin takes our messages and whose stdout gives its own, one JSON text per line. A reader
// thread splits stdout into lines and queues the messages; another keeps stderr's tail.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "engine/entrypoints/mcp/transport.h"

extern char** environ;

namespace pagedchat::mcp {

namespace {
using json = nlohmann::json;

// Text a server wrote, safe to show: control characters (a terminal's escape sequences) as '?',
// line breaks as spaces.
std::string printable(std::string s) {
  for (char& c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n' || c == '\r' || c == '\t')
      c = ' ';
    else if (u < 0x20 || u == 0x7f)
      c = '?';
  }
  return s;
}

class StdioTransport final : public Transport {
 public:
  StdioTransport(const ServerConfig& c, TransportLimits limits) : name_(c.name), limits_(limits) {
    int in[2], out[2], err[2];
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)
      throw McpError("MCP server '" + name_ + "': no pipes: " + std::strerror(errno));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    if (!c.cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, c.cwd.c_str());
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setpgroup(&attr, 0);  // its own group: ended with everything it starts (npx)
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    std::vector<std::string> env_strings;
    for (char** e = environ; *e; ++e) {
      const std::string kv = *e;
      if (!c.env.count(kv.substr(0, kv.find('=')))) env_strings.push_back(kv);
    }
    for (const auto& [k, v] : c.env) env_strings.push_back(k + "=" + v);
    std::vector<char*> envp, argv;
    for (std::string& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<std::string> args{c.command};
    args.insert(args.end(), c.args.begin(), c.args.end());
    for (std::string& s : args) argv.push_back(s.data());
    argv.push_back(nullptr);
    const int rc = posix_spawnp(&pid_, c.command.c_str(), &fa, &attr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    ::close(in[0]);
    ::close(out[1]);
    ::close(err[1]);
    if (rc != 0) {
      ::close(in[1]);
      ::close(out[0]);
      ::close(err[0]);
      throw McpError("MCP server '" + name_ + "': cannot start '" + c.command + "': " + std::strerror(rc));
    }
    stdin_ = in[1];
    reader_ = std::thread([this, fd = out[0]] { read_stdout(fd); });
    err_reader_ = std::thread([this, fd = err[0]] { read_stderr(fd); });
  }

  ~StdioTransport() override {
    {
      std::lock_guard lock(write_mutex_);
      if (stdin_ >= 0) ::close(stdin_);
      stdin_ = -1;
    }
    // The spec's shutdown: stdin closed, then SIGTERM, then SIGKILL (to the whole group).
    if (!wait_exit(std::chrono::milliseconds(500))) {
      ::kill(-pid_, SIGTERM);
      if (!wait_exit(std::chrono::milliseconds(2000))) {
        ::kill(-pid_, SIGKILL);
        wait_exit(std::chrono::milliseconds(-1));
      }
    }
    ::kill(-pid_, SIGKILL);  // what it left running in its group
    if (reader_.joinable()) reader_.join();
    if (err_reader_.joinable()) err_reader_.join();
  }

  void send(const json& message) override {
    const std::string line = message.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    std::lock_guard lock(write_mutex_);
    if (stdin_ < 0 || !alive()) throw McpError("MCP server '" + name_ + "' is not running" + detail());
    std::size_t done = 0;
    while (done < line.size()) {
      const ssize_t n = ::write(stdin_, line.data() + done, line.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        // It is exiting: its status and last words make the message (the reader notes them).
        std::unique_lock exit_lock(mutex_);
        cv_.wait_for(exit_lock, std::chrono::seconds(2), [this] { return eof_; });
        exit_lock.unlock();
        throw McpError("MCP server '" + name_ + "' closed its input" + detail());
      }
      done += std::size_t(n);
    }
  }

  std::optional<json> receive(std::chrono::milliseconds timeout) override {
    std::unique_lock lock(mutex_);
    cv_.wait_for(lock, timeout, [this] { return !queue_.empty() || eof_; });
    if (queue_.empty()) return std::nullopt;
    json m = std::move(queue_.front());
    queue_.pop_front();
    return m;
  }

  bool alive() const override {
    std::lock_guard lock(mutex_);
    return !eof_;
  }

  std::string problem() const override {
    std::unique_lock lock(mutex_);
    // A server that exited may have written why to stderr just before: its reader thread gets the
    // last of it (up to its end, when the pipe closes) before the reason is put together.
    if (exited_) cv_.wait_for(lock, std::chrono::milliseconds(1000), [this] { return stderr_done_; });
    std::string p;
    if (exited_) p += exit_text_;
    if (skipped_ > 0)
      p += (p.empty() ? "" : "; ") + std::to_string(skipped_) + " line(s) of its output were no MCP message (" +
           last_skipped_ + ")";
    std::string tail = stderr_tail_;
    tail.erase(0, std::min(tail.size(), tail.find_first_not_of(" \t\r\n")));
    tail.erase(tail.find_last_not_of(" \t\r\n") + 1);
    if (!tail.empty()) p += (p.empty() ? "" : "; ") + std::string("its last error output: ") + printable(tail);
    return p;
  }

 private:
  std::string detail() const {
    const std::string p = problem();
    return p.empty() ? std::string() : " (" + p + ")";
  }

  bool wait_exit(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      int status = 0;
      const pid_t r = ::waitpid(pid_, &status, timeout.count() < 0 ? 0 : WNOHANG);
      if (r == pid_ || (r < 0 && errno == ECHILD)) {
        if (r == pid_) note_exit(status);
        return true;
      }
      if (timeout.count() >= 0 && std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  void note_exit(int status) {
    std::lock_guard lock(mutex_);
    exited_ = true;
    exit_text_ = WIFEXITED(status) ? "it exited with status " + std::to_string(WEXITSTATUS(status))
                                   : "it was ended by signal " + std::to_string(WTERMSIG(status));
  }

  void take_line(std::string& line) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) return;
    json m = json::parse(line, nullptr, false);
    std::lock_guard lock(mutex_);
    if (m.is_discarded() || !m.is_object()) {
      ++skipped_;
      last_skipped_ = printable(line.substr(0, 80));
      return;
    }
    queue_.push_back(std::move(m));
    cv_.notify_all();
  }

  void read_stdout(int fd) {
    std::string line;
    bool too_long = false;
    char buf[65536];
    while (true) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      std::size_t start = 0;
      for (std::size_t i = 0; i < std::size_t(n); ++i) {
        if (buf[i] != '\n') continue;
        if (!too_long) {
          line.append(buf + start, i - start);
          take_line(line);
        }
        line.clear();
        too_long = false;
        start = i + 1;
      }
      if (!too_long) line.append(buf + start, std::size_t(n) - start);
      if (!too_long && line.size() > limits_.max_message_bytes) {
        // Skipped to its end; whoever waits for it is told (an error with the request's id is
        // impossible to read: the id may be past the limit).
        too_long = true;
        line.clear();
        std::lock_guard lock(mutex_);
        queue_.push_back(json{{"_transport_error", "it sent a message longer than " +
                                                       std::to_string(limits_.max_message_bytes >> 20) + " MiB"}});
        cv_.notify_all();
      }
    }
    if (!too_long && !line.empty()) take_line(line);
    ::close(fd);
    wait_exit(std::chrono::milliseconds(200));
    std::lock_guard lock(mutex_);
    eof_ = true;
    if (!exited_) exit_text_ = "it closed its output";
    exited_ = true;
    cv_.notify_all();
  }

  void read_stderr(int fd) {
    char buf[4096];
    while (true) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      std::lock_guard lock(mutex_);
      stderr_tail_.append(buf, std::size_t(n));
      if (stderr_tail_.size() > 600) stderr_tail_.erase(0, stderr_tail_.size() - 600);
    }
    ::close(fd);
    std::lock_guard lock(mutex_);
    stderr_done_ = true;
    cv_.notify_all();
  }

  std::string name_;
  TransportLimits limits_;
  pid_t pid_ = -1;
  int stdin_ = -1;
  std::mutex write_mutex_;
  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  std::deque<json> queue_;
  bool eof_ = false, exited_ = false;
  bool stderr_done_ = false;  ///< the stderr reader reached the end of the pipe
  std::string exit_text_, stderr_tail_, last_skipped_;
  int skipped_ = 0;
  std::thread reader_, err_reader_;
};
}  // namespace

std::unique_ptr<Transport> make_stdio_transport(const ServerConfig& config, TransportLimits limits) {
  return std::make_unique<StdioTransport>(config, limits);
}

}  // namespace pagedchat::mcp
