#include "app/engine/engine_worker.h"

#include "engine/multimodal/image_decode.h"
#include "engine/multimodal/mm_prompt.h"
#include "engine/vision/vision_encoder.h"

#include <QDir>
#include <QElapsedTimer>

#include <QFileInfo>
#include <QPointer>
#include <algorithm>

#include <memory>

#include <exception>
#include <utility>

#include "app/engine/engine_snapshot.h"
#include "app/engine/model_defaults.h"
#include "app/engine/server/worker_engine_proxy.h"
#include "app/render/draft_marks.h"
#include "engine/entrypoints/openai/chat_reply.h"
#include "engine/entrypoints/openai/tool_calls.h"
#include "engine/llm_engine.h"
#include "engine/text/chat_template.h"

EngineWorker::EngineWorker(const pagedchat::EngineConfig& config, const QString& chatTemplate, QObject* parent)
    : QObject(parent),
      config_(config),
      chatTemplateOverride_(chatTemplate),
      server_(std::make_unique<WorkerEngineProxy>(this, [this] { wakeForServer(); })) {
  qRegisterMetaType<PromptMessage>();
  qRegisterMetaType<QList<PromptMessage>>();
  qRegisterMetaType<RequestDelta>();
  qRegisterMetaType<QList<RequestDelta>>();
  qRegisterMetaType<EngineStepStats>();
  qRegisterMetaType<pagedchat::SamplingParams>();
  qRegisterMetaType<pagedchat::EngineConfig>();
  qRegisterMetaType<EngineSnapshot>();
  clock_.start();
}

EngineWorker::~EngineWorker() { server_->setEngine(nullptr, "the app is closing"); }

pagedchat::AsyncEngineClient* EngineWorker::serverClient() const { return server_.get(); }

void EngineWorker::wakeForServer() { scheduleStep(); }

void EngineWorker::freeEngine() {
  server_->setEngine(nullptr);
  const QMutexLocker lock(&engineMutex_);
  engine_.reset();
}

void EngineWorker::requestAbort(const QString& requestId) {
  const QMutexLocker lock(&engineMutex_);
  if (engine_) engine_->request_abort(requestId.toStdString());
}

void EngineWorker::loadModel() {
  if (engine_) return;
  load(0);
}

void EngineWorker::loadModelWith(const pagedchat::EngineConfig& config, const QString& chatTemplate, int generation) {
  abortAll();
  freeEngine();  // the old model's memory goes before the new one is mapped
  config_ = config;
  chatTemplateOverride_ = chatTemplate;
  load(generation);
}

void EngineWorker::unloadModel(int generation) {
  abortAll();
  freeEngine();
  chatTemplate_.reset();
  emit modelUnloaded(generation);
  maybeSnapshot(/*force=*/true);
  if (!pending_.isEmpty()) scheduleStep();  // submits still queued are rejected: no model
}

void EngineWorker::setMonitoring(bool on, int minIntervalMs) {
  monitoring_ = on;
  snapshotIntervalMs_ = std::max(0, minIntervalMs);
  if (on) maybeSnapshot(/*force=*/true);
}

void EngineWorker::abortAll() {
  if (active_.isEmpty()) return;
  QList<RequestDelta> deltas;
  for (const QString& id : std::as_const(active_)) {
    if (engine_) engine_->abort_request(id.toStdString());
    RequestDelta d;
    d.requestId = id;
    d.finished = true;
    d.finishReason = pagedchat::FinishReason::kAbort;
    deltas.append(std::move(d));
  }
  active_.clear();
  abortedUnreported_.clear();
  reasoningOpened_.clear();
  EngineStepStats stats;
  if (engine_) {
    const pagedchat::EngineStats s = engine_->stats();
    stats.numSteps = s.num_steps;
    stats.numGenerationTokens = s.num_generation_tokens;
  }
  emit stepFinished(deltas, stats);
}

namespace {

/// The image projector downloaded beside a GGUF model: an `mmproj*.gguf` in its folder (the name
/// llama.cpp's converters and the hub's repositories give it); with several, the one whose name
/// holds the model's stem, then by name. "" for none (or a model that is not one GGUF file).
QString findImageProjector(const QString& modelPath) {
  const QFileInfo model(modelPath);
  if (!model.isFile() || model.suffix().compare(QLatin1String("gguf"), Qt::CaseInsensitive) != 0) return {};
  const QStringList found = model.dir().entryList({QStringLiteral("mmproj*.gguf"), QStringLiteral("*mmproj*.gguf")},
                                                  QDir::Files | QDir::Readable, QDir::Name);
  QString best;
  const QString stem = model.completeBaseName().section(QLatin1Char('-'), 0, 1).toLower();
  for (const QString& name : found) {
    if (name == model.fileName()) continue;
    if (best.isEmpty() || (!best.toLower().contains(stem) && name.toLower().contains(stem))) best = name;
  }
  return best.isEmpty() ? QString() : model.dir().filePath(best);
}

/// The messages fit_chat kept, in order: their pictures, in this order, are the prompt's markers
/// (each message's lead its text).
QList<const PromptMessage*> keptMessages(const QList<PromptMessage>& messages, const pagedchat::ChatPrompt& prompt) {
  QList<const PromptMessage*> kept;
  for (int m = 0; m < messages.size(); ++m)
    if (m < prompt.first_dropped_message || m >= prompt.first_dropped_message + prompt.num_dropped_messages)
      kept.append(&messages[m]);
  return kept;
}

/// How many pictures `messages` hold; without those of tool results when `toolResults` is false.
int pictureCount(const QList<const PromptMessage*>& messages, bool toolResults = true) {
  int n = 0;
  for (const PromptMessage* m : messages)
    if (toolResults || m->role != MessageRole::kTool) n += static_cast<int>(m->images.size());
  return n;
}
}  // namespace

void EngineWorker::load(int generation) {
  std::string templateWarning;
  pagedchat::EngineConfig config = config_;
  const bool foundProjector = config.mmproj.empty();
  if (foundProjector) config.mmproj = findImageProjector(QString::fromStdString(config.model)).toStdString();
  // Progress comes from inside the loader on this thread: throttled, then queued to the GUI.
  // The engine keeps a copy of its config (with this callback): the state is shared, not borrowed.
  struct ProgressState {
    QElapsedTimer sinceEmit;
    qint64 lastDone = -1;
  };
  auto state = std::make_shared<ProgressState>();
  QPointer<EngineWorker> self(this);
  config.load_progress = [state, self, generation](std::uint64_t done, std::uint64_t total) {
    const bool last = done >= total;
    if (!self) return;
    if (!last && state->lastDone >= 0 && state->sinceEmit.elapsed() < 1000 / kMaxProgressPerSecond) return;
    if (static_cast<qint64>(done) < state->lastDone) return;  // never backwards
    state->lastDone = static_cast<qint64>(done);
    state->sinceEmit.start();
    emit self->loadProgress(static_cast<qint64>(done), static_cast<qint64>(total), generation);
  };
  // The engine's warnings reach the window (queued to the GUI thread), not only stderr.
  config.on_warning = [self](const std::string& message) {
    qInfo("pagedchat: warning: %s", message.c_str());
    if (self) emit self->engineWarning(QString::fromStdString(message));
  };
  try {
    const std::string overrideName = chatTemplateOverride_.toStdString();
    pagedchat::resolve_chat_template(overrideName, "");  // an unknown name fails before the load
    std::unique_ptr<pagedchat::LLMEngine> engine;
    try {
      engine = std::make_unique<pagedchat::LLMEngine>(config);
    } catch (const std::exception& e) {
      // A projector found beside the model that does not fit it: the model loads without images.
      if (!foundProjector || config.mmproj.empty()) throw;
      const QString why = QString::fromStdString(e.what());
      config.mmproj.clear();
      engine = std::make_unique<pagedchat::LLMEngine>(config);
      emit engineWarning(tr("The image projector beside the model was not loaded, so it reads no images: %1").arg(why));
    }
    {
      const QMutexLocker lock(&engineMutex_);
      engine_ = std::move(engine);
    }
    chatTemplate_ = pagedchat::resolve_chat_template(overrideName, engine_->chat_template(), "'" + config_.model + "'",
                                                     &templateWarning);
  } catch (const std::exception& e) {
    {
      const QMutexLocker lock(&engineMutex_);
      engine_.reset();
    }
    QString message = QString::fromStdString(e.what());
    const QString path = QString::fromStdString(config_.model);
    const QString file = QFileInfo(path).fileName();
    // The loaders name the file in most messages; where one does not, say which file it was.
    if (!path.isEmpty() && !message.contains(file)) message = tr("%1: %2").arg(path, message);
    emit loadFailed(message, generation);
    scheduleStep();  // requests submitted while loading are rejected
    return;
  }
  lastTemplateWarning_ = templateWarning;
  if (!templateWarning.empty()) {
    qInfo("pagedchat: %s", templateWarning.c_str());
    emit chatTemplateWarning(QString::fromStdString(templateWarning));
  }
  server_->setEngine(engine_.get());
  // Inside step(), once it has scheduled: a long prefill chunk shows as running, with its progress.
  engine_->set_on_scheduled([this] { emit stepStarted(promptProgress(), stepStats(0.0)); });
  const pagedchat::ModelConfig& mc = engine_->model_config();
  QString name = QFileInfo(QString::fromStdString(config_.model)).completeBaseName();
  const int numBlocks = engine_->stats().num_total_blocks;
  QStringList draftMethods;  // who can propose draft tokens (SpeculativeConfig::method_name)
  for (const auto m : engine_->speculative_methods())
    draftMethods << QString::fromStdString(pagedchat::SpeculativeConfig::method_name(m));
  // Facts, not sentences: the GUI words them in the language of the moment (LocalChatBackend::modelDetails).
  const QVariantMap details{
      {QStringLiteral("draftMethods"), draftMethods},
      {QStringLiteral("readsImages"), engine_->vision_encoder() != nullptr},
      {QStringLiteral("architecture"), QString::fromStdString(mc.architecture)},
      {QStringLiteral("layers"), mc.n_layers},
      {QStringLiteral("dim"), mc.hidden_size},
      {QStringLiteral("vocab"), mc.vocab_size},
      {QStringLiteral("weights"), QString::fromStdString(engine_->weight_types())},
      {QStringLiteral("blocks"), numBlocks},
      {QStringLiteral("memoryBytes"),
       static_cast<qulonglong>(engine_->packed_weight_bytes() + engine_->engine_config().kv_cache_bytes)},
      {QStringLiteral("builtinTemplate"), chatTemplate_->is_builtin()},
      {QStringLiteral("template"), QString::fromStdString(chatTemplate_->name())},
      {QStringLiteral("templateFamily"), QString::fromStdString(chatTemplate_->family())}};
  emit contextLengthKnown(engine_->engine_config().max_model_len);
  emit chatFormatKnown(chatTemplate_->name() == "none");
  emit samplingDefaultsKnown(modelDefaults());
  emit modelLoaded(name, details, numBlocks, generation);
  maybeSnapshot(/*force=*/true);
  scheduleStep();  // requests submitted while loading
}

void EngineWorker::submit(const QString& requestId, const QList<PromptMessage>& messages,
                          const pagedchat::SamplingParams& params, bool continueLast, const QString& reasoning,
                          const QString& tools, const QString& drafts, const QString& toolChoice) {
  Command c;
  c.toolChoice = toolChoice;
  c.continueLast = continueLast;
  c.drafts = drafts;
  c.reasoning = reasoning;
  c.tools = tools;
  c.requestId = requestId;
  c.messages = messages;
  c.params = params;
  c.params.output_kind = pagedchat::RequestOutputKind::kDelta;
  pending_.append(std::move(c));
  scheduleStep();
}

void EngineWorker::setContextOverflow(pagedchat::ContextOverflow policy) { contextOverflow_ = policy; }

void EngineWorker::cancel(const QString& requestId) {
  Command c;
  c.isCancel = true;
  c.requestId = requestId;
  pending_.append(std::move(c));
  scheduleStep();
}

void EngineWorker::countTokens(int ticket, const QList<PromptMessage>& messages, int maxTokens) {
  int count = -1;
  if (engine_ && !messages.isEmpty()) {
    const std::vector<pagedchat::ChatMessage> chat = toChatMessages(messages);
    const bool continueLast = messages.constLast().role == MessageRole::kAssistant;
    try {
      pagedchat::ChatEncodeOptions encode = chatEncodeOptions();
      encode.continue_final_message = continueLast;
      const pagedchat::ChatPrompt fitted = pagedchat::fit_chat(engine_->tokenizer(), *chatTemplate_, chat, encode,
                                                               engine_->engine_config().max_model_len,
                                                               std::max(1, maxTokens));
      count = static_cast<int>(fitted.token_ids.size());
      // Pictures count as the positions they take (stand-in pictures of their fitted sizes).
      if (engine_->vision_encoder() && pictureCount(keptMessages(messages, fitted)) > 0) {
        const pagedchat::VisionEncoder& enc = *engine_->vision_encoder();
        std::vector<std::shared_ptr<const pagedchat::RgbImage>> standIns;
        for (const PromptMessage* m : keptMessages(messages, fitted))
          for (const ImageAttachment& a : m->images) {
            const auto [w, h] = enc.fit_size(a.width, a.height);
            standIns.push_back(std::make_shared<const pagedchat::RgbImage>(pagedchat::RgbImage{
                w, h, std::vector<uint8_t>(static_cast<std::size_t>(w) * static_cast<std::size_t>(h) * 3)}));
          }
        count = static_cast<int>(pagedchat::encode_image_prompt(engine_->tokenizer(), enc, fitted.rendered, standIns,
                                                                encode.bos_id,
                                                                pagedchat::image_placeholder_id(engine_->tokenizer()))
                                     .token_ids.size());
      }
    } catch (const pagedchat::ChatTooLongError&) {
      pagedchat::ChatEncodeOptions encode = chatEncodeOptions();
      encode.continue_final_message = continueLast;
      count = static_cast<int>(
          pagedchat::encode_chat(engine_->tokenizer(), *chatTemplate_, chat, !continueLast, encode).size());
    } catch (const std::exception&) {
      count = -1;  // roles this template does not take: not counted
    }
  }
  emit tokenCountReady(ticket, count);
}

QVariantMap EngineWorker::modelDefaults() const {
  return modelDefaultsMap(engine_->sampling_defaults(), &chatTemplate_->reasoning_controls(),
                          engine_->engine_config().max_model_len);
}

pagedchat::ChatEncodeOptions EngineWorker::chatEncodeOptions() const {
  const pagedchat::ModelConfig& mc = engine_->model_config();
  pagedchat::ChatEncodeOptions options = pagedchat::chat_encode_options(engine_->tokenizer(), mc.add_bos, mc.bos_id);
  options.context_overflow = contextOverflow_;
  return options;
}

void EngineWorker::scheduleStep() {
  if (stepScheduled_) return;
  stepScheduled_ = true;
  QMetaObject::invokeMethod(this, &EngineWorker::runStep, Qt::QueuedConnection);
}

std::vector<pagedchat::MultiModalPlaceholder> EngineWorker::placeImages(const QList<PromptMessage>& messages,
                                                                        pagedchat::ChatPrompt& prompt,
                                                                        const pagedchat::ChatEncodeOptions& encode) {
  const QList<const PromptMessage*> keptMessagesList = keptMessages(messages, prompt);
  const int pictures = pictureCount(keptMessagesList);
  if (pictures > 0 && !engine_->vision_encoder()) {
    // A model that reads no images (a conversation with pictures continued on a text model): the
    // pictures are left out, and the window says so. (A tool result names its pictures in its
    // text: those go without a word.)
    prompt.token_ids = pagedchat::encode_rendered_prompt(engine_->tokenizer(),
                                                         pagedchat::strip_image_markers(prompt.rendered), encode);
    prompt.max_tokens = std::min(prompt.max_tokens,
                                 engine_->engine_config().max_model_len - static_cast<int>(prompt.token_ids.size()));
    if (const int userPictures = pictureCount(keptMessagesList, false); userPictures > 0)
      emit engineWarning(
          tr("This model reads no images: the conversation's %n picture(s) were left out of what it read.", nullptr,
             userPictures));
    return {};
  }
  std::vector<std::shared_ptr<const pagedchat::RgbImage>> kept;
  for (const PromptMessage* m : keptMessagesList)
    for (const ImageAttachment& a : m->images) {
      const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(a.bytes.constData()),
                                           static_cast<std::size_t>(a.bytes.size()));
      kept.push_back(
          std::make_shared<const pagedchat::RgbImage>(engine_->vision_encoder()->fit(pagedchat::decode_image(bytes))));
    }
  if (kept.empty()) return {};
  pagedchat::ImagePrompt placed = pagedchat::encode_image_prompt(engine_->tokenizer(), *engine_->vision_encoder(),
                                                                 prompt.rendered, kept, encode.bos_id,
                                                                 pagedchat::image_placeholder_id(engine_->tokenizer()));
  const int n = static_cast<int>(placed.token_ids.size()), max_len = engine_->engine_config().max_model_len;
  if (n >= max_len)
    throw pagedchat::ChatTooLongError("the conversation with its images needs " + std::to_string(n) +
                                          " prompt tokens; max_model_len is " + std::to_string(max_len),
                                      n, max_len, /*conversation=*/true);
  prompt.token_ids = std::move(placed.token_ids);
  prompt.max_tokens = std::min(prompt.max_tokens, max_len - n);
  prompt.stable_prefix_tokens = 0;
  return std::move(placed.images);
}

void EngineWorker::drainCommands() {
  server_->runQueued();  // the server's requests join the same step as the panes'
  const QList<Command> commands = std::exchange(pending_, {});
  for (const Command& c : commands) {
    if (c.isCancel) {
      if (engine_ && active_.contains(c.requestId) && engine_->abort_request(c.requestId.toStdString())) {
        abortedUnreported_.insert(c.requestId);
      }
      continue;
    }
    if (!engine_) {
      emit requestRejected(c.requestId, tr("No model is loaded."));
      continue;
    }
    try {
      // The whole conversation is rendered with the chat template; the reply may use what the
      // context leaves after it (the engine refuses a request whose prompt + max_tokens exceeds
      // max_model_len rather than truncating it), and the oldest turns make room when needed.
      pagedchat::ChatEncodeOptions encode = chatEncodeOptions();
      encode.continue_final_message = c.continueLast;
      pagedchat::apply_reasoning_choice(encode, chatTemplate_->reasoning_controls(), c.reasoning.toStdString());
      nlohmann::json tools;
      if (!c.tools.isEmpty()) {
        tools = nlohmann::json::parse(c.tools.toStdString(), nullptr, /*allow_exceptions=*/false);
        if (!tools.is_array()) throw std::invalid_argument("the tools offered are not a JSON array");
        encode.extra_variables_json = nlohmann::json{{"tools", tools}}.dump();
      }
      // A hybrid model's next turn resumes from the state checkpoint of what it repeats.
      encode.find_stable_prefix = engine_->model_config().num_recurrent_layers() > 0;
      pagedchat::ChatPrompt prompt = pagedchat::fit_chat(engine_->tokenizer(), *chatTemplate_,
                                                         toChatMessages(c.messages), encode,
                                                         engine_->engine_config().max_model_len, c.params.max_tokens);
      const std::vector<pagedchat::MultiModalPlaceholder> images = placeImages(c.messages, prompt, encode);
      if (prompt.num_dropped_messages > 0)
        emit contextTrimmed(c.requestId, prompt.first_dropped_message, prompt.num_dropped_messages);
      if (!prompt.warning.empty() && prompt.warning != lastTemplateWarning_) {
        lastTemplateWarning_ = prompt.warning;  // said once per kind of failure, not per request
        qWarning("pagedchat: %s", prompt.warning.c_str());
        emit chatTemplateWarning(QString::fromStdString(prompt.warning));
      }
      pagedchat::SamplingParams params = c.params;
      params.max_tokens = prompt.max_tokens;
      // A call the pane asks for (tool_choice "required" or a tool's name): forced by constrained
      // decoding over the tools whose parameters the grammar can enforce.
      const bool forced = !c.toolChoice.isEmpty() && c.toolChoice != QLatin1String("auto");
      if (forced) {
        const nlohmann::ordered_json enforceable = pagedchat::openai::enforceable_tools(
            c.tools.isEmpty() ? nlohmann::ordered_json::array() : nlohmann::ordered_json::parse(c.tools.toStdString()));
        if (enforceable.empty()) throw std::invalid_argument(toolChoiceUnavailable(c.toolChoice).toStdString());
        const bool required = c.toolChoice == QLatin1String("required");
        pagedchat::StructuredOutputsParams structured;
        try {
          structured.json = pagedchat::openai::tool_choice_schema(enforceable, required ? "required" : "function",
                                                                  required ? std::string() : c.toolChoice.toStdString(),
                                                                  /*parallel_tool_calls=*/true)
                                .dump();
        } catch (const std::invalid_argument&) {  // a named tool that is not among them
          throw std::invalid_argument(toolChoiceUnavailable(c.toolChoice).toStdString());
        }
        params.structured_outputs = std::move(structured);
      }
      const pagedchat::ChatStopConditions stops = pagedchat::chat_stop_conditions(*chatTemplate_, engine_->tokenizer());
      params.stop.insert(params.stop.end(), stops.stop.begin(), stops.stop.end());
      params.stop_token_ids.insert(params.stop_token_ids.end(), stops.stop_token_ids.begin(),
                                   stops.stop_token_ids.end());
      pagedchat::RequestOptions options;
      options.stable_prefix_tokens = prompt.stable_prefix_tokens;
      options.images = images;
      // The pane's proposer (PaneSettings::drafts): "auto" is the engine's default (the model's
      // MTP layers when it loaded them, else n-gram); one the engine lacks falls back to it.
      using Method = pagedchat::SpeculativeConfig::Method;
      options.speculative = c.drafts != QLatin1String("off");
      if (c.drafts == QLatin1String("ngram")) options.speculative_method = Method::kNgram;
      if (c.drafts == QLatin1String("draft")) options.speculative_method = Method::kDraftModel;
      if (c.drafts == QLatin1String("mtp")) options.speculative_method = Method::kMtp;
      engine_->add_request(c.requestId.toStdString(), prompt.token_ids, params, options);
      active_.insert(c.requestId);
      // The template opened the reasoning block (DeepSeek-R1's "<think>\n" generation prompt):
      // the reply's text starts with the tag the model did not write, so that it reads, is stored
      // and is sent again as every reasoning reply is ("<think>…</think> answer").
      if (prompt.opens_reasoning) reasoningOpened_.insert(c.requestId);
      if (forced) {
        toolReplies_.insert(c.requestId, std::make_shared<ToolReplySplitter>(c.toolChoice));
      } else if (!c.tools.isEmpty()) {
        const auto format = pagedchat::openai::tool_call_format_of(chatTemplate_->source(), chatTemplate_->family());
        toolReplies_.insert(c.requestId, std::make_shared<ToolReplySplitter>(format, std::move(tools)));
      }
    } catch (const pagedchat::ChatTooLongError& e) {
      emit requestRejected(
          c.requestId,
          e.whole_conversation
              ? tr("the conversation is %1 tokens long and the model's context holds %2 with room for the reply. "
                   "Start a new chat, or let older turns go (Settings, Engine: when a conversation outgrows the "
                   "context).")
                    .arg(e.num_tokens)
                    .arg(e.max_model_len)
              : tr("The message is %1 tokens long; the model's context holds %2.")
                    .arg(e.num_tokens)
                    .arg(e.max_model_len));
    } catch (const std::exception& e) {
      emit requestRejected(c.requestId, QString::fromStdString(e.what()));
    }
  }
}

QList<RequestDelta> EngineWorker::promptProgress() const {
  QList<RequestDelta> out;
  if (!engine_) return out;
  for (const std::string& id : engine_->last_scheduled_request_ids()) {
    const QString requestId = QString::fromStdString(id);
    if (!active_.contains(requestId)) continue;  // a server request, or a completion's fork
    const std::optional<pagedchat::RequestState> st = engine_->request_state(id);
    if (!st || st->num_computed_tokens >= st->num_prompt_tokens) continue;
    RequestDelta d;
    d.requestId = requestId;
    d.numPromptTokens = st->num_prompt_tokens;
    d.numComputedPromptTokens = st->num_computed_tokens;
    out.append(std::move(d));
  }
  return out;
}

EngineStepStats EngineWorker::stepStats(double stepMs) const {
  const pagedchat::EngineStats s = engine_->stats();
  EngineStepStats stats;
  stats.numRunning = s.num_running;
  stats.numWaiting = s.num_waiting;
  stats.numSteps = s.num_steps;
  stats.numGenerationTokens = s.num_generation_tokens;
  stats.stepMs = stepMs;
  return stats;
}

void EngineWorker::failAllActive(const QString& message) {
  for (const QString& id : std::as_const(active_)) {
    if (engine_) engine_->abort_request(id.toStdString());  // else the failed step would run again
    emit requestRejected(id, message);
  }
  active_.clear();
  reasoningOpened_.clear();
  toolReplies_.clear();
  abortedUnreported_.clear();
}

void EngineWorker::runStep() {
  stepScheduled_ = false;
  drainCommands();  // without a model (failed load) this rejects every submit
  if (!engine_) return;
  if (!engine_->has_unfinished_requests() && abortedUnreported_.isEmpty()) return;

  QElapsedTimer timer;
  timer.start();
  std::vector<pagedchat::RequestOutput> outputs;
  try {
    outputs = engine_->step();
  } catch (const std::exception& e) {
    // Every request of the failed step is aborted (the panes' and the server's), its abort outputs
    // drained, and the status shown again: nothing is left running that would fail the next step.
    failAllActive(tr("Engine error: %1").arg(QString::fromStdString(e.what())));
    server_->failAll(std::string("the engine step failed: ") + e.what());
    try {
      engine_->step();
    } catch (const std::exception&) {
    }
    emit stepFinished({}, stepStats(timer.nsecsElapsed() / 1e6));
    return;
  }
  server_->deliverStep(outputs);  // the server's outputs to its streams
  const double stepMs = timer.nsecsElapsed() / 1e6;

  QList<RequestDelta> deltas;
  deltas.reserve(static_cast<qsizetype>(outputs.size()) + abortedUnreported_.size());
  for (const pagedchat::RequestOutput& out : outputs) {
    RequestDelta d;
    d.requestId = QString::fromStdString(out.request_id);
    if (!active_.contains(d.requestId)) continue;  // a server request
    if (!out.outputs.empty()) {
      const pagedchat::CompletionOutput& c = out.outputs.front();
      d.text = QString::fromStdString(c.text);
      d.draftSpans = draftmarks::fromUtf8Spans(c.text, c.draft_spans);
      if (reasoningOpened_.remove(d.requestId)) {
        const QString open = QStringLiteral("<think>\n");
        d.text.prepend(open);
        for (int& at : d.draftSpans) at += int(open.size());
      }
      if (const auto split = toolReplies_.value(d.requestId)) {
        const QString shown = split->feed(d.text);
        if (shown != d.text) d.draftSpans.clear();  // (a call left out: the offsets no longer hold)
        d.text = shown;
      }
      d.newTokens = static_cast<int>(c.token_ids.size());
      d.finishReason = c.finish_reason;
    }
    d.numPromptTokens = static_cast<int>(out.prompt_token_ids.size());
    d.numCachedTokens = out.num_cached_tokens;
    d.numSpecDrafts = out.metrics.num_spec_drafts;
    d.specMethod = QString::fromStdString(out.metrics.spec_method);
    d.numSpecDraftTokens = out.metrics.num_spec_draft_tokens;
    d.numSpecAcceptedTokens = out.metrics.num_spec_accepted_tokens;
    if (out.metrics.first_token_time > 0)
      d.decodeSeconds = std::max(0.0, out.metrics.last_token_time - out.metrics.first_token_time);
    d.finished = out.finished;
    if (d.finished) {
      if (!d.finishReason) d.finishReason = pagedchat::FinishReason::kStop;
      active_.remove(d.requestId);
      reasoningOpened_.remove(d.requestId);
      abortedUnreported_.remove(d.requestId);
      if (const auto split = toolReplies_.take(d.requestId)) {
        d.text += split->finish();
        d.toolCalls = split->toolCallsJson();
      }
    }
    deltas.append(std::move(d));
  }
  // An aborted request the engine did not report (it may drop it at once) still gets its final delta.
  for (const QString& id : std::as_const(abortedUnreported_)) {
    RequestDelta d;
    d.requestId = id;
    d.finished = true;
    d.finishReason = pagedchat::FinishReason::kAbort;
    active_.remove(id);
    toolReplies_.remove(id);
    deltas.append(std::move(d));
  }
  abortedUnreported_.clear();

  // Requests still reading their prompt after this step (a prompt longer than a chunk): their progress.
  QSet<QString> reported;
  for (const RequestDelta& d : std::as_const(deltas)) reported.insert(d.requestId);
  for (RequestDelta& d : promptProgress())
    if (!reported.contains(d.requestId)) deltas.append(std::move(d));
  emit stepFinished(deltas, stepStats(stepMs));

  const bool more = engine_->has_unfinished_requests() || !pending_.isEmpty();
  maybeSnapshot(/*force=*/!engine_->has_unfinished_requests());  // the idle state always shows
  if (more) scheduleStep();
}

void EngineWorker::maybeSnapshot(bool force) {
  if (!monitoring_) return;
  const qint64 now = clock_.elapsed();
  if (!force && lastSnapshotMs_ >= 0 && now - lastSnapshotMs_ < snapshotIntervalMs_) return;
  lastSnapshotMs_ = now;
  if (!engine_) {
    emit snapshotReady(EngineSnapshot{});
    return;
  }
  QStringList ids(active_.cbegin(), active_.cend());
  ids.sort();
  QStringList serverIds;
  for (const std::string& id : server_->request_ids()) serverIds.append(QString::fromStdString(id));
  serverIds.sort();
  emit snapshotReady(makeEngineSnapshot(*engine_, ids, serverIds));
}
