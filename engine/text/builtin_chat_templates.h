// The built-in chat templates: each a Jinja source written for PagedChat from its format's
// canonical description (cited per template in builtin_chat_templates.cpp), the role order it
// allows, and the markers that end a turn.
#pragma once

#include <string>
#include <vector>

namespace pagedchat {

/// Which role orders a built-in renders.
enum class ChatRoleOrder {
  kAny,          ///< every message on its own: any order of system/user/assistant
  kAlternating,  ///< an optional first system message, then user/assistant/user/... from a user message
};

struct BuiltinChatTemplate {
  std::string name;
  std::string source;  ///< Jinja, rendered with messages, add_generation_prompt, bos_token, eos_token
  ChatRoleOrder order = ChatRoleOrder::kAny;
  std::vector<std::string> end_of_turn;  ///< text that ends a reply (see chat_stop_conditions)
};

/// Every built-in, in chat_template_names() order.
const std::vector<BuiltinChatTemplate>& builtin_chat_templates();

/// The built-in called `name`, or nullptr.
const BuiltinChatTemplate* find_builtin_chat_template(const std::string& name);

}  // namespace pagedchat
