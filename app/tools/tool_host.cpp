#include "app/tools/tool_host.h"

#include <QDir>
#include <QFile>
#include <QPointer>
#include <QSettings>
#include <QUrl>

#include <nlohmann/json.hpp>

#include "app/engine/remote/api_key_store.h"
#include "engine/entrypoints/mcp/mcp_client.h"
#include "engine/entrypoints/mcp/mcp_config.h"

namespace {
const QString kConfigKey = QStringLiteral("tools/mcpServers");
const QString kAlwaysKey = QStringLiteral("tools/alwaysAllowed");
const QString kStepsKey = QStringLiteral("tools/maxToolSteps");
const QString kSecretServersKey = QStringLiteral("tools/secretServers");  // keychain accounts in use
// What a call that could not run tells the model is English (the model reads it, not the user).
/// A servers document larger than this is no configuration (the file picker may pick anything).
constexpr qint64 kMaxConfigBytes = 1 << 20;

using pagedchat::mcp::ServerConfig;

QString account(const QString& server) { return QStringLiteral("mcp-server:") + server; }

/// A server's env and headers values as the keychain keeps them; "" when it has none.
QString secretsOf(const ServerConfig& c) {
  if (c.env.empty() && c.headers.empty()) return {};
  return QString::fromStdString(nlohmann::json{{"env", c.env}, {"headers", c.headers}}.dump());
}

/// `c` with every env and headers value replaced by kKeptSecret (the document kept and shown).
ServerConfig hidden(ServerConfig c) {
  for (auto& [name, value] : c.env) value = ToolHost::kKeptSecret;
  for (auto& [name, value] : c.headers) value = ToolHost::kKeptSecret;
  return c;
}

/// Puts the values of `secrets` (secretsOf()'s text) in place of kKeptSecret in `c`; returns the
/// names of the values still missing.
QStringList fillSecrets(ServerConfig& c, const QString& secrets) {
  const nlohmann::json kept = nlohmann::json::parse(secrets.toStdString(), nullptr, false);
  QStringList missing;
  auto fill = [&](std::map<std::string, std::string>& values, const char* group) {
    for (auto& [name, value] : values) {
      if (value != ToolHost::kKeptSecret) continue;
      const nlohmann::json* v = kept.is_object() && kept.contains(group) && kept[group].is_object() &&
                                        kept[group].contains(name) && kept[group][name].is_string()
                                    ? &kept[group][name]
                                    : nullptr;
      if (v)
        value = v->get<std::string>();
      else
        missing << QString::fromStdString(name);
    }
  };
  fill(c.env, "env");
  fill(c.headers, "headers");
  return missing;
}

QVariantMap serverEntry(const QString& name, const QString& state, int tools, const QString& error) {
  return {{QStringLiteral("name"), name},
          {QStringLiteral("state"), state},
          {QStringLiteral("tools"), tools},
          {QStringLiteral("error"), error}};
}
}  // namespace

/// The running clients and which server runs which function; touched on the host's thread only.
struct ToolHost::Servers {
  std::vector<std::unique_ptr<pagedchat::mcp::Client>> clients;
  std::vector<pagedchat::mcp::ToolRoute> routes;
};

ToolHost::ToolHost(QSettings* settings, ApiKeyStore* keys, QObject* parent)
    : QObject(parent), settings_(settings), keys_(keys) {
  thread_.setObjectName(QStringLiteral("mcp-servers"));
  context_ = new QObject;
  context_->moveToThread(&thread_);
  connect(&thread_, &QThread::finished, context_, &QObject::deleteLater);
  thread_.start();
  if (settings_) {
    config_ = settings_->value(kConfigKey).toString();
    const QStringList always = settings_->value(kAlwaysKey).toStringList();
    always_ = QSet<QString>(always.cbegin(), always.cend());
    maxToolSteps_ = std::clamp(settings_->value(kStepsKey, kDefaultMaxToolSteps).toInt(), 1, kMaxToolStepsLimit);
  }
  startKept();
}

ToolHost::~ToolHost() {
  for (const auto& flag : std::as_const(cancelled_)) flag->store(true);
  // The clients go on their thread (a server's process is ended there), then the thread.
  QMetaObject::invokeMethod(
      context_, [old = std::move(live_)]() mutable { old.reset(); }, Qt::QueuedConnection);
  thread_.quit();
  thread_.wait();
}

QString ToolHost::applyServersConfig(const QString& json) {
  std::vector<ServerConfig> configs;
  if (!json.trimmed().isEmpty()) {
    try {
      configs = pagedchat::mcp::parse_servers_config(json.toStdString());
    } catch (const std::exception& e) {
      return QString::fromStdString(e.what());
    }
  }
  // A value left as kKeptSecret keeps the secret kept for it.
  for (ServerConfig& c : configs) {
    const QStringList missing = fillSecrets(c, secrets_.value(QString::fromStdString(c.name)));
    if (!missing.isEmpty())
      return tr("%1 in server \"%2\" says it is kept in the keychain, but nothing is kept for it: type the value "
                "again.")
          .arg(missing.join(QStringLiteral(", ")), QString::fromStdString(c.name));
  }
  keep(configs);
  restart(configs);
  return {};
}

void ToolHost::keep(const std::vector<ServerConfig>& configs) {
  const int ticket = ++keepTicket_;
  std::vector<ServerConfig> shown;
  QHash<QString, QString> secrets;
  for (const ServerConfig& c : configs) {
    shown.push_back(hidden(c));
    if (const QString s = secretsOf(c); !s.isEmpty()) secrets.insert(QString::fromStdString(c.name), s);
  }
  const QString whole = configs.empty() ? QString()
                                        : QString::fromStdString(pagedchat::mcp::servers_config_json(configs));
  config_ = configs.empty() ? QString() : QString::fromStdString(pagedchat::mcp::servers_config_json(shown));
  secretsNote_.clear();
  const QStringList before = settings_ ? settings_->value(kSecretServersKey).toStringList() : QStringList();
  secrets_ = secrets;
  if (!keys_) {  // nowhere safer: the document as it is
    config_ = whole;
    if (settings_) settings_->setValue(kConfigKey, whole);
    return;
  }
  if (settings_) {
    settings_->setValue(kConfigKey, config_);
    QStringList names = secrets.keys();
    names.sort();
    settings_->setValue(kSecretServersKey, names);
  }
  for (const QString& name : before)  // servers gone, or without secrets now
    if (!secrets.contains(name)) keys_->writeKey(account(name), QString(), [](const QString&) {});
  QPointer<ToolHost> self(this);
  for (auto it = secrets.cbegin(); it != secrets.cend(); ++it) {
    keys_->writeKey(account(it.key()), it.value(), [self, ticket, whole](const QString& error) {
      if (!self || error.isEmpty() || self->keepTicket_ != ticket || !self->secretsNote_.isEmpty()) return;
      // No keychain: the secrets stay with the document, and the page says so.
      self->secretsNote_ =
          tr("The servers' env and headers are kept in pagedchat.ini: the keychain cannot be used (%1).").arg(error);
      self->config_ = whole;
      if (self->settings_) {
        self->settings_->setValue(kConfigKey, whole);
        self->settings_->remove(kSecretServersKey);
      }
      emit self->serversChanged();
    });
  }
}

void ToolHost::startKept() {
  std::vector<ServerConfig> configs;
  if (!config_.isEmpty()) {
    try {
      configs = pagedchat::mcp::parse_servers_config(config_.toStdString());
    } catch (const std::exception& e) {  // a kept document this version reads differently
      restart({}, {serverEntry(QString(), QStringLiteral("failed"), 0, QString::fromStdString(e.what()))});
      return;
    }
  }
  QStringList needed;
  for (const ServerConfig& c : configs) {
    ServerConfig probe = c;
    if (!fillSecrets(probe, QString()).isEmpty()) needed << QString::fromStdString(c.name);
  }
  if (needed.isEmpty() || !keys_) {
    restart(configs);
    return;
  }
  // Read every server's secrets, then start them all (a server whose secrets cannot be read is
  // listed failed, with the keychain's reason).
  auto pending = std::make_shared<int>(static_cast<int>(needed.size()));
  auto failures = std::make_shared<QHash<QString, QString>>();
  const int generation = generation_;
  QPointer<ToolHost> self(this);
  for (const QString& name : needed) {
    keys_->readKey(account(name),
                   [self, name, configs, pending, failures, generation](const QString& key, const QString& error) {
                     if (!self || self->generation_ != generation) return;  // another document was applied meanwhile
                     if (!key.isEmpty())
                       self->secrets_.insert(name, key);
                     else
                       failures->insert(name, error.isEmpty() ? tr("nothing is kept in the keychain for it") : error);
                     if (--*pending > 0) return;
                     std::vector<ServerConfig> ready;
                     QVariantList failed;
                     for (ServerConfig c : configs) {
                       const QString n = QString::fromStdString(c.name);
                       const QStringList missing = fillSecrets(c, self->secrets_.value(n));
                       if (missing.isEmpty()) {
                         ready.push_back(std::move(c));
                       } else if (c.enabled) {
                         failed.append(serverEntry(n, QStringLiteral("failed"), 0,
                                                   tr("its env and headers could not be read from the keychain: %1")
                                                       .arg(failures->value(n, missing.join(QStringLiteral(", "))))));
                       }
                     }
                     self->restart(ready, failed);
                   });
  }
}

QString ToolHost::importServersFile(const QString& file) {
  QString path = file.trimmed();
  if (path.startsWith(QLatin1String("file:"))) path = QUrl(path).toLocalFile();
  if (path.startsWith(QLatin1String("~/"))) path = QDir::homePath() + path.mid(1);
  if (path.isEmpty()) return tr("No file was named.");
  QFile f(path);
  if (f.size() > kMaxConfigBytes) return tr("%1 is too large for a servers file.").arg(f.fileName());
  if (!f.open(QIODevice::ReadOnly)) return tr("Cannot read %1: %2").arg(f.fileName(), f.errorString());
  const QString text = QString::fromUtf8(f.read(kMaxConfigBytes));
  if (text.trimmed().isEmpty()) return tr("%1 is empty.").arg(f.fileName());
  return applyServersConfig(text);
}

void ToolHost::setMaxToolSteps(int n) {
  n = std::clamp(n, 1, kMaxToolStepsLimit);
  if (n == maxToolSteps_) return;
  maxToolSteps_ = n;
  if (settings_) settings_->setValue(kStepsKey, n);
  emit maxToolStepsChanged();
}

void ToolHost::setAlwaysAllowed(const QString& function, bool always) {
  if (always == always_.contains(function)) return;
  if (always)
    always_.insert(function);
  else
    always_.remove(function);
  if (settings_) {
    QStringList list(always_.cbegin(), always_.cend());
    list.sort();
    settings_->setValue(kAlwaysKey, list);
  }
}

void ToolHost::restart(const std::vector<ServerConfig>& configs, const QVariantList& failed) {
  const int generation = ++generation_;
  servers_ = failed;
  for (const auto& c : configs)
    if (c.enabled) servers_.append(serverEntry(QString::fromStdString(c.name), QStringLiteral("starting"), 0, {}));
  toolsJson_.clear();
  functions_.clear();
  emit serversChanged();
  auto fresh = std::make_shared<Servers>();
  QPointer<ToolHost> self(this);
  QMetaObject::invokeMethod(
      context_,
      [self, generation, configs, failed, old = std::move(live_), fresh]() mutable {
        old.reset();  // the previous servers end first
        QVariantList servers = failed;
        std::vector<std::pair<std::string, std::vector<pagedchat::mcp::Tool>>> listed;
        for (const pagedchat::mcp::ServerConfig& c : configs) {
          if (!c.enabled) continue;
          const QString name = QString::fromStdString(c.name);
          try {
            auto client = std::make_unique<pagedchat::mcp::Client>(c);
            std::vector<pagedchat::mcp::Tool> tools = client->list_tools();
            servers.append(serverEntry(name, QStringLiteral("ready"), static_cast<int>(tools.size()), {}));
            listed.emplace_back(c.name, std::move(tools));
            fresh->clients.push_back(std::move(client));
          } catch (const std::exception& e) {
            servers.append(serverEntry(name, QStringLiteral("failed"), 0, QString::fromStdString(e.what())));
          }
        }
        const nlohmann::json tools = pagedchat::mcp::openai_tools(listed, fresh->routes);
        QSet<QString> functions;
        for (const auto& r : fresh->routes) functions.insert(QString::fromStdString(r.function));
        const QString toolsJson = functions.isEmpty() ? QString() : QString::fromStdString(tools.dump());
        QMetaObject::invokeMethod(
            self,
            [self, generation, servers, toolsJson, functions] {
              if (self) self->onStarted(generation, servers, toolsJson, functions);
            },
            Qt::QueuedConnection);
      },
      Qt::QueuedConnection);
  live_ = std::move(fresh);
}

void ToolHost::onStarted(int generation, const QVariantList& servers, const QString& toolsJson,
                         const QSet<QString>& functions) {
  if (generation != generation_) return;  // another document was applied since
  servers_ = servers;
  toolsJson_ = toolsJson;
  functions_ = functions;
  emit serversChanged();
}

int ToolHost::callTool(const QString& function, const QString& arguments) {
  const int ticket = nextTicket_++;
  auto flag = std::make_shared<std::atomic_bool>(false);
  cancelled_.insert(ticket, flag);
  QPointer<ToolHost> self(this);
  auto finished = [self, ticket](const QString& text, bool isError) {
    QMetaObject::invokeMethod(
        self,
        [self, ticket, text, isError] {
          if (!self) return;
          self->cancelled_.remove(ticket);
          emit self->callFinished(ticket, text, isError);
        },
        Qt::QueuedConnection);
  };
  if (!functions_.contains(function)) {
    finished(QStringLiteral("There is no tool named \"%1\".").arg(function.left(100)), true);
    return ticket;
  }
  QMetaObject::invokeMethod(
      context_,
      [servers = live_, function = function.toStdString(), arguments = arguments.toStdString(), flag, finished] {
        const auto route = std::find_if(servers->routes.begin(), servers->routes.end(),
                                        [&](const pagedchat::mcp::ToolRoute& r) { return r.function == function; });
        pagedchat::mcp::Client* client = nullptr;
        if (route != servers->routes.end())
          for (const auto& c : servers->clients)
            if (c->name() == route->server) client = c.get();
        if (!client || !client->alive()) {
          finished(QStringLiteral("The server of \"%1\" is not running.").arg(QString::fromStdString(function)), true);
          return;
        }
        const nlohmann::json args = nlohmann::json::parse(arguments.empty() ? "{}" : arguments, nullptr, false);
        if (!args.is_object()) {
          finished(QStringLiteral("The arguments are not a JSON object: %1")
                       .arg(QString::fromStdString(arguments).left(200)),
                   true);
          return;
        }
        try {
          const pagedchat::mcp::ToolResult result = client->call_tool(route->tool, args,
                                                                      [flag] { return flag->load(); });
          finished(QString::fromStdString(result.text()), result.is_error);
        } catch (const std::exception& e) {
          finished(QString::fromStdString(e.what()), true);
        }
      },
      Qt::QueuedConnection);
  return ticket;
}

void ToolHost::cancelCall(int ticket) {
  if (const auto flag = cancelled_.value(ticket)) flag->store(true);
}
