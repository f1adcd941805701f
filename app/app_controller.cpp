#include "app/app_controller.h"

#include <QDir>
#include <QFileInfo>
#include <QSet>
#include <QSettings>

#include <utility>

#include "app/message_list_model.h"
#include "app/pane_settings.h"
#include "app/remote/api_key_store.h"
#include "app/sentence.h"
#include "app/store_health.h"
#include "app/store_recovery.h"

namespace {
const QString kPaneConversationsKey = QStringLiteral("panes/conversations");
const QString kCurrentPaneKey = QStringLiteral("panes/current");
const QString kPaneSettingsKey = QStringLiteral("panes/settings");
const QString kPaneEndpointsKey = QStringLiteral("panes/endpoints");
const QString kThemeKey = QStringLiteral("appearance/theme");
const QString kFontSizeKey = QStringLiteral("appearance/fontSize");
}  // namespace

QString AppController::settingsFile(const QString& dataDir) {
  return QDir(dataDir).filePath(QStringLiteral("pagedchat.ini"));
}

AppController::AppController(const AppOptions& options, QObject* parent, Translator* translator, ApiKeyStore* keyStore)
    : QObject(parent), dataDir_(options.dataDir), sendOnStart_(options.sendOnStart) {
  QDir().mkpath(dataDir_);
  translator_ = translator ? translator : new Translator(settingsFile(dataDir_), this);
  connect(translator_, &Translator::languageChanged, this, &AppController::languageChanged);
  StoreRecovery recovery;
  store_ = openChatStore(dataDir_, &recovery);  // a damaged file is set aside: recovery says where
  connect(store_->health(), &StoreHealth::changed, this, &AppController::onStoreHealthChanged);
  // Waiting writes went through (a rename, a pin, a restore): the lists show them.
  connect(store_->health(), &StoreHealth::recovered, this, [this] { onConversationsModified(); });
  if (!recovery.message.isEmpty()) setErrorText(recovery.message, recovery.detail);
  // Conversations deleted in an earlier run whose undo time never ran out: gone for good now.
  try {
    store_->purgeDeletedConversations();
  } catch (const StoreError& e) {
    // Another program holds the database (or it is read-only): chats can still be read; the
    // clean-up waits in StoreHealth and is tried again. Shown once the window is up.
    ChatStore* store = store_.get();
    reportStoreError(e, QStringLiteral("purge"), [store] { store->purgeDeletedConversations(); });
  }
  settings_ = std::make_unique<QSettings>(settingsFile(dataDir_), QSettings::IniFormat);
  recentModels_ = new RecentModelsModel(settings_.get(), this);
  engineSettings_ = new EngineSettings(settings_.get(), this);
  // The model: the one named on the command line, else the one loaded last time (if it still
  // exists), else the default. --chat-template is remembered for the model it was given with.
  AppOptions startOptions = options;
  // The tokenizer given with a model (--tokenizer) is remembered with it (a "random:" model has none).
  if (!options.modelGiven && RecentModelsModel::modelExists(recentModels_->lastModel())) {
    startOptions.modelPath = recentModels_->lastModel();
    startOptions.tokenizerPath = recentModels_->tokenizerFor(startOptions.modelPath);
  } else {
    recentModels_->setTokenizerFor(
        startOptions.modelPath,
        startOptions.tokenizerPath.isEmpty() ? QString() : QFileInfo(startOptions.tokenizerPath).absoluteFilePath());
  }
  QString chatTemplate = options.chatTemplate;
  if (chatTemplate.isEmpty() || chatTemplate == QLatin1String("auto"))
    chatTemplate = recentModels_->chatTemplateFor(startOptions.modelPath);
  else
    recentModels_->setChatTemplateFor(startOptions.modelPath, chatTemplate);
  pagedchat::EngineConfig config = engineConfigFor(startOptions);
  engineSettings_->applyTo(config);
  engine_ = new EngineClient(config, this, chatTemplate);
  connect(engine_, &EngineClient::modelLoadFinished, this,
          [this](bool ok, const QString& path, const QString& error) { onModelLoadFinished(ok, path, error); });
  connect(engine_, &EngineClient::chatTemplateWarning, this, [this](const QString& message) {
    showLoadWarning(tr("The model's chat template cannot be used as it is: %1").arg(message));
  });
  connect(engine_, &EngineClient::engineWarning, this,
          [this](const QString& message) { showLoadWarning(tr("Warning from the engine: %1").arg(message)); });
  connect(engineSettings_, &EngineSettings::applied, this, [this] {
    // Saved only once the model reloaded with them (onModelLoadFinished()).
    settingsReloadPending_ = !engine_->modelPath().isEmpty();
    reloadWithEngineSettings();
    if (!settingsReloadPending_) engineSettings_->commit();  // no model to try them on
  });
  throughput_ = new ThroughputMeter(engine_, this);
  conversations_ = new ConversationListModel(store_.get(), this);
  panes_ = new PaneListModel(store_.get(), engine_, this);
  monitor_ = new EngineMonitor(engine_, panes_, this);
  connect(panes_, &PaneListModel::conversationsModified, this, &AppController::onConversationsModified);
  connect(panes_, &PaneListModel::layoutChanged, this, [this] {
    savePanes();
    emit currentConversationChanged();
  });
  connect(panes_, &PaneListModel::currentIndexChanged, this, [this] {
    savePanes();
    emit currentConversationChanged();
  });
  compare_ = new BlindCompare(panes_, store_.get(), this);
  ApiKeyStore* keys = keyStore ? keyStore : new KeychainApiKeyStore(this);
  endpoints_ = new PaneEndpoints(panes_, keys, this);
  server_ = new ApiServerController(engine_, settings_.get(), keys, this);
  const QString theme = settings_->value(kThemeKey, theme_).toString();
  if (theme == QLatin1String("light") || theme == QLatin1String("dark")) theme_ = theme;
  fontSize_ = qBound(kMinFontSize, settings_->value(kFontSizeKey, kDefaultFontSize).toInt(), kMaxFontSize);
  restorePanes();
}

void AppController::setTheme(const QString& theme) {
  if (theme != QLatin1String("light") && theme != QLatin1String("dark") && theme != QLatin1String("system")) return;
  if (theme == theme_) return;
  theme_ = theme;
  settings_->setValue(kThemeKey, theme_);
  emit appearanceChanged();
}

void AppController::setFontSize(int pixels) {
  pixels = qBound(kMinFontSize, pixels, kMaxFontSize);
  if (pixels == fontSize_) return;
  fontSize_ = pixels;
  settings_->setValue(kFontSizeKey, fontSize_);
  emit appearanceChanged();
}

AppController::~AppController() {
  // Sessions save their replies through the store and cancel through the engine: they go first,
  // then the engine thread, then the store. The saved pane layout stays as it was.
  commitDelete();
  delete server_;  // its requests end; it reads the engine
  server_ = nullptr;
  panes_->disconnect(this);
  delete monitor_;
  monitor_ = nullptr;
  delete compare_;
  compare_ = nullptr;
  delete endpoints_;
  endpoints_ = nullptr;
  delete panes_;
  panes_ = nullptr;
  delete throughput_;
  throughput_ = nullptr;
  delete engine_;
  engine_ = nullptr;
  store_.reset();
}

void AppController::start() {
  if (!sendOnStart_.isEmpty()) {
    sendOnStartConnection_ = connect(engine_, &EngineClient::stateChanged, this, [this] {
      if (engine_->isLoading()) return;
      disconnect(sendOnStartConnection_);
      if (ChatSession* session = panes_->sessionAt(0)) {
        session->setInputText(sendOnStart_);
        session->send();
      }
    });
  }
  engine_->start();
}

qint64 AppController::currentConversationId() const {
  ChatSession* s = panes_ ? panes_->currentSession() : nullptr;
  return s ? s->conversationId() : 0;
}

void AppController::newConversation() {
  ChatSession* session = panes_->currentSession();
  if (!session) return;
  // The current pane already shows an empty conversation: use it rather than piling up empty ones.
  if (session->conversationId() != 0 && session->messages()->rowCount() == 0) return;
  try {
    const QString title = tr("New chat");
    const qint64 id = store_->createConversation(title);
    conversations_->reload();
    session->openConversation(id, title);
    setErrorText(QString());
  } catch (const StoreError& e) {
    reportStoreError(e);
  }
}

void AppController::openConversation(qint64 id) {
  const int pane = panes_->indexOfConversation(id);
  if (pane >= 0) {
    panes_->setCurrentIndex(pane);
    return;
  }
  if (ChatSession* session = panes_->currentSession()) session->openConversation(id, titleOf(id));
}

void AppController::deleteConversation(qint64 id) {
  if (id == 0) return;
  for (const PendingDelete& p : std::as_const(pendingDeletes_))
    if (p.id == id) return;  // already hidden (a second click on the same row)
  const QString title = titleOf(id);
  // The reply in flight is saved (stopped): the deletion can still be undone.
  for (ChatSession* s : panes_->sessions())
    if (s->conversationId() == id) s->closeConversation();
  try {
    store_->softDeleteConversation(id);
    setErrorText(QString());
    PendingDelete pending;
    pending.id = id;
    pending.title = title.isEmpty() ? tr("Conversation") : title;
    pending.timer = new QTimer(this);
    pending.timer->setSingleShot(true);
    pending.timer->setInterval(undoTimeoutMs_);
    connect(pending.timer, &QTimer::timeout, this, [this, id] { commitDeleteOf(id); });
    pending.timer->start();
    pendingDeletes_.append(pending);
    emit undoDeleteChanged();
  } catch (const StoreError& e) {
    reportStoreError(e);
  }
  conversations_->reload();
}

void AppController::undoDelete() {
  if (pendingDeletes_.isEmpty()) return;
  const PendingDelete pending = pendingDeletes_.takeLast();
  delete pending.timer;
  emit undoDeleteChanged();
  try {
    store_->restoreConversation(pending.id);
    conversations_->reload();
    // Back in the list; it replaces nothing: only an empty current pane shows it.
    ChatSession* current = panes_->currentSession();
    if (current && current->conversationId() == 0) openConversation(pending.id);
  } catch (const StoreError& e) {
    // Hidden until the restore is written (retried); it must not be purged meanwhile.
    ChatStore* store = store_.get();
    const qint64 id = pending.id;
    reportStoreError(e, QStringLiteral("restore:%1").arg(id), [store, id] { store->restoreConversation(id); });
  }
}

void AppController::commitDelete() {
  while (!pendingDeletes_.isEmpty()) commitDeleteOf(pendingDeletes_.constFirst().id);
}

void AppController::commitDeleteOf(qint64 id) {
  for (qsizetype i = 0; i < pendingDeletes_.size(); ++i) {
    if (pendingDeletes_.at(i).id != id) continue;
    const PendingDelete pending = pendingDeletes_.takeAt(i);
    pending.timer->stop();
    pending.timer->deleteLater();  // may be the timer whose timeout called us
    emit undoDeleteChanged();
    try {
      store_->deleteConversation(id);
    } catch (const StoreError& e) {
      // Still hidden; purged on the next start.
      qWarning("pagedchat: %s", e.what());
    }
    return;
  }
}

void AppController::renameConversation(qint64 id, const QString& title) {
  const QString t = title.simplified();
  if (t.isEmpty()) return;
  try {
    store_->renameConversation(id, t);
    setErrorText(QString());
  } catch (const StoreError& e) {
    ChatStore* store = store_.get();
    reportStoreError(e, QStringLiteral("rename:%1").arg(id), [store, id, t] { store->renameConversation(id, t); });
  }
  onConversationsModified();
}

void AppController::setPinned(qint64 id, bool pinned) {
  try {
    store_->setPinned(id, pinned);
  } catch (const StoreError& e) {
    ChatStore* store = store_.get();
    reportStoreError(e, QStringLiteral("pin:%1").arg(id), [store, id, pinned] { store->setPinned(id, pinned); });
  }
  onConversationsModified();
}

void AppController::openModel(const QString& path) {
  const QString clean = QDir::cleanPath(QDir::fromNativeSeparators(path.trimmed()));
  if (clean.isEmpty() || clean == QLatin1String(".")) return;
  setModelLoadError(QString());
  if (modelErrorShown_) setErrorText(QString());  // a new attempt: the last one's message goes
  engine_->loadModel(clean, recentModels_->chatTemplateFor(clean), recentModels_->tokenizerFor(clean));
}

void AppController::openModelUrl(const QUrl& url) { openModel(url.isLocalFile() ? url.toLocalFile() : url.toString()); }

void AppController::unloadModel() {
  setModelLoadError(QString());
  if (modelErrorShown_) setErrorText(QString());
  lastLoadedModel_.clear();
  engine_->unloadModel();
}

void AppController::setModelLoadError(const QString& text) {
  if (text == modelLoadError_) return;
  modelLoadError_ = text;
  emit modelLoadErrorChanged();
}

QString AppController::applyEngineSettings(int kvCacheMiB, int maxNumSeqs, int blockSize, int numThreads,
                                           const QString& kvCacheDtype) {
  return engineSettings_->apply(kvCacheMiB, maxNumSeqs, blockSize, numThreads, kvCacheDtype);
}

void AppController::reloadWithEngineSettings() {
  pagedchat::EngineConfig c = engine_->engineConfig();
  engineSettings_->applyTo(c);
  engine_->setEngineConfig(c);  // reloads the current model with them
}

void AppController::onModelLoadFinished(bool ok, const QString& path, const QString& error) {
  const bool settingsReload = std::exchange(settingsReloadPending_, false);
  if (ok) {
    if (settingsReload) {
      engineSettings_->commit();
      if (modelErrorShown_) setErrorText(QString());  // an earlier failed attempt's message
    }
    if (!path.isEmpty()) {
      recentModels_->add(path);
      lastLoadedModel_ = path;
    }
    if (!pendingTemplateWarning_.isEmpty()) setModelErrorText(std::exchange(pendingTemplateWarning_, QString()));
    return;
  }
  pendingTemplateWarning_.clear();
  const QString kvMessage = EngineSettings::kvCacheTooSmallMessage(error);
  if (settingsReload && engineSettings_->hasUnsavedValues()) {
    // The new settings do not work with this model: keep the saved ones and the model.
    const QString message = tr("The engine settings were not applied: %1 The previous settings were restored.")
                                .arg(sentence(kvMessage.isEmpty() ? error : kvMessage));
    engineSettings_->revert(message);
    reloadWithEngineSettings();
    setModelErrorText(message);
    return;
  }
  if (!kvMessage.isEmpty() && engineSettings_->kvCacheMiB() != 0) {
    // Saved settings (an earlier run, a hand-edited file) too small for this model: automatic.
    const int was = engineSettings_->kvCacheMiB();
    engineSettings_->resetKvCacheToAutomatic();
    reloadWithEngineSettings();
    setModelErrorText(tr("The saved KV cache size (%1 MiB) was too small for this model; it was set back to "
                         "automatic. %2")
                          .arg(was)
                          .arg(kvMessage));
    return;
  }
  if (lastLoadedModel_.isEmpty() || lastLoadedModel_ == path) {
    setModelLoadError(error);
    return;
  }
  // The model the user opened did not load: the one loaded before (freed first, to keep memory
  // for the new one) comes back, with its chat template and tokenizer.
  const QString previous = lastLoadedModel_;
  const QString message =
      tr("%1 The model loaded before (%2) was loaded again.").arg(sentence(error), QFileInfo(previous).fileName());
  setModelLoadError(message);
  setModelErrorText(message);
  engine_->loadModel(previous, recentModels_->chatTemplateFor(previous), recentModels_->tokenizerFor(previous));
}

void AppController::onConversationsModified() {
  panes_->flushReplies();  // before the sidebar's reload, which may keep this thread busy
  // Something was written: the writes still waiting (a lock gone, space freed) may go now.
  if (store_->health()->pendingCount() > 0) store_->health()->retryNow();
  try {
    conversations_->reload();
  } catch (const StoreError& e) {
    reportStoreError(e);
    return;
  }
  for (ChatSession* s : panes_->sessions())
    if (s->conversationId() != 0) s->setTitle(titleOf(s->conversationId()));
}

QString AppController::titleOf(qint64 id) const {
  const int row = conversations_->rowOf(id);
  if (row >= 0) return conversations_->conversations().at(row).title;
  try {  // not among the loaded rows
    return store_->conversation(id).title;
  } catch (const StoreError&) {
    return QString();
  }
}

bool AppController::conversationExists(qint64 id) const {
  if (id == 0) return false;
  if (conversations_->rowOf(id) >= 0) return true;
  try {
    return !store_->conversation(id).deletedAt.isValid();
  } catch (const StoreError&) {
    return false;
  }
}

void AppController::restorePanes() {
  restoring_ = true;
  QList<qint64> saved;
  for (const QVariant& v : settings_->value(kPaneConversationsKey).toList()) saved.append(v.toLongLong());
  if (saved.isEmpty()) saved.append(0);
  while (saved.size() > PaneListModel::kMaxPanes) saved.removeLast();

  QSet<qint64> shown;
  for (qint64& id : saved) {
    if (!conversationExists(id) || shown.contains(id)) id = 0;
    if (id != 0) shown.insert(id);
  }
  // Panes without a (still existing) conversation take the newest ones not shown elsewhere.
  auto next = conversations_->conversations().cbegin();
  const auto end = conversations_->conversations().cend();
  for (qint64& id : saved) {
    if (id != 0) continue;
    while (next != end && shown.contains(next->id)) ++next;
    if (next == end) break;
    id = next->id;
    shown.insert(id);
  }
  const QVariantList savedSettings = settings_->value(kPaneSettingsKey).toList();
  const QVariantList savedEndpoints = settings_->value(kPaneEndpointsKey).toList();
  for (qsizetype i = 0; i < saved.size(); ++i) {
    ChatSession* s = i < panes_->count() ? panes_->sessionAt(static_cast<int>(i)) : panes_->addPane();
    if (s && i < savedSettings.size()) s->settings()->fromMap(savedSettings.at(i).toMap());
    if (s && i < savedEndpoints.size()) endpoints_->restore(static_cast<int>(i), savedEndpoints.at(i).toMap());
    if (s && saved[i] != 0) s->openConversation(saved[i], titleOf(saved[i]));
  }
  panes_->setCurrentIndex(qBound(0, settings_->value(kCurrentPaneKey, 0).toInt(), panes_->count() - 1));
  restoring_ = false;
  savePanes();
}

void AppController::savePanes() {
  if (restoring_ || !panes_ || !endpoints_) return;
  QVariantList ids;
  QVariantList paneSettings, paneEndpoints;
  for (ChatSession* s : panes_->sessions()) {
    ids.append(s->conversationId());
    paneSettings.append(s->settings()->toMap());
    paneEndpoints.append(endpoints_->savedForm(static_cast<int>(paneEndpoints.size())));
  }
  settings_->setValue(kPaneConversationsKey, ids);
  settings_->setValue(kPaneSettingsKey, paneSettings);
  settings_->setValue(kPaneEndpointsKey, paneEndpoints);
  settings_->setValue(kCurrentPaneKey, panes_->currentIndex());
}

void AppController::setErrorText(const QString& text, const QString& detail) {
  modelErrorShown_ = false;
  storeErrorShown_ = false;
  if (text == errorText_ && detail == errorDetail_) return;
  errorText_ = text;
  errorDetail_ = detail;
  emit errorTextChanged();
}

void AppController::clearError() {
  if (storeErrorShown_) store_->health()->dismiss();
  setErrorText(QString());
}

void AppController::retryStore() { store_->health()->retryNow(); }

void AppController::reportStoreError(const StoreError& e, const QString& key, std::function<void()> retry) {
  store_->health()->report(e, key, std::move(retry));
}

void AppController::onStoreHealthChanged() {
  const StoreHealth* health = store_->health();
  if (!health->message().isEmpty()) {
    const bool changed = errorText_ != health->message() || errorDetail_ != health->detail() || !storeErrorShown_;
    errorText_ = health->message();
    errorDetail_ = health->detail();
    modelErrorShown_ = false;
    storeErrorShown_ = true;
    if (changed) emit errorTextChanged();
  } else if (storeErrorShown_) {
    setErrorText(QString());  // the waiting writes went through (or the message was dismissed)
  }
}

void AppController::showLoadWarning(const QString& text) {
  if (!engine_->isLoading()) {
    setModelErrorText(text);
    return;
  }
  // Shown once the load has finished (which clears older messages), after the load's other warnings.
  if (!pendingTemplateWarning_.isEmpty()) pendingTemplateWarning_ += QLatin1Char('\n');
  pendingTemplateWarning_ += text;
}

void AppController::setModelErrorText(const QString& text) {
  setErrorText(text);
  modelErrorShown_ = true;
}
