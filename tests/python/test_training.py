"""mixseq.train (issue 28) is `mixseq train`: the same run, update for update, from a fresh Python
process as from the command; a missed target and bad keys are errors with the command's messages;
the caller's SIGINT handler is back afterwards.

Run by CTest (python_module): PYTHONPATH holds the built module, MIXSEQ the mixseq program.
"""
import json
import os
import signal
import subprocess
import sys

import pytest

import mixseq
from mixseq_cli import run



@pytest.fixture(scope="module")
def data(tmp_path_factory):
    work = tmp_path_factory.mktemp("train")
    run("synth", "-o", str(work / "raw"), "--train-size", "300", "--valid-size", "20", "--test-size", "5")
    run("prepare", "--train", str(work / "raw/train"), "--valid", str(work / "raw/valid"), "-o", str(work / "data"),
        "--tokenizer", "none")
    return work


def settings(work, run_dir):
    return {"train.device": "cpu", "data.dir": str(work / "data"), "data.max_tokens": 256,
            "model.gnmt.hidden_size": 32, "model.gnmt.num_layers": 2, "model.gnmt.share_embeddings": True,
            "train.max_epochs": 0, "train.max_steps": 60, "train.log_interval": 10, "optim.lr": 5e-3,
            "validation_search.beam_size": 2, "train.run_dir": str(run_dir)}


def losses(run_dir):
    records = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    return [(r["kind"], r["step"], r["loss"]) for r in records if r["kind"] in ("train", "valid")]


def test_the_same_run_as_mixseq_train(data):
    cli_dir, python_dir = data / "cli", data / "python"
    flags = [f"--{key}={'true' if value is True else value}" for key, value in settings(data, cli_dir).items()]
    run("--threads", "1", "train", *flags)
    # A fresh interpreter, so that the thread count is the command's (it is process-wide).
    script = ("import json, sys, mixseq; r = mixseq.train('', json.loads(sys.argv[1]), threads=1); "
              "print(json.dumps([r.steps, r.metric, r.best_score, r.best_checkpoint, r.stop_signal]))")
    out = subprocess.run([sys.executable, "-c", script, json.dumps(settings(data, python_dir))], check=True,
                         capture_output=True, text=True, env=os.environ)
    steps, metric, best, checkpoint, stop = json.loads(out.stdout)
    assert (steps, metric, stop) == (60, "bleu", 0)
    assert checkpoint == str(python_dir / "checkpoint_best.pt") and os.path.exists(checkpoint)
    assert losses(python_dir) == losses(cli_dir)
    assert best >= 0


def test_errors_and_signal_handlers(data):
    handler = signal.getsignal(signal.SIGINT)
    with pytest.raises(mixseq.Error, match="never reached train.target_bleu 99"):
        mixseq.train("", {**settings(data, data / "missed"), "train.max_steps": 20, "train.target_bleu": 99})
    assert signal.getsignal(signal.SIGINT) is handler  # Python's KeyboardInterrupt still works
    with pytest.raises(mixseq.Error, match="criterion.nonsense"):
        mixseq.train("", {**settings(data, data / "bad"), "criterion.nonsense": 1})
    with pytest.raises(mixseq.Error, match="resume and overwrite"):
        mixseq.train("", settings(data, data / "bad"), resume=True, overwrite=True)
    with pytest.raises(mixseq.Error, match="missing.yaml"):
        mixseq.train(str(data / "missing.yaml"))
    # A second call in the same process runs (the first one's stop request, if any, is forgotten).
    result = mixseq.train("", {**settings(data, data / "again"), "train.max_steps": 10})
    assert result.steps == 10 and result.stop_signal == 0
