# Sourced by the end-to-end scripts that check error messages; needs $mixseq and the current
# folder writable. `expect <message part> <mixseq arguments...>` requires a non-zero exit and the
# message on stderr, and counts the misses in $failures; `expect_error` also requires the exit
# status to be an error's, 1 to 127 (not a signal's).
failures=0
expect() {
  local message=$1
  shift
  local status=0
  "$mixseq" "$@" >out.txt 2>err.txt || status=$?
  if [ "$status" -eq 0 ] || ! grep -qF -- "$message" err.txt; then
    echo "FAIL: mixseq $* exited $status without '$message':"
    cat err.txt
    failures=$((failures + 1))
  fi
}
expect_error() {
  local message=$1
  shift
  expect "$message" "$@"
  local status=0
  "$mixseq" "$@" >/dev/null 2>&1 || status=$?
  [ "$status" -ge 1 ] && [ "$status" -le 127 ] || { echo "FAIL: exit status $status"; failures=$((failures + 1)); }
}
