"""Load on a running `mixseq serve`: C clients, each sending one request after another (one
kept-alive connection each) for a fixed time; prints one JSON line per client count with
requests/s, sentences/s, the latency percentiles the clients saw and the model batches the
server ran meanwhile (fewer than requests: the micro-batcher joined them).
    serve_load.py --port 8080 --sources test.en [--clients 1 4 16] [--seconds 20] [--sentences 1] [--label gnmt]
"""
import argparse
import http.client
import json
import random
import threading
import time


def percentile(sorted_values, p):  # nearest rank, as the server's /metrics
    if not sorted_values:
        return 0.0
    rank = max(1, -(-len(sorted_values) * p // 100))
    return sorted_values[int(rank) - 1]


def run(port, sources, clients, seconds, per_request):
    latencies, sentences, errors = [], [0], []
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def client(seed):
        rng = random.Random(seed)
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        while time.monotonic() < deadline:
            batch = [rng.choice(sources) for _ in range(per_request)]
            body = json.dumps({"src": batch})
            start = time.monotonic()
            try:
                connection.request("POST", "/translate", body=body, headers={"Content-Type": "application/json"})
                response = connection.getresponse()
                response.read()
                status = response.status
            except (OSError, http.client.HTTPException) as e:
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
                with lock:
                    errors.append(repr(e))
                continue
            elapsed = (time.monotonic() - start) * 1000
            with lock:
                if status == 200:
                    latencies.append(elapsed)
                    sentences[0] += len(batch)
                else:
                    errors.append(status)
        connection.close()

    threads = [threading.Thread(target=client, args=(seed,)) for seed in range(clients)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - start  # the last requests end after the deadline
    latencies.sort()
    return {"clients": clients, "sentences_per_request": per_request, "seconds": round(wall, 2),
            "requests": len(latencies), "errors": len(errors),
            "requests_per_s": round(len(latencies) / wall, 2), "sentences_per_s": round(sentences[0] / wall, 2),
            "p50_ms": round(percentile(latencies, 50), 1), "p90_ms": round(percentile(latencies, 90), 1),
            "p99_ms": round(percentile(latencies, 99), 1)}


def batches_run(port):  # the server's count of model batches (GET /metrics)
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("GET", "/metrics")
    batches = json.loads(connection.getresponse().read())["batches"]
    connection.close()
    return batches


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--sources", required=True, help="sentences to send, one a line")
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--sentences", type=int, default=1, help="sentences per request")
    parser.add_argument("--label", default="", help="added to each line, e.g. the model")
    args = parser.parse_args()
    sources = [line for line in open(args.sources, encoding="utf-8").read().splitlines() if line]
    for clients in args.clients:
        before = batches_run(args.port)
        figures = run(args.port, sources, clients, args.seconds, args.sentences)
        print(json.dumps({"bench": "serve_load", "model": args.label, **figures,
                          "server_batches": batches_run(args.port) - before}), flush=True)


if __name__ == "__main__":
    main()
