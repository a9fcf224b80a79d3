"""Hostile HTTP clients against `mixseq serve` (issue 29, section 5; tests/e2e/serve_hostile.sh).
    serve_hostile.py <mixseq> <checkpoint> <sources> <work dir>
A second server on a port in use must fail; a chunked body over the limit is refused once the
limit is passed, without the server reading (or keeping) the rest; a Content-Length that is no
byte count gets 400; a client that half-closes after its request gets its answer; pipelined
requests on one connection are all answered, in order, and counted. Servers listen on 127.0.0.1
only, every socket has a timeout, and each server is stopped by SIGTERM at the end.
"""
import http.client
import json
import signal
import socket
import subprocess
import sys
import threading
import time

from serve_client import request

mixseq, checkpoint, sources_path, work = sys.argv[1:5]
sources = [line for line in open(sources_path, encoding="utf-8").read().splitlines() if line][:6]
failures = []


def fail(what):
    failures.append(what)
    print("FAIL:", what, flush=True)


def start_server(name, *flags, port="0"):
    log = open(f"{work}/{name}.log", "w")
    process = subprocess.Popen([mixseq, "--threads", "1", "serve", "-c", checkpoint, "--device", "cpu",
                                "--host", "127.0.0.1", "--port", port, *flags],
                               stdout=subprocess.PIPE, stderr=log, text=True)
    return process


def listening_port(process, name):
    line = process.stdout.readline()  # "serve: listening on http://127.0.0.1:<port>"
    if not line.startswith("serve: listening on http://127.0.0.1:"):
        process.kill()
        sys.exit(f"FAIL: {name} server did not say where it listens: {line!r}; see {work}/{name}.log")
    return int(line.rsplit(":", 1)[1])


def stop(process, name):
    process.send_signal(signal.SIGTERM)
    try:
        code = process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        code = "killed after 30 s"
    if code != 0:
        fail(f"the {name} server exited {code} after SIGTERM")


def read_responses(sock, count):
    """Reads `count` HTTP responses (each with a Content-Length) from `sock`: [(status, body)]."""
    data, responses = b"", []
    while len(responses) < count:
        end = data.find(b"\r\n\r\n")
        if end >= 0:
            head = data[:end].decode("latin-1").split("\r\n")
            length = next((int(h.split(":", 1)[1]) for h in head[1:] if h.lower().startswith("content-length:")), 0)
            if len(data) >= end + 4 + length:
                body = data[end + 4:end + 4 + length]
                responses.append((int(head[0].split()[1]), json.loads(body) if body else {}))
                data = data[end + 4 + length:]
                continue
        try:
            chunk = sock.recv(65536)
        except (ConnectionResetError, socket.timeout) as error:
            print(f"  ({error} after {len(responses)} of {count} answers)", flush=True)
            break
        if not chunk:
            break
        data += chunk
    return responses


def translate_request(batch, extra_headers=""):
    body = json.dumps({"src": batch}).encode("utf-8")
    return (f"POST /translate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n{extra_headers}"
            f"Content-Length: {len(body)}\r\n\r\n").encode("latin-1") + body


def rss_kb(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


server = start_server("main", "--max-body-bytes", "20000", "--http-threads", "16")
port = listening_port(server, "main")
try:
    status, reference = request(port, "POST", "/translate", {"src": sources})
    if status != 200 or len(reference.get("tgt", [])) != len(sources):
        fail(f"a plain request: {status} {reference}")

    # (1) A second server on the port in use must not start (SO_REUSEPORT let it share the port).
    second = start_server("second", port=str(port))
    try:
        code = second.wait(timeout=60)  # it loads the model first, then binds
    except subprocess.TimeoutExpired:
        second.kill()
        code = "still running after 60 s"
    second_log = open(f"{work}/second.log").read()
    if code != 1 or f"cannot listen on 127.0.0.1:{port}: the port is in use" not in second_log:
        fail(f"a second serve on port {port}: exit {code}, stderr {second_log[-400:]!r}")

    # (8) A Content-Length that is not a byte count.
    for value in ["-5", "abc", "12 34", "99999999999999999999999"]:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(f"POST /translate HTTP/1.1\r\nHost: x\r\nContent-Length: {value}\r\n\r\n{{}}".encode())
            answers = read_responses(sock, 1)
        if not answers or answers[0][0] != 400 or "is not a byte count" not in answers[0][1].get("error", ""):
            fail(f"Content-Length: {value}: {answers}")
    # Two Content-Length headers: equal ones are one length (RFC 9110), differing ones are named.
    body = json.dumps({"src": sources[:1]})
    for lengths, expected in [((len(body), len(body)), 200), ((len(body), len(body) + 1), 400)]:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall((f"POST /translate HTTP/1.1\r\nHost: x\r\nContent-Length: {lengths[0]}\r\n"
                          f"Content-Length: {lengths[1]}\r\n\r\n{body}").encode())
            answers = read_responses(sock, 1)
        wanted = (f'the request has 2 Content-Length headers that differ ("{lengths[0]}", "{lengths[1]}")'
                  if expected == 400 else None)
        if not answers or answers[0][0] != expected or (wanted and wanted not in answers[0][1].get("error", "")):
            fail(f"Content-Length: {lengths}: {answers}")
    # A POST with neither a length nor chunks (curl -X POST without data): 411, saying what is missing
    # (it read as "malformed chunked encoding, or the connection stopped sending").
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(b"POST /translate HTTP/1.1\r\nHost: x\r\n\r\n")
        answers = read_responses(sock, 1)
    if not answers or answers[0][0] != 411 or "needs its body's length" not in answers[0][1].get("error", ""):
        fail(f"a POST without Content-Length or chunks: {answers}")

    # A client that asks first (Expect: 100-continue) is refused before it sends its body.
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(b"POST /translate HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                     b"Content-Length: 1000000000\r\n\r\n")
        answers = read_responses(sock, 1)
    if not answers or answers[0][0] != 413 or "it was not read" not in answers[0][1].get("error", ""):
        fail(f"Expect: 100-continue with a body over the limit: {answers}")

    # (2) Chunked bodies over the limit, 8 clients at once: each is refused once its body passes
    # the limit, long before the 40 MB it would send, and the server's memory does not grow.
    rss_before = rss_kb(server.pid)
    sent_when_answered = {}

    def chunked_flood(client):
        chunk = b"x" * 65536
        frame = b"%x\r\n" % len(chunk) + chunk + b"\r\n"
        sent = 0
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(b"POST /translate HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                         b"Content-Type: application/json\r\n\r\n")
            sock.setblocking(False)
            answer, pending = b"", b""  # pending: the rest of a frame the socket did not take yet
            deadline = time.monotonic() + 60
            while (pending or sent < 40 << 20) and time.monotonic() < deadline:
                try:
                    answer += sock.recv(65536)
                    break  # the server answered (or closed)
                except BlockingIOError:
                    pass
                pending = pending or frame
                try:
                    n = sock.send(pending)
                    sent, pending = sent + n, pending[n:]
                except BlockingIOError:
                    time.sleep(0.01)
                except (BrokenPipeError, ConnectionResetError):
                    break
            sock.setblocking(True)
            try:
                while True:  # the server shuts its sending side after the answer
                    more = sock.recv(65536)
                    if not more:
                        break
                    answer += more
            except (ConnectionResetError, socket.timeout):
                pass
        sent_when_answered[client] = (sent, answer[:300])

    threads = [threading.Thread(target=chunked_flood, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    for client, (sent, answer) in sorted(sent_when_answered.items()):
        if not answer.startswith(b"HTTP/1.1 413") or b"over the limit of 20000" not in answer or sent >= 16 << 20:
            fail(f"chunked client {client}: {sent} bytes sent before the answer {answer!r}")
    if len(sent_when_answered) != 8:
        fail(f"{8 - len(sent_when_answered)} chunked clients did not finish")
    rss_after = rss_kb(server.pid)
    if rss_after - rss_before > 64 * 1024:
        fail(f"the server's memory grew from {rss_before} kB to {rss_after} kB with chunked bodies over the limit")

    # (6) Clients that half-close after sending their request still get their answer.
    answered = 0
    for i in range(48):
        with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
            sock.sendall(translate_request(sources[:2], "Connection: close\r\n" if i % 2 else ""))
            sock.shutdown(socket.SHUT_WR)
            answers = read_responses(sock, 1)
        if answers and answers[0][0] == 200 and answers[0][1]["tgt"] == reference["tgt"][:2]:
            answered += 1
    if answered != 48:
        fail(f"half-closed clients: {answered} of 48 answered")

    # (7) Pipelining: 3 requests in one write on one connection, all answered in order and counted.
    _, before = request(port, "GET", "/metrics")
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(translate_request(sources[:1]) + translate_request(sources[1:3]) +
                     b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n" + translate_request(sources[3:4]))
        answers = read_responses(sock, 4)
    want = [(200, reference["tgt"][:1]), (200, reference["tgt"][1:3]), (200, None), (200, reference["tgt"][3:4])]
    got = [(status, body.get("tgt") if "tgt" in body else None) for status, body in answers]
    if got != want:
        fail(f"pipelined requests: {answers}; want {want}")
    _, after = request(port, "GET", "/metrics")
    if after["requests"] - before["requests"] != 3:
        fail(f"/metrics counted {after['requests'] - before['requests']} of 3 pipelined translations")
    # Pipelined and half-closed at once.
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(translate_request(sources[:1]) + translate_request(sources[1:2]))
        sock.shutdown(socket.SHUT_WR)
        answers = read_responses(sock, 2)
    if [a[1].get("tgt") for a in answers] != [reference["tgt"][:1], reference["tgt"][1:2]]:
        fail(f"two pipelined requests, then a half-close: {answers}")
finally:
    stop(server, "main")

if failures:
    sys.exit(f"{len(failures)} failures")
print("ok: a second bind fails, chunked floods refused at the limit, bad Content-Length, half-close, pipelining")
