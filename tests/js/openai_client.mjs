// The official OpenAI Node client (npm `openai`) against a running `pagedchat-cli serve`, as an
// outside program would use it. Prints one JSON object of what the server answered; the C++ test
// (tests/engine/entrypoints/test_server.cpp) asserts on it.
//   node openai_client.mjs completions BASE_URL MODEL
//   node openai_client.mjs chat BASE_URL MODEL API_KEY
//   node openai_client.mjs structured BASE_URL MODEL   (response_format json_schema / json_object,
//   vLLM's guided_choice, an unsupported keyword; outputs validated with ajv)
//   node openai_client.mjs tools BASE_URL MODEL   (tools with tool_choice auto; the reply forced into
//   the template's <tool_call> form by guided_regex; non-streamed, streamed, the client's stream helper;
//   tool_choice "required" and a named function, arguments validated with ajv; reasoning_content)
//   node openai_client.mjs images BASE_URL MODEL IMAGE OTHER_IMAGE   (image_url data: URLs: non-streamed and
//   streamed, the same image again, another image, two images; bad URLs, base64 and images refused)
//   node openai_client.mjs concurrent BASE_URL MODEL N   (N greedy requests at once, every other
//   one streamed; each asks for 20 + (7 i mod 90) tokens with ignore_eos)
import OpenAI from "openai";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const [mode, baseURL, model, apiKey] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: apiKey ?? "none", maxRetries: 0, timeout: 120000 });
const out = {};

async function error(fn) {
  try {
    await fn();
    return { status: 0 };
  } catch (e) {
    return { status: e.status ?? -1, name: e.constructor.name, message: e.message, param: e.param ?? null,
             type: e.type ?? null };
  }
}

async function collectStream(stream, pick) {
  let text = "", chunks = 0, finish = null, usage = null;
  for await (const chunk of stream) {
    ++chunks;
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) {
      text += pick(c) ?? "";
      if (c.finish_reason) finish = c.finish_reason;
    }
  }
  return { text, chunks, finish_reason: finish, usage };
}

if (mode === "completions") {
  out.models = (await client.models.list()).data.map((m) => m.id);
  const greedy = { model, prompt: "Once upon a time", max_tokens: 40, temperature: 0 };
  const c = await client.completions.create(greedy);
  out.completion = { text: c.choices[0].text, finish_reason: c.choices[0].finish_reason, usage: c.usage,
                     object: c.object, id: c.id };
  out.completion_stream = await collectStream(
      await client.completions.create({ ...greedy, stream: true, stream_options: { include_usage: true } }),
      (ch) => ch.text);
  const n2 = await client.completions.create({ model, prompt: "Lily and Tom", max_tokens: 24, temperature: 1,
                                               seed: 7, n: 2 });
  out.n2 = n2.choices.map((ch) => ({ index: ch.index, text: ch.text, finish_reason: ch.finish_reason }));
  const n2again = await client.completions.create({ model, prompt: "Lily and Tom", max_tokens: 24, temperature: 1,
                                                    seed: 7, n: 2 });
  out.n2_again = n2again.choices.map((ch) => ch.text);
  const stop = await client.completions.create({ ...greedy, max_tokens: 60, stop: ["Lily"] });
  out.stop = { text: stop.choices[0].text, finish_reason: stop.choices[0].finish_reason,
               stop_reason: stop.choices[0].stop_reason ?? null };
  const lp = await client.completions.create({ ...greedy, max_tokens: 5, logprobs: 3 });
  out.logprobs = lp.choices[0].logprobs;
  out.bad_temperature = await error(() => client.completions.create({ ...greedy, temperature: "hot" }));
  out.bad_model = await error(() => client.completions.create({ ...greedy, model: "no-such-model" }));
  out.too_long = await error(() => client.completions.create({ ...greedy, max_tokens: 100000 }));
  // Abort mid-stream: the client goes away after a few chunks; the server must free the request.
  const controller = new AbortController();
  let seen = 0;
  try {
    const s = await client.completions.create({ ...greedy, max_tokens: 400, stream: true, ignore_eos: true },
                                              { signal: controller.signal });
    for await (const chunk of s) {
      if (++seen === 3) {
        controller.abort();
        break;
      }
    }
  } catch (e) {
    out.abort_error = e.constructor.name;
  }
  out.abort_chunks = seen;
} else if (mode === "chat") {
  const messages = [{ role: "system", content: "You are terse." }, { role: "user", content: "Say hello." }];
  const req = { model, messages, max_tokens: 16, temperature: 0 };
  const c = await client.chat.completions.create(req);
  out.chat = { content: c.choices[0].message.content, role: c.choices[0].message.role,
               finish_reason: c.choices[0].finish_reason, usage: c.usage, object: c.object };
  out.chat_stream = await collectStream(
      await client.chat.completions.create({ ...req, stream: true }), (ch) => ch.delta?.content);
  const lp = await client.chat.completions.create({ ...req, max_tokens: 4, logprobs: true, top_logprobs: 3 });
  out.chat_logprobs = lp.choices[0].logprobs;
  const n2 = await client.chat.completions.create({ ...req, n: 2, temperature: 0.9, seed: 3 });
  out.chat_n2 = n2.choices.map((ch) => ch.index);
  const wrong = new OpenAI({ baseURL, apiKey: "wrong-key", maxRetries: 0 });
  out.wrong_key = await error(() => wrong.chat.completions.create(req));
  out.bad_messages = await error(() => client.chat.completions.create({ ...req, messages: [] }));
} else if (mode === "structured") {
  const schema = {
    type: "object",
    properties: { city: { type: "string", maxLength: 12 }, temp: { type: "integer", minimum: -40, maximum: 50 },
                  sunny: { type: "boolean" }, day: { type: "string", format: "date" } },
    required: ["city", "temp", "sunny"],
    additionalProperties: false,
  };
  const ajv = new Ajv2020({ strict: false });
  (addFormats.default ?? addFormats)(ajv);
  const validate = ajv.compile(schema);
  const check = (text) => {
    try {
      return validate(JSON.parse(text));
    } catch {
      return false;
    }
  };
  const req = { model, messages: [{ role: "user", content: "The weather as JSON?" }], max_tokens: 200,
                temperature: 1, response_format: { type: "json_schema", json_schema: { name: "weather", schema, strict: true } } };
  out.outputs = [];
  for (let seed = 0; seed < 4; ++seed) {
    const c = await client.chat.completions.create({ ...req, seed });
    const text = c.choices[0].message.content;
    out.outputs.push({ text, valid: check(text), finish_reason: c.choices[0].finish_reason });
  }
  const s = await collectStream(await client.chat.completions.create({ ...req, seed: 9, stream: true }),
                                (ch) => ch.delta?.content);
  out.stream = { text: s.text, valid: check(s.text), finish_reason: s.finish_reason };
  const o = await client.chat.completions.create({ ...req, seed: 1, max_tokens: 300, response_format: { type: "json_object" } });
  const otext = o.choices[0].message.content;
  let isObject = false;
  try {
    const v = JSON.parse(otext);
    isObject = v !== null && typeof v === "object" && !Array.isArray(v);
  } catch {}
  out.json_object = { text: otext, isObject, finish_reason: o.choices[0].finish_reason };
  const { response_format, ...plain } = req;
  const ch = await client.chat.completions.create({ ...plain, guided_choice: ["red", "green", "blue"] });
  out.choice = ch.choices[0].message.content;
  out.unsupported = await error(() => client.chat.completions.create(
      { ...req, response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "array", uniqueItems: true } } } }));
} else if (mode === "tools") {
  const tools = [{ type: "function", function: { name: "get_weather", description: "The weather in a city",
                   parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } }];
  const forced = '<tool_call>\\n\\{"name": "get_weather", "arguments": \\{"city": "Paris"\\}\\}\\n</tool_call>';
  const req = { model, messages: [{ role: "user", content: "What is the weather in Paris?" }], tools,
                tool_choice: "auto", max_tokens: 80, temperature: 0, guided_regex: forced };
  const c = await client.chat.completions.create(req);
  const m = c.choices[0].message;
  out.call = { content: m.content, tool_calls: m.tool_calls ?? null, finish_reason: c.choices[0].finish_reason };
  let content = "", finish = null;
  const calls = [];
  for await (const chunk of await client.chat.completions.create({ ...req, stream: true })) {
    for (const ch of chunk.choices) {
      if (ch.delta?.content) content += ch.delta.content;
      for (const tc of ch.delta?.tool_calls ?? []) {
        calls[tc.index] ??= { id: "", name: "", arguments: "" };
        if (tc.id) calls[tc.index].id = tc.id;
        if (tc.function?.name) calls[tc.index].name += tc.function.name;
        if (tc.function?.arguments) calls[tc.index].arguments += tc.function.arguments;
      }
      if (ch.finish_reason) finish = ch.finish_reason;
    }
  }
  out.stream = { content, calls, finish_reason: finish };
  const helper = client.beta.chat.completions.stream({ ...req });
  const final = await helper.finalChatCompletion();
  out.helper = { tool_calls: final.choices[0].message.tool_calls ?? null, finish_reason: final.choices[0].finish_reason };
  const plain = await client.chat.completions.create({ ...req, guided_regex: "Hello there" });
  out.plain = { content: plain.choices[0].message.content, tool_calls: plain.choices[0].message.tool_calls ?? null,
                finish_reason: plain.choices[0].finish_reason };
  // tool_choice "required" and a named function, by constrained decoding: the calls' arguments
  // validate (ajv) against their tool's parameters, sampled with several seeds, whole and streamed.
  // (A random model's strings run long: the city's length is bounded so that calls end in max_tokens.)
  const tools2 = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: {
                    city: { type: "string", maxLength: 10 }, days: { type: "integer", minimum: 1, maximum: 7 } },
                    required: ["city"] } } },
                  { type: "function", function: { name: "get_time", parameters: { type: "object",
                  properties: { zone: { type: "string", enum: ["UTC", "CET", "KST"] }, hours: { type: "integer",
                  minimum: 0, maximum: 23 } }, required: ["zone", "hours"] } } }];
  const ajv = new Ajv2020({ strict: false });
  const validators = Object.fromEntries(tools2.map((t) => [t.function.name, ajv.compile(t.function.parameters)]));
  const checkCalls = (calls) => (calls ?? []).map((c) => {
    let args = null;
    try { args = JSON.parse(c.function?.arguments ?? c.arguments); } catch {}
    const name = c.function?.name ?? c.name;
    return { name, id: c.id ?? "", valid: args !== null && (validators[name]?.(args) ?? false) };
  });
  const base = { model, messages: req.messages, tools: tools2, max_tokens: 300, temperature: 1 };
  async function streamed(r) {
    const calls = [];
    let content = "", finish = null, pieces = 0;
    for await (const chunk of await client.chat.completions.create({ ...r, stream: true })) {
      for (const ch of chunk.choices) {
        if (ch.delta?.content) content += ch.delta.content;
        for (const tc of ch.delta?.tool_calls ?? []) {
          calls[tc.index] ??= { id: "", name: "", arguments: "" };
          if (tc.id) calls[tc.index].id = tc.id;
          if (tc.function?.name) calls[tc.index].name += tc.function.name;
          if (tc.function?.arguments) { calls[tc.index].arguments += tc.function.arguments; ++pieces; }
        }
        if (ch.finish_reason) finish = ch.finish_reason;
      }
    }
    return { content, calls: checkCalls(calls), finish_reason: finish, pieces };
  }
  // (One call each: a random model's array of calls need not end within max_tokens.)
  out.required = [];
  for (const seed of [1, 2, 3, 4]) {
    const r = await client.chat.completions.create({ ...base, seed, tool_choice: "required",
                                                     parallel_tool_calls: false });
    out.required.push({ content: r.choices[0].message.content, calls: checkCalls(r.choices[0].message.tool_calls),
                        finish_reason: r.choices[0].finish_reason });
  }
  out.required_stream = await streamed({ ...base, seed: 5, tool_choice: "required", parallel_tool_calls: false });
  const named = { ...base, tool_choice: { type: "function", function: { name: "get_time" } } };
  out.named = [];
  for (const seed of [1, 2, 3]) {
    const r = await client.chat.completions.create({ ...named, seed });
    out.named.push({ content: r.choices[0].message.content, calls: checkCalls(r.choices[0].message.tool_calls),
                     finish_reason: r.choices[0].finish_reason });
  }
  out.named_stream = await streamed({ ...named, seed: 7 });
  out.unknown_name = await error(() => client.chat.completions.create(
      { ...base, tool_choice: { type: "function", function: { name: "no_such_tool" } } }));
  out.required_and_format = await error(() => client.chat.completions.create(
      { ...base, tool_choice: "required", response_format: { type: "json_object" } }));
  // Reasoning (Qwen3's <think> block, forced) comes back as reasoning_content, apart from the answer
  // and from a call.
  const think = { model, messages: req.messages, max_tokens: 80, temperature: 0,
                  guided_regex: "<think>\\nLet me see\\.\\n</think>\\n\\nHello there" };
  const t = await client.chat.completions.create(think);
  out.reasoning = { reasoning: t.choices[0].message.reasoning_content ?? null, content: t.choices[0].message.content };
  let rs = "", rc = "";
  for await (const chunk of await client.chat.completions.create({ ...think, stream: true }))
    for (const ch of chunk.choices) { rs += ch.delta?.reasoning_content ?? ""; rc += ch.delta?.content ?? ""; }
  out.reasoning_stream = { reasoning: rs, content: rc };
  const tc = await client.chat.completions.create({ ...req, guided_regex: "<think>\\nA call\\.\\n</think>\\n\\n" + forced });
  out.reasoning_call = { reasoning: tc.choices[0].message.reasoning_content ?? null,
                         content: tc.choices[0].message.content, calls: checkCalls(tc.choices[0].message.tool_calls) };
  if (m.tool_calls?.length) {
    const next = await client.chat.completions.create({ model, tools, max_tokens: 5, temperature: 0, messages: [
      ...req.messages, m, { role: "tool", tool_call_id: m.tool_calls[0].id, content: "Sunny, 21 C" }] });
    out.next_finish = next.choices[0].finish_reason;
  }
} else if (mode === "images") {
  const fs = await import("node:fs");
  const dataUrl = (path, type) => `data:${type};base64,${fs.readFileSync(path).toString("base64")}`;
  const [image, other] = process.argv.slice(5);
  const ask = (parts) => ({ model, max_tokens: 8, temperature: 0, messages: [{ role: "user", content: parts }] });
  const withImage = (url) => ask([{ type: "image_url", image_url: { url } }, { type: "text", text: "What is it?" }]);
  const first = await client.chat.completions.create(withImage(dataUrl(image, "image/png")));
  out.content = first.choices[0].message.content;
  out.prompt_tokens = first.usage.prompt_tokens;
  const textOnly = await client.chat.completions.create(ask([{ type: "text", text: "What is it?" }]));
  out.text_prompt_tokens = textOnly.usage.prompt_tokens;
  const s = await collectStream(
      await client.chat.completions.create({ ...withImage(dataUrl(image, "image/png")), stream: true,
                                             stream_options: { include_usage: true } }),
      (c) => c.delta?.content);
  out.stream_content = s.text;
  out.stream_cached = s.usage?.prompt_tokens_details?.cached_tokens ?? -1;
  const again = await client.chat.completions.create(withImage(dataUrl(image, "image/png")));
  out.again_content = again.choices[0].message.content;
  out.again_cached = again.usage.prompt_tokens_details?.cached_tokens ?? -1;
  const swapped = await client.chat.completions.create(withImage(dataUrl(other, "image/png")));
  out.other_prompt_tokens = swapped.usage.prompt_tokens;
  out.other_cached = swapped.usage.prompt_tokens_details?.cached_tokens ?? -1;
  const two = await client.chat.completions.create(ask([
    { type: "text", text: "Compare" }, { type: "image_url", image_url: { url: dataUrl(image, "image/png") } },
    { type: "image_url", image_url: { url: dataUrl(other, "image/png") } }]));
  out.two_prompt_tokens = two.usage.prompt_tokens;
  out.remote = await error(() => client.chat.completions.create(withImage("https://example.com/cat.png")));
  out.bad_base64 = await error(() => client.chat.completions.create(withImage("data:image/png;base64,@@@@")));
  out.not_image = await error(() => client.chat.completions.create(
      withImage(`data:image/png;base64,${Buffer.from("hello, not a picture").toString("base64")}`)));
  const png = fs.readFileSync(image);
  out.truncated = await error(() => client.chat.completions.create(
      withImage(`data:image/png;base64,${png.subarray(0, png.length - 30).toString("base64")}`)));
  out.after = (await client.chat.completions.create(ask([{ type: "text", text: "Still there?" }]))).choices[0]
      .finish_reason;
} else if (mode === "concurrent") {
  const n = Number(apiKey);
  const one = async (i) => {
    const req = { model, prompt: "Once upon a time", max_tokens: 20 + ((7 * i) % 90), temperature: 0,
                  ignore_eos: true };
    try {
      if (i % 2) {
        const s = await collectStream(
            await client.completions.create({ ...req, stream: true, stream_options: { include_usage: true } }),
            (ch) => ch.text);
        return { i, max_tokens: req.max_tokens, stream: true, text: s.text, finish_reason: s.finish_reason,
                 completion_tokens: s.usage?.completion_tokens ?? -1 };
      }
      const c = await client.completions.create(req);
      return { i, max_tokens: req.max_tokens, stream: false, text: c.choices[0].text,
               finish_reason: c.choices[0].finish_reason, completion_tokens: c.usage.completion_tokens };
    } catch (e) {
      return { i, max_tokens: req.max_tokens, error: `${e.constructor.name}: ${e.status ?? ""} ${e.message}` };
    }
  };
  out.results = await Promise.all(Array.from({ length: n }, (_, i) => one(i)));
} else {
  console.error(`unknown mode ${mode}`);
  process.exit(2);
}
console.log(JSON.stringify(out));
