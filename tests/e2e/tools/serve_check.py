"""Checks a running `mixseq serve` with real HTTP clients (tests/e2e/serve.sh).
    serve_check.py <mixseq> <checkpoint> <sources> <translate --scores output> <work dir>
<sources> holds sentences and <translate --scores output> what `mixseq translate --scores`
made of them ("i ||| text ||| score"): the server must give the same text (scores within 1e-3,
since batches differ). It starts its own servers on free ports and exits non-zero on a failure.
"""
import http.client
import json
import random
import signal
import subprocess
import sys
import threading
import time

import serve_client
from serve_client import concurrent_clients, request

mixseq, checkpoint, sources_path, expected_path, work = sys.argv[1:6]
sources = open(sources_path, encoding="utf-8").read().splitlines()
expected = {}  # source -> (text, score)
for source, line in zip(sources, open(expected_path, encoding="utf-8").read().splitlines()):
    _, text, score = line.split(" ||| ")
    expected[source] = (text, float(score))
failures = []


def fail(what):
    failures.append(what)
    print("FAIL:", what, flush=True)


def start_server(name, *flags):
    return serve_client.start_server(mixseq, work, name, "-c", checkpoint, *flags)


def check_translations(what, batch, answer):
    if len(answer.get("tgt", [])) != len(batch) or len(answer.get("scores", [])) != len(batch):
        return fail(f"{what}: {len(batch)} sentences sent, answer {str(answer)[:200]}")
    for source, text, score in zip(batch, answer["tgt"], answer["scores"]):
        want_text, want_score = expected[source]
        if text != want_text or abs(score - want_score) > 1e-3:
            return fail(f"{what}: {source!r} -> {text!r} ({score}); translate gives {want_text!r} ({want_score})")


# 1. Correctness, concurrency and bad requests on one server with small limits.
server, port = start_server("main", "--max-source-tokens", "40", "--max-body-bytes", "20000", "--http-threads", "24")
try:
    status, answer = request(port, "GET", "/health")
    if status != 200 or answer != {"status": "ok"}:
        fail(f"GET /health: {status} {answer}")
    status, answer = request(port, "POST", "/translate", {"src": sources})
    if status != 200:
        fail(f"all sentences in one request: HTTP {status} {answer}")
    check_translations("all sentences in one request", sources, answer)
    if not isinstance(answer.get("time_ms"), (int, float)):
        fail(f"no time_ms in {str(answer)[:200]}")
    for source in sources[:10]:
        check_translations("one sentence a request", [source], request(port, "POST", "/translate", {"src": [source]})[1])
    status, answer = request(port, "POST", "/translate", {"src": sources[:3], "beam_size": 4, "nbest": 2})
    if status != 200 or [len(t) for t in answer["tgt"]] != [2, 2, 2] or len(answer["scores"][0]) != 2:
        fail(f"nbest 2: {status} {str(answer)[:300]}")

    # 16 clients x 50 requests of 1-4 sentences, each answer checked against its own sentences.
    def send(rng, what):
        batch = [rng.choice(sources) for _ in range(rng.randint(1, 4))]
        status, answer = request(port, "POST", "/translate", {"src": batch})
        return status, answer, lambda answer: check_translations(what, batch, answer)
    _, before = request(port, "GET", "/metrics")
    outcomes, seconds, finished = concurrent_clients(16, 50, send, 90)
    if not finished:
        fail("16 clients x 50 requests did not finish within 90 s")
    errors = [o for o in outcomes if o != "ok"]
    if len(outcomes) != 800 or errors:
        fail(f"{len(outcomes)} of 800 concurrent requests answered, {len(errors)} not 200: {errors[:3]}")
    _, after = request(port, "GET", "/metrics")
    served, batches = after["requests"] - before["requests"], after["batches"] - before["batches"]
    print(f"concurrent: 800 requests in {seconds:.1f} s, {batches} batches; metrics {after}", flush=True)
    if served != 800:
        fail(f"/metrics counted {served} requests for the 800 concurrent ones")
    if batches >= 800:
        fail(f"{batches} batches for 800 requests from 16 clients: requests were not batched together")
    if not 0 < after["latency_ms"]["p50"] <= after["latency_ms"]["p90"] <= after["latency_ms"]["p99"]:
        fail(f"latency percentiles out of order: {after['latency_ms']}")

    long_sentence = " ".join(["seven"] * 60)
    bad_requests = [  # (what, body, status, words the error must contain)
        ("not JSON", b"src: hello", 400, "not valid JSON"),
        ("a JSON array", [1, 2], 400, "JSON object"),
        ("missing src", {"source": ["hello"]}, 400, "unknown key \"source\""),
        ("missing src", {}, 400, "missing \"src\""),
        ("src a string", {"src": "hello"}, 400, "array of strings"),
        ("a number item", {"src": ["one", 2]}, 400, "src[1] is a number"),
        ("a null item", {"src": [None]}, 400, "src[0] is a null"),
        ("alignment not a boolean", {"src": ["one"], "alignment": "yes"}, 400, "\"alignment\" must be true or false"),
        ("invalid UTF-8", b'{"src": ["caf\xc3"]}', 400, "UTF-8"),
        ("a lone surrogate", b'{"src": ["\\udc80"]}', 400, "surrogate"),
        ("a sentence over the limit", {"src": ["one", long_sentence]}, 400, "src[1] has 60 tokens, over the limit of 40"),
        ("a body over the limit", {"src": ["one two three"] * 2000}, 413, "over the limit of 20000"),
        # A Content-Length over the limit is refused before the body is read.
        ("a body far over the limit", {"src": ["x" * 400000]}, 413, "over the limit of 20000 (--max-body-bytes); it was not read"),
        ("beam_size 0", {"src": ["one"], "beam_size": 0}, 400, "\"beam_size\" must be an integer in 1..64"),
        ("beam_size text", {"src": ["one"], "beam_size": "4"}, 400, "\"beam_size\" must be an integer"),
        ("nbest over beam", {"src": ["one"], "beam_size": 2, "nbest": 3}, 400, "\"nbest\" must be an integer in 1..2"),
    ]
    for what, body, want_status, words in bad_requests:
        status, answer = request(port, "POST", "/translate", body)
        if status != want_status or words not in answer.get("error", ""):
            fail(f"{what}: HTTP {status} {answer}; want {want_status} with an error saying {words!r}")
    status, answer = request(port, "GET", "/nowhere")
    if status != 404 or "POST /translate" not in answer.get("error", ""):
        fail(f"GET /nowhere: {status} {answer}")
    check_translations("a good request after the bad ones", sources[:2],
                       request(port, "POST", "/translate", {"src": sources[:2]})[1])
    _, metrics = request(port, "GET", "/metrics")
    if metrics["refused"] != len(bad_requests) + 1 or metrics["failed"] != 0:  # + GET /nowhere
        fail(f"/metrics after {len(bad_requests)} bad requests and GET /nowhere: {metrics}")
finally:
    server.send_signal(signal.SIGTERM)
    code = server.wait(timeout=30)
    if code != 0:
        fail(f"the main server exited {code} after SIGTERM")

# 2. SIGTERM under load: a long request in flight and 8 clients; the long request is answered in
# full, every answer is right, and the server exits 0.
server, port = start_server("drain", "--max-sentences", "5000", "--max-batch-tokens", "100000")
long_batch = [sources[i % len(sources)] for i in range(3000)]
long_answer = {}
def long_request():
    long_answer["reply"] = request(port, "POST", "/translate", {"src": long_batch}, timeout=120)
    long_answer["at"] = time.monotonic()
stop_load = threading.Event()
load_outcomes = []
def load(seed):
    rng = random.Random(seed)
    while not stop_load.is_set():
        batch = [rng.choice(sources) for _ in range(rng.randint(1, 3))]
        try:
            status, answer = request(port, "POST", "/translate", {"src": batch})
        except (ConnectionError, OSError):  # refused or reset once the server stopped accepting
            load_outcomes.append("refused")
            time.sleep(0.05)
            continue
        load_outcomes.append(status)
        if status == 200:
            check_translations(f"load client {seed}", batch, answer)
long_thread = threading.Thread(target=long_request)
long_thread.start()
deadline = time.monotonic() + 30
while request(port, "GET", "/metrics")[1]["in_flight"] < 1 and time.monotonic() < deadline:
    time.sleep(0.01)
loaders = [threading.Thread(target=load, args=(seed,)) for seed in range(8)]
for t in loaders:
    t.start()
time.sleep(0.3)
term_at = time.monotonic()
server.send_signal(signal.SIGTERM)
try:
    code = server.wait(timeout=60)
except subprocess.TimeoutExpired:
    server.kill()
    code = "none (killed after 60 s)"
stop_load.set()
long_thread.join(timeout=60)
for t in loaders:
    t.join(timeout=30)
if code != 0:
    fail(f"the server exited {code} after SIGTERM under load")
if "reply" not in long_answer:
    fail("the long request in flight at SIGTERM got no answer")
else:
    status, answer = long_answer["reply"]
    if status != 200:
        fail(f"the long request in flight at SIGTERM: HTTP {status} {str(answer)[:200]}")
    else:
        check_translations("the long request in flight at SIGTERM", long_batch, answer)
    if long_answer["at"] < term_at:
        fail("the long request finished before SIGTERM: nothing was in flight; make it longer")
answered = sum(1 for o in load_outcomes if o == 200)
if any(o not in (200, "refused") for o in load_outcomes) or answered == 0:
    fail(f"load during SIGTERM: {answered} answered, others {[o for o in load_outcomes if o != 200][:5]}")
print(f"SIGTERM: long request answered {long_answer.get('at', 0) - term_at:.2f} s after the signal, "
      f"{answered} load requests answered, exit code {code}", flush=True)
sys.exit(1 if failures else 0)
