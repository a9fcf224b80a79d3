#!/usr/bin/env bash
# The classification task end to end on a generated task (a sentence's label is the keyword it
# holds, among distracting words): prepare --task classify, a classifier trained from scratch and
# one fine-tuned from a tiny LSTM language model (gradual unfreezing), `mixseq classify` (one line
# per input line, label then probability; --labelled's accuracy equals the run's validation), and
# the errors a user meets: an empty line, a label the training file lacks, a pretrained model
# whose vocabulary is not the data's.
#   classify_learns.sh <mixseq> <work dir>
set -euo pipefail
mixseq=$1
work=$2
rm -rf "$work" && mkdir -p "$work"
cd "$work"

# n sentences of 3-9 filler words with "good" (label pos) or "bad" (label neg) somewhere.
make_examples() {
  awk -v n="$1" -v seed="$2" 'BEGIN {
    srand(seed); split("the a cat dog sat on mat ran fast slow big small red blue green house tree car road sky", w, " ")
    for (i = 0; i < n; i++) {
      k = 3 + int(rand() * 7); key = int(rand() * k); positive = rand() < 0.5; line = ""
      for (j = 0; j <= k; j++) line = line (j ? " " : "") (j == key ? (positive ? "good" : "bad") : w[1 + int(rand() * 20)])
      print line "\t" (positive ? "pos" : "neg")
    }
  }'
}
{ printf 'sentence\tlabel\n'; make_examples 600 1; } > train.tsv
make_examples 200 2 > valid.tsv
train_flags=(--threads 1 train --train.device cpu --model.arch lm_classifier --model.lstm_lm.embed_dim 32
             --model.lstm_lm.hidden_size 48 --model.lstm_lm.num_layers 2 --optim.lr 3e-3 --schedule.name cosine
             --schedule.cosine.warmup_steps 10 --schedule.cosine.eta_min 0 --classify.max_sentences 32
             --train.max_epochs 8 --train.log_interval 1000)
accuracy_of_run() { sed -n 's/.*best validation accuracy \([0-9.]*\).*/\1/p' "$1"; }
labelled_accuracy() {
  "$mixseq" --threads 1 classify -c "$1" -i valid.tsv --labelled -o /dev/null 2>&1 | sed -n 's/.*; accuracy \([0-9.]*\) .*/\1/p'
}

# From scratch.
"$mixseq" prepare --task classify --train train.tsv --valid valid.tsv -o data > prepare.log
grep -q "^train: 600 examples" prepare.log || { echo "FAIL: the header was not skipped"; cat prepare.log; exit 1; }
"$mixseq" "${train_flags[@]}" --data.dir data --train.run_dir scratch 2> scratch.log
grep -q "num_classes: 2" scratch/config.yaml || { echo "FAIL: the stored config lacks the class count"; exit 1; }
scratch=$(accuracy_of_run scratch.log)
awk -v a="$scratch" 'BEGIN { exit !(a >= 95) }' || { echo "FAIL: from scratch, accuracy $scratch < 95"; tail scratch.log; exit 1; }
[ "$(labelled_accuracy scratch/checkpoint_best.pt)" = "$(printf '%.2f' "$scratch")" ] ||
  { echo "FAIL: classify --labelled does not repeat the run's validation accuracy $scratch"; exit 1; }
grep -q '"confusion":\[\[' scratch/metrics.jsonl || { echo "FAIL: no confusion matrix in metrics.jsonl"; exit 1; }

# classify: one line per input line, in order, "label<TAB>probability".
cut -f1 valid.tsv > valid.txt
"$mixseq" --threads 1 classify -c scratch/checkpoint_best.pt -i valid.txt -o labels.tsv
[ "$(wc -l < labels.tsv)" = 200 ] || { echo "FAIL: classify wrote $(wc -l < labels.tsv) lines for 200"; exit 1; }
awk -F'\t' 'NF != 2 || ($1 != "pos" && $1 != "neg") || $2 < 0.5 || $2 > 1 { bad = 1 } END { exit bad }' labels.tsv ||
  { echo "FAIL: malformed classify output"; head -3 labels.tsv; exit 1; }
agree=$(paste labels.tsv valid.tsv | awk -F'\t' '$1 == $4 { n++ } END { print n + 0 }')
[ "$agree" -ge 190 ] || { echo "FAIL: only $agree of 200 labels right, in order"; exit 1; }

# serve's POST /classify answers as classify does: the labels (in order) and probabilities; an
# empty text is refused with 400 naming it; /metrics counts the texts.
"$mixseq" --threads 1 serve --device cpu --classify-checkpoint scratch/checkpoint_best.pt --port 0 >serve.out 2>serve.log &
server=$!
for _ in $(seq 300); do grep -q "listening on" serve.out && break; sleep 0.1; done
url=$(sed -n 's/.*listening on \(http[^ ]*\).*/\1/p' serve.out)
[ -n "$url" ] || { kill $server; echo "FAIL: the server did not start"; cat serve.log; exit 1; }
python3 - "$url" valid.txt labels.tsv <<'PY' || { kill $server; exit 1; }
import json, sys, urllib.error, urllib.request
url, texts_path, expected_path = sys.argv[1:]
texts = open(texts_path).read().splitlines()
expected = [line.split("\t") for line in open(expected_path).read().splitlines()]
def post(body):
    request = urllib.request.Request(url + "/classify", data=json.dumps(body).encode(), method="POST")
    try:
        with urllib.request.urlopen(request) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)
status, answer = post({"text": texts[:50]})
assert status == 200, (status, answer)
for i, (label, probability) in enumerate(zip(answer["label"], answer["probability"])):
    assert label == expected[i][0], (i, label, expected[i])
    assert abs(probability - float(expected[i][1])) < 1e-5, (i, probability, expected[i])
    assert abs(sum(answer["probabilities"][i].values()) - 1) < 1e-5
status, answer = post({"text": ["good cat", "  "]})
assert status == 400 and "text[1] is empty" in answer["error"], (status, answer)
status, answer = post({"src": ["good"]})
assert status == 400 and "unknown key" in answer["error"], (status, answer)
with urllib.request.urlopen(url + "/metrics") as m:
    metrics = json.load(m)
assert metrics["classify"]["texts"] == 50, metrics
print("serve /classify: 50 texts as classify labels them; bad requests refused")
PY
kill -TERM $server
wait $server || { echo "FAIL: the server did not stop cleanly"; cat serve.log; exit 1; }

# Fine-tuned from a language model trained on the same kind of text (labels left out), with
# gradual unfreezing and discriminative rates (each layer group 1.2 times slower than the one above;
# ULMFiT uses 2.6, which leaves this task's "good" and "bad" too alike: the LM reads them in the same
# contexts, and only their word vectors can tell them apart).
{ cut -f1 train.tsv | tail -n +2; make_examples 1000 3 | cut -f1; } > lm.en
cut -f1 valid.tsv > lmvalid.en
"$mixseq" prepare --source-lang en --target-lang "" --train lm --valid lmvalid -o lmdata --tokenizer none \
  --vocab-pad-to-multiple 1 > /dev/null
"$mixseq" --threads 1 train --train.device cpu --data.dir lmdata --model.arch lstm_lm --model.lstm_lm.embed_dim 32 \
  --model.lstm_lm.hidden_size 48 --model.lstm_lm.num_layers 2 --model.lstm_lm.tie_weights true --lm.batch_size 8 \
  --lm.tgt_len 16 --lm.eval_tgt_len 16 --optim.lr 3e-3 --train.max_steps 300 --train.max_epochs 0 \
  --train.run_dir lm 2> lm.log
# A pretrained model with data prepared from another vocabulary is refused, naming the way out.
"$mixseq" "${train_flags[@]}" --data.dir data --classify.pretrained lm/checkpoint_best.pt --train.run_dir refused \
  2> refused.log && { echo "FAIL: a vocabulary mismatch was accepted"; exit 1; }
grep -q "prepare --task classify --pretrained" refused.log || { echo "FAIL: unclear mismatch error"; cat refused.log; exit 1; }
"$mixseq" prepare --task classify --pretrained lm/checkpoint_best.pt --train train.tsv --valid valid.tsv -o tdata > /dev/null
cmp -s lmdata/vocab.txt tdata/vocab.txt || { echo "FAIL: the data did not take the language model's vocabulary"; exit 1; }
"$mixseq" "${train_flags[@]}" --data.dir tdata --classify.pretrained lm/checkpoint_best.pt --classify.unfreeze_every 20 \
  --classify.layer_lr_divisor 1.2 --train.run_dir transfer 2> transfer.log
grep -q "the encoder starts from the language model" transfer.log || { echo "FAIL: not fine-tuned"; exit 1; }
grep -q "update 41: 3 of 3 layer groups train" transfer.log || { echo "FAIL: no gradual unfreezing"; cat transfer.log; exit 1; }
transfer=$(accuracy_of_run transfer.log)
awk -v a="$transfer" 'BEGIN { exit !(a >= 90) }' || { echo "FAIL: fine-tuned, accuracy $transfer < 90"; exit 1; }

# Errors name the file and line.
expect_error() {  # <expected text> <command...>
  local expected=$1; shift
  if "$@" > /dev/null 2> error.log; then echo "FAIL: $* succeeded"; exit 1; fi
  grep -qF "$expected" error.log || { echo "FAIL: '$expected' not in:"; cat error.log; exit 1; }
}
printf 'good cat\tpos\n\nbad dog\tneg\n' > empty.tsv
expect_error "empty.tsv:2: empty line" "$mixseq" prepare --task classify --train empty.tsv -o bad
printf 'good cat\tpos\nbad dog\tneg\n' > two.tsv
printf 'good cat\tpos\nbad dog\tmaybe\n' > odd.tsv
expect_error "label 'maybe' of example 2 does not occur" "$mixseq" prepare --task classify --train two.tsv --valid odd.tsv -o bad
printf 'good cat\n\n' > blank.txt
expect_error "blank.txt:2: empty text" "$mixseq" classify -c scratch/checkpoint_best.pt -i blank.txt
# A reference label the model does not have (a typo) is an error naming the line, not a miss.
printf 'good cat\tpos\nbad dog\tnge\n' > typo.tsv
expect_error "typo.tsv:2: label 'nge' is not one of the model's (" \
  "$mixseq" --threads 1 classify -c scratch/checkpoint_best.pt -i typo.tsv --labelled
# A line longer than --max-source-tokens is refused by its line number (the lines before it are
# answered); 0 lifts the limit.
{ echo "good cat"; echo "bad dog"; printf 'good %.0s' $(seq 40); echo; } > long.txt
expect_error "long.txt:3: 40 tokens, over the limit of 39" \
  "$mixseq" --threads 1 classify -c scratch/checkpoint_best.pt -i long.txt --max-source-tokens 39
"$mixseq" --threads 1 classify -c scratch/checkpoint_best.pt -i long.txt --max-source-tokens 40 -o long.out 2> /dev/null
"$mixseq" --threads 1 classify -c scratch/checkpoint_best.pt -i long.txt --max-source-tokens 0 -o long0.out 2> /dev/null
[ "$(wc -l < long.out)" = 3 ] && cmp -s long.out long0.out || { echo "FAIL: classify within the limit"; exit 1; }
echo "PASS: from scratch $scratch, fine-tuned $transfer; classify and errors as expected"
