// BlockPool and KVCacheManager: allocation, reference counts, LRU free queue, prefix-cache
// registration, eviction, collision safety, copy-on-write.
#include <QtTest>

#include "engine/core/block_pool.h"
#include "engine/core/kv_cache_manager.h"

using namespace pagedchat;

namespace {
BlockKey key(uint64_t parent, std::vector<int> ids, std::string salt = {}) { return BlockKey{parent, std::move(ids), std::move(salt)}; }

Request makeRequest(const std::vector<int>& ids, int max_tokens = 4) {
  SamplingParams p;
  p.max_tokens = max_tokens;
  return Request("r", ids, p, 0, nullptr);
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
    KVCacheManager kv(8, 4, true);
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
    QCOMPARE(b.block_ids.front(), a.block_ids.empty() ? hit.block_ids.front() : -1);
    Request c = makeRequest({1, 2, 3, 4, 9, 9, 9, 9, 9});
    auto hit_c = kv.get_computed_blocks(c);
    QCOMPARE(hit_c.num_tokens, 4);  // shares the first block only
    QVERIFY(kv.allocate_slots(c, 5, &hit_c));
    QCOMPARE(kv.pool().ref_count(c.block_ids[0]), 2);
    Request salted = makeRequest({1, 2, 3, 4, 5});
    salted.cache_salt = "user-2";
    QCOMPARE(kv.get_computed_blocks(salted).num_tokens, 0);
    kv.free(b);
    kv.free(c);
    QCOMPARE(kv.num_free_blocks(), 8);
  }

  // n > 1: completions share the prompt's blocks; the partly filled one is copied on write.
  void forkCopiesPartialBlockOnWrite() {
    KVCacheManager kv(8, 4, true);
    Request parent = makeRequest({1, 2, 3, 4, 5, 6});  // blocks: [1 2 3 4] [5 6 . .]
    QVERIFY(kv.allocate_slots(parent, 6));
    parent.num_computed_tokens = 6;
    Request child = makeRequest({1, 2, 3, 4, 5, 6});
    child.num_computed_tokens = 6;
    kv.fork(parent, child);
    QCOMPARE(kv.pool().ref_count(parent.block_ids[0]), 2);
    QCOMPARE(kv.pool().ref_count(parent.block_ids[1]), 2);
    child.token_ids.push_back(42);
    QVERIFY(kv.allocate_slots(child, 1));  // writes position 6, inside the shared block 1
    const auto copies = kv.take_pending_copies();
    QCOMPARE(copies.size(), size_t(1));
    QCOMPARE(copies[0].first, parent.block_ids[1]);
    QCOMPARE(copies[0].second, child.block_ids[1]);
    QVERIFY(child.block_ids[1] != parent.block_ids[1]);
    QCOMPARE(child.block_ids[0], parent.block_ids[0]);  // full block stays shared
    QCOMPARE(kv.pool().ref_count(parent.block_ids[1]), 1);
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
