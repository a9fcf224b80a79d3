"""The Python module's LanguageModel (issue 28): perplexity() is `mixseq lm-eval`, generate() is
`mixseq generate`, score() is each sentence's ln p from the start of a line, checked against the
perplexity of the same text; bad arguments are errors with mixseq's messages; threads share one.

Run by CTest (python_module): PYTHONPATH holds the built module, MIXSEQ the mixseq program, which
trains the tiny LSTM language model these tests use (as tests/e2e/lm_lstm_learns.sh does).
"""
import json
import math

import pytest

import mixseq
from mixseq_cli import in_threads, run



@pytest.fixture(scope="session")
def lm(tmp_path_factory):
    """A tiny LSTM language model on the built-in number words: work dir, checkpoint, validation lines."""
    work = tmp_path_factory.mktemp("lm")
    run("synth", "-o", str(work / "raw"), "--train-size", "1000", "--valid-size", "60", "--test-size", "1")
    run("prepare", "--source-lang", "en", "--target-lang", "", "--train", str(work / "raw/train"), "--valid",
        str(work / "raw/valid"), "-o", str(work / "data"), "--tokenizer", "none", "--vocab-pad-to-multiple", "1")
    run("--threads", "1", "train", "--train.device", "cpu", "--data.dir", str(work / "data"), "--model.arch", "lstm_lm",
        "--model.lstm_lm.embed_dim", "32", "--model.lstm_lm.hidden_size", "48", "--model.lstm_lm.num_layers", "2",
        "--model.lstm_lm.tie_weights", "true", "--lm.batch_size", "8", "--lm.tgt_len", "16", "--lm.eval_tgt_len", "16",
        "--optim.lr", "3e-3", "--schedule.name", "cosine", "--schedule.cosine.warmup_steps", "20",
        "--clipping.max_norm", "0.25", "--train.max_epochs", "0", "--train.max_steps", "250",
        "--train.run_dir", str(work / "run"))
    lines = (work / "raw/valid.en").read_text().splitlines()
    return work, str(work / "run/checkpoint_best.pt"), lines


def test_perplexity_is_lm_eval(lm):
    work, model, lines = lm
    cli = json.loads(run("--threads", "1", "lm-eval", "-c", model, "-i", str(work / "raw/valid.en"), "--device", "cpu",
                         "--batch-size", "4", "--tgt-len", "16", "--json").stdout)
    result = mixseq.LanguageModel(model, device="cpu").perplexity(lines, batch_size=4, tgt_len=16)
    assert result.tokens == cli["tokens"]
    assert result.loss == pytest.approx(cli["loss"], rel=1e-9)
    assert result.perplexity == pytest.approx(cli["ppl"], rel=1e-9)
    assert result.unknown_tokens == 0
    assert 1 < result.perplexity < 30  # it learnt the number words (the vocabulary has about 40)


def test_perplexity_with_a_continuous_cache_is_lm_eval_with_it(lm):
    work, model, lines = lm
    cache = ["--cache-window", "100", "--cache-theta", "0.5", "--cache-lambda", "0.2"]
    cli = json.loads(run("--threads", "1", "lm-eval", "-c", model, "-i", str(work / "raw/valid.en"), "--device", "cpu",
                         "--batch-size", "4", "--tgt-len", "16", *cache, "--json").stdout)
    assert cli["cache_window"] == 100 and cli["cache_lambda"] == 0.2
    language_model = mixseq.LanguageModel(model, device="cpu")
    result = language_model.perplexity(lines, batch_size=4, tgt_len=16, cache_window=100, cache_theta=0.5,
                                       cache_lambda=0.2)
    assert result.loss == pytest.approx(cli["loss"], rel=1e-9)
    plain = language_model.perplexity(lines, batch_size=4, tgt_len=16)
    assert result.tokens == plain.tokens and result.loss != plain.loss  # the mixture changed every probability
    with pytest.raises(mixseq.Error, match="cache lambda"):
        language_model.perplexity(lines, cache_window=10, cache_lambda=1.5)


def test_generate_is_mixseq_generate(lm):
    work, model, lines = lm
    language_model = mixseq.LanguageModel(model, device="cpu")
    cli = ["--threads", "1", "generate", "-c", model, "--device", "cpu", "--prompt", "seven hundred", "--max-tokens", "25"]
    assert language_model.generate("seven hundred", max_tokens=25, greedy=True) + "\n" == run(*cli, "--greedy").stdout
    sampled = language_model.generate("seven hundred", max_tokens=25, seed=5, top_p=0.9)
    assert sampled + "\n" == run(*cli, "--seed", "5", "--top-p", "0.9").stdout
    assert sampled == language_model.generate("seven hundred", max_tokens=25, seed=5, top_p=0.9)


def test_score_is_the_sentence_after_a_line_end(lm):
    """ln p of a sentence alone equals -loss x tokens of the text "<empty line>, sentence" scored as one
    stream: its tokens are </s> s_1 .. s_n </s>, so the targets are s_1 .. s_n </s> after </s>."""
    work, model, lines = lm
    language_model = mixseq.LanguageModel(model, device="cpu")
    sentences = lines[:4]
    scores = language_model.score(sentences)
    for sentence, score in zip(sentences, scores):
        assert score.tokens == len(sentence.split()) + 1 and score.unknown_tokens == 0
        alone = language_model.perplexity(["", sentence], batch_size=1, tgt_len=256, mem_len=0, same_length=False)
        assert alone.tokens == score.tokens
        assert score.log_prob == pytest.approx(-alone.loss * alone.tokens, rel=1e-5)
    # A word the model never saw is read as <unk> and counted; a batch scores each sentence alone.
    unseen, = language_model.score(["seven hundred zwei"])
    assert unseen.unknown_tokens == 1 and unseen.tokens == 4
    assert language_model.score([]) == []
    together = [s.log_prob for s in language_model.score(sentences + ["seven hundred zwei"])]
    assert together == pytest.approx([s.log_prob for s in scores] + [unseen.log_prob], rel=1e-5)


def test_bad_arguments_are_errors_that_say_why(lm):
    work, model, lines = lm
    language_model = mixseq.LanguageModel(model, device="cpu")
    with pytest.raises(mixseq.Error, match="prompt is empty"):
        language_model.generate("   ")
    with pytest.raises(mixseq.Error, match="not in the model's vocabulary"):
        language_model.generate("seven zwei")
    with pytest.raises(mixseq.Error, match="tgt_len"):
        language_model.perplexity(lines, tgt_len=0)
    with pytest.raises(mixseq.Error, match="1 lines"):
        language_model.perplexity(["one"], batch_size=4)
    with pytest.raises(mixseq.Error, match="missing.pt"):
        mixseq.LanguageModel(str(work / "missing.pt"))
    with pytest.raises(TypeError):
        language_model.score("one sentence, not a list")
    assert language_model.generate("seven", max_tokens=3, greedy=True)  # still usable


def test_one_model_shared_by_threads(lm):
    work, model, lines = lm
    language_model = mixseq.LanguageModel(model, device="cpu")
    expected_scores = [s.log_prob for s in language_model.score(lines)]
    expected_text = language_model.generate("three", max_tokens=20, seed=3)
    results = in_threads(4, lambda: ([s.log_prob for s in language_model.score(lines)],
                                     language_model.generate("three", max_tokens=20, seed=3)))
    assert all(scores == expected_scores and text == expected_text for scores, text in results)
    assert math.isfinite(sum(expected_scores))
