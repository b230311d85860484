# The shared assertion of the whole-command tests (sourced; not a test itself: CTest runs
# tests/e2e/*.sh only). The caller sets failures=0 and passes=0.
check() {  # check NAME EXPECTED_EXIT PATTERN -- command...
  local name=$1 want=$2 pattern=$3
  shift 4
  local out code
  out=$("$@" 2>&1)
  code=$?
  if [ "$code" != "$want" ] || ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL $name: exit $code (want $want), output:"
    echo "$out" | head -20
    failures=$((failures + 1))
  else
    passes=$((passes + 1))
  fi
}
