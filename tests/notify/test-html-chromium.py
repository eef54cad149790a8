#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The HTML part on a phone: rendered by headless chromium at 390 px.

Each message is rendered with render-mail, its text/html part is laid out
in a 390 px wide frame (chromium's own window cannot be narrower than
500 px, a frame can), and the document's scrollWidth must be at most 390:
no horizontal scrolling.  A control case, the long-line message with its
blocks set back to `white-space: pre`, must overflow, or the measurement
would prove nothing.  The part must also stand without CSS and images:
no <style>, <img>, <script> or url(), only inline style attributes.

GA_SCREENSHOTS=DIR also writes DIR/mail-phone.png (390 px) and
DIR/mail-desktop.png (1024 px) of the first case.
Exit 77 (skip) when chromium is not installed.

Used by the end-to-end test on a delivered message:
  test-html-chromium.py --measure MAIL.eml      prints the scrollWidth at 390 px
  test-html-chromium.py --shots DIR MAIL.eml    phone and desktop screenshots
"""
import email
import html
import os
import re
import shutil
import subprocess
import sys
import tempfile
from email import policy

SRC = os.environ.get("SRCDIR", "")
G = os.path.join(SRC, "tests/golden/mail")
RENDER = os.environ.get("RENDER_MAIL", "")
WIDTH = 390

CASES = [
    ("longline", ["--claim", "2004.0000000000000104", "longline.json"]),
    ("single", ["--claim", "1234.00000000000000aa", "--site", "single.json"]),
    ("multi", ["--claim", "5678.00000000000000bb", "multi-0-node07.json",
               "multi-0-node08.json", "multi-batch.json"]),
    ("array", ["--claim", "900.00000000000000ee"]
     + ["array-%d.json" % i for i in range(5)]),
    ("timeout", ["--claim", "2002.0000000000000102", "timeout.json"]),
    ("inject", ["--claim", "4242.00000000000000cc", "inject.json"]),
]

n = 0
failed = False


def ok(cond, msg):
    global n, failed
    n += 1
    print("%s %d - %s" % ("ok" if cond else "not ok", n, msg))
    if not cond:
        failed = True


def chromium():
    for c in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(c)
        if p:
            return p
    return None


def html_of(args):
    argv = [RENDER]
    for a in args:
        argv.append(os.path.join(G, a) if a.endswith(".json") else a)
    raw = subprocess.run(argv, check=True, capture_output=True).stdout
    m = email.message_from_bytes(raw, policy=policy.default)
    return m.get_body(("html",)).get_content()


def framed(doc, width, height):
    """A page holding DOC in a WIDTH px frame that reports its layout."""
    return ("<!DOCTYPE html><html><body style=\"margin:0\">"
            "<iframe id=\"f\" style=\"border:0;display:block;width:%dpx;"
            "height:%dpx\" srcdoc=\"%s\"></iframe><script>"
            "var f=document.getElementById('f');f.onload=function(){"
            "var d=f.contentDocument.documentElement;"
            "document.title='SW='+d.scrollWidth+' CW='+d.clientWidth;};"
            "</script></body></html>" % (width, height,
                                         html.escape(doc, quote=True)))


def run_chromium(exe, page_path, extra):
    r = subprocess.run(
        [exe, "--headless", "--no-sandbox", "--disable-gpu",
         "--hide-scrollbars", "--virtual-time-budget=3000"] + extra
        + ["file://" + page_path],
        capture_output=True, timeout=120)
    return r.stdout.decode("utf-8", "replace")


def measure(exe, tmp, doc, width=WIDTH):
    page = os.path.join(tmp, "page.html")
    with open(page, "w") as f:
        f.write(framed(doc, width, 900))
    out = run_chromium(exe, page, ["--window-size=%d,900" % max(width, 500),
                                   "--dump-dom"])
    m = re.search(r"<title>SW=(\d+) CW=(\d+)</title>", out)
    return (int(m.group(1)), int(m.group(2))) if m else (None, None)


def screenshot(exe, tmp, doc, width, height, dest):
    page = os.path.join(tmp, "shot.html")
    with open(page, "w") as f:
        f.write(framed(doc, width, height))
    run_chromium(exe, page, ["--window-size=%d,%d" % (width, height),
                             "--screenshot=" + dest])
    return os.path.exists(dest)


def html_of_file(path):
    with open(path, "rb") as f:
        m = email.message_from_bytes(f.read(), policy=policy.default)
    return m.get_body(("html",)).get_content()


def tool(argv):
    exe = chromium()
    if not exe:
        print("chromium not installed", file=sys.stderr)
        return 77
    tmp = tempfile.mkdtemp(prefix="gpualert-html-")
    try:
        if argv[0] == "--measure":
            sw, _ = measure(exe, tmp, html_of_file(argv[1]))
            print(sw)
            return 0 if sw is not None else 1
        doc = html_of_file(argv[2])
        os.makedirs(argv[1], exist_ok=True)
        a = screenshot(exe, tmp, doc, WIDTH, 1500,
                       os.path.join(argv[1], "mail-phone.png"))
        b = screenshot(exe, tmp, doc, 1024, 1100,
                       os.path.join(argv[1], "mail-desktop.png"))
        return 0 if a and b else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    if len(sys.argv) > 1:
        return tool(sys.argv[1:])
    exe = chromium()
    if not exe:
        print("1..0 # SKIP chromium not installed (tests/install-deps.sh)")
        return 77
    tmp = tempfile.mkdtemp(prefix="gpualert-html-")
    try:
        docs = {}
        for name, args in CASES:
            doc = html_of(args)
            docs[name] = doc
            bad = [t for t in ("<style", "<img", "<script", "url(", "<link")
                   if t in doc.lower()]
            ok(not bad, "%s: inline CSS only, no images or scripts %s"
               % (name, bad or ""))
            sw, cw = measure(exe, tmp, doc)
            ok(sw is not None and sw <= WIDTH,
               "%s: scrollWidth %s <= %d at %d px (clientWidth %s)"
               % (name, sw, WIDTH, WIDTH, cw))
        # The control: the same long line in blocks that do not wrap.
        nowrap = docs["longline"].replace("white-space:pre-wrap",
                                          "white-space:pre")
        sw, _ = measure(exe, tmp, nowrap)
        ok(sw is not None and sw > WIDTH,
           "control: without pre-wrap the long line overflows (%s px)" % sw)
        # Without CSS it is still a readable document: the state word and
        # the evidence are text, in order.
        plain = re.sub(r' style="[^"]*"', "", docs["longline"])
        ok(re.search(r">FAILED<.*What happened.*Evidence.*train\.py",
                     plain, re.S) is not None,
           "readable with styles removed")
        shots = os.environ.get("GA_SCREENSHOTS")
        if shots:
            os.makedirs(shots, exist_ok=True)
            doc = docs.get(os.environ.get("GA_SCREENSHOT_CASE", "single"))
            if os.environ.get("GA_SCREENSHOT_HTML"):
                doc = open(os.environ["GA_SCREENSHOT_HTML"]).read()
            ok(screenshot(exe, tmp, doc, WIDTH, 1500,
                          os.path.join(shots, "mail-phone.png")),
               "phone screenshot")
            ok(screenshot(exe, tmp, doc, 1024, 1100,
                          os.path.join(shots, "mail-desktop.png")),
               "desktop screenshot")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("1..%d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
