// Renders chat templates with @huggingface/jinja (the reference renderer, pinned in package.json)
// for the differential test of pagedchat's interpreter (tests/engine/text/test_jinja_reference.cpp).
//
//   node render_chat_templates.mjs TEMPLATE CONTEXT.json [--now=SECONDS]
//       prints the rendering to stdout; an error goes to stderr with exit status 1
//   node render_chat_templates.mjs --batch MANIFEST.json RESULTS.json
//       MANIFEST: [{"id", "template" (text) or "template_file", "context" (object) or
//       "context_file", "now" (seconds, optional)}]; RESULTS: {id: {"ok": true, "text"} or
//       {"ok": false, "error"}}
//
// TEMPLATE may be a tokenizer_config.json (its "chat_template"). With a `now`, strftime_now reads
// that instant (Date is replaced while rendering); run with TZ=UTC for a fixed time zone.
import { readFileSync, writeFileSync } from "node:fs";
import { Template } from "@huggingface/jinja";

function templateText(path) {
  const text = readFileSync(path, "utf8");
  if (!path.endsWith(".json")) return text;
  const ct = JSON.parse(text).chat_template;
  if (typeof ct === "string") return ct;
  const entry = ct.find((e) => e.name === "default") ?? ct[0];
  return entry.template;
}

const RealDate = Date;

function withNow(seconds, fn) {
  if (seconds === undefined || seconds === null) return fn();
  const ms = seconds * 1000;
  globalThis.Date = class extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(ms);
      else super(...args);
    }
    static now() {
      return ms;
    }
  };
  try {
    return fn();
  } finally {
    globalThis.Date = RealDate;
  }
}

// A lone surrogate (s[0] of an emoji) cannot travel as UTF-8: written to stdout it becomes U+FFFD,
// so it does here too (and in the results JSON).
function render(template, context, now) {
  return withNow(now, () => new Template(template).render(context)).toWellFormed();
}

const args = process.argv.slice(2);
if (args[0] === "--batch") {
  const manifest = JSON.parse(readFileSync(args[1], "utf8"));
  const results = {};
  for (const item of manifest) {
    try {
      const template = item.template ?? templateText(item.template_file);
      const context = item.context ?? JSON.parse(readFileSync(item.context_file, "utf8"));
      results[item.id] = { ok: true, text: render(template, context, item.now) };
    } catch (e) {
      results[item.id] = { ok: false, error: String(e?.message ?? e) };
    }
  }
  writeFileSync(args[2], JSON.stringify(results));
} else {
  let now;
  const files = [];
  for (const a of args) {
    if (a.startsWith("--now=")) now = Number(a.slice(6));
    else files.push(a);
  }
  if (files.length !== 2) {
    process.stderr.write("usage: node render_chat_templates.mjs TEMPLATE CONTEXT.json [--now=SECONDS]\n");
    process.exit(2);
  }
  try {
    const out = render(templateText(files[0]), JSON.parse(readFileSync(files[1], "utf8")), now);
    process.stdout.write(out);
  } catch (e) {
    process.stderr.write(`error: ${e?.message ?? e}\n`);
    process.exit(1);
  }
}
