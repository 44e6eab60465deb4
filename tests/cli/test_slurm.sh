#!/bin/sh
# test_slurm.sh - scale-out on a real Slurm: a one-node cluster on localhost
# (its own slurm.conf, ports and spool; auth/none, proctrack/linuxproc,
# task/none, no cgroups) runs a job array whose tasks each reduce and solve
# one shard of an input (`--shard $SLURM_ARRAY_TASK_ID/4`, CPU backend);
# merge must then give exactly the single run's text, JSON and output bytes.
#
# Needs root and Slurm's daemons (Debian: slurmctld slurmd slurm-client,
# which .ci/run installs). Without them the test reports itself skipped and
# why; with GPUBATCH_REQUIRE_SLURM=1 (CI) a skip is a failure.
. "$(dirname "$0")/lib.sh"
TASKS=4

# Reports a skip (or a failure when Slurm is required) and ends the test.
skip() {
    if [ "${GPUBATCH_REQUIRE_SLURM:-0}" = 1 ]; then
        fail "Slurm required but unusable: $*"
    else
        echo "skip test_slurm: $*"
    fi
    summary
    exit $?
}

[ "$(id -u)" = 0 ] || skip "not root (the test starts slurmctld and slurmd)"
for prog in slurmctld slurmd sbatch sinfo; do
    command -v $prog >/dev/null 2>&1 || skip "$prog not installed (Debian: apt-get install slurmctld slurmd slurm-client)"
done
plugins=$(dirname "$(find /usr/lib -name auth_none.so -path '*slurm*' 2>/dev/null | head -n 1)")
[ -f "$plugins/auth_none.so" ] || skip "this Slurm has no auth/none plugin"

S="$T/slurm"
mkdir -p "$S/state" "$S/spool" "$S/work"
node=$(hostname -s)
port=$((20000 + ($$ % 4000) * 2))
pids=""
# Stops the daemons this test started, then removes the scratch directory.
cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null; done
    for p in $pids; do wait "$p" 2>/dev/null; done
    rm -rf "$T"
}
trap cleanup EXIT
cat >"$S/slurm.conf" <<CONF
ClusterName=gpubatchtest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/none
CredType=cred/none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/slurmctld.log
SlurmdLogFile=$S/slurmd.log
SlurmUser=root
SlurmdUser=root
ReturnToService=2
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=gpubatch Nodes=$node Default=YES MaxTime=10 State=UP
CONF
export SLURM_CONF="$S/slurm.conf"
slurmctld -D -f "$SLURM_CONF" >"$S/slurmctld.out" 2>&1 &
pids="$pids $!"
slurmd -D -f "$SLURM_CONF" -N "$node" >"$S/slurmd.out" 2>&1 &
pids="$pids $!"
up=0
for i in $(seq 60); do
    if [ "$(sinfo -h -N -o %T 2>/dev/null)" = idle ]; then
        up=1
        break
    fi
    sleep 0.5
done
[ $up = 1 ] || skip "the cluster did not come up: $(tail -n 3 "$S/slurmctld.log" "$S/slurmd.log" 2>/dev/null | tr '\n' ' ')"

# The input: a blocked-gzip float64 array (19 tiles) and quadratic rows.
W="$S/work"
"$GB" gen --shape 300000 --dtype float64 --dist normal --seed 42 -o "$W/x.npy.gz" 2>/dev/null
"$GB" gen --quadratic 20000 --seed 42 -o "$W/c.npy.gz" 2>/dev/null
cat >"$W/job.sh" <<JOB
#!/bin/sh
set -e
i=\$SLURM_ARRAY_TASK_ID
"$GB" reduce --backend cpu -q --op sum,mean,min,argmax,sumsq,count --shard \$i/$TASKS -o "$W/state-\$i" "$W/x.npy.gz"
"$GB" quadratic --backend cpu -q --shard \$i/$TASKS -o "$W/part-\$i.gz" "$W/c.npy.gz"
JOB
if timeout 120 sbatch --array=0-$((TASKS - 1)) --wait -o "$W/task-%a.log" "$W/job.sh" >"$W/sbatch.out" 2>&1; then
    ok
else
    fail "sbatch: $(cat "$W/sbatch.out" "$W"/task-*.log 2>/dev/null)"
fi
n=$(ls "$W"/state-* 2>/dev/null | wc -l)
check_eq "state files written by the array tasks" $TASKS $n

"$GB" reduce --backend cpu -q --op sum,mean,min,argmax,sumsq,count "$W/x.npy.gz" >"$W/single.txt"
"$GB" merge "$W"/state-* >"$W/merged.txt"
check_files_same "merged reduce equals the single run" "$W/single.txt" "$W/merged.txt"
"$GB" reduce --backend cpu -q --json --op sum,mean,min,argmax,sumsq,count "$W/x.npy.gz" >"$W/single.json"
"$GB" merge --json "$W"/state-* >"$W/merged.json"
check_files_same "merged reduce --json equals the single run" "$W/single.json" "$W/merged.json"
"$GB" quadratic --backend cpu -q -o "$W/roots.npy.gz" "$W/c.npy.gz"
"$GB" merge -o "$W/merged.npy.gz" "$W"/part-*
check_files_same "merged quadratic parts equal the single run" "$W/roots.npy.gz" "$W/merged.npy.gz"
summary
