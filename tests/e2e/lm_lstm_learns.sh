#!/usr/bin/env bash
# A tiny LSTM language model (tied through a projection, dropout and weight drop on) learns the
# built-in number-words text through the language-model task (truncated BPTT, state carried
# between updates): lm-eval's validation perplexity falls well below the unigram perplexity of
# the same text and equals the training run's own validation; lm-eval's --mem-len changes
# nothing for an LSTM; generate continues a prompt (greedy repeats, a seed repeats).
#   lm_lstm_learns.sh <mixseq> <work dir>
set -euo pipefail
mixseq=$1
work=$2
here=$(dirname "$0")
source "$here/small_task.sh"
make_small_lm_task "$mixseq" "$work"
tiny_lstm_lm_train_command "$mixseq" "$work"
"${train[@]}" --train.run_dir "$work/run" --train.max_steps 400 --train.log_interval 100 \
  --lm.eval_batch_size 4 2>"$work/train.log"
checkpoint=$work/run/checkpoint_best.pt
grep -q "lstm_lm language model with" "$work/train.log" || { echo "FAIL: not an lstm_lm run"; cat "$work/train.log"; exit 1; }

unigram=$(awk 'NR == FNR { for (i = 1; i <= NF; i++) count[$i]++; count["</s>"]++; total += NF + 1; next }
               { for (i = 1; i <= NF; i++) words[++n] = $i; words[++n] = "</s>" }
               END { types = length(count) + 1
                     for (i = 1; i <= n; i++) nll -= log((count[words[i]] + 1) / (total + types))
                     printf "%.3f", exp(nll / n) }' "$work/raw/train.en" "$work/raw/valid.en")
eval_ppl() {
  "$mixseq" --threads 1 lm-eval -c "$checkpoint" -i "$work/raw/valid.en" --device cpu --batch-size 4 --tgt-len 16 \
    --json "$@" | sed -n 's/.*"ppl":\([0-9.e+-]*\).*/\1/p'
}
perplexity=$(eval_ppl --mem-len 32)
echo "validation perplexity $perplexity, unigram $unigram"
awk -v p="$perplexity" -v u="$unigram" 'BEGIN { exit !(p > 1 && p < u / 2) }' ||
  { echo "FAIL: perplexity $perplexity is not well below the unigram perplexity $unigram"; exit 1; }
[ "$(eval_ppl --mem-len 0)" = "$perplexity" ] || { echo "FAIL: --mem-len changed an LSTM's perplexity"; exit 1; }
# The run's last validation scored the same text with the same streams (lm.eval_batch_size 4,
# lm.eval_tgt_len 16) from the best checkpoint's weights.
validated=$(sed -n 's/.*valid |.*| ppl \([0-9.]*\) (best).*/\1/p' "$work/train.log" | tail -1)
[ "$(printf '%.2f' "$perplexity")" = "$validated" ] ||
  { echo "FAIL: lm-eval's perplexity $perplexity is not the training run's validation $validated"; exit 1; }

generate=("$mixseq" --threads 1 generate -c "$checkpoint" --device cpu --prompt "seven hundred" --max-tokens 30)
greedy=$("${generate[@]}" --greedy)
[ "$greedy" = "$("${generate[@]}" --greedy --mem-len 4)" ] || { echo "FAIL: greedy differs"; exit 1; }
sampled=$("${generate[@]}" --seed 5 --top-p 0.9)
[ "$sampled" = "$("${generate[@]}" --seed 5 --top-p 0.9)" ] || { echo "FAIL: a seed does not repeat"; exit 1; }
[ -n "$sampled" ] || { echo "FAIL: nothing generated"; exit 1; }
echo "greedy: $greedy"
echo "PASS: perplexity $perplexity < unigram $unigram / 2; generate works"
