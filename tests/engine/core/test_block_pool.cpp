// BlockPool and KVCacheCoordinator (one full-attention group): allocation, reference counts, LRU free queue,
// prefix-cache registration, eviction, collision safety, copy-on-write; blocks registered when allocated (shared within
// one step), and dropped when their request is freed before computing them.
#include <QTest>

#include "engine/core/block_pool.h"
#include "engine/core/kv_cache_coordinator.h"
#include "engine/core/scheduler.h"

using namespace pagedchat;

namespace {
BlockKey key(uint64_t parent, std::vector<int> ids, std::string salt = {}) {
  return BlockKey{parent, std::move(ids), std::move(salt), {}};
}

Request makeRequest(const std::vector<int>& ids, int max_tokens = 4, std::string id = "r", uint64_t arrival = 0) {
  SamplingParams p;
  p.max_tokens = max_tokens;
  return Request(std::move(id), ids, p, arrival, nullptr);
}

// What the engine does after a forward: advance the computed tokens, append a "sampled" token.
void finishStep(Scheduler& s, const SchedulerOutput& out) {
  s.update_after_step(out);
  for (const auto& r : out.scheduled)
    if (r.samples) r.request->token_ids.push_back(100 + r.request->num_output_tokens());
}
}  // namespace

class TestBlockPool : public QObject {
  Q_OBJECT
 private slots:
  void allocateAndFree() {
    BlockPool pool(4, false);
    QCOMPARE(pool.num_free_blocks(), 4);
    auto a = pool.allocate(3);
    QCOMPARE(int(a.size()), 3);
    QCOMPARE(pool.num_free_blocks(), 1);
    QVERIFY_THROWS_EXCEPTION(std::logic_error, pool.allocate(2));
    QCOMPARE(pool.num_free_blocks(), 1);
    pool.incref(a[0]);
    QCOMPARE(pool.ref_count(a[0]), 2);
    pool.free(a[0]);
    QCOMPARE(pool.num_free_blocks(), 1);  // still referenced once
    pool.free(a[0]);
    QCOMPARE(pool.num_free_blocks(), 2);
    QVERIFY_THROWS_EXCEPTION(std::logic_error, pool.free(a[0]));
    pool.free(a[1]);
    pool.free(a[2]);
    QCOMPARE(pool.num_free_blocks(), 4);
  }

  void hashDependsOnParentTokensAndSalt() {
    const uint64_t h = key(0, {1, 2, 3}).hash();
    QCOMPARE(key(0, {1, 2, 3}).hash(), h);
    QVERIFY(key(1, {1, 2, 3}).hash() != h);
    QVERIFY(key(0, {1, 2, 4}).hash() != h);
    QVERIFY(key(0, {1, 2, 3}, "salt").hash() != h);
    QVERIFY(key(0, {1, 2}).hash() != key(0, {1, 2, 0}).hash());
  }

  // Freed blocks keep their registration until reused, least recently freed last.
  void freedBlocksStayCachedUntilEvicted() {
    BlockPool pool(3, true);
    auto a = pool.allocate(3);
    for (int i = 0; i < 3; ++i) pool.register_block(a[i], key(0, {i}), key(0, {i}).hash());
    QCOMPARE(pool.num_cached_blocks(), 3);
    pool.free(a[1]);
    pool.free(a[0]);
    pool.free(a[2]);  // LRU order now: a1, a0, a2
    QCOMPARE(pool.num_free_blocks(), 3);
    QCOMPARE(pool.lookup(key(0, {0}), key(0, {0}).hash()).value_or(-1), a[0]);
    // Taking a hit back out of the free queue.
    pool.incref(a[0]);
    QCOMPARE(pool.num_free_blocks(), 2);
    // The next allocation evicts the least recently freed: a1.
    const int b = pool.allocate(1).front();
    QCOMPARE(b, a[1]);
    QVERIFY(!pool.lookup(key(0, {1}), key(0, {1}).hash()));
    QVERIFY(pool.lookup(key(0, {2}), key(0, {2}).hash()));
    QCOMPARE(pool.num_cached_blocks(), 2);
  }

  // A lookup with the right hash but another key is a miss (no silent wrong prefix).
  void collisionIsAMiss() {
    BlockPool pool(2, true);
    const int b = pool.allocate(1).front();
    pool.register_block(b, key(0, {7, 8}), 12345);
    QCOMPARE(pool.lookup(key(0, {7, 8}), 12345).value_or(-1), b);
    QVERIFY(!pool.lookup(key(0, {7, 9}), 12345));
  }

  void cachingOffRegistersNothing() {
    BlockPool pool(2, false);
    const int b = pool.allocate(1).front();
    pool.register_block(b, key(0, {1}), key(0, {1}).hash());
    QCOMPARE(pool.num_cached_blocks(), 0);
    QVERIFY(!pool.lookup(key(0, {1}), key(0, {1}).hash()));
  }

  void prefixHitsLeaveOneTokenToCompute() {
    KVCacheCoordinator kv(8, 4, true);
    Request a = makeRequest({1, 2, 3, 4, 5, 6, 7, 8});  // exactly two full blocks
    QVERIFY(kv.allocate_slots(a, 8));
    a.num_computed_tokens = 8;
    kv.cache_blocks(a, 8);
    QCOMPARE(kv.pool().num_cached_blocks(), 2);
    kv.free(a);
    QCOMPARE(kv.num_free_blocks(), 8);

    Request b = makeRequest({1, 2, 3, 4, 5, 6, 7, 8});
    auto hit = kv.get_computed_blocks(b);
    QCOMPARE(hit.num_tokens, 4);  // not 8: the last token must be computed for its logits
    QVERIFY(kv.allocate_slots(b, 4, &hit));
    QCOMPARE(b.num_computed_tokens, 4);
    QCOMPARE(b.block_ids[0].front(), a.block_ids.empty() ? hit.block_ids[0].front() : -1);
    Request c = makeRequest({1, 2, 3, 4, 9, 9, 9, 9, 9});
    auto hit_c = kv.get_computed_blocks(c);
    QCOMPARE(hit_c.num_tokens, 4);  // shares the first block only
    QVERIFY(kv.allocate_slots(c, 5, &hit_c));
    QCOMPARE(kv.pool().ref_count(c.block_ids[0][0]), 2);
    Request salted = makeRequest({1, 2, 3, 4, 5});
    salted.cache_salt = "user-2";
    QCOMPARE(kv.get_computed_blocks(salted).num_tokens, 0);
    kv.free(b);
    kv.free(c);
    QCOMPARE(kv.num_free_blocks(), 8);
  }

  // Blocks are registered when allocated, for the tokens about to be computed: a second request
  // with the same prompt shares them before the first has computed them (same step).
  void registeredAtAllocation() {
    KVCacheCoordinator kv(8, 4, true);
    Request a = makeRequest({1, 2, 3, 4, 5, 6, 7, 8, 9});  // two full blocks and one token
    QVERIFY(kv.allocate_slots(a, 9));
    QCOMPARE(kv.pool().num_cached_blocks(), 2);  // full once these 9 tokens are computed
    QCOMPARE(a.num_cached_blocks, 2);
    Request b = makeRequest({1, 2, 3, 4, 5, 6, 7, 8, 9});
    auto hit = kv.get_computed_blocks(b);
    QCOMPARE(hit.num_tokens, 8);
    QVERIFY(kv.allocate_slots(b, 1, &hit));
    QCOMPARE(b.num_computed_tokens, 8);
    QCOMPARE(kv.pool().ref_count(a.block_ids[0][0]), 2);
    QCOMPARE(kv.pool().ref_count(a.block_ids[0][1]), 2);
    QVERIFY(b.block_ids[0][2] != a.block_ids[0][2]);  // its own last block
    QCOMPARE(kv.num_free_blocks(), 8 - 4);
    // Freeing `a` before its step ran would leave `b` reading K/V nobody writes: refused.
    QVERIFY_THROWS_EXCEPTION(std::logic_error, kv.free(a));
    QCOMPARE(int(a.block_ids[0].size()), 3);  // unchanged
    a.num_computed_tokens = 9;                // the step ran
    b.num_computed_tokens = 9;
    kv.free(a);
    QCOMPARE(kv.pool().num_cached_blocks(), 2);
    QCOMPARE(kv.pool().ref_count(b.block_ids[0][0]), 1);
    kv.free(b);
    QCOMPARE(kv.num_free_blocks(), 8);
    QCOMPARE(kv.pool().num_cached_blocks(), 2);  // kept for later requests

    KVCacheCoordinator off(8, 4, false);
    Request c = makeRequest({1, 2, 3, 4, 5, 6, 7, 8, 9});
    QVERIFY(off.allocate_slots(c, 9));
    QCOMPARE(off.pool().num_cached_blocks(), 0);
    QCOMPARE(c.num_cached_blocks, 0);
  }

  // Chunked prefill: only the blocks full after the scheduled chunk are registered.
  void registersOnlyBlocksFullAfterChunk() {
    KVCacheCoordinator kv(8, 4, true);
    Request a = makeRequest({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
    QVERIFY(kv.allocate_slots(a, 6));  // positions 0..5: block 0 full, block 1 half
    QCOMPARE(kv.pool().num_cached_blocks(), 1);
    a.num_computed_tokens = 6;
    QVERIFY(kv.allocate_slots(a, 5));  // 6..10: block 1 full, block 2 not
    QCOMPARE(kv.pool().num_cached_blocks(), 2);
    a.num_computed_tokens = 11;
    kv.free(a);
    QCOMPARE(kv.pool().num_cached_blocks(), 2);
  }

  // A request freed (preempted, aborted) before the step that would compute its registered
  // blocks ran: those registrations are dropped, the computed ones kept.
  void freedBeforeComputeDropsRegistration() {
    KVCacheCoordinator kv(8, 4, true);
    Request a = makeRequest({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13});
    QVERIFY(kv.allocate_slots(a, 4));
    a.num_computed_tokens = 4;         // block 0 computed
    QVERIFY(kv.allocate_slots(a, 8));  // blocks 1, 2 registered for a step that will not run
    QCOMPARE(kv.pool().num_cached_blocks(), 3);
    kv.free(a);  // still num_computed_tokens = 4
    QCOMPARE(kv.pool().num_cached_blocks(), 1);
    QCOMPARE(kv.num_free_blocks(), 8);
    Request b = makeRequest({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13});
    QCOMPARE(kv.get_computed_blocks(b).num_tokens, 4);  // not 12: blocks 1, 2 hold nothing
  }

  // The scheduler: identical prompts added before one schedule() share the first one's blocks
  // in that step; the step's tokens are the prompt once plus one last block's tail per copy.
  void schedulerSharesWithinStep() {
    KVCacheCoordinator kv(16, 4, true);
    Scheduler s(SchedulerConfig{8, 64, 0, SchedulingPolicy::kFcfs}, kv);
    const std::vector<int> prompt = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};  // 2 full blocks + 2
    std::vector<Request> rs;
    rs.reserve(4);
    for (int i = 0; i < 4; ++i) rs.push_back(makeRequest(prompt, 4, "r" + std::to_string(i), uint64_t(i)));
    for (auto& r : rs) s.add_request(&r);
    const SchedulerOutput out = s.schedule();
    QCOMPARE(int(out.scheduled.size()), 4);
    QCOMPARE(out.total_num_scheduled_tokens, 10 + 3 * 2);
    for (int i = 1; i < 4; ++i) {
      QCOMPARE(out.scheduled[size_t(i)].num_new_tokens, 2);
      QCOMPARE(rs[size_t(i)].num_computed_tokens, 8);
      QVERIFY(out.scheduled[size_t(i)].samples);
    }
    QCOMPARE(kv.pool().ref_count(rs[0].block_ids[0][0]), 4);
    QCOMPARE(kv.num_free_blocks(), 16 - 3 - 3);
    finishStep(s, out);
    for (auto& r : rs) s.finish_request(&r);
    QCOMPARE(kv.num_free_blocks(), 16);
  }

  // A request that registered blocks for this step and is then preempted while the same step is
  // built (priority policy: a later, more urgent request needs its blocks): its uncomputed
  // blocks leave the prefix cache, so no later request takes K/V that were never written.
  void preemptedWhileSchedulingDropsRegistration() {
    KVCacheCoordinator kv(4, 4, true);
    Scheduler s(SchedulerConfig{8, 64, 4, SchedulingPolicy::kPriority}, kv);
    Request low = makeRequest({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 4, "low", 0);
    low.priority = 10;
    s.add_request(&low);
    finishStep(s, s.schedule());  // low: 0..3 (block 0)
    Request high = makeRequest({50, 51, 52, 53}, 4, "high", 1);
    s.add_request(&high);
    finishStep(s, s.schedule());  // low: 4..7 (block 1); high: its prompt (1 block), samples
    QCOMPARE(kv.num_free_blocks(), 1);
    QCOMPARE(kv.pool().num_cached_blocks(), 3);
    // low takes the last free block for 8..11 (registering it), then high needs a block for its
    // decode: low is the victim, already scheduled in this step.
    const SchedulerOutput out = s.schedule();
    QCOMPARE(int(out.preempted.size()), 1);
    QCOMPARE(out.preempted[0], &low);
    QCOMPARE(int(out.scheduled.size()), 1);
    QCOMPARE(out.scheduled[0].request, &high);
    QCOMPARE(kv.pool().num_cached_blocks(), 3);  // low's blocks 0, 1 (computed) and high's block 0
    Request probe = makeRequest({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}, 4, "probe", 2);
    QCOMPARE(kv.get_computed_blocks(probe).num_tokens, 8);  // not 12
    finishStep(s, out);
    s.finish_request(&high);
    s.remove_request(&low);
    QCOMPARE(kv.num_free_blocks(), 4);
  }

  // n > 1: completions share the prompt's blocks; the partly filled one is copied on write.
  void forkCopiesPartialBlockOnWrite() {
    KVCacheCoordinator kv(8, 4, true);
    Request parent = makeRequest({1, 2, 3, 4, 5, 6});  // blocks: [1 2 3 4] [5 6 . .]
    QVERIFY(kv.allocate_slots(parent, 6));
    parent.num_computed_tokens = 6;
    Request child = makeRequest({1, 2, 3, 4, 5, 6});
    child.num_computed_tokens = 6;
    kv.fork(parent, child);
    QCOMPARE(kv.pool().ref_count(parent.block_ids[0][0]), 2);
    QCOMPARE(kv.pool().ref_count(parent.block_ids[0][1]), 2);
    child.token_ids.push_back(42);
    QVERIFY(kv.allocate_slots(child, 1));  // writes position 6, inside the shared block 1
    const auto copies = kv.take_pending_copies();
    QCOMPARE(copies.size(), size_t(1));
    QCOMPARE(copies[0].first, parent.block_ids[0][1]);
    QCOMPARE(copies[0].second, child.block_ids[0][1]);
    QVERIFY(child.block_ids[0][1] != parent.block_ids[0][1]);
    QCOMPARE(child.block_ids[0][0], parent.block_ids[0][0]);  // full block stays shared
    QCOMPARE(kv.pool().ref_count(parent.block_ids[0][1]), 1);
    parent.token_ids.push_back(43);
    QVERIFY(kv.allocate_slots(parent, 1));  // now sole owner: no copy
    QVERIFY(kv.take_pending_copies().empty());
    kv.free(parent);
    kv.free(child);
    QCOMPARE(kv.num_free_blocks(), 8);
  }
};

QTEST_GUILESS_MAIN(TestBlockPool)
#include "test_block_pool.moc"
