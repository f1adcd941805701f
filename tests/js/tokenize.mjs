// Reference tokenization with transformers.js (@lenml/tokenizers 3.7.2, installed in
// tests/js/node_modules by scripts/install-deps.sh): loads a tokenizer.json (and the
// tokenizer_config.json beside it, if any) and prints one line of ids per input text.
//
//   node tests/js/tokenize.mjs TOKENIZER_JSON TEXTS_JSON [--plain] [--decode] [--add-special]
//
// TEXTS_JSON: a file holding a JSON array of strings. Output: a JSON array with, per text,
// {"ids": [...]} (and "text": decode(ids) with --decode), or {"error": "..."} when
// transformers.js throws on that text. No special tokens are added
// (add_special_tokens=false) unless --add-special (the post-processor's BOS/EOS). Special tokens in the text are matched as transformers.js always
// does; --plain first removes the special added tokens from the tokenizer (so their strings are
// tokenized as the characters they are: Hugging Face's split_special_tokens=True).
import { readFileSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const { TokenizerLoader } = await import(join(here, "node_modules/@lenml/tokenizers/dist/main.mjs"));

const args = process.argv.slice(2);
const plain = args.includes("--plain");
const decode = args.includes("--decode");
const addSpecial = args.includes("--add-special");
const [jsonPath, textsPath] = args.filter((a) => !a.startsWith("--"));
if (!jsonPath || !textsPath) {
  console.error("usage: node tokenize.mjs TOKENIZER_JSON TEXTS_JSON [--plain] [--decode]");
  process.exit(2);
}
const tokenizerJSON = JSON.parse(readFileSync(jsonPath, "utf8"));
const configPath = join(dirname(jsonPath), "tokenizer_config.json");
const tokenizerConfig = existsSync(configPath) ? JSON.parse(readFileSync(configPath, "utf8")) : {};
if (plain) {
  tokenizerJSON.added_tokens = (tokenizerJSON.added_tokens ?? []).filter((t) => !t.special);
  delete tokenizerConfig.added_tokens_decoder;
  tokenizerConfig.additional_special_tokens = [];
}
const tokenizer = TokenizerLoader.fromPreTrained({ tokenizerJSON, tokenizerConfig });
const texts = JSON.parse(readFileSync(textsPath, "utf8"));
const out = texts.map((t) => {
  try {
    const ids = tokenizer.encode(t, { add_special_tokens: addSpecial });
    const r = { ids };
    if (decode)
      r.text = ids.length ? tokenizer.decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false }) : "";
    return r;
  } catch (e) {
    return { error: String(e && e.message ? e.message : e) };
  }
});
process.stdout.write(JSON.stringify(out) + "\n");
