// ToolHost: the app's MCP tool servers (Settings → Tools), their tools as the panes offer them to
// models, and the calls the panes run.
#pragma once

#include <QHash>
#include <QList>
#include <QObject>
#include <QSet>
#include <QString>
#include <QStringList>
#include <QVariantList>
#include <QVariantMap>

#include "app/store/image_attachment.h"

#include <atomic>
#include <memory>
#include <vector>

class ApiKeyStore;
class QSettings;

namespace pagedchat::mcp {
struct ServerConfig;
struct Tool;
struct ToolResult;
struct ToolRoute;
}  // namespace pagedchat::mcp

/// The servers of an `mcpServers` document (the JSON Claude Desktop, Cursor, LM Studio and VS
/// Code read; pagedchat::mcp::parse_servers_config), kept in pagedchat.ini ("tools/mcpServers"),
/// each started on a thread of its own when the document is applied and at start-up (a slow or
/// hanging server delays neither the others nor their calls). Each server's
/// tools become OpenAI `tools` entries (a name two servers share is given to the second as
/// "SERVER__NAME": pagedchat::mcp::openai_tools) that a pane offers to its model; callTool() runs a
/// call on its server's thread (one at a time per server), and callFinished() brings the text the
/// model gets back
/// (the tool's result, its error, or why it could not run). A server that fails to start is listed
/// with its error and left out; the others work. Which tools run without asking ("Always allow")
/// is kept in pagedchat.ini ("tools/alwaysAllowed", as "SERVER/TOOL": another server's tool of the
/// same name is asked about). Runs on the GUI thread.
///
/// Secrets: the values of the servers' `env` and `headers` (tokens, API keys) go to the system
/// keychain (ApiKeyStore, account "mcp-server:NAME"), and the document kept and shown has
/// kKeptSecret in their place; a value left as kKeptSecret when the document is applied again
/// keeps its secret. Without a keychain (no D-Bus session) the document is kept whole in
/// pagedchat.ini and secretsNote() says so.
class ToolHost : public QObject {
  Q_OBJECT
  /// The applied `mcpServers` document ("" = none).
  Q_PROPERTY(QString serversConfig READ serversConfig NOTIFY serversChanged)
  /// One map per server: name, state ("starting", "ready", "failed"), tools (how many), error.
  Q_PROPERTY(QVariantList servers READ servers NOTIFY serversChanged)
  /// Tools offered in all (0 while none is ready).
  Q_PROPERTY(int toolCount READ toolCount NOTIFY serversChanged)
  /// The tools' function names, sorted (a pane's "must call" choice).
  Q_PROPERTY(QStringList toolNames READ toolNames NOTIFY serversChanged)
  /// Tool calls one user message may lead to before the pane stops asking the model again.
  Q_PROPERTY(int maxToolSteps READ maxToolSteps WRITE setMaxToolSteps NOTIFY maxToolStepsChanged)
  /// How many tools run without asking ("Always allow").
  Q_PROPERTY(int alwaysAllowedCount READ alwaysAllowedCount NOTIFY alwaysAllowedChanged)
  /// Why the secrets are not in the keychain ("" = they are, or there are none).
  Q_PROPERTY(QString secretsNote READ secretsNote NOTIFY serversChanged)

 public:
  static constexpr int kDefaultMaxToolSteps = 8;
  static constexpr int kMaxToolStepsLimit = 100;
  /// What stands for a secret kept in the keychain in the document shown and kept.
  static constexpr const char* kKeptSecret = "(in the keychain)";

  /// `settings` (may be null: nothing is kept) and `keys` (may be null: secrets stay with the
  /// document) must outlive the host. Starts the servers of the kept document, if any, once their
  /// secrets are read back.
  explicit ToolHost(QSettings* settings, ApiKeyStore* keys = nullptr, QObject* parent = nullptr);
  /// Stops the servers (their processes end) and their threads; a call in progress is stopped (a
  /// server still starting is waited for, at most its start-up timeout).
  ~ToolHost() override;

  /// Checks `json` (an `mcpServers` document or its inner object; "" = no servers), keeps it and
  /// restarts the servers with it. Returns "" or why the document was refused (nothing changes).
  Q_INVOKABLE QString applyServersConfig(const QString& json);
  /// applyServersConfig() with a file's contents (a claude_desktop_config.json, an mcp.json):
  /// `file` is a path ("~/" for the home folder) or a file:// URL.
  Q_INVOKABLE QString importServersFile(const QString& file);

  QString serversConfig() const { return config_; }
  QString secretsNote() const { return secretsNote_; }
  QVariantList servers() const { return servers_; }
  int toolCount() const { return static_cast<int>(functions_.size()); }
  QStringList toolNames() const { return offeredToolNames({}); }
  /// The same without the tools of the servers named in `serversOff` (a pane's choice).
  Q_INVOKABLE QStringList offeredToolNames(const QStringList& serversOff) const;
  int maxToolSteps() const { return maxToolSteps_; }
  void setMaxToolSteps(int n);  ///< clamped to [1, kMaxToolStepsLimit]

  /// The tools as an OpenAI tools array's JSON text, "" when none is ready.
  QString toolsJson() const { return toolsJson_; }
  /// The same without the tools of the servers named in `serversOff` (a pane's choice,
  /// PaneSettings::toolServersOff); "" when none is left.
  QString toolsJson(const QStringList& serversOff) const;
  /// How many tools toolsJson(`serversOff`) offers.
  int toolCount(const QStringList& serversOff) const;
  /// The server whose tool `function` is ("" for none).
  QString serverOf(const QString& function) const;
  /// True for a function name toolsJson() offers.
  bool hasTool(const QString& function) const { return functions_.contains(function); }
  /// Why a call of `function` with `arguments` cannot run, as the model is told it (English): no
  /// such tool (or its server is in `serversOff`: the pane did not offer it), or arguments that
  /// are no JSON object; "" when it can.
  QString whyNotRunnable(const QString& function, const QString& arguments, const QStringList& serversOff = {}) const;
  /// Runs `function` with `arguments` (a JSON object's text) on the servers' thread; returns a
  /// ticket, and callFinished(ticket, ...) follows (also for an unknown function or arguments
  /// that are no object: the model is told why).
  int callTool(const QString& function, const QString& arguments);
  /// The most pictures one tool result brings (the rest are named in its text only).
  static constexpr int kMaxResultImages = 8;
  /// The pictures of a tool result: its "image" blocks (base64 data, decoded to check them, PNG,
  /// JPEG or WebP), at most kMaxResultImages. One that cannot be used is named in `text` (the
  /// result's text, which names every picture) with the reason.
  static QList<ImageAttachment> resultImages(const pagedchat::mcp::ToolResult& result, QString& text);
  /// Stops a call in progress (the server is sent notifications/cancelled); its callFinished()
  /// says it was stopped.
  void cancelCall(int ticket);
  /// The user chose "Always allow" for `function`'s tool on its server (kept), or not.
  Q_INVOKABLE bool isAlwaysAllowed(const QString& function) const { return always_.contains(alwaysKey(function)); }
  Q_INVOKABLE void setAlwaysAllowed(const QString& function, bool always);
  int alwaysAllowedCount() const { return static_cast<int>(always_.size()); }
  /// Every tool is asked about again.
  Q_INVOKABLE void forgetAlwaysAllowed();

 signals:
  void serversChanged();
  void maxToolStepsChanged();
  void alwaysAllowedChanged();
  /// The result of callTool(`ticket`): the text the model gets; `isError` when the tool failed
  /// or could not run; the pictures the tool returned (its "image" blocks that decode; at most
  /// kMaxResultImages), which the text names.
  void callFinished(int ticket, const QString& text, bool isError, const QList<ImageAttachment>& images);

 private:
  struct Runner;  // one server: its thread and client
  struct Listed;  // the started servers' tools and routes
  /// One entry of servers().
  static QVariantMap serverEntry(const QString& name, const QString& state, int tools, const QString& error);
  /// Starts `configs` (secrets filled in) in place of the running servers; `failed` are listed
  /// as they are (servers that cannot start: their secrets could not be read).
  void restart(const std::vector<pagedchat::mcp::ServerConfig>& configs, const QVariantList& failed = {});
  /// Keeps the document (`configs` with their secrets): the secrets in the keychain, or the whole
  /// document in pagedchat.ini when there is none.
  void keep(const std::vector<pagedchat::mcp::ServerConfig>& configs);
  /// The kept document's secrets read back from the keychain, then restart().
  void startKept();
  /// The document pagedchat.ini keeps ("" = none, or no settings).
  QString storedConfig() const;
  /// Server `name` of `generation` started with `tools` (null: it failed with `error`).
  void onServerStarted(int generation, const QString& name,
                       const std::shared_ptr<std::vector<pagedchat::mcp::Tool>>& tools, const QString& error);
  /// Stops the runners of the previous document (their threads end in the background).
  void retire();
  /// "SERVER/TOOL" of `function` (`function` itself when no server offers it).
  QString alwaysKey(const QString& function) const;

  QSettings* settings_;
  ApiKeyStore* keys_;
  QString config_;
  QString secretsNote_;
  /// Per server: its secrets as the keychain holds them ({"env": {...}, "headers": {...}} text).
  QHash<QString, QString> secrets_;
  QVariantList servers_;
  QString toolsJson_;
  QSet<QString> functions_;
  QSet<QString> always_;
  int maxToolSteps_ = kDefaultMaxToolSteps;
  int generation_ = 0;
  int keepTicket_ = 0;  ///< of the latest keep(): older keychain answers are ignored
  int nextTicket_ = 1;
  QHash<int, std::shared_ptr<std::atomic_bool>> cancelled_;  ///< calls in progress
  QList<std::shared_ptr<Runner>> runners_;                   ///< the servers of the applied document
  QList<std::shared_ptr<Runner>> retiring_;                  ///< earlier ones whose threads are ending
  std::unique_ptr<Listed> listed_;
};
