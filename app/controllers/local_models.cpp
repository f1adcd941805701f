#include "app/controllers/local_models.h"

#include <QDir>
#include <QFileInfo>
#include <QLocale>

#include <exception>

#include "app/controllers/model_controller.h"
#include "app/controllers/recent_models_model.h"
#include "app/engine/local_chat_backend.h"
#include "app/panes/pane_list_model.h"
#include "app/panes/pane_state.h"
#include "engine/core/host_memory.h"
#include "engine/loader/model_summary.h"

namespace {
QString sizeText(std::uint64_t bytes) { return QLocale().formattedDataSize(static_cast<qint64>(bytes)); }
}  // namespace

LocalModels::LocalModels(LocalChatBackend* main, RecentModelsModel* recent, PaneListModel* panes, QObject* parent)
    : QObject(parent), main_(main), recent_(recent), panes_(panes), probe_([] {
        return pagedchat::available_memory_bytes();
      }) {
  main_->setMemoryBudget([this] { return mainBudget(); });
  connect(main_, &LocalChatBackend::stateChanged, this, &LocalModels::changed);
}

LocalModels::~LocalModels() {
  main_->setMemoryBudget({});
  for (const QList<QMetaObject::Connection>& watch : std::as_const(watches_))
    for (const QMetaObject::Connection& c : watch) disconnect(c);
  // The backends are children: freed with this object (those already let go of too).
}

void LocalModels::setMemoryProbe(MemoryProbe probe) { probe_ = std::move(probe); }

std::uint64_t LocalModels::loadingBytes() const {
  std::uint64_t bytes = 0;
  for (const Other& o : others_)
    if (o.backend->isLoading()) bytes += o.fileBytes;
  return bytes;
}

std::size_t LocalModels::mainBudget() const {
  if (others_.isEmpty()) return 0;  // alone: the engine's own limits, as before
  // The main model's current memory comes back before its next load.
  const std::uint64_t have = probe_() + main_->memoryBytes(), held = kReservedBytes + loadingBytes();
  return have > held ? static_cast<std::size_t>(have - held) : 1;  // 1: nothing fits, the engine says so
}

QString LocalModels::usePaneModel(int pane, const QString& path) {
  PaneState* session = panes_->paneAt(pane);
  if (!session) return tr("There is no pane %1.").arg(pane + 1);
  return usePaneModel(session, path);
}

QString LocalModels::usePaneModel(PaneState* pane, const QString& rawPath) {
  const QString path = ModelController::modelPathOf(rawPath);
  if (path.isEmpty() || path == main_->modelPath()) {
    pane->useLocalEngine();  // and release() as its backend changes
    return {};
  }
  QString error;
  LocalChatBackend* backend = acquire(path, pane, &error);
  if (!backend) return error;
  pane->useLocalModel(backend);
  return {};
}

QString LocalModels::modelPathOfUrl(const QUrl& url) const {
  return ModelController::modelPathOf(url.isLocalFile() ? url.toLocalFile() : url.toString());
}

QString LocalModels::paneModelPath(int pane) const {
  const PaneState* session = panes_->paneAt(pane);
  return session && !session->isRemote() ? pathOf(session->localEngine()) : QString();
}

QVariantList LocalModels::choices() const {
  QVariantList list;
  QStringList paths = order_;
  if (recent_)
    for (const QString& p : recent_->paths())
      if (!paths.contains(p) && RecentModelsModel::modelExists(p)) paths.append(p);
  paths.removeAll(main_->modelPath());
  for (const QString& p : std::as_const(paths))
    list.append(QVariantMap{{QStringLiteral("path"), p},
                            {QStringLiteral("name"), QFileInfo(p).completeBaseName()},
                            {QStringLiteral("loaded"), others_.contains(p) && others_.value(p).backend->isLoaded()}});
  return list;
}

LocalChatBackend* LocalModels::acquire(const QString& path, PaneState* pane, QString* error) {
  auto it = others_.find(path);
  if (it != others_.end() && userPath_.value(pane) == path) return it->backend;  // already
  if (it == others_.end()) {
    std::uint64_t fileBytes = 0;
    if (!path.startsWith(QLatin1String("random:"))) {  // test models of random weights: no file
      try {
        const pagedchat::ModelSummary summary = pagedchat::summarize_model(path.toStdString());
        if (!summary.supported) {
          if (error)
            *error = tr("%1 is a %2 model, which PagedChat cannot run.")
                         .arg(QFileInfo(path).fileName(), QString::fromStdString(summary.architecture));
          return nullptr;
        }
        fileBytes = summary.size_bytes;
      } catch (const std::exception& e) {
        if (error) *error = tr("%1 cannot be opened as a model: %2").arg(path, QString::fromStdString(e.what()));
        return nullptr;
      }
    }
    // A model only this pane used is let go of first: its memory counts as free.
    const QString previous = userPath_.value(pane);
    const auto prev = others_.constFind(previous);
    const std::uint64_t givenBack = prev != others_.constEnd() && prev->users.size() == 1 ? prev->backend->memoryBytes()
                                                                                          : 0;
    const std::uint64_t available = probe_() + givenBack, held = kReservedBytes + loadingBytes();
    const std::uint64_t room = available > held ? available - held : 0;
    if (room == 0 || fileBytes > room) {
      if (error)
        *error = tr("%1 does not fit in memory beside the models loaded: its weights take %2, and %3 is available "
                    "(%4 kept for the system). Close the panes that use another model, or pick a smaller one.")
                     .arg(QFileInfo(path).completeBaseName(), sizeText(fileBytes), sizeText(room + kReservedBytes),
                          sizeText(kReservedBytes));
      return nullptr;
    }
    pagedchat::EngineConfig config = main_->engineConfig();
    config.model = path.toStdString();
    config.tokenizer = recent_ ? recent_->tokenizerFor(path).toStdString() : std::string();
    config.host_memory_budget = static_cast<std::size_t>(room);
    const QString chatTemplate = recent_ ? recent_->chatTemplateFor(path) : QStringLiteral("auto");
    auto* backend = new LocalChatBackend(config, this, chatTemplate);
    connect(backend, &LocalChatBackend::stateChanged, this, &LocalModels::changed);
    it = others_.insert(path, Other{backend, {}, fileBytes});
    order_.append(path);
    backend->start();
  }
  release(pane);
  it = others_.find(path);
  it->users.insert(pane);
  userPath_.insert(pane, path);
  LocalChatBackend* backend = it->backend;
  // The pane lets go when it goes, or when it answers with anything else (a remote endpoint, the
  // main model: PaneState::useRemoteEndpoint / useLocalEngine).
  watches_.insert(pane, {connect(pane, &QObject::destroyed, this, [this, pane] { release(pane); }),
                         connect(pane, &PaneState::backendChanged, this, [this, pane, backend] {
                           if (pane->isRemote() || pane->localEngine() != backend) release(pane);
                         })});
  emit changed();
  return backend;
}

void LocalModels::release(PaneState* pane) {
  for (const QMetaObject::Connection& c : watches_.take(pane)) disconnect(c);
  const auto found = userPath_.constFind(pane);
  if (found == userPath_.constEnd()) return;
  const QString path = found.value();
  userPath_.erase(found);
  if (auto it = others_.find(path); it != others_.end()) it->users.remove(pane);
  freeUnused(path);
  emit changed();
}

void LocalModels::freeUnused(const QString& path) {
  const auto it = others_.find(path);
  if (it == others_.end() || !it->users.isEmpty()) return;
  LocalChatBackend* backend = it->backend;
  others_.erase(it);
  order_.removeAll(path);
  backend->disconnect(this);
  // Later: a pane's handler still on the stack may hold it (its last delta, its cancel). Still a
  // child, so that it goes with this object if no event loop runs again.
  backend->deleteLater();
}

QString LocalModels::pathOf(const LocalChatBackend* backend) const {
  for (auto it = others_.cbegin(); it != others_.cend(); ++it)
    if (it->backend == backend) return it.key();
  return {};
}

int LocalModels::numLoaded() const {
  int n = 0;
  for (const Other& o : others_) n += o.backend->isLoaded() || o.backend->isLoading();
  return n;
}

QVariantList LocalModels::others() const {
  QVariantList list;
  for (const QString& path : order_) {
    const Other& o = others_.value(path);
    list.append(QVariantMap{{QStringLiteral("path"), path},
                            {QStringLiteral("name"), o.backend->modelName()},
                            {QStringLiteral("panes"), static_cast<int>(o.users.size())},
                            {QStringLiteral("ready"), o.backend->isReady()},
                            {QStringLiteral("loading"), o.backend->isLoading()},
                            {QStringLiteral("error"), o.backend->loadError()},
                            {QStringLiteral("memoryBytes"), static_cast<qint64>(o.backend->memoryBytes())}});
  }
  return list;
}
