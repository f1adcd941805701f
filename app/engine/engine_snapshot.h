// makeEngineSnapshot(): the engine view's picture of an LLMEngine.
#pragma once

#include <QStringList>

#include "app/engine/request_delta.h"

namespace pagedchat {
class LLMEngine;
}

/// Builds an EngineSnapshot of `engine` (call on the thread that owns it): counters, one entry
/// per unfinished request among `requestIds` (the panes') and `serverIds` (the OpenAI server's,
/// marked fromServer) — running first, then waiting, each in the given order — and per KV block
/// its first running owner and flags. Cost O(blocks + running tokens).
EngineSnapshot makeEngineSnapshot(const pagedchat::LLMEngine& engine, const QStringList& requestIds,
                                  const QStringList& serverIds = {});
