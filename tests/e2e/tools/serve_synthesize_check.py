"""Checks `mixseq serve`'s POST /synthesize with real HTTP clients (tests/e2e/synthesis_learns.sh).
    serve_synthesize_check.py <mixseq> <synthesizer checkpoint> <text> <expected.wav> <work dir>
<expected.wav> is what `mixseq --threads 1 synthesize --device cpu` wrote for <text> alone: the server,
given the text alone in its batch, must answer those bytes exactly. Then concurrent clients, bad
bodies and SIGTERM. Exits non-zero on a failure.
"""
import http.client
import io
import json
import signal
import sys
import wave

import serve_client
from serve_client import concurrent_clients, request

mixseq, checkpoint, text, expected_path, work = sys.argv[1:6]
expected = open(expected_path, "rb").read()
failures = []


def fail(what):
    failures.append(what)
    print("FAIL:", what, flush=True)


def synthesize(port, body):
    """(status, headers, body bytes) of POST /synthesize."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    connection.request("POST", "/synthesize", body=body, headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    status, headers, data = response.status, dict(response.getheaders()), response.read()
    connection.close()
    return status, headers, data


server, port = serve_client.start_server(mixseq, work, "serve_synthesize", "--synthesis-checkpoint", checkpoint,
                                         "--max-wait-ms", "50")
try:
    status, headers, data = synthesize(port, json.dumps({"text": text}))
    if status != 200 or headers.get("Content-Type") != "audio/wav":
        fail(f"POST /synthesize answered {status} {headers.get('Content-Type')}: {data[:200]!r}")
    elif data != expected:
        fail(f"POST /synthesize gave {len(data)} bytes that differ from synthesize's {len(expected)}")
    if headers.get("X-Stop-Token") != "1" or int(headers.get("X-Frames", "0")) < 10:
        fail(f"headers {headers}")
    status, headers, data = synthesize(port, json.dumps({"text": text, "format": "flac"}))
    if status != 200 or headers.get("Content-Type") != "audio/flac" or not data.startswith(b"fLaC"):
        fail(f"format flac: {status} {headers.get('Content-Type')} {data[:8]!r}")

    # Concurrent clients: each gets audio of its own text, and they share batches.
    texts = ["one", "two three", "four five six", "seven eight nine zero"]

    def send(rng, what):
        sent = rng.choice(texts)
        status, _, data = synthesize(port, json.dumps({"text": sent}))

        def check(audio):
            w = wave.open(io.BytesIO(audio))
            if w.getframerate() != 22050 or w.getnframes() < 2000:
                fail(f"{what} ({sent!r}): {w.getframerate()} Hz, {w.getnframes()} samples")
        return status, data if status == 200 else data[:200], check

    outcomes, _, finished = concurrent_clients(8, 2, send, 300)
    for outcome in outcomes:
        if outcome != "ok":
            fail(outcome)
    if not finished:
        fail("the concurrent clients did not finish within 300 s")
    metrics = request(port, "GET", "/metrics")[1]
    spoken = metrics.get("synthesize", {})
    if spoken.get("requests") != 18 or spoken.get("texts") != 18 or not 1 <= spoken.get("batches", 0) < 18:
        fail(f"/metrics after 18 requests from 8 clients: {metrics}")

    # Bad bodies: a 4xx whose "error" names what is wrong; the server keeps answering.
    for body, status_wanted, part in [
            ("not json", 400, "not valid JSON"),
            (json.dumps({"txt": "one"}), 400, "unknown key \"txt\""),
            (json.dumps({}), 400, "missing \"text\""),
            (json.dumps({"text": ["one"]}), 400, "must be a string"),
            (json.dumps({"text": ""}), 400, "empty"),
            (json.dumps({"text": "room 101"}), 400, "column 6"),
            (json.dumps({"text": "one", "format": "mp3"}), 400, "\"format\" must be"),
            (json.dumps({"text": "one " * 200}), 400, "--max-text-symbols")]:
        status, _, data = synthesize(port, body)
        try:
            error = json.loads(data).get("error", "")
        except ValueError:
            error = data[:200]
        if status != status_wanted or part not in error:
            fail(f"body {body[:60]!r}: {status} {error!r}; wanted {status_wanted} with {part!r}")
    status, answer = request(port, "POST", "/translate", json.dumps({"src": ["one"]}))
    if status != 404 or "no translation model" not in answer.get("error", ""):
        fail(f"/translate on a synthesis server: {status} {answer}")
    if request(port, "GET", "/health")[0] != 200:
        fail("the server stopped answering after bad bodies")
finally:
    server.send_signal(signal.SIGTERM)
    code = server.wait(timeout=60)
if code != 0:
    fail(f"the server exited {code} after SIGTERM")
if failures:
    sys.exit(1)
print("PASS: /synthesize gives synthesize's bytes, flac, 8 concurrent clients batched, bad bodies, SIGTERM")
