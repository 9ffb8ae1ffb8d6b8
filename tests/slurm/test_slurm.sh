#!/usr/bin/env bash
# anymove batch --slurm on a real Slurm: a single-node cluster on this machine (munged, slurmctld
# and slurmd on localhost, as root, private config, state and ports under $TMP, no cgroups:
# proctrack/linuxproc, task/none), 8 exam takes submitted as a job array, waited for, collected;
# the outputs byte-identical to a local -j 2 run. Needs root and Debian's slurmctld, slurmd,
# slurm-client and munge (scripts/deps.sh).
. "$(dirname "$0")/../cli/lib.sh"
if [ "$(id -u)" -ne 0 ]; then
  am_fail slurm_root "starts slurmctld/slurmd as root; run the suite as root (it installs Slurm with scripts/deps.sh)"
  am_done; exit
fi
for t in munged slurmctld slurmd sbatch squeue sinfo; do
  command -v "$t" >/dev/null || { am_fail slurm_tools "$t missing: scripts/deps.sh installs slurmctld slurmd slurm-client munge"; am_done; exit; }
done
W=$AM_SOURCE/examples/creatures/wolf
BIN=$(realpath "$AM_BIN")
S=$TMP/slurm
mkdir -p "$S/state" "$S/spool" "$S/log"
P=$((20000 + $$ % 20000))
node=am$P
cat > "$S/slurm.conf" <<CONF
ClusterName=am$P
SlurmctldHost=localhost
SlurmctldPort=$P
SlurmdPort=$((P + 1))
AuthType=auth/munge
AuthInfo=socket=$S/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
NodeName=$node NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=2 RealMemory=2000 State=UNKNOWN
PartitionName=exam Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$S/slurm.conf
stop_cluster() {
  for f in slurmd slurmctld munged; do
    [ -f "$S/$f.pid" ] && kill "$(cat "$S/$f.pid")" 2>/dev/null
  done
  sleep 1
  rm -rf "$TMP"
}
trap stop_cluster EXIT
munged --force --socket="$S/munge.sock" --pid-file="$S/munged.pid" --log-file="$S/log/munge.log" \
  --seed-file="$S/munge.seed" --key-file=/etc/munge/munge.key || { am_fail slurm_munged "munged did not start: $(tail -3 "$S/log/munge.log")"; am_done; exit; }
slurmctld -f "$SLURM_CONF" && slurmd -f "$SLURM_CONF" -N "$node" ||
  { am_fail slurm_daemons "$(tail -5 "$S"/log/*.log)"; am_done; exit; }
for _ in $(seq 1 60); do sinfo -h -o %t 2>/dev/null | grep -q idle && break; sleep 0.5; done
if sinfo -h -o %t | grep -q idle; then am_pass slurm_cluster_up; else
  am_fail slurm_cluster_up "node not idle: $(sinfo 2>&1)" "$(tail -5 "$S"/log/slurmd.log)"; am_done; exit; fi

cd "$TMP" || exit 1
echo "take,command,args" > takes.csv
for i in 1 2 3 4 5 6 7 8; do
  "$BIN" exam --rig "$W/rig.json" --creature "$W/creature.json" --seed "$i" --frames 24 -o "ex$i" -q || exit 1
  echo "take$i,solve,ex$i/det.npz --rig $W/rig.json --creature $W/creature.json" >> takes.csv
done
expect slurm_local_j2 0 '8 takes: 8 ok' -- "$BIN" batch takes.csv -o local -j 2 -q
out=$("$BIN" batch takes.csv -o cluster --slurm --partition exam --time 00:10:00 --mem 500M 2>&1)
job=$(printf '%s\n' "$out" | grep -E '^[0-9]+(;.*)?$' | head -1 | cut -d';' -f1)
if [ -n "$job" ] && [ -f cluster/slurm/batch.sh ]; then am_pass slurm_submitted; else
  am_fail slurm_submitted "$out"; am_done; exit; fi
for _ in $(seq 1 600); do
  [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && break
  sleep 0.5
done
if [ -z "$(squeue -h -j "$job" 2>/dev/null)" ]; then am_pass slurm_array_finished; else
  am_fail slurm_array_finished "still queued after 300 s: $(squeue 2>&1)"; fi
n_out=$(ls cluster/slurm/"${job}"_*.out 2>/dev/null | wc -l)
if [ "$n_out" = 8 ]; then am_pass slurm_eight_tasks; else am_fail slurm_eight_tasks "$n_out task outputs: $(ls cluster/slurm)"; fi
expect slurm_collect 0 '8 takes: 8 ok, 0 skipped, 0 failed, 0 missing' -- "$BIN" batch --collect cluster
same=1
for i in 1 2 3 4 5 6 7 8; do
  for f in motion.json animation.glb; do cmp -s "local/take$i/$f" "cluster/take$i/$f" || same=0; done
done
if [ $same = 1 ]; then am_pass slurm_outputs_identical_to_local; else am_fail slurm_outputs_identical_to_local "differ"; fi
# resubmitting finds everything done: every task skips its take
out=$("$BIN" batch takes.csv -o cluster --slurm --partition exam 2>&1)
job=$(printf '%s\n' "$out" | grep -E '^[0-9]+(;.*)?$' | head -1 | cut -d';' -f1)
for _ in $(seq 1 600); do [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && break; sleep 0.5; done
expect slurm_resubmit_skips 0 '8 takes: 0 ok, 8 skipped' -- "$BIN" batch --collect cluster
am_done
