// Writes the plugin's openclaw.plugin.json: the manifest from the source tree
// with `configSchema` set to Warden's JSON Schema (schema/warden.schema.json),
// copied unchanged. OpenClaw validates plugin config with TypeBox, which reads
// this schema's dialect (JSON Schema 2020-12: `$defs`, `$ref`) as it is; the
// only keyword it does not know, `format: "uint64"`, is an annotation to it.
// Usage: node assemble-manifest.mjs <source manifest> <schema> <output>

import fs from "node:fs";

const [source, schemaFile, output] = process.argv.slice(2);
const manifest = JSON.parse(fs.readFileSync(source, "utf8"));
if ("configSchema" in manifest) {
  throw new Error(`${source} must not carry configSchema: it is copied from ${schemaFile}`);
}
const schema = JSON.parse(fs.readFileSync(schemaFile, "utf8"));
if (schema.type !== "object" || typeof schema.properties !== "object") {
  throw new Error(`${schemaFile} is not an object schema`);
}
fs.writeFileSync(output, `${JSON.stringify({ ...manifest, configSchema: schema }, null, 2)}\n`);
