// An agent that connects one MCP server which ignores the end of stdin and SIGTERM, says "up",
// then leaves through process.exit ("exit") or waits to be killed ("wait"), held by its stdin.
//   node mcp-parent.mjs <dist/index.js> <fault server> <exit|wait> <marker>
const [entry, server, how, marker] = process.argv.slice(2);
const { connectMcpServers } = await import(entry);
await connectMcpServers({
  mcpServers: { f: { command: process.execPath, args: [server, "ignore-stdin", marker] } },
});
process.stdout.write("up\n");
if (how === "exit") process.exit(0);
process.stdin.resume();
