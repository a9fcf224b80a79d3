#!/usr/bin/env bash
# Where `-o FILE` and standard output may point (issue 11): a symbolic link (its target is
# replaced, the link stays), a fifo (written, not replaced by a regular file), an open file named
# by /dev/fd/N, a full device or disk (a non-zero exit and a message naming the file, never a lost
# result), and `spm train` whose model cannot be written (it said "wrote", leaving a truncated model).
# /dev/full is named by -o only when /dev is not writable: run as root, a mixseq that wrongly
# replaced its output would replace the device itself.
#   output_targets.sh <mixseq> <work dir>
set -euo pipefail
mixseq=$1
work=$2
rm -rf "$work" && mkdir -p "$work"
cd "$work"
printf 'the cat sat on the mat\nhello world\n' >ref
printf 'the cat sat on a mat\nhello there\n' >hyp
for i in $(seq 1 100); do echo "sentence number $i of the cat on the mat"; done >text

# expect_failure <message part> <command...>: the command exits non-zero and says <message part>.
expect_failure() {
  local message=$1
  shift
  local status=0
  "$@" >/dev/null 2>err.txt || status=$?
  [ "$status" -ne 0 ] || { echo "FAIL: exit 0 from: $*"; exit 1; }
  grep -qF -- "$message" err.txt || { echo "FAIL: '$message' not in the error of: $*"; cat err.txt; exit 1; }
}

echo old >target.txt
ln -s target.txt link.txt
"$mixseq" vocab build -i hyp -o link.txt 2>/dev/null
[ -L link.txt ] || { echo "FAIL: -o link.txt replaced the link by a file"; exit 1; }
head -1 target.txt | grep -qx "<pad> 0" || { echo "FAIL: the link's target was not updated"; exit 1; }

mkfifo fifo
cat fifo >from_fifo &
reader=$!
"$mixseq" vocab build -i hyp -o fifo 2>/dev/null
[ -p fifo ] || { kill "$reader"; echo "FAIL: -o fifo replaced the fifo by a file"; exit 1; }
wait "$reader"
head -1 from_fifo | grep -qx "<pad> 0" || { echo "FAIL: nothing came through the fifo"; exit 1; }

"$mixseq" vocab build -i hyp -o /dev/fd/1 2>/dev/null | head -1 | grep -qx "<pad> 0" ||
  { echo "FAIL: -o /dev/fd/1 wrote nothing to the pipe"; exit 1; }

if [ -e /dev/full ]; then
  expect_failure "cannot write '/dev/fd/3': No space left on device" \
    bash -c '"$0" vocab build -i hyp -o /dev/fd/3 3>/dev/full' "$mixseq"
  if [ ! -w /dev ]; then
    expect_failure "cannot write '/dev/full': No space left on device" "$mixseq" vocab build -i hyp -o /dev/full
  fi
  status=0
  "$mixseq" bleu ref -i hyp >/dev/full 2>err.txt || status=$?
  [ "$status" -ne 0 ] && grep -qF "cannot write to standard output: No space left on device" err.txt ||
    { echo "FAIL: bleu > /dev/full exited $status"; cat err.txt; exit 1; }
fi

# A full disk: files may not grow past 16 kB (SIGXFSZ ignored, so writes fail with EFBIG).
expect_failure "cannot write 'full.model': File too large" \
  bash -c 'ulimit -f 16; trap "" XFSZ; exec "$0" spm train --input text --model-prefix full --vocab-size 30' "$mixseq"
[ ! -e full.model ] || { echo "FAIL: a failed spm train left full.model"; exit 1; }
echo "PASS: -o follows links, writes fifos and open files, and write errors fail with a message"
