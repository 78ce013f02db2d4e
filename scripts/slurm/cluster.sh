#!/usr/bin/env bash
# A two-node Slurm cluster on this machine, for PBH's tests: Debian's slurm-wlm, munge, slurmdbd and MariaDB, every
# file (munge key and socket, slurm.conf, state, spool, database, logs, pid files) under one folder, nothing in /etc
# touched, nothing left running after `down`.
#
#   scripts/slurm/cluster.sh up DIR          start the cluster; wait until both nodes are idle; prints the
#                                            SLURM_CONF line and ACCOUNTING=slurmdbd|none (why)
#   scripts/slurm/cluster.sh exec DIR CMD..  run CMD on the head (login) namespace, where sbatch, squeue, scancel
#                                            and sacct reach the daemons (SLURM_CONF set)
#   scripts/slurm/cluster.sh down DIR        cancel the jobs, stop every daemon and remove the namespaces
#
# Layout: three network + UTS namespaces, each held by a `sleep` whose pid is in DIR/run/ns-NAME.pid (no
# /run/netns entries, so every trace is under DIR and dies with the holders):
#   pbh-head   10.77.0.1 on bridge pbh0: slurmctld, slurmdbd, MariaDB (on this namespace's own 127.0.0.1) and the
#              Slurm commands (`exec`)
#   pbh-node1  10.77.0.11 on eth0 (a veth into pbh0): slurmd, so its jobs' hostname is pbh-node1
#   pbh-node2  10.77.0.12, likewise
# The subnet exists only inside these namespaces and none has a default route, so no packet leaves them; the host's
# own network is not changed and no port is opened on it. Run Slurm commands through `exec` only: from the host
# namespace 10.77.0.1 would go to the host's default route. munged runs in the host namespace: its socket is a path,
# which every namespace reaches.
#
# Needs root (namespaces; slurmd runs jobs as their submitter) and the packages slurm-wlm, munge, slurmdbd,
# mariadb-server and iproute2 (`npm test` installs them through scripts/ensure.mjs). Without slurmdbd or MariaDB the
# cluster runs without accounting (sacct answers nothing) and `up` says so on its ACCOUNTING line.
set -euo pipefail

usage() { echo "usage: $0 up|down DIR | exec DIR CMD..." >&2; exit 2; }
[[ $# -ge 2 ]] || usage
action=$1
dir=$(realpath -m "$2")
shift 2

NODES=(pbh-node1 pbh-node2)
HEAD=pbh-head
SUBNET=10.77.0
HEAD_ADDR=$SUBNET.1
node_addr() { echo "$SUBNET.$((11 + $1))"; }

ns_pid() { [[ -s $dir/run/ns-$1.pid ]] && cat "$dir/run/ns-$1.pid"; }
# Runs a command inside namespace $1 (its network and hostname), with this cluster's slurm.conf.
in_ns() {
  local name=$1 pid
  shift
  pid=$(ns_pid "$name") || { echo "slurm test cluster: namespace $name is not running (no $dir/run/ns-$name.pid)" >&2; return 1; }
  SLURM_CONF="$dir/slurm.conf" nsenter --target "$pid" --net --uts -- "$@"
}

if [[ $action == exec ]]; then
  [[ $# -ge 1 ]] || usage
  pid=$(ns_pid "$HEAD") || { echo "slurm test cluster: not running in $dir (start it with: $0 up $dir)" >&2; exit 1; }
  SLURM_CONF="$dir/slurm.conf" exec nsenter --target "$pid" --net --uts -- "$@"
fi

# Alive and not a zombie: an exited daemon stays a zombie until this machine's init reaps it, which can take seconds.
alive() { [[ -r /proc/$1/stat ]] && [[ $(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) != Z ]]; }

stop_pid() {
  local pid=$1
  alive "$pid" || return 0
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 100); do alive "$pid" || return 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
}

stop_pidfile() {
  [[ -s $1 ]] || return 0
  stop_pid "$(cat "$1")"
  rm -f "$1"
}

# Jobs first: a job's slurmstepd outlives slurmd, so its processes are cancelled through Slurm while it still runs.
cancel_jobs() {
  [[ -s $dir/run/slurmctld.pid && -f $dir/slurm.conf ]] || return 0
  kill -0 "$(cat "$dir/run/slurmctld.pid")" 2>/dev/null || return 0
  local jobs
  jobs=$(in_ns "$HEAD" squeue -h -o '%A' 2>/dev/null | sort -u | tr '\n' ' ') || return 0
  [[ -n ${jobs// /} ]] || return 0
  # shellcheck disable=SC2086
  in_ns "$HEAD" scancel $jobs 2>/dev/null || true
  for _ in $(seq 100); do
    [[ -z $(in_ns "$HEAD" squeue -h -o '%A' 2>/dev/null) ]] && return 0
    sleep 0.2
  done
}

# A namespace lives while any process is in it: its holder, and whatever a killed daemon left (a slurmstepd, a job).
# Every process in these namespaces was started by this cluster, so all of them are ended, then the holder.
remove_ns() {
  local name=$1 holder ns p
  holder=$(ns_pid "$name") || return 0
  ns=$(readlink "/proc/$holder/ns/net" 2>/dev/null) || { rm -f "$dir/run/ns-$name.pid"; return 0; }
  [[ $ns != "$(readlink /proc/self/ns/net)" ]] || { rm -f "$dir/run/ns-$name.pid"; return 0; }
  for p in /proc/[0-9]*; do
    p=${p#/proc/}
    [[ $p != "$holder" && $(readlink "/proc/$p/ns/net" 2>/dev/null) == "$ns" ]] && kill -9 "$p" 2>/dev/null || true
  done
  stop_pid "$holder"
  rm -f "$dir/run/ns-$name.pid"
}

down() {
  cancel_jobs
  for node in "${NODES[@]}"; do stop_pidfile "$dir/run/slurmd-$node.pid"; done
  stop_pidfile "$dir/run/slurmctld.pid"
  stop_pidfile "$dir/run/slurmdbd.pid"
  stop_pidfile "$dir/run/mariadb.pid"
  stop_pidfile "$dir/run/munged.pid"
  # The veths and the bridge are in these namespaces and go with them.
  for name in "${NODES[@]}" "$HEAD"; do remove_ns "$name"; done
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
[[ $action == up && $# -eq 0 ]] || usage

[[ $(id -u) -eq 0 ]] || { echo "slurm test cluster: needs root (namespaces; slurmd starts jobs as their user); run as root or use a real cluster." >&2; exit 1; }
for cmd in munged mungekey slurmctld slurmd sbatch squeue scontrol sinfo unshare nsenter ip; do
  command -v "$cmd" >/dev/null || { echo "slurm test cluster: $cmd is not installed; run: apt-get install -y slurm-wlm munge iproute2" >&2; exit 1; }
done

cpus=$(nproc)
mkdir -p "$dir"/{munge,run,state,log,mysql,tmp} "${NODES[@]/#/$dir/spool/}"
chmod 700 "$dir" "$dir/munge"

# A namespace is a `sleep` started by unshare in new network and UTS namespaces (unshare execs it, so $! is in them).
new_ns() {
  local name=$1 pid
  unshare --net --uts sleep infinity </dev/null >/dev/null 2>"$dir/log/unshare-$name.log" &
  pid=$!
  echo "$pid" >"$dir/run/ns-$name.pid"
  for _ in $(seq 100); do
    alive "$pid" || break
    [[ $(readlink "/proc/$pid/ns/net" 2>/dev/null) != "$(readlink /proc/self/ns/net)" ]] && break
    sleep 0.05
  done
  alive "$pid" && [[ $(readlink "/proc/$pid/ns/net" 2>/dev/null) != "$(readlink /proc/self/ns/net)" ]] \
    || fail "unshare --net --uts could not make namespace $name: $(cat "$dir/log/unshare-$name.log") (a container without CAP_SYS_ADMIN cannot; run on a VM or a privileged container)"
  in_ns "$name" hostname "$name" || fail "could not set the hostname of namespace $name"
  in_ns "$name" ip link set lo up || fail "could not bring up lo in namespace $name"
}

new_ns "$HEAD"
in_ns "$HEAD" ip link add pbh0 type bridge || fail "could not create bridge pbh0 in $HEAD"
in_ns "$HEAD" ip addr add "$HEAD_ADDR/24" dev pbh0
in_ns "$HEAD" ip link set pbh0 up
for i in "${!NODES[@]}"; do
  node=${NODES[$i]}
  new_ns "$node"
  in_ns "$HEAD" ip link add "$node" type veth peer name eth0 netns "$(ns_pid "$node")" || fail "could not create the veth pair of $node"
  in_ns "$HEAD" ip link set "$node" master pbh0 up
  in_ns "$node" ip addr add "$(node_addr "$i")/24" dev eth0
  in_ns "$node" ip link set eth0 up
done

# munge: a fresh key and a private socket that slurm.conf's AuthInfo (and AccountingStoragePass) point at.
mungekey --create --force --keyfile="$dir/munge/munge.key" >/dev/null
chmod 600 "$dir/munge/munge.key"
munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
  --pid-file="$dir/run/munged.pid" --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed" \
  || fail "munged did not start"

# Accounting: MariaDB and slurmdbd in the head namespace, so sacct answers for jobs squeue has forgotten. MariaDB
# listens on the head's own 127.0.0.1:3306, which nothing outside the namespace can reach or collide with.
accounting="none (slurmdbd or mariadbd is not installed: apt-get install -y slurmdbd mariadb-server)"
if command -v slurmdbd >/dev/null && command -v mariadbd >/dev/null && command -v mariadb-install-db >/dev/null; then
  mariadb-install-db --no-defaults --user=root --datadir="$dir/mysql" --auth-root-authentication-method=socket \
    --skip-test-db >"$dir/log/mariadb-install.log" 2>&1 || fail "mariadb-install-db failed (see $dir/log/mariadb-install.log)"
  # --no-defaults: the machine's /etc/mysql settings (its socket, datadir, a running server's port) do not apply.
  in_ns "$HEAD" setsid mariadbd --no-defaults --user=root --datadir="$dir/mysql" --socket="$dir/run/mariadb.sock" \
    --pid-file="$dir/run/mariadb.pid" --log-error="$dir/log/mariadb.log" --tmpdir="$dir/tmp" --bind-address=127.0.0.1 \
    --port=3306 --skip-name-resolve --innodb-buffer-pool-size=32M --innodb-log-file-size=16M </dev/null >/dev/null 2>&1 &
  for _ in $(seq 150); do [[ -S $dir/run/mariadb.sock ]] && break; sleep 0.2; done
  [[ -S $dir/run/mariadb.sock ]] || fail "mariadbd did not open its socket within 30 s"
  mariadb --no-defaults --socket="$dir/run/mariadb.sock" -u root -e \
    "CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY 'pbh-test'; GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';" \
    || fail "could not create MariaDB's slurm user"
  # slurmdbd reads slurmdbd.conf beside SLURM_CONF's slurm.conf and refuses it unless it is private.
  cat >"$dir/slurmdbd.conf" <<CONF
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
DbdHost=$HEAD
DbdAddr=$HEAD_ADDR
DbdPort=6819
SlurmUser=root
LogFile=$dir/log/slurmdbd.log
PidFile=$dir/run/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=3306
StorageUser=slurm
StoragePass=pbh-test
StorageLoc=slurm_acct_db
CONF
  chmod 600 "$dir/slurmdbd.conf"
  accounting=slurmdbd
fi

# MinJobAge: with accounting, slurmctld forgets a finished job after 2 s, so PBH's sweep status reads it from sacct;
# without, it keeps it 10 minutes, for squeue. jobcomp/filetxt keeps a completion record for people either way.
if [[ $accounting == slurmdbd ]]; then
  storage="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=$HEAD_ADDR
AccountingStoragePort=6819
AccountingStoragePass=$dir/munge/munge.socket"
  min_job_age=2
else
  storage="AccountingStorageType=accounting_storage/none"
  min_job_age=600
fi
{
  cat <<CONF
ClusterName=pbhtest
SlurmctldHost=$HEAD($HEAD_ADDR)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
SlurmUser=root
SlurmdUser=root
SlurmctldPort=6817
SlurmdPort=6818
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
$storage
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/log/jobcomp.txt
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
SchedulerType=sched/backfill
MinJobAge=$min_job_age
KillWait=5
InactiveLimit=0
CONF
  for i in "${!NODES[@]}"; do echo "NodeName=${NODES[$i]} NodeAddr=$(node_addr "$i") CPUs=$cpus RealMemory=512 State=UNKNOWN"; done
  echo "PartitionName=debug Nodes=$(IFS=,; echo "${NODES[*]}") Default=YES MaxTime=INFINITE State=UP"
} >"$dir/slurm.conf"

if [[ $accounting == slurmdbd ]]; then
  in_ns "$HEAD" slurmdbd || fail "slurmdbd did not start"
  # slurmctld registers the cluster with slurmdbd when it connects; it must be listening by then.
  for _ in $(seq 100); do in_ns "$HEAD" sacctmgr -n -P list cluster >/dev/null 2>&1 && break; sleep 0.3; done
  in_ns "$HEAD" sacctmgr -n -P list cluster >/dev/null 2>&1 || fail "slurmdbd did not answer within 30 s"
fi
# -i: a fresh state (no jobs of an earlier cluster in this folder are recovered).
in_ns "$HEAD" slurmctld -i || fail "slurmctld did not start"
for node in "${NODES[@]}"; do in_ns "$node" slurmd || fail "slurmd on $node did not start"; done

nodes_csv=$(IFS=,; echo "${NODES[*]}")
for _ in $(seq 100); do
  states=$(in_ns "$HEAD" sinfo -h -N -n "$nodes_csv" -o '%N=%T' 2>/dev/null | sort -u | tr '\n' ' ' || true)
  if [[ $states == "${NODES[0]}=idle ${NODES[1]}=idle " ]]; then
    echo "SLURM_CONF=$dir/slurm.conf"
    echo "ACCOUNTING=$accounting"
    exit 0
  fi
  sleep 0.3
done
fail "the nodes did not become idle within 30 s (last states: ${states:-none})"
