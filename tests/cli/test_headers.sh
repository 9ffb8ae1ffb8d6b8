#!/usr/bin/env bash
# Every public header compiles on its own, from C11 and from C++, with gcc and clang and strict
# warnings as errors (a user's flags must not trip on our inline code); and every usage snippet
# in a header comment compiles against the real declarations (tests/cli/header_snippets.py).
. "$(dirname "$0")/lib.sh"
am_need_tool gcc g++ clang python3
CW="-Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wconversion -Wsign-conversion -Wcast-qual -Werror"
XW="-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Wold-style-cast -Wcast-qual -Werror"
for h in "$AM_SOURCE"/include/anymove/*.h; do
  name=$(basename "$h")
  printf '#include "anymove/%s"\n#include "anymove/%s"\nint am_header_probe(void);\nint am_header_probe(void) { return 0; }\n' "$name" "$name" > "$TMP/c.c"
  for cc in gcc clang; do
    # shellcheck disable=SC2086
    if $cc -std=c11 $CW -I"$AM_SOURCE/include" -c "$TMP/c.c" -o "$TMP/c.o" 2>"$TMP/err"; then
      am_pass "${cc}_c11_$name"; else am_fail "${cc}_c11_$name" "$(head -n 5 "$TMP/err")"; fi
  done
  cp "$TMP/c.c" "$TMP/c.cc"
  # shellcheck disable=SC2086
  if g++ -std=c++11 $XW -I"$AM_SOURCE/include" -fsyntax-only "$TMP/c.cc" 2>"$TMP/err"; then
    am_pass "cxx_$name"; else am_fail "cxx_$name" "$(head -n 5 "$TMP/err")"; fi
done

# The tables of core.h expand through a macro X: a caller's own X must survive the include.
printf '#define X 42\n#include "anymove/anymove.h"\nint am_x_probe(void);\nint am_x_probe(void) { return X; }\n' > "$TMP/x.c"
if gcc -std=c11 -Wall -Wextra -Wpedantic -Werror -I"$AM_SOURCE/include" -c "$TMP/x.c" -o "$TMP/x.o" 2>"$TMP/err"; then
  am_pass callers_x_macro_survives; else am_fail callers_x_macro_survives "$(head -n 5 "$TMP/err")"; fi

if n=$(python3 "$(dirname "$0")/header_snippets.py" "$AM_SOURCE/include/anymove" "$TMP/snippets.c" 2>"$TMP/err"); then
  am_pass "snippets_extracted ($n)"; else am_fail snippets_extracted "$(head -n 5 "$TMP/err")"; fi
for cc in gcc clang; do
  # shellcheck disable=SC2086
  if $cc -std=c11 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Werror \
       -I"$AM_SOURCE/include" -c "$TMP/snippets.c" -o "$TMP/snippets.o" 2>"$TMP/err"; then
    am_pass "${cc}_snippets_compile"; else am_fail "${cc}_snippets_compile" "$(grep -m 5 error "$TMP/err")"; fi
done
am_done
