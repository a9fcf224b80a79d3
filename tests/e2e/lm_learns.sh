#!/usr/bin/env bash
# A tiny Transformer-XL learns the built-in number-words text: lm-eval's validation perplexity
# falls well below the unigram perplexity of the same text; generate continues a prompt (greedy
# is deterministic, sampling repeats with its seed); missed targets, bad prompts and a checkpoint
# of the other model family get clear errors.
#   lm_learns.sh <mixseq> <work dir>
set -euo pipefail
mixseq=$1
work=$2
here=$(dirname "$0")
source "$here/small_task.sh"
make_small_lm_task "$mixseq" "$work"
tiny_lm_train_command "$mixseq" "$work"
"${train[@]}" --train.run_dir "$work/run" --train.max_steps 400 --train.log_interval 100 2>"$work/train.log"
checkpoint=$work/run/checkpoint_best.pt
# The finished run resumed trains and validates nothing, and reports the best loss it had (the
# lowest of the first run's validations), not a last validation loss of 0.
"${train[@]}" --train.run_dir "$work/run" --train.max_steps 400 --resume 2>"$work/resumed.log"
best_loss=$(sed -n 's/.* valid | .* | loss \([0-9.]*\) .*/\1/p' "$work/train.log" | sort -g | head -1)
reported=$(sed -n 's/.*train: done: 400 updates, .*, best validation loss \([0-9.]*\) (no validation in this run).*/\1/p' \
  "$work/resumed.log")
awk -v a="$reported" -v b="$best_loss" 'BEGIN { d = a - b; exit !(a != "" && d < 1e-4 && d > -1e-4) }' ||
  { tail -2 "$work/resumed.log"; echo "FAIL: the resumed finished run did not report its best loss ($best_loss)"; exit 1; }

# Unigram perplexity of the validation text (one </s> per line) with counts from the training
# text, add-one smoothed.
unigram=$(awk 'NR == FNR { for (i = 1; i <= NF; i++) count[$i]++; count["</s>"]++; total += NF + 1; next }
               { for (i = 1; i <= NF; i++) words[++n] = $i; words[++n] = "</s>" }
               END { types = length(count) + 1
                     for (i = 1; i <= n; i++) nll -= log((count[words[i]] + 1) / (total + types))
                     printf "%.3f", exp(nll / n) }' "$work/raw/train.en" "$work/raw/valid.en")
"$mixseq" --threads 1 lm-eval -c "$checkpoint" -i "$work/raw/valid.en" --device cpu --batch-size 4 --tgt-len 16 \
  --mem-len 32 --json >"$work/eval.json"
perplexity=$(sed -n 's/.*"ppl":\([0-9.e+-]*\).*/\1/p' "$work/eval.json")
echo "validation perplexity $perplexity, unigram $unigram"
awk -v p="$perplexity" -v u="$unigram" 'BEGIN { exit !(p > 1 && p < u / 2) }' ||
  { echo "FAIL: perplexity $perplexity is not well below the unigram perplexity $unigram"; exit 1; }
grep -q '"latency_ms_p99"' "$work/eval.json" || { echo "FAIL: no latency percentiles"; cat "$work/eval.json"; exit 1; }

cd "$work"
source "$here/expect_error.sh"
expect "perplexity" --threads 1 lm-eval -c "$checkpoint" -i raw/valid.en --device cpu --target-perplexity 1.0001
# Text too short for the streams: the flag to change and how far, not the library's "batch_size".
: > empty.txt
expect "'empty.txt' has no text to evaluate" --threads 1 lm-eval -c "$checkpoint" -i empty.txt --device cpu
echo "seven hundred" > short.txt  # 3 tokens with the line's </s>
expect "'short.txt' has 3 tokens, too few for --batch-size 10 (streams of 2 tokens at least): give --batch-size 1 or less" \
  --threads 1 lm-eval -c "$checkpoint" -i short.txt --device cpu

generate=("$mixseq" --threads 1 generate -c "$checkpoint" --device cpu --prompt "seven hundred" --max-tokens 30)
[ "$("${generate[@]}" --greedy)" = "$("${generate[@]}" --greedy)" ] || { echo "FAIL: greedy differs"; failures=$((failures + 1)); }
sampled=$("${generate[@]}" --seed 5 --top-p 0.9)
[ "$sampled" = "$("${generate[@]}" --seed 5 --top-p 0.9)" ] || { echo "FAIL: a seed repeats"; failures=$((failures + 1)); }
[ -n "$sampled" ] || { echo "FAIL: nothing generated"; failures=$((failures + 1)); }
echo "sampled: $sampled"
expect "--prompt is empty" --threads 1 generate -c "$checkpoint" --device cpu --prompt "  "
expect "'zebra', 'lion'" --threads 1 generate -c "$checkpoint" --device cpu --prompt "seven zebra lion"

# A translation checkpoint where a language model is needed, and the reverse.
make_small_task "$mixseq" "$work/mt"
"$mixseq" --threads 1 train --train.device cpu --data.dir mt/data --train.run_dir mt/run --model.gnmt.hidden_size 16 \
  --model.gnmt.num_layers 2 --train.max_epochs 0 --train.max_steps 1 --train.validate_bleu false 2>mt.log
expect "is a sequence-to-sequence (translation) model, but a language model is needed" \
  lm-eval -c mt/run/checkpoint_last.pt -i raw/valid.en
expect "is a language model, but a sequence-to-sequence (translation) model is needed" \
  translate -c "$checkpoint" -i raw/valid.en
# A language model's data given to translation training and the reverse.
expect "holds a parallel corpus" --threads 1 train --train.device cpu --data.dir mt/data --train.run_dir x \
  --model.arch transformer_xl --train.max_steps 1
expect "holds a monolingual corpus" --threads 1 train --train.device cpu --data.dir data --train.run_dir y \
  --train.max_steps 1
# Each task's settings are its own: one that only the other task reads is an error naming it and
# where it was set, on the command line or in a config file; nothing was trained or written.
expect "--criterion.smoothing: criterion.smoothing is a setting of the translation task, but model.arch 'transformer_xl' trains with the language_model task" \
  --threads 1 train --train.device cpu --data.dir data --train.run_dir z --model.arch transformer_xl --criterion.smoothing 0.2
printf 'model:\n  arch: gnmt\ntrain:\n  max_steps: 1\nlm:\n  tgt_len: 32\n' >mt.yaml
expect "mt.yaml:6: lm.tgt_len is a setting of the language_model task, but model.arch 'gnmt' trains with the translation task" \
  --threads 1 train -c mt.yaml --train.device cpu --data.dir mt/data --train.run_dir z
[ ! -e z ] || { echo "FAIL: a refused run wrote z/"; failures=$((failures + 1)); }
# The stored config has the language model's sections and not translation's.
grep -q "^lm:" run/config.yaml || { echo "FAIL: no lm section in run/config.yaml"; failures=$((failures + 1)); }
! grep -q "^criterion:\|^validation_search:\|validate_bleu" run/config.yaml ||
  { echo "FAIL: run/config.yaml has translation's settings"; failures=$((failures + 1)); }
[ "$failures" -eq 0 ] || exit 1
echo "PASS"
