// ajv (JSON Schema draft 2020-12, with ajv-formats) as the outside reference for structured
// outputs: reads a JSON file [{"schema": S, "outputs": ["text", ...]}, ...] and prints, per case,
// per output, whether the text parses as JSON and validates against S (and ajv's errors if not).
// A schema ajv itself refuses prints {"schemaError": message} for its case.
//   node validate_json.mjs CASES.json
import { readFileSync } from "node:fs";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const cases = JSON.parse(readFileSync(process.argv[2], "utf8"));
const results = [];
for (const c of cases) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default ? addFormats.default(ajv) : addFormats(ajv);
  let validate;
  try {
    validate = ajv.compile(c.schema);
  } catch (e) {
    results.push({ schemaError: String(e.message) });
    continue;
  }
  const outputs = [];
  for (const text of c.outputs) {
    let value;
    try {
      value = JSON.parse(text);
    } catch (e) {
      outputs.push({ parses: false, valid: false, errors: String(e.message) });
      continue;
    }
    const valid = validate(value);
    outputs.push({ parses: true, valid, errors: valid ? "" : ajv.errorsText(validate.errors) });
  }
  results.push({ outputs });
}
process.stdout.write(JSON.stringify(results));
