"""mixseq serve's page (issue 28): GET / answers one self-contained HTML page with a text box, and
nothing in it comes from another host; in a real browser (headless Chromium driven through
chromedriver's WebDriver HTTP protocol, when Debian's chromium-driver is installed) typing into the
box shows the translations `mixseq translate` gives, and the metrics line fills in.
  serve_page_check.py <mixseq> <model.pt> <sources> <expected translations> <work dir>
Exits 77 (skipped) after the HTML checks when chromedriver is missing."""
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

mixseq, model, sources_path, expected_path, work = sys.argv[1:6]
sources = open(sources_path, encoding="utf-8").read().splitlines()
expected = open(expected_path, encoding="utf-8").read().splitlines()


def fail(message):
    sys.exit(f"FAIL: {message}")


server, port = serve_client.start_server(mixseq, work, "page_server", "-c", model)
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
            "args": ["--headless=new", "--window-size=1000,760", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     f"--user-data-dir={os.path.join(work, 'chromium-profile')}"]}}
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
