#!/usr/bin/env bash
# anymove batch: 8 exam takes through solve (-j 2 and -j 1 give the same bytes as solve alone),
# resumable (skips what is done, reruns what changed, --force), SIGTERM halfway then a restart
# that finishes only the missing takes, bad rows fail alone with their reason (exit 2), a failed
# take leaves no outputs and keeps an older result, malformed manifests stop before any take,
# chains, JSON manifests, --task / --collect and the Slurm script (--dry-run).
. "$(dirname "$0")/lib.sh"
am_need_tool jq
W=$AM_SOURCE/examples/creatures/wolf
cd "$TMP" || exit 1
for i in 1 2 3 4 5 6 7 8; do
  "$AM_BIN" exam --rig "$W/rig.json" --creature "$W/creature.json" --seed "$i" --frames 24 -o "ex$i" -q || exit 1
done
{ echo "take,command,args"
  for i in 1 2 3 4 5 6 7 8; do echo "take$i,solve,ex$i/det.npz --rig $W/rig.json --creature $W/creature.json"; done
} > takes.csv

expect batch_j2 0 '8 takes: 8 ok, 0 skipped, 0 failed' -- "$AM_BIN" batch takes.csv -o runs2 -j 2
expect batch_j1 0 '8 takes: 8 ok' -- "$AM_BIN" batch takes.csv -o runs1 -j 1 -q
"$AM_BIN" solve ex3/det.npz --rig "$W/rig.json" --creature "$W/creature.json" -o alone3 -q
same=1
for i in 1 2 3 4 5 6 7 8; do
  for f in motion.json animation.glb; do cmp -s "runs1/take$i/$f" "runs2/take$i/$f" || same=0; done
done
if [ $same = 1 ] && cmp -s alone3/motion.json runs2/take3/motion.json && cmp -s alone3/animation.glb runs2/take3/animation.glb; then
  am_pass batch_outputs_identical; else am_fail batch_outputs_identical "-j 1, -j 2 and solve alone differ"; fi
if [ "$(wc -l < runs2/takes.csv)" = 9 ] && [ "$(head -1 runs2/takes.csv)" = "take,status,exit,seconds,reason,log" ] &&
   [ "$(grep -c ',ok,0,' runs2/takes.csv)" = 8 ] && grep -q 'anymove solve ex1/det.npz' runs2/logs/take1.log; then
  am_pass batch_summary_and_logs; else am_fail batch_summary_and_logs "$(cat runs2/takes.csv)"; fi

# resumable: done takes are skipped; a newer input or --force runs again
expect batch_resume_skips 0 '8 takes: 0 ok, 8 skipped' -- "$AM_BIN" batch takes.csv -o runs2 -j 2
sleep 0.05; touch ex5/det.npz
expect batch_resume_newer_input 0 '8 takes: 1 ok, 7 skipped' -- "$AM_BIN" batch takes.csv -o runs2 -j 2
if grep -q '^take5,ok,' runs2/takes.csv; then am_pass batch_reran_take5; else am_fail batch_reran_take5 "$(cat runs2/takes.csv)"; fi
expect batch_force 0 '8 takes: 8 ok, 0 skipped' -- "$AM_BIN" batch takes.csv -o runs2 -j 2 --force
sed 's/--creature/--no-warp --creature/' takes.csv > changed.csv
expect batch_changed_row_reruns 0 '8 takes: 8 ok, 0 skipped' -- "$AM_BIN" batch changed.csv -o runs1 -j 2 -q

# batch_kill_halfway SIGNAL RUNS ERR: takes.csv into RUNS, SIGNAL sent to the batch once 3 takes
# are done; rc: its exit status
batch_kill_halfway() {
  "$AM_BIN" batch takes.csv -o "$2" -j 2 -q 2>"$3" &
  local pid=$!
  for _ in $(seq 1 600); do
    [ "$(cat "$2"/logs/*.status 2>/dev/null | grep -c ',ok,')" -ge 3 ] && break
    sleep 0.05
  done
  kill -"$1" $pid
  wait $pid 2>/dev/null
  rc=$?
}

# killed halfway (SIGTERM), then restarted: only the missing takes run
batch_kill_halfway TERM runsk kill.err
before=$(cat runsk/logs/*.status 2>/dev/null | grep -c ',ok,')
partial=0
for i in 1 2 3 4 5 6 7 8; do
  [ -e "runsk/take$i" ] && [ ! -f "runsk/take$i/.take" ] && partial=1
done
if [ $rc = 143 ] && [ "$before" -ge 3 ] && [ "$before" -lt 8 ] && [ $partial = 0 ] &&
   [ -z "$(ls -A runsk/.staging 2>/dev/null)" ] && grep -q 'stopped by signal 15' kill.err; then
  am_pass batch_sigterm_leaves_whole_takes; else am_fail batch_sigterm_leaves_whole_takes "rc $rc, $before done, partial $partial, staging: $(ls -A runsk/.staging 2>/dev/null)" "$(cat kill.err)"; fi
expect batch_restart 0 "8 takes: $((8 - before)) ok, $before skipped, 0 failed" -- "$AM_BIN" batch takes.csv -o runsk -j 2 -q
same=1
for i in 1 2 3 4 5 6 7 8; do cmp -s "runsk/take$i/motion.json" "runs2/take$i/motion.json" || same=0; done
if [ $same = 1 ]; then am_pass batch_restart_outputs; else am_fail batch_restart_outputs "differ from the uninterrupted run"; fi

# on a terminal: the progress bar with its percentage; --quiet silences it (script(1) gives a tty)
script -qec "'$AM_BIN' batch '$TMP/takes.csv' -o '$TMP/runstty' -j 2 --force" /dev/null > tty.out 2>&1
script -qec "'$AM_BIN' batch '$TMP/takes.csv' -o '$TMP/runstty' -j 2 --force --quiet" /dev/null > ttyq.out 2>&1
if grep -aq 'batch \[#*  *\] *50% 4/8 takes' tty.out && grep -aq '100% 8/8 takes' tty.out &&
   ! grep -aq '% [0-9]*/8 takes' ttyq.out && grep -aq '8 takes: 8 ok' ttyq.out; then
  am_pass batch_tty_progress; else am_fail batch_tty_progress "$(tr '\r' '\n' < tty.out | tail -5)" "$(cat ttyq.out)"; fi

# SIGKILL of the batch alone (kill -9, the OOM killer) halfway: its take runners and their
# steps die with it (none goes on to swap a take in later); then a restart: no partial take in
# RUNS, the dead runs' staging swept, only the missing takes run, the same bytes
batch_kill_halfway KILL runs9 kill9.err
sleep 0.2
at_kill=$(ls runs9/take*/.take 2>/dev/null | wc -l)
sleep 1.5
# the whole takes are those in RUNS with their stamp (a kill between the swap and the status
# file leaves a whole take whose status says nothing yet: the restart skips it, rightly)
before=$(ls runs9/take*/.take 2>/dev/null | wc -l)
partial=0
for i in 1 2 3 4 5 6 7 8; do
  [ -e "runs9/take$i" ] && [ ! -f "runs9/take$i/.take" ] && partial=1
done
stale=$(ls -A runs9/.staging 2>/dev/null | wc -l)
if [ "$before" -ge 3 ] && [ "$before" -lt 8 ] && [ "$before" = "$at_kill" ] && [ $partial = 0 ] && [ "$stale" -ge 1 ]; then
  am_pass batch_sigkill_leaves_whole_takes; else am_fail batch_sigkill_leaves_whole_takes "$before done ($at_kill at the kill), partial $partial, stale staging $stale"; fi
expect batch_sigkill_restart 0 "8 takes: $((8 - before)) ok, $before skipped, 0 failed" -- "$AM_BIN" batch takes.csv -o runs9 -j 2 -q
same=1
for i in 1 2 3 4 5 6 7 8; do
  for f in motion.json animation.glb; do cmp -s "runs9/take$i/$f" "runs2/take$i/$f" || same=0; done
done
if [ $same = 1 ] && [ -z "$(ls -A runs9/.staging 2>/dev/null)" ]; then
  am_pass batch_sigkill_restart_outputs; else am_fail batch_sigkill_restart_outputs "same $same, staging: $(ls -A runs9/.staging 2>/dev/null)"; fi

# bad rows fail alone, with their reason; exit 2 at the end
{ cat takes.csv | head -3
  echo "gone,solve,nothere/det.npz --rig $W/rig.json"
  echo "what,frobnicate,ex1/det.npz"
} > bad.csv
expect batch_bad_rows 2 '4 takes: 2 ok, 0 skipped, 2 failed' -- "$AM_BIN" batch bad.csv -o runsb -j 2 -q
if grep -q '^gone,failed,2,.*nothere/det.npz.*cannot read input' runsb/takes.csv &&
   grep -q "^what,failed,2,.*unknown command 'frobnicate'" runsb/takes.csv && [ ! -e runsb/gone ] && [ ! -e runsb/what ] &&
   [ -f runsb/take1/motion.json ]; then
  am_pass batch_bad_rows_reasons; else am_fail batch_bad_rows_reasons "$(cat runsb/takes.csv)"; fi

# a failed take leaves no partial output and keeps the older result
cp -r ex2 ex2b
printf 'take,command,args\nt,solve,ex2b/det.npz --rig %s\n' "$W/rig.json" > one.csv
"$AM_BIN" batch one.csv -o runsf -q
cp runsf/t/motion.json old.json
head -c 300 ex2/det.npz > ex2b/det.npz
expect batch_failed_take 2 '1 takes: 0 ok, 0 skipped, 1 failed' -- "$AM_BIN" batch one.csv -o runsf --force -q
if cmp -s old.json runsf/t/motion.json && [ -z "$(ls -A runsf/.staging 2>/dev/null)" ] && grep -q ',failed,2,' runsf/takes.csv; then
  am_pass batch_failed_take_keeps_old; else am_fail batch_failed_take_keeps_old "$(ls -A runsf runsf/.staging 2>&1)"; fi
printf 'take,command,args\nu,solve,ex2b/det.npz --rig %s\n' "$W/rig.json" > two.csv
"$AM_BIN" batch two.csv -o runsf -q
if [ ! -e runsf/u ]; then am_pass batch_failed_take_no_output; else am_fail batch_failed_take_no_output "runsf/u exists"; fi

# malformed manifests: exit 2, nothing run, nothing written
printf 'take,command\nx,solve\n' > m1.csv
printf 'take,command,args\nx,solve,"ex1/det.npz\n' > m2.csv
printf 'take,command,args\nx,solve,ex1/det.npz -o there\n' > m3.csv
printf 'take,command,args\nx,solve,a\nx,ik,b\n' > m4.csv
printf 'take,command,args\n../up,solve,a\n' > m5.csv
printf 'take,command,args\nx,solve|ik,a | b | c\n' > m6.csv
printf 'take,command,args\n' > m7.csv
printf '[{"take": "x", "command": "solve", "args": 3}]' > m8.json
printf '[{"take": "x", "command": ' > m9.json
printf 'take,command,args\nfine,solve,ex1/det.npz --rig %s\nx,solve,"a b\n' "$W/rig.json" > m10.csv
expect manifest_header 2 'm1.csv:1: error' -- "$AM_BIN" batch m1.csv -o runsm
expect manifest_quote 2 'm2.csv:2:[0-9]+: error: syntax error' -- "$AM_BIN" batch m2.csv -o runsm
expect manifest_out 2 "m3.csv:2: error.*args give -o" -- "$AM_BIN" batch m3.csv -o runsm
expect manifest_duplicate 2 "m4.csv:3: error: duplicate name \(take 'x' is listed twice\)" -- "$AM_BIN" batch m4.csv -o runsm
expect manifest_take_name 2 "m5.csv:2: error.*take '../up'" -- "$AM_BIN" batch m5.csv -o runsm
expect manifest_chain_steps 2 "more '\|' steps" -- "$AM_BIN" batch m6.csv -o runsm
expect manifest_empty 2 'm7.csv: error: empty input \(no takes\)' -- "$AM_BIN" batch m7.csv -o runsm
expect manifest_json_args 2 'm8.json: error: document has the wrong shape \(\[0\].args' -- "$AM_BIN" batch m8.json -o runsm
expect manifest_json_syntax 2 'm9.json:1:[0-9]+: error: syntax error' -- "$AM_BIN" batch m9.json -o runsm
expect manifest_bad_late_row 2 'm10.csv:3:[0-9]+: error' -- "$AM_BIN" batch m10.csv -o runsm
expect manifest_missing 2 'absent.csv: error: cannot read input' -- "$AM_BIN" batch absent.csv -o runsm
no_files manifest_nothing_written runsm

# a chain and a JSON manifest: solve, then ik on its motion; the same bytes as by hand
jq -n --arg w "$W" '[{take: "c1", command: "solve|ik", args: ["ex4/det.npz", "--rig", "\($w)/rig.json", "--creature", "\($w)/creature.json", "|", "--rig", "\($w)/rig.json"]}]' > chain.json
expect batch_chain_json 0 '1 takes: 1 ok' -- "$AM_BIN" batch chain.json -o runsc -q
"$AM_BIN" ik runs2/take4/motion.json --rig "$W/rig.json" -o ik4 -q
if cmp -s runsc/c1/solve/motion.json runs2/take4/motion.json && cmp -s runsc/c1/ik/motion.json ik4/motion.json; then
  am_pass batch_chain_outputs; else am_fail batch_chain_outputs "the chain's steps differ from solve and ik by hand"; fi

# one take by index (the Slurm array task's runner), then --collect
expect batch_task 0 '' -- "$AM_BIN" batch takes.csv -o runst --task 3 -q
cp runs2/takes.list runst/takes.list
expect batch_collect_missing 1 '8 takes: 1 ok, 0 skipped, 0 failed, 7 missing' -- "$AM_BIN" batch --collect runst
if grep -q '^take3,ok,0,' runst/takes.csv && grep -q '^take4,missing,' runst/takes.csv && cmp -s runst/take3/motion.json runs2/take3/motion.json; then
  am_pass batch_task_outputs; else am_fail batch_task_outputs "$(cat runst/takes.csv)"; fi
expect batch_collect_all 0 '8 takes: 8 ok, 0 skipped' -- "$AM_BIN" batch --collect runs2
expect batch_task_range 2 'the manifest has 8 takes' -- "$AM_BIN" batch takes.csv -o runst --task 9

# Slurm: the job-array script on stdout, nothing written; without sbatch a clear failure
expect slurm_dry_run 0 '#SBATCH --array=1-8%4' -- "$AM_BIN" batch takes.csv -o runss --slurm --partition short --time 00:10:00 --mem 2G --max-running 4 --dry-run
out=$("$AM_BIN" batch takes.csv -o runss --slurm --partition short --dry-run)
if printf '%s' "$out" | grep -q '^#SBATCH --partition=short$' &&
   printf '%s' "$out" | grep -q -- "batch '$TMP/takes.csv' -o '$TMP/runss' --task \"\$SLURM_ARRAY_TASK_ID\"" &&
   printf '%s' "$out" | bash -n && [ ! -e runss ]; then
  am_pass slurm_script; else am_fail slurm_script "$out"; fi
expect slurm_malformed 2 'm4.csv:3: error' -- "$AM_BIN" batch m4.csv -o runss --slurm --dry-run
expect slurm_no_sbatch 2 'sbatch' -- env PATH=/nonexistent "$AM_BIN" batch takes.csv -o runss --slurm
expect slurm_options_need_slurm 2 'go with --slurm' -- "$AM_BIN" batch takes.csv -o runss --dry-run
# --report: each take's step writes its report.html, RUNS/report.html lists every take (status,
# exit, links to the take's report.html and log that resolve), a failed take shows its reason;
# a take made without --report is rerun with it (the stamp records the flag)
{ echo "take,command,args"
  echo "r1,solve,ex1/det.npz --rig $W/rig.json --creature $W/creature.json"
  echo "r2,solve,ex2/det.npz --rig $W/rig.json --creature $W/creature.json"
  echo "rbad,solve,missing/det.npz --rig $W/rig.json"
} > rep.csv
expect batch_report_run 2 '3 takes: 2 ok, 0 skipped, 1 failed' -- "$AM_BIN" batch rep.csv -o runsr -j 2 --report -q
if out=$(/usr/bin/python3 - runsr <<'PY' 2>&1
import os, re, sys
d = sys.argv[1]
html = open(os.path.join(d, "report.html")).read()
links = re.findall(r'href="([^"]+)"', html)
for t in ("r1", "r2"):
    assert os.path.getsize(os.path.join(d, t, "report.html")) > 0, t + " has no report.html"
    assert t + "/report.html" in links, t + "'s report is not linked"
for l in links:
    assert os.path.exists(os.path.join(d, l)), "link " + l + " resolves to nothing"
assert "rbad" in html and "missing/det.npz" in html, "the failed take or its reason is not on the page"
print("%d links resolve, the failed take's reason shown" % len(links))
PY
); then am_pass "batch_report_page: $out"; else am_fail batch_report_page "$out"; fi
expect batch_report_skips_done 2 '3 takes: 0 ok, 2 skipped, 1 failed' -- "$AM_BIN" batch rep.csv -o runsr -j 2 --report -q
"$AM_BIN" batch rep.csv -o runsn -j 2 -q 2>/dev/null
expect batch_report_reruns_takes_without 2 '3 takes: 2 ok, 0 skipped, 1 failed' -- "$AM_BIN" batch rep.csv -o runsn -j 2 --report -q
if [ -s runsn/r1/report.html ] && [ -s runsn/report.html ]; then am_pass batch_report_after_rerun; else am_fail batch_report_after_rerun "no report.html"; fi

am_done
