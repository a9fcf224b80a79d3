"""The Python module (issue 28): mixseq.Translator translates as `mixseq translate` does, rejects bad
arguments with mixseq's messages, and serves Python threads (one Translator shared, and one each).

Run by CTest (python_module): PYTHONPATH holds the built module, MIXSEQ the mixseq program, which
trains the tiny model these tests translate with.
"""
import threading

import pytest

import mixseq
from mixseq_cli import run



@pytest.fixture(scope="session")
def task(tmp_path_factory):
    """A tiny GNMT on the built-in task (as tests/e2e/small_task.sh trains it): work dir, model, test lines."""
    work = tmp_path_factory.mktemp("task")
    run("synth", "-o", str(work / "raw"), "--train-size", "400", "--valid-size", "20", "--test-size", "20")
    run("prepare", "--train", str(work / "raw/train"), "--valid", str(work / "raw/valid"), "-o", str(work / "data"),
        "--tokenizer", "none")
    run("--threads", "1", "train", "--train.device", "cpu", "--data.dir", str(work / "data"), "--data.max_tokens", "256",
        "--model.gnmt.hidden_size", "32", "--model.gnmt.num_layers", "2", "--train.max_epochs", "0",
        "--train.max_steps", "300", "--optim.lr", "5e-3", "--train.run_dir", str(work / "run"),
        "--validation_search.beam_size", "3", "--validation_search.max_len_a", "1.5",
        "--validation_search.max_len_b", "10")
    lines = (work / "raw/test.en").read_text().splitlines()
    return work, str(work / "run/checkpoint_best.pt"), lines


def cli_translations(model, work, *flags):
    out = run("translate", "-c", model, "-i", str(work / "raw/test.en"), *flags)
    return out.stdout.splitlines()


def test_same_translations_as_the_cli(task):
    work, model, lines = task
    translator = mixseq.Translator(model)
    results = translator.translate_batch(lines)
    assert len(results) == len(lines)
    assert [r.text for r in results] == cli_translations(model, work)
    assert all(r.text == r.hypotheses[0].text and r.score == r.hypotheses[0].score for r in results)
    greedy = translator.translate_batch(lines, beam_size=1)
    assert [r.text for r in greedy] == cli_translations(model, work, "--beam-size", "1")


def test_nbest_and_empty_lines(task):
    work, model, lines = task
    translator = mixseq.Translator(model, device="cpu")
    results = translator.translate_batch(lines[:3] + [""], nbest=2)
    assert [len(r.hypotheses) for r in results] == [2, 2, 2, 1]
    assert results[3].text == ""
    assert all(r.hypotheses[0].score >= r.hypotheses[1].score for r in results[:3])
    assert translator.translate_batch([]) == []


def test_token_lists_as_ctranslate2_takes_them(task):
    """Sources as lists of vocabulary pieces give the translations of the sentences they segment,
    each hypothesis carries its output pieces, and the checkpoint knows its languages."""
    work, model, lines = task
    translator = mixseq.Translator(model)
    pieces = [translator.tokenize(line) for line in lines]
    assert pieces[0] == lines[0].split()  # the built-in task is prepared with --tokenizer none
    from_text = translator.translate_batch(lines, nbest=2)
    from_pieces = translator.translate_batch(pieces, nbest=2)
    assert [[h.text for h in r.hypotheses] for r in from_pieces] == [[h.text for h in r.hypotheses] for r in from_text]
    assert [r.score for r in from_pieces] == [r.score for r in from_text]
    for result in from_pieces:
        for hypothesis in result.hypotheses:
            assert len(hypothesis.pieces) == hypothesis.tokens
            assert translator.detokenize(hypothesis.pieces) == hypothesis.text
    assert translator.translate_batch([[]])[0].text == ""
    # A piece outside the vocabulary reads as <unk>, as a word the vocabulary lacks does in text.
    assert translator.translate_batch([["zzzunseen"] + pieces[0]])[0].text == \
        translator.translate_batch(["zzzunseen " + lines[0]])[0].text
    aligned = translator.translate_batch(pieces[:2], return_alignment=True)
    assert all(len(r.hypotheses[0].alignment) == len(r.hypotheses[0].pieces) for r in aligned)
    assert all(0 <= a <= len(p) for r, p in zip(aligned, pieces[:2]) for a in r.hypotheses[0].alignment)
    assert (translator.source_language, translator.target_language) == ("en", "de")
    assert translator.quantization == ""  # a float checkpoint
    with pytest.raises(TypeError):
        translator.translate_batch([["one", 2]])


def test_a_quantized_checkpoint_says_so(task):
    """A checkpoint of `mixseq quantize` opens with its plan's mode; the float layers' precision beside it."""
    work, model, lines = task
    int8 = str(work / "int8.pt")
    run("--threads", "1", "quantize", "-c", model, "--calib", str(work / "raw/valid.en"), "-o", int8)
    translator = mixseq.Translator(int8)
    assert (translator.quantization, translator.precision) == ("int8", "fp32")
    assert len(translator.translate_batch(lines[:3])) == 3


def test_bad_arguments_raise(task):
    work, model, lines = task
    with pytest.raises(mixseq.Error, match="missing.pt"):
        mixseq.Translator(str(work / "missing.pt"))
    with pytest.raises(RuntimeError, match="is not a device"):
        mixseq.Translator(model, device="gpu")
    translator = mixseq.Translator(model)
    with pytest.raises(mixseq.Error, match="beam_size"):
        translator.translate_batch(lines[:2], beam_size=0)
    with pytest.raises(TypeError):
        translator.translate_batch("one sentence, not a list")
    with pytest.raises(TypeError):
        translator.translate_batch(lines[:2], beam=3)  # no such argument
    # The translator still works after the errors.
    assert [r.text for r in translator.translate_batch(lines)] == cli_translations(model, work)


def test_threads(task):
    """One Translator shared by two threads, and one Translator per thread: the CLI's translations each time.
    The GIL is released while translating, so a third Python thread keeps counting meanwhile."""
    work, model, lines = task
    expected = cli_translations(model, work)
    shared = mixseq.Translator(model)
    own = [mixseq.Translator(model), mixseq.Translator(model)]
    outputs, errors = {}, []
    stop = threading.Event()
    ticks = [0]

    def translate(name, translator):
        try:
            for round in range(3):
                outputs[(name, round)] = [r.text for r in translator.translate_batch(lines)]
        except Exception as error:  # reported below, in the main thread
            errors.append(error)

    def count():
        while not stop.is_set():
            ticks[0] += 1

    threads = [threading.Thread(target=translate, args=(f"shared{i}", shared)) for i in range(2)]
    threads += [threading.Thread(target=translate, args=(f"own{i}", own[i])) for i in range(2)]
    counter = threading.Thread(target=count)
    counter.start()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stop.set()
    counter.join()
    assert not errors, errors
    assert len(outputs) == 12
    for key, texts in outputs.items():
        assert texts == expected, key
    assert ticks[0] > 1000  # the counting thread ran while C++ translated


def test_bleu_and_chrf_equal_the_cli(task):
    """mixseq.bleu / mixseq.chrf give `mixseq bleu`'s scores (to the 4 decimals the command prints)."""
    work, model, lines = task
    hypotheses = cli_translations(model, work)
    references = (work / "raw/test.de").read_text().splitlines()
    hyp_file = work / "scores.hyp"
    hyp_file.write_text("\n".join(hypotheses) + "\n")
    for metric, score, flags in [("bleu", mixseq.bleu(hypotheses, references), []),
                                 ("bleu", mixseq.bleu(hypotheses, [references, references], tokenize="intl"),
                                  ["--tokenize", "intl"]),
                                 ("chrf", mixseq.chrf(hypotheses, references), []),
                                 ("chrf", mixseq.chrf(hypotheses, references, word_order=2),
                                  ["--chrf-word-order", "2"])]:
        refs = [str(work / "raw/test.de")] * (2 if "intl" in flags else 1)
        cli = run("bleu", *refs, "-i", str(hyp_file), "-m", metric, "-b", "-w", "4", *flags).stdout.strip()
        assert f"{score:.4f}" == cli, (metric, flags, score, cli)
    assert mixseq.bleu(references, references) == pytest.approx(100.0)
    with pytest.raises(TypeError):
        mixseq.bleu(hypotheses, "a str, not a list")
    with pytest.raises(mixseq.Error):
        mixseq.bleu(hypotheses, references, tokenize="moses")
