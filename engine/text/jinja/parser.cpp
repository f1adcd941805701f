// Derived from @huggingface/jinja (MIT licence; see THIRD_PARTY_NOTICES), on purpose: templates
// render as it renders them.
#include "engine/text/jinja/parser.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <initializer_list>
#include <set>
#include <string_view>

namespace pagedchat::jinja::detail {

namespace {

class Parser {
 public:
  Parser(const std::vector<Token>& tokens, std::size_t source_size) : t_(tokens), end_pos_(source_size) {}

  Body run() {
    Body program;
    while (cur_ < t_.size()) program.push_back(parse_any());
    return program;
  }

 private:
  enum class ArgsMode { kCall, kParams };

  // --- token helpers ---
  [[noreturn]] void fail(std::size_t pos, std::string message) const { throw SyntaxFailure{pos, std::move(message)}; }
  [[noreturn]] void fail_here(std::string message) const { fail(here(), std::move(message)); }
  std::size_t here() const { return cur_ < t_.size() ? t_[cur_].pos : end_pos_; }

  bool is(Tok type) const { return cur_ < t_.size() && t_[cur_].type == type; }
  bool is_ident(std::string_view name, std::size_t ahead = 0) const {
    return cur_ + ahead < t_.size() && t_[cur_ + ahead].type == Tok::kIdent && t_[cur_ + ahead].value == name;
  }
  bool is_statement(std::initializer_list<std::string_view> names) const {
    if (cur_ + 1 >= t_.size() || t_[cur_].type != Tok::kOpenStmt || t_[cur_ + 1].type != Tok::kIdent) return false;
    return std::find(names.begin(), names.end(), t_[cur_ + 1].value) != names.end();
  }
  const Token& next(const char* context) {
    if (cur_ >= t_.size()) fail(end_pos_, std::string("Unexpected end of template: ") + context);
    return t_[cur_++];
  }
  const Token& expect(Tok type, const char* error) {
    if (cur_ >= t_.size()) fail(end_pos_, std::string("Parser Error: ") + error + " (end of template)");
    const Token& tok = t_[cur_++];
    if (tok.type != type) {
      fail(tok.pos,
           std::string("Parser Error: ") + error + ". " + token_name(tok.type) + " !== " + token_name(type) + ".");
    }
    return tok;
  }
  void expect_ident(std::string_view name) {
    if (!is_ident(name)) fail_here("Expected " + std::string(name));
    ++cur_;
  }

  // Bounds the parser's recursion (parentheses, blocks, elif and else chains, unary chains).
  class Nest {
   public:
    explicit Nest(Parser& p) : p_(p) {
      if (++p_.nesting_ > kMaxNesting) {
        p_.fail_here("template nested too deeply (more than " + std::to_string(kMaxNesting) + " levels)");
      }
    }
    ~Nest() { --p_.nesting_; }
    Nest(const Nest&) = delete;
    Nest& operator=(const Nest&) = delete;

   private:
    Parser& p_;
  };

  template <class T>
  std::unique_ptr<T> seal(std::unique_ptr<T> n) const {
    std::uint32_t d = 0;
    for_each_child(*n, [&](const Node& c) { d = std::max(d, c.depth); });
    n->depth = d + 1;
    if (n->depth > kMaxTreeDepth) {
      fail(n->pos, "template nested too deeply (syntax tree deeper than " + std::to_string(kMaxTreeDepth) + ")");
    }
    return n;
  }

  // Parses nodes up to (not including) a statement named in `names`.
  void parse_until(std::initializer_list<std::string_view> names, Body& body, const char* missing) {
    while (!is_statement(names)) {
      if (cur_ >= t_.size()) fail(end_pos_, std::string("Unexpected end of template: missing {% ") + missing + " %}");
      body.push_back(parse_any());
    }
  }

  // --- statements ---
  NodePtr parse_any() {
    Nest nest(*this);
    if (cur_ >= t_.size()) fail(end_pos_, "Unexpected end of template");
    const Token& tok = t_[cur_];
    switch (tok.type) {
      case Tok::kComment:
        ++cur_;
        return std::make_unique<Flow>(NodeType::kComment, tok.pos);
      case Tok::kText:
        ++cur_;
        return std::make_unique<StrLit>(tok.pos, tok.value);
      case Tok::kOpenStmt:
        return parse_statement();
      case Tok::kOpenExpr: {
        expect(Tok::kOpenExpr, "Expected opening expression token");
        NodePtr e = parse_expression();
        expect(Tok::kCloseExpr, "Expected closing expression token");
        return e;
      }
      default:
        fail(tok.pos, std::string("Unexpected token type: ") + token_name(tok.type));
    }
  }

  NodePtr parse_statement() {
    const std::uint32_t pos = expect(Tok::kOpenStmt, "Expected opening statement token").pos;
    if (cur_ >= t_.size() || t_[cur_].type != Tok::kIdent) {
      fail_here(std::string("Unknown statement, got ") +
                (cur_ < t_.size() ? token_name(t_[cur_].type) : "end of template"));
    }
    const std::string name = t_[cur_].value;
    if (name == "set") {
      ++cur_;
      return parse_set(pos);
    }
    if (name == "if") {
      ++cur_;
      auto node = parse_if(pos);
      expect(Tok::kOpenStmt, "Expected {% token");
      expect_ident("endif");
      expect(Tok::kCloseStmt, "Expected %} token");
      return node;
    }
    if (name == "macro") {
      ++cur_;
      auto node = parse_macro(pos);
      expect(Tok::kOpenStmt, "Expected {% token");
      expect_ident("endmacro");
      expect(Tok::kCloseStmt, "Expected %} token");
      return node;
    }
    if (name == "for") {
      ++cur_;
      auto node = parse_for(pos);
      expect(Tok::kOpenStmt, "Expected {% token");
      expect_ident("endfor");
      expect(Tok::kCloseStmt, "Expected %} token");
      return node;
    }
    if (name == "call") {
      ++cur_;
      return parse_call_block(pos);
    }
    if (name == "break" || name == "continue") {
      ++cur_;
      expect(Tok::kCloseStmt, "Expected closing statement token");
      return std::make_unique<Flow>(name == "break" ? NodeType::kBreak : NodeType::kContinue, pos);
    }
    if (name == "filter") {
      ++cur_;
      auto node = std::make_unique<FilterBlock>(pos);
      NodePtr f = parse_primary();
      if (f->type == NodeType::kIdent && is(Tok::kLParen)) f = parse_call(std::move(f));
      node->filter = std::move(f);
      expect(Tok::kCloseStmt, "Expected closing statement token");
      parse_until({"endfilter"}, node->body, "endfilter");
      expect(Tok::kOpenStmt, "Expected '{%'");
      expect_ident("endfilter");
      expect(Tok::kCloseStmt, "Expected '%}'");
      return seal(std::move(node));
    }
    if (name == "include" || name == "import" || name == "from" || name == "extends") {
      fail(t_[cur_].pos, "'" + name + "' is not supported: a chat template cannot load other templates");
    }
    fail(t_[cur_].pos, "Unknown statement type: " + name);
  }

  NodePtr parse_set(std::uint32_t pos) {
    auto node = std::make_unique<Set>(pos);
    node->target = parse_expression_sequence(false);
    if (is(Tok::kEquals)) {
      ++cur_;
      node->value = parse_expression_sequence(false);
    } else {
      expect(Tok::kCloseStmt, "Expected %} token");
      parse_until({"endset"}, node->body, "endset");
      expect(Tok::kOpenStmt, "Expected {% token");
      expect_ident("endset");
    }
    expect(Tok::kCloseStmt, "Expected closing statement token");
    return seal(std::move(node));
  }

  std::unique_ptr<If> parse_if(std::uint32_t pos) {
    Nest nest(*this);
    auto node = std::make_unique<If>(pos, parse_expression());
    expect(Tok::kCloseStmt, "Expected closing statement token");
    parse_until({"elif", "else", "endif"}, node->body, "endif");
    if (is_statement({"elif"})) {
      const std::uint32_t elif_pos = t_[cur_].pos;
      cur_ += 2;
      node->alternate.push_back(parse_if(elif_pos));
    } else if (is_statement({"else"})) {
      cur_ += 2;
      expect(Tok::kCloseStmt, "Expected closing statement token");
      parse_until({"endif"}, node->alternate, "endif");
    }
    return seal(std::move(node));
  }

  NodePtr parse_macro(std::uint32_t pos) {
    auto node = std::make_unique<Macro>(pos);
    NodePtr name = parse_primary();
    if (name->type != NodeType::kIdent) fail(name->pos, "Expected identifier following macro statement");
    node->name = static_cast<Ident&>(*name).name;
    node->params = parse_args(ArgsMode::kParams);
    expect(Tok::kCloseStmt, "Expected closing statement token");
    parse_until({"endmacro"}, node->body, "endmacro");
    node->special = find_special_args(node->params, node->body);
    return seal(std::move(node));
  }

  NodePtr parse_for(std::uint32_t pos) {
    auto node = std::make_unique<For>(pos);
    node->target = parse_expression_sequence(true);
    if (node->target->type != NodeType::kIdent && node->target->type != NodeType::kTupleLit) {
      fail(node->target->pos, std::string("Expected identifier/tuple for the loop variable, got ") +
                                  node_name(node->target->type) + " instead");
    }
    if (!is_ident("in")) fail_here("Expected `in` keyword following loop variable");
    ++cur_;
    NodePtr iterable = parse_expression();
    if (iterable->type == NodeType::kSelect) {
      auto& sel = static_cast<Select&>(*iterable);
      node->iterable = std::move(sel.lhs);
      node->filter = std::move(sel.test);
    } else {
      node->iterable = std::move(iterable);
    }
    expect(Tok::kCloseStmt, "Expected closing statement token");
    parse_until({"endfor", "else"}, node->body, "endfor");
    if (is_statement({"else"})) {
      cur_ += 2;
      expect(Tok::kCloseStmt, "Expected closing statement token");
      parse_until({"endfor"}, node->else_body, "endfor");
    }
    return seal(std::move(node));
  }

  NodePtr parse_call_block(std::uint32_t pos) {
    auto node = std::make_unique<CallBlock>(pos);
    if (is(Tok::kLParen)) node->params = parse_args(ArgsMode::kParams);
    NodePtr callee = parse_primary();
    if (callee->type != NodeType::kIdent) fail(callee->pos, "Expected identifier following call statement");
    auto call = std::make_unique<Call>(callee->pos, std::move(callee));
    call->args = parse_args(ArgsMode::kCall);
    node->call = seal(std::move(call));
    expect(Tok::kCloseStmt, "Expected closing statement token");
    parse_until({"endcall"}, node->body, "endcall");
    expect(Tok::kOpenStmt, "Expected '{%'");
    expect_ident("endcall");
    expect(Tok::kCloseStmt, "Expected closing statement token");
    node->special = find_special_args(node->params, node->body);
    return seal(std::move(node));
  }

  // --- expressions ---
  NodePtr parse_expression_sequence(bool primary) {
    NodePtr first = primary ? parse_primary() : parse_expression();
    if (!is(Tok::kComma)) return first;
    auto tuple = std::make_unique<ListLit>(NodeType::kTupleLit, first->pos);
    tuple->items.push_back(std::move(first));
    while (true) {
      ++cur_;
      tuple->items.push_back(primary ? parse_primary() : parse_expression());
      if (!is(Tok::kComma)) break;
    }
    return seal(std::move(tuple));
  }

  NodePtr parse_expression() {
    Nest nest(*this);
    return parse_if_expression();
  }

  NodePtr parse_if_expression() {
    NodePtr a = parse_or();
    if (!is_ident("if")) return a;
    const std::uint32_t pos = t_[cur_].pos;
    ++cur_;
    NodePtr test = parse_or();
    if (is_ident("else")) {
      ++cur_;
      Nest nest(*this);
      NodePtr b = parse_if_expression();
      return seal(std::make_unique<Ternary>(pos, std::move(test), std::move(a), std::move(b)));
    }
    return seal(std::make_unique<Select>(pos, std::move(a), std::move(test)));
  }

  NodePtr parse_or() {
    NodePtr left = parse_and();
    while (is_ident("or")) {
      const std::uint32_t pos = t_[cur_++].pos;
      left = seal(std::make_unique<Binary>(pos, BinOp::kOr, std::move(left), parse_and()));
    }
    return left;
  }

  NodePtr parse_and() {
    NodePtr left = parse_not();
    while (is_ident("and")) {
      const std::uint32_t pos = t_[cur_++].pos;
      left = seal(std::make_unique<Binary>(pos, BinOp::kAnd, std::move(left), parse_not()));
    }
    return left;
  }

  NodePtr parse_not() {
    NodePtr right;  // as the reference: each further `not` replaces what came before
    while (is_ident("not")) {
      const std::uint32_t pos = t_[cur_++].pos;
      Nest nest(*this);
      NodePtr arg = parse_not();
      right = seal(std::make_unique<Unary>(pos, UnOp::kNot, std::move(arg)));
    }
    return right ? std::move(right) : parse_comparison();
  }

  NodePtr parse_comparison() {
    NodePtr left = parse_additive();
    while (true) {
      BinOp op;
      std::uint32_t pos = static_cast<std::uint32_t>(here());
      if (is_ident("not") && is_ident("in", 1)) {
        op = BinOp::kNotIn;
        cur_ += 2;
      } else if (is_ident("in")) {
        op = BinOp::kIn;
        ++cur_;
      } else if (is(Tok::kComparison)) {
        const std::string& v = t_[cur_++].value;
        op = v == "=="   ? BinOp::kEq
             : v == "!=" ? BinOp::kNe
             : v == "<"  ? BinOp::kLt
             : v == ">"  ? BinOp::kGt
             : v == "<=" ? BinOp::kLe
                         : BinOp::kGe;
      } else {
        break;
      }
      left = seal(std::make_unique<Binary>(pos, op, std::move(left), parse_additive()));
    }
    return left;
  }

  NodePtr parse_additive() {
    NodePtr left = parse_multiplicative();
    while (is(Tok::kAdditive)) {
      const Token& tok = t_[cur_++];
      const BinOp op = tok.value == "+" ? BinOp::kAdd : tok.value == "-" ? BinOp::kSub : BinOp::kConcat;
      left = seal(std::make_unique<Binary>(tok.pos, op, std::move(left), parse_multiplicative()));
    }
    return left;
  }

  NodePtr parse_multiplicative() {
    NodePtr left = parse_power();
    while (is(Tok::kMultiplicative)) {
      const Token& tok = t_[cur_++];
      const BinOp op = tok.value == "*"    ? BinOp::kMul
                       : tok.value == "/"  ? BinOp::kDiv
                       : tok.value == "//" ? BinOp::kFloorDiv
                                           : BinOp::kMod;
      left = seal(std::make_unique<Binary>(tok.pos, op, std::move(left), parse_power()));
    }
    return left;
  }

  NodePtr parse_power() {
    NodePtr left = parse_test();
    while (is(Tok::kPower)) {
      const std::uint32_t pos = t_[cur_++].pos;
      left = seal(std::make_unique<Binary>(pos, BinOp::kPow, std::move(left), parse_test()));
    }
    return left;
  }

  NodePtr parse_test() {
    NodePtr operand = parse_filter();
    while (is_ident("is")) {
      ++cur_;
      const bool negate = is_ident("not");
      if (negate) ++cur_;
      NodePtr name = parse_primary();
      if (name->type != NodeType::kIdent) fail(name->pos, "Expected identifier for the test");
      auto test = std::make_unique<Test>(name->pos, std::move(operand), negate, static_cast<Ident&>(*name).name);
      // Python Jinja's test arguments (not in the reference): `is divisibleby(3)`, `is eq 3`,
      // `is in items`. Words that can follow a test in the reference's grammar are not arguments.
      if (is(Tok::kLParen)) {
        test->args = parse_args(ArgsMode::kCall);
      } else if (is(Tok::kNumber) || is(Tok::kString) || is(Tok::kLBracket) || is(Tok::kLBrace) ||
                 (is(Tok::kIdent) && !is_ident("and") && !is_ident("or") && !is_ident("else") && !is_ident("if") &&
                  !is_ident("is") && !is_ident("in") && !is_ident("not"))) {
        test->args.push_back(parse_member(parse_primary()));
      }
      operand = seal(std::move(test));
    }
    return operand;
  }

  NodePtr parse_filter() {
    NodePtr operand = parse_unary();
    while (is(Tok::kPipe)) {
      ++cur_;
      NodePtr f = parse_primary();
      if (f->type != NodeType::kIdent) fail(f->pos, "Expected identifier for the filter");
      const std::uint32_t pos = f->pos;
      if (is(Tok::kLParen)) f = parse_call(std::move(f));
      operand = seal(std::make_unique<Filter>(pos, std::move(operand), std::move(f)));
    }
    return operand;
  }

  NodePtr parse_unary() {
    if (cur_ < t_.size() && (t_[cur_].type == Tok::kUnary || t_[cur_].type == Tok::kAdditive) &&
        (t_[cur_].value == "-" || t_[cur_].value == "+")) {
      const Token& tok = t_[cur_++];
      Nest nest(*this);
      NodePtr arg = parse_unary();
      return seal(std::make_unique<Unary>(tok.pos, tok.value == "-" ? UnOp::kNeg : UnOp::kPos, std::move(arg)));
    }
    NodePtr member = parse_member(parse_primary());
    if (is(Tok::kLParen)) return parse_call(std::move(member));
    return member;
  }

  NodePtr parse_call(NodePtr callee) {
    NodePtr expr = std::move(callee);
    do {
      auto call = std::make_unique<Call>(expr->pos, std::move(expr));
      call->args = parse_args(ArgsMode::kCall);
      expr = parse_member(seal(std::move(call)));
    } while (is(Tok::kLParen));
    return expr;
  }

  std::vector<NodePtr> parse_args(ArgsMode mode) {
    expect(Tok::kLParen, "Expected opening parenthesis for arguments list");
    std::vector<NodePtr> args = parse_args_list(mode);
    expect(Tok::kRParen, "Expected closing parenthesis for arguments list");
    return args;
  }

  std::vector<NodePtr> parse_args_list(ArgsMode mode) {
    std::vector<NodePtr> args;
    std::set<std::string> names;
    bool saw_keyword = false, saw_spread = false;
    while (!is(Tok::kRParen)) {
      if (cur_ >= t_.size()) fail(end_pos_, "Unexpected end of template: missing ')'");
      const bool kw_spread = is(Tok::kPower);
      const bool pos_spread = is(Tok::kMultiplicative) && t_[cur_].value == "*";
      if (mode == ArgsMode::kParams && (kw_spread || pos_spread)) {
        fail_here("Argument unpacking is not allowed in parameter declarations");
      }
      const std::uint32_t pos = t_[cur_].pos;
      if (kw_spread) {
        ++cur_;
        args.push_back(seal(std::make_unique<Spread>(NodeType::kKwSpread, pos, parse_expression())));
        if (is(Tok::kComma)) ++cur_;
        if (!is(Tok::kRParen)) fail_here("Expected closing parenthesis: `**` must be applied to the final argument");
        break;
      }
      NodePtr arg;
      if (pos_spread) {
        if (saw_spread) fail_here("Only one `*` argument unpacking is allowed");
        saw_spread = true;
        ++cur_;
        arg = seal(std::make_unique<Spread>(NodeType::kSpread, pos, parse_expression()));
      } else {
        arg = parse_expression();
        if (is(Tok::kEquals)) {
          ++cur_;
          if (arg->type != NodeType::kIdent) {
            fail(arg->pos, mode == ArgsMode::kParams ? "Expected identifier for parameter declaration"
                                                     : "Expected identifier for keyword argument");
          }
          std::string key = static_cast<Ident&>(*arg).name;
          arg = seal(std::make_unique<Kwarg>(arg->pos, std::move(key), parse_expression()));
        }
        if (mode == ArgsMode::kParams) {
          if (arg->type != NodeType::kIdent && arg->type != NodeType::kKwarg) {
            fail(arg->pos, "Expected identifier for parameter declaration");
          }
          const std::string& name = arg->type == NodeType::kIdent ? static_cast<Ident&>(*arg).name
                                                                  : static_cast<Kwarg&>(*arg).key;
          if (!names.insert(name).second) fail(arg->pos, "Duplicate parameter name: " + name);
        }
        if (arg->type == NodeType::kKwarg) {
          saw_keyword = true;
        } else if (saw_keyword) {
          fail(arg->pos, mode == ArgsMode::kCall ? "Positional arguments must come before keyword arguments"
                                                 : "Non-default argument follows default argument");
        } else if (saw_spread) {
          fail(arg->pos, "Positional arguments must not follow `*` argument unpacking");
        }
      }
      args.push_back(std::move(arg));
      if (is(Tok::kComma)) ++cur_;
    }
    return args;
  }

  NodePtr parse_subscript() {
    std::vector<NodePtr> slices;
    bool is_slice = false;
    const std::uint32_t pos = static_cast<std::uint32_t>(here());
    while (!is(Tok::kRBracket)) {
      if (cur_ >= t_.size()) fail(end_pos_, "Unexpected end of template: missing ']'");
      if (is(Tok::kColon)) {
        slices.push_back(nullptr);
        ++cur_;
        is_slice = true;
      } else {
        slices.push_back(parse_expression());
        if (is(Tok::kColon)) {
          ++cur_;
          is_slice = true;
        }
      }
    }
    if (slices.empty()) fail_here("Expected at least one argument for member/slice expression");
    if (!is_slice) return std::move(slices[0]);
    if (slices.size() > 3) fail(pos, "Expected 0-3 arguments for slice expression");
    auto slice = std::make_unique<Slice>(pos);
    slice->start = std::move(slices[0]);
    if (slices.size() > 1) slice->stop = std::move(slices[1]);
    if (slices.size() > 2) slice->step = std::move(slices[2]);
    return seal(std::move(slice));
  }

  NodePtr parse_member(NodePtr object) {
    while (is(Tok::kDot) || is(Tok::kLBracket)) {
      const bool computed = t_[cur_++].type == Tok::kLBracket;
      NodePtr property;
      if (computed) {
        property = parse_subscript();
        expect(Tok::kRBracket, "Expected closing square bracket");
      } else {
        property = parse_primary();
        if (property->type != NodeType::kIdent && property->type != NodeType::kIntLit) {
          fail(property->pos, "Expected identifier or integer following dot operator");
        }
      }
      const std::uint32_t pos = property->pos;
      object = seal(std::make_unique<Member>(pos, std::move(object), std::move(property), computed));
    }
    return object;
  }

  NodePtr parse_number(const Token& tok) {
    const std::string& v = tok.value;
    if (v.find('.') != std::string::npos) {
      double d = 0;
      const char* b = v.data() + (v[0] == '+' ? 1 : 0);
      const auto res = std::from_chars(b, v.data() + v.size(), d);
      if (res.ec == std::errc::result_out_of_range) d = (v[0] == '-' ? -1.0 : 1.0) * HUGE_VAL;
      return std::make_unique<FloatLit>(tok.pos, d);
    }
    std::int64_t i = 0;
    const char* b = v.data() + (v[0] == '+' ? 1 : 0);
    const auto res = std::from_chars(b, v.data() + v.size(), i);
    auto lit = std::make_unique<IntLit>(tok.pos, i);
    lit->too_big = res.ec != std::errc();
    return lit;
  }

  NodePtr parse_primary() {
    const Token& tok = next("expected an expression");
    switch (tok.type) {
      case Tok::kNumber:
        return parse_number(tok);
      case Tok::kString: {
        std::string value = tok.value;
        while (is(Tok::kString)) value += t_[cur_++].value;
        return std::make_unique<StrLit>(tok.pos, std::move(value));
      }
      case Tok::kIdent:
        return std::make_unique<Ident>(tok.pos, tok.value);
      case Tok::kLParen: {
        NodePtr e = parse_expression_sequence(false);
        expect(Tok::kRParen, "Expected closing parenthesis");
        return e;
      }
      case Tok::kLBracket: {
        auto list = std::make_unique<ListLit>(NodeType::kArrayLit, tok.pos);
        while (!is(Tok::kRBracket)) {
          if (cur_ >= t_.size()) fail(end_pos_, "Unexpected end of template: missing ']'");
          list->items.push_back(parse_expression());
          if (is(Tok::kComma)) ++cur_;
        }
        ++cur_;
        return seal(std::move(list));
      }
      case Tok::kLBrace: {
        auto obj = std::make_unique<ObjectLit>(tok.pos);
        while (!is(Tok::kRBrace)) {
          if (cur_ >= t_.size()) fail(end_pos_, "Unexpected end of template: missing '}'");
          NodePtr key = parse_expression();
          expect(Tok::kColon, "Expected colon between key and value in object literal");
          NodePtr value = parse_expression();
          obj->entries.emplace_back(std::move(key), std::move(value));
          if (is(Tok::kComma)) ++cur_;
        }
        ++cur_;
        return seal(std::move(obj));
      }
      default:
        fail(tok.pos, std::string("Unexpected token: ") + token_name(tok.type));
    }
  }

  const std::vector<Token>& t_;
  std::size_t cur_ = 0;
  std::size_t end_pos_;
  std::size_t nesting_ = 0;
};

}  // namespace

Body parse(const std::vector<Token>& tokens, std::size_t source_size) { return Parser(tokens, source_size).run(); }

}  // namespace pagedchat::jinja::detail
