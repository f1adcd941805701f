// Qwen3.5 / Qwen3.5-MoE Hugging Face folders written from GGUF models for the tests
// (test_hf_qwen35, test_vision_hf): what llama.cpp's convert_hf_to_gguf.py (Qwen3NextModel.
// modify_tensors, _LinearAttentionVReorderBase, Qwen3_5TextModel) does to a checkpoint, undone
// tensor by tensor, under transformers' modeling_qwen3_5.py / modeling_qwen3_5_moe.py names:
// RMSNorm weights stored as w for (1 + w) (not the DeltaNet's gated norm), A_log = log(-ssm_a),
// conv1d [channels, 1, taps], the value heads back from the GGUF's tiled order to the checkpoint's
// grouped one (in_proj_qkv's v rows, in_proj_z, in_proj_b / _a, A_log, dt_bias, the conv's v
// channels, out_proj's columns), the experts as transformers 5 stores them (gate_up_proj
// [E, 2I, H], down_proj [E, H, I]) or one per name, the shared expert and its gate [1, H].
// Weights are written as float32 (quantized GGUF tensors dequantized).
#pragma once

#include <QDir>
#include <QFile>
#include <QString>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/loader/gguf/dequant.h"
#include "engine/loader/gguf/gguf_reader.h"
#include "engine/loader/hf/hf_writer.h"
#include "test_paths.h"

namespace qwen35hf {

using namespace pagedchat;
using nlohmann::json;

/// How a folder is laid out.
struct Layout {
  bool conditional = false;        ///< ...ForConditionalGeneration: text_config, model.language_model.*
  bool layer_types = true;         ///< layer_types, else full_attention_interval
  bool old_rope = false;           ///< rope_theta / partial_rotary_factor / rope_scaling instead of rope_parameters
  bool fused_experts = true;       ///< experts.gate_up_proj / down_proj, else experts.N.*
  bool keep_tiled = false;         ///< leave the value heads in the GGUF's order (a wrong folder)
  bool visual_placeholder = true;  ///< conditional: one model.visual.* tensor (the text model skips it)
};

struct Tensor {
  std::string name;
  std::vector<uint64_t> shape;
  std::vector<float> v;
};

class FolderWriter {
 public:
  FolderWriter(const std::string& gguf, const Layout& layout) : f_(GgufFile::open(gguf)), layout_(layout) {
    arch_ = *f_.get_string("general.architecture");
    key_heads_ = int(key("ssm.group_count"));
    value_heads_ = int(key("ssm.time_step_rank"));
    head_k_ = int(key("ssm.state_size"));
    head_v_ = int(key("ssm.inner_size")) / value_heads_;
  }

  int64_t key(const std::string& k) const { return *f_.get_int(arch_ + "." + k); }

  /// The folder's config.json.
  json config() const {
    const int layers = int(key("block_count")), interval = int(key("full_attention_interval"));
    json t;
    t["hidden_size"] = key("embedding_length");
    t["num_hidden_layers"] = layers;
    t["num_attention_heads"] = key("attention.head_count");
    t["num_key_value_heads"] = key("attention.head_count_kv");
    t["head_dim"] = key("attention.key_length");
    t["rms_norm_eps"] = *f_.get_float(arch_ + ".attention.layer_norm_rms_epsilon");
    t["vocab_size"] = f_.find_tensor("token_embd.weight")->ne[1];
    t["max_position_embeddings"] = key("context_length");
    t["tie_word_embeddings"] = false;
    t["hidden_act"] = "silu";
    t["linear_conv_kernel_dim"] = key("ssm.conv_kernel");
    t["linear_key_head_dim"] = head_k_;
    t["linear_value_head_dim"] = head_v_;
    t["linear_num_key_heads"] = key_heads_;
    t["linear_num_value_heads"] = value_heads_;
    t["mtp_num_hidden_layers"] = 1;
    if (layout_.layer_types) {
      json lt = json::array();
      for (int l = 0; l < layers; ++l) lt.push_back((l + 1) % interval ? "linear_attention" : "full_attention");
      t["layer_types"] = lt;
    } else {
      t["full_attention_interval"] = interval;
    }
    const GgufValue* sec = f_.get_array(arch_ + ".rope.dimension_sections", GgufType::kInt32);
    json sections = json::array();
    for (std::size_t i = 0; i < 3; ++i) sections.push_back(sec->ints.empty() ? int64_t(sec->uints[i]) : sec->ints[i]);
    const double partial = double(key("rope.dimension_count")) / double(key("attention.key_length"));
    const double theta = *f_.get_float(arch_ + ".rope.freq_base");
    if (layout_.old_rope) {
      t["rope_theta"] = theta;
      t["partial_rotary_factor"] = partial;
      t["rope_scaling"] = {{"type", "default"}, {"mrope_section", sections}, {"mrope_interleaved", true}};
    } else {
      t["rope_parameters"] = {{"rope_type", "default"},
                              {"rope_theta", theta},
                              {"partial_rotary_factor", partial},
                              {"mrope_section", sections},
                              {"mrope_interleaved", true}};
    }
    const bool moe = arch_ == "qwen35moe";
    if (moe) {
      t["num_experts"] = key("expert_count");
      t["num_experts_per_tok"] = key("expert_used_count");
      t["moe_intermediate_size"] = key("expert_feed_forward_length");
      t["shared_expert_intermediate_size"] = key("expert_shared_feed_forward_length");
    } else {
      t["intermediate_size"] = key("feed_forward_length");
    }
    t["eos_token_id"] = 151645;
    if (!layout_.conditional) {
      t["architectures"] = {moe ? "Qwen3_5MoeForCausalLM" : "Qwen3_5ForCausalLM"};
      t["model_type"] = moe ? "qwen3_5_moe_text" : "qwen3_5_text";
      return t;
    }
    t["model_type"] = moe ? "qwen3_5_moe_text" : "qwen3_5_text";
    return {{"architectures", {moe ? "Qwen3_5MoeForConditionalGeneration" : "Qwen3_5ForConditionalGeneration"}},
            {"model_type", moe ? "qwen3_5_moe" : "qwen3_5"},
            {"text_config", t},
            {"vision_config", {{"depth", 1}, {"hidden_size", 16}, {"out_hidden_size", 64}}},
            {"image_token_id", 248056},
            {"tie_word_embeddings", false}};
  }

  /// The folder's tensors.
  std::vector<Tensor> tensors() const {
    std::vector<Tensor> out;
    const std::string m = layout_.conditional ? "model.language_model." : "model.";
    for (const GgufTensorInfo& t : f_.tensors()) {
      std::vector<float> v(t.n_elements);
      dequantize(t.type, f_.tensor_data(t), v.data(), t.n_elements);
      const std::vector<uint64_t> shape(t.ne.rbegin(), t.ne.rend());
      if (t.name == "token_embd.weight") {
        out.push_back({m + "embed_tokens.weight", shape, v});
      } else if (t.name == "output.weight") {
        out.push_back({"lm_head.weight", shape, v});
      } else if (t.name == "output_norm.weight") {
        out.push_back({m + "norm.weight", shape, minusOne(v)});
      } else {
        layerTensor(t, m, shape, std::move(v), out);
      }
    }
    // A vision tower's and an MTP block's tensors, which the text model leaves alone.
    out.push_back({"mtp.fc.weight", {4, 4}, std::vector<float>(16, 0.5f)});
    if (layout_.conditional && layout_.visual_placeholder)
      out.push_back({"model.visual.merger.norm.weight", {16}, std::vector<float>(16, 1.0f)});
    return out;
  }

  /// Writes config.json, model.safetensors (`ts`, then `more`, borrowed) and the Qwen tokenizer to `dir`.
  void write(const QString& dir, const json& config, const std::vector<Tensor>& ts,
             const std::vector<StTensorOut>& more = {}) const {
    QDir().mkpath(dir);
    QFile cf(dir + "/config.json");
    if (!cf.open(QIODevice::WriteOnly)) throw std::runtime_error("cannot write config.json");
    cf.write(QByteArray::fromStdString(config.dump(2)));
    cf.close();
    std::vector<StTensorOut> st = more;
    for (const Tensor& t : ts) st.push_back({t.name, StDtype::kF32, t.shape, t.v.data()});
    write_safetensors((dir + "/model.safetensors").toStdString(), st);
    for (const char* name : {"tokenizer.json", "tokenizer_config.json"})
      if (!QFile::copy(testpaths::modelFile("tokenizers/qwen3/") + name, dir + "/" + name))
        throw std::runtime_error(std::string("cannot copy ") + name);
  }

 private:
  static std::vector<float> minusOne(std::vector<float> v) {
    for (float& x : v) x -= 1.0f;
    return v;
  }

  /// Rows [first, first + value_heads * per_head) of a [rows, cols] matrix from the GGUF's tiled
  /// value-head order (head r * key_heads + g) to the grouped one (head g * per_key + r): the
  /// inverse of _LinearAttentionVReorderBase._reorder_v_heads.
  std::vector<float> groupRows(const std::vector<float>& v, uint64_t cols, uint64_t first, uint64_t per_head) const {
    if (layout_.keep_tiled) return v;
    std::vector<float> out = v;
    const int per_key = value_heads_ / key_heads_;
    for (int g = 0; g < key_heads_; ++g)
      for (int r = 0; r < per_key; ++r) {
        const uint64_t to = first + uint64_t(g * per_key + r) * per_head,
                       from = first + uint64_t(r * key_heads_ + g) * per_head;
        std::copy(v.begin() + int64_t(from * cols), v.begin() + int64_t((from + per_head) * cols),
                  out.begin() + int64_t(to * cols));
      }
    return out;
  }
  /// The same along the columns of a [rows, value_heads * per_head] matrix (out_proj).
  std::vector<float> groupColumns(const std::vector<float>& v, uint64_t rows, uint64_t per_head) const {
    if (layout_.keep_tiled) return v;
    const uint64_t cols = uint64_t(value_heads_) * per_head;
    std::vector<float> out(v.size());
    for (uint64_t i = 0; i < rows; ++i) {
      // Each row, as a column vector of value heads.
      std::vector<float> row(v.begin() + int64_t(i * cols), v.begin() + int64_t((i + 1) * cols));
      const std::vector<float> grouped = groupRows(row, 1, 0, per_head);
      std::copy(grouped.begin(), grouped.end(), out.begin() + int64_t(i * cols));
    }
    return out;
  }

  void layerTensor(const GgufTensorInfo& t, const std::string& m, std::vector<uint64_t> shape, std::vector<float> v,
                   std::vector<Tensor>& out) const {
    const std::size_t dot = t.name.find('.', 4);
    const std::string blk = t.name.substr(4, dot - 4), what = t.name.substr(dot + 1);
    const std::string p = m + "layers." + blk + ".";
    const uint64_t kd = uint64_t(key_heads_) * uint64_t(head_k_);
    static const std::map<std::string, std::string> plain = {
        {"attn_q.weight", "self_attn.q_proj.weight"},
        {"attn_k.weight", "self_attn.k_proj.weight"},
        {"attn_v.weight", "self_attn.v_proj.weight"},
        {"attn_output.weight", "self_attn.o_proj.weight"},
        {"ffn_gate.weight", "mlp.gate_proj.weight"},
        {"ffn_up.weight", "mlp.up_proj.weight"},
        {"ffn_down.weight", "mlp.down_proj.weight"},
        {"ffn_gate_inp.weight", "mlp.gate.weight"},
        {"ffn_gate_shexp.weight", "mlp.shared_expert.gate_proj.weight"},
        {"ffn_up_shexp.weight", "mlp.shared_expert.up_proj.weight"},
        {"ffn_down_shexp.weight", "mlp.shared_expert.down_proj.weight"},
        {"ssm_norm.weight", "linear_attn.norm.weight"}};
    static const std::map<std::string, std::string> norms = {
        {"attn_norm.weight", "input_layernorm.weight"},
        {"post_attention_norm.weight", "post_attention_layernorm.weight"},
        {"attn_q_norm.weight", "self_attn.q_norm.weight"},
        {"attn_k_norm.weight", "self_attn.k_norm.weight"}};
    if (auto it = plain.find(what); it != plain.end()) {
      out.push_back({p + it->second, shape, std::move(v)});
    } else if (auto n = norms.find(what); n != norms.end()) {
      out.push_back({p + n->second, shape, minusOne(std::move(v))});
    } else if (what == "attn_qkv.weight") {
      out.push_back({p + "linear_attn.in_proj_qkv.weight", shape, groupRows(v, shape[1], 2 * kd, uint64_t(head_v_))});
    } else if (what == "attn_gate.weight") {
      out.push_back({p + "linear_attn.in_proj_z.weight", shape, groupRows(v, shape[1], 0, uint64_t(head_v_))});
    } else if (what == "ssm_beta.weight" || what == "ssm_alpha.weight") {
      const std::string name = what == "ssm_beta.weight" ? "in_proj_b" : "in_proj_a";
      out.push_back({p + "linear_attn." + name + ".weight", shape, groupRows(v, shape[1], 0, 1)});
    } else if (what == "ssm_conv1d.weight") {
      out.push_back({p + "linear_attn.conv1d.weight",
                     {shape[0], 1, shape[1]},
                     groupRows(v, shape[1], 2 * kd, uint64_t(head_v_))});
    } else if (what == "ssm_dt.bias") {
      out.push_back({p + "linear_attn.dt_bias", shape, groupRows(v, 1, 0, 1)});
    } else if (what == "ssm_a") {
      for (float& x : v) x = std::log(-x);  // ssm_a = -exp(A_log)
      out.push_back({p + "linear_attn.A_log", shape, groupRows(v, 1, 0, 1)});
    } else if (what == "ssm_out.weight") {
      out.push_back({p + "linear_attn.out_proj.weight", shape, groupColumns(v, shape[0], uint64_t(head_v_))});
    } else if (what == "ffn_gate_inp_shexp.weight") {
      out.push_back({p + "mlp.shared_expert_gate.weight", {1, shape[0]}, std::move(v)});
    } else if (what == "ffn_gate_exps.weight" || what == "ffn_up_exps.weight" || what == "ffn_down_exps.weight") {
      experts(p, what, shape, std::move(v), out);
    } else {
      throw std::runtime_error("test: no Hugging Face name for " + t.name);
    }
  }

  // [E, rows, cols] expert tensors: one per expert, or (transformers 5) gate and up fused as
  // gate_up_proj [E, 2I, H] once both are seen.
  void experts(const std::string& p, const std::string& what, const std::vector<uint64_t>& shape, std::vector<float> v,
               std::vector<Tensor>& out) const {
    const uint64_t E = shape[0], rows = shape[1], cols = shape[2];
    const std::string kind = what.substr(4, what.find("_exps") - 4);  // gate, up, down
    if (!layout_.fused_experts) {
      for (uint64_t e = 0; e < E; ++e)
        out.push_back(
            {p + "mlp.experts." + std::to_string(e) + "." + kind + "_proj.weight",
             {rows, cols},
             std::vector<float>(v.begin() + int64_t(e * rows * cols), v.begin() + int64_t((e + 1) * rows * cols))});
      return;
    }
    if (kind == "down") {
      out.push_back({p + "mlp.experts.down_proj", shape, std::move(v)});
      return;
    }
    pending_[p + kind] = std::move(v);
    if (!pending_.count(p + "gate") || !pending_.count(p + "up")) return;
    const std::vector<float>&gate = pending_[p + "gate"], &up = pending_[p + "up"];
    std::vector<float> gu;
    for (uint64_t e = 0; e < E; ++e) {
      gu.insert(gu.end(), gate.begin() + int64_t(e * rows * cols), gate.begin() + int64_t((e + 1) * rows * cols));
      gu.insert(gu.end(), up.begin() + int64_t(e * rows * cols), up.begin() + int64_t((e + 1) * rows * cols));
    }
    out.push_back({p + "mlp.experts.gate_up_proj", {E, 2 * rows, cols}, std::move(gu)});
  }

  GgufFile f_;
  Layout layout_;
  std::string arch_;
  int key_heads_ = 0, value_heads_ = 0, head_k_ = 0, head_v_ = 0;
  mutable std::map<std::string, std::vector<float>> pending_;
};

}  // namespace qwen35hf
