// ToolHost's document: applied, kept (its secrets in the keychain) and read back at start-up.
#include <QDir>
#include <QFile>
#include <QPointer>
#include <QSettings>
#include <QUrl>

#include <nlohmann/json.hpp>

#include "app/engine/remote/api_key_store.h"
#include "app/tools/tool_host.h"
#include "engine/entrypoints/mcp/mcp_config.h"

namespace {
const QString kConfigKey = QStringLiteral("tools/mcpServers");
const QString kSecretServersKey = QStringLiteral("tools/secretServers");  // keychain accounts in use
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

}  // namespace

QString ToolHost::storedConfig() const { return settings_ ? settings_->value(kConfigKey).toString() : QString(); }

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
