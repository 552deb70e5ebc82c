# Sourced by the check scripts: PASS/FAIL lines, a count, and the closing "N passed, N failed",
# which names what failed (the last line is what a log cut short still shows).
passed=0
failed=0
failures=""
pass() { echo "PASS $1"; passed=$((passed + 1)); }
# fail NAME [DETAILS]: DETAILS (the output that explains the failure) is shown indented, its end.
fail() {
  echo "FAIL $1"
  [ -n "${2:-}" ] && sed 's/^/    /' <<<"$2" | tail -n 40
  failed=$((failed + 1))
  failures="$failures; ${1:0:80}"
}
# summary: the closing line; exits 0 only when nothing failed.
summary() {
  echo "$passed passed, $failed failed${failures:+:${failures#;}}"
  [ "$failed" -eq 0 ]
  exit
}
