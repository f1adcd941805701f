// A deliberately faulty MCP server over stdio for the client's bad-input tests (the well-behaved
// ones are the npm reference servers). Speaks just enough of MCP (initialize, tools/list,
// tools/call) to get to its fault:
//   node misbehaving_mcp.mjs noise      garbage lines on stdout before every answer
//   node misbehaving_mcp.mjs huge       tools/call "big" answers 50 MB of text; "small" answers "ok"
//   node misbehaving_mcp.mjs paged      9 tools over 3 pages (nextCursor); one has no schema, one no name
//   node misbehaving_mcp.mjs manytools  10 MB of tools/list (5000 tools)
//   node misbehaving_mcp.mjs crash      exits (status 3, a line on stderr) on tools/call
//   node misbehaving_mcp.mjs hang       never answers initialize
//   node misbehaving_mcp.mjs old        answers initialize with protocol version 2024-11-05
import { createInterface } from "node:readline";

const mode = process.argv[2];
const send = (m) => process.stdout.write(JSON.stringify(m) + "\n");
const tool = (name, schema) => ({ name, description: `tool ${name}`, inputSchema: schema ?? { type: "object" } });

createInterface({ input: process.stdin }).on("line", (line) => {
  const m = JSON.parse(line);
  if (m.id === undefined) return;  // notifications
  if (mode === "noise") process.stdout.write("Server starting... not JSON\n{broken json\n[1, 2]\n");
  const reply = (result) => send({ jsonrpc: "2.0", id: m.id, result });
  if (m.method === "initialize") {
    if (mode === "hang") return;
    return reply({ protocolVersion: mode === "old" ? "2024-11-05" : "2025-06-18", capabilities: { tools: {} },
                   serverInfo: { name: "misbehaving", version: "0.1" } });
  }
  if (m.method === "tools/list") {
    if (mode === "paged") {
      const page = Number(m.params?.cursor ?? 0);
      const tools = [0, 1, 2].map((i) => tool(`t${page * 3 + i}`));
      if (page === 1) tools[1] = { name: "no_schema", inputSchema: "not a schema" };
      if (page === 2) tools[2] = { description: "no name" };
      return reply({ tools, ...(page < 2 ? { nextCursor: String(page + 1) } : {}) });
    }
    if (mode === "manytools")
      return reply({ tools: Array.from({ length: 5000 }, (_, i) => ({ ...tool(`tool_${i}`), description: "x".repeat(2000) })) });
    return reply({ tools: [tool("big"), tool("small")] });
  }
  if (m.method === "tools/call") {
    if (mode === "crash") {
      process.stderr.write("fatal: the tool crashed\n");
      process.exit(3);
    }
    if (m.params.name === "big") return reply({ content: [{ type: "text", text: "y".repeat(50 * 1024 * 1024) }] });
    return reply({ content: [{ type: "text", text: "ok" }] });
  }
  send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: `Method not found: ${m.method}` } });
});
