// Device selection (EngineConfig::device, kernels/backend_factory.h) on any machine: the forms
// accepted and refused, "auto" falling back to the CPU and saying so, "cuda" without a GPU (or
// without the CUDA library) as a clear error; the backend memory interface of the CPU backend;
// and the load-time check that catches a backend whose results are wrong.
#include <QTest>

#include <cstring>
#include <stdexcept>

#include "engine/llm.h"
#include "engine/model/backend_check.h"
#include "engine_test_utils.h"
#include "kernels/backend_factory.h"

using namespace pagedchat;

namespace {

// The CPU backend with its attention off by 2 %: what a subtly broken GPU kernel looks like.
class SkewedBackend final : public kernels::Backend {
 public:
  /// Attention output times `factor`; with `onlyBf16Cache`, only over a bfloat16 KV cache.
  explicit SkewedBackend(float factor = 1.02f, bool onlyBf16Cache = false)
      : cpu_(kernels::make_cpu_backend(1)), factor_(factor), onlyBf16Cache_(onlyBf16Cache) {}
  const char* name() const override { return "skewed"; }
  int num_threads() const override { return 1; }
  void embedding(float* out, const void* table, kernels::DType dtype, const int* ids, int T, int dim) override {
    cpu_->embedding(out, table, dtype, ids, T, dim);
  }
  void rms_norm(float* out, const float* x, const float* w, int T, int dim, float eps) override {
    cpu_->rms_norm(out, x, w, T, dim, eps);
  }
  void matmul(float* out, const float* x, const float* w, int T, int n, int k) override {
    cpu_->matmul(out, x, w, T, n, k);
  }
  void rotary_embedding(float* q, float* k, const int* pos, int T, int h, int kvh,
                        const kernels::RopeSpec& r) override {
    cpu_->rotary_embedding(q, k, pos, T, h, kvh, r);
  }
  void reshape_and_cache(const float* k, const float* v, void* kc, void* vc, kernels::KvDType t, const int64_t* s,
                         int T, int w) override {
    cpu_->reshape_and_cache(k, v, kc, vc, t, s, T, w);
  }
  void paged_attention(float* out, const float* q, const void* kc, const void* vc, kernels::KvDType t,
                       const kernels::AttentionMetadata& m, const kernels::AttentionSpec& spec) override {
    cpu_->paged_attention(out, q, kc, vc, t, m, spec);
    const int h = spec.n_heads, hd = spec.head_dim;
    if (onlyBf16Cache_ && t != kernels::KvDType::kBFloat16) return;
    const int T = m.query_start_loc[m.num_requests];
    for (int64_t i = 0; i < int64_t(T) * h * hd; ++i) out[i] *= factor_;
  }
  void silu_and_mul(float* out, const float* g, const float* u, int T, int hidden) override {
    cpu_->silu_and_mul(out, g, u, T, hidden);
  }
  void add(float* x, const float* y, int64_t n) override { cpu_->add(x, y, n); }

 private:
  std::unique_ptr<kernels::Backend> cpu_;
  float factor_;
  bool onlyBf16Cache_;
};

}  // namespace

class TestDevice : public QObject {
  Q_OBJECT
 private slots:
  void parseDevice() {
    using K = kernels::DeviceSpec::Kind;
    QVERIFY(kernels::parse_device("cpu").kind == K::kCpu);
    QVERIFY(kernels::parse_device("auto").kind == K::kAuto);
    QVERIFY(kernels::parse_device("cuda").kind == K::kCuda);
    QCOMPARE(kernels::parse_device("cuda").index, 0);
    QCOMPARE(kernels::parse_device("cuda:3").index, 3);
    for (const char* bad : {"", "gpu", "CUDA", "cuda:", "cuda:-1", "cuda:x", "cuda:0:1", "cuda:123456", " cpu"}) {
      try {
        kernels::parse_device(bad);
        QFAIL(qPrintable(QString("accepted '%1'").arg(bad)));
      } catch (const std::invalid_argument& e) {
        QVERIFY2(std::strstr(e.what(), "cuda:N") != nullptr, e.what());
      }
    }
  }

  void cpuAndAuto() {
    auto cpu = kernels::make_backend({"cpu", 1});
    QCOMPARE(std::string(cpu->name()), std::string("cpu"));
    QVERIFY(cpu->description().rfind("cpu ", 0) == 0);
    std::string note;
    auto a = kernels::make_backend({"auto", 1}, &note);
    QVERIFY2(note.rfind("device auto: ", 0) == 0, note.c_str());
    std::string why;
    if (kernels::cuda_device_count(&why) == 0) {
      QCOMPARE(std::string(a->name()), std::string("cpu"));
      QVERIFY2(note.find("no CUDA") != std::string::npos, note.c_str());
      QVERIFY(!why.empty());
    } else {
      QCOMPARE(std::string(a->name()), std::string("cuda"));
    }
  }

  // No GPU (or no CUDA library): "cuda" is an error that says why, from the factory and the engine.
  void cudaWithoutGpuIsAClearError() {
    std::string why;
    if (kernels::cuda_device_count(&why) > 0) QSKIP("a CUDA device is present: nothing to refuse");
    qInfo("CUDA unavailable here: %s", why.c_str());
    for (const char* d : {"cuda", "cuda:1"}) {
      try {
        kernels::make_backend({d, 1});
        QFAIL("no error");
      } catch (const std::runtime_error& e) {
        QVERIFY2(std::strstr(e.what(), "not available") && std::strstr(e.what(), why.c_str()), e.what());
      }
    }
    EngineConfig c = testutil::storiesConfig();
    c.device = "cuda";
    try {
      LLMEngine engine(c);
      QFAIL("the engine started on a missing GPU");
    } catch (const std::runtime_error& e) {
      QVERIFY2(std::strstr(e.what(), "device cuda is not available"), e.what());
    }
  }

  void engineRefusesBadDeviceSettings() {
    EngineConfig c = testutil::storiesConfig();
    c.device = "tpu";
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, LLMEngine{c});
    c.device = "cpu";
    for (double u : {0.0, -0.5, 1.5}) {
      c.gpu_memory_utilization = u;
      try {
        LLMEngine engine(c);
        QFAIL("accepted");
      } catch (const std::invalid_argument& e) {
        QVERIFY2(std::strstr(e.what(), "gpu_memory_utilization"), e.what());
      }
    }
  }

  // "auto" without a GPU runs on the CPU: the same greedy tokens as "cpu".
  void autoRunsOnTheCpu() {
    if (kernels::cuda_device_count() > 0) QSKIP("a CUDA device is present (test_cuda_golden covers it)");
    REQUIRE_MODEL_FILE(testpaths::stories260K() + "/stories260K.bin");
    EngineConfig c = testutil::storiesConfig();
    LLM cpu(c);
    c.device = "auto";
    LLM autodev(c);
    QVERIFY(autodev.engine().backend_name().rfind("cpu ", 0) == 0);
    QVERIFY(autodev.engine().warnings().empty());
    const auto a = cpu.generate({"Once upon a time"}, testutil::greedy(20))[0].outputs[0].token_ids;
    const auto b = autodev.generate({"Once upon a time"}, testutil::greedy(20))[0].outputs[0].token_ids;
    QCOMPARE(a, b);
  }

  // The CPU backend's memory: zero-filled, copies both ways, place() without a copy.
  void cpuBackendMemory() {
    auto be = kernels::make_cpu_backend(1);
    auto buf = be->allocate(1000);
    QVERIFY(buf->bytes() >= 1000);
    QVERIFY(reinterpret_cast<std::uintptr_t>(buf->data()) % 64 == 0);
    const auto* p = static_cast<const unsigned char*>(buf->data());
    for (int i = 0; i < 1000; ++i) QCOMPARE(int(p[i]), 0);
    std::vector<int> in(250), out(250);
    for (int i = 0; i < 250; ++i) in[i] = i * 3 - 7;
    be->copy_to_backend(buf->data(), in.data(), 1000);
    be->copy_to_host(out.data(), buf->data(), 1000);
    QCOMPARE(out, in);
    std::unique_ptr<kernels::Buffer> holder;
    QCOMPARE(be->place(in.data(), 1000, holder), static_cast<const void*>(in.data()));
    QVERIFY(!holder);
    std::size_t f = 0, t = 0;
    QVERIFY(!be->device_memory_info(&f, &t));
  }

  // The load-time check: the CPU agrees with itself; a backend off by 2 % in attention is caught.
  void backendCheckCatchesAWrongBackend() {
    auto cpu = kernels::make_cpu_backend(1);
    QCOMPARE(check_backend_agrees(*cpu, 1), std::string());
    SkewedBackend skewed;
    const std::string problem = check_backend_agrees(skewed, 1);
    qInfo("%s", problem.c_str());
    QVERIFY2(problem.find("skewed backend disagrees with the CPU") != std::string::npos, problem.c_str());
    QVERIFY2(problem.find("float32 weights") != std::string::npos, problem.c_str());
    // Right in float32 and wrong only on the path users run (bfloat16 weights and cache): caught.
    SkewedBackend wrongInBf16(1.5f, /*onlyBf16Cache=*/true);
    const std::string bf16Problem = check_backend_agrees(wrongInBf16, 1);
    qInfo("%s", bf16Problem.c_str());
    QVERIFY2(bf16Problem.find("with bfloat16 weights and KV cache") != std::string::npos, bf16Problem.c_str());
  }
};

QTEST_GUILESS_MAIN(TestDevice)
#include "test_device.moc"
