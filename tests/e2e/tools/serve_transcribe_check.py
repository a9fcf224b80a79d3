"""Checks `mixseq serve`'s POST /transcribe with real HTTP clients (tests/e2e/serve_transcribe.sh).
    serve_transcribe_check.py <mixseq> <speech checkpoint> <translation checkpoint> <expected.jsonl> <work dir>
                              [<expected with the LM.jsonl> <words.arpa>]
<expected.jsonl> is what `mixseq transcribe --json` wrote for the audio files it names: the server
must give each file the same text and word times (see check_transcript). It starts its own servers on free ports (one
serving both models) and exits non-zero on a failure.
"""
import ctypes
import ctypes.util
import http.client
import json
import signal
import struct
import subprocess
import sys
import wave

import serve_client
from serve_client import concurrent_clients, request

mixseq, speech_checkpoint, translation_checkpoint, expected_path, work = sys.argv[1:6]
expected_lm_path, arpa = (sys.argv[6], sys.argv[7]) if len(sys.argv) > 7 else (None, None)
expected = [json.loads(line) for line in open(expected_path, encoding="utf-8")]
audio = {record["audio"]: open(record["audio"], "rb").read() for record in expected}
failures = []


def fail(what):
    failures.append(what)
    print("FAIL:", what, flush=True)


def start_server(name, *flags):
    return serve_client.start_server(mixseq, work, name, *flags)


def transcribe(port, body, content_type="audio/wav"):
    """(status, parsed JSON answer) of POST /transcribe with raw bytes."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    connection.request("POST", "/transcribe", body=body, headers={"Content-Type": content_type})
    response = connection.getresponse()
    status, data = response.status, response.read()
    connection.close()
    return status, json.loads(data)


def check_transcript(what, record, answer):
    if answer.get("text") != record["text"]:
        return fail(f"{what}: {record['audio']} -> {answer.get('text')!r}; transcribe gives {record['text']!r}")
    # The same word times: an output frame's duration comes from the utterance's own lengths, not
    # from its batch (both sides round to milliseconds).
    words = answer.get("words", [])
    close = lambda a, b: abs(a - b) <= 0.0015
    if [w["word"] for w in words] != [w["word"] for w in record["words"]] or not all(
            close(a["start"], b["start"]) and close(a["end"], b["end"]) for a, b in zip(words, record["words"])):
        return fail(f"{what}: {record['audio']} word times {words}; transcribe gives {record['words']}")


def wav_bytes(path, frames, rate=16000, channels=1):
    """A WAV file of `frames` frames of a quiet tone, written to `path`; returns its bytes."""
    with wave.open(path, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(b"".join(struct.pack("<h", (i * 37) % 200 - 100) * channels for i in range(frames)))
    return open(path, "rb").read()


def float_wav_with_nan(at, frames, rate=16000):
    """The bytes of a mono 32-bit float WAV of `frames` samples of 0.1, a NaN at frame `at`."""
    data = struct.pack(f"<{frames}f", *([0.1] * at + [float("nan")] + [0.1] * (frames - at - 1)))
    fmt = struct.pack("<IHHIIHH", 16, 3, 1, rate, rate * 4, 4, 32)  # format 3: IEEE float
    riff = b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVEfmt " + fmt
    return riff + b"data" + struct.pack("<I", len(data)) + data


def silent_flac(path, seconds, rate=16000):
    """A FLAC file of `seconds` of silence written with libsndfile (a few kilobytes a minute); its bytes,
    or None where ctypes cannot find libsndfile."""
    library = ctypes.util.find_library("sndfile")
    if library is None:
        return None
    sndfile = ctypes.CDLL(library)

    class Info(ctypes.Structure):
        _fields_ = [("frames", ctypes.c_int64), ("samplerate", ctypes.c_int), ("channels", ctypes.c_int),
                    ("format", ctypes.c_int), ("sections", ctypes.c_int), ("seekable", ctypes.c_int)]
    info = Info(0, rate, 1, 0x170000 | 0x0002, 0, 0)  # SF_FORMAT_FLAC | SF_FORMAT_PCM_16
    sndfile.sf_open.restype = ctypes.c_void_p
    handle = ctypes.c_void_p(sndfile.sf_open(path.encode(), 0x20, ctypes.byref(info)))  # SFM_WRITE
    if not handle:
        return None
    block = (ctypes.c_short * rate)()
    for _ in range(seconds):
        sndfile.sf_writef_short(handle, block, ctypes.c_int64(rate))
    sndfile.sf_close(handle)
    return open(path, "rb").read()


# 1. Both models in one process: /translate and /transcribe side by side, each checked.
server, port = start_server("main", "-c", translation_checkpoint, "--speech-checkpoint", speech_checkpoint,
                            "--max-audio-seconds", "3", "--max-audio-bytes", "300000", "--http-threads", "16")
try:
    for record in expected:  # every validation file, one request each
        status, answer = transcribe(port, audio[record["audio"]])
        if status != 200:
            fail(f"{record['audio']}: HTTP {status} {answer}")
            continue
        check_transcript("one file a request", record, answer)
    status, answer = transcribe(port, audio[expected[0]["audio"]], "application/octet-stream")
    if status != 200:
        fail(f"application/octet-stream: HTTP {status} {answer}")
    status, answer = request(port, "POST", "/translate", {"src": ["one two three"]})
    if status != 200 or len(answer.get("tgt", [])) != 1:
        fail(f"/translate beside /transcribe: HTTP {status} {answer}")

    # A stereo file at 44.1 kHz: mixed down and resampled as `mixseq transcribe` reads it.
    with wave.open(expected[1]["audio"]) as w:
        rate, frames = w.getframerate(), w.readframes(w.getnframes())
    with wave.open(f"{work}/stereo.wav", "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(rate)
        samples = struct.unpack(f"<{len(frames) // 2}h", frames)
        w.writeframes(b"".join(struct.pack("<hh", s, s) for s in samples))
    want = json.loads(subprocess.run([mixseq, "--threads", "1", "transcribe", "-c", speech_checkpoint, "--device", "cpu",
                                      "--json", f"{work}/stereo.wav"], capture_output=True, text=True,
                                     check=True).stdout)
    check_transcript("stereo", want, transcribe(port, open(f"{work}/stereo.wav", "rb").read())[1])

    # 8 clients x 15 requests of random validation files, each answer checked against its own file.
    def send(rng, what):
        record = rng.choice(expected)
        status, answer = transcribe(port, audio[record["audio"]])
        return status, answer, lambda answer: check_transcript(what, record, answer)
    _, before = request(port, "GET", "/metrics")
    outcomes, seconds, finished = concurrent_clients(8, 15, send, 120)
    if not finished:
        fail("8 clients x 15 requests did not finish within 120 s")
    errors = [o for o in outcomes if o != "ok"]
    if len(outcomes) != 120 or errors:
        fail(f"{len(outcomes)} of 120 concurrent requests answered, {len(errors)} not 200: {errors[:3]}")
    _, after = request(port, "GET", "/metrics")
    served = after["transcribe"]["requests"] - before["transcribe"]["requests"]
    batches = after["transcribe"]["batches"] - before["transcribe"]["batches"]
    print(f"concurrent: 120 requests in {seconds:.1f} s, {batches} batches; metrics {after}",
          flush=True)
    if served != 120 or after["utterances"] - before["utterances"] != 120:
        fail(f"/metrics counted {served} transcriptions for the 120 concurrent ones: {after}")
    if batches >= 120:
        fail(f"{batches} batches for 120 requests from 8 clients: requests were not batched together")
    if after["translate"]["requests"] != 1 or after["requests"] != after["translate"]["requests"] + after["transcribe"]["requests"]:
        fail(f"/metrics: requests are not the sum of both endpoints': {after}")

    # Bad bodies: a 4xx naming what is wrong, and the server goes on.
    valid = audio[expected[0]["audio"]]
    bad_requests = [  # (what, body, content type, status, words the error must contain)
        ("not audio", b"hello, this is text", "audio/wav", 400, "not an audio file"),
        ("text as octet-stream", b"{\"src\": [\"one\"]}", "application/octet-stream", 400, "not an audio file"),
        ("an empty body", b"", "audio/wav", 400, "empty"),
        ("a WAV header alone", valid[:44], "audio/wav", 400, "the request body"),
        ("a truncated WAV", valid[:len(valid) // 2], "audio/wav", 400, "truncated"),
        ("too long", wav_bytes(f"{work}/long.wav", 16000 * 4), "audio/wav", 400, "over the limit of 3 s (--max-audio-seconds)"),
        ("too short", wav_bytes(f"{work}/short.wav", 160), "audio/wav", 400, "too short"),
        ("a float WAV holding a NaN", float_wav_with_nan(1234, 4000), "audio/wav", 400,
         "damaged audio: frame 1234 (0.077125 s) holds a sample that is not a number (NaN)"),
        ("over --max-audio-bytes", wav_bytes(f"{work}/big.wav", 48000 * 2, 48000, 2), "audio/wav", 413, "--max-audio-bytes"),
        ("JSON", b"{\"audio\": \"a.wav\"}", "application/json", 415, "Content-Type audio/*"),
        ("a form", b"a=1", "multipart/form-data; boundary=x", 415, "Content-Type audio/*"),
    ]
    # Ten minutes of silence in a few kilobytes of FLAC: refused from its header, before decoding
    # (decoded, an hour of it would take gigabytes).
    flac = silent_flac(f"{work}/silence.flac", 600)
    if flac is not None:
        bad_requests.append(("10 minutes of FLAC silence", flac, "audio/flac", 400, "its header announces 600 s"))
    else:
        print("(no libsndfile for ctypes: the FLAC case is left out)", flush=True)
    for what, body, content_type, want_status, words in bad_requests:
        status, answer = transcribe(port, body, content_type)
        if status != want_status or words not in answer.get("error", ""):
            fail(f"{what}: HTTP {status} {answer}; want {want_status} with {words!r}")
        else:
            print(f"{what}: {status} {answer['error']}", flush=True)
    status, answer = request(port, "GET", "/health")
    if status != 200:
        fail(f"GET /health after the bad bodies: {status} {answer}")
    check_transcript("after the bad bodies", expected[0], transcribe(port, valid)[1])
    _, metrics = request(port, "GET", "/metrics")
    if metrics["refused"] < len(bad_requests) or metrics["failed"] != 0:
        fail(f"/metrics after {len(bad_requests)} bad bodies: {metrics}")
finally:
    server.send_signal(signal.SIGTERM)
    try:
        code = server.wait(timeout=30)
        if code != 0:
            fail(f"the server exited {code} on SIGTERM; see {work}/main.log")
    except subprocess.TimeoutExpired:
        server.kill()
        fail("the server did not stop within 30 s of SIGTERM")

# 2. A recognizer alone: /translate is refused, naming the flag that would serve it.
server, port = start_server("speech_only", "--speech-checkpoint", speech_checkpoint)
try:
    status, answer = request(port, "POST", "/translate", {"src": ["one"]})
    if status != 404 or "-c CHECKPOINT" not in answer.get("error", ""):
        fail(f"/translate without a translation model: {status} {answer}")
    check_transcript("a recognizer alone", expected[0], transcribe(port, valid)[1])
finally:
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=30)

# 3. A speech checkpoint given as the translation model: an error saying which flag takes it.
result = subprocess.run([mixseq, "serve", "-c", speech_checkpoint, "--port", "0"], capture_output=True, text=True,
                        timeout=60)
if result.returncode == 0 or "--speech-checkpoint" not in result.stderr:
    fail(f"serve -c <speech checkpoint>: exit {result.returncode}, {result.stderr[-300:]!r}")

# 4. Beam search fused with a word trigram (transcribe --beam-size 8 --lm ... --lm-weight 1 --word-bonus 2):
# every file gets what transcribe gives with the same settings; decoding flags need a recognizer.
if expected_lm_path:
    server, port = start_server("speech_lm", "--speech-checkpoint", speech_checkpoint, "--speech-beam-size", "8",
                                "--speech-lm", arpa, "--speech-lm-weight", "1", "--speech-word-bonus", "2")
    try:
        for record in (json.loads(line) for line in open(expected_lm_path, encoding="utf-8")):
            status, answer = transcribe(port, open(record["audio"], "rb").read())
            if status != 200:
                fail(f"beam search with the LM: {record['audio']} -> {status} {answer}")
            else:
                check_transcript("beam search with the LM", record, answer)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    log = open(f"{work}/speech_lm.log", encoding="utf-8").read()
    if "CTC beam 8 with" not in log or "(alpha 1, beta 2)" not in log:
        fail(f"the server's log does not say how /transcribe decodes: {log[-400:]!r}")
result = subprocess.run([mixseq, "serve", "-c", translation_checkpoint, "--speech-lm-weight", "1", "--port", "0"],
                        capture_output=True, text=True, timeout=60)
if result.returncode == 0 or "give --speech-checkpoint too" not in result.stderr:
    fail(f"serve --speech-lm-weight without a recognizer: exit {result.returncode}, {result.stderr[-300:]!r}")

if failures:
    sys.exit(f"{len(failures)} failures")
print("OK", flush=True)
