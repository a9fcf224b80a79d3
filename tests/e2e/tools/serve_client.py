"""What the serve tests share: one HTTP request to a mixseq serve on this machine (127.0.0.1), and
many clients sending requests at once."""
import http.client
import json
import random
import subprocess
import sys
import threading
import time


def request(port, method, path, body=None, timeout=60):
    """(status, parsed JSON body); body may be bytes or a JSON-able value."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    if body is not None and not isinstance(body, bytes):
        body = json.dumps(body).encode("utf-8")
    connection.request(method, path, body=body, headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    status, data = response.status, response.read()
    connection.close()
    return status, json.loads(data)


def concurrent_clients(clients, requests_each, send, seconds):
    """`clients` threads each make `requests_each` calls of send(rng, what) -> (status, answer, check),
    rng a random.Random seeded by the client's number, what a label such as "client 3 request 7";
    check(answer) runs for a 200 answer. Returns (outcomes, elapsed seconds, whether all finished
    within `seconds`): outcomes is "ok" or the failure, one per request made."""
    outcomes = []
    def client(seed):
        rng = random.Random(seed)
        for r in range(requests_each):
            what = f"client {seed} request {r}"
            try:
                status, answer, check = send(rng, what)
            except Exception as e:  # noqa: BLE001 -- any failure is the test's finding
                outcomes.append(f"{what}: {e!r}")
                continue
            outcomes.append("ok" if status == 200 else f"{what}: HTTP {status} {answer}")
            if status == 200:
                check(answer)
    start = time.monotonic()
    threads = [threading.Thread(target=client, args=(seed,)) for seed in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=max(1.0, seconds - (time.monotonic() - start)))
    return outcomes, time.monotonic() - start, not any(t.is_alive() for t in threads)


def start_server(mixseq, work, name, *arguments):
    """Starts `mixseq --threads 1 serve --device cpu --port 0 ARGUMENTS` (stderr to WORK/NAME.log);
    returns (process, port) once it says where it listens."""
    log = open(f"{work}/{name}.log", "w")
    process = subprocess.Popen([mixseq, "--threads", "1", "serve", "--device", "cpu", "--port", "0", *arguments],
                               stdout=subprocess.PIPE, stderr=log, text=True)
    line = process.stdout.readline()  # "serve: listening on http://127.0.0.1:<port>"
    if not line.startswith("serve: listening on http://127.0.0.1:"):
        process.kill()
        sys.exit(f"FAIL: {name} server did not say where it listens: {line!r}; see {work}/{name}.log")
    return process, int(line.rsplit(":", 1)[1])
