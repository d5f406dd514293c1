#!/usr/bin/env bash
# test_slurm.sh SPARSIM - a sweep on a real Slurm, as a job array of 4 shards.
#
# Starts a single-node Slurm of its own in a temporary folder (munged with a
# fresh key, slurmctld and slurmd on free ports, nothing of the machine's
# configuration used), writes the sweep's batch script with
# `sparsim sweep --emit-slurm`, submits it, merges the 4 shards' CSVs with
# `sparsim merge` and compares them row for row with the same sweep run
# locally (the wall-time columns aside).  The daemons are stopped and the
# folder removed on every ending.  Exit 77 (skipped, the reason on stderr)
# only where Slurm cannot start here: not root, Slurm or munge not
# installed, a daemon that does not come up.
set -u
sparsim=$(readlink -f "$1")
skip() { echo "SKIPPED: $*" >&2; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || skip "slurmd must run as root to start jobs, and this is not root"
for t in munged mungekey slurmctld slurmd sbatch squeue sinfo; do
    command -v "$t" >/dev/null || skip "$t is not installed (Debian: apt-get install slurm-wlm munge)"
done

d=$(mktemp -d /tmp/sparsim-slurm-XXXXXX)
chmod 755 "$d"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${pids[@]}"; do
        for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$p" 2>/dev/null
    done
    rm -rf "$d"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# munge: a key of its own, a socket in the folder
mkdir -p "$d/munge" "$d/state" "$d/spool" "$d/work"
chmod 700 "$d/munge"
mungekey --create --keyfile="$d/munge/key" >/dev/null 2>&1 || skip "mungekey cannot create a key"
munged -F --force --key-file="$d/munge/key" --socket="$d/munge/sock" --pid-file="$d/munge/pid" \
    --log-file="$d/munge/log" --seed-file="$d/munge/seed" 2>"$d/munge/err" &
pids+=($!)
for _ in $(seq 50); do [ -S "$d/munge/sock" ] && break; sleep 0.1; done
[ -S "$d/munge/sock" ] || skip "munged did not start: $(tail -c 300 "$d/munge/err" "$d/munge/log" 2>/dev/null | tr '\n' ' ')"

# slurm: this node as it is (slurmd -C), two free ports
node=$(slurmd -C 2>/dev/null | head -1)
name=$(echo "$node" | sed -n 's/^NodeName=\([^ ]*\).*/\1/p')
[ -n "$name" ] || skip "slurmd -C does not describe this node"
read -r p1 p2 < <(python3 -c 'import socket
s=[socket.socket() for _ in range(2)]
[x.bind(("", 0)) for x in s]
print(*[x.getsockname()[1] for x in s])')
cat > "$d/slurm.conf" <<EOF
ClusterName=sparsimtest
SlurmctldHost=$name
SlurmctldPort=$p1
SlurmdPort=$p2
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/munge/sock
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/slurmctld.log
SlurmdLogFile=$d/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SlurmctldTimeout=30
SlurmdTimeout=30
$node State=UNKNOWN
PartitionName=test Nodes=$name Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$d/slurm.conf"
slurmctld -D -i -f "$SLURM_CONF" >"$d/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >"$d/slurmd.out" 2>&1 &
pids+=($!)
up=
for _ in $(seq 150); do
    state=$(timeout 10 sinfo -h -n "$name" -o %T 2>/dev/null)
    case "$state" in idle*|mixed*|allocated*) up=1; break ;; esac
    kill -0 "${pids[1]}" 2>/dev/null && kill -0 "${pids[2]}" 2>/dev/null || break # a daemon has ended
    sleep 0.2
done
[ -n "$up" ] || skip "Slurm did not come up (node state '${state:-none}'): $(tail -n 3 "$d/slurmctld.log" "$d/slurmd.log" 2>/dev/null | tr '\n' ' ' | tail -c 400)"

# the sweep: small (well under a minute of simulation in all)
sweep=(sweep --algo ring,topka,gtopk --ranks 2,4,8 --n 4K --iters 2)
cd "$d/work"
"$sparsim" "${sweep[@]}" --out local.csv --jobs 2 >/dev/null || fail "the local sweep failed"
"$sparsim" "${sweep[@]}" --out all.csv --emit-slurm job.sh --slurm-shards 4 >/dev/null || fail "--emit-slurm failed"
job=$(sbatch --parsable job.sh 2>"$d/sbatch.err") || fail "sbatch refused the script: $(cat "$d/sbatch.err")"
job=${job%%;*}
for _ in $(seq 600); do
    [ -z "$(timeout 20 squeue -h -j "$job" 2>/dev/null)" ] && break
    sleep 0.5
done
[ -z "$(timeout 20 squeue -h -j "$job" 2>/dev/null)" ] || fail "the job array $job did not end within 5 minutes"
for i in 1 2 3 4; do
    [ -s "all.shard-$i-of-4.csv" ] || fail "shard $i wrote no CSV: $(cat all.shard-$i-of-4.log 2>/dev/null | tail -c 400)"
done
"$sparsim" merge --out all.csv all.shard-*-of-4.csv >/dev/null || fail "merge failed"
python3 - local.csv all.csv <<'EOF' || exit 1
import csv, sys
def rows(p):
    with open(p, newline="") as f:
        r = list(csv.reader(f))
    drop = {i for i, c in enumerate(r[0]) if "wall" in c or c == "peak_rss_bytes"}  # measured, not simulated
    at = r[0].index("run_index")
    body = sorted(r[1:], key=lambda x: int(x[at]))  # the local sweep appends rows as runs finish
    return [[v for i, v in enumerate(x) if i not in drop] for x in [r[0]] + body]
a, b = rows(sys.argv[1]), rows(sys.argv[2])
if len(a) != 10 or a != b:
    print("FAIL: the merged shards differ from the local sweep (%d and %d records)" % (len(a), len(b)), file=sys.stderr)
    for x, y in zip(a, b):
        if x != y:
            print("  local:  %s\n  merged: %s" % (",".join(x), ",".join(y)), file=sys.stderr)
            break
    sys.exit(1)
print("the job array's 4 shards, merged, equal the local sweep row for row (9 runs)")
EOF
