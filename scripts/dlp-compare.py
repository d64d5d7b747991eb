#!/usr/bin/env python3
"""Side-by-side of Warden's DLP floor and detect-secrets on one generated corpus.

Generates, from a seed and at run time only (nothing is written outside a
temporary folder and target/), a corpus of format-valid fake secrets embedded
in realistic messages and of hard negatives that look like secrets but are not
(public keys, digests, UUIDs, placeholders, prose and code about passwords,
base64 of text, data URIs, commit IDs, lockfile lines, ...). Runs
detect-secrets 1.5.0 (installed from PyPI into a virtual environment under
target/dlp-compare/) in file mode with its default plugins, and the real
`warden check outbound` on every sample, and prints recall, precision and the
false-alarm rate of each, overall and per class.

The corpus is written by the same people as the detectors, so its figures are
an upper bound; only a corpus written independently measures the floor.

Usage: scripts/dlp-compare.py [--warden target/release/warden] [--seed 1] [--per-class 12] [--jobs 2]
Not part of CI.
"""

import argparse
import base64
import concurrent.futures
import json
import os
import random
import string
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DETECT_SECRETS = "detect-secrets==1.5.0"

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64U = ALNUM + "-_"
B32 = string.ascii_uppercase + "234567"
BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)

    def s(self, n, alphabet=ALNUM):
        while True:
            out = "".join(self.r.choice(alphabet) for _ in range(n))
            low = out.lower()
            if "xxxx" in low or "example" in low or "redacted" in low:
                continue
            if alphabet in (ALNUM, B64, B64U) and not (
                any(c.isupper() for c in out) and any(c.islower() for c in out) and any(c.isdigit() for c in out)
            ):
                continue
            return out

    def pick(self, items):
        return self.r.choice(items)

    def checksummed(self, prefix):
        body = self.s(30)
        n = zlib.crc32(body.encode())
        check = ""
        for _ in range(6):
            check = BASE62[n % 62] + check
            n //= 62
        return prefix + body + check

    def password(self):
        words = ["Winter", "Falcon", "Orbit", "Maple", "Quartz", "Harbor", "Cobalt", "Velvet"]
        style = self.r.randrange(3)
        if style == 0:
            return self.pick(words) + str(self.r.randrange(10, 9999)) + self.pick("!@#$%&*?")
        if style == 1:
            return self.s(self.r.randrange(12, 24), ALNUM + "!@#$%^&*-_=+")
        return self.s(16, ALNUM)

    def b64(self, nbytes):
        return base64.b64encode(self.r.randbytes(nbytes)).decode()


def vendor_secrets(g):
    """(class, secret) pairs, one or more per vendor format."""
    uid = str(g.r.randrange(10**17, 10**18)).encode()
    return [
        ("github", g.checksummed(g.pick(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]))),
        ("github", "github_pat_" + g.s(22) + "_" + g.s(59)),
        ("gitlab", g.pick(["glpat-", "gldt-", "glrt-", "glptt-"]) + g.s(20, B64U)),
        ("huggingface", "hf_" + g.s(34, string.ascii_letters)),
        ("stripe", g.pick(["sk_live_", "rk_live_", "sk_test_"]) + g.s(24)),
        ("stripe", "whsec_" + g.s(32)),
        ("slack", "xoxb-" + g.s(12, string.digits) + "-" + g.s(13, string.digits) + "-" + g.s(24)),
        ("slack", "https://hooks.slack.com/services/T" + g.s(10, B32) + "/B" + g.s(10, B32) + "/" + g.s(24)),
        ("sendgrid", "SG." + g.s(22, B64U) + "." + g.s(43, B64U)),
        ("twilio", "SK" + g.s(32, HEX)),
        ("azure", "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=" + g.b64(64) + ";EndpointSuffix=core.windows.net"),
        ("pypi", "pypi-AgEIcHlwaS5vcmc" + g.s(70, B64U)),
        ("dockerhub", "dckr_pat_" + g.s(27, B64U)),
        ("shopify", g.pick(["shpat_", "shpss_", "shpca_"]) + g.s(32, HEX)),
        ("google", "AIza" + g.s(35, B64U)),
        ("google", "ya29." + g.s(80, B64U)),
        ("anthropic", "sk-ant-api03-" + g.s(93, B64U) + "AA"),
        ("openai", "sk-proj-" + g.s(74, B64U) + "T3BlbkFJ" + g.s(74, B64U)),
        ("openai", "sk-" + g.s(20) + "T3BlbkFJ" + g.s(20)),
        ("npm", g.checksummed("npm_")),
        ("aws", "AKIA" + g.s(16, B32)),
        ("digitalocean", "dop_v1_" + g.s(64, HEX)),
        ("databricks", "dapi" + g.s(32, HEX)),
        ("mailchimp", g.s(32, HEX) + "-us" + str(g.r.randrange(1, 21))),
        ("linear", "lin_api_" + g.s(40)),
        ("notion", "ntn_" + g.s(46)),
        ("discord", base64.b64encode(uid).decode().rstrip("=") + "." + g.s(6, B64U) + "." + g.s(38, B64U)),
        ("telegram", str(g.r.randrange(10**8, 10**10)) + ":AA" + g.s(33, B64U)),
        ("jwt", jwt(g)),
    ]


def jwt(g):
    def seg(obj):
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    header = seg({"alg": "HS256", "typ": "JWT"})
    payload = seg({"sub": g.s(8, string.digits), "name": "Ada", "iat": 1700000000})
    return header + "." + payload + "." + g.s(43, B64U)


def private_key(g):
    label = g.pick(["RSA PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY", "PRIVATE KEY"])
    body = g.b64(g.r.randrange(120, 600))
    lines = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    return f"-----BEGIN {label}-----\n{lines}\n-----END {label}-----"


POSITIVE_TEMPLATES = [
    "here is the key you asked for: {s}",
    "export TOKEN={s}",
    '{{"service": "billing", "credential": "{s}"}}',
    "config:\n  auth:\n    value: {s}\n",
    "curl -H 'Authorization: Bearer {s}' https://api.internal.test/v1/me",
    "I pasted `{s}` into the CI settings, can you check it works?",
    "{s}",
]


def positives(g, per_class):
    out = []
    for _ in range(per_class):
        for cls, secret in vendor_secrets(g):
            out.append(("vendor-" + cls, g.pick(POSITIVE_TEMPLATES).format(s=secret)))
        pw = g.password()
        label = g.pick(["password", "DB_PASSWORD", "db_pass", "client_secret", "api_key", "x-api-key", "secret", "PGPASSWORD", "apiKey", "passphrase"])
        form = g.pick([
            f"{label}={pw}",
            f'{label}: "{pw}"',
            f'{{"{label}": "{pw}"}}',
            f"  {label}: {pw}\n",
            f"--{label.lower().replace('_', '-')}={pw}",
            f"{label} := \"{pw}\"",
            f"the {label} is {pw} for now",
        ])
        out.append(("labelled", form))
        out.append(("labelled", f"Authorization: Basic {base64.b64encode(('deploy:' + g.password()).encode()).decode()}"))
        scheme = g.pick(["https", "postgres", "postgresql", "mysql", "mongodb+srv", "redis", "rediss", "amqps", "ftp", "sftp", "smtp", "ldap"])
        out.append(("url-credentials", f"connect with {scheme}://svc_user:{g.password().replace('@', '').replace('/', '').replace('#', '').replace('?', '')}@db-{g.s(4, HEX)}.internal:5432/app"))
        pw = g.password()
        form = g.pick([
            f"machine api.internal.test login deploy password {pw}",
            f"curl -u deploy:{pw} https://api.internal.test/v1/export",
            f"CREATE USER report WITH PASSWORD '{pw}';",
            f"define('DB_PASSWORD', '{pw}');",
            f"<settings><server><id>nexus</id><password>{pw}</password></server></settings>",
            f"Server=db01;Database=app;User Id=sa;Password={pw};",
            f"    environment:\n      - POSTGRES_PASSWORD={pw}\n",
            f"kind: Secret\ndata:\n  password: {base64.b64encode(pw.encode()).decode()}\n",
            f"Your temporary password is: {pw}",
            f"SECRET_KEY_BASE={g.s(128, HEX)}",
            f'"api_key": "{g.s(32, HEX)}"',
        ])
        out.append(("labelled", form))
        gcp = private_key(g).replace("\n", "\\n")
        out.append(("private-key", f'{{"type": "service_account", "private_key": "{gcp}", "client_email": "ci@proj.iam.gserviceaccount.com"}}'))
        out.append(("private-key", "key for the deploy box:\n" + private_key(g)))
        out.append(("high-entropy", f"session cookie is {g.s(40)} (expires tonight)"))
        out.append(("aws-pair", f"aws_access_key_id = AKIA{g.s(16, B32)}\naws_secret_access_key = {g.s(40, B64)}"))
    return out


def ssh_blob(g, kind):
    if kind == "ssh-ed25519":
        raw = b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20" + g.r.randbytes(32)
    elif kind == "ssh-rsa":
        raw = b"\x00\x00\x00\x07ssh-rsa\x00\x00\x00\x03\x01\x00\x01\x00\x00\x01\x01\x00" + g.r.randbytes(256)
    else:
        raw = b"\x00\x00\x00\x13ecdsa-sha2-nistp256\x00\x00\x00\x08nistp256\x00\x00\x00\x41\x04" + g.r.randbytes(64)
    return base64.b64encode(raw).decode()


def pem(label, body):
    lines = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    return f"-----BEGIN {label}-----\n{lines}\n-----END {label}-----"


def negatives(g, per_class):
    out = []
    prose = [
        "The password policy requires 12 characters, one digit and one symbol.",
        "Reset your password: click the link in the email we just sent.",
        "Your token expires in 24 hours; ask for a new one after that.",
        "We rotate the API key every quarter and keep it in the vault.",
        "Password: see 1Password, entry 'staging db'.",
        "the secret is to keep the cache warm before the demo",
        "Please never paste your password into chat.",
        "auth: required for every endpoint except /health",
    ]
    code = [
        "password = getpass.getpass('Password: ')",
        "token = os.environ['GITHUB_TOKEN']",
        "const apiKey = process.env.STRIPE_SECRET_KEY;",
        "def connect(user: str, password: str) -> Connection:",
        "let token: Option<String> = std::env::var(\"TOKEN\").ok();",
        "api_key = settings.SECRET_KEY",
        "if password == confirm_password:",
        "password: ${{ secrets.DB_PASSWORD }}",
        "secret = vault.read('kv/data/app')['data']['secret']",
        "PASSWORD_MIN_LENGTH=12",
        "max_tokens: 4096",
        "token_url: https://auth.example.test/oauth/token",
    ]
    placeholders = [
        "DB_PASSWORD=<your-password>",
        "password: ${DB_PASSWORD}",
        "password: {{ vault_password }}",
        '"password": "REDACTED"',
        "POSTGRES_PASSWORD=changeme",
        'password = "your_password_here"',
        "api_key: xxxxxxxxxxxxxxxxxxxx",
        "Password: ********",
        "token=%(token)s",
        "export API_KEY=$API_KEY",
        "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "postgres://user:password@localhost:5432/app",
        "mysql://root:<password>@db:3306/app",
        "redis://:${REDIS_PASSWORD}@cache:6379",
        "amqp://guest:guest@localhost:5672/",
        "secretName: db-credentials",
        "password_file: /run/secrets/db_password",
    ]
    for i in range(per_class):
        out.append(("prose", prose[i % len(prose)]))
        out.append(("code", code[i % len(code)]))
        out.append(("placeholder", placeholders[i % len(placeholders)]))
        kind = g.pick(["ssh-ed25519", "ssh-rsa", "ecdsa-sha2-nistp256"])
        out.append(("ssh-public-key", f"{kind} {ssh_blob(g, kind)} ada@laptop"))
        out.append(("authorized-keys", f'no-port-forwarding,from="10.0.0.0/8" {kind} {ssh_blob(g, kind)} deploy@ci'))
        out.append(("known-hosts", f"|1|{g.b64(20)}|{g.b64(20)} {kind} {ssh_blob(g, kind)}"))
        out.append(("pem-public", pem(g.pick(["PUBLIC KEY", "CERTIFICATE"]), g.b64(g.r.randrange(200, 700)))))
        text = g.pick([b"The quick brown fox jumps over the lazy dog again and again.", b'{"user":"ada","roles":["admin","dev"],"exp":1900000000}', b"hello world, this is a configuration note for the team"])
        out.append(("base64-text", f"payload: {base64.b64encode(text).decode()}"))
        png = base64.b64encode(b"\x89PNG" + g.r.randbytes(96)).decode()
        out.append(("data-uri", f'<img alt="logo" src="data:image/png;base64,{png}">'))
        out.append(("digest", f"image: ghcr.io/acme/api@sha256:{g.s(64, HEX)}"))
        out.append(("digest", f"  integrity sha512-{g.b64(64)}"))
        out.append(("digest", f"github.com/acme/lib v1.{i}.0 h1:{g.b64(32)}"))
        out.append(("commit", f"commit {g.s(40, HEX)}\nAuthor: Ada <ada@example.test>\n\n    fix the token refresh"))
        out.append(("commit", f"see https://github.com/acme/app/commit/{g.s(40, HEX)}"))
        u = g.s(32, HEX)
        out.append(("uuid", f"request {u[:8]}-{u[8:12]}-4{u[13:16]}-a{u[17:20]}-{u[20:]} failed with 502"))
        out.append(("public-key", f"Stripe('pk_live_{g.s(24)}')"))
        out.append(("digest", g.pick([
            f"{g.s(64, HEX)}  release-1.{i}.tar.gz",
            f"256 SHA256:{g.b64(32).rstrip('=')} ada@laptop (ED25519)",
            f"index {g.s(7, HEX)}..{g.s(7, HEX)} 100644",
            f'checksum = "{g.s(64, HEX)}"',
            f"pip install foo==1.0 --hash=sha256:{g.s(64, HEX)}",
            f"trace {g.s(32, HEX)} span {g.s(16, HEX)}",
        ])))
        out.append(("pem-public", pem("PGP PUBLIC KEY BLOCK", g.b64(g.r.randrange(300, 700)))))
        out.append(("pem-public", pem("PGP SIGNATURE", g.b64(g.r.randrange(200, 300)))))
        svg = base64.b64encode(b'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>').decode()
        out.append(("data-uri", f"background: url(data:image/svg+xml;base64,{svg});"))
        out.append(("placeholder", g.pick([
            "sk_live_****************1234",
            "ghp_************************************",
            "export OPENAI_API_KEY=<YOUR_API_KEY>",
            "token: <redacted>",
            "--password <password>",
            "AKIA****************",
            "Authorization: Bearer <token>",
            "api_key = 'YOUR-API-KEY-HERE'",
        ])))
        out.append(("code", g.pick([
            "password = var.db_password",
            "password: {{ .Values.db.password }}",
            "ansible_password: \"{{ vault_ssh_pass }}\"",
            "String password = System.getenv(\"DB_PASSWORD\");",
            "$password = $_POST['password'];",
            "const password = req.body.password;",
            "token = f\"Bearer {access_token}\"",
            "password := os.Getenv(\"DB_PASSWORD\")",
        ])))
        out.append(("prose", g.pick([
            "The API key is stored in 1Password under \"prod\".",
            "passwords must be rotated every 90 days; tokens: see the runbook",
            "Password reset emails go out within five minutes.",
            "If the token is invalid the API answers 401.",
            "secret: none of this is confidential, share freely",
        ])))
        out.append(("identifier", g.pick(["getUserAccountSettingsForCurrentTenant2", "SplitByUtf8BoundaryIfWindows", "com.example.platform.billing.InvoiceService3Impl", "src/Components2/UserProfile/AvatarImage3.tsx"])))
    return out


def ensure_venv():
    venv = ROOT / "target" / "dlp-compare" / "venv"
    exe = venv / "bin" / "detect-secrets"
    if not exe.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", DETECT_SECRETS], check=True)
    version = subprocess.run([str(exe), "--version"], capture_output=True, text=True, check=True).stdout.strip()
    return exe, version


def run_detect_secrets(exe, samples, workdir):
    folder = Path(workdir) / "corpus"
    folder.mkdir()
    for i, (_, _, text) in enumerate(samples):
        (folder / f"sample_{i:05}.txt").write_text(text)
    out = subprocess.run([str(exe), "scan", "--all-files", "."], cwd=folder, capture_output=True, text=True, check=True)
    results = json.loads(out.stdout)["results"]
    return [f"sample_{i:05}.txt" in results for i in range(len(samples))]


def run_warden(warden, samples, workdir, jobs):
    config = Path(workdir) / "warden.json"
    config.write_text("{}")

    def one(i_text):
        i, text = i_text
        db = Path(workdir) / f"w{i % jobs}.db"
        request = json.dumps({"direction": "outbound", "channel": "slack", "recipient": "U0123", "body": text})
        out = subprocess.run(
            [warden, "check", "outbound", "--config", str(config), "--db", str(db)],
            input=request,
            capture_output=True,
            text=True,
        )
        if out.returncode not in (0,):
            raise SystemExit(f"warden failed on sample {i}: {out.stderr.strip()}")
        verdict = json.loads(out.stdout)
        return verdict["decision"] == "deny" and verdict["rule"].startswith("dlp.secret.")

    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(one, [(i, t) for i, (_, _, t) in enumerate(samples)]))


def report(name, samples, flagged):
    tp = sum(1 for (pos, _, _), f in zip(samples, flagged) if pos and f)
    fn = sum(1 for (pos, _, _), f in zip(samples, flagged) if pos and not f)
    fp = sum(1 for (pos, _, _), f in zip(samples, flagged) if not pos and f)
    tn = sum(1 for (pos, _, _), f in zip(samples, flagged) if not pos and not f)
    recall = tp / max(tp + fn, 1)
    precision = tp / max(tp + fp, 1)
    far = fp / max(fp + tn, 1)
    print(f"{name:<16} recall {recall:6.1%}  precision {precision:6.1%}  false alarms {far:6.1%} of {fp + tn} negatives  (tp {tp}, fn {fn}, fp {fp})")


def per_class(samples, results):
    classes = sorted({(pos, cls) for pos, cls, _ in samples}, key=lambda x: (not x[0], x[1]))
    names = list(results)
    print(f"\n{'class':<24}{'n':>5}" + "".join(f"{n:>18}" for n in names))
    for pos, cls in classes:
        idx = [i for i, (p, c, _) in enumerate(samples) if p == pos and c == cls]
        cells = []
        for n in names:
            hit = sum(1 for i in idx if results[n][i])
            cells.append(f"{hit:>4} {'found' if pos else 'flagged':<7}")
        print(f"{('+ ' if pos else '- ') + cls:<24}{len(idx):>5}" + "".join(f"{c:>18}" for c in cells))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--warden", default=str(ROOT / "target" / "release" / "warden"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--per-class", type=int, default=12)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--misses", action="store_true", help="print the samples each tool got wrong")
    args = ap.parse_args()
    g = Gen(args.seed)
    samples = [(True, c, t) for c, t in positives(g, args.per_class)] + [(False, c, t) for c, t in negatives(g, args.per_class)]
    exe, version = ensure_venv()
    warden_version = subprocess.run([args.warden, "--version"], capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory() as work:
        ds = run_detect_secrets(exe, samples, work)
        wd = run_warden(args.warden, samples, work, args.jobs)
    npos = sum(1 for s in samples if s[0])
    print(f"corpus: seed {args.seed}, {npos} secrets, {len(samples) - npos} hard negatives")
    print(f"detect-secrets {version} (file mode, default plugins); {warden_version} (check outbound, no configuration)\n")
    report("detect-secrets", samples, ds)
    report("warden", samples, wd)
    per_class(samples, {"detect-secrets": ds, "warden": wd})
    if args.misses:
        for name, flags in (("detect-secrets", ds), ("warden", wd)):
            for (pos, cls, text), f in zip(samples, flags):
                if pos != f:
                    print(f"[{name}] {'missed' if pos else 'false alarm'} {cls}: {text[:160]!r}")


if __name__ == "__main__":
    main()
