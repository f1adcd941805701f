#include "engine/sample/structured/grammar.h"

#include <stdexcept>

namespace pagedchat::structured {

using Expr = GrammarBuilder::Expr;

Expr GrammarBuilder::add(Node n) {
  nodes_.push_back(std::move(n));
  return Expr(nodes_.size() - 1);
}

Expr GrammarBuilder::empty() { return add({}); }

Expr GrammarBuilder::literal(std::string_view text) {
  std::vector<Expr> parts;
  parts.reserve(text.size());
  for (unsigned char c : text) parts.push_back(byte_range(c, c));
  return seq(std::move(parts));
}

Expr GrammarBuilder::byte_range(uint8_t lo, uint8_t hi) { return byte_set({{lo, hi}}); }

Expr GrammarBuilder::byte_set(std::vector<std::pair<uint8_t, uint8_t>> ranges) {
  Node n;
  n.kind = Kind::kBytes;
  n.ranges = std::move(ranges);
  return add(std::move(n));
}

Expr GrammarBuilder::seq(std::vector<Expr> parts) {
  if (parts.size() == 1) return parts.front();
  Node n;
  n.kind = Kind::kSeq;
  n.kids = std::move(parts);
  return add(std::move(n));
}

Expr GrammarBuilder::alt(std::vector<Expr> options) {
  if (options.size() == 1) return options.front();
  Node n;
  n.kind = Kind::kAlt;
  n.kids = std::move(options);
  return add(std::move(n));
}

Expr GrammarBuilder::repeat(Expr e, int min, int max) {
  if (min < 0 || (max >= 0 && max < min)) throw std::invalid_argument("grammar: bad repetition bounds");
  if (min == 1 && max == 1) return e;
  Node n;
  n.kind = Kind::kRepeat;
  n.kids = {e};
  n.min = min;
  n.max = max;
  return add(std::move(n));
}

Expr GrammarBuilder::ref(int rule) {
  Node n;
  n.kind = Kind::kRef;
  n.rule = rule;
  return add(std::move(n));
}

int GrammarBuilder::declare_rule(std::string name) {
  rules_.push_back({std::move(name), -1});
  return int(rules_.size() - 1);
}

void GrammarBuilder::define(int rule, Expr body) { rules_.at(std::size_t(rule)).body = body; }

int32_t GrammarBuilder::new_state(Grammar& g) const {
  if (g.states.size() >= max_states_)
    throw std::invalid_argument("the grammar is too large (more than " + std::to_string(max_states_) +
                                " states): the schema, pattern or choices ask for too much (long repetitions such "
                                "as maxLength or maxItems, many properties or choices, deep nesting)");
  g.states.emplace_back();
  return int32_t(g.states.size() - 1);
}

// Thompson's construction of `e` between `from` and `to`: every path from `from` to `to` reads
// a string of e's language. Only fresh states and `from`/`to` get edges, so alternatives may
// share their ends.
void GrammarBuilder::compile(Grammar& g, Expr e, int32_t from, int32_t to) const {
  const Node& n = nodes_.at(std::size_t(e));
  switch (n.kind) {
    case Kind::kEmpty:
      g.states[std::size_t(from)].eps.push_back(to);
      return;
    case Kind::kBytes:
      for (const auto& [lo, hi] : n.ranges) g.states[std::size_t(from)].edges.push_back({lo, hi, -1, to});
      return;
    case Kind::kRef:
      g.states[std::size_t(from)].edges.push_back({0, 0, n.rule, to});
      return;
    case Kind::kSeq: {
      if (n.kids.empty()) {
        g.states[std::size_t(from)].eps.push_back(to);
        return;
      }
      int32_t cur = from;
      for (std::size_t i = 0; i + 1 < n.kids.size(); ++i) {
        const int32_t mid = new_state(g);
        compile(g, n.kids[i], cur, mid);
        cur = mid;
      }
      compile(g, n.kids.back(), cur, to);
      return;
    }
    case Kind::kAlt:
      for (Expr k : n.kids) compile(g, k, from, to);
      return;
    case Kind::kRepeat: {
      int32_t cur = from;
      for (int i = 0; i < n.min; ++i) {
        const int32_t mid = new_state(g);
        compile(g, n.kids[0], cur, mid);
        cur = mid;
      }
      if (n.max < 0) {
        // A loop state of its own: the body's edges out of and into it never mix with `to`'s.
        const int32_t loop = new_state(g), back = new_state(g);
        g.states[std::size_t(cur)].eps.push_back(loop);
        compile(g, n.kids[0], loop, back);
        g.states[std::size_t(back)].eps.push_back(loop);
        g.states[std::size_t(loop)].eps.push_back(to);
        return;
      }
      for (int i = n.min; i < n.max; ++i) {
        g.states[std::size_t(cur)].eps.push_back(to);
        const int32_t mid = new_state(g);
        compile(g, n.kids[0], cur, mid);
        cur = mid;
      }
      g.states[std::size_t(cur)].eps.push_back(to);
      return;
    }
  }
}

Grammar GrammarBuilder::build(int root) const {
  Grammar g;
  g.root = root;
  g.rule_start.resize(rules_.size());
  std::vector<int32_t> finals(rules_.size());
  for (std::size_t r = 0; r < rules_.size(); ++r) {
    if (rules_[r].body < 0) throw std::invalid_argument("grammar: rule '" + rules_[r].name + "' is never defined");
    g.rule_start[r] = new_state(g);
    finals[r] = new_state(g);
    g.states[std::size_t(finals[r])].final = true;
    g.rule_names.push_back(rules_[r].name);
  }
  for (std::size_t r = 0; r < rules_.size(); ++r) compile(g, rules_[r].body, g.rule_start[r], finals[r]);
  return g;
}

std::vector<bool> productive_rules(const Grammar& g) {
  const std::size_t n = g.rule_start.size();
  // The rule each state belongs to, and each rule's callers, found by walking from its start.
  std::vector<int32_t> owner(g.states.size(), -1);
  std::vector<std::vector<int32_t>> callers(n);
  for (std::size_t r = 0; r < n; ++r) {
    std::vector<int32_t> stack{g.rule_start[r]};
    owner[std::size_t(g.rule_start[r])] = int32_t(r);
    while (!stack.empty()) {
      const int32_t s = stack.back();
      stack.pop_back();
      auto visit = [&](int32_t t) {
        if (owner[std::size_t(t)] < 0) {
          owner[std::size_t(t)] = int32_t(r);
          stack.push_back(t);
        }
      };
      for (int32_t t : g.states[std::size_t(s)].eps) visit(t);
      for (const Grammar::Edge& e : g.states[std::size_t(s)].edges) {
        visit(e.to);
        if (e.call >= 0) callers[std::size_t(e.call)].push_back(int32_t(r));
      }
    }
  }
  std::vector<bool> productive(n, false);
  std::vector<uint32_t> seen(g.states.size(), 0);  // == stamp: visited in this walk
  uint32_t stamp = 0;
  auto reaches_final = [&](std::size_t r) {
    ++stamp;
    std::vector<int32_t> stack{g.rule_start[r]};
    seen[std::size_t(g.rule_start[r])] = stamp;
    while (!stack.empty()) {
      const int32_t s = stack.back();
      stack.pop_back();
      const Grammar::State& st = g.states[std::size_t(s)];
      if (st.final) return true;
      auto go = [&](int32_t t) {
        if (seen[std::size_t(t)] != stamp) {
          seen[std::size_t(t)] = stamp;
          stack.push_back(t);
        }
      };
      for (int32_t t : st.eps) go(t);
      for (const Grammar::Edge& e : st.edges)
        if (e.call < 0 || productive[std::size_t(e.call)]) go(e.to);
    }
    return false;
  };
  std::vector<int32_t> work;
  for (std::size_t r = 0; r < n; ++r) work.push_back(int32_t(r));
  while (!work.empty()) {
    const int32_t r = work.back();
    work.pop_back();
    if (productive[std::size_t(r)] || !reaches_final(std::size_t(r))) continue;
    productive[std::size_t(r)] = true;
    for (int32_t c : callers[std::size_t(r)])
      if (!productive[std::size_t(c)]) work.push_back(c);
  }
  return productive;
}

namespace {
int utf8_length(uint32_t cp) { return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4; }

void encode(uint32_t cp, uint8_t* out) {
  switch (utf8_length(cp)) {
    case 1:
      out[0] = uint8_t(cp);
      return;
    case 2:
      out[0] = uint8_t(0xC0 | (cp >> 6));
      out[1] = uint8_t(0x80 | (cp & 0x3F));
      return;
    case 3:
      out[0] = uint8_t(0xE0 | (cp >> 12));
      out[1] = uint8_t(0x80 | ((cp >> 6) & 0x3F));
      out[2] = uint8_t(0x80 | (cp & 0x3F));
      return;
    default:
      out[0] = uint8_t(0xF0 | (cp >> 18));
      out[1] = uint8_t(0x80 | ((cp >> 12) & 0x3F));
      out[2] = uint8_t(0x80 | ((cp >> 6) & 0x3F));
      out[3] = uint8_t(0x80 | (cp & 0x3F));
  }
}

void split_utf8(GrammarBuilder& b, uint32_t lo, uint32_t hi, std::vector<Expr>& out) {
  if (lo > hi) return;
  // Surrogates have no UTF-8 form.
  if (lo <= 0xDFFF && hi >= 0xD800) {
    if (lo < 0xD800) split_utf8(b, lo, 0xD7FF, out);
    if (hi > 0xDFFF) split_utf8(b, 0xE000, hi, out);
    return;
  }
  // One encoded length at a time.
  for (uint32_t limit : {0x7Fu, 0x7FFu, 0xFFFFu}) {
    if (lo <= limit && hi > limit) {
      split_utf8(b, lo, limit, out);
      split_utf8(b, limit + 1, hi, out);
      return;
    }
  }
  // Until every byte position is an independent range: split where continuation bytes wrap.
  for (int i = 1; i < 4; ++i) {
    const uint32_t m = (1u << (6 * i)) - 1;
    if ((lo & ~m) != (hi & ~m)) {
      if ((lo & m) != 0) {
        split_utf8(b, lo, lo | m, out);
        split_utf8(b, (lo | m) + 1, hi, out);
        return;
      }
      if ((hi & m) != m) {
        split_utf8(b, lo, (hi & ~m) - 1, out);
        split_utf8(b, hi & ~m, hi, out);
        return;
      }
    }
  }
  uint8_t a[4], z[4];
  encode(lo, a);
  encode(hi, z);
  std::vector<Expr> parts;
  for (int i = 0; i < utf8_length(lo); ++i) parts.push_back(b.byte_range(a[i], z[i]));
  out.push_back(b.seq(std::move(parts)));
}
}  // namespace

Expr utf8_range(GrammarBuilder& b, uint32_t lo, uint32_t hi) {
  if (hi > 0x10FFFF) hi = 0x10FFFF;
  std::vector<Expr> out;
  split_utf8(b, lo, hi, out);
  if (out.empty()) throw std::invalid_argument("grammar: empty code point range");
  return b.alt(std::move(out));
}

}  // namespace pagedchat::structured
