// The hub client's pure parts (engine/loader/hub): quantization labels read from the file names
// the big GGUF publishers use (bartowski, unsloth, Qwen, ggml-org), split files joined, projectors
// left out, the recommended file for a machine's memory, choosing by label, repository ids that
// could leave the models folder refused, HF_ENDPOINT / HF_TOKEN / the token file. The network
// parts run against a stand-in hub in tests/cli/test_cli_pull.
#include <QTemporaryDir>
#include <QTest>

#include <cstdlib>
#include <fstream>

#include "engine/loader/hub/gguf_choice.h"
#include "engine/loader/hub/hf_hub.h"

using namespace pagedchat::hub;

namespace {

HubRepo repoOf(std::initializer_list<std::pair<const char*, std::uint64_t>> files) {
  HubRepo r;
  r.id = "org/name";
  for (const auto& [path, size] : files) r.files.push_back({path, size, ""});
  return r;
}

constexpr std::uint64_t GB = 1000ull * 1000 * 1000;

}  // namespace

class TestHub : public QObject {
  Q_OBJECT

 private slots:
  void quantizationLabels() {
    const std::pair<const char*, const char*> cases[] = {
        {"Qwen3-8B-Q4_K_M.gguf", "Q4_K_M"},
        {"Qwen_Qwen3-8B-Q4_K_M.gguf", "Q4_K_M"},
        {"Qwen3-4B-UD-Q2_K_XL.gguf", "UD-Q2_K_XL"},
        {"gemma-3-4b-it-q4_0.gguf", "Q4_0"},
        {"Meta-Llama-3.1-8B-Instruct-IQ4_XS.gguf", "IQ4_XS"},
        {"Llama-3.2-1B-Instruct-IQ2_XXS.gguf", "IQ2_XXS"},
        {"gpt-oss-20b-MXFP4.gguf", "MXFP4"},
        {"Qwen3-30B-A3B-Q8_0-00001-of-00002.gguf", "Q8_0"},
        {"Q4_K_M/Qwen3-235B-A22B-Q4_K_M-00003-of-00005.gguf", "Q4_K_M"},
        {"phi-4-mini-f16.gguf", "F16"},
        {"SmolLM3-3B-BF16.gguf", "BF16"},
        {"tinyllama-1.1b-chat-v1.0.Q5_K_S.gguf", "Q5_K_S"},
        {"model.gguf", ""},
        {"Qwen2-7B.gguf", ""},  // "Q" inside a word is no label
    };
    for (const auto& [name, want] : cases) QCOMPARE(gguf_quant_of(name), std::string(want));
  }

  void modelsOfARepository() {
    const HubRepo r = repoOf({{"README.md", 5000},
                              {"m-Q2_K.gguf", 3 * GB},
                              {"m-Q4_K_M.gguf", 5 * GB},
                              {"m-Q8_0.gguf", 9 * GB},
                              {"m-BF16-00001-of-00002.gguf", 8 * GB},
                              {"m-BF16-00002-of-00002.gguf", 8 * GB},
                              {"mmproj-m-F16.gguf", 1 * GB},
                              {"m.imatrix.gguf", GB / 100}});
    // 12 GB available: Q4_K_M (5 GB + a fifth) fits and is llama.cpp's default.
    std::vector<GgufModel> models = gguf_models(r, 12 * GB);
    QCOMPARE(int(models.size()), 4);                      // no projector, no imatrix; BF16's two parts are one model
    QCOMPARE(models.front().quant, std::string("Q2_K"));  // smallest first
    QCOMPARE(models.back().quant, std::string("BF16"));
    QCOMPARE(models.back().size, 16 * GB);
    QCOMPARE(int(models.back().parts.size()), 2);
    QCOMPARE(models.back().first_path(), std::string("m-BF16-00001-of-00002.gguf"));
    QCOMPARE(choose_gguf(models, r.id, "").quant, std::string("Q4_K_M"));
    QVERIFY(models[2].fits && !models[3].fits);  // Q8_0 10.8 GB fits, BF16 19.2 GB does not
    // 5 GB available: no Q4 fits; the largest that fits is Q2_K.
    models = gguf_models(r, 5 * GB);
    QCOMPARE(choose_gguf(models, r.id, "").quant, std::string("Q2_K"));
    // Nothing fits: the smallest.
    models = gguf_models(r, 1 * GB);
    QCOMPARE(choose_gguf(models, r.id, "").quant, std::string("Q2_K"));
    QVERIFY(!choose_gguf(models, r.id, "").fits);
    // By label (whole, any case) or file name.
    QCOMPARE(choose_gguf(models, r.id, "q8_0").quant, std::string("Q8_0"));
    QCOMPARE(choose_gguf(models, r.id, "m-Q4_K_M.gguf").quant, std::string("Q4_K_M"));
    try {
      choose_gguf(models, r.id, "Q4_K");  // a part of a label is not a label
      QFAIL("Q4_K was taken");
    } catch (const std::invalid_argument& e) {
      QVERIFY2(std::string(e.what()).find("Q4_K_M") != std::string::npos, e.what());
    }
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, choose_gguf(gguf_models(repoOf({{"a.txt", 1}})), "x/y", ""));
  }

  void folderFiles() {
    const HubRepo r = repoOf({{"config.json", 1},
                              {"model-00001-of-00002.safetensors", 10},
                              {"model-00002-of-00002.safetensors", 10},
                              {"model.safetensors.index.json", 1},
                              {"tokenizer.json", 1},
                              {"README.md", 1},
                              {"original/consolidated.00.pth", 100},
                              {"onnx/model.safetensors", 5}});
    std::vector<std::string> paths;
    for (const HubFile& f : hf_folder_files(r)) paths.push_back(f.path);
    QCOMPARE(paths, (std::vector<std::string>{"config.json", "model-00001-of-00002.safetensors",
                                              "model-00002-of-00002.safetensors", "model.safetensors.index.json",
                                              "tokenizer.json"}));
  }

  void repositoryIds() {
    for (const char* ok : {"Qwen/Qwen3-4B-GGUF", "bartowski/Llama-3.2-1B-Instruct-GGUF", "a_b/c.d-e"})
      QVERIFY2(is_repo_id(ok), ok);
    for (const char* bad : {"", "Qwen", "/x", "x/", "a/b/c", "../etc", "a/..", "a/.hidden", "a/b c", "a/b?x=1"})
      QVERIFY2(!is_repo_id(bad), bad);
  }

  void pastedAddresses() {
    const struct {
      const char* text;
      const char* repo;
      const char* tag;
      const char* revision;
    } cases[] = {
        {"Qwen/Qwen3-4B-GGUF", "Qwen/Qwen3-4B-GGUF", "", "main"},
        {"Qwen/Qwen3-4B-GGUF:q8_0", "Qwen/Qwen3-4B-GGUF", "q8_0", "main"},
        {" https://huggingface.co/Qwen/Qwen3-4B-GGUF/ ", "Qwen/Qwen3-4B-GGUF", "", "main"},
        {"hf.co/bartowski/X-GGUF:Q4_K_M", "bartowski/X-GGUF", "Q4_K_M", "main"},
        {"https://huggingface.co/Qwen/Qwen3-4B-GGUF/blob/main/Qwen3-4B-Q8_0.gguf", "Qwen/Qwen3-4B-GGUF",
         "Qwen3-4B-Q8_0.gguf", "main"},
        {"https://huggingface.co/u/r-GGUF/resolve/v2/Q4_K_M/r-Q4_K_M-00001-of-00002.gguf?download=true", "u/r-GGUF",
         "Q4_K_M/r-Q4_K_M-00001-of-00002.gguf", "v2"},
        {"https://huggingface.co/Qwen/Qwen3-4B-GGUF/tree/main", "Qwen/Qwen3-4B-GGUF", "", "main"},
    };
    for (const auto& c : cases) {
      HubTarget t;
      QVERIFY2(parse_hub_target(c.text, t), c.text);
      QCOMPARE(t.repo, std::string(c.repo));
      QCOMPARE(t.tag, std::string(c.tag));
      QCOMPARE(t.revision, std::string(c.revision));
    }
    HubTarget t;
    for (const char* bad :
         {"", "Qwen", "https://huggingface.co/Qwen", "https://huggingface.co/a/b/discussions/1", "../x/y"})
      QVERIFY2(!parse_hub_target(bad, t), bad);
  }

  void configFromEnvironment() {
    QTemporaryDir home;
    { std::ofstream(home.path().toStdString() + "/token") << "hf_fromfile\n"; }
    qputenv("HF_HOME", home.path().toUtf8());
    qunsetenv("HF_TOKEN");
    qunsetenv("HUGGING_FACE_HUB_TOKEN");
    qputenv("HF_ENDPOINT", "http://mirror.example:8080//");
    HubConfig c = hub_config_from_env();
    QCOMPARE(c.endpoint, std::string("http://mirror.example:8080"));
    QCOMPARE(c.token, std::string("hf_fromfile"));
    qputenv("HUGGING_FACE_HUB_TOKEN", "hf_legacy");
    QCOMPARE(hub_config_from_env().token, std::string("hf_legacy"));
    qputenv("HF_TOKEN", " hf_env ");
    QCOMPARE(hub_config_from_env().token, std::string("hf_env"));
    qunsetenv("HF_ENDPOINT");
    QCOMPARE(hub_config_from_env().endpoint, std::string("https://huggingface.co"));
    qputenv("XDG_DATA_HOME", "/data");
    QCOMPARE(default_models_dir().string(), std::string("/data/PagedChat/models"));
  }
};

QTEST_GUILESS_MAIN(TestHub)
#include "test_hub.moc"
