#!/usr/bin/env bash
# mixseq serve's page, GET / (issue 28): self-contained HTML with a text box; in headless Chromium
# (when Debian's chromium and chromium-driver are installed; otherwise the browser half is skipped,
# exit 77) the page names the served models (GET /info: the translator's languages), typing shows
# mixseq translate's translations, the alignment grid shows the server's alignment, and the
# metrics line fills in. With espeak-ng, the same server also holds a barely trained speech
# recognizer, synthesizer and classifier: an uploaded audio file shows mixseq transcribe's
# transcript, a recording made through Chromium's fake microphone is transcribed, "speak" plays
# mixseq synthesize's file byte for byte, and "classify" shows mixseq classify's label.
#   serve_page.sh <mixseq> <work dir>
set -euo pipefail
mixseq=$1
work=$2
here=$(dirname "$0")
source "$here/small_task.sh"
make_tiny_translation_model "$mixseq" "$work"
"$mixseq" --threads 1 translate -c "$work/model.pt" --device cpu -i "$work/raw/test.en" -o "$work/expected.txt" \
  2>"$work/translate.log"
extra=()
if command -v espeak-ng >/dev/null; then
  # The models' quality is not under test: a few updates each, so the page's answers are the commands'.
  python3 "$here/tools/spoken_numbers.py" "$work/digits" --train 6 --valid 2 --voice en-us
  "$mixseq" prepare --task speech --train "$work/digits/train.tsv" --valid "$work/digits/valid.tsv" \
    -o "$work/speech" --sample-rate 22050 >/dev/null
  "$mixseq" --threads 1 train -c "$here/../../configs/speech_tiny.yaml" --data.dir "$work/speech" \
    --speech.sample_rate 22050 --train.run_dir "$work/asr" --train.max_epochs 0 --train.max_steps 1 \
    --schedule.cosine.warmup_steps 0 2>"$work/asr.log"
  "$mixseq" --threads 1 train -c "$here/../../configs/tacotron2_tiny.yaml" --data.dir "$work/speech" \
    --train.run_dir "$work/tts" --train.max_epochs 0 --train.max_steps 2 --model.tacotron2.max_decoder_steps 30 \
    2>"$work/tts.log"
  audio=$work/digits/$(head -1 "$work/digits/valid.tsv" | cut -f1)
  "$mixseq" --threads 1 transcribe -c "$work/asr/checkpoint_best.pt" --device cpu "$audio" -o "$work/transcript.txt" \
    2>/dev/null
  "$mixseq" --threads 1 synthesize -c "$work/tts/checkpoint_best.pt" --device cpu -o "$work/spoken" "three one four" \
    2>/dev/null
  awk 'BEGIN { srand(3); for (i = 0; i < 200; i++) { w = rand() < 0.5; printf "%s dog %s\t%s\n", (w ? "good" : "bad"),
       (rand() < 0.5 ? "ran" : "sat"), (w ? "pos" : "neg") } }' > "$work/labels.tsv"
  "$mixseq" prepare --task classify --train "$work/labels.tsv" --valid "$work/labels.tsv" -o "$work/classify" >/dev/null
  "$mixseq" --threads 1 train --train.device cpu --model.arch lm_classifier --model.lstm_lm.embed_dim 8 \
    --model.lstm_lm.hidden_size 8 --model.lstm_lm.num_layers 1 --train.max_epochs 1 --data.dir "$work/classify" \
    --train.run_dir "$work/classifier" 2>"$work/classifier.log"
  echo "good dog ran" | "$mixseq" --threads 1 classify -c "$work/classifier/checkpoint_best.pt" --device cpu \
    --json 2>/dev/null > "$work/classified.json"
  extra=(--recognizer "$work/asr/checkpoint_best.pt" --audio "$audio" --transcript "$work/transcript.txt"
         --synthesizer "$work/tts/checkpoint_best.pt" --speak "three one four" --spoken "$work/spoken/000001.wav"
         --classifier "$work/classifier/checkpoint_best.pt" --classify "good dog ran" --classified "$work/classified.json")
else
  echo "espeak-ng is not installed: the page's speech sections are not checked"
fi
python3 "$here/tools/serve_page_check.py" "$mixseq" "$work/model.pt" "$work/raw/test.en" "$work/expected.txt" "$work" \
  "${extra[@]}"
