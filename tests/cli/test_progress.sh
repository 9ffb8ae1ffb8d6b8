#!/usr/bin/env bash
# Progress on stderr (README "Progress"): on a terminal a bar with percentage and ETA, redrawn
# in place; otherwise one plain line per finished stage; --quiet silences both. The library's
# progress callback drives it (rig reports its stages and iterations). The terminal case runs
# under script(1), which gives the command a pseudo-terminal.
. "$(dirname "$0")/lib.sh"
TRACKS=$AM_SOURCE/examples/tracks/grison_walk.tracks.npz

# Not a terminal: stage lines, no carriage returns or escape sequences.
"$AM_BIN" rig "$TRACKS" --bones 8 -o "$TMP/a" 2>"$TMP/plain.err" >/dev/null
for stage in 'rig: initialise bones' 'rig: fit bones' 'rig: skeleton'; do
  if grep -Eq "^anymove: $stage +[0-9]+\.[0-9]{3} s$" "$TMP/plain.err"; then am_pass "plain_line: $stage"; else
    am_fail "plain_line: $stage" "$(cat "$TMP/plain.err")"; fi
done
n=$(grep -c 'rig: fit bones' "$TMP/plain.err")
[ "$n" -eq 1 ] && am_pass plain_one_line_per_stage || am_fail plain_one_line_per_stage "$n lines for one stage"
if LC_ALL=C grep -q "$(printf '[\r\033]')" "$TMP/plain.err"; then am_fail plain_no_bar "terminal codes in a file"; else am_pass plain_no_bar; fi
"$AM_BIN" rig "$TRACKS" --bones 8 -o "$TMP/b" --quiet 2>"$TMP/quiet.err" >/dev/null
[ ! -s "$TMP/quiet.err" ] && am_pass plain_quiet || am_fail plain_quiet "$(cat "$TMP/quiet.err")"

# A terminal: the bar, redrawn with \r, with a percentage and an ETA; the stage lines stay.
if ! command -v script >/dev/null; then
  am_fail tty_script "script(1) is needed for the terminal test (bsdutils)"
else
  script -qfec "'$AM_BIN' rig '$TRACKS' --bones 8 -o '$TMP/c'" /dev/null > "$TMP/tty.out" 2>&1
  if LC_ALL=C grep -aq "$(printf '\r\033\\[K')anymove: rig: fit bones *\\[[#.]\\{30\\}\\] *[0-9]\\+%  ETA " "$TMP/tty.out"; then
    am_pass tty_bar; else am_fail tty_bar "$(LC_ALL=C od -c "$TMP/tty.out" | head -n 12)"; fi
  if LC_ALL=C grep -aEq "anymove: rig: fit bones +[0-9]+\.[0-9]{3} s" "$TMP/tty.out"; then am_pass tty_stage_line; else
    am_fail tty_stage_line "$(LC_ALL=C od -c "$TMP/tty.out" | head -n 12)"; fi
  [ -f "$TMP/c/rig.json" ] && am_pass tty_wrote || am_fail tty_wrote "no rig.json"
  script -qfec "'$AM_BIN' rig '$TRACKS' --bones 8 -o '$TMP/d' -q" /dev/null > "$TMP/ttyq.out" 2>&1
  [ ! -s "$TMP/ttyq.out" ] && am_pass tty_quiet || am_fail tty_quiet "$(LC_ALL=C od -c "$TMP/ttyq.out" | head -n 5)"
fi
am_done
