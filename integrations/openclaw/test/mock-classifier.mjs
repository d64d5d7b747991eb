// A loopback mock of a chat-completions classifier speaking Warden's logprob
// protocol (`max_tokens: 1`, `logprobs: true`, `top_logprobs`): it answers
// every question "Yes" with the probability the test sets, and records each
// request so a test can check what was sent (and what was not).

import http from "node:http";

export async function startMockClassifier({ yes = 0.95 } = {}) {
  const requests = [];
  const server = http.createServer((req, res) => {
    const parts = [];
    req.on("data", (c) => parts.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(parts).toString("utf8");
      let body = null;
      try {
        body = JSON.parse(raw);
      } catch {
        body = null;
      }
      requests.push({ method: req.method, url: req.url, headers: req.headers, raw, body });
      const top = [
        { token: "Yes", logprob: Math.log(yes), bytes: [89, 101, 115] },
        { token: "No", logprob: Math.log(1 - yes), bytes: [78, 111] },
        { token: "yes", logprob: -9, bytes: [121, 101, 115] },
        { token: "no", logprob: -9.5, bytes: [110, 111] },
        { token: "Maybe", logprob: -12, bytes: [77, 97, 121, 98, 101] },
      ];
      const payload = JSON.stringify({
        id: `chatcmpl-classifier-${requests.length}`,
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model: body?.model ?? "classifier",
        choices: [
          {
            index: 0,
            message: { role: "assistant", content: "Yes" },
            logprobs: { content: [{ token: "Yes", logprob: Math.log(yes), bytes: [89, 101, 115], top_logprobs: top }] },
            finish_reason: "length",
          },
        ],
        usage: { prompt_tokens: 50, completion_tokens: 1, total_tokens: 51 },
      });
      res.socket?.setNoDelay(true);
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(payload) });
      res.end(payload);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}/v1`, requests, close: () => new Promise((resolve) => server.close(resolve)) };
}
