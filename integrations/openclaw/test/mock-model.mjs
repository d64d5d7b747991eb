// A loopback mock of an OpenAI-compatible chat-completions model, for driving
// real OpenClaw turns. It answers the first request of a turn with a tool call
// chosen by the test, and the request that carries the tool's result (a
// `role: "tool"` message after the assistant's call) with a final text that quotes that result, so a test
// can read what the model was told. Every request is recorded.

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

/**
 * Starts the mock on 127.0.0.1, port 0.
 * `plan(body)` decides the answer to a request without a tool result:
 * `{ toolCall: { name, arguments } }` or `{ text }`.
 */
export async function startMockModel({ plan }) {
  const requests = [];
  let calls = 0;
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
      // OpenClaw appends its own context message after the tool result, so
      // "the tool answered" means: a tool message after the last assistant message.
      const lastAssistant = messages.findLastIndex((m) => m?.role === "assistant");
      const toolResult = lastAssistant >= 0 ? messages.slice(lastAssistant + 1).findLast((m) => m?.role === "tool") : undefined;
      let answer;
      if (toolResult) {
        answer = { text: `The tool answered: ${messageText(toolResult)}` };
      } else {
        answer = plan(body) ?? { text: "Nothing to do." };
      }
      calls += 1;
      const id = `chatcmpl-mock-${calls}`;
      const model = body.model ?? "mock";
      const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
      let events;
      let message;
      if (answer.toolCall) {
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
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
