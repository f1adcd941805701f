#include "app/controllers/app_controller.h"

#include <QDir>
#include <QFileInfo>
#include <QSet>
#include <QSettings>
#include <algorithm>

#include "app/engine/remote/api_key_store.h"
#include "app/panes/message_list_model.h"
#include "app/panes/pane_settings.h"
#include "app/store/store_health.h"
#include "app/store/store_recovery.h"

namespace {
// The panes in pagedchat.ini, one readable group each (QSettings' array form):
//   [panes]  current=0  size=2
//            1\conversation=12  1\systemPrompt=...  1\seed=random  1\temperature=0.7
//   A sampling field (temperature, topP, topK, minP, repetitionPenalty, maxTokens) is written
//   only when the user set it; one that is there, written by hand too, is the user's; the others
//   follow the model's suggestions.
//            1\endpointUrl=http://...  1\endpointModel=...
//            1\localModel=/path/to/another-model.gguf   (a local model other than the main one)
// Before, three keys held binary QVariant lists (@Variant(...)): still read, then rewritten.
const QString kPanesArray = QStringLiteral("panes");
const QString kCurrentPaneKey = QStringLiteral("panes/current");
const QString kConversationField = QStringLiteral("conversation");
const QString kCustomizedField = QStringLiteral("customized");
const QString kEndpointUrlField = QStringLiteral("endpointUrl");
const QString kEndpointModelField = QStringLiteral("endpointModel");
const QString kLocalModelField = QStringLiteral("localModel");
const QString kOldPaneConversationsKey = QStringLiteral("panes/conversations");
const QString kOldPaneSettingsKey = QStringLiteral("panes/settings");
const QString kOldPaneEndpointsKey = QStringLiteral("panes/endpoints");

/// One pane as restorePanes() takes it.
struct SavedPane {
  qint64 conversation = 0;
  QVariantMap settings;  ///< PaneSettings::toMap()'s keys
  QVariantMap endpoint;  ///< PaneEndpoints::savedForm()'s keys
  QString localModel;    ///< another local model (LocalModels), "" for the main one
};

/// The panes saved in `s`, in either form (none: an empty list).
QList<SavedPane> readPanes(QSettings& s) {
  QList<SavedPane> panes;
  if (s.contains(kOldPaneConversationsKey) || s.contains(kOldPaneSettingsKey) || s.contains(kOldPaneEndpointsKey)) {
    const QVariantList ids = s.value(kOldPaneConversationsKey).toList();
    const QVariantList settings = s.value(kOldPaneSettingsKey).toList();
    const QVariantList endpoints = s.value(kOldPaneEndpointsKey).toList();
    const qsizetype n = std::max({ids.size(), settings.size(), endpoints.size()});
    for (qsizetype i = 0; i < n; ++i)
      panes.append({i < ids.size() ? ids.at(i).toLongLong() : 0,
                    i < settings.size() ? settings.at(i).toMap() : QVariantMap(),
                    i < endpoints.size() ? endpoints.at(i).toMap() : QVariantMap(), QString()});
    return panes;
  }
  const int n = s.beginReadArray(kPanesArray);
  for (int i = 0; i < n; ++i) {
    s.setArrayIndex(i);
    SavedPane p;
    p.conversation = s.value(kConversationField).toLongLong();
    for (const QString& key : s.childKeys()) {
      if (key == kConversationField) continue;
      if (key == kEndpointUrlField) {
        p.endpoint.insert(QStringLiteral("url"), s.value(key).toString());
      } else if (key == kEndpointModelField) {
        p.endpoint.insert(QStringLiteral("model"), s.value(key).toString());
      } else if (key == kLocalModelField) {
        p.localModel = s.value(key).toString();
      } else if (key != kCustomizedField) {
        p.settings.insert(key, s.value(key));
      }
    }
    QStringList customized;  // the sampling fields written are the user's
    for (const QString& field : PaneSettings::samplingFields())
      if (p.settings.contains(field)) customized.append(field);
    p.settings.insert(kCustomizedField, customized);
    panes.append(p);
  }
  s.endArray();
  return panes;
}
}  // namespace

QString AppController::settingsFile(const QString& dataDir) {
  return QDir(dataDir).filePath(QStringLiteral("pagedchat.ini"));
}

AppController::AppController(const AppOptions& options, QObject* parent, Translator* translator, ApiKeyStore* keyStore)
    : QObject(parent), dataDir_(options.dataDir), sendOnStart_(options.sendOnStart) {
  QDir().mkpath(dataDir_);
  translator_ = translator ? translator : new Translator(settingsFile(dataDir_), this);
  StoreRecovery recovery;
  store_ = openChatStore(dataDir_, &recovery);  // a damaged file is set aside: recovery says where
  errors_ = new AppErrors(store_->health(), this);
  if (!recovery.message.isEmpty()) errors_->set(recovery.message, recovery.detail);
  // A read-only disk or file: the history can be read; the banner says so, and the store is
  // opened for writing as soon as it can be (StoreHealth retries).
  store_->health()->reportReadOnly();
  // Conversations deleted in an earlier run whose undo time never ran out: gone for good now
  // (on a read-only store, at the next start: they stay hidden meanwhile).
  if (!store_->isReadOnly()) {
    try {
      store_->purgeDeletedConversations();
    } catch (const StoreError& e) {
      // Another program holds the database (or it cannot be written): chats can still be read;
      // the clean-up waits in StoreHealth and is tried again. Shown once the window is up.
      ChatStore* store = store_.get();
      errors_->reportStoreError(
          e, QStringLiteral("purge"), [store] { store->purgeDeletedConversations(); }, StoreHealth::Kept::kCleanUp);
    }
  }
  settings_ = std::make_unique<QSettings>(settingsFile(dataDir_), QSettings::IniFormat);
  auto* recentModels = new RecentModelsModel(settings_.get(), this);
  auto* engineSettings = new EngineSettings(settings_.get(), this);
  // The model: the one named on the command line, else the one loaded last time (if it still
  // exists), else the default. --chat-template is remembered for the model it was given with.
  AppOptions startOptions = options;
  // The tokenizer given with a model (--tokenizer) is remembered with it (a "random:" model has none).
  if (!options.modelGiven && RecentModelsModel::modelExists(recentModels->lastModel())) {
    startOptions.modelPath = recentModels->lastModel();
    startOptions.tokenizerPath = recentModels->tokenizerFor(startOptions.modelPath);
  } else if (!options.modelGiven && !RecentModelsModel::modelExists(startOptions.modelPath)) {
    // A fresh install: the default (compiled in for a source build) is not on this machine. No
    // load, no error: the panes welcome the user with a download and an open button.
    startOptions.modelPath.clear();
  } else {
    recentModels->setTokenizerFor(
        startOptions.modelPath,
        startOptions.tokenizerPath.isEmpty() ? QString() : QFileInfo(startOptions.tokenizerPath).absoluteFilePath());
  }
  QString chatTemplate = options.chatTemplate;
  if (chatTemplate.isEmpty() || chatTemplate == QLatin1String("auto"))
    chatTemplate = recentModels->chatTemplateFor(startOptions.modelPath);
  else
    recentModels->setChatTemplateFor(startOptions.modelPath, chatTemplate);
  pagedchat::EngineConfig config = engineConfigFor(startOptions);
  engineSettings->applyTo(config);
  engine_ = new LocalChatBackend(config, this, chatTemplate);
  models_ = new ModelController(engine_, recentModels, engineSettings, errors_, this);
  downloads_ = new DownloadController(QString(), this);
  // The context overflow policy applies from the next request on (no reload).
  engine_->setContextOverflow(engineSettings->contextOverflowPolicy());
  connect(engineSettings, &EngineSettings::changed, engine_,
          [this, engineSettings] { engine_->setContextOverflow(engineSettings->contextOverflowPolicy()); });
  throughput_ = new ThroughputMeter(engine_, this);
  conversations_ = new ConversationListModel(store_.get(), this);
  panes_ = new PaneListModel(store_.get(), engine_, this);
  monitor_ = new EngineMonitor(engine_, panes_, this);
  history_ = new HistoryController(store_.get(), conversations_, panes_, errors_, this);
  localModels_ = new LocalModels(engine_, recentModels, panes_, this);
  connect(panes_, &PaneListModel::layoutChanged, this, &AppController::savePanes);
  connect(panes_, &PaneListModel::currentIndexChanged, this, &AppController::savePanes);
  compare_ = new BlindCompare(panes_, store_.get(), this);
  ApiKeyStore* keys = keyStore ? keyStore : new KeychainApiKeyStore(this);
  tools_ = new ToolHost(settings_.get(), keys, this);  // the MCP servers' secrets in the keychain too
  panes_->setToolHost(tools_);
  endpoints_ = new PaneEndpoints(panes_, keys, this);
  server_ = new ApiServerController(engine_, settings_.get(), keys, this);
  // The server was turned on but is not running (no key for a network address, the port taken):
  // the window's banner says so, not only the settings' Server page.
  auto followServer = [this] {
    const QString error = server_->error();
    errors_->setServerError(error.isEmpty() ? QString() : tr("OpenAI API server (Settings > Server): %1").arg(error));
  };
  connect(server_, &ApiServerController::stateChanged, this, followServer);
  followServer();
  appearance_ = new Appearance(settings_.get(), translator_, this);
  // The sidebar's headings (Today, Yesterday, ...) are translated text.
  connect(appearance_, &Appearance::languageChanged, conversations_, &ConversationListModel::renameSections);
  connect(appearance_, &Appearance::languageChanged, engine_, &LocalChatBackend::modelDetailsChanged);
  restorePanes();
}

AppController::~AppController() {
  // Sessions save their replies through the store and cancel through the engine: they go first,
  // then the engine thread, then the store. The saved pane layout stays as it was.
  delete history_;  // pending deletions go through now
  history_ = nullptr;
  server_->disconnect(this);
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
  delete tools_;  // its servers end
  tools_ = nullptr;
  delete localModels_;  // the other models (their panes are gone), before the main one it reads
  localModels_ = nullptr;
  delete throughput_;
  throughput_ = nullptr;
  delete engine_;
  engine_ = nullptr;
  store_.reset();
}

void AppController::start() {
  if (!sendOnStart_.isEmpty()) {
    sendOnStartConnection_ = connect(engine_, &LocalChatBackend::stateChanged, this, [this] {
      if (engine_->isLoading()) return;
      disconnect(sendOnStartConnection_);
      if (PaneState* session = panes_->paneAt(0)) {
        session->setInputText(sendOnStart_);
        session->send();
      }
    });
  }
  engine_->start();
}

void AppController::restorePanes() {
  restoring_ = true;
  QList<qint64> saved;
  const QList<SavedPane> savedPanes = readPanes(*settings_);
  for (const SavedPane& p : savedPanes) saved.append(p.conversation);
  if (saved.isEmpty()) saved.append(0);
  while (saved.size() > PaneListModel::kMaxPanes) saved.removeLast();

  QSet<qint64> shown;
  for (qint64& id : saved) {
    if (!history_->conversationExists(id) || shown.contains(id)) id = 0;
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
  for (qsizetype i = 0; i < saved.size(); ++i) {
    PaneState* s = i < panes_->count() ? panes_->paneAt(static_cast<int>(i)) : panes_->addPane();
    if (s && i < savedPanes.size()) s->settings()->fromMap(savedPanes.at(i).settings);
    if (s && i < savedPanes.size()) endpoints_->restore(static_cast<int>(i), savedPanes.at(i).endpoint);
    if (s && i < savedPanes.size() && !savedPanes.at(i).localModel.isEmpty()) {
      // Loaded again beside the main one (a model that no longer fits: the banner says so).
      const QString error = localModels_->usePaneModel(s, savedPanes.at(i).localModel);
      if (!error.isEmpty()) errors_->set(tr("Pane %1 answers with the main model: %2").arg(i + 1).arg(error));
    }
    if (s && saved[i] != 0) s->openConversation(saved[i], history_->titleOf(saved[i]));
  }
  panes_->setCurrentIndex(qBound(0, settings_->value(kCurrentPaneKey, 0).toInt(), panes_->count() - 1));
  restoring_ = false;
  savePanes();
}

void AppController::savePanes() {
  if (restoring_ || !panes_ || !endpoints_ || !localModels_) return;
  settings_->remove(kPanesArray);  // the old binary keys too, and panes closed since
  const QList<PaneState*>& panes = panes_->panes();
  settings_->beginWriteArray(kPanesArray, static_cast<int>(panes.size()));
  for (int i = 0; i < panes.size(); ++i) {
    settings_->setArrayIndex(i);
    settings_->setValue(kConversationField, panes.at(i)->conversationId());
    const PaneSettings* paneSettings = panes.at(i)->settings();
    const QVariantMap map = paneSettings->toMap();
    const QStringList sampling = PaneSettings::samplingFields(), mine = paneSettings->customized();
    for (auto it = map.cbegin(); it != map.cend(); ++it) {
      if (it.key() == kCustomizedField || (sampling.contains(it.key()) && !mine.contains(it.key()))) continue;
      settings_->setValue(it.key(), it.value());
    }
    const QString localModel = localModels_->paneModelPath(i);
    if (!localModel.isEmpty()) settings_->setValue(kLocalModelField, localModel);
    const QVariantMap endpoint = endpoints_->savedForm(i);
    if (!endpoint.isEmpty()) {
      settings_->setValue(kEndpointUrlField, endpoint.value(QStringLiteral("url")));
      settings_->setValue(kEndpointModelField, endpoint.value(QStringLiteral("model")));
    }
  }
  settings_->endArray();
  settings_->setValue(kCurrentPaneKey, panes_->currentIndex());
}
