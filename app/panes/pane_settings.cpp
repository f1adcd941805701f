#include "app/panes/pane_settings.h"

#include <cmath>
#include <optional>
#include <type_traits>

#include "engine/text/reasoning_controls.h"

namespace {

struct Range {
  double lo, hi;
};
const Range kTemperature{0.0, 2.0};
const Range kTopP{0.01, 1.0};
const Range kTopK{0, 1000};
const Range kMinP{0.0, 1.0};
const Range kRepetition{0.5, 2.0};

/// Reads a number typed by the user ("0.7", "0,7", " 1 "); nullopt when it is not one.
std::optional<double> parseNumber(const QVariant& v) {
  if (v.typeId() == QMetaType::Double || v.typeId() == QMetaType::Int || v.typeId() == QMetaType::LongLong) {
    const double d = v.toDouble();
    return std::isfinite(d) ? std::optional<double>(d) : std::nullopt;
  }
  QString s = v.toString().trimmed();
  s.replace(QLatin1Char(','), QLatin1Char('.'));
  bool ok = false;
  const double d = s.toDouble(&ok);
  return ok && std::isfinite(d) ? std::optional<double>(d) : std::nullopt;
}

std::optional<qint64> parseInteger(const QVariant& v) {
  const std::optional<double> d = parseNumber(v);
  if (!d || *d != std::floor(*d) || std::fabs(*d) > 9.0e15) return std::nullopt;
  return static_cast<qint64>(*d);
}

/// A switch's value: a bool, or "true" / "false" (pagedchat.ini, automation).
bool isBool(const QVariant& v) {
  const QString text = v.toString();
  return v.typeId() == QMetaType::Bool || text == QLatin1String("true") || text == QLatin1String("false");
}

bool isRandomSeed(const QString& s) {
  const QString t = s.trimmed();
  return t.isEmpty() || t.compare(QLatin1String("random"), Qt::CaseInsensitive) == 0;
}

/// Sets `field` to `value` clamped to [lo, hi]; true when that changed it (doubles are compared
/// fuzzily, so a value that only differs by rounding is no change).
template <typename T>
bool assignClamped(T& field, T value, T lo, T hi) {
  value = qBound(lo, value, hi);
  if constexpr (std::is_floating_point_v<T>) {
    if (qFuzzyCompare(value + 1.0, field + 1.0)) return false;
  } else {
    if (value == field) return false;
  }
  field = value;
  return true;
}

/// The fields a model may suggest (SamplingDefaults), by property name.
const QStringList kSamplingFields = {
    QStringLiteral("temperature"),       QStringLiteral("topP"),     QStringLiteral("topK"), QStringLiteral("minP"),
    QStringLiteral("repetitionPenalty"), QStringLiteral("maxTokens")};

/// Two stored numbers that are the same setting (compared as assignClamped does).
bool sameValue(const QVariant& a, const QVariant& b) {
  const std::optional<double> x = parseNumber(a), y = parseNumber(b);
  return x && y && qFuzzyCompare(*x + 1.0, *y + 1.0);
}

}  // namespace

PaneSettings::PaneSettings(QObject* parent) : QObject(parent) {}

void PaneSettings::setSystemPrompt(const QString& text) {
  if (text == systemPrompt_) return;
  systemPrompt_ = text;
  emit changed();
}

void PaneSettings::setTemperature(double t) {
  if (assignClamped(temperature_, t, kTemperature.lo, kTemperature.hi)) emit changed();
}

void PaneSettings::setTopP(double p) {
  if (assignClamped(topP_, p, kTopP.lo, kTopP.hi)) emit changed();
}

void PaneSettings::setTopK(int k) {
  if (assignClamped(topK_, k, 0, static_cast<int>(kTopK.hi))) emit changed();
}

void PaneSettings::setMinP(double p) {
  if (assignClamped(minP_, p, kMinP.lo, kMinP.hi)) emit changed();
}

void PaneSettings::setRepetitionPenalty(double r) {
  if (assignClamped(repetitionPenalty_, r, kRepetition.lo, kRepetition.hi)) emit changed();
}

void PaneSettings::setMaxTokens(int n) {
  if (assignClamped(maxTokens_, n, 1, kMaxTokensLimit)) emit changed();
}

void PaneSettings::setSeed(const QString& seed) {
  QString s;
  if (isRandomSeed(seed)) {
    s = QStringLiteral("random");
  } else {
    const std::optional<qint64> n = parseInteger(seed);
    if (!n || *n < 0) return;
    s = QString::number(*n);
  }
  if (s == seed_) return;
  seed_ = s;
  emit changed();
}

void PaneSettings::setReasoning(const QString& choice) {
  if (choice == reasoning_ || !pagedchat::is_reasoning_choice(choice.toStdString())) return;
  reasoning_ = choice;
  emit changed();
}

void PaneSettings::setTools(bool on) {
  if (on == tools_) return;
  tools_ = on;
  emit changed();
}

void PaneSettings::setToolServersOff(const QStringList& names) {
  QStringList clean;
  for (const QString& n : names)
    if (!n.trimmed().isEmpty() && !clean.contains(n.trimmed())) clean.append(n.trimmed());
  clean.sort();
  if (clean == toolServersOff_) return;
  toolServersOff_ = clean;
  emit changed();
}

void PaneSettings::setToolServerOn(const QString& server, bool on) {
  QStringList names = toolServersOff_;
  if (on)
    names.removeAll(server);
  else
    names.append(server);
  setToolServersOff(names);
}

const QStringList& PaneSettings::draftChoices() {
  static const QStringList choices = {QStringLiteral("auto"), QStringLiteral("mtp"), QStringLiteral("draft"),
                                      QStringLiteral("ngram"), QStringLiteral("off")};
  return choices;
}

void PaneSettings::setDrafts(const QString& drafts) {
  if (drafts == drafts_ || !draftChoices().contains(drafts)) return;
  drafts_ = drafts;
  emit changed();
}

void PaneSettings::setToolChoice(const QString& choice) {
  const QString c = choice.trimmed().isEmpty() ? QStringLiteral("auto") : choice.trimmed();
  if (c == toolChoice_) return;
  toolChoice_ = c;
  emit changed();
}

void PaneSettings::setTintDrafts(bool on) {
  if (on == tintDrafts_) return;
  tintDrafts_ = on;
  emit changed();
}

QStringList PaneSettings::reasoningChoices() const {
  return modelDefaults_.value(QStringLiteral("reasoningChoices")).toStringList();
}

QString PaneSettings::summary() const {
  QString s = tr("temperature %1 · top-p %2 · top-k %3 · min-p %4 · repetition %5 · max %6 tokens · seed %7")
                  .arg(temperature_)
                  .arg(topP_)
                  .arg(topK_ == 0 ? tr("off") : QString::number(topK_))
                  .arg(minP_)
                  .arg(repetitionPenalty_)
                  .arg(maxTokens_)
                  .arg(seed_ == QLatin1String("random") ? tr("random") : seed_);
  if (!reasoning_.isEmpty() && reasoningChoices().contains(reasoning_))
    s += tr(" · reasoning %1").arg(reasoningChoiceName(reasoning_));
  return s;
}

QString PaneSettings::reasoningChoiceName(const QString& choice) const {
  if (choice == QLatin1String("on")) return tr("on");
  if (choice == QLatin1String("off")) return tr("off");
  if (choice == QLatin1String("low")) return tr("low");
  if (choice == QLatin1String("medium")) return tr("medium");
  if (choice == QLatin1String("high")) return tr("high");
  return tr("the model's default");
}

QVariantMap PaneSettings::validate(const QVariantMap& values) const {
  QVariantMap errors;
  auto checkRange = [&](const QString& key, const Range& r, const QString& name) {
    if (!values.contains(key)) return;
    const std::optional<double> d = parseNumber(values.value(key));
    if (!d)
      errors.insert(key, tr("%1 must be a number.").arg(name));
    else if (*d < r.lo || *d > r.hi)
      errors.insert(key, tr("%1 must be between %2 and %3.").arg(name).arg(r.lo).arg(r.hi));
  };
  checkRange(QStringLiteral("temperature"), kTemperature, tr("Temperature"));
  checkRange(QStringLiteral("topP"), kTopP, tr("Top-p"));
  checkRange(QStringLiteral("minP"), kMinP, tr("Min-p"));
  checkRange(QStringLiteral("repetitionPenalty"), kRepetition, tr("Repetition penalty"));
  if (values.contains(QStringLiteral("topK"))) {
    const std::optional<qint64> k = parseInteger(values.value(QStringLiteral("topK")));
    if (!k || *k < 0 || *k > kTopK.hi)
      errors.insert(QStringLiteral("topK"),
                    tr("Top-k must be a whole number from 0 (off) to %1.").arg(static_cast<int>(kTopK.hi)));
  }
  if (values.contains(QStringLiteral("maxTokens"))) {
    const std::optional<qint64> n = parseInteger(values.value(QStringLiteral("maxTokens")));
    if (!n || *n < 1 || *n > kMaxTokensLimit)
      errors.insert(QStringLiteral("maxTokens"),
                    tr("Max tokens must be a whole number from 1 to %1.").arg(kMaxTokensLimit));
  }
  if (values.contains(QStringLiteral("reasoning")) &&
      !pagedchat::is_reasoning_choice(values.value(QStringLiteral("reasoning")).toString().toStdString()))
    errors.insert(QStringLiteral("reasoning"), tr("Reasoning must be on, off, low, medium, high or empty."));
  if (values.contains(QStringLiteral("tools")) && !isBool(values.value(QStringLiteral("tools"))))
    errors.insert(QStringLiteral("tools"), tr("Tools must be on or off."));
  if (values.contains(QStringLiteral("tintDrafts")) && !isBool(values.value(QStringLiteral("tintDrafts"))))
    errors.insert(QStringLiteral("tintDrafts"), tr("Tinting draft text must be on or off."));
  if (values.contains(QStringLiteral("drafts")) &&
      !draftChoices().contains(values.value(QStringLiteral("drafts")).toString()))
    errors.insert(QStringLiteral("drafts"), tr("Draft tokens must be auto, mtp, draft, ngram or off."));
  if (values.contains(QStringLiteral("speculative"))) {  // the on/off switch of earlier versions
    const QVariant t = values.value(QStringLiteral("speculative"));
    const QString text = t.toString();
    if (t.typeId() != QMetaType::Bool && text != QLatin1String("true") && text != QLatin1String("false"))
      errors.insert(QStringLiteral("speculative"), tr("Speculative decoding must be on or off."));
  }
  if (values.contains(QStringLiteral("seed"))) {
    const QString s = values.value(QStringLiteral("seed")).toString();
    if (!isRandomSeed(s)) {
      const std::optional<qint64> n = parseInteger(s);
      if (!n || *n < 0)
        errors.insert(QStringLiteral("seed"), tr("Seed must be \"random\" or a whole number of 0 or more."));
    }
  }
  return errors;
}

QVariantMap PaneSettings::apply(const QVariantMap& values) {
  const QVariantMap errors = validate(values);
  if (!errors.isEmpty()) return errors;
  const QVariantMap old = toMap();
  assign(values);
  // A field set to its default follows the model again; any other value is the user's.
  const QVariantMap base = defaults();
  for (const QString& key : kSamplingFields) {
    if (!values.contains(key)) continue;
    if (sameValue(toMap().value(key), base.value(key)))
      customized_.remove(key);
    else
      customized_.insert(key);
  }
  if (toMap() != old) emit changed();
  return {};
}

void PaneSettings::assign(const QVariantMap& values) {
  const bool wasBlocked = blockSignals(true);  // one changed() for the whole set
  if (values.contains(QStringLiteral("systemPrompt")))
    setSystemPrompt(values.value(QStringLiteral("systemPrompt")).toString());
  if (values.contains(QStringLiteral("temperature")))
    setTemperature(*parseNumber(values.value(QStringLiteral("temperature"))));
  if (values.contains(QStringLiteral("topP"))) setTopP(*parseNumber(values.value(QStringLiteral("topP"))));
  if (values.contains(QStringLiteral("topK")))
    setTopK(static_cast<int>(*parseInteger(values.value(QStringLiteral("topK")))));
  if (values.contains(QStringLiteral("minP"))) setMinP(*parseNumber(values.value(QStringLiteral("minP"))));
  if (values.contains(QStringLiteral("repetitionPenalty")))
    setRepetitionPenalty(*parseNumber(values.value(QStringLiteral("repetitionPenalty"))));
  if (values.contains(QStringLiteral("maxTokens")))
    setMaxTokens(static_cast<int>(*parseInteger(values.value(QStringLiteral("maxTokens")))));
  if (values.contains(QStringLiteral("seed"))) setSeed(values.value(QStringLiteral("seed")).toString());
  if (values.contains(QStringLiteral("reasoning"))) setReasoning(values.value(QStringLiteral("reasoning")).toString());
  if (values.contains(QStringLiteral("tools"))) setTools(values.value(QStringLiteral("tools")).toBool());
  if (values.contains(QStringLiteral("tintDrafts"))) setTintDrafts(values.value(QStringLiteral("tintDrafts")).toBool());
  if (values.contains(QStringLiteral("toolChoice")))
    setToolChoice(values.value(QStringLiteral("toolChoice")).toString());
  if (values.contains(QStringLiteral("drafts")))
    setDrafts(values.value(QStringLiteral("drafts")).toString());
  else if (values.contains(QStringLiteral("speculative")))
    setDrafts(values.value(QStringLiteral("speculative")).toBool() ? QStringLiteral("auto") : QStringLiteral("off"));
  if (values.contains(QStringLiteral("toolServersOff")))
    setToolServersOff(values.value(QStringLiteral("toolServersOff")).toStringList());
  blockSignals(wasBlocked);
}

void PaneSettings::reset(bool includingPrompt) {
  QVariantMap map = defaults();
  map.insert(QStringLiteral("seed"), QStringLiteral("random"));
  map.insert(QStringLiteral("reasoning"), QString());  // the model's default
  if (includingPrompt) map.insert(QStringLiteral("systemPrompt"), QString());
  apply(map);
  customized_.clear();
}

QVariantMap PaneSettings::defaults() const {
  const PaneSettings app;
  QVariantMap map;
  const QVariantMap appMap = app.toMap();
  for (const QString& key : kSamplingFields) map.insert(key, modelDefaults_.value(key, appMap.value(key)));
  return map;
}

void PaneSettings::setModelDefaults(const QVariantMap& suggested) {
  QVariantMap defaults = suggested;
  // The model's numbers within the settings' ranges (a file's top_k of 10^12 is "all").
  const auto clampDouble = [&](const QString& key, Range r) {
    if (const auto v = parseNumber(defaults.value(key)); defaults.contains(key))
      v ? void(defaults.insert(key, qBound(r.lo, *v, r.hi))) : void(defaults.remove(key));
  };
  const auto clampInt = [&](const QString& key, qint64 lo, qint64 hi) {
    if (const auto v = parseInteger(defaults.value(key)); defaults.contains(key))
      v ? void(defaults.insert(key, int(qBound(lo, *v, hi)))) : void(defaults.remove(key));
  };
  clampDouble(QStringLiteral("temperature"), kTemperature);
  clampDouble(QStringLiteral("topP"), kTopP);
  clampInt(QStringLiteral("topK"), 0, qint64(kTopK.hi));
  clampDouble(QStringLiteral("minP"), kMinP);
  clampDouble(QStringLiteral("repetitionPenalty"), kRepetition);
  clampInt(QStringLiteral("maxTokens"), 1, kMaxTokensLimit);
  const bool choicesChanged = reasoningChoices() != defaults.value(QStringLiteral("reasoningChoices")).toStringList();
  modelDefaults_ = defaults;
  QVariantMap follow = this->defaults();
  for (const QString& key : std::as_const(customized_)) follow.remove(key);
  const QVariantMap old = toMap();
  assign(follow);
  if (choicesChanged || toMap() != old) emit changed();
}

QStringList PaneSettings::samplingFields() { return kSamplingFields; }

QStringList PaneSettings::customized() const {
  QStringList list;
  for (const QString& key : kSamplingFields)
    if (customized_.contains(key)) list.append(key);
  return list;
}

QVariantMap PaneSettings::toMap() const {
  QVariantMap map = {{QStringLiteral("systemPrompt"), systemPrompt_},
                     {QStringLiteral("temperature"), temperature_},
                     {QStringLiteral("topP"), topP_},
                     {QStringLiteral("topK"), topK_},
                     {QStringLiteral("minP"), minP_},
                     {QStringLiteral("repetitionPenalty"), repetitionPenalty_},
                     {QStringLiteral("maxTokens"), maxTokens_},
                     {QStringLiteral("seed"), seed_},
                     {QStringLiteral("reasoning"), reasoning_},
                     {QStringLiteral("tools"), tools_},
                     {QStringLiteral("drafts"), drafts_},
                     {QStringLiteral("tintDrafts"), tintDrafts_},
                     {QStringLiteral("toolChoice"), toolChoice_},

                     {QStringLiteral("customized"), customized()}};
  // Only when some are off (pagedchat.ini then lists them; an empty list would read @Invalid()).
  if (!toolServersOff_.isEmpty()) map.insert(QStringLiteral("toolServersOff"), toolServersOff_);
  return map;
}

void PaneSettings::fromMap(const QVariantMap& map) {
  QVariantMap valid;
  const QVariantMap errors = validate(map);
  for (auto it = map.cbegin(); it != map.cend(); ++it)
    if (!errors.contains(it.key())) valid.insert(it.key(), it.value());
  const QVariantMap old = toMap();
  assign(valid);
  customized_.clear();
  if (map.contains(QStringLiteral("customized"))) {
    for (const QString& key : map.value(QStringLiteral("customized")).toStringList())
      if (kSamplingFields.contains(key)) customized_.insert(key);
  } else {
    const QVariantMap app = PaneSettings().toMap();
    for (const QString& key : kSamplingFields)
      if (valid.contains(key) && !sameValue(toMap().value(key), app.value(key))) customized_.insert(key);
  }
  // Fields that follow the model take its current suggestion.
  QVariantMap follow = defaults();
  for (const QString& key : std::as_const(customized_)) follow.remove(key);
  assign(follow);
  if (toMap() != old) emit changed();
}

pagedchat::SamplingParams PaneSettings::samplingParams() const {
  pagedchat::SamplingParams p;
  p.temperature = static_cast<float>(temperature_);
  p.top_p = static_cast<float>(topP_);
  p.top_k = topK_;
  p.min_p = static_cast<float>(minP_);
  p.repetition_penalty = static_cast<float>(repetitionPenalty_);
  p.max_tokens = maxTokens_;
  if (seed_ != QLatin1String("random")) p.seed = seed_.toULongLong();
  p.output_kind = pagedchat::RequestOutputKind::kDelta;
  return p;
}
