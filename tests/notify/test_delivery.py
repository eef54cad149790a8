#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Integration tests of `gpualert send` against a real SMTP server
(aiosmtpd) and a real HTTP server on loopback, started here.  TAP output.

Each fault asserts that nothing is lost or duplicated: every report ends
up exactly once in the server's mailbox, in out/ (kept for retry) or in
dead/ (with a reason).

Needs Debian's python3-aiosmtpd (/usr/bin/python3); exits 77 (skip)
without it.  Environment: GPUALERT, SPOOL_PUT, SRCDIR (set by meson).
"""
import asyncio
import email
import email.policy
import glob
import http.server
import json
import math
import os
import re
import select
import shutil
import ssl
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

try:
    from aiosmtpd.controller import Controller
except ImportError:
    print("1..0 # SKIP python3-aiosmtpd not installed")
    sys.exit(77)

GPUALERT = os.environ["GPUALERT"]
SPOOL_PUT = os.environ["SPOOL_PUT"]
GOLDEN = os.path.join(os.environ["SRCDIR"], "tests", "golden", "mail")

n_tests = 0
failed = 0


def ok(cond, desc, diag="", todo=None):
    """One check; with TODO (a reason) a failure is expected, not counted."""
    global n_tests, failed
    n_tests += 1
    if not cond and not todo:
        failed += 1
    print(("ok" if cond else "not ok"), n_tests, "-", desc,
          "# TODO " + todo if todo and not cond else "", flush=True)
    if not cond and diag:
        for line in str(diag).splitlines()[:30]:
            print("#", line)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Handler:
    """mode: ok | 451 | 550 | slow-rcpt (sleeps before answering RCPT)."""

    def __init__(self, maildir):
        self.maildir = maildir
        self.mode = "ok"
        self.count = 0
        self.rcpt_held = threading.Event()  # slow-rcpt: a RCPT is waiting

    async def handle_RCPT(self, server, session, envelope, address, options):
        if self.mode == "slow-rcpt":
            self.rcpt_held.set()
            await asyncio.sleep(30)
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        if self.mode == "451":
            return "451 4.3.0 try again later"
        if self.mode == "550":
            return "550 5.1.1 mailbox unavailable"
        self.count += 1
        self.tls_used = session.ssl is not None
        path = os.path.join(self.maildir, "%04d.eml" % self.count)
        with open(path, "wb") as f:
            f.write(envelope.original_content or envelope.content)
        with open(path + ".env", "w") as f:
            json.dump({"from": envelope.mail_from, "to": envelope.rcpt_tos}, f)
        return "250 2.0.0 queued"


class Smtp:
    def __init__(self, port, maildir, tls_context=None):
        self.handler = Handler(maildir)
        self.port = port
        extra = {}
        if tls_context:
            extra = {"tls_context": tls_context, "require_starttls": True}
        self.ctl = Controller(self.handler, hostname="127.0.0.1", port=port,
                              **extra)

    def start(self):
        self.ctl.start()
        return self

    def stop(self):
        self.ctl.stop()


class Env:
    def __init__(self):
        self.root = tempfile.mkdtemp(prefix="ga-notify-")
        self.spool = os.path.join(self.root, "spool")
        self.maildir = os.path.join(self.root, "mail")
        os.makedirs(self.maildir)
        self.port = free_port()
        self.now = None  # the sender's clock: None is the wall clock
        self.settings = {
            "mail.smtp_url": "smtp://127.0.0.1:%d" % self.port,
            "mail.from": "gpualert@cluster.example.org",
            "recipients.owner_domain": "cluster.example.org",
            "mail.connect_timeout": "2",
            "mail.timeout": "3",
            "mail.retry_base": "1",
            "spool.quiet_period": "0",
            "mail.attach_budget": "65536",
        }

    def put(self, report, *collect):
        r = subprocess.run([SPOOL_PUT, self.spool, report, *collect],
                           capture_output=True, text=True)
        return r

    def send(self, *extra, timeout=60):
        args = [GPUALERT, "send", "--once", "--spool", self.spool]
        for k, v in self.settings.items():
            args += ["--set", "%s=%s" % (k, v)]
        env = self.env()
        return subprocess.run(args + list(extra), capture_output=True,
                              text=True, timeout=timeout, env=env)

    def spawn(self, *extra):
        args = [GPUALERT, "send", "--once", "--spool", self.spool]
        for k, v in self.settings.items():
            args += ["--set", "%s=%s" % (k, v)]
        env = self.env()
        return subprocess.Popen(args + list(extra), stderr=subprocess.PIPE,
                                text=True, env=env)

    def env(self):
        env = dict(os.environ, GPUALERT_CONFIG=os.path.join(self.root, "none.conf"))
        open(env["GPUALERT_CONFIG"], "w").close()
        env.pop(CLOCK_ENV, None)
        if self.now is not None:
            env[CLOCK_ENV] = str(self.now)
        return env

    def advance(self, seconds):
        """Let SECONDS pass for the sender: move its clock.  advance(0)
        stops the clock: the sends that follow all see the same second."""
        self.now = max(self.now or 0, int(time.time())) + math.ceil(seconds)

    def ls(self, sub):
        d = os.path.join(self.spool, sub)
        return sorted(os.listdir(d)) if os.path.isdir(d) else []

    def mails(self):
        out = []
        for p in sorted(glob.glob(os.path.join(self.maildir, "*.eml"))):
            with open(p, "rb") as f:
                out.append(email.message_from_bytes(f.read(),
                                                    policy=email.policy.default))
        return out

    def sent_lines(self):
        p = os.path.join(self.spool, "sent.log")
        return open(p).read().splitlines() if os.path.exists(p) else []

    def cleanup(self):
        shutil.rmtree(self.root, ignore_errors=True)


CLOCK_ENV = "GPUALERT_TEST_NOW"


def clock_injectable():
    """Whether `gpualert send` reads its clock from GPUALERT_TEST_NOW: it
    sweeps spool files left in tmp/ for an hour, so with the clock two
    hours ahead a fresh one goes."""
    e = Env()
    try:
        os.makedirs(os.path.join(e.spool, "tmp"))
        probe = os.path.join(e.spool, "tmp", "probe")
        open(probe, "w").close()
        e.now = int(time.time()) + 7200
        e.send()
        return not os.path.exists(probe)
    finally:
        e.cleanup()


def wait_line(stream, text, timeout):
    """Read STREAM's lines until one holds TEXT or TIMEOUT seconds pass.
    Returns (found, the lines read)."""
    seen = []
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([stream], [], [], left)[0]:
            return False, seen
        line = stream.readline()
        if not line:
            return False, seen
        seen.append(line)
        if text in line:
            return True, seen


def g(name):
    return os.path.join(GOLDEN, name)


def test_delivery_and_structure():
    e = Env()
    smtp = Smtp(e.port, e.maildir).start()
    try:
        # A work directory with a full log and artifacts, collected by the
        # same function the plugin calls.
        wd = os.path.join(e.root, "work")
        os.makedirs(wd)
        rep = json.load(open(g("single.json")))
        for t in rep["tasks"]:
            t["log_path"] = os.path.join(wd, "job.%d.log" % t["task_id"])
            with open(t["log_path"], "w") as f:
                f.write("".join("iteration %d loss 1.%04d\n" % (i, i)
                                for i in range(3000)))
        rep["work_dir"] = wd
        with open(os.path.join(wd, "metrics.csv"), "w") as f:
            f.write("step,loss\n1,2.0\n")
        with open(os.path.join(wd, "big.bin"), "wb") as f:
            f.write(os.urandom(200000))
        # Files are read as the job's user: when running as root, give the
        # work dir to uid 1001 and plant a root-only file the glob matches.
        if os.getuid() == 0:
            os.chmod(e.root, 0o755)
            for f in os.listdir(wd):
                os.chown(os.path.join(wd, f), 1001, 1001)
            os.chown(wd, 1001, 1001)
            with open(os.path.join(wd, "secret.csv"), "w") as f:
                f.write("root only\n")
            os.chmod(os.path.join(wd, "secret.csv"), 0o600)
        else:
            rep["uid"], rep["gid"] = os.getuid(), os.getgid()
        rp = os.path.join(e.root, "r.json")
        json.dump(rep, open(rp, "w"))
        r = e.put(rp, wd, "*.csv,*.bin", "60000")
        ok(r.returncode == 0, "report and files spooled", r.stdout + r.stderr)
        r = e.send()
        ok(r.returncode == 0, "send --once exits 0", r.stderr)
        mails = e.mails()
        ok(len(mails) == 1, "one message delivered", r.stderr)
        ok(e.ls("new") == [] and e.ls("out") == [] and e.ls("dead") == [],
           "spool empty after acceptance")
        ok(len(e.sent_lines()) == 1, "sent.log records it")
        if not mails:
            return
        m = mails[0]
        env = json.load(open(os.path.join(e.maildir, "0001.eml.env")))
        ok(env["from"] == "gpualert@cluster.example.org", "envelope sender from config")
        ok(env["to"] == ["alice@example.org"], "envelope recipients from the report")
        ok(m["Subject"] == "[gpualert] FAILED: cuda_oom on node07 - job 1234 (train)",
           "subject: %s" % m["Subject"])
        ok(re.fullmatch(r"<gpualert\.1234\.[0-9a-f]{16}@cluster\.example\.org>",
                        m["Message-ID"] or "") is not None,
           "stable Message-ID %s" % m["Message-ID"])
        ok(m.get_content_type() == "multipart/mixed", "multipart/mixed")
        parts = list(m.iter_parts())
        ok(parts[0].get_content_type() == "multipart/alternative",
           "first part multipart/alternative")
        alt = [p.get_content_type() for p in parts[0].iter_parts()]
        ok(alt == ["text/plain", "text/html"], "text/plain and text/html: %s" % alt)
        text = parts[0].get_body(("plain",)).get_content()
        ok("line 1201: torch.OutOfMemoryError" in text, "evidence with line numbers")
        ok("What to do" in text and "Exit       exit code 1" in text,
           "hint and exit status")
        atts = {p.get_filename(): p for p in m.iter_attachments()}
        ok("step 49 loss 2.049" in text and not any(n.startswith("tail-") for n in atts),
           "log tail in the body, not attached: %s" % sorted(atts))
        gz = [n for n in atts if n.endswith(".log.gz")]
        ok(len(gz) >= 1, "full log attached gzip-compressed: %s" % gz)
        ok("metrics.csv" in atts, "artifact glob matched")
        ok("big.bin" in text and "NOT attached" in text and "budget" in text,
           "what does not fit is listed with the reason", text[-1500:])
        if os.getuid() == 0:
            ok("secret.csv" not in atts and "secret.csv" in text and
               "Permission denied" in text,
               "files read as the job's user (root-only file refused)")
        total = sum(len(p.get_content()) if isinstance(p.get_content(), bytes)
                    else len(p.get_content().encode()) for p in atts.values())
        ok(total <= 60000 + 65536, "attachments within budget (%d bytes)" % total)
    finally:
        smtp.stop()
        e.cleanup()


def test_merge_and_array():
    e = Env()
    smtp = Smtp(e.port, e.maildir).start()
    try:
        for f in ("multi-0-node07.json", "multi-0-node08.json", "multi-batch.json"):
            e.put(g(f))
        for i in range(5):
            e.put(g("array-%d.json" % i))
        e.settings["spool.quiet_period"] = "0"
        r = e.send()
        mails = e.mails()
        ok(len(mails) == 2, "3 step/node reports + 5 array tasks -> 2 messages",
           r.stderr)
        subj = sorted(m["Subject"] for m in mails)
        ok(any(s.startswith("[gpualert] FAILED: cuda_oom on node07 - job 5678 (train)")
               for s in subj),
           "multi-node job: root cause first: %s" % subj)
        ok(any(s.startswith("[gpualert] array 900 (sweep): 3/5 FAILED")
               for s in subj), "array digest: %s" % subj)
        digest = [m for m in mails if "array" in m["Subject"]]
        if digest:
            body = digest[0].get_body(("plain",)).get_content()
            ok("900_0, 900_2, 900_3" in body, "digest lists failing tasks as %A_%a")
    finally:
        smtp.stop()
        e.cleanup()


def test_quiet_period():
    e = Env()
    smtp = Smtp(e.port, e.maildir).start()
    try:
        e.settings["spool.quiet_period"] = "60"
        e.put(g("multi-0-node07.json"))
        e.send()
        ok(len(e.mails()) == 0 and len(e.ls("new")) == 1,
           "step report waits for the quiet period")
        e.put(g("multi-batch.json"))
        e.send()
        ok(len(e.mails()) == 1 and e.ls("new") == [],
           "batch step report completes the job at once")
    finally:
        smtp.stop()
        e.cleanup()


def test_down_then_up():
    e = Env()
    e.put(g("single.json"))
    r = e.send()
    ok(e.ls("out") and not e.mails(), "server down: kept in out/", r.stderr)
    ok("kept, attempt 1" in r.stderr, "clear log line", r.stderr)
    smtp = Smtp(e.port, e.maildir).start()
    try:
        e.advance(1)   # retry_base = 1 s
        r = e.send()
        ok(len(e.mails()) == 1 and e.ls("out") == [], "delivered once after retry",
           r.stderr)
        r = e.send()
        ok(len(e.mails()) == 1, "no duplicate on the next pass")
    finally:
        smtp.stop()
        e.cleanup()


def test_451_then_ok():
    e = Env()
    smtp = Smtp(e.port, e.maildir).start()
    try:
        smtp.handler.mode = "451"
        e.put(g("single.json"))
        e.advance(0)
        r = e.send()
        ok(e.ls("out") and not e.mails() and "451" in r.stderr,
           "451: kept for retry", r.stderr)
        state = open(glob.glob(os.path.join(e.spool, "out", "*", "state"))[0]).read()
        ok("attempts=1" in state and "451" in state, "state records the attempt")
        r = e.send()
        ok(e.ls("out") and not e.mails(), "not retried before its time")
        smtp.handler.mode = "ok"
        e.advance(1)   # retry_base = 1 s
        r = e.send()
        ok(len(e.mails()) == 1 and e.ls("out") == [], "delivered after 451",
           r.stderr)
    finally:
        smtp.stop()
        e.cleanup()


def test_550():
    e = Env()
    smtp = Smtp(e.port, e.maildir).start()
    try:
        smtp.handler.mode = "550"
        e.put(g("single.json"))
        r = e.send()
        dead = e.ls("dead")
        ok(len(dead) == 1 and e.ls("out") == [] and not e.mails(),
           "550: dead-lettered", r.stderr)
        if dead:
            d = os.path.join(e.spool, "dead", dead[0])
            reason = open(os.path.join(d, "reason")).read()
            ok("550" in reason, "reason recorded: %s" % reason.strip())
            ok(glob.glob(os.path.join(d, "*.json")), "report kept in dead/")
    finally:
        smtp.stop()
        e.cleanup()


def test_hang():
    e = Env()
    # Listens, never accepts or greets: the connection completes in the
    # kernel and the client waits for a banner that never comes.
    s = socket.socket()
    s.bind(("127.0.0.1", e.port))
    s.listen(8)
    try:
        e.put(g("single.json"))
        t0 = time.time()
        r = e.send()
        dt = time.time() - t0
        ok(e.ls("out") and "timed out" in r.stderr.lower() or
           "timeout" in r.stderr.lower(), "silent server: timeout, kept", r.stderr)
        ok(dt < 10, "bounded by [mail] timeout (%.1f s)" % dt)
    finally:
        s.close()
    smtp = Smtp(e.port, e.maildir).start()
    try:
        e.advance(1)   # retry_base = 1 s
        e.send()
        ok(len(e.mails()) == 1, "delivered once the server answers")
    finally:
        smtp.stop()
        e.cleanup()


def test_tls_required():
    e = Env()
    smtp = Smtp(e.port, e.maildir).start()
    try:
        e.settings["mail.tls"] = "starttls"
        e.put(g("single.json"))
        r = e.send()
        ok(e.ls("out") and not e.mails(), "STARTTLS required, not offered: kept")
        ok("ssl" in r.stderr.lower() or "tls" in r.stderr.lower(),
           "clear error", r.stderr)
        ok("Hint" not in str(e.mails()), "nothing sent in the clear")
    finally:
        smtp.stop()
        e.cleanup()


def test_starttls_verified():
    """STARTTLS required and offered, the relay's certificate signed by a
    site CA given with [mail] ca_file: delivered over TLS.  Without the
    CA the certificate is not trusted: kept, never sent in the clear."""
    e = Env()
    key = os.path.join(e.root, "key.pem")
    cert = os.path.join(e.root, "cert.pem")
    r = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048",
                        "-nodes", "-keyout", key, "-out", cert, "-days", "1",
                        "-subj", "/CN=127.0.0.1",
                        "-addext", "subjectAltName=IP:127.0.0.1"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        ok(False, "openssl made a test certificate", r.stderr)
        return
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)
    smtp = Smtp(e.port, e.maildir, tls_context=ctx).start()
    try:
        e.settings["mail.tls"] = "starttls"
        e.put(g("single.json"))
        r = e.send()
        ok(e.ls("out") and not e.mails(),
           "an untrusted certificate: kept, nothing sent", r.stderr)
        e.settings["mail.ca_file"] = cert
        e.advance(1)   # retry_base = 1 s
        r = e.send()
        ok(len(e.mails()) == 1 and not e.ls("out"),
           "with ca_file: delivered", r.stderr)
        ok(getattr(smtp.handler, "tls_used", False), "... over TLS")
    finally:
        smtp.stop()
        e.cleanup()


def test_credentials_mode():
    e = Env()
    smtp = Smtp(e.port, e.maildir).start()
    try:
        cred = os.path.join(e.root, "cred")
        with open(cred, "w") as f:
            f.write("user:secret\n")
        os.chmod(cred, 0o644)
        e.settings["mail.credentials_file"] = cred
        e.put(g("single.json"))
        r = e.send()
        ok(e.ls("out") and not e.mails() and "refused" in r.stderr,
           "world-readable credentials file refused", r.stderr)
    finally:
        smtp.stop()
        e.cleanup()


def test_killed_mid_delivery():
    e = Env()
    smtp = Smtp(e.port, e.maildir).start()
    try:
        smtp.handler.mode = "slow-rcpt"
        e.put(g("single.json"))
        p = e.spawn()
        eml = None
        for _ in range(100):
            found = glob.glob(os.path.join(e.spool, "out", "*", "message.eml"))
            if found:
                eml = found[0]
                break
            time.sleep(0.05)
        # Killed while the server holds its RCPT: mid-delivery for sure.
        held = smtp.handler.rcpt_held.wait(timeout=30)
        p.send_signal(signal.SIGKILL)
        p.wait()
        ok(held and eml is not None and e.ls("out"),
           "killed mid-delivery: claim kept")
        mid = None
        if eml:
            mid = email.message_from_bytes(open(eml, "rb").read())["Message-ID"]
        smtp.handler.mode = "ok"
        r = e.send()
        mails = e.mails()
        ok(len(mails) == 1 and e.ls("out") == [], "delivered after restart",
           r.stderr)
        if mails:
            ok(mails[0]["Message-ID"] == mid, "Message-ID identical: %s" % mid)
    finally:
        smtp.stop()
        e.cleanup()


def test_sigterm_service():
    e = Env()
    smtp = Smtp(e.port, e.maildir).start()
    try:
        args = [GPUALERT, "send", "--spool", e.spool, "--interval", "1"]
        for k, v in e.settings.items():
            args += ["--set", "%s=%s" % (k, v)]
        env = dict(os.environ, GPUALERT_CONFIG="/dev/null")
        p = subprocess.Popen(args, stderr=subprocess.PIPE, text=True, env=env)
        # "serving" comes once new/ is watched: a report put after it
        # wakes the service.
        serving, seen = wait_line(p.stderr, "gpualert: send: serving", 30)
        ok(serving, "service: started", "".join(seen))
        e.put(g("single.json"))
        for _ in range(50):
            if e.mails():
                break
            time.sleep(0.1)
        ok(len(e.mails()) == 1, "service: delivered on inotify")
        p.send_signal(signal.SIGTERM)
        try:
            rc = p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = -1
        err = p.stderr.read()
        ok(rc == 0 and "stopping on signal" in err, "SIGTERM: clean exit 0", err)
    finally:
        smtp.stop()
        e.cleanup()


def test_rate_limit():
    e = Env()
    smtp = Smtp(e.port, e.maildir).start()
    try:
        e.settings["mail.rate_per_user_hour"] = "2"
        for i in range(4):
            rep = json.load(open(g("single.json")))
            rep["job_id"] = str(7000 + i)
            p = os.path.join(e.root, "r%d.json" % i)
            json.dump(rep, open(p, "w"))
            e.put(p)
        r = e.send()
        ok(len(e.mails()) == 2, "2 per user per hour: 2 sent", r.stderr)
        ok(len(e.ls("out")) == 2 and "rate limit" in r.stderr,
           "the rest deferred, not dropped", r.stderr)
        r = e.send()
        ok(len(e.mails()) == 2 and len(e.ls("out")) == 2,
           "restart keeps counting (sent.log)")
    finally:
        smtp.stop()
        e.cleanup()


class Hook(http.server.BaseHTTPRequestHandler):
    bodies = []
    status = 200

    titles = []

    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0))
        Hook.bodies.append((self.headers.get("Content-Type"), self.rfile.read(n)))
        Hook.titles.append((self.path, self.headers.get("Title")))
        self.send_response(Hook.status)
        self.end_headers()

    def log_message(self, *a):
        pass


def test_webhook():
    e = Env()
    port = free_port()
    srv = http.server.HTTPServer(("127.0.0.1", port), Hook)
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    try:
        e.settings["webhook.url"] = "http://127.0.0.1:%d/hook" % port
        rep = json.load(open(g("single.json")))
        rep["mode"] = "webhook"
        p = os.path.join(e.root, "w.json")
        json.dump(rep, open(p, "w"))
        Hook.status = 503
        e.put(p)
        r = e.send()
        ok(len(Hook.bodies) == 1 and e.ls("out"), "webhook 503: kept", r.stderr)
        Hook.status = 200
        e.advance(1)   # retry_base = 1 s
        r = e.send()
        ok(len(Hook.bodies) == 2 and e.ls("out") == [], "webhook delivered",
           r.stderr)
        ctype, body = Hook.bodies[-1]
        doc = json.loads(body)
        ok(ctype == "application/json" and
           doc["text"].startswith("[gpualert] FAILED: cuda_oom on node07 - job 1234"),
           "Slack-compatible text field: %s" % doc.get("text", "")[:60].replace("\n", " "))
    finally:
        srv.shutdown()
        e.cleanup()


def test_personal_webhook_and_fail_only():
    e = Env()
    port = free_port()
    srv = http.server.HTTPServer(("127.0.0.1", port), Hook)
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    try:
        Hook.status = 200
        del Hook.bodies[:], Hook.titles[:]
        e.settings["webhook.allowed_hosts"] = "127.0.0.1:%d" % port
        rep = json.load(open(g("single.json")))
        rep["mode"] = "webhook"
        rep["webhook_url"] = "http://127.0.0.1:%d/alice-topic" % port
        rep["webhook_format"] = "ntfy"
        p = os.path.join(e.root, "n.json")
        json.dump(rep, open(p, "w"))
        e.put(p)
        r = e.send()
        ok(len(Hook.bodies) == 1 and Hook.titles[0] ==
           ("/alice-topic", "[gpualert] FAILED: cuda_oom on node07 - job 1234 (train)")
           and Hook.bodies[0][0].startswith("text/plain"),
           "ntfy: the user's topic URL, Title header, plain text: %r" % Hook.titles,
           r.stderr)
        # The admin removed the host since: never sent, dead-lettered.
        rep["job_id"] = "1235"
        rep["webhook_url"] = "http://127.0.0.2:%d/x" % port
        json.dump(rep, open(p, "w"))
        e.put(p)
        r = e.send()
        ok(len(Hook.bodies) == 1 and len(e.ls("dead")) == 1,
           "a host no longer allowed: dead-lettered, nothing sent", r.stderr)
        # The site's webhook with none configured: dead at once, with
        # the reason, instead of days of retries.
        rep["job_id"] = "1236"
        del rep["webhook_url"], rep["webhook_format"]
        json.dump(rep, open(p, "w"))
        e.put(p)
        r = e.send()
        dead = e.ls("dead")
        reason = ""
        if len(dead) == 2:
            d = [x for x in dead if x.startswith("1236.")]
            reason = open(os.path.join(e.spool, "dead", d[0], "reason")).read() if d else ""
        ok("url is not configured" in reason and e.ls("out") == [],
           "site webhook not configured: dead-lettered at once: %s" % reason.strip(),
           r.stderr)
        # notify = fail: a clean success is recorded, not sent.
        ok_rep = json.load(open(g("success.json")))
        ok_rep["mode"] = "email"
        ok_rep["notify"] = "fail"
        json.dump(ok_rep, open(p, "w"))
        e.put(p)
        r = e.send()
        ok(e.mails() == [] and e.ls("new") == [] and e.ls("out") == [] and
           any("(success, fail-only)" in l for l in e.sent_lines()),
           "fail-only success: nothing sent, recorded in sent.log", r.stderr)
    finally:
        srv.shutdown()
        e.cleanup()


def test_enospc():
    e = Env()
    os.makedirs(e.spool)
    big = json.load(open(g("single.json")))
    big["tasks"][1]["tail"] = "x" * 200000
    p = os.path.join(e.root, "big.json")
    json.dump(big, open(p, "w"))
    cmd = ("mount -t tmpfs -o size=64k tmpfs '%s' && '%s' '%s' '%s'; "
           "echo new=$(ls '%s'/new | wc -l) tmp=$(ls -A '%s'/tmp | wc -l)" %
           (e.spool, SPOOL_PUT, e.spool, p, e.spool, e.spool))
    try:
        r = subprocess.run(["unshare", "-m", "sh", "-c", cmd],
                           capture_output=True, text=True, timeout=30)
    except FileNotFoundError:
        r = None
    if r is None or "mount" in r.stderr and "rc=" not in r.stdout:
        print("ok %d - # SKIP cannot mount a tmpfs here" % (n_tests + 1))
        globals()["n_tests"] += 1
        e.cleanup()
        return
    ok("rc=-28" in r.stdout, "disk full: ga_spool_write returns -ENOSPC",
       r.stdout + r.stderr)
    ok("new=0 tmp=0" in r.stdout, "nothing half-written left", r.stdout)
    ok("No space left on device" in r.stderr and "job is not affected" in r.stderr,
       "clear error", r.stderr)
    e.cleanup()


def report_as(e, name, **fields):
    rep = json.load(open(g("single.json")))
    rep.update(fields)
    p = os.path.join(e.root, name)
    json.dump(rep, open(p, "w"))
    return p


def test_uids_never_merged():
    e = Env()
    smtp = Smtp(e.port, e.maildir).start()
    try:
        # Same job id, step and node, two users (what an array id taken
        # from the environment used to forge): two names, two messages.
        e.put(report_as(e, "a.json", job_id="8100", uid=1001, user="alice",
                        recipients=["alice@example.org"]))
        e.put(report_as(e, "v.json", job_id="8100", uid=1002, user="victor",
                        recipients=["victor@example.org"]))
        e.put(report_as(e, "a2.json", job_id="8100", uid=1001, user="alice",
                        recipients=["alice@example.org"]))
        ok(len(e.ls("new")) == 3 and
           any(n.endswith(".u1001.2.json") for n in e.ls("new")),
           "the same name again gets a suffix: nothing replaced", e.ls("new"))
        r = e.send()
        mails = e.mails()
        ok(len(mails) == 2, "two users, two messages", r.stderr)
        to = sorted(m["To"] for m in mails)
        ok(to == ["alice@example.org", "victor@example.org"],
           "each to its own user: %s" % to)
        # A report planted into another uid's claim by name (its JSON says
        # uid 1002): taken out of the message, never sent with it.
        e.put(report_as(e, "b.json", job_id="8101", uid=1001, user="alice",
                        recipients=["alice@example.org"]))
        planted = report_as(e, "p.json", job_id="8101", uid=1002,
                            user="victor", recipients=["victor@example.org"])
        step = json.load(open(planted))["step_id"]
        shutil.copy(planted, os.path.join(e.spool, "new",
                                          "8101.%s.node08.u1001.json" % step))
        r = e.send()
        mails = e.mails()
        ok(len(mails) == 3 and "victor" not in mails[-1]["To"],
           "the planted report is not mailed", r.stderr)
        dead = os.path.join(e.spool, "dead", "8101.%s.node08.u1001" % step)
        ok(os.path.exists(os.path.join(dead, "reason")) and
           "differs" in open(os.path.join(dead, "reason")).read(),
           "it waits in dead/ with the reason", r.stderr)
    finally:
        smtp.stop()
        e.cleanup()


def test_sent_log_not_forged():
    e = Env()
    smtp = Smtp(e.port, e.maildir).start()
    try:
        e.put(report_as(e, "f.json", job_id="8200", mode="log",
                        user="mallory\n1700000000 victim 9.0000000000000000 <x@y>"))
        e.send()
        lines = e.sent_lines()
        ok(len(lines) == 1 and "mallory?1700000000?victim" in lines[0],
           "a newline in the user cannot forge a sent.log line", lines)
    finally:
        smtp.stop()
        e.cleanup()


def test_rate_counts_deliveries_only():
    e = Env()
    smtp = Smtp(e.port, e.maildir).start()
    try:
        e.settings["mail.rate_per_user_hour"] = "2"
        for i in range(4):
            e.put(report_as(e, "l%d.json" % i, job_id=str(8300 + i),
                            mode="log"))
        e.send()
        ok(len(e.sent_lines()) == 4 and len(e.mails()) == 0,
           "4 log-only reports recorded, nothing mailed")
        e.put(report_as(e, "m.json", job_id="8310"))
        r = e.send()   # a fresh sender: reads sent.log
        ok(len(e.mails()) == 1 and e.ls("out") == [],
           "log-only reports do not count toward the mail limit", r.stderr)
    finally:
        smtp.stop()
        e.cleanup()


def test_deferral_ends():
    e = Env()
    smtp = Smtp(e.port, e.maildir).start()
    try:
        e.settings["mail.rate_per_user_hour"] = "1"
        e.settings["mail.max_age"] = "60"
        for i in range(2):
            e.put(report_as(e, "d%d.json" % i, job_id=str(8400 + i)))
        r = e.send()
        out = e.ls("out")
        ok(len(e.mails()) == 1 and len(out) == 1 and "rate limit" in r.stderr,
           "the second message is deferred", r.stderr)
        # It has waited past max_age (first seen 2 minutes ago).
        st = os.path.join(e.spool, "out", out[0], "state") if out else ""
        if st:
            text = open(st).read()
            text = "\n".join("first_seen=%d" % (time.time() - 120)
                             if l.startswith("first_seen=") else
                             "next_try=0" if l.startswith("next_try=") else l
                             for l in text.splitlines()) + "\n"
            open(st, "w").write(text)
        r = e.send()
        ok(e.ls("out") == [] and len(e.ls("dead")) == 1 and
           len(e.mails()) == 1,
           "deferred past max_age: dead-lettered, not kept forever", r.stderr)
        reason = glob.glob(os.path.join(e.spool, "dead", "*", "reason"))
        ok(reason and "rate limit" in open(reason[0]).read(),
           "the reason says so")
    finally:
        smtp.stop()
        e.cleanup()


def test_long_command_line():
    e = Env()
    smtp = Smtp(e.port, e.maildir).start()
    try:
        cmd = "python train.py " + " ".join(
            "+model.layers.%d.dim=%d" % (i, 4096) for i in range(3000))
        ok(len(cmd) > 65536, "a Hydra-style command line of %d bytes" % len(cmd))
        r = e.put(report_as(e, "h.json", job_id="8500", command=cmd))
        ok("rc=0" in r.stdout, "spooled", r.stdout + r.stderr)
        r = e.send()
        mails = e.mails()
        ok(len(mails) == 1 and e.ls("dead") == [],
           "delivered, not dead-lettered for its size", r.stderr)
        if mails:
            body = mails[0].get_body(("plain",)).get_content()
            ok("+model.layers.0.dim=4096" in body and "cut by gpualert" in body,
               "the command's start and the cut marker are in the mail")
    finally:
        smtp.stop()
        e.cleanup()


def test_no_starvation():
    e = Env()
    smtp = Smtp(e.port, e.maildir).start()
    try:
        env = dict(os.environ, GPUALERT_SPOOL_TOTAL_MAX=str(1 << 20),
                   GPUALERT_SPOOL_USER_SHARE="25")
        def put_big(name, job, uid, user):
            rep = json.load(open(g("single.json")))
            rep.update(job_id=str(job), uid=uid, user=user,
                       recipients=["%s@example.org" % user])
            rep["tasks"][1]["tail"] = "x" * 200000
            p = os.path.join(e.root, name)
            json.dump(rep, open(p, "w"))
            return subprocess.run([SPOOL_PUT, e.spool, p], capture_output=True,
                                  text=True, env=env)
        rcs = [put_big("m%d.json" % i, 8600 + i, 1001, "mallory").stdout
               for i in range(8)]
        ok(sum("rc=0" in r for r in rcs) == 1 and
           sum("rc=-28" in r for r in rcs) == 7,
           "eight large reports of one user: one fits its share of the "
           "spool, the rest are refused", rcs)
        r = put_big("v.json", 8700, 1002, "victor")
        ok("rc=0" in r.stdout, "another user's report still fits",
           r.stdout + r.stderr)
        r = e.send()
        ok(len(e.mails()) == 2, "both delivered", r.stderr)
        r = put_big("m9.json", 8609, 1001, "mallory")
        ok("rc=0" in r.stdout,
           "once delivered, the share is free again (reconciled by send)",
           r.stdout + r.stderr)
    finally:
        smtp.stop()
        e.cleanup()


# The tests move the sender's clock instead of sleeping: that must work.
ok(clock_injectable(), "gpualert send reads its clock from " + CLOCK_ENV)

for t in (test_delivery_and_structure, test_merge_and_array, test_quiet_period,
          test_down_then_up, test_451_then_ok, test_550, test_hang,
          test_tls_required, test_starttls_verified, test_credentials_mode, test_killed_mid_delivery,
          test_sigterm_service, test_rate_limit, test_webhook,
          test_personal_webhook_and_fail_only, test_enospc,
          test_uids_never_merged, test_sent_log_not_forged,
          test_rate_counts_deliveries_only, test_deferral_ends,
          test_long_command_line, test_no_starvation):
    print("#", t.__name__, flush=True)
    try:
        t()
    except Exception as ex:  # a crash is a failure, not an abort
        ok(False, "%s raised %r" % (t.__name__, ex))
print("1..%d" % n_tests)
sys.exit(1 if failed else 0)
