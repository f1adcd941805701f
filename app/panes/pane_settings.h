// PaneSettings: one chat pane's system prompt and sampling settings.
#pragma once

#include <QJsonObject>
#include <QObject>
#include <QSet>
#include <QString>
#include <QVariantMap>

#include "app/engine/model_defaults.h"
#include "engine/sample/sampling_params.h"

/// The settings of one pane: the system prompt put before every request, the sampling
/// parameters (temperature, top-p, top-k, min-p, repetition penalty, max tokens, seed) and the
/// reasoning choice (thinking on/off, effort) for models whose template has one. Setters
/// clamp to the allowed range; apply() takes values as the settings popup gives them (text
/// fields), checks them all and changes nothing unless every one is valid, returning the error
/// messages by field. toMap()/fromMap() are the form stored in pagedchat.ini (per pane) and in
/// compare votes. Runs on the GUI thread.
///
/// The model's suggestions: a sampling field the user has not set (customized()) follows the
/// loaded model's generation_config.json (setModelDefaults()), else the app's default, as vLLM
/// fills a request's unset fields from the model. Setting a field to a value other than that
/// default makes it the user's; reset() gives every field back to the model.
class PaneSettings : public QObject {
  Q_OBJECT
  Q_PROPERTY(QString systemPrompt READ systemPrompt WRITE setSystemPrompt NOTIFY changed)
  Q_PROPERTY(double temperature READ temperature WRITE setTemperature NOTIFY changed)
  Q_PROPERTY(double topP READ topP WRITE setTopP NOTIFY changed)
  Q_PROPERTY(int topK READ topK WRITE setTopK NOTIFY changed)
  Q_PROPERTY(double minP READ minP WRITE setMinP NOTIFY changed)
  Q_PROPERTY(double repetitionPenalty READ repetitionPenalty WRITE setRepetitionPenalty NOTIFY changed)
  Q_PROPERTY(int maxTokens READ maxTokens WRITE setMaxTokens NOTIFY changed)
  /// "random" or a non-negative integer.
  Q_PROPERTY(QString seed READ seed WRITE setSeed NOTIFY changed)
  /// The reasoning choice sent with each request: "" (the model's default), "on" / "off"
  /// (thinking) or "low" / "medium" / "high" (effort); see pagedchat::apply_reasoning_choice. A
  /// choice the loaded model has no switch for is kept and does nothing.
  Q_PROPERTY(QString reasoning READ reasoning WRITE setReasoning NOTIFY changed)
  /// The choices the loaded model's chat template offers (modelDefaults' "reasoningChoices";
  /// empty for a model without a reasoning switch), for the settings popup.
  Q_PROPERTY(QStringList reasoningChoices READ reasoningChoices NOTIFY changed)
  /// The app's tools (Settings → Tools: its MCP servers) are offered to the model in this pane.
  Q_PROPERTY(bool tools READ tools WRITE setTools NOTIFY changed)
  /// The MCP servers (Settings → Tools) whose tools this pane does not offer, by name; the others'
  /// are offered while `tools` is on (a server added later is offered until turned off here).
  Q_PROPERTY(QStringList toolServersOff READ toolServersOff WRITE setToolServersOff NOTIFY changed)
  /// Whether the model must call a tool in its reply to each message (OpenAI's tool_choice, held
  /// by constrained decoding on the local engine, sent as tool_choice to a remote one): "auto"
  /// (it decides), "required" (one of the tools offered) or a tool's name. The replies after
  /// tool results are the model's choice. pagedchat.ini key `toolChoice`.
  Q_PROPERTY(QString toolChoice READ toolChoice WRITE setToolChoice NOTIFY changed)
  /// Speculative decoding for this pane's requests on the local engine (the same reply, in fewer
  /// steps): who proposes the draft tokens — "auto" (the model's MTP layers when it has them, else
  /// n-gram lookup), "mtp", "draft" (EngineSettings::draftModel), "ngram" (lookup in the
  /// conversation) or "off". A choice the engine cannot serve (MTP without MTP layers, no draft
  /// model) falls back to n-gram lookup. pagedchat.ini key `drafts`; an older file's
  /// `speculative=false` reads as "off".
  Q_PROPERTY(QString drafts READ drafts WRITE setDrafts NOTIFY changed)
  /// The text of accepted draft tokens is shown in another colour (Theme.draftTextColor) in this
  /// pane's replies, while they stream and until the conversation is opened again (the marks are
  /// not stored). pagedchat.ini key `tintDrafts`; off by default.
  Q_PROPERTY(bool tintDrafts READ tintDrafts WRITE setTintDrafts NOTIFY changed)
  /// One line summing the settings up, for the pane header's tool tip.
  Q_PROPERTY(QString summary READ summary NOTIFY changed)

 public:
  static constexpr int kMaxTokensLimit = ::kMaxTokensLimit;

  explicit PaneSettings(QObject* parent = nullptr);

  QString systemPrompt() const { return systemPrompt_; }
  void setSystemPrompt(const QString& text);
  double temperature() const { return temperature_; }
  void setTemperature(double t);  ///< clamped to [0, 2]
  double topP() const { return topP_; }
  void setTopP(double p);  ///< clamped to [0.01, 1]
  int topK() const { return topK_; }
  void setTopK(int k);  ///< 0 = off; clamped to [0, 1000]
  double minP() const { return minP_; }
  void setMinP(double p);  ///< clamped to [0, 1]
  double repetitionPenalty() const { return repetitionPenalty_; }
  void setRepetitionPenalty(double r);  ///< clamped to [0.5, 2]
  int maxTokens() const { return maxTokens_; }
  void setMaxTokens(int n);  ///< clamped to [1, kMaxTokensLimit]
  QString seed() const { return seed_; }
  /// "random" (or empty) or a non-negative integer; anything else is ignored (see apply()).
  void setSeed(const QString& seed);
  QString reasoning() const { return reasoning_; }
  /// Ignored unless pagedchat::is_reasoning_choice(choice).
  void setReasoning(const QString& choice);
  QStringList reasoningChoices() const;
  bool tools() const { return tools_; }
  void setTools(bool on);
  QStringList toolServersOff() const { return toolServersOff_; }
  void setToolServersOff(const QStringList& names);
  /// Turns `server`'s tools on or off in this pane.
  Q_INVOKABLE void setToolServerOn(const QString& server, bool on);
  QString drafts() const { return drafts_; }
  void setDrafts(const QString& drafts);
  QString toolChoice() const { return toolChoice_; }
  void setToolChoice(const QString& choice);  ///< "" reads as "auto"
  bool tintDrafts() const { return tintDrafts_; }
  void setTintDrafts(bool on);
  /// "auto", "mtp", "draft", "ngram", "off": the values of `drafts`.
  static const QStringList& draftChoices();
  QString summary() const;
  /// A reasoning choice as the settings show it ("on", "low", ...; "" = "the model's default"), translated.
  Q_INVOKABLE QString reasoningChoiceName(const QString& choice) const;

  /// Checks `values` (keys as the properties; values as text or numbers). Returns field -> error
  /// message for each invalid one (empty when all are valid). Changes nothing.
  Q_INVOKABLE QVariantMap validate(const QVariantMap& values) const;
  /// validate(), then sets every given field when all are valid. Returns validate()'s errors.
  Q_INVOKABLE QVariantMap apply(const QVariantMap& values);
  /// Back to the defaults: the model's suggestions, else the app's (the system prompt is kept
  /// unless `includingPrompt`). No field stays customized.
  Q_INVOKABLE void reset(bool includingPrompt = false);

  /// The loaded model's suggestions (keys as modelDefaultsMap() writes them, clamped here to the
  /// settings' ranges; {} for none):
  /// every field not customized takes its value (or the app's default where the model has none).
  /// "reasoningChoices" (a string list) says which reasoning choices the model offers.
  void setModelDefaults(const QVariantMap& defaults);
  QVariantMap modelDefaults() const { return modelDefaults_; }
  /// The sampling fields (property names) the user set to something else than the default.
  QStringList customized() const;

  /// The sampling fields that follow the model unless the user sets them (temperature, topP,
  /// topK, minP, repetitionPenalty, maxTokens).
  static QStringList samplingFields();
  /// Every field, as stored (seed as text), and "customized" (customized()).
  QVariantMap toMap() const;
  /// Sets the valid fields of `map` (a stored one: invalid or missing fields keep their value).
  /// Its "customized" list says which fields are the user's; a map without one (stored by an
  /// older version) counts every field that differs from the app's default.
  void fromMap(const QVariantMap& map);
  QJsonObject toJson() const { return QJsonObject::fromVariantMap(toMap()); }

  /// The engine's parameters for one request (output kind kDelta).
  pagedchat::SamplingParams samplingParams() const;

 signals:
  void changed();

 private:
  QString systemPrompt_;
  double temperature_ = 0.8;
  double topP_ = 0.95;
  int topK_ = 0;
  double minP_ = 0.0;
  double repetitionPenalty_ = 1.0;
  int maxTokens_ = 256;
  QString seed_ = QStringLiteral("random");
  QString reasoning_;
  bool tools_ = true;
  QString drafts_ = QStringLiteral("auto");
  bool tintDrafts_ = false;
  QString toolChoice_ = QStringLiteral("auto");
  QStringList toolServersOff_;
  QVariantMap modelDefaults_;
  QSet<QString> customized_;

  /// The default of every sampling field: the app's, overlaid with modelDefaults_.
  QVariantMap defaults() const;
  /// Sets the fields of `values` (valid, parsed) without touching customized_.
  void assign(const QVariantMap& values);
};
