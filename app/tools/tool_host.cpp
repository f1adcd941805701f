// ToolHost's servers (a thread each), the tools they offer and the calls they run.
#include "app/tools/tool_host.h"

#include <algorithm>

#include <QPointer>
#include <QSettings>
#include <QThread>

#include <nlohmann/json.hpp>

#include "engine/entrypoints/mcp/mcp_client.h"
#include "engine/entrypoints/mcp/mcp_config.h"

namespace {
const QString kAlwaysKey = QStringLiteral("tools/alwaysAllowed");
const QString kStepsKey = QStringLiteral("tools/maxToolSteps");
}  // namespace

/// One server: a thread of its own, an object there for queued work, and the client (created,
/// used and destroyed on that thread only). Destroyed on the GUI thread once the thread ended.
struct ToolHost::Runner {
  std::string name;
  QThread thread;
  QObject* context = new QObject;
  std::unique_ptr<pagedchat::mcp::Client> client;

  explicit Runner(std::string server) : name(std::move(server)) {
    thread.setObjectName(QStringLiteral("mcp:") + QString::fromStdString(name).left(10));
    context->moveToThread(&thread);
    thread.start();
  }
  /// Ends the client (its process) on the thread, then the thread, after the work queued before
  /// (a call in progress, which a cancelled flag ends); returns at once.
  void stop() {
    QMetaObject::invokeMethod(
        context,
        [this] {
          client.reset();
          thread.quit();
        },
        Qt::QueuedConnection);
  }
  ~Runner() {
    stop();
    thread.wait();
    delete context;
  }
};

/// The started servers' tools in the document's order, and which server runs which function.
struct ToolHost::Listed {
  std::vector<std::string> order;  // the enabled servers, as the document lists them
  std::map<std::string, std::vector<pagedchat::mcp::Tool>> tools;
  std::vector<pagedchat::mcp::ToolRoute> routes;
  nlohmann::json tools_json = nlohmann::json::array();  // the OpenAI tools, routes[i] runs tools_json[i]
};

QVariantMap ToolHost::serverEntry(const QString& name, const QString& state, int tools, const QString& error) {
  return {{QStringLiteral("name"), name},
          {QStringLiteral("state"), state},
          {QStringLiteral("tools"), tools},
          {QStringLiteral("error"), error}};
}

ToolHost::ToolHost(QSettings* settings, ApiKeyStore* keys, QObject* parent)
    : QObject(parent), settings_(settings), keys_(keys), listed_(std::make_unique<Listed>()) {
  if (settings_) {
    config_ = storedConfig();
    const QStringList always = settings_->value(kAlwaysKey).toStringList();
    always_ = QSet<QString>(always.cbegin(), always.cend());
    maxToolSteps_ = std::clamp(settings_->value(kStepsKey, kDefaultMaxToolSteps).toInt(), 1, kMaxToolStepsLimit);
  }
  startKept();
}

ToolHost::~ToolHost() {
  for (const auto& flag : std::as_const(cancelled_)) flag->store(true);
  for (const auto& r : std::as_const(runners_)) r->stop();  // all end together, then each is waited for
  for (const auto& r : std::as_const(retiring_)) r->stop();
  runners_.clear();
  retiring_.clear();
}

void ToolHost::setMaxToolSteps(int n) {
  n = std::clamp(n, 1, kMaxToolStepsLimit);
  if (n == maxToolSteps_) return;
  maxToolSteps_ = n;
  if (settings_) settings_->setValue(kStepsKey, n);
  emit maxToolStepsChanged();
}

QString ToolHost::alwaysKey(const QString& function) const {
  const std::string f = function.toStdString();
  for (const auto& r : listed_->routes)
    if (r.function == f) return QString::fromStdString(r.server + "/" + r.tool);
  return function;
}

void ToolHost::setAlwaysAllowed(const QString& function, bool always) {
  const QString key = alwaysKey(function);
  if (always == always_.contains(key)) return;
  if (always)
    always_.insert(key);
  else
    always_.remove(key);
  if (settings_) {
    QStringList list(always_.cbegin(), always_.cend());
    list.sort();
    settings_->setValue(kAlwaysKey, list);
  }
  emit alwaysAllowedChanged();
}

void ToolHost::forgetAlwaysAllowed() {
  if (always_.isEmpty()) return;
  always_.clear();
  if (settings_) settings_->remove(kAlwaysKey);
  emit alwaysAllowedChanged();
}

void ToolHost::retire() {
  for (const auto& r : std::as_const(runners_)) {
    r->stop();
    retiring_.append(r);
    // Let go once its thread ended (a server still starting ends after its start-up timeout).
    connect(
        &r->thread, &QThread::finished, this,
        [this, raw = r.get()] {
          retiring_.removeIf([raw](const std::shared_ptr<Runner>& x) { return x.get() == raw; });
        },
        Qt::QueuedConnection);
  }
  runners_.clear();
}

void ToolHost::restart(const std::vector<pagedchat::mcp::ServerConfig>& configs, const QVariantList& failed) {
  const int generation = ++generation_;
  retire();
  *listed_ = Listed();
  servers_ = failed;
  toolsJson_.clear();
  functions_.clear();
  QPointer<ToolHost> self(this);
  for (const pagedchat::mcp::ServerConfig& c : configs) {
    if (!c.enabled) continue;
    const QString name = QString::fromStdString(c.name);
    servers_.append(serverEntry(name, QStringLiteral("starting"), 0, {}));
    listed_->order.push_back(c.name);
    auto runner = std::make_shared<Runner>(c.name);
    runners_.append(runner);
    QMetaObject::invokeMethod(
        runner->context,
        [self, generation, name, c, raw = runner.get()] {
          std::shared_ptr<std::vector<pagedchat::mcp::Tool>> tools;
          QString error;
          try {
            raw->client = std::make_unique<pagedchat::mcp::Client>(c);
            tools = std::make_shared<std::vector<pagedchat::mcp::Tool>>(raw->client->list_tools());
          } catch (const std::exception& e) {
            raw->client.reset();
            error = QString::fromStdString(e.what());
          }
          QMetaObject::invokeMethod(
              self,
              [self, generation, name, tools, error] {
                if (self) self->onServerStarted(generation, name, tools, error);
              },
              Qt::QueuedConnection);
        },
        Qt::QueuedConnection);
  }
  emit serversChanged();
}

void ToolHost::onServerStarted(int generation, const QString& name,
                               const std::shared_ptr<std::vector<pagedchat::mcp::Tool>>& tools, const QString& error) {
  if (generation != generation_) return;  // another document was applied since
  for (QVariant& entry : servers_) {
    QVariantMap m = entry.toMap();
    if (m.value(QStringLiteral("name")).toString() != name || m.value(QStringLiteral("state")) != "starting") continue;
    entry = tools ? serverEntry(name, QStringLiteral("ready"), static_cast<int>(tools->size()), {})
                  : serverEntry(name, QStringLiteral("failed"), 0, error);
    break;
  }
  if (tools) {
    listed_->tools[name.toStdString()] = *tools;
    // The tools again, in the document's order: a name two servers share goes to the first listed.
    std::vector<std::pair<std::string, std::vector<pagedchat::mcp::Tool>>> listed;
    for (const std::string& server : listed_->order)
      if (const auto it = listed_->tools.find(server); it != listed_->tools.end())
        listed.emplace_back(server, it->second);
    listed_->routes.clear();
    const nlohmann::json all = pagedchat::mcp::openai_tools(listed, listed_->routes);
    listed_->tools_json = all;
    functions_.clear();
    for (const auto& r : listed_->routes) functions_.insert(QString::fromStdString(r.function));
    toolsJson_ = functions_.isEmpty() ? QString() : QString::fromStdString(all.dump());
  }
  emit serversChanged();
}

QString ToolHost::toolsJson(const QStringList& serversOff) const {
  if (serversOff.isEmpty()) return toolsJson_;
  nlohmann::json some = nlohmann::json::array();
  for (std::size_t i = 0; i < listed_->routes.size() && i < listed_->tools_json.size(); ++i)
    if (!serversOff.contains(QString::fromStdString(listed_->routes[i].server))) some.push_back(listed_->tools_json[i]);
  return some.empty() ? QString() : QString::fromStdString(some.dump());
}

int ToolHost::toolCount(const QStringList& serversOff) const {
  if (serversOff.isEmpty()) return toolCount();
  return static_cast<int>(std::count_if(listed_->routes.begin(), listed_->routes.end(), [&](const auto& r) {
    return !serversOff.contains(QString::fromStdString(r.server));
  }));
}

QStringList ToolHost::offeredToolNames(const QStringList& serversOff) const {
  QStringList names;
  for (const QString& f : functions_)
    if (!serversOff.contains(serverOf(f))) names.append(f);
  names.sort();
  return names;
}

QString ToolHost::serverOf(const QString& function) const {
  const std::string f = function.toStdString();
  for (const auto& r : listed_->routes)
    if (r.function == f) return QString::fromStdString(r.server);
  return {};
}

QString ToolHost::whyNotRunnable(const QString& function, const QString& arguments,
                                 const QStringList& serversOff) const {
  // English: the model reads it, not the user.
  if (!functions_.contains(function) || (!serversOff.isEmpty() && serversOff.contains(serverOf(function))))
    return QStringLiteral("There is no tool named \"%1\".").arg(function.left(100));
  const nlohmann::json args = nlohmann::json::parse(arguments.isEmpty() ? std::string("{}") : arguments.toStdString(),
                                                    nullptr, false);
  if (!args.is_object()) return QStringLiteral("The arguments are not a JSON object: %1").arg(arguments.left(200));
  return {};
}

QList<ImageAttachment> ToolHost::resultImages(const pagedchat::mcp::ToolResult& result, QString& text) {
  QList<ImageAttachment> images;
  for (const nlohmann::json& block : result.content) {
    if (!block.is_object() || block.value("type", "") != "image" || !block.contains("data") ||
        !block["data"].is_string())
      continue;
    QString why;
    const std::string& data = block["data"].get_ref<const std::string&>();
    const auto bytes = QByteArray::fromBase64Encoding(QByteArray::fromStdString(data),
                                                      QByteArray::AbortOnBase64DecodingErrors);
    std::optional<ImageAttachment> image;
    if (!bytes || bytes.decoded.isEmpty())
      why = QStringLiteral("its data is not base64");
    else if (images.size() >= ToolHost::kMaxResultImages)
      why = QStringLiteral("a result shows at most %1 pictures").arg(ToolHost::kMaxResultImages);
    else
      image = readImageAttachment(bytes.decoded, &why);
    if (image)
      images.append(*image);
    else
      text += QStringLiteral("\n[a picture of the result is not shown: %1]").arg(why);
  }
  return images;
}
int ToolHost::callTool(const QString& function, const QString& arguments) {
  const int ticket = nextTicket_++;
  auto flag = std::make_shared<std::atomic_bool>(false);
  cancelled_.insert(ticket, flag);
  QPointer<ToolHost> self(this);
  auto finished = [self, ticket](const QString& text, bool isError, const QList<ImageAttachment>& images = {}) {
    QMetaObject::invokeMethod(
        self,
        [self, ticket, text, isError, images] {
          if (!self) return;
          self->cancelled_.remove(ticket);
          emit self->callFinished(ticket, text, isError, images);
        },
        Qt::QueuedConnection);
  };
  const std::string f = function.toStdString();
  const auto route = std::find_if(listed_->routes.begin(), listed_->routes.end(),
                                  [&](const pagedchat::mcp::ToolRoute& r) { return r.function == f; });
  Runner* runner = nullptr;
  if (route != listed_->routes.end())
    for (const auto& r : std::as_const(runners_))
      if (r->name == route->server) runner = r.get();
  if (const QString why = whyNotRunnable(function, arguments); !runner || !why.isEmpty()) {
    finished(why.isEmpty() ? QStringLiteral("The server of \"%1\" is not running.").arg(function) : why, true);
    return ticket;
  }
  // What a call that could not run tells the model is English (the model reads it, not the user).
  QMetaObject::invokeMethod(
      runner->context,
      [runner, tool = route->tool, function, arguments = arguments.toStdString(), flag, finished] {
        if (!runner->client || !runner->client->alive()) {
          finished(QStringLiteral("The server of \"%1\" is not running.").arg(function), true);
          return;
        }
        const nlohmann::json args = nlohmann::json::parse(arguments.empty() ? "{}" : arguments, nullptr, false);
        try {  // (the arguments are an object: whyNotRunnable())
          const pagedchat::mcp::ToolResult result = runner->client->call_tool(tool, args,
                                                                              [flag] { return flag->load(); });
          QString text = QString::fromStdString(result.text());
          const QList<ImageAttachment> images = resultImages(result, text);
          finished(text, result.is_error, images);
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
