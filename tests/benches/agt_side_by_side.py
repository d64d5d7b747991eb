"""Times the Agent Governance Toolkit's PolicyEvaluator on Warden's benchmark
corpus, with rules equivalent to Warden's default shell and path checks.

Run by the `suite` benchmark (`cargo xtask bench`) in the same run as Warden:

    python agt_side_by_side.py INPUTS.json ROUNDS

INPUTS.json is a list of {"kind": "command"|"path", "tool": ..., "text": ...}.
Prints one JSON object: the package version, the rule counts, and for every
round the nanoseconds of each evaluation, input by input, plus each input's
decision (allowed or not).
"""

import importlib.metadata
import json
import sys
import time
import warnings

warnings.simplefilter("ignore")

from agent_os.policies import PolicyDocument, PolicyEvaluator  # noqa: E402

HOME = r"(?:~|\$HOME|\$\{HOME\}|/home/[^/]+|/root|/Users/[^/]+)"

# Warden's `exec.*` rules, as regular expressions over the command text.
COMMAND_RULES = [
    ("exec.recursive-delete", r"\brm\s+(?:-\S+\s+)*-\S*[rR]\S*\s+(?:-\S+\s+)*(?:/|~|\$HOME|\*|\.\.?)(?:\s|/?\*?$|$)"),
    ("exec.recursive-delete-flags", r"\brm\s+(?:-\S+\s+)*--recursive\b"),
    ("exec.download-execute", r"(?:curl|wget)\b[^|;&]*\|\s*(?:sudo\s+)?(?:ba|z|da|k)?sh\b"),
    ("exec.download-execute-subst", r"(?:ba|z)?sh\s+-c\s+[\"']?\$\((?:curl|wget)\b"),
    ("exec.download-execute-source", r"(?:source|\.)\s+<\((?:curl|wget)\b"),
    ("exec.credential-exfiltration", r"(?:\.ssh/|\.aws/credentials|\.netrc|\.git-credentials|\.kube/config).*\|\s*(?:curl|wget|nc)\b"),
    ("exec.credential-upload", r"(?:curl|wget)\b.*(?:-d\s*@|--data\S*\s+@|-F\s*\S*=@|-T\s+)\S*(?:\.ssh/|\.aws/|\.env)"),
    ("exec.shutdown", r"(?:^|[;&|]\s*|sudo\s+)(?:shutdown|reboot|halt|poweroff|init\s+[06])\b"),
    ("exec.firewall-flush", r"\b(?:iptables|ip6tables)\s+(?:-t\s+\S+\s+)?-(?:F|X)\b|\bufw\s+disable\b|\bnft\s+flush\b"),
    ("exec.system-permissions", r"\bchmod\s+(?:-\S+\s+)*(?:-R\s+)?[0-7]*777\s+/|\bchown\s+-R\s+\S+\s+/(?:\s|$)"),
    ("exec.dynamic-code", r"\beval\s+[\"']?\$\(|\bpython[23]?\s+-c\s+.*(?:exec|eval)\("),
    ("exec.raw-device-write", r"\bdd\b.*\bof=/dev/(?:sd|nvme|hd|vd|xvd|mmcblk|disk)|>\s*/dev/(?:sd|nvme|hd|vd)"),
    ("exec.disk-format", r"\bmkfs(?:\.\w+)?\b|\bwipefs\b|\bfdisk\s+/dev/"),
    ("exec.fork-bomb", r":\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:"),
]

# Warden's default protected paths (and their exceptions), and writes outside the workspace.
PROTECTED = [
    HOME + r"/\.ssh(?:/|$)",
    HOME + r"/\.aws/(?:credentials|config)$",
    HOME + r"/\.aws/sso/cache/",
    HOME + r"/\.gnupg(?:/|$)",
    HOME + r"/\.config/gcloud(?:/|$)",
    HOME + r"/\.azure(?:/|$)",
    HOME + r"/\.kube/config$",
    HOME + r"/\.docker/config\.json$",
    HOME + r"/\.netrc$",
    HOME + r"/\.git-credentials$",
    HOME + r"/\.config/gh/hosts\.yml$",
    HOME + r"/\.npmrc$",
    HOME + r"/\.pypirc$",
    HOME + r"/\.password-store(?:/|$)",
    HOME + r"/\.bash(?:rc|_profile|_login|_logout)$",
    HOME + r"/\.profile$",
    HOME + r"/\.z(?:shrc|profile|shenv|login)$",
    HOME + r"/\.config/fish/config\.fish$",
    r"^/+etc/+(?:shadow|gshadow|sudoers)$",
    r"^/+etc/+sudoers\.d(?:/|$)",
    r"(?:^|/)\.env$",
    r"(?:^|/)\.env\.[^/]+$",
]
PATH_EXCEPTIONS = [HOME + r"/\.ssh/[^/]+\.pub$", r"(?:^|/)\.env\.(?:example|sample|template)$"]
WRITE_OUTSIDE = r"^(?!/ws(?:/|$)|/tmp/|/var/tmp/|/dev/(?:null|stdout|stderr|tty)$|\.\./ws/|(?![/~$]|\.\./))"
WRITE_TOOLS = ["Write", "Edit", "MultiEdit"]


def policies():
    rules = []
    for name, pattern in COMMAND_RULES:
        rules.append({"name": name, "condition": {"field": "command", "operator": "matches", "value": pattern},
                      "action": "deny", "priority": 10})
    for i, pattern in enumerate(PATH_EXCEPTIONS):
        rules.append({"name": f"path.exception-{i}", "condition": {"field": "path", "operator": "matches",
                      "value": pattern}, "action": "allow", "priority": 30})
    for i, pattern in enumerate(PROTECTED):
        rules.append({"name": f"path.protected-{i}", "condition": {"field": "path", "operator": "matches",
                      "value": pattern}, "action": "deny", "priority": 20})
    rules.append({"name": "path.outside-workspace", "condition": {"field": "write_path", "operator": "matches",
                  "value": WRITE_OUTSIDE}, "action": "deny", "priority": 15})
    doc = PolicyDocument.model_validate({"name": "warden-equivalent", "rules": rules, "defaults": {"action": "allow"}})
    return [doc], len(rules)


def context(item):
    if item["kind"] == "command":
        return {"tool_name": item["tool"], "command": item["text"]}
    ctx = {"tool_name": item["tool"], "path": item["text"]}
    if item["tool"] in WRITE_TOOLS:
        ctx["write_path"] = item["text"]
    return ctx


def main():
    inputs = json.load(open(sys.argv[1]))
    rounds = int(sys.argv[2])
    docs, rule_count = policies()
    evaluator = PolicyEvaluator(policies=docs)
    contexts = [context(item) for item in inputs]
    allowed = [evaluator.evaluate(c).allowed for c in contexts]  # warm-up, and the decisions
    clock = time.perf_counter_ns
    timings = []
    for _ in range(rounds):
        row = []
        for c in contexts:
            started = clock()
            evaluator.evaluate(c)
            row.append(clock() - started)
        timings.append(row)
    print(json.dumps({
        "package": "agent-governance-toolkit-core",
        "version": importlib.metadata.version("agent-governance-toolkit-core"),
        "python": sys.version.split()[0],
        "rules": rule_count,
        "allowed": allowed,
        "timings_ns": timings,
    }))


if __name__ == "__main__":
    main()
