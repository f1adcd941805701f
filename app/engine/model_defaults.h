// The loaded model's suggestions for the panes' settings, as the engine worker reports them.
#pragma once

#include <QVariantMap>

namespace pagedchat {
struct SamplingDefaults;
struct ReasoningControls;
}  // namespace pagedchat

/// The most tokens one request of the app may ask for: the pane settings' upper bound, and the
/// default limit of a model that reasons (below its context length).
inline constexpr int kMaxTokensLimit = 32768;

/// A model's suggestions keyed as the pane settings' fields (PaneSettings::setModelDefaults,
/// which clamps them to its ranges): from generation_config.json (`d`) temperature (0 when
/// do_sample is false), topP, topK, minP, repetitionPenalty, maxTokens, only those it sets. With
/// `reasoning` (the model's chat template): a model that reasons and sets no max_new_tokens gets
/// min(kMaxTokensLimit, `maxModelLen`) as maxTokens, since the 256-token default ends most replies
/// inside the thinking; "reasoningChoices" lists its template's choices (reasoning_choices()).
/// Never fails.
QVariantMap modelDefaultsMap(const pagedchat::SamplingDefaults& d,
                             const pagedchat::ReasoningControls* reasoning = nullptr, int maxModelLen = 0);
