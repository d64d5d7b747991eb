// A loopback mock of an OpenAI-compatible chat-completions model, for driving
// real OpenClaw turns. The test scripts each turn as a list of tool calls
// (`script([...])`); the mock answers with the next one each time OpenClaw
// brings back the result of the previous one, and then with a final text that
// quotes every tool result of the turn, so a test can read what the model was
// told. OpenClaw streams (`stream: true`); plain JSON is answered too. Every
// request is recorded.

import http from "node:http";

/** The text of a chat message, whether `content` is a string or a list of parts. */
export function messageText(message) {
  const content = message?.content;
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((part) => (typeof part === "string" ? part : (part?.text ?? ""))).join("");
  return "";
}

function chunk(id, model, delta, finish) {
  return {
    id,
    object: "chat.completion.chunk",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}

/** Tool-call IDs as OpenClaw may echo them back (it drops punctuation). */
const idKey = (id) => String(id ?? "").replace(/[^A-Za-z0-9]/g, "");

/** Starts the mock on 127.0.0.1, port 0. */
export async function startMockModel() {
  const requests = [];
  let calls = 0;
  let steps = [];
  let issued = new Set();
  let finalText = undefined;
  const server = http.createServer((req, res) => {
    const parts = [];
    req.on("data", (c) => parts.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(parts).toString("utf8");
      let body = null;
      try {
        body = raw ? JSON.parse(raw) : null;
      } catch {
        body = null;
      }
      requests.push({ method: req.method, url: req.url, headers: req.headers, body });
      res.socket?.setNoDelay(true);
      if (req.method === "GET" && req.url.endsWith("/models")) {
        const payload = JSON.stringify({ object: "list", data: [{ id: "mock", object: "model", owned_by: "test" }] });
        res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(payload) });
        res.end(payload);
        return;
      }
      if (req.method !== "POST" || !req.url.endsWith("/chat/completions") || !body) {
        res.writeHead(404, { "content-type": "text/plain" });
        res.end("not found");
        return;
      }
      const messages = Array.isArray(body.messages) ? body.messages : [];
      // Results of this turn's calls: OpenClaw appends its own context message
      // after them, so they are found by ID, not by position.
      const results = messages.filter((m) => m?.role === "tool" && issued.has(idKey(m.tool_call_id))).map(messageText);
      let answer;
      if (results.length < steps.length) answer = { toolCall: steps[results.length] };
      else answer = { text: finalText ?? (results.length ? `The tools answered: ${results.join(" | ")}` : "Nothing to do.") };
      calls += 1;
      const id = `chatcmpl-mock-${calls}`;
      const model = body.model ?? "mock";
      const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
      let events;
      let message;
      if (answer.toolCall) {
        issued.add(idKey(`call_mock_${calls}`));
        const call = {
          index: 0,
          id: `call_mock_${calls}`,
          type: "function",
          function: { name: answer.toolCall.name, arguments: JSON.stringify(answer.toolCall.arguments) },
        };
        events = [
          chunk(id, model, { role: "assistant", content: null, tool_calls: [call] }, null),
          { ...chunk(id, model, {}, "tool_calls"), usage },
        ];
        message = { role: "assistant", content: null, tool_calls: [{ ...call, index: undefined }] };
      } else {
        events = [chunk(id, model, { role: "assistant", content: answer.text }, null), { ...chunk(id, model, {}, "stop"), usage }];
        message = { role: "assistant", content: answer.text };
      }
      if (body.stream) {
        const text = events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("") + "data: [DONE]\n\n";
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", "content-length": Buffer.byteLength(text) });
        res.end(text);
      } else {
        const payload = JSON.stringify({
          id,
          object: "chat.completion",
          created: Math.floor(Date.now() / 1000),
          model,
          choices: [{ index: 0, message, finish_reason: answer.toolCall ? "tool_calls" : "stop" }],
          usage,
        });
        res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(payload) });
        res.end(payload);
      }
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    /** Scripts the next turn: these tool calls in order, then `text` (or a text quoting the tool results). */
    script(toolCalls, text) {
      steps = toolCalls;
      issued = new Set();
      finalText = text;
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
