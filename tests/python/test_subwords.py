"""mixseq.Subwords (issue 28): BPE and SentencePiece segmentation equal to `mixseq bpe apply` and
`mixseq spm encode/decode`, decoding back to the text, and errors with mixseq's messages.

Run by CTest (python_module): PYTHONPATH holds the built module, MIXSEQ the mixseq program.
"""
import pytest

import mixseq
from mixseq_cli import run


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    work = tmp_path_factory.mktemp("subwords")
    run("synth", "-o", str(work / "raw"), "--train-size", "500", "--valid-size", "20", "--test-size", "1")
    run("bpe", "learn", "-i", str(work / "raw/train.en"), "-o", str(work / "codes.bpe"), "-s", "60")
    run("spm", "train", "--input", str(work / "raw/train.en"), "--model-prefix", str(work / "spm"), "--vocab-size", "60")
    return work, (work / "raw/valid.en").read_text().splitlines()


def test_bpe_is_bpe_apply(corpus):
    work, lines = corpus
    bpe = mixseq.Subwords("bpe", str(work / "codes.bpe"))
    pieces = bpe.encode(lines)
    cli = run("bpe", "apply", "-c", str(work / "codes.bpe"), "-i", str(work / "raw/valid.en")).stdout.splitlines()
    assert [" ".join(p) for p in pieces] == cli
    assert any("@@" in piece for p in pieces for piece in p)  # 60 merges split some words
    assert bpe.decode(pieces) == [" ".join(line.split()) for line in lines]


def test_spm_is_spm_encode_and_decode(corpus):
    work, lines = corpus
    spm = mixseq.Subwords("spm", str(work / "spm.model"))
    pieces = spm.encode(lines)
    model = str(work / "spm.model")
    encoded = run("spm", "encode", "-m", model, "-i", str(work / "raw/valid.en")).stdout
    assert [" ".join(p) for p in pieces] == encoded.splitlines()
    decoded = run("spm", "decode", "-m", model, input=encoded).stdout.splitlines()
    assert spm.decode(pieces) == decoded == lines
    assert spm.encode([]) == [] and spm.decode([[]]) == [""]


def test_errors(corpus):
    work, lines = corpus
    with pytest.raises(mixseq.Error, match="kind 'wordpiece'"):
        mixseq.Subwords("wordpiece", str(work / "codes.bpe"))
    with pytest.raises(mixseq.Error, match="missing.bpe"):
        mixseq.Subwords("bpe", str(work / "missing.bpe"))
    with pytest.raises(mixseq.Error, match="codes.bpe"):
        mixseq.Subwords("spm", str(work / "codes.bpe"))  # not a SentencePiece model
    with pytest.raises(TypeError):
        mixseq.Subwords("bpe", str(work / "codes.bpe")).encode("a line, not a list")
