"""End to end: the real LiteLLM proxy (`litellm --config ...`) with the Warden
guardrail, in front of a loopback mock model, driven by the `openai` client.

    python e2e.py WORK_DIR COMPONENT HOSTILE_COMPONENT [WARDEN_BINARY]

Two proxies run, each on a free 127.0.0.1 port:

* `main`: the documented configuration (`warden` guardrail, `default_on`,
  `mode: [pre_call, post_call]`) over a policy with one safety scenario judged
  by the mock model's classifier endpoint and the tool-call judge's defaults.
* `failures`: guardrails chosen per request (`guardrails: [...]` in the
  request), each broken in one way: the component missing, the component
  random bytes, the configuration refused, the hostile test guest (which spins
  on turns and crashes on answers and on the tool `crash`), and one with
  `warden_tool_calls: refuse`.

Every decision check asserts the decision and the rule that decided. The
commands in the tool calls are strings in JSON; nothing runs them.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import traceback
from typing import Any, Callable, Dict, List, Optional

import openai

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_PARENT = os.path.dirname(HERE)
WORK = os.path.abspath(sys.argv[1])
WASM = os.path.abspath(sys.argv[2])
HOSTILE = os.path.abspath(sys.argv[3])
WARDEN_BIN = os.path.abspath(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[4] else None
VENV_BIN = os.path.dirname(sys.executable)
# How long a proxy may take to start, in seconds.
START_TIMEOUT_S = 120
CLASSIFIER_KEY_ENV = "WARDEN_E2E_CLASSIFIER_KEY"
SALARY_PROMPT = "This requester is not approved for pay details: say so and share none."

sys.path.insert(0, HERE)
from mock_model import SECRET  # noqa: E402  (the mock's made-up key, to check it never arrives)


class Checks:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    def run(self, name: str, fn: Callable[[], None]) -> None:
        try:
            fn()
        except Exception:
            self.failed += 1
            print(f"FAIL {name}")
            traceback.print_exc()
            return
        self.passed += 1
        print(f"ok   {name}")


def check(condition: bool, what: str) -> None:
    if not condition:
        raise AssertionError(what)
    print(f"       - {what}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(path: str, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(path):
            with open(path) as f:
                return f.read().strip()
        time.sleep(0.05)
    raise RuntimeError(f"{path} did not appear within {timeout} s")


# the mock model -------------------------------------------------------------------
if os.path.isdir(WORK):
    shutil.rmtree(WORK)
os.makedirs(WORK)
MODEL_LOG = os.path.join(WORK, "model-requests.jsonl")
open(MODEL_LOG, "w").close()
_model = subprocess.Popen(
    [sys.executable, os.path.join(HERE, "mock_model.py"), os.path.join(WORK, "model.port"), MODEL_LOG],
    stdout=subprocess.DEVNULL,
    stderr=open(os.path.join(WORK, "model.log"), "w"),
)
MODEL_URL = f"http://127.0.0.1:{wait_for(os.path.join(WORK, 'model.port'), 10)}/v1"


def model_requests() -> List[Dict[str, Any]]:
    with open(MODEL_LOG) as f:
        return [json.loads(line) for line in f if line.strip()]


def model_requests_since(n: int, kind: str = "model") -> List[Dict[str, Any]]:
    return [r["body"] for r in model_requests()[n:] if r["kind"] == kind]


# configurations ---------------------------------------------------------------------
POLICY = {
    "destinations": [{"name": "classifier", "baseUrl": MODEL_URL, "credential": {"env": CLASSIFIER_KEY_ENV}}],
    "safety": {
        "enabled": True,
        "timeoutMs": 5000,
        "classifier": {"enabled": True, "destination": "classifier", "model": "small-model"},
        "scenarios": [
            {
                "id": "salaries",
                "instructions": "Requests about a specific employee's salary, pay or compensation.",
                "flaggedPrompt": SALARY_PROMPT,
                "approvedRequestors": [{"name": "Dani", "provider": "litellm", "accountId": "litellm", "senderId": "U-dani"}],
            }
        ],
    },
    "tools": {},
}


def write_json(name: str, value: Any) -> str:
    path = os.path.join(WORK, name)
    with open(path, "w") as f:
        f.write(value if isinstance(value, str) else json.dumps(value, indent=2))
    return path


def guardrail(name: str, config: str, component: str, db: str, default_on: bool, **extra: Any) -> Dict[str, Any]:
    params = {
        "guardrail": "warden_litellm.WardenGuardrail",
        "mode": ["pre_call", "post_call"],
        "default_on": default_on,
        "warden_config": config,
        "warden_component": component,
        "warden_db": os.path.join(WORK, db),
        "warden_cache_dir": os.path.join(WORK, "cache"),
    }
    params.update(extra)
    return {"guardrail_name": name, "litellm_params": params}


def proxy_config(guardrails: List[Dict[str, Any]]) -> Dict[str, Any]:
    return {
        "model_list": [
            {"model_name": "mock", "litellm_params": {"model": "openai/mock-model", "api_base": MODEL_URL, "api_key": "sk-mock-upstream"}}
        ],
        "guardrails": guardrails,
        "litellm_settings": {"telemetry": False},
    }


class Proxy:
    """`litellm --config FILE --host 127.0.0.1 --port P`, the real proxy CLI."""

    def __init__(self, name: str, config: Dict[str, Any]):
        import yaml

        self.name = name
        self.config_path = os.path.join(WORK, f"{name}.config.yaml")
        with open(self.config_path, "w") as f:
            yaml.safe_dump(config, f)
        self.port = free_port()
        self.log_path = os.path.join(WORK, f"{name}.proxy.log")
        env = dict(os.environ)
        env.update(
            PYTHONPATH=PACKAGE_PARENT,
            LITELLM_LOCAL_MODEL_COST_MAP="True",
            LITELLM_TELEMETRY="False",
            LITELLM_LOG="INFO",
            NO_DOCS="True",
        )
        env[CLASSIFIER_KEY_ENV] = "sk-e2e-classifier"
        self.proc = subprocess.Popen(
            [os.path.join(VENV_BIN, "litellm"), "--config", self.config_path, "--host", "127.0.0.1", "--port", str(self.port)],
            stdout=open(self.log_path, "w"),
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        self.url = f"http://127.0.0.1:{self.port}"

    def wait_ready(self) -> None:
        import urllib.request

        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the {self.name} proxy exited with {self.proc.returncode}:\n{self.log()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/health/liveliness", timeout=2) as r:
                    if r.status == 200:
                        return
            except Exception:
                time.sleep(0.3)
        raise RuntimeError(f"the {self.name} proxy did not start within {START_TIMEOUT_S} s:\n{self.log()[-3000:]}")

    def log(self) -> str:
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def client(self) -> openai.OpenAI:
        return openai.OpenAI(base_url=f"{self.url}/v1", api_key="sk-e2e-client", max_retries=0, timeout=60)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)


def ask(proxy: Proxy, text: str, guardrails: Optional[List[str]] = None, extra_body: Optional[Dict[str, Any]] = None, **kw: Any):
    extra = dict(extra_body or {})
    if guardrails:
        extra["guardrails"] = guardrails
    return proxy.client().chat.completions.create(
        model="mock", messages=[{"role": "user", "content": text}], user="u-alex", extra_body=extra or None, **kw
    )


def refused(proxy: Proxy, text: str, guardrails: Optional[List[str]] = None, **kw: Any) -> Dict[str, Any]:
    """The error body of a request the proxy refuses (HTTP 400)."""
    try:
        r = ask(proxy, text, guardrails, **kw)
        if kw.get("stream"):
            for _ in r:
                pass
    except openai.APIStatusError as e:
        check(e.status_code == 400, f"the proxy answered HTTP 400 ({e.status_code})")
        body = e.body if isinstance(e.body, dict) else {"message": str(e.body)}
        return body
    except openai.APIError as e:  # a refused stream
        return {"message": str(e), "stream_error": True, "body": getattr(e, "body", None)}
    raise AssertionError(f"{text!r} was answered, not refused")


def warden_of(body: Dict[str, Any]) -> Dict[str, Any]:
    fields = body.get("provider_specific_fields") or {}
    return fields.get("warden") or {}


# the main proxy -----------------------------------------------------------------------
main_json = write_json("warden.json", POLICY)
MAIN = Proxy("main", proxy_config([guardrail("warden", main_json, WASM, "main/warden.db", True)]))

# The cross-adapter fixture every adapter is tested with.
CROSS_DIR = os.path.join(os.path.dirname(os.path.dirname(PACKAGE_PARENT)), "tests", "fixtures", "cross-adapter")
CROSS_CONFIG = os.path.join(CROSS_DIR, "config.json")
with open(os.path.join(CROSS_DIR, "cases.json")) as f:
    CROSS = json.load(f)
broken_wasm = os.path.join(WORK, "random.wasm")
with open(broken_wasm, "wb") as f:
    f.write(os.urandom(4096))
refused_json = write_json("refused.json", {"tools": {"enabled": "yes"}, "unknownSection": 1})
FAILURES = Proxy(
    "failures",
    proxy_config(
        [
            guardrail("warden-missing", main_json, os.path.join(WORK, "no-such.wasm"), "missing/warden.db", False),
            guardrail("warden-random", main_json, broken_wasm, "random/warden.db", False),
            guardrail("warden-refused-config", refused_json, WASM, "refused/warden.db", False),
            guardrail("warden-hostile", main_json, HOSTILE, "hostile/warden.db", False, warden_fuel=200_000_000),
            guardrail("warden-refuse", main_json, WASM, "refuse/warden.db", False, warden_tool_calls="refuse"),
            guardrail("warden-cross", CROSS_CONFIG, WASM, "cross/warden.db", False, warden_cwd=CROSS["cwd"]),
            guardrail("warden-request-sender", main_json, WASM, "sender/warden.db", False, warden_sender="request"),
        ]
    ),
)

# A proxy whose guardrail setting is wrong: it must not start at all (LiteLLM
# starts without a guardrail whose constructor raises ValueError or TypeError).
BAD_SETTING = Proxy(
    "bad-setting",
    proxy_config([guardrail("warden", main_json, WASM, "bad/warden.db", True, warden_on_ask="maybe")]),
)

CHECKS = Checks()


def bad_setting_stops_the_proxy():
    try:
        code = BAD_SETTING.proc.wait(START_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise AssertionError("the proxy with a wrong setting is still running") from None
    check(code != 0, f"the proxy with warden_on_ask: maybe exited with {code} instead of serving unguarded")
    check(
        "guardrails[].litellm_params.warden_on_ask: 'maybe' is not one of deny, allow" in BAD_SETTING.log(),
        "its log names the setting, the value and what is allowed",
    )


def benign_turn_passes():
    n = len(model_requests())
    r = ask(MAIN, "Hi, how are you?")
    check(r.choices[0].message.content == "Hello from the mock model.", "the answer reaches the client unchanged")
    sent = model_requests_since(n)
    check(len(sent) == 1 and sent[0]["messages"][-1]["content"] == "Hi, how are you?", "the model got the message unchanged")
    check("<safety>" not in json.dumps(sent), "no safety text for a message no scenario covers")


def safety_prompt_injected():
    n = len(model_requests())
    raw = MAIN.client().chat.completions.with_raw_response.create(
        model="mock", messages=[{"role": "user", "content": "How much is Bob's salary this year?"}], user="u-alex"
    )
    r = raw.parse()
    check(r.choices[0].message.content == "Hello from the mock model.", "the turn proceeds (scenarios guide, they do not block)")
    turn = json.loads(raw.headers.get("x-warden-turn") or "{}")
    check((turn.get("outcome"), turn.get("rule"), turn.get("scenarios")) == ("flagged", "safety.flagged", ["salaries"]), f"x-warden-turn: flagged by safety.flagged for salaries ({turn})")
    classified = model_requests_since(n, "classifier")
    check(len(classified) == 1, f"the classifier was asked once ({len(classified)})")
    check(classified[0]["messages"][0]["role"] == "system" and classified[0].get("max_tokens") == 1, "with the logprob protocol")
    sent = model_requests_since(n)
    user = sent[0]["messages"][-1]["content"]
    check(user.startswith("How much is Bob's salary this year?"), "the person's message comes first")
    check(f"<safety>\n{SALARY_PROMPT}\n</safety>" in user, "followed by the scenario's flaggedPrompt in <safety> tags")


def dangerous_tool_call_removed():
    r = ask(MAIN, "SCRIPT:tool-rm clean up the disk")
    m = r.choices[0].message
    names = [c.function.name for c in (m.tool_calls or [])]
    check(names == ["read_file"], f"the `terminal` call is removed, the benign `read_file` call kept: {names}")
    check("[Warden removed the tool call terminal (exec.recursive-delete):" in (m.content or ""), "the content names the rule: exec.recursive-delete")
    check(m.content.startswith("Cleaning up as asked."), "after the model's own text")
    check(r.choices[0].finish_reason == "tool_calls", "finish_reason stays tool_calls while a call remains")


def only_tool_call_removed():
    r = ask(MAIN, "SCRIPT:tool-only-rm")
    m = r.choices[0].message
    check(not m.tool_calls, "the only tool call is removed")
    check(r.choices[0].finish_reason == "stop", "finish_reason becomes stop, so the client does not wait for a tool result")
    check("(exec.recursive-delete)" in (m.content or ""), "the explanation names exec.recursive-delete")


def benign_tool_call_passes():
    raw = MAIN.client().chat.completions.with_raw_response.create(
        model="mock", messages=[{"role": "user", "content": "SCRIPT:tool-ls"}], user="u-alex"
    )
    r = raw.parse()
    calls = r.choices[0].message.tool_calls or []
    check([(c.function.name, json.loads(c.function.arguments)) for c in calls] == [("terminal", {"command": "ls -la"})], "`ls -la` is allowed through unchanged")
    checks = json.loads(raw.headers.get("x-warden-checks") or "[]")
    check(checks == [{"check": "tool-call", "decision": "allow", "rule": "tools.allow", "tool": "terminal"}], f"x-warden-checks: allow by tools.allow ({checks})")
    turn = json.loads(raw.headers.get("x-warden-turn") or "{}")
    check(turn.get("outcome") == "no-match" and turn.get("scenarios") == [], f"x-warden-turn: the turn matched no scenario ({turn})")


def ask_is_denied_headless_with_key():
    r = ask(MAIN, "SCRIPT:tool-fetch")
    m = r.choices[0].message
    check(not m.tool_calls, "the asked `web_fetch` call is removed (headless policy: deny)")
    check("(tools.ask-kind)" in (m.content or ""), "the explanation names tools.ask-kind")
    check("warden approve --key 't2:" in m.content, "and carries the approval key an operator can answer")


def approve(content: str) -> str:
    """Runs the `warden approve` the explanation names, against the proxy's configuration and database; returns the scope."""
    key = content.split("warden approve --key '", 1)[1].split("'", 1)[0]
    scope = content.split("--scope ", 1)[1].split("`", 1)[0]
    db = os.path.join(WORK, "main", "warden.db")
    out = subprocess.run(
        [WARDEN_BIN, "approve", "--config", main_json, "--db", db, "--key", key, "--scope", scope],
        capture_output=True, text=True, timeout=60,
    )
    check(out.returncode == 0 and json.loads(out.stdout).get("recorded") is True, f"`warden approve ... --scope {scope}` recorded the answer ({out.stdout.strip()} {out.stderr.strip()})")
    return scope


def ask_approved_then_retry_passes(session: Optional[str], expected_scope: str):
    def run():
        if not WARDEN_BIN or not os.path.exists(WARDEN_BIN):
            raise AssertionError(f"the warden binary is missing ({WARDEN_BIN})")
        extra = {"litellm_session_id": session} if session else {}
        fetch = "SCRIPT:tool-fetch " + (session or "no-session")
        r = ask(MAIN, fetch, extra_body=extra)
        content = r.choices[0].message.content or ""
        check("(tools.ask-kind)" in content and not r.choices[0].message.tool_calls, "the call is asked and removed")
        check(approve(content) == expected_scope, f"the explanation offers scope {expected_scope}")
        r = ask(MAIN, fetch, extra_body=extra)
        calls = r.choices[0].message.tool_calls or []
        check([c.function.name for c in calls] == ["web_fetch"], "the retried call is let through (memory.allow), the database shared with the proxy")
        r = ask(MAIN, fetch, extra_body=extra)
        again = [c.function.name for c in (r.choices[0].message.tool_calls or [])]
        if expected_scope == "once":
            check(again == [], "a once answer is used up: the next try is asked again")
        else:
            check(again == ["web_fetch"], "a session answer holds for the session's next call too")
    return run


def secret_answer_refused():
    body = refused(MAIN, "SCRIPT:secret")
    w = warden_of(body)
    check((w.get("decision"), w.get("rule"), w.get("check")) == ("deny", "dlp.secret.openai-key", "outbound"), f"deny by dlp.secret.openai-key: {w}")
    check(SECRET not in json.dumps(body), "the secret is not in what the client got")


def streamed_benign_answer_passes():
    stream = ask(MAIN, "Hi again", stream=True)
    text = "".join((c.choices[0].delta.content or "") for c in stream if c.choices)
    check(text == "Hello from the mock model.", f"a streamed answer that passes arrives whole: {text!r}")


def streamed_secret_refused():
    body = refused(MAIN, "SCRIPT:secret", stream=True)
    text = json.dumps(body)
    check("dlp.secret.openai-key" in text, "a streamed answer holding a secret is refused, naming dlp.secret.openai-key")
    check(SECRET not in text, "the secret is not in what the client got")


def streamed_tool_call_refused():
    body = refused(MAIN, "SCRIPT:tool-only-rm", stream=True)
    check("exec.recursive-delete" in json.dumps(body), "a streamed answer with a refused tool call is refused, naming exec.recursive-delete")


def legacy_function_call_removed():
    r = ask(MAIN, "SCRIPT:function-rm")
    m = r.choices[0].message
    check(m.function_call is None and not m.tool_calls, "the legacy function_call is judged too and removed")
    check("(exec.recursive-delete)" in (m.content or ""), "by exec.recursive-delete")
    check(r.choices[0].finish_reason == "stop", "finish_reason becomes stop")


def nameless_tool_call_removed():
    r = ask(MAIN, "SCRIPT:tool-nameless")
    m = r.choices[0].message
    check(not m.tool_calls, "a tool call that names no function is removed unjudged")
    check("(host.unreadable-tool-call)" in (m.content or ""), "by host.unreadable-tool-call")


def list_content_gets_the_safety_prompt():
    n = len(model_requests())
    MAIN.client().chat.completions.create(
        model="mock", user="u-alex",
        messages=[{"role": "user", "content": [{"type": "text", "text": "What is Bob's salary?"}]}],
    )
    sent = model_requests_since(n)[0]["messages"][-1]["content"]
    text = sent if isinstance(sent, str) else " ".join(p.get("text", "") for p in sent)
    check("What is Bob's salary?" in text and SALARY_PROMPT in text, f"a message in content parts is checked and gets the safety text: {sent!r}")


def request_metadata_cannot_switch_it_off():
    attempts = {
        "metadata.disable_global_guardrails": {"metadata": {"disable_global_guardrails": True}},
        "metadata.user_api_key_metadata": {"metadata": {"user_api_key_metadata": {"disable_global_guardrails": True}}},
        "litellm_metadata.user_api_key_metadata": {"litellm_metadata": {"user_api_key_metadata": {"disable_global_guardrails": True}}},
        "litellm_metadata.user_api_key_team_metadata": {
            "litellm_metadata": {"user_api_key_team_metadata": {"opted_out_global_guardrails": ["warden"]}}
        },
        "metadata.opted_out_global_guardrails": {"metadata": {"user_api_key_metadata": {"opted_out_global_guardrails": ["warden"]}}},
        "guardrails: []": {"guardrails": []},
        "guardrails: [another]": {"guardrails": ["another"]},
    }
    for name, extra in attempts.items():
        try:
            r = MAIN.client().chat.completions.create(
                model="mock", messages=[{"role": "user", "content": "SCRIPT:secret"}], extra_body=extra
            )
        except openai.APIStatusError as e:
            check(e.status_code == 400 and "dlp.secret.openai-key" in json.dumps(e.body), f"{name}: still refused by dlp.secret.openai-key")
            continue
        raise AssertionError(f"{name} switched the guardrail off: {r.choices[0].message.content!r}")


def cross_adapter_case(case: Dict[str, Any]):
    def run():
        spec = json.dumps({"tool": case["tool"], "args": case["args"]})
        raw = FAILURES.client().chat.completions.with_raw_response.create(
            model="mock", messages=[{"role": "user", "content": f"SCRIPT:call {spec}"}], extra_body={"guardrails": ["warden-cross"]}
        )
        r = raw.parse()
        m = r.choices[0].message
        expect = case["expect"]
        checks = json.loads(raw.headers.get("x-warden-checks") or "[]")
        got = [(c["decision"], c["rule"]) for c in checks if c["check"] == "tool-call"]
        check(got == [(expect["decision"], expect["rule"])], f"x-warden-checks says {expect['decision']} by {expect['rule']}: {got}")
        kept = [c.function.name for c in (m.tool_calls or [])]
        if expect["decision"] == "allow":
            check(kept == [case["tool"]] and not m.content, f"allowed: the call is kept ({kept}, {m.content!r})")
        else:
            check(kept == [], "the call is removed")
            check(f"[Warden removed the tool call {case['tool']} ({expect['rule']})" in (m.content or ""), f"by {expect['rule']}: {m.content!r}")
            if expect["decision"] == "ask":
                check("nobody can be asked here" in m.content, "as an ask (headless policy deny)")
            else:
                check("nobody can be asked here" not in m.content, "as a denial")
    return run


def other_formats_fail_closed():
    import httpx

    cases = [
        ("/v1/messages", {"model": "mock", "max_tokens": 100, "messages": [{"role": "user", "content": "SCRIPT:tool-rm"}]}, "Anthropic Messages"),
        ("/v1/responses", {"model": "mock", "input": "SCRIPT:tool-rm"}, "Responses API"),
        ("/v1/responses", {"model": "mock", "input": "SCRIPT:secret"}, "Responses API"),
    ]
    for path, body, name in cases:
        r = httpx.post(MAIN.url + path, json=body, timeout=60)
        text = r.text
        check(r.status_code == 400 and "(host.unchecked-format)" in text and name in text,
              f"{path} ({body.get('input') or body['messages'][0]['content']}): refused by host.unchecked-format, naming {name} ({r.status_code})")
        check("rm -rf" not in text and SECRET not in text, "no tool call and no secret reach the client")
    with httpx.stream("POST", MAIN.url + "/v1/messages", timeout=60, json={
        "model": "mock", "max_tokens": 100, "stream": True, "messages": [{"role": "user", "content": "SCRIPT:secret"}]
    }) as r:
        text = "".join(r.iter_text())
    check("(host.unchecked-format)" in text and SECRET not in text, "a streamed /v1/messages answer is refused by host.unchecked-format, the secret withheld")


def policy_reload():
    def write(policy: Any) -> None:
        tmp = main_json + ".tmp"
        with open(tmp, "w") as f:
            f.write(policy if isinstance(policy, str) else json.dumps(policy))
        os.replace(tmp, main_json)
        now = time.time()
        os.utime(main_json, (now, now + 1))  # visible to an mtime check within one clock tick

    def read_file_checks() -> List[Any]:
        raw = MAIN.client().chat.completions.with_raw_response.create(
            model="mock", messages=[{"role": "user", "content": "SCRIPT:tool-rm"}], user="u-alex"
        )
        return [(c["tool"], c["decision"], c["rule"]) for c in json.loads(raw.headers.get("x-warden-checks") or "[]") if c.get("tool") == "read_file"]

    check(read_file_checks() == [("read_file", "allow", "tools.allow")], "before: read_file is allowed")
    try:
        write(dict(POLICY, tools={"askTools": ["read_file"]}))
        check(read_file_checks() == [("read_file", "ask", "tools.ask-tool")], "the changed configuration is used at the next request: ask by tools.ask-tool")
        write("{ not json")
        check(read_file_checks() == [("read_file", "ask", "tools.ask-tool")], "a configuration that cannot be used leaves the previous one in force")
        check("the previous one stays active" in MAIN.log(), "and the proxy log says so")
    finally:
        write(POLICY)
    check(read_file_checks() == [("read_file", "allow", "tools.allow")], "the original policy is back")


def claimed_user_is_not_an_approved_sender():
    n = len(model_requests())
    MAIN.client().chat.completions.create(model="mock", user="U-dani", messages=[{"role": "user", "content": "What is Bob's salary?"}])
    sent = model_requests_since(n)[0]["messages"][-1]["content"]
    check(SALARY_PROMPT in sent, "a client that writes user=U-dani (an approved requestor) still gets the safety prompt: the sender is the proxy key's user")


def request_sender_setting_trusts_the_user_field():
    n = len(model_requests())
    ask_as = lambda user: FAILURES.client().chat.completions.create(  # noqa: E731
        model="mock", user=user, messages=[{"role": "user", "content": "What is Bob's salary?"}],
        extra_body={"guardrails": ["warden-request-sender"]},
    )
    ask_as("U-dani")
    ask_as("U-eve")
    sent = [r["messages"][-1]["content"] for r in model_requests_since(n)]
    check(SALARY_PROMPT not in sent[0], "with warden_sender: request, the approved requestor U-dani gets no safety prompt")
    check(SALARY_PROMPT in sent[1], "and anyone else still does")


def protected_files_are_refused():
    for what, command in [
        ("the proxy's config.yaml", f"cat {MAIN.config_path}"),
        ("the Warden configuration", f"cp /dev/null {main_json}"),
        ("the approval key file", f"cat {os.path.join(WORK, 'main', 'warden.db.key')}"),
    ]:
        spec = json.dumps({"tool": "terminal", "args": {"command": command}})
        resp = MAIN.client().chat.completions.with_raw_response.create(model="mock", messages=[{"role": "user", "content": f"SCRIPT:call {spec}"}])
        checks = [(c["decision"], c["rule"]) for c in json.loads(resp.headers.get("x-warden-checks") or "[]")]
        check(checks == [("deny", "self.protected-file")] and not resp.parse().choices[0].message.tool_calls,
              f"{what} ({command}): removed by self.protected-file ({checks})")


def every_choice_is_checked():
    r = ask(MAIN, "SCRIPT:two-choices", n=2)
    check(len(r.choices) == 2, "both choices arrive")
    check(r.choices[0].message.content == "Nothing to do.", "the harmless one unchanged")
    second = r.choices[1].message
    check(not second.tool_calls and "(exec.recursive-delete)" in (second.content or ""), "the second choice's rm -rf call is removed by exec.recursive-delete")


def odd_arguments_are_judged_as_sent():
    cases = [
        ("not JSON", "terminal", "{not json", "input.invalid-arguments"),
        ("a JSON array", "terminal", '["rm", "-rf", "/"]', "input.invalid-arguments"),
        # Python's json, like most clients' parsers, keeps the last value.
        ("a duplicate key hiding the command", "terminal", '{"command": "ls", "command": "rm -rf /"}', "exec.recursive-delete"),
        ("escaped characters", "terminal", '{"command": "r\\u006d -rf /"}', "exec.recursive-delete"),
    ]
    for what, tool, raw, rule in cases:
        resp = MAIN.client().chat.completions.with_raw_response.create(
            model="mock", messages=[{"role": "user", "content": f"SCRIPT:raw {tool} {raw}"}]
        )
        r = resp.parse()
        checks = [(c["decision"], c["rule"]) for c in json.loads(resp.headers.get("x-warden-checks") or "[]") if c["check"] == "tool-call"]
        check(not r.choices[0].message.tool_calls, f"{what} ({raw}): the call is removed ({checks})")
        check(checks == [("deny", rule)], f"denied by {rule}")


# failure modes -------------------------------------------------------------------------
def start_failure(name: str):
    def run():
        n = len(model_requests())
        body = refused(FAILURES, "How much is Bob's salary?", [name])
        sent = model_requests_since(n)
        check(len(sent) == 1 and "<safety>" not in json.dumps(sent), "inbound fails open: the model got the turn, without a safety prompt")
        w = warden_of(body)
        check((w.get("decision"), w.get("rule")) == ("deny", "host.start-failure"), f"the answer fails closed: deny by host.start-failure ({w})")
        r = ask(FAILURES, "SCRIPT:tool-only-rm", [name])
        m = r.choices[0].message
        check(not m.tool_calls and "(host.start-failure)" in (m.content or ""), "tool calls fail closed: removed by host.start-failure")
    return run


def start_failure_says_why():
    log = FAILURES.log()
    check("cannot read the Warden component" in log and "no-such.wasm" in log, "the proxy log names the missing component file")
    check("the configuration has" in log and "error(s)" in log, "and the refused configuration's errors")


def guest_failure():
    n = len(model_requests())
    body = refused(FAILURES, "Hi", ["warden-hostile"])
    check(len(model_requests_since(n)) == 1, "a spinning turn check fails open: the model got the turn")
    w = warden_of(body)
    check((w.get("decision"), w.get("rule")) == ("deny", "host.guest-failure"), f"a crashing answer check fails closed: deny by host.guest-failure ({w})")
    r = ask(FAILURES, "SCRIPT:tool-crash", ["warden-hostile"])
    m = r.choices[0].message
    check([c.function.name for c in (m.tool_calls or [])] == ["fine"], "the call the guest crashes on is removed; the next runs on a fresh instance and is kept")
    check("[Warden removed the tool call crash (host.guest-failure):" in (m.content or ""), "removed by host.guest-failure")


def refuse_setting_refuses_the_answer():
    body = refused(FAILURES, "SCRIPT:tool-rm", ["warden-refuse"])
    w = warden_of(body)
    check((w.get("decision"), w.get("rule"), w.get("check")) == ("deny", "exec.recursive-delete", "tool-call"), f"warden_tool_calls: refuse refuses the whole answer by exec.recursive-delete ({w})")


try:
    MAIN.wait_ready()
    FAILURES.wait_ready()
    print(f"== proxies up: main {MAIN.url}, failures {FAILURES.url}")
    CHECKS.run("a benign turn passes through the proxy unchanged", benign_turn_passes)
    CHECKS.run("a sensitive question gets the safety prompt appended before the model sees it", safety_prompt_injected)
    CHECKS.run("a dangerous tool call (rm -rf / as a string) is removed from the answer by exec.recursive-delete", dangerous_tool_call_removed)
    CHECKS.run("an answer whose only tool call is removed ends with finish_reason stop", only_tool_call_removed)
    CHECKS.run("a harmless tool call passes", benign_tool_call_passes)
    CHECKS.run("an ask is denied headless, with the approval key in the explanation", ask_is_denied_headless_with_key)
    CHECKS.run("an ask approved with `warden approve` for the session lets the session's retried calls through", ask_approved_then_retry_passes("s-e2e", "session"))
    CHECKS.run("an ask outside any session is offered once; approved, the retried call passes once", ask_approved_then_retry_passes(None, "once"))
    CHECKS.run("an answer holding a secret is refused by dlp.secret.openai-key", secret_answer_refused)
    CHECKS.run("the legacy function_call form of a dangerous call is removed", legacy_function_call_removed)
    CHECKS.run("a tool call that names no function is removed", nameless_tool_call_removed)
    CHECKS.run("every choice of an n=2 answer is checked", every_choice_is_checked)
    CHECKS.run("tool calls touching the proxy's config.yaml, the Warden configuration or its key file are refused", protected_files_are_refused)
    CHECKS.run("tool call arguments that are not a JSON object, or hide a command, are judged as sent and refused", odd_arguments_are_judged_as_sent)
    CHECKS.run("a message given as content parts gets the safety prompt", list_content_gets_the_safety_prompt)
    CHECKS.run("request metadata cannot switch the guardrail off", request_metadata_cannot_switch_it_off)
    for case in CROSS["cases"]:
        CHECKS.run(
            f"cross-adapter: {case['tool']} {json.dumps(case['args'])[:50]} -> {case['expect']['decision']} by {case['expect']['rule']}",
            cross_adapter_case(case),
        )
    CHECKS.run("answers in formats the guardrail does not check (/v1/messages, /v1/responses) are refused", other_formats_fail_closed)
    CHECKS.run("a streamed answer that passes arrives whole", streamed_benign_answer_passes)
    CHECKS.run("a streamed answer holding a secret is refused", streamed_secret_refused)
    CHECKS.run("a streamed answer with a dangerous tool call is refused", streamed_tool_call_refused)
    CHECKS.run("a client cannot claim an approved requestor's ID through the request's user field", claimed_user_is_not_an_approved_sender)
    CHECKS.run("warden_sender: request takes the sender from the user field", request_sender_setting_trusts_the_user_field)
    CHECKS.run("the Warden configuration is reloaded when it changes; a broken one leaves the previous in force", policy_reload)
    CHECKS.run("component missing: turns fail open, answers and tool calls fail closed", start_failure("warden-missing"))
    CHECKS.run("component of random bytes: turns fail open, answers and tool calls fail closed", start_failure("warden-random"))
    CHECKS.run("configuration refused: turns fail open, answers and tool calls fail closed", start_failure("warden-refused-config"))
    CHECKS.run("the proxy log says why Warden did not start", start_failure_says_why)
    CHECKS.run("a guest that spins or crashes: turns fail open, answers and tool calls fail closed", guest_failure)
    CHECKS.run("warden_tool_calls: refuse refuses the whole answer", refuse_setting_refuses_the_answer)
    CHECKS.run("a wrong guardrail setting stops the proxy instead of letting it serve without Warden", bad_setting_stops_the_proxy)
finally:
    MAIN.stop()
    FAILURES.stop()
    BAD_SETTING.stop()
    _model.terminate()

print(f"{CHECKS.passed} passed, {CHECKS.failed} failed")
if CHECKS.failed:
    for p in (MAIN, FAILURES, BAD_SETTING):
        print(f"--- last lines of the {p.name} proxy log ({p.log_path})")
        print(p.log()[-4000:])
sys.exit(1 if CHECKS.failed else 0)
