"""The Python module's Synthesizer (issues 27 and 28): synthesize_batch() speaks as `mixseq synthesize`
does (a text alone gives the command's file byte for byte), batches give one Speech per text in
order, bad text and bad arguments are errors with mixseq's messages, threads share one.

Run by CTest (python_module): PYTHONPATH holds the built module, MIXSEQ the mixseq program, which
trains the barely trained Tacotron 2 these tests use (two updates: the model's behaviour, not its
voice, is under test; tests/e2e/synthesis_learns.sh shows one learn). Needs espeak-ng for its data.
"""
import pathlib

import pytest

import mixseq
from mixseq_cli import in_threads, run, spoken_digits

HERE = pathlib.Path(__file__).resolve().parent


@pytest.fixture(scope="session")
def tts(tmp_path_factory):
    """A tiny Tacotron 2 after two updates on a few espeak-ng utterances; its checkpoint."""
    work = tmp_path_factory.mktemp("tts")
    spoken_digits(work / "digits", "--train", "8", "--valid", "2", "--voice", "en-us")
    run("prepare", "--task", "speech", "--train", str(work / "digits/train.tsv"), "--valid",
        str(work / "digits/valid.tsv"), "-o", str(work / "data"), "--sample-rate", "22050")
    run("--threads", "1", "train", "-c", str(HERE.parents[1] / "configs/tacotron2_tiny.yaml"), "--data.dir",
        str(work / "data"), "--train.run_dir", str(work / "run"), "--train.max_epochs", "0", "--train.max_steps", "2",
        "--model.tacotron2.max_decoder_steps", "30")
    return work, str(work / "run/checkpoint_best.pt")


def test_a_text_alone_is_the_commands_file(tts):
    work, model = tts
    run("--threads", "1", "synthesize", "-c", model, "--device", "cpu", "-o", str(work / "cli"), "three one four")
    speech = mixseq.Synthesizer(model, device="cpu", threads=1).synthesize_batch(["three one four"])
    assert len(speech) == 1
    assert speech[0].sample_rate == 22050
    assert 1 <= speech[0].frames <= 30
    assert speech[0].audio_file("wav") == (work / "cli/000001.wav").read_bytes()
    assert speech[0].audio_file("flac")[:4] == b"fLaC"
    assert len(speech[0].samples) > 0 and all(-1.0 <= x <= 1.0 for x in speech[0].samples)


def test_a_batch_gives_one_speech_per_text_and_the_same_call_the_same_audio(tts):
    _, model = tts
    synthesizer = mixseq.Synthesizer(model, device="cpu")
    texts = ["one", "two three four five", "six seven"]
    first = synthesizer.synthesize_batch(texts, batch_size=2, griffin_lim_iters=4)
    again = synthesizer.synthesize_batch(texts, batch_size=2, griffin_lim_iters=4)
    assert [s.audio_file() for s in first] == [s.audio_file() for s in again]
    assert len(first) == 3 and synthesizer.sample_rate == 22050
    assert all(s.frames <= 30 and isinstance(s.stopped, bool) for s in first)
    capped = synthesizer.synthesize_batch(texts, max_steps=5, griffin_lim_iters=0)
    assert all(s.frames <= 5 for s in capped)
    assert "Speech(seconds=" in repr(first[0])


def test_bad_text_and_arguments_are_errors_with_mixseqs_messages(tts, tmp_path):
    _, model = tts
    synthesizer = mixseq.Synthesizer(model, device="cpu")
    with pytest.raises(RuntimeError, match=r"text 2: column 6: '1' is not a symbol"):
        synthesizer.synthesize_batch(["one", "room 101"])
    with pytest.raises(RuntimeError, match=r"text 1: empty text"):
        synthesizer.synthesize_batch([""])
    with pytest.raises(RuntimeError, match=r"griffin_lim_momentum"):
        synthesizer.synthesize_batch(["one"], griffin_lim_momentum=1.5)
    with pytest.raises(RuntimeError, match="format must be"):
        synthesizer.synthesize_batch(["one"], griffin_lim_iters=0)[0].audio_file("mp3")
    missing = str(tmp_path / "missing.pt")
    with pytest.raises(RuntimeError, match="missing.pt"):
        mixseq.Synthesizer(missing)
    assert len(synthesizer.synthesize_batch(["one"], griffin_lim_iters=0)) == 1  # still usable


def test_threads_share_one_synthesizer(tts):
    _, model = tts
    synthesizer = mixseq.Synthesizer(model, device="cpu")
    texts = ["one two", "three"]
    expected = [s.audio_file() for s in synthesizer.synthesize_batch(texts, griffin_lim_iters=4)]
    results = in_threads(4, lambda: [s.audio_file() for s in synthesizer.synthesize_batch(texts, griffin_lim_iters=4)])
    assert all(r == expected for r in results)
