// KV-cache groups and the sliding-window manager (vLLM v1's hybrid KV-cache manager): grouping of
// layers by spec (5:1 and 3:1 local:global, all full = one group), the tensors a layer uses, the
// release of blocks a sliding window has passed (exact boundary, freed blocks back in the pool,
// at most W / block_size + 2 blocks per sliding group however long the sequence), prefix-cache
// hits under a sliding window (only the blocks before the hit that the window reaches must be
// cached; a hit whose window blocks were evicted is shortened; the length all groups agree on),
// preemption and resume through the scheduler, n > 1 forks with copy-on-write in every group,
// the model runner's per-group tables, and the "bench memory" bound: a long sequence holds at
// most full_layers * L + sliding_layers * (W + block_size) tokens of K/V.
#include <QTest>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "engine/core/kv_cache_coordinator.h"
#include "engine/core/kv_cache_groups.h"
#include "engine/core/scheduler.h"
#include "engine/loader/random_model.h"
#include "engine/model/kv_cache.h"
#include "engine/model/model_runner.h"
#include "kernels/backend_factory.h"

using namespace pagedchat;

namespace {

constexpr int kNull = BlockPool::kNullBlock;

Request makeRequest(int num_tokens, int max_tokens = 4, std::string id = "r", uint64_t arrival = 0, int first = 1) {
  SamplingParams p;
  p.max_tokens = max_tokens;
  std::vector<int> ids(static_cast<std::size_t>(num_tokens));
  std::iota(ids.begin(), ids.end(), first);
  return Request(std::move(id), ids, p, arrival, nullptr);
}

// What the engine does after a forward: advance the computed tokens, append a "sampled" token.
void finishStep(Scheduler& s, const SchedulerOutput& out) {
  s.update_after_step(out);
  for (const auto& r : out.scheduled)
    if (r.samples) r.request->token_ids.push_back(1000 + r.request->num_output_tokens());
}

// Windows of a Gemma-3-like model: every `period`-th layer global (0), the others `window`.
std::vector<int> pattern(int layers, int period, int window) {
  std::vector<int> w(std::size_t(layers), window);
  for (int l = period - 1; l < layers; l += period) w[std::size_t(l)] = 0;
  return w;
}

int held(const std::vector<int>& table) {
  return int(std::count_if(table.begin(), table.end(), [](int b) { return b != kNull; }));
}

// One step's allocation for r as the engine does it: allocate, then the forward computes them.
void computeTokens(KVCacheCoordinator& kv, Request& r, int n) {
  QVERIFY(kv.allocate_slots(r, n));
  r.num_computed_tokens += n;
}

}  // namespace

class TestKVCacheGroups : public QObject {
  Q_OBJECT
 private slots:
  // 5 local : 1 global over 6 layers: group_size 1, the full group first.
  void groupsFiveToOne() {
    const KVCacheGroups g = KVCacheGroups::from_sliding_windows(pattern(6, 6, 512));
    QCOMPARE(g.group_size, 1);
    QCOMPARE(g.num_groups(), 6);
    QCOMPARE(g.groups[0].sliding_window, 0);
    QCOMPARE(g.groups[0].layers, std::vector<int>{5});
    for (int i = 1; i < 6; ++i) {
      QCOMPARE(g.groups[std::size_t(i)].sliding_window, 512);
      QCOMPARE(g.groups[std::size_t(i)].layers, std::vector<int>{i - 1});
    }
    QCOMPARE(g.layer_group, (std::vector<int>{1, 2, 3, 4, 5, 0}));
    QCOMPARE(g.layer_tensor, (std::vector<int>(6, 0)));
    QCOMPARE(g.num_sliding_layers(), 5);
    QCOMPARE(g.num_full_layers(), 1);
    QCOMPARE(QString::fromStdString(g.describe()),
             QStringLiteral("6 groups of 1 layer: 1 full attention, 5 sliding window 512"));

    // Twelve layers (two periods): groups of 2, the local layers round robin (vLLM's layers[i::n]).
    const KVCacheGroups g12 = KVCacheGroups::from_sliding_windows(pattern(12, 6, 512));
    QCOMPARE(g12.group_size, 2);
    QCOMPARE(g12.num_groups(), 6);
    QCOMPARE(g12.groups[0].layers, (std::vector<int>{5, 11}));
    QCOMPARE(g12.groups[1].layers, (std::vector<int>{0, 6}));
    QCOMPARE(g12.groups[5].layers, (std::vector<int>{4, 10}));
    QCOMPARE(g12.layer_group[6], 1);
    QCOMPARE(g12.layer_tensor[6], 1);
    QCOMPARE(g12.layer_tensor[11], 1);

    // Gemma 3 1B: 26 layers, 4 global, 22 local: 7 groups of 4, two of them short (padding).
    const KVCacheGroups gemma = KVCacheGroups::from_sliding_windows(pattern(26, 6, 512));
    QCOMPARE(gemma.group_size, 4);
    QCOMPARE(gemma.num_groups(), 7);
    QCOMPARE(gemma.groups[0].layers, (std::vector<int>{5, 11, 17, 23}));
    int local = 0;
    for (int i = 1; i < 7; ++i) local += int(gemma.groups[std::size_t(i)].layers.size());
    QCOMPARE(local, 22);
    QCOMPARE(int(gemma.groups[6].layers.size()), 3);
    QCOMPARE(QString::fromStdString(gemma.describe()),
             QStringLiteral("7 groups of 4 layers: 1 full attention, 6 sliding window 512 (2 padding layers)"));
    // Every layer in exactly one (group, tensor) place.
    std::vector<std::vector<int>> seen(7, std::vector<int>(4, -1));
    for (int l = 0; l < 26; ++l) {
      int& s = seen[std::size_t(gemma.layer_group[std::size_t(l)])][std::size_t(gemma.layer_tensor[std::size_t(l)])];
      QCOMPARE(s, -1);
      s = l;
    }
  }

  // 3 local : 1 global (Llama 4's pattern), and windows that differ.
  void groupsThreeToOneAndMixedWindows() {
    const KVCacheGroups g = KVCacheGroups::from_sliding_windows(pattern(8, 4, 128));
    QCOMPARE(g.group_size, 2);
    QCOMPARE(g.num_groups(), 4);
    QCOMPARE(g.groups[0].layers, (std::vector<int>{3, 7}));
    QCOMPARE(g.groups[1].layers, (std::vector<int>{0, 4}));
    QCOMPARE(g.groups[2].layers, (std::vector<int>{1, 5}));
    QCOMPARE(g.groups[3].layers, (std::vector<int>{2, 6}));

    // Counts within 1.5x of each other: the smaller kind is padded (gpt-oss: 12 + 13).
    std::vector<int> w(25, 0);
    for (int l = 0; l < 24; l += 2) w[std::size_t(l)] = 128;
    const KVCacheGroups close = KVCacheGroups::from_sliding_windows(w);
    QCOMPARE(close.group_size, 13);
    QCOMPARE(close.num_groups(), 2);
    QCOMPARE(int(close.groups[1].layers.size()), 12);

    // Two windows and global layers: one bucket per window, in order of appearance.
    const KVCacheGroups mixed = KVCacheGroups::from_sliding_windows({64, 32, 0, 64, 32, 0});
    QCOMPARE(mixed.num_groups(), 3);
    QCOMPARE(mixed.groups[0].sliding_window, 0);
    QCOMPARE(mixed.groups[1].sliding_window, 64);
    QCOMPARE(mixed.groups[2].sliding_window, 32);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, KVCacheGroups::from_sliding_windows({0, -1}));
  }

  // Every current model: one group of all layers, each layer its own tensor, bytes as before.
  void allFullIsOneGroup() {
    const KVCacheGroups g = KVCacheGroups::from_sliding_windows(std::vector<int>(5, 0));
    QCOMPARE(g.num_groups(), 1);
    QCOMPARE(g.group_size, 5);
    QCOMPARE(g.layer_tensor, (std::vector<int>{0, 1, 2, 3, 4}));
    QVERIFY(!g.has_sliding_window());
    QCOMPARE(QString::fromStdString(g.describe()), QStringLiteral("1 group of 5 layers: full attention"));
    QCOMPARE(g.max_blocks_per_request(100, 16, 512), 7LL);

    ModelConfig c;
    c.n_layers = 5;
    c.n_kv_heads = 2;
    c.head_dim = 8;
    QCOMPARE(KVCache::bytes_per_block(c, 16, kernels::KvDType::kFloat32), std::size_t(2 * 5 * 16 * 16 * 4));
    KVCache cache(c, 3, 16);
    QCOMPARE(cache.num_groups(), 1);
    for (int l = 0; l < 5; ++l) QCOMPARE(cache.group_of_layer(l), 0);
    QVERIFY(cache.key(0) != cache.key(1));
    QCOMPARE(cache.bytes(), std::size_t(3) * 2 * 5 * 16 * 16 * 4);

    // A sliding model: a block holds group_size layers; layers of different groups share tensors.
    c.n_layers = 6;
    c.layer_specs.assign(6, LayerSpec{});
    for (int l = 0; l < 5; ++l) c.layer_specs[std::size_t(l)].sliding_window = 64;
    QCOMPARE(KVCache::bytes_per_block(c, 16, kernels::KvDType::kFloat32), std::size_t(2 * 1 * 16 * 16 * 4));
    KVCache sliding(c, 4, 16);
    QCOMPARE(sliding.num_groups(), 6);
    QCOMPARE(sliding.group_of_layer(5), 0);
    QCOMPARE(sliding.group_of_layer(0), 1);
    QCOMPARE(sliding.key(0), sliding.key(5));  // tensor 0 of groups 1 and 0
    QCOMPARE(sliding.bytes(), std::size_t(4) * 2 * 16 * 16 * 4);
    // A request needs every block in the full group, the window's (plus the step's) in the others.
    const KVCacheGroups g6 = sliding.groups();
    QCOMPARE(g6.max_blocks_per_request(1000, 16, 16), 63LL + 5 * (5 + 1));
  }

  // Gemma 4's shape: local and global layers of different widths, and layers that read an earlier
  // layer's KV (shared_kv_layers). The shared layers own no tensor and no blocks: a block holds
  // only the distinct layers, and each shared layer points at its source's group and tensor.
  void sharedKvAndMixedWidths() {
    ModelConfig c;
    c.n_layers = 6;
    c.n_heads = 4;
    c.n_kv_heads = 1;
    c.head_dim = 64;  // global: 1 KV head of 64
    c.layer_specs.assign(6, LayerSpec{});
    for (int l : {0, 2, 4}) {  // local: 2 KV heads of 16, window 8
      c.layer_specs[std::size_t(l)].sliding_window = 8;
      c.layer_specs[std::size_t(l)].n_kv_heads = 2;
      c.layer_specs[std::size_t(l)].head_dim = 16;
    }
    c.layer_specs[4].kv_source_layer = 2;  // local reads local
    c.layer_specs[5].kv_source_layer = 3;  // global reads global
    QCOMPARE(c.kv_cache_width(), 64);
    const KVCacheGroups g = KVCacheGroups::of(c);
    // Owners: global 1, 3; local 0, 2 -> counts 2 and 2: one group each, two tensors.
    QCOMPARE(g.num_groups(), 2);
    QCOMPARE(g.group_size, 2);
    QCOMPARE(g.groups[0].layers, (std::vector<int>{1, 3}));
    QCOMPARE(g.groups[1].layers, (std::vector<int>{0, 2}));
    QCOMPARE(g.layer_group[4], g.layer_group[2]);
    QCOMPARE(g.layer_tensor[4], g.layer_tensor[2]);
    QCOMPARE(g.layer_group[5], g.layer_group[3]);
    QCOMPARE(g.layer_tensor[5], g.layer_tensor[3]);
    // A block: K and V of group_size (2) layers, rows of the widest layer (64 floats).
    QCOMPARE(KVCache::bytes_per_block(c, 16, kernels::KvDType::kFloat32), std::size_t(2 * 2 * 16 * 64 * 4));
    KVCache cache(c, 3, 16);
    QCOMPARE(cache.key(5), cache.key(3));
    QCOMPARE(cache.value(4), cache.value(2));

    // A source that is not an earlier layer with its own KV of the same kind is refused.
    ModelConfig bad = c;
    bad.layer_specs[5].kv_source_layer = 2;  // global reading a local layer
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, KVCacheGroups::of(bad));
    bad.layer_specs[5].kv_source_layer = 4;  // a layer that shares itself
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, KVCacheGroups::of(bad));
    bad = c;
    bad.layer_specs[3].kv_source_layer = 5;  // a later layer
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, KVCacheGroups::of(bad));
  }

  // The window's release, at the exact boundary: the first token to compute, at position n,
  // reads n - W + 1 .. n, so a block goes once its last position is below n - W + 1.
  void slidingReleasesAtTheBoundary() {
    const int W = 8, bs = 4;
    KVCacheCoordinator kv(KVCacheGroups::from_sliding_windows({0, W}), 64, bs, false);
    QCOMPARE(kv.num_groups(), 2);
    QCOMPARE(kv.num_blocks(), 63);  // block 0 is the null block
    QCOMPARE(kv.num_free_blocks(), 63);
    Request r = makeRequest(10);
    computeTokens(kv, r, 10);  // positions 0..9: 3 blocks in each group
    QCOMPARE(held(r.block_ids[1]), 3);
    r.token_ids.push_back(50);
    computeTokens(kv, r, 1);  // n = 10: token 10 reads 3..10; block 0 (0..3) stays
    QCOMPARE(r.block_ids[1][0] != kNull, true);
    r.token_ids.push_back(51);
    const int block0 = r.block_ids[1][0];
    const int free_before = kv.num_free_blocks();
    QVERIFY(kv.allocate_slots(r, 1));  // n = 11: token 11 reads 4..11; block 0 goes back
    r.num_computed_tokens += 1;
    QCOMPARE(r.block_ids[1][0], kNull);
    QCOMPARE(kv.pool().ref_count(block0), 0);
    QCOMPARE(kv.num_free_blocks(), free_before + 1);  // no new block needed: position 11 is in block 2
    QCOMPARE(held(r.block_ids[0]), 3);                // the full group keeps everything
    QCOMPARE(kv.num_request_blocks(r), 3 + 2);
    QCOMPARE(kv.num_blocks_in_use(0), 3);
    QCOMPARE(kv.num_blocks_in_use(1), 2);
    // The model runner's slots and tables: the null entry stands for the released block.
    QCOMPARE(kv.slot(r, 11, 1), int64_t(r.block_ids[1][2]) * bs + 3);
    kv.free(r);
    QCOMPARE(kv.num_free_blocks(), 63);
    QCOMPARE(kv.num_blocks_in_use(0), 0);
    QCOMPARE(kv.num_blocks_in_use(1), 0);
  }

  // A sequence far past the window: each sliding group holds at most W / bs + 2 blocks at every
  // step (chunked prefill: plus the chunk's), the full group all; every released block is free.
  void longSequenceHoldsTheWindow() {
    const int W = 16, bs = 4, chunk = 8;
    const KVCacheGroups groups = KVCacheGroups::from_sliding_windows(pattern(12, 6, W));  // 6 groups of 2
    KVCacheCoordinator kv(groups, 400, bs, true);
    Request r = makeRequest(200, 100);
    while (r.num_computed_tokens < r.num_tokens()) {
      const int n = std::min(chunk, r.num_tokens() - r.num_computed_tokens);
      computeTokens(kv, r, n);
      for (int g = 1; g < 6; ++g)
        QVERIFY2(held(r.block_ids[std::size_t(g)]) <= (W - 1 + n + bs - 1) / bs + 1, "prefill chunk");
    }
    for (int i = 0; i < 100; ++i) {
      r.token_ids.push_back(7);
      computeTokens(kv, r, 1);
      const int n = r.num_computed_tokens;
      QCOMPARE(held(r.block_ids[0]), (n + bs - 1) / bs);
      for (int g = 1; g < 6; ++g) {
        const auto& t = r.block_ids[std::size_t(g)];
        QVERIFY(held(t) <= W / bs + 2);
        QCOMPARE(int(t.size()), int(r.block_ids[0].size()));
        // Nulls exactly before the first block the next token's window reaches.
        const int first_needed = std::max(0, n - 1 - W + 1) / bs;
        for (int b = 0; b < int(t.size()); ++b) QCOMPARE(t[std::size_t(b)] == kNull, b < first_needed);
      }
      // "bench memory": K/V tokens held, per layer, within full * L + sliding * (W + bs).
      long long tokens = 0;
      for (int g = 0; g < 6; ++g)
        tokens += (long long)kv.num_blocks_in_use(g) * bs * int(groups.groups[std::size_t(g)].layers.size());
      const long long L = (n + bs - 1) / bs * bs;
      QVERIFY(tokens <= groups.num_full_layers() * L + groups.num_sliding_layers() * (W + bs));
    }
    // Accounting: the pool's free blocks are exactly those nobody holds.
    QCOMPARE(kv.num_free_blocks(), kv.num_blocks() - kv.num_request_blocks(r));
    kv.free(r);
    QCOMPARE(kv.num_free_blocks(), kv.num_blocks());
  }

  // Prefix caching: released window blocks stay registered; a hit needs only the
  // ceil((W - 1) / bs) blocks before it in a sliding group; evicting those shortens the hit.
  void slidingPrefixHits() {
    const int W = 8, bs = 4;  // a hit needs the 2 blocks before it
    KVCacheCoordinator kv(KVCacheGroups::from_sliding_windows({0, W}), 64, bs, true);
    Request a = makeRequest(48);  // 12 blocks
    computeTokens(kv, a, 48);
    const std::vector<int> a_sliding = a.block_ids[1];
    QCOMPARE(held(a_sliding), 12);  // released only at the next allocation
    a.token_ids.push_back(99);
    computeTokens(kv, a, 1);
    QCOMPARE(held(a.block_ids[1]), 2 + 1);        // blocks 10, 11 (positions 41..47 read by 48) and 12
    QCOMPARE(kv.pool().num_cached_blocks(), 24);  // the released ones are still registered
    kv.free(a);

    Request b = makeRequest(53);  // the same 48 tokens, then more
    for (int i = 48; i < 53; ++i) b.token_ids[std::size_t(i)] = 500 + i;
    auto hit = kv.get_computed_blocks(b);
    QCOMPARE(hit.num_tokens, 48);
    QCOMPARE(int(hit.block_ids.size()), 2);
    QCOMPARE(held(hit.block_ids[0]), 12);
    QCOMPARE(held(hit.block_ids[1]), 2);
    QCOMPARE(hit.block_ids[1][10], a_sliding[10]);
    QCOMPARE(hit.block_ids[1][11], a_sliding[11]);
    QCOMPARE(hit.block_ids[1][9], kNull);
    // An evicted block the window does not reach changes nothing.
    kv.pool().unregister_block(a_sliding[3]);
    QCOMPARE(kv.get_computed_blocks(b).num_tokens, 48);
    // Evicting block 11 of the sliding group: the latest point with 2 cached blocks before it is
    // after block 10 (blocks 9 and 10); the full group is cut to the same length.
    kv.pool().unregister_block(a_sliding[11]);
    hit = kv.get_computed_blocks(b);
    QCOMPARE(hit.num_tokens, 44);
    QCOMPARE(int(hit.block_ids[0].size()), 11);
    QCOMPARE(held(hit.block_ids[1]), 2);
    QCOMPARE(hit.block_ids[1][9], a_sliding[9]);
    QVERIFY(kv.allocate_slots(b, 53 - 44, &hit));
    QCOMPARE(b.num_computed_tokens, 44);
    QCOMPARE(kv.pool().ref_count(hit.block_ids[0][0]), 1);
    QCOMPARE(kv.pool().ref_count(a_sliding[10]), 1);
    b.num_computed_tokens = 53;
    kv.free(b);
    QCOMPARE(kv.num_free_blocks(), kv.num_blocks());

    // A run of cached blocks that reaches back to block 0 is a hit however short.
    KVCacheCoordinator kv2(KVCacheGroups::from_sliding_windows({0, 64}), 64, bs, true);
    Request c = makeRequest(9);
    computeTokens(kv2, c, 9);
    kv2.free(c);
    Request d = makeRequest(12);
    QCOMPARE(kv2.get_computed_blocks(d).num_tokens, 8);
  }

  // Two sliding windows and a full group: the hit length is the fixed point all agree on.
  void hitLengthAllGroupsAgreeOn() {
    const int bs = 4;
    KVCacheCoordinator kv(KVCacheGroups::from_sliding_windows({0, 5, 13}), 64, bs, true);  // need 1 and 3 blocks
    QCOMPARE(kv.num_groups(), 3);
    Request a = makeRequest(40);  // 10 blocks
    computeTokens(kv, a, 40);
    const std::vector<int> w5 = a.block_ids[1], w13 = a.block_ids[2];
    kv.free(a);
    Request b = makeRequest(41);
    QCOMPARE(kv.get_computed_blocks(b).num_tokens, 40);
    // W=13 loses block 8: its latest run of 3 ends after block 7 (blocks 5..7); W=5 agrees at 8
    // (block 7 cached); then W=5 loses block 5: W=5 still takes 8 (needs block 7 only), W=13 must
    // go back to 5 (blocks 2..4), and W=5 agrees (block 4).
    kv.pool().unregister_block(w13[8]);
    QCOMPARE(kv.get_computed_blocks(b).num_tokens, 32);
    kv.pool().unregister_block(w13[5]);
    auto hit = kv.get_computed_blocks(b);
    QCOMPARE(hit.num_tokens, 20);
    QCOMPARE(hit.block_ids[1][4], w5[4]);
    QCOMPARE(held(hit.block_ids[1]), 1);
    QCOMPARE(held(hit.block_ids[2]), 3);
    QCOMPARE(held(hit.block_ids[0]), 5);
    kv.pool().unregister_block(w5[4]);  // W=5 at 5 fails; at 4 needs block 3 (cached): W=13 at 4 needs 1..3
    QCOMPARE(kv.get_computed_blocks(b).num_tokens, 16);
  }

  // The scheduler over a small pool: requests far past the window preempt and resume, every
  // block comes back, and the held blocks never exceed the window's (plus the chunk's).
  void preemptionAndResume() {
    const int W = 8, bs = 4;
    KVCacheCoordinator kv(KVCacheGroups::from_sliding_windows({W, W, W, 0}), 1 + 30, bs, true);
    QCOMPARE(kv.num_groups(), 4);  // group_size 1: one full group, three sliding ones
    Scheduler s(SchedulerConfig{4, 16, 0, SchedulingPolicy::kFcfs}, kv);
    std::vector<Request> rs;
    rs.reserve(3);
    for (int i = 0; i < 3; ++i) rs.push_back(makeRequest(20, 24, "r" + std::to_string(i), uint64_t(i), 100 * i));
    for (auto& r : rs) s.add_request(&r);
    int steps = 0;
    long long preempted = 0;
    while (s.has_requests() && steps < 1000) {
      const SchedulerOutput out = s.schedule();
      preempted += int(out.preempted.size());
      for (const auto& sr : out.scheduled) {
        const Request& r = *sr.request;
        for (int g = 1; g < 4; ++g) {
          const int limit = (W - 1 + sr.num_new_tokens + bs - 1) / bs + 1;
          QVERIFY(held(r.block_ids[std::size_t(g)]) <= limit);
        }
        QCOMPARE(held(r.block_ids[0]), kv.blocks_for(r.num_computed_tokens + sr.num_new_tokens));
      }
      finishStep(s, out);
      for (auto& r : rs)
        if (r.status == RequestStatus::kRunning && r.num_output_tokens() >= 24) {
          s.finish_request(&r);
          r.status = RequestStatus::kFinished;
        }
      int held_total = 0;
      for (const Request* r : s.running()) held_total += kv.num_request_blocks(*r);
      QVERIFY(held_total <= kv.num_blocks());
      ++steps;
    }
    QVERIFY(!s.has_requests());
    QVERIFY(preempted > 0);  // 3 * (44 tokens' 11 full blocks + 3 * 3 window blocks) > 30
    for (const auto& r : rs) QCOMPARE(r.num_output_tokens(), 24);
    QCOMPARE(kv.num_free_blocks(), kv.num_blocks());
  }

  // n > 1: completions share every group's blocks; the partly filled one is copied in each group
  // on write; released window blocks drop the shared references one by one.
  void forkCopiesInEveryGroup() {
    const int W = 8, bs = 4;
    KVCacheCoordinator kv(KVCacheGroups::from_sliding_windows({0, W}), 64, bs, true);
    Request parent = makeRequest(14);  // blocks [0..3] [4..7] [8..11] [12 13 . .]
    computeTokens(kv, parent, 14);
    QCOMPARE(held(parent.block_ids[1]), 4);
    Request child = makeRequest(14);
    child.num_computed_tokens = 14;
    kv.fork(parent, child);
    for (int g = 0; g < 2; ++g)
      for (int b : parent.block_ids[std::size_t(g)]) QCOMPARE(kv.pool().ref_count(b), 2);
    child.token_ids.push_back(42);
    computeTokens(kv, child, 1);  // writes position 14, inside the shared block 3 of both groups
    auto copies = kv.take_pending_copies();
    QCOMPARE(int(copies.size()), 2);
    for (int g = 0; g < 2; ++g) {
      QCOMPARE(copies[std::size_t(g)].first, parent.block_ids[std::size_t(g)][3]);
      QCOMPARE(copies[std::size_t(g)].second, child.block_ids[std::size_t(g)][3]);
    }
    // The child's window (from 14 - 7 = 7) has left block 0 of the sliding group: released by it.
    QCOMPARE(child.block_ids[1][0], kNull);
    QCOMPARE(kv.pool().ref_count(parent.block_ids[1][0]), 1);
    QCOMPARE(kv.pool().ref_count(parent.block_ids[1][1]), 2);
    parent.token_ids.push_back(43);
    computeTokens(kv, parent, 1);  // sole owner of its block 3 now: no copy
    QVERIFY(kv.take_pending_copies().empty());
    QCOMPARE(kv.pool().ref_count(child.block_ids[1][1]), 2);  // both still read block 1 (7 .. 14)
    for (int i = 0; i < 12; ++i) {
      parent.token_ids.push_back(1);
      computeTokens(kv, parent, 1);
      child.token_ids.push_back(2);
      computeTokens(kv, child, 1);
    }
    QVERIFY(kv.take_pending_copies().empty());
    QCOMPARE(held(parent.block_ids[1]), held(child.block_ids[1]));
    QVERIFY(held(child.block_ids[1]) <= W / bs + 2);
    QCOMPARE(kv.pool().ref_count(parent.block_ids[0][0]), 2);  // the full group still shares the prompt
    kv.free(parent);
    kv.free(child);
    QCOMPARE(kv.num_free_blocks(), kv.num_blocks());
  }

  // The model runner fills every group's slots and tables (null entries where a window released
  // a block); group 0's are the batch's own fields; the forward runs on a sliding model.
  void modelRunnerTablesPerGroup() {
    LoadedModel m = make_random_model("random:stories260K,seed=3");
    m.config.layer_specs.assign(std::size_t(m.config.n_layers), LayerSpec{});
    for (int l = 0; l < m.config.n_layers; ++l) {
      m.config.layer_specs[std::size_t(l)].rope_theta = m.config.rope_theta;
      if (l != 2 && l != 4) m.config.layer_specs[std::size_t(l)].sliding_window = 8;
    }
    const KVCacheGroups groups = KVCacheGroups::of(m.config);  // full {2, 4}, sliding {0, 3}, {1} (+ padding)
    QCOMPARE(groups.num_groups(), 3);
    QCOMPARE(groups.groups[0].layers, (std::vector<int>{2, 4}));
    QCOMPARE(groups.groups[2].layers, (std::vector<int>{1}));
    const int bs = 4;
    KVCacheCoordinator kv(groups, 32, bs, false);
    Request a = makeRequest(20);
    Request b = makeRequest(3, 4, "b", 1);
    computeTokens(kv, a, 16);
    SchedulerOutput out;
    out.scheduled.push_back({&a, 4, true, {}});
    out.scheduled.push_back({&b, 3, true, {}});
    QVERIFY(kv.allocate_slots(a, 4));
    QVERIFY(kv.allocate_slots(b, 3));
    ModelRunner runner(m, kernels::make_backend({"cpu", 2}));
    const ForwardBatch fb = runner.build_batch(out, kv);
    QCOMPARE(fb.num_kv_groups(), 3);
    QCOMPARE(fb.max_blocks_per_seq, 5);
    for (int g = 0; g < 3; ++g) {
      QCOMPARE(fb.group_max_blocks_per_seq(g), 5);
      const auto& slot_map = fb.group_slot_mapping(g);
      QCOMPARE(int(slot_map.size()), 7);
      for (int t = 0; t < 4; ++t) QCOMPARE(slot_map[std::size_t(t)], kv.slot(a, 16 + t, g));
      for (int t = 0; t < 3; ++t) QCOMPARE(slot_map[std::size_t(4 + t)], kv.slot(b, t, g));
      const auto& tables = fb.group_block_tables(g);
      for (int i = 0; i < 5; ++i) QCOMPARE(tables[std::size_t(i)], a.block_ids[std::size_t(g)][std::size_t(i)]);
      QCOMPARE(tables[5], b.block_ids[std::size_t(g)][0]);
      for (int i = 6; i < 10; ++i) QCOMPARE(tables[std::size_t(i)], kNull);
    }
    QCOMPARE(fb.block_tables[0], a.block_ids[0][0]);  // full group 0: nothing released
    QCOMPARE(fb.group_block_tables(1)[1], kNull);     // 16 - 7 = 9: blocks 0 and 1 released
    QVERIFY(fb.group_block_tables(1)[2] != kNull);

    // The forward through the groups' tables (the cache: 2 tensors, shared by the groups).
    runner.allocate_kv_cache(32, bs, kernels::KvDType::kFloat32);
    QCOMPARE(runner.cache().num_groups(), 3);
    QCOMPARE(runner.cache().group_of_layer(1), 2);
    std::vector<float> logits;
    runner.execute(out, kv, logits);
    QCOMPARE(int(logits.size()), 2 * m.config.vocab_size);
    for (float x : logits) QVERIFY(std::isfinite(x));
  }
};

QTEST_GUILESS_MAIN(TestKVCacheGroups)
#include "test_kv_cache_groups.moc"
