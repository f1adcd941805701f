// BlockPool and KVCacheManager: allocation, reference counts, free queue, slot mapping.
#include <QtTest>

#include "engine/block_pool.h"
#include "engine/kv_cache_manager.h"

using namespace pagedchat;

class TestBlockPool : public QObject {
  Q_OBJECT
 private slots:
  void allocateAndFree() {
    BlockPool pool(4);
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

  void blocksFor() {
    KVCacheManager kv(10, 4);
    QCOMPARE(kv.blocks_for(0), 0);
    QCOMPARE(kv.blocks_for(1), 1);
    QCOMPARE(kv.blocks_for(4), 1);
    QCOMPARE(kv.blocks_for(5), 2);
  }
};

QTEST_GUILESS_MAIN(TestBlockPool)
#include "test_block_pool.moc"
