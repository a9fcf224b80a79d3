#!/usr/bin/env bash
# The training loop's numbers do not move when its code does: with a fixed seed, the first 50
# update losses of a GNMT (two micro-batches per update), a Transformer and a Transformer-XL (two
# chunks per update, validation every 20 updates) are compared, as the exact decimal strings the
# metrics log wrote, with tests/data/golden_losses/*.txt. Those were recorded once with the two
# copied loops that the task seam replaced (main at 2836594, 2026-11-26). Transformer-XL's were
# recorded again on 2026-11-29, the loop unchanged, when its attention softmax and one-cluster NLL
# moved to mixseq's own exp (nn/softmax_rows.h): 5 of the 50 losses moved, by at most 7e-8 relative;
# on 2026-12-02, when the adaptive softmax's head and tail terms moved to nn/token_nll.h: 6 of
# the 50 moved, by at most 1.2e-7 relative; and on 2026-12-07, when token_nll's log-sum-exp took
# one sweep of the logits (biased_log_sum_exp_in_one_sweep, nn/softmax_rows.h): 9 of the 50
# moved, by at most 1.4e-7 relative.
#
# Bit for bit needs the same arithmetic on every machine: one thread, OpenBLAS's SSE3 kernels
# (OPENBLAS_CORETYPE=Prescott, which every x86-64 CPU runs) and ATen's kernels without AVX
# (ATEN_CPU_CAPABILITY=default). Other kernels round differently, not wrongly.
#   train_golden_losses.sh <mixseq> <work dir>            # compare
#   train_golden_losses.sh <mixseq> <work dir> --record   # write the golden files again
set -euo pipefail
mixseq=$1
work=$2
record=${3:-}
here=$(dirname "$0")
golden=$here/../data/golden_losses
source "$here/small_task.sh"
export OPENBLAS_CORETYPE=Prescott ATEN_CPU_CAPABILITY=default OMP_NUM_THREADS=1

rm -rf "$work" && mkdir -p "$work"
make_small_task "$mixseq" "$work/mt" >/dev/null
make_small_lm_task "$mixseq" "$work/lm" >/dev/null
common=(--train.precision fp32 --train.seed 7 --train.max_epochs 0 --train.max_steps 50 --train.log_interval 1
        --train.validate_bleu false)

tiny_train_command "$mixseq" "$work/mt"
"${train[@]}" "${common[@]}" --model.arch gnmt --model.gnmt.hidden_size 32 --model.gnmt.num_layers 2 \
  --model.gnmt.dropout 0.2 --train.update_freq 2 --optim.lr 5e-3 --train.run_dir "$work/gnmt" \
  2>"$work/gnmt.log" || { tail -20 "$work/gnmt.log"; exit 1; }
"${train[@]}" "${common[@]}" --model.arch transformer --model.transformer.embed_dim 32 \
  --model.transformer.ffn_dim 64 --model.transformer.heads 4 --model.transformer.encoder_layers 2 \
  --model.transformer.decoder_layers 2 --model.transformer.dropout 0.1 --model.transformer.attention_dropout 0.1 \
  --criterion.smoothing 0.1 --optim.lr 1e-3 --train.run_dir "$work/transformer" \
  2>"$work/transformer.log" || { tail -20 "$work/transformer.log"; exit 1; }
tiny_lm_train_command "$mixseq" "$work/lm"
"${train[@]}" --train.precision fp32 --train.seed 7 --train.max_steps 50 --train.log_interval 1 \
  --model.transformer_xl.dropout 0.1 --lm.batch_chunk 2 --train.validate_interval 20 \
  --train.run_dir "$work/transformer_xl" 2>"$work/transformer_xl.log" || { tail -20 "$work/transformer_xl.log"; exit 1; }

failures=0
for model in gnmt transformer transformer_xl; do
  logged_losses "$work/$model/metrics.jsonl" >"$work/$model.losses"
  [ "$(wc -l <"$work/$model.losses")" -eq 50 ] || { echo "FAIL: $model logged $(wc -l <"$work/$model.losses") updates, not 50"; exit 1; }
  if [ "$record" = --record ]; then
    mkdir -p "$golden"
    cp "$work/$model.losses" "$golden/$model.txt"
    echo "recorded $golden/$model.txt"
  elif ! diff "$golden/$model.txt" "$work/$model.losses" >"$work/$model.diff"; then
    echo "FAIL: $model's losses differ from $golden/$model.txt (golden <, now >):"
    head -10 "$work/$model.diff"
    failures=$((failures + 1))
  fi
done
[ "$failures" -eq 0 ] || exit 1
echo "PASS: the first 50 losses of GNMT, Transformer and Transformer-XL are bit for bit the golden ones"
