#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for PBH's tests: Debian's slurm-wlm and munge, every file (munge key and
# socket, slurm.conf, state, spool, logs, pid files) under one folder, nothing in /etc touched, nothing left running
# after `down`.
#
#   scripts/slurm/cluster.sh up DIR     start munged, slurmctld and slurmd; wait until the node is idle; prints
#                                       the SLURM_CONF line to export for sbatch/squeue/scancel
#   scripts/slurm/cluster.sh down DIR   stop the three daemons started by `up DIR` (by their pid files)
#
# Needs root (slurmd runs jobs as their submitter and must be able to switch users) and the packages slurm-wlm and
# munge (`apt-get install -y slurm-wlm munge`; `npm test` installs them through scripts/ensure.mjs).
# Ports: PBH_SLURM_PORT (default 6817) for slurmctld, the next one for slurmd.
set -euo pipefail

usage() { echo "usage: $0 up|down DIR" >&2; exit 2; }
[[ $# -eq 2 ]] || usage
action=$1
dir=$(realpath -m "$2")

stop_pidfile() {
  local file=$1 pid
  [[ -s $file ]] || return 0
  pid=$(cat "$file")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$file"
}

# Jobs first: a job's slurmstepd outlives slurmd, so its processes are cancelled through Slurm while it still runs.
cancel_jobs() {
  [[ -s $dir/run/slurmctld.pid && -f $dir/slurm.conf ]] || return 0
  kill -0 "$(cat "$dir/run/slurmctld.pid")" 2>/dev/null || return 0
  export SLURM_CONF="$dir/slurm.conf"
  local jobs
  jobs=$(squeue -h -o '%A' 2>/dev/null | sort -u | tr '\n' ' ')
  [[ -n ${jobs// /} ]] || return 0
  # shellcheck disable=SC2086
  scancel $jobs 2>/dev/null || true
  for _ in $(seq 100); do
    [[ -z $(squeue -h -o '%A' 2>/dev/null) ]] && return 0
    sleep 0.2
  done
}

down() {
  cancel_jobs
  stop_pidfile "$dir/run/slurmd.pid"
  stop_pidfile "$dir/run/slurmctld.pid"
  stop_pidfile "$dir/run/munged.pid"
}

fail() {
  echo "slurm test cluster: $*" >&2
  for log in "$dir"/log/*.log; do
    [[ -s $log ]] && { echo "--- $log (last lines)" >&2; tail -n 20 "$log" >&2; }
  done
  down
  exit 1
}

if [[ $action == down ]]; then down; exit 0; fi
[[ $action == up ]] || usage

[[ $(id -u) -eq 0 ]] || { echo "slurm test cluster: needs root (slurmd starts jobs as their user); run as root or use a real cluster." >&2; exit 1; }
for cmd in munged mungekey slurmctld slurmd sbatch squeue scontrol sinfo; do
  command -v "$cmd" >/dev/null || { echo "slurm test cluster: $cmd is not installed; run: apt-get install -y slurm-wlm munge" >&2; exit 1; }
done

host=$(hostname -s)
cpus=$(nproc)
ctld_port=${PBH_SLURM_PORT:-6817}
slurmd_port=$((ctld_port + 1))
mkdir -p "$dir"/{munge,run,state,spool,log}
chmod 700 "$dir" "$dir/munge"

# munge: a fresh key and a private socket that slurm.conf's AuthInfo points at.
mungekey --create --force --keyfile="$dir/munge/munge.key" >/dev/null
chmod 600 "$dir/munge/munge.key"
munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
  --pid-file="$dir/run/munged.pid" --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed" \
  || fail "munged did not start"

# Accounting: no slurmdbd here, so sacct has nothing to report; PBH's sweep status then reads squeue (which keeps
# finished jobs for MinJobAge seconds) and the shards. jobcomp/filetxt keeps a completion record for people.
# Every address is 127.0.0.1, so the cluster starts where this host's name does not resolve.
cat >"$dir/slurm.conf" <<CONF
ClusterName=pbhtest
SlurmctldHost=$host(127.0.0.1)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/log/jobcomp.txt
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
SchedulerType=sched/backfill
MinJobAge=600
KillWait=5
InactiveLimit=0
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=512 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$dir/slurm.conf"

# -i: a fresh state (no jobs of an earlier cluster in this folder are recovered).
slurmctld -i || fail "slurmctld did not start"
slurmd || fail "slurmd did not start"

for _ in $(seq 100); do
  state=$(sinfo -h -n "$host" -o '%T' 2>/dev/null || true)
  [[ $state == idle ]] && { echo "SLURM_CONF=$dir/slurm.conf"; exit 0; }
  sleep 0.3
done
fail "node $host did not become idle within 30 s (last state: ${state:-none})"
