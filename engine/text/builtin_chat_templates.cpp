#include "engine/text/builtin_chat_templates.h"

namespace pagedchat {
namespace {

// Every source only uses whitespace-trimming tags ({%- -%}, {{- -}}), so the line breaks and
// indentation below are not part of the output; all output is written by expressions.

// llama-2: Meta's llama/generation.py chat_completion, as meta-llama/Llama-2-7b-chat-hf's
// tokenizer_config.json writes it: every user turn bos + "[INST] " + content.strip() + " [/INST]",
// every assistant turn " " + content.strip() + " " + eos; the system message wrapped in
// "<<SYS>>\n...\n<</SYS>>\n\n" before the first user message (inside that strip()).
constexpr const char* kLlama2 = R"J(
{%- if messages[0].role == 'system' -%}
  {%- set system = messages[0].content -%}
  {%- set turns = messages[1:] -%}
{%- else -%}
  {%- set system = none -%}
  {%- set turns = messages -%}
{%- endif -%}
{%- for m in turns -%}
  {%- set content = m.content -%}
  {%- if loop.first and system is not none -%}
    {%- set content = '<<SYS>>\n' + system + '\n<</SYS>>\n\n' + content -%}
  {%- endif -%}
  {%- if m.role == 'user' -%}
    {{- bos_token + '[INST] ' + content | trim + ' [/INST]' -}}
  {%- else -%}
    {{- ' ' + content | trim + ' ' + eos_token -}}
  {%- endif -%}
{%- endfor -%}
)J";

// mistral: mistral-common's v1 instruct format (Mistral-7B-Instruct-v0.1/v0.2): bos, then per user
// turn "[INST] " + content + " [/INST]" (the system message + "\n\n" before the first user
// message's content), per assistant turn " " + content + eos. mistral-common encodes
// "<s>▁[INST]▁...": the "▁" after a special token is sentencepiece's dummy prefix, so the template
// writes no space there (Mistral's own Jinja writes " [INST]", which a sentencepiece tokenizer
// would encode as "▁▁[INST]"). Contents are not stripped.
constexpr const char* kMistral = R"J(
{%- if messages[0].role == 'system' -%}
  {%- set system = messages[0].content -%}
  {%- set turns = messages[1:] -%}
{%- else -%}
  {%- set system = none -%}
  {%- set turns = messages -%}
{%- endif -%}
{{- bos_token -}}
{%- for m in turns -%}
  {%- if m.role == 'user' -%}
    {%- if loop.first and system is not none -%}
      {{- '[INST] ' + system + '\n\n' + m.content + ' [/INST]' -}}
    {%- else -%}
      {{- '[INST] ' + m.content + ' [/INST]' -}}
    {%- endif -%}
  {%- else -%}
    {{- ' ' + m.content + eos_token -}}
  {%- endif -%}
{%- endfor -%}
)J";

// chatml: OpenAI's ChatML as Hugging Face models carry it (OpenHermes-2.5, Qwen2.5, Qwen3):
// "<|im_start|>" + role + "\n" + content + "<|im_end|>\n" per message, "<|im_start|>assistant\n" as
// the generation prompt. Qwen3 (its tokenizer_config.json template): replies before the last user
// message keep only what follows "</think>" (their reasoning is not sent again), and
// enable_thinking = false writes an empty "<think>\n\n</think>\n\n" after the generation prompt.
constexpr const char* kChatml = R"J(
{%- set ns = namespace(last_user=-1) -%}
{%- for m in messages -%}
  {%- if m.role == 'user' -%}{%- set ns.last_user = loop.index0 -%}{%- endif -%}
{%- endfor -%}
{%- for m in messages -%}
  {%- set content = m.content -%}
  {%- if m.role == 'assistant' and loop.index0 < ns.last_user and '</think>' in content -%}
    {%- set content = content.split('</think>')[-1].lstrip('\n') -%}
  {%- endif -%}
  {{- '<|im_start|>' + m.role + '\n' + content + '<|im_end|>\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}
  {{- '<|im_start|>assistant\n' -}}
  {%- if enable_thinking is defined and enable_thinking is false -%}
    {{- '<think>\n\n</think>\n\n' -}}
  {%- endif -%}
{%- endif -%}
)J";

// zephyr: TinyLlama/TinyLlama-1.1B-Chat-v1.0 (= HuggingFaceH4/zephyr-7b-beta): "<|" + role +
// "|>\n" + content + eos + "\n" per message, "<|assistant|>\n" as the generation prompt.
constexpr const char* kZephyr = R"J(
{%- for m in messages -%}
  {{- '<|' + m.role + '|>\n' + m.content + eos_token + '\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|assistant|>\n' -}}{%- endif -%}
)J";

// vicuna: FastChat's "vicuna_v1.1" conversation template (lm-sys/FastChat fastchat/conversation.py;
// vicuna-7b-v1.5 ships no Jinja template): SeparatorStyle.ADD_COLON_TWO with sep " ", sep2 "</s>":
// system + " ", then "USER: " + U + " " and "ASSISTANT: " + A + "</s>", "ASSISTANT:" as the
// generation prompt. Contents are stripped, as FastChat's chat loop stores them.
constexpr const char* kVicuna = R"J(
{%- if messages[0].role == 'system' -%}
  {%- set system = messages[0].content | trim -%}
  {%- set turns = messages[1:] -%}
{%- else -%}
  {%- set system = "A chat between a curious user and an artificial intelligence assistant. The assistant gives helpful, detailed, and polite answers to the user's questions." -%}
  {%- set turns = messages -%}
{%- endif -%}
{{- bos_token + system + ' ' -}}
{%- for m in turns -%}
  {%- if m.role == 'user' -%}
    {{- 'USER: ' + m.content | trim + ' ' -}}
  {%- else -%}
    {{- 'ASSISTANT: ' + m.content | trim + eos_token -}}
  {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- 'ASSISTANT:' -}}{%- endif -%}
)J";

// llama3: Meta Llama 3 / 3.1 / 3.2 Instruct (meta-llama/Meta-Llama-3-8B-Instruct's template): bos,
// then per message "<|start_header_id|>" + role + "<|end_header_id|>\n\n" + content.strip() +
// "<|eot_id|>", and "<|start_header_id|>assistant<|end_header_id|>\n\n" as the generation prompt.
// (Llama 3.1's own template also writes a "Cutting Knowledge Date" system header; the model's
// template is used when the file has it.)
constexpr const char* kLlama3 = R"J(
{{- bos_token -}}
{%- for m in messages -%}
  {{- '<|start_header_id|>' + m.role + '<|end_header_id|>\n\n' + m.content | trim + '<|eot_id|>' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}
  {{- '<|start_header_id|>assistant<|end_header_id|>\n\n' -}}
{%- endif -%}
)J";

// deepseek-r1: DeepSeek-R1 and its distills (deepseek-ai/DeepSeek-R1-Distill-Qwen-*'s template):
// bos + the system message, then "<｜User｜>" + U and "<｜Assistant｜>" + A + "<｜end▁of▁sentence｜>"
// where A keeps only what follows "</think>", and "<｜Assistant｜><think>\n" as the generation prompt.
constexpr const char* kDeepseekR1 = R"J(
{%- set ns = namespace(system='') -%}
{%- for m in messages -%}
  {%- if m.role == 'system' -%}{%- set ns.system = m.content -%}{%- endif -%}
{%- endfor -%}
{{- bos_token + ns.system -}}
{%- for m in messages -%}
  {%- if m.role == 'user' -%}
    {{- '<｜User｜>' + m.content -}}
  {%- elif m.role == 'assistant' -%}
    {%- set content = m.content -%}
    {%- if '</think>' in content -%}{%- set content = content.split('</think>')[-1] -%}{%- endif -%}
    {{- '<｜Assistant｜>' + content + '<｜end▁of▁sentence｜>' -}}
  {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<｜Assistant｜><think>\n' -}}{%- endif -%}
)J";

// phi3: microsoft/Phi-3-mini-4k-instruct and Phi-3.5-mini-instruct: "<|" + role + "|>\n" + content
// + "<|end|>\n" per message (an empty system message is left out), "<|assistant|>\n" as the
// generation prompt, else eos.
constexpr const char* kPhi3 = R"J(
{%- for m in messages -%}
  {%- if m.role != 'system' or m.content -%}
    {{- '<|' + m.role + '|>\n' + m.content + '<|end|>\n' -}}
  {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|assistant|>\n' -}}{%- else -%}{{- eos_token -}}{%- endif -%}
)J";

// gemma: google/gemma-2-*-it and gemma-3-*-it: bos, then "<start_of_turn>" + ("model" for the
// assistant, else the role) + "\n" + content.strip() + "<end_of_turn>\n", roles alternating; a
// system message goes before the first user message's content with "\n\n" (Gemma 3's rule; Gemma
// 2's template refuses a system message). "<start_of_turn>model\n" as the generation prompt.
constexpr const char* kGemma = R"J(
{{- bos_token -}}
{%- if messages[0].role == 'system' -%}
  {%- set first = messages[0].content + '\n\n' -%}
  {%- set turns = messages[1:] -%}
{%- else -%}
  {%- set first = '' -%}
  {%- set turns = messages -%}
{%- endif -%}
{%- for m in turns -%}
  {%- set role = 'model' if m.role == 'assistant' else m.role -%}
  {{- '<start_of_turn>' + role + '\n' + (first if loop.first else '') + m.content | trim + '<end_of_turn>\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<start_of_turn>model\n' -}}{%- endif -%}
)J";

// none: the contents concatenated as they are (a story model continues the text).
constexpr const char* kNone = R"J(
{%- for m in messages -%}{{- m.content -}}{%- endfor -%}
)J";

// gemma4: Gemma 4's turns "<|turn>role\n" + content + "<turn|>\n" (assistant -> model), a system
// turn for a system message and for thinking ("<|think|>\n" at its top when enable_thinking),
// and with thinking off an empty thought channel "<|channel>thought\n<channel|>" after the
// generation prompt so that the model answers at once (the format of Google's template; its tool
// declarations are not written here: this is the fallback when a model's own template fails).
// Replies' reasoning never reaches it (ChatTemplate drops it, as Google's template does).
constexpr const char* kGemma4 = R"J(
{{- bos_token -}}
{%- set thinking = enable_thinking is defined and enable_thinking -%}
{%- set turns = messages -%}
{%- if thinking or messages[0].role == 'system' -%}
  {{- '<|turn>system\n' + ('<|think|>\n' if thinking else '') -}}
  {%- if messages[0].role == 'system' -%}
    {{- messages[0].content | trim -}}
    {%- set turns = messages[1:] -%}
  {%- endif -%}
  {{- '<turn|>\n' -}}
{%- endif -%}
{%- for m in turns -%}
  {{- '<|turn>' + ('model' if m.role == 'assistant' else m.role) + '\n' + m.content | trim + '<turn|>\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}
  {{- '<|turn>model\n' + ('' if thinking else '<|channel>thought\n<channel|>') -}}
{%- endif -%}
)J";

}  // namespace

const std::vector<BuiltinChatTemplate>& builtin_chat_templates() {
  using O = ChatRoleOrder;
  static const std::vector<BuiltinChatTemplate> all = {
      {"llama-2", kLlama2, O::kAlternating, {"[INST]"}},
      {"mistral", kMistral, O::kAlternating, {"[INST]"}},
      {"chatml", kChatml, O::kAny, {"<|im_end|>", "<|im_start|>"}},
      {"zephyr", kZephyr, O::kAny, {"<|user|>", "<|system|>"}},
      {"vicuna", kVicuna, O::kAlternating, {"USER:"}},
      {"llama3", kLlama3, O::kAny, {"<|eot_id|>", "<|eom_id|>", "<|start_header_id|>"}},
      {"deepseek-r1", kDeepseekR1, O::kAny, {"<｜end▁of▁sentence｜>", "<｜User｜>"}},
      {"phi3", kPhi3, O::kAny, {"<|end|>", "<|user|>"}},
      {"gemma", kGemma, O::kAlternating, {"<end_of_turn>", "<start_of_turn>"}},
      {"gemma4", kGemma4, O::kAny, {"<turn|>", "<|turn>"}},
      {"none", kNone, O::kAny, {}},
  };
  return all;
}

const BuiltinChatTemplate* find_builtin_chat_template(const std::string& name) {
  for (const BuiltinChatTemplate& t : builtin_chat_templates())
    if (t.name == name) return &t;
  return nullptr;
}

}  // namespace pagedchat
