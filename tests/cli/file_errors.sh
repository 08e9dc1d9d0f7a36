#!/usr/bin/env bash
# file_errors.sh CASE TPUSIM — file-system faults that need set-up (tests/cli/bad_inputs.cmake).
# Each case expects exit 2 and a message naming the path; output cases also check that no partial
# or temporary file is left. Exit 0 pass, 1 fail, 77 skipped (CTest SKIP_RETURN_CODE): root reads
# and writes through chmod 000 / 555, so the permission cases cannot deny anything there.
set -u
case_name=$1
tpusim=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tpusim_file_errors.XXXXXX")
trap 'chmod -R u+rwx "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
model=tests/golden/tiny_dot_bias_relu/model.hlo

fail() {
  printf '%s\n--- output ---\n%s\n' "$1" "${out:-}"
  exit 1
}
# expect REGEX CMD...: exit code 2 and output matching REGEX.
expect() {
  local regex=$1
  shift
  out=$("$@" 2>&1)
  local rc=$?
  [ "$rc" = 2 ] || fail "exit code $rc, expected 2"
  grep -Eq -- "$regex" <<<"$out" || fail "output does not match /$regex/"
}
# nothing_left DIR: no file in DIR (no partial output, no <path>.tmp.<pid>).
nothing_left() {
  local left
  left=$(ls -A "$1")
  [ -z "$left" ] || fail "files left in $1: $left"
}

case "$case_name" in
  unreadable_model)
    [ "$(id -u)" = 0 ] && { echo "skipped: root ignores file permissions"; exit 77; }
    cp "$model" "$tmp/model.hlo"
    chmod 000 "$tmp/model.hlo"
    expect "$tmp/model.hlo: cannot open: Permission denied" "$tpusim" run "$tmp/model.hlo" --config tiny
    ;;
  unreadable_config)
    [ "$(id -u)" = 0 ] && { echo "skipped: root ignores file permissions"; exit 77; }
    cp configs/tiny.yaml "$tmp/tiny.yaml"
    chmod 000 "$tmp/tiny.yaml"
    expect "$tmp/tiny.yaml: .*Permission denied" "$tpusim" config show "$tmp/tiny.yaml"
    ;;
  unwritable_folder)
    [ "$(id -u)" = 0 ] && { echo "skipped: root ignores file permissions"; exit 77; }
    mkdir "$tmp/ro"
    chmod 555 "$tmp/ro"
    expect "$tmp/ro/r.json: cannot write" "$tpusim" run "$model" --config tiny --report "$tmp/ro/r.json"
    nothing_left "$tmp/ro"
    ;;
  report_missing_folder)
    expect "$tmp/missing/r.json: cannot write: no folder $tmp/missing" \
      "$tpusim" run "$model" --config tiny --report "$tmp/missing/r.json"
    [ ! -e "$tmp/missing" ] || fail "$tmp/missing was created"
    nothing_left "$tmp"
    ;;
  report_is_a_folder)
    mkdir "$tmp/out"
    expect "$tmp/out: is a directory" "$tpusim" run "$model" --config tiny --report "$tmp/out"
    nothing_left "$tmp/out"
    [ "$(ls -A "$tmp")" = out ] || fail "files left in $tmp: $(ls -A "$tmp")"
    ;;
  trace_missing_folder)
    expect "$tmp/missing/t.json: cannot write" \
      "$tpusim" exec examples/matmul_relu.tasm --config tiny --trace "$tmp/missing/t.json"
    nothing_left "$tmp"
    ;;
  asm_output_missing_folder)
    expect "$tmp/missing/p.tbin: cannot write" \
      "$tpusim" asm examples/matmul_relu.tasm -o "$tmp/missing/p.tbin"
    nothing_left "$tmp"
    ;;
  *)
    echo "file_errors.sh: unknown case '$case_name'"
    exit 1
    ;;
esac
exit 0
