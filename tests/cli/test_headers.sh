#!/usr/bin/env bash
# Every public header compiles on its own, from C11 and from C++, with warnings as errors.
. "$(dirname "$0")/lib.sh"
for h in "$AM_SOURCE"/include/anymove/*.h; do
  name=$(basename "$h")
  printf '#include "anymove/%s"\n#include "anymove/%s"\nint am_header_probe(void);\nint am_header_probe(void) { return 0; }\n' "$name" "$name" > "$TMP/c.c"
  if gcc -std=c11 -Wall -Wextra -Wpedantic -Werror -I"$AM_SOURCE/include" -c "$TMP/c.c" -o "$TMP/c.o" 2>"$TMP/err"; then
    am_pass "c11_$name"; else am_fail "c11_$name" "$(head -n 5 "$TMP/err")"; fi
  cp "$TMP/c.c" "$TMP/c.cc"
  if g++ -std=c++11 -Wall -Wextra -Werror -I"$AM_SOURCE/include" -fsyntax-only "$TMP/c.cc" 2>"$TMP/err"; then
    am_pass "cxx_$name"; else am_fail "cxx_$name" "$(head -n 5 "$TMP/err")"; fi
done
am_done
