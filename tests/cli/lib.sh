# Shared by the CLI tests (sourced): the pass/fail counters, `check NAME COMMAND...` (ok when the command
# succeeds), and `finish`, which prints the summary line and is the script's exit status.
#
#   . "$(dirname "$0")/lib.sh"
#   check "second run: from disk" [ "$(from "$work/second")" = disk ]
#   finish
passed=0
failed=0

check() {  # check NAME CONDITION-COMMAND...
  local name=$1
  shift
  if "$@"; then
    passed=$((passed + 1))
    printf 'ok   %s\n' "$name"
  else
    failed=$((failed + 1))
    printf 'FAIL %s\n' "$name"
  fi
}

finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
