"""mixseq serve's page (issue 28): GET / answers one self-contained HTML page with a text box, and
nothing in it comes from another host; in a real browser (headless Chromium driven through
chromedriver's WebDriver HTTP protocol, when Debian's chromium-driver is installed) the page names
the served models and the translator's languages (GET /info), typing into the box shows the
translations `mixseq translate` gives, the alignment grid marks the cells of the server's
alignment, and the metrics line fills in. Given the speech models, it also uploads an audio file
(the transcript shown is `mixseq transcribe`'s), records through Chromium's fake microphone (which
plays the same file) and gets a transcript, plays what "speak" fetched (the bytes of `mixseq
synthesize`'s file) and shows `mixseq classify`'s label.
  serve_page_check.py <mixseq> <model.pt> <sources> <expected translations> <work dir>
      [--recognizer CKPT --audio WAV --transcript FILE --synthesizer CKPT --speak TEXT --spoken WAV
       --classifier CKPT --classify TEXT --classified JSON]
Exits 77 (skipped) after the HTML checks when chromedriver is missing."""
import argparse
import base64
import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time

import serve_client

parser = argparse.ArgumentParser()
for name in ["mixseq", "model", "sources", "expected", "work"]:
    parser.add_argument(name)
for name in ["recognizer", "audio", "transcript", "synthesizer", "speak", "spoken", "classifier", "classify",
             "classified"]:
    parser.add_argument("--" + name)
args = parser.parse_args()
mixseq, model, sources_path, expected_path, work = args.mixseq, args.model, args.sources, args.expected, args.work
speech = args.recognizer is not None
sources = open(sources_path, encoding="utf-8").read().splitlines()
expected = open(expected_path, encoding="utf-8").read().splitlines()


def fail(message):
    sys.exit(f"FAIL: {message}")


server_flags = ["-c", model]
if speech:
    server_flags += ["--speech-checkpoint", args.recognizer, "--synthesis-checkpoint", args.synthesizer,
                     "--classify-checkpoint", args.classifier]
server, port = serve_client.start_server(mixseq, work, "page_server", *server_flags)
try:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("GET", "/")
    response = connection.getresponse()
    page = response.read().decode("utf-8")
    if response.status != 200:
        fail(f"GET / answered HTTP {response.status}")
    if not response.getheader("Content-Type", "").startswith("text/html"):
        fail(f"GET / has Content-Type {response.getheader('Content-Type')!r}")
    if "<textarea" not in page:
        fail("the page has no text box")
    # Self-contained: no script, style sheet, font or image from another host (nor any absolute URL).
    for pattern in [r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", r"@import", r"url\(\s*['\"]?(https?:)?//",
                    r"https?://", r"<link\b(?![^>]*href=\"data:)"]:
        if re.search(pattern, page, re.IGNORECASE):
            fail(f"the page refers to another host or file: /{pattern}/")
    print(f"GET / gave a self-contained page of {len(page)} bytes")
    connection.request("GET", "/info")
    info = json.loads(connection.getresponse().read())
    if info.get("translate", {}).get("source_language") != "en" or info["translate"].get("target_language") != "de":
        fail(f"GET /info does not give the checkpoint's languages en and de: {info}")
    if speech != ("transcribe" in info and "synthesize" in info and "classify" in info):
        fail(f"GET /info does not list the served models: {info}")
    # The page's icon is inline (data:), so a browser asks for nothing else (no /favicon.ico refused).

    driver_path = shutil.which("chromedriver")
    browser_path = shutil.which("chromium")
    if not driver_path or not browser_path:
        print("SKIP: no chromedriver/chromium (Debian's chromium-driver) for the browser check")
        sys.exit(77)

    with socket.socket() as s:  # a free port for chromedriver
        s.bind(("127.0.0.1", 0))
        driver_port = s.getsockname()[1]
    driver = subprocess.Popen([driver_path, f"--port={driver_port}"], stdout=subprocess.DEVNULL,
                              stderr=open(os.path.join(work, "chromedriver.log"), "w"))

    def webdriver(method, path, body=None):
        c = http.client.HTTPConnection("127.0.0.1", driver_port, timeout=120)
        c.request(method, path, body=None if body is None else json.dumps(body),
                  headers={"Content-Type": "application/json"})
        answer = json.loads(c.getresponse().read())
        c.close()
        value = answer.get("value")
        if isinstance(value, dict) and "error" in value:
            fail(f"WebDriver {method} {path}: {value['error']}: {value.get('message', '')[:300]}")
        return value

    try:
        for _ in range(100):  # chromedriver starting
            try:
                webdriver("GET", "/status")
                break
            except OSError:
                time.sleep(0.1)
        capabilities = {"browserName": "chrome", "goog:chromeOptions": {
            "binary": browser_path,
            "args": ["--headless=new", "--window-size=1000,1500", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     f"--user-data-dir={os.path.join(work, 'chromium-profile')}",
                     "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
                     "--autoplay-policy=no-user-gesture-required"] +
                    ([f"--use-file-for-fake-audio-capture={args.audio}"] if speech else [])}}
        session = webdriver("POST", "/session", {"capabilities": {"alwaysMatch": capabilities}})["sessionId"]
        base = f"/session/{session}"
        try:
            webdriver("POST", f"{base}/url", {"url": f"http://127.0.0.1:{port}/"})
            box = webdriver("POST", f"{base}/element", {"using": "css selector", "value": "#source"})
            box_id = next(iter(box.values()))
            lines = sources[:5]
            webdriver("POST", f"{base}/element/{box_id}/value", {"text": "\n".join(lines)})
            output = webdriver("POST", f"{base}/element", {"using": "css selector", "value": "#translation"})
            output_id = next(iter(output.values()))
            shown = None
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                shown = webdriver("GET", f"{base}/element/{output_id}/text")
                if shown.splitlines() == expected[:5]:
                    break
                time.sleep(0.3)
            if shown.splitlines() != expected[:5]:
                fail(f"the page shows {shown.splitlines()!r}, mixseq translate gives {expected[:5]!r}")
            print("typed into the page in headless Chromium: it shows mixseq translate's translations")

            def script(code, *arguments):
                return webdriver("POST", f"{base}/execute/sync", {"script": code, "args": list(arguments)})

            def wait_for(code, what, seconds=60):
                deadline = time.monotonic() + seconds
                while time.monotonic() < deadline:
                    value = script(code)
                    if value:
                        return value
                    time.sleep(0.3)
                fail(f"the page never showed {what}")

            models = script("return document.getElementById('models').textContent")
            if "translation en \u2192 de" not in models:
                fail(f"the page names the models as {models!r}")
            print(f"the page names what is served: {models!r}")

            # The alignment on demand: one grid per sentence, a row per target piece, its one marked
            # cell the source piece the server's alignment names.
            status, aligned = serve_client.request(port, "POST", "/translate", {"src": lines, "alignment": True})
            if status != 200:
                fail(f"POST /translate with alignment: {status} {aligned}")
            click = lambda css: webdriver("POST", f"{base}/element/{next(iter(webdriver('POST', f'{base}/element', {'using': 'css selector', 'value': css}).values()))}/click", {})
            click("#show-alignment")
            grids = wait_for("""const tables = document.querySelectorAll('table.alignment');
                if (tables.length !== %d) return null;
                return Array.from(tables).map(t => ({
                  columns: Array.from(t.querySelectorAll('thead th')).slice(1).map(th => th.textContent),
                  rows: Array.from(t.querySelectorAll('tbody tr')).map(tr => ({
                    piece: tr.querySelector('th').textContent,
                    hits: Array.from(tr.querySelectorAll('td')).flatMap((td, j) => td.className === 'hit' ? [j] : [])}))}));"""
                             % len(lines), "the alignment grids")
            for k, grid in enumerate(grids):
                if grid["columns"] != aligned["src_pieces"][k] + ["</s>"]:
                    fail(f"grid {k}: columns {grid['columns']}, source pieces {aligned['src_pieces'][k]}")
                if [r["piece"] for r in grid["rows"]] != aligned["tgt_pieces"][k]:
                    fail(f"grid {k}: rows {[r['piece'] for r in grid['rows']]}, target pieces {aligned['tgt_pieces'][k]}")
                if [r["hits"] for r in grid["rows"]] != [[a] for a in aligned["alignment"][k]]:
                    fail(f"grid {k}: marked {[r['hits'] for r in grid['rows']]}, alignment {aligned['alignment'][k]}")
            print(f"alignment grids of {len(grids)} sentences mark the server's alignment")

            if speech:
                # Upload: the transcript shown is mixseq transcribe's for that file.
                wanted = open(args.transcript, encoding="utf-8").read().rstrip("\n")
                chooser = webdriver("POST", f"{base}/element", {"using": "css selector", "value": "#audio-file"})
                webdriver("POST", f"{base}/element/{next(iter(chooser.values()))}/value",
                          {"text": os.path.abspath(args.audio)})
                shown = wait_for("""const t = document.getElementById('transcript');
                    const words = document.getElementById('transcript-words').textContent;
                    return words.includes('s of audio') || t.className.includes('error') ? [t.textContent, t.className] : null;""",
                                 "an uploaded file's transcript")
                if shown != [wanted, "answer"]:
                    fail(f"after the upload the page shows {shown!r}; mixseq transcribe gives {wanted!r}")
                print(f"uploaded {os.path.basename(args.audio)}: the page shows mixseq transcribe's {wanted!r}")
                # Record through the fake microphone for a second, then stop: a WAV made in the page is transcribed.
                click("#record")
                wait_for("return document.getElementById('record-status').textContent === 'recording...'", "recording")
                time.sleep(1.5)
                click("#record")
                recorded = wait_for("""const s = document.getElementById('record-status').textContent;
                    const words = document.getElementById('transcript-words').textContent;
                    const t = document.getElementById('transcript');
                    return s.startsWith('recorded') && (words.includes('s of audio') || t.className.includes('error'))
                      ? [s, t.className, words] : null;""", "a recording's transcript")
                seconds = float(re.match(r"recorded ([0-9.]+) s", recorded[0]).group(1))
                if recorded[1] != "answer" or seconds < 0.5:
                    fail(f"the recording: {recorded!r}")
                print(f"recorded through the fake microphone: {recorded[0]}, transcribed ({recorded[2]})")
                # Speak: the audio the page plays is mixseq synthesize's file, byte for byte in size,
                # and the browser decodes it.
                speak_box = webdriver("POST", f"{base}/element", {"using": "css selector", "value": "#speak-text"})
                webdriver("POST", f"{base}/element/{next(iter(speak_box.values()))}/value", {"text": args.speak})
                click("#speak")
                played = wait_for("""const a = document.getElementById('speech');
                    return a.dataset.bytes && a.readyState >= 1 ? [Number(a.dataset.bytes), a.duration] : null;""",
                                  "the spoken audio")
                spoken = os.path.getsize(args.spoken)
                if played[0] != spoken or not played[1] > 0:
                    fail(f"the page fetched {played[0]} bytes lasting {played[1]} s; mixseq synthesize wrote {spoken} bytes")
                print(f"speak: the page plays {played[1]:.2f} s, {played[0]} bytes as mixseq synthesize's file")
                # Classify: the label shown is mixseq classify's.
                label = json.loads(open(args.classified, encoding="utf-8").readline())["label"]
                text_box = webdriver("POST", f"{base}/element", {"using": "css selector", "value": "#classify-text"})
                webdriver("POST", f"{base}/element/{next(iter(text_box.values()))}/value", {"text": args.classify})
                click("#classify")
                shown = wait_for("return document.getElementById('classification').textContent", "a label")
                if not shown.startswith(label + " ("):
                    fail(f"the page labels {args.classify!r} as {shown!r}; mixseq classify says {label!r}")
                print(f"classify: the page shows {shown!r}")
            # The metrics line, polled every 2 s, comes to count the page's request.
            metrics_element = webdriver("POST", f"{base}/element", {"using": "css selector", "value": "#metrics-text"})
            metrics_id = next(iter(metrics_element.values()))
            metrics = ""
            for _ in range(40):
                metrics = webdriver("GET", f"{base}/element/{metrics_id}/text")
                if re.match(r"[1-9][0-9]* requests", metrics):
                    break
                time.sleep(0.25)
            if not re.match(r"[1-9][0-9]* requests", metrics):
                fail(f"the page's metrics line reads {metrics!r}")
            webdriver("POST", f"{base}/execute/sync", {"script": "window.scrollTo(0, 0)", "args": []})
            screenshot = webdriver("GET", f"{base}/screenshot")
            with open(os.path.join(work, "page.png"), "wb") as f:
                f.write(base64.b64decode(screenshot))
            print(f"metrics line: {metrics}; screenshot in {os.path.join(work, 'page.png')}")
        finally:
            webdriver("DELETE", base)
    finally:
        driver.kill()
        driver.wait()
finally:
    server.terminate()
    server.wait(timeout=60)
print("PASS: the page")
