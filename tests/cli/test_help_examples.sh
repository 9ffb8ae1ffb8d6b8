#!/usr/bin/env bash
# Every --help ends with examples, and every example runs (exit 0) as printed, from the repo
# root with ../shared beside it: a copy of that layout in $TMP so outputs land in $TMP/repo/out.
. "$(dirname "$0")/lib.sh"
mkdir -p "$TMP/repo"
ln -s "$(cd "$AM_SOURCE" && pwd)/examples" "$TMP/repo/examples"
ln -s "$(cd "$AM_SHARED" && pwd)" "$TMP/shared"

# examples_of HELP_TEXT: the example command lines (continuations joined), one a line.
examples_of() {
  awk '/^examples:$/{on=1; next}
       on && /^  anymove / {line=$0; sub(/^  /, "", line); if (line ~ /\\$/) {sub(/\\$/, "", line); cont=1; buf=line; next} print line; next}
       on && cont {l=$0; sub(/^ +/, "", l); if (l ~ /\\$/) {sub(/\\$/, "", l); buf=buf " " l; next} print buf " " l; cont=0; next}
       on && /^$/ {on=0}'
}

helps=("")
for verb in $("$AM_BIN" --help | awk '/^commands:/{on=1; next} on && /^$/{exit} on && /^  [a-z]/{print $1}'); do
  helps+=("$verb")
done
for sub in $("$AM_BIN" score --help | awk '/^  [a-z]+ /{print $1}' | grep -v '^anymove$'); do
  helps+=("score $sub")
done

total=0
# A line printed by several helps (the same exam, rig or solve with the same inputs and outputs)
# runs once while what it reads is unchanged: the others pass on its exit 0 and say where it ran.
# Under the sanitizers the repeats it drops were a fifth of the test's time. Only lines with
# -o OUT are kept; a line that runs forgets every kept line naming its OUT (an exam that rewrites
# out/wolf_exam makes the solve of out/wolf_exam/det.npz run again); a line that failed, or
# writes no -o, runs again in each help.
declare -A ran_in
for h in "${helps[@]}"; do
  # shellcheck disable=SC2086
  text=$("$AM_BIN" $h --help 2>&1)
  name="help_examples_${h// /_}"
  [ -z "$h" ] && name=help_examples_anymove
  if [ "$(printf '%s\n' "$text" | tail -n +1 | grep -c '^examples:$')" -ne 1 ]; then
    am_fail "$name" "no examples: section in 'anymove $h --help'"
    continue
  fi
  # the examples close the help: nothing but example lines after the heading
  tail_text=$(printf '%s\n' "$text" | sed -n '/^examples:$/,$p' | tail -n +2 | grep -v '^  anymove \|^   \+')
  if [ -n "$tail_text" ]; then am_fail "$name" "text after the examples: $tail_text"; continue; fi
  n=0
  while IFS= read -r line; do
    n=$((n + 1))
    total=$((total + 1))
    if [ -n "${ran_in[$line]+set}" ]; then am_pass "$name: $line (exit 0 where '${ran_in[$line]} --help' lists it)"; continue; fi
    out=$(cd "$TMP/repo" && eval "\"\$AM_BIN\" ${line#anymove }" 2>&1 >/dev/null)
    rc=$?
    o=$(printf '%s\n' "$line" | awk '{for (i = 1; i < NF; i++) if ($i == "-o") print $(i + 1)}')
    if [ -n "$o" ]; then
      for k in "${!ran_in[@]}"; do case "$k" in *"$o"*) unset 'ran_in[$k]' ;; esac; done
    fi
    if [ "$rc" -eq 0 ]; then am_pass "$name: $line"; [ -n "$o" ] && ran_in[$line]=anymove${h:+ $h}; else am_fail "$name: $line" "exit $rc" "$(printf '%s' "$out" | tail -n 3)"; fi
  done < <(printf '%s\n' "$text" | examples_of)
  [ "$n" -gt 0 ] || am_fail "$name" "the examples: section lists no command"
done
[ "$total" -ge 20 ] && am_pass "help_examples_count ($total)" || am_fail help_examples_count "only $total examples ran"
am_done
