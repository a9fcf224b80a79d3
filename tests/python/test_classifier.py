"""The Python module's Classifier (issue 28): classify_batch() labels text as `mixseq classify --json`
does (label, probability, every label's probability, unknown words), bad text and bad arguments
are errors with mixseq's messages, and threads share one Classifier.

Run by CTest (python_module): PYTHONPATH holds the built module, MIXSEQ the mixseq program, which
trains the small classifier these tests use (tests/e2e/classify_learns.sh's task, briefly).
"""
import json
import random

import pytest

import mixseq
from mixseq_cli import in_threads, run

WORDS = "the a cat dog sat on mat ran fast slow big small red blue green house tree car road sky".split()


def examples(n, seed):
    """n sentences of filler words with "good" (label pos) or "bad" (label neg) somewhere."""
    rng = random.Random(seed)
    lines = []
    for _ in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.randint(3, 9))]
        positive = rng.random() < 0.5
        words.insert(rng.randint(0, len(words)), "good" if positive else "bad")
        lines.append(" ".join(words) + "\t" + ("pos" if positive else "neg"))
    return lines


@pytest.fixture(scope="session")
def classifier_task(tmp_path_factory):
    """A small LSTM classifier after two epochs: work dir, model, validation texts."""
    work = tmp_path_factory.mktemp("classify")
    (work / "train.tsv").write_text("\n".join(examples(300, 1)) + "\n")
    (work / "valid.tsv").write_text("\n".join(examples(40, 2)) + "\n")
    run("prepare", "--task", "classify", "--train", str(work / "train.tsv"), "--valid", str(work / "valid.tsv"),
        "-o", str(work / "data"))
    run("--threads", "1", "train", "--train.device", "cpu", "--model.arch", "lm_classifier",
        "--model.lstm_lm.embed_dim", "16", "--model.lstm_lm.hidden_size", "24", "--model.lstm_lm.num_layers", "1",
        "--optim.lr", "3e-3", "--classify.max_sentences", "32", "--train.max_epochs", "2", "--data.dir",
        str(work / "data"), "--train.run_dir", str(work / "run"))
    texts = [line.split("\t")[0] for line in (work / "valid.tsv").read_text().splitlines()]
    return work, str(work / "run/checkpoint_best.pt"), texts


def test_the_commands_labels_and_probabilities(classifier_task):
    work, model, texts = classifier_task
    texts = texts + ["good zzzunseen qqqunseen"]
    (work / "texts.txt").write_text("\n".join(texts) + "\n")
    cli = [json.loads(line) for line in
           run("classify", "-c", model, "--device", "cpu", "-i", str(work / "texts.txt"), "--json").stdout.splitlines()]
    classifier = mixseq.Classifier(model, device="cpu")
    assert sorted(classifier.labels) == ["neg", "pos"]
    results = classifier.classify_batch(texts)
    assert len(results) == len(texts) == len(cli)
    for result, c in zip(results, cli):
        assert result.label == c["label"]
        assert result.probability == pytest.approx(c["probability"], rel=1e-12)
        assert dict(zip(classifier.labels, result.probabilities)) == pytest.approx(c["probabilities"], rel=1e-12)
        assert sum(result.probabilities) == pytest.approx(1.0)
        assert result.unknown_words == c["unknown_words"]
    assert results[-1].unknown_words == 2
    # Batches of one text give the same answers as the whole list in one batch.
    singles = [classifier.classify_batch([t], max_tokens=1)[0] for t in texts[:5]]
    assert [s.label for s in singles] == [r.label for r in results[:5]]
    assert [s.probability for s in singles] == pytest.approx([r.probability for r in results[:5]], rel=1e-5)
    assert classifier.classify_batch([]) == []
    assert "Classification(label=" in repr(results[0])


def test_bad_text_and_arguments_are_errors_with_mixseqs_messages(classifier_task, tmp_path):
    work, model, texts = classifier_task
    classifier = mixseq.Classifier(model, device="cpu")
    with pytest.raises(mixseq.Error, match="text 2 is empty"):
        classifier.classify_batch(["good dog", "   "])
    with pytest.raises(mixseq.Error, match="max_tokens"):
        classifier.classify_batch(["good dog"], max_tokens=0)
    long_text = " ".join(["good"] * 30)
    with pytest.raises(mixseq.Error, match="text 2 has 30 tokens, over the limit of 29"):
        classifier.classify_batch(["good dog", long_text], max_source_tokens=29)
    assert len(classifier.classify_batch([long_text], max_source_tokens=30)) == 1
    assert len(classifier.classify_batch([long_text], max_source_tokens=0)) == 1
    with pytest.raises(mixseq.Error, match="max_source_tokens"):
        classifier.classify_batch(["good dog"], max_source_tokens=-1)
    with pytest.raises(TypeError):
        classifier.classify_batch("good dog")
    with pytest.raises(mixseq.Error, match="missing.pt"):
        mixseq.Classifier(str(tmp_path / "missing.pt"))
    with pytest.raises(RuntimeError, match="is not a device"):
        mixseq.Classifier(model, device="gpu")
    assert len(classifier.classify_batch(texts[:3])) == 3  # still usable after the errors


def test_one_classifier_shared_by_threads(classifier_task):
    work, model, texts = classifier_task
    classifier = mixseq.Classifier(model, device="cpu")
    expected = [(r.label, r.probability) for r in classifier.classify_batch(texts)]
    outputs = in_threads(4, lambda: [[(r.label, r.probability) for r in classifier.classify_batch(texts)]
                                     for _ in range(3)])
    assert outputs == [[expected] * 3] * 4
