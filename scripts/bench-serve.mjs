// Load benchmark of `pagedchat-cli serve` with the official OpenAI client (tests/js/node_modules):
// C concurrent streaming clients, each sending R greedy completions of distinct prompts. Every
// streamed text is compared with the same prompts run offline by `pagedchat-cli generate` (one
// batch; the engine is batch-invariant, so any token lost, duplicated or reordered under load
// shows as a difference). Prints throughput and TTFT / ITL / e2e percentiles (ms) as JSON.
//   node scripts/bench-serve.mjs BASE_URL MODEL --cli build/cli/pagedchat-cli --model-path PATH
//        [--clients 64] [--requests 2] [--max-tokens 64] [--threads N]
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, "../tests/js/package.json"));
const OpenAI = require("openai").default ?? require("openai");

const args = process.argv.slice(2);
const [baseURL, model] = args;
const opt = (name, def) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : def;
};
const sopt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const clients = opt("--clients", 64), perClient = opt("--requests", 2), maxTokens = opt("--max-tokens", 64);
const client = new OpenAI({ baseURL, apiKey: process.env.PAGEDCHAT_API_KEY ?? "none", maxRetries: 0, timeout: 600000 });
const words = ["Once", "Lily", "Tom", "The dog", "A red ball", "One day", "The sun", "Mom", "A bird", "The park"];
const promptOf = (c, r) => `${words[c % words.length]} ${words[(c * 7 + r * 3) % words.length]} ${c} ${r}`;

const ttft = [], itl = [], e2e = [];
const streamed = new Map();
let tokens = 0;
const t0 = performance.now();
await Promise.all(Array.from({ length: clients }, async (_, c) => {
  for (let r = 0; r < perClient; ++r) {
    const prompt = promptOf(c, r);
    const start = performance.now();
    let last = 0, text = "";
    const stream = await client.completions.create({ model, prompt, max_tokens: maxTokens, temperature: 0,
                                                     stream: true, stream_options: { include_usage: true } });
    for await (const chunk of stream) {
      if (chunk.usage) tokens += chunk.usage.completion_tokens;
      const piece = chunk.choices[0]?.text ?? "";
      if (!piece) continue;
      const now = performance.now();
      if (!last) ttft.push(now - start);
      else itl.push(now - last);
      last = now;
      text += piece;
    }
    e2e.push(performance.now() - start);
    streamed.set(prompt, text);
  }
}));
const wall = (performance.now() - t0) / 1000;

// Offline: the same prompts in one `generate` call.
const prompts = [...streamed.keys()];
const offline = JSON.parse(execFileSync(sopt("--cli"), [
  "generate", "--model", sopt("--model-path"), "--temperature", "0", "--max-tokens", String(maxTokens), "--json",
  "--threads", String(opt("--threads", 0)), ...prompts.flatMap((p) => ["--prompt", p])], { maxBuffer: 1 << 28 }));
let mismatches = 0;
prompts.forEach((prompt, i) => {
  const alone = offline[i].outputs[0].text;
  if (alone !== streamed.get(prompt)) {
    ++mismatches;
    if (mismatches <= 3) console.error(`mismatch for ${JSON.stringify(prompt)}:\n  served  ${JSON.stringify(streamed.get(prompt))}\n  offline ${JSON.stringify(alone)}`);
  }
});
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? +s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))].toFixed(1) : null;
};
const summary = (xs) => ({ p50: pct(xs, 50), p90: pct(xs, 90), p99: pct(xs, 99) });
console.log(JSON.stringify({
  clients, requests: streamed.size, max_tokens: maxTokens, wall_s: +wall.toFixed(2),
  output_tokens: tokens, output_tok_per_s: +(tokens / wall).toFixed(1),
  ttft_ms: summary(ttft), itl_ms: summary(itl), e2e_ms: summary(e2e), mismatches,
}));
process.exit(mismatches ? 1 : 0);
