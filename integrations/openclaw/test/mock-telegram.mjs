// A loopback mock of the Telegram Bot API, enough for OpenClaw's bundled
// telegram channel: it records every method call, answers `sendMessage` with
// the message it would have created, and serves queued inbound updates to
// `getUpdates` (long polling), so a test can play a person writing to the bot.

import http from "node:http";

export async function startMockTelegram() {
  const calls = [];
  const updates = [];
  const waiters = [];
  let nextId = 1;
  let nextUpdate = 1;
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
        // An offset confirms every earlier update: they are never served again.
        const offset = Number(params.offset ?? 0);
        while (updates.length > 0 && updates[0].update_id < offset) updates.shift();
        const ready = () => updates.filter((u) => u.update_id >= offset);
        if (ready().length === 0) {
          // Long polling: hold the request until an update arrives or a second passes.
          const waiter = () => reply(ready());
          waiters.push(waiter);
          setTimeout(() => {
            const i = waiters.indexOf(waiter);
            if (i >= 0) waiters.splice(i, 1);
            reply(ready());
          }, 1_000);
          return;
        }
        result = ready();
      }
      reply(result);
      function reply(value) {
        if (res.writableEnded) return;
        const payload = JSON.stringify({ ok: true, result: value });
        res.socket?.setNoDelay(true);
        res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(payload) });
        res.end(payload);
      }
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  /** Queues a private message from a person to the bot. */
  const send = ({ chatId, fromId, name, text }) => {
    updates.push({
      update_id: nextUpdate++,
      message: {
        message_id: 1000 + nextUpdate,
        date: Math.floor(Date.now() / 1000),
        chat: { id: chatId, type: "private", first_name: name },
        from: { id: fromId, is_bot: false, first_name: name, language_code: "en" },
        text,
      },
    });
    for (const waiter of waiters.splice(0)) waiter();
  };
  const close = () => {
    for (const waiter of waiters.splice(0)) waiter();
    server.closeAllConnections?.();
    return new Promise((resolve) => server.close(resolve));
  };
  return { apiRoot: `http://127.0.0.1:${port}`, calls, send, close };
}
