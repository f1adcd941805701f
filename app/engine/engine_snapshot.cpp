#include "app/engine/engine_snapshot.h"

#include <QHash>

#include "engine/llm_engine.h"

EngineSnapshot makeEngineSnapshot(const pagedchat::LLMEngine& engine, const QStringList& requestIds,
                                  const QStringList& serverIds) {
  EngineSnapshot snap;
  const pagedchat::EngineStats s = engine.stats();
  snap.numRunning = s.num_running;
  snap.numWaiting = s.num_waiting;
  snap.prefixCacheQueries = s.prefix_cache_queries;
  snap.prefixCacheHits = s.prefix_cache_hits;
  snap.numGenerationTokens = s.num_generation_tokens;
  snap.numPromptTokens = s.num_prompt_tokens;
  snap.numPreemptions = s.num_preemptions;
  snap.stateSlots = s.num_state_slots;
  snap.stateSlotsHeld = s.num_state_slots_held;
  snap.stateCheckpoints = s.num_state_checkpoints;

  QList<EngineRequestInfo> running, waiting;
  for (const QString& id : requestIds + serverIds) {
    const std::optional<pagedchat::RequestState> st = engine.request_state(id.toStdString());
    if (!st) continue;
    EngineRequestInfo info;
    info.requestId = id;
    info.running = st->status == pagedchat::RequestStatus::kRunning;
    info.promptTokens = st->num_prompt_tokens;
    info.computedTokens = st->num_computed_tokens;
    info.outputTokens = st->num_output_tokens;
    info.blocks = st->num_blocks;
    info.fromServer = serverIds.contains(id);
    (info.running ? running : waiting).append(info);
  }
  snap.requests = running + waiting;
  QHash<QString, int> indexOf;
  for (int i = 0; i < snap.requests.size(); ++i) indexOf.insert(snap.requests[i].requestId, i);

  const std::vector<pagedchat::KVBlockInfo> blocks = engine.kv_cache_snapshot();
  snap.totalBlocks = static_cast<int>(blocks.size());
  snap.blockOwner.resize(snap.totalBlocks);
  snap.blockFlags.resize(snap.totalBlocks);
  for (int b = 0; b < snap.totalBlocks; ++b) {
    const pagedchat::KVBlockInfo& info = blocks[static_cast<std::size_t>(b)];
    quint8 flags = 0;
    if (info.ref_count > 0 || info.null_block) {  // the null block (sliding windows): reserved, never free
      flags |= EngineSnapshot::kUsed;
      ++snap.usedBlocks;
      if (info.ref_count > 1) {
        flags |= EngineSnapshot::kShared;
        ++snap.sharedBlocks;
      }
    } else if (info.cached) {
      ++snap.cachedBlocks;
    } else {
      ++snap.freeBlocks;
    }
    if (info.cached) flags |= EngineSnapshot::kCached;
    int owner = -1;
    for (const std::string& id : info.request_ids) {
      owner = indexOf.value(QString::fromStdString(id), -1);
      if (owner >= 0) break;
    }
    snap.blockOwner[b] = owner;
    snap.blockFlags[b] = static_cast<char>(flags);
  }
  return snap;
}
