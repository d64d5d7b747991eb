// A loopback mock of the Telegram Bot API, enough for OpenClaw's bundled
// telegram channel to deliver a reply: it records every method call and
// answers `sendMessage` with the message it would have created.

import http from "node:http";

export async function startMockTelegram() {
  const calls = [];
  let nextId = 1;
  const server = http.createServer((req, res) => {
    const parts = [];
    req.on("data", (c) => parts.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(parts).toString("utf8");
      let params = {};
      try {
        if (raw && String(req.headers["content-type"] ?? "").includes("json")) params = JSON.parse(raw);
        else if (raw) params = Object.fromEntries(new URLSearchParams(raw));
      } catch {
        params = { raw };
      }
      const method = (req.url ?? "").split("?")[0].split("/").pop();
      calls.push({ method, params });
      let result = true;
      if (method === "getMe") {
        result = { id: 4242, is_bot: true, first_name: "Warden Test", username: "warden_test_bot", can_join_groups: true, can_read_all_group_messages: false, supports_inline_queries: false };
      } else if (method === "sendMessage") {
        const chatId = Number(params.chat_id) || params.chat_id;
        result = { message_id: nextId++, date: Math.floor(Date.now() / 1000), chat: { id: chatId, type: "private" }, text: params.text };
      } else if (method === "getUpdates") {
        result = [];
      }
      const payload = JSON.stringify({ ok: true, result });
      res.socket?.setNoDelay(true);
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(payload) });
      res.end(payload);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return { apiRoot: `http://127.0.0.1:${port}`, calls, close: () => new Promise((resolve) => server.close(resolve)) };
}
