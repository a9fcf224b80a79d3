"""The Python module's Recognizer (issue 28): transcribe_batch() gives `mixseq transcribe`'s
transcripts, words and n-best from audio files, the same from the files' samples, adapt() does
what `transcribe --adapt-norms` does and a failed one changes nothing, bad input and bad
arguments are errors with mixseq's messages, and threads share one Recognizer.

Run by CTest (python_module): PYTHONPATH holds the built module, MIXSEQ the mixseq program, which
trains the barely trained Wave2Letter+ these tests use (a few updates: the decoding's plumbing is
under test, not its accuracy; tests/e2e/speech_learns.sh shows one learn). Needs espeak-ng.
"""
import array
import json
import pathlib
import wave

import pytest

import mixseq
from mixseq_cli import in_threads, run, spoken_digits

HERE = pathlib.Path(__file__).resolve().parent


@pytest.fixture(scope="session")
def asr(tmp_path_factory):
    """A tiny Wave2Letter+ after a few updates on espeak-ng digits at 22.05 kHz: work dir, model, audio paths."""
    work = tmp_path_factory.mktemp("asr")
    spoken_digits(work / "digits", "--train", "12", "--valid", "4")
    run("prepare", "--task", "speech", "--train", str(work / "digits/train.tsv"), "--valid",
        str(work / "digits/valid.tsv"), "-o", str(work / "data"), "--sample-rate", "22050")
    run("--threads", "1", "train", "-c", str(HERE.parents[1] / "configs/speech_tiny.yaml"), "--data.dir",
        str(work / "data"), "--speech.sample_rate", "22050", "--train.run_dir", str(work / "run"),
        "--train.max_epochs", "0", "--train.max_steps", "6", "--schedule.cosine.warmup_steps", "0")
    paths = [str(work / "digits" / line.split("\t")[0])
             for line in (work / "digits/valid.tsv").read_text().splitlines()]
    return work, str(work / "run/checkpoint_best.pt"), paths


def cli_json(model, paths, *flags):
    out = run("transcribe", "-c", model, "--device", "cpu", "--json", *flags, *paths)
    return [json.loads(line) for line in out.stdout.splitlines()]


def samples_of(path):
    """A 16-bit mono WAV file's samples in [-1, 1), as libsndfile reads them."""
    with wave.open(path) as w:
        assert w.getsampwidth() == 2 and w.getnchannels() == 1
        values = array.array("h", w.readframes(w.getnframes()))
    return [v / 32768.0 for v in values], w.getframerate()


def test_the_commands_transcripts_from_files_and_from_samples(asr):
    work, model, paths = asr
    recognizer = mixseq.Recognizer(model, device="cpu")
    assert recognizer.sample_rate == 22050
    cli = cli_json(model, paths)
    results = recognizer.transcribe_batch(paths)
    assert [r.text for r in results] == [c["text"] for c in cli]
    for result, c in zip(results, cli):
        assert [(w.word, round(w.start, 3), round(w.end, 3)) for w in result.words] == \
            [(w["word"], w["start"], w["end"]) for w in c["words"]]
        assert result.nbest == []  # greedy decoding
    samples = []
    for path in paths:
        values, rate = samples_of(path)
        assert rate == recognizer.sample_rate
        samples.append(values)
    from_samples = recognizer.transcribe_batch(samples)
    assert [r.text for r in from_samples] == [r.text for r in results]
    assert [r.seconds for r in from_samples] == pytest.approx([len(s) / 22050 for s in samples])
    assert recognizer.transcribe_batch([]) == []


def test_beam_search_nbest_as_the_command(asr):
    work, model, paths = asr
    recognizer = mixseq.Recognizer(model, device="cpu")
    cli = cli_json(model, paths, "--beam-size", "4", "--nbest", "3")
    results = recognizer.transcribe_batch(paths, beam_size=4, nbest=3)
    for result, c in zip(results, cli):
        assert result.text == c["text"]
        assert [h.text for h in result.nbest] == [h["text"] for h in c["nbest"]]
        assert [h.score for h in result.nbest] == pytest.approx([h["score"] for h in c["nbest"]], rel=1e-6)
        assert [h.ctc_log_prob for h in result.nbest] == pytest.approx([h["ctc_log_prob"] for h in c["nbest"]],
                                                                       rel=1e-6)
        assert result.nbest[0].text == result.text
    assert "Transcription(text=" in repr(results[0])


def test_bad_audio_and_arguments_are_errors_with_mixseqs_messages(asr, tmp_path):
    work, model, paths = asr
    recognizer = mixseq.Recognizer(model, device="cpu")
    truncated = tmp_path / "truncated.wav"
    truncated.write_bytes(pathlib.Path(paths[0]).read_bytes()[:30])
    with pytest.raises(mixseq.Error, match="truncated.wav"):
        recognizer.transcribe_batch([paths[0], str(truncated)])
    with pytest.raises(mixseq.Error, match="missing.wav"):
        recognizer.transcribe_batch([str(tmp_path / "missing.wav")])
    with pytest.raises(mixseq.Error, match="nbest"):
        recognizer.transcribe_batch(paths, beam_size=2, nbest=3)
    with pytest.raises(mixseq.Error, match="beam_size"):
        recognizer.transcribe_batch(paths, beam_size=0)
    with pytest.raises(mixseq.Error, match="cutoff_prob"):
        recognizer.transcribe_batch(paths, cutoff_prob=0.0)
    with pytest.raises(TypeError):
        recognizer.transcribe_batch(paths[0])  # a str, not a list
    with pytest.raises(mixseq.Error, match=r"checkpoint_best\.pt"):
        mixseq.Recognizer(model, device="cpu", rescore_lm=model)  # a speech recognizer is no language model
    with pytest.raises(mixseq.Error, match="missing.arpa"):
        mixseq.Recognizer(model, device="cpu", lm=str(tmp_path / "missing.arpa"))
    translation_like = tmp_path / "not_a_checkpoint.pt"
    translation_like.write_bytes(b"PK\x03\x04 not a zip")
    with pytest.raises(mixseq.Error, match="not_a_checkpoint.pt"):
        mixseq.Recognizer(str(translation_like))
    assert [r.text for r in recognizer.transcribe_batch(paths)] == [c["text"] for c in cli_json(model, paths)]


def test_adapt_as_the_commands_adapt_norms(asr, tmp_path):
    work, model, paths = asr
    manifest = tmp_path / "adapt.tsv"
    manifest.write_text("".join(f"{path}\n" for path in paths))
    flags = ("--beam-size", "4", "--nbest", "2")
    cli = [h["ctc_log_prob"] for c in cli_json(model, paths, *flags, "--adapt-norms", str(manifest)) for h in c["nbest"]]
    plain = [h["ctc_log_prob"] for c in cli_json(model, paths, *flags) for h in c["nbest"]]

    def scores(recognizer):
        return [h.ctc_log_prob for r in recognizer.transcribe_batch(paths, beam_size=4, nbest=2) for h in r.nbest]

    recognizer = mixseq.Recognizer(model, device="cpu")
    assert scores(recognizer) == pytest.approx(plain, rel=1e-5)
    assert recognizer.adapt(paths) > 0
    adapted = scores(recognizer)
    assert adapted == pytest.approx(cli, rel=1e-5)
    assert adapted != pytest.approx(plain, rel=1e-3)  # the statistics moved
    from_samples = mixseq.Recognizer(model, device="cpu")
    from_samples.adapt([samples_of(path)[0] for path in paths])
    assert scores(from_samples) == pytest.approx(cli, rel=1e-5)
    # failures leave the model as it was: a missing file (read before anything changes), audio too
    # short for its features (found half-way), nothing to adapt on
    with pytest.raises(mixseq.Error, match="missing.wav"):
        recognizer.adapt([paths[0], str(tmp_path / "missing.wav")])
    with pytest.raises(mixseq.Error):
        recognizer.adapt([samples_of(paths[1])[0], [0.0] * 10])
    with pytest.raises(mixseq.Error, match="no audio"):
        recognizer.adapt([])
    assert scores(recognizer) == pytest.approx(adapted, rel=1e-6)


def test_one_recognizer_shared_by_threads(asr):
    work, model, paths = asr
    recognizer = mixseq.Recognizer(model, device="cpu")
    expected = [r.text for r in recognizer.transcribe_batch(paths)]
    outputs = in_threads(4, lambda: [[r.text for r in recognizer.transcribe_batch(paths)] for _ in range(2)])
    assert outputs == [[expected] * 2] * 4
