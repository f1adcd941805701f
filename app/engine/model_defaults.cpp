#include "app/engine/model_defaults.h"

#include <QStringList>
#include <algorithm>
#include <limits>
#include <string_view>

#include "engine/sample/sampling_defaults.h"
#include "engine/text/reasoning_controls.h"

QVariantMap modelDefaultsMap(const pagedchat::SamplingDefaults& d, const pagedchat::ReasoningControls* reasoning,
                             int maxModelLen) {
  QVariantMap m;
  if (d.do_sample && !*d.do_sample)
    m.insert(QStringLiteral("temperature"), 0.0);
  else if (d.temperature)
    m.insert(QStringLiteral("temperature"), double(*d.temperature));
  if (d.top_p) m.insert(QStringLiteral("topP"), double(*d.top_p));
  if (d.top_k) m.insert(QStringLiteral("topK"), *d.top_k);
  if (d.min_p) m.insert(QStringLiteral("minP"), double(*d.min_p));
  if (d.repetition_penalty) m.insert(QStringLiteral("repetitionPenalty"), double(*d.repetition_penalty));
  if (d.max_new_tokens) m.insert(QStringLiteral("maxTokens"), *d.max_new_tokens);
  if (!reasoning) return m;
  if (reasoning->reasons && !m.contains(QStringLiteral("maxTokens")))
    m.insert(QStringLiteral("maxTokens"), std::clamp(maxModelLen, 1, kMaxTokensLimit));
  QStringList choices;
  for (std::string_view c : pagedchat::reasoning_choices(*reasoning))
    choices.append(QString::fromUtf8(c.data(), qsizetype(c.size())));
  m.insert(QStringLiteral("reasoningChoices"), choices);
  return m;
}
