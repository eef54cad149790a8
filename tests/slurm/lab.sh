#!/bin/bash
# SPDX-License-Identifier: MIT
# tests/slurm/lab.sh -- a throwaway Slurm 22.05 cluster on loopback for gpualert tests.
#
#   lab.sh start | stop | status | env
#
# Everything lives under $GPUALERT_LAB (default /tmp/gpualert-lab); see README.md
# in this directory for the environment variables.  Needs root.  Never touches
# /etc/slurm.  Several labs can run at once if they use different
# GPUALERT_LAB and GPUALERT_LAB_PORT values.
set -eu

LAB=${GPUALERT_LAB:-/tmp/gpualert-lab}
case "$LAB" in /*) ;; *) LAB=$(realpath -m "$LAB") ;; esac
LAB=${LAB%/}
# stop/status/env act on the lab as it was started, whatever the caller's env says
if [ "${1:-}" != start ] && [ -r "$LAB/etc/lab.env" ]; then . "$LAB/etc/lab.env"; fi
PORT=${GPUALERT_LAB_PORT:-17817}
NODES=${GPUALERT_LAB_NODES:-1}
CGROUP=${GPUALERT_LAB_CGROUP:-1}
LABUSER=${GPUALERT_LAB_USER:-labuser}
READY_TIMEOUT=${GPUALERT_LAB_READY_TIMEOUT:-60}
MUNGE_MODE=${GPUALERT_LAB_MUNGE:-own}
MUNGE_KEY=${GPUALERT_LAB_MUNGE_KEY:-/etc/munge/munge.key}   # own mode only
SLURMD_TIMEOUT=${GPUALERT_LAB_SLURMD_TIMEOUT:-300}
NPROC=$(nproc)
CPUS=${GPUALERT_LAB_CPUS:-$NPROC}
MEMTOTAL_MB=$(( $(awk '/^MemTotal:/ {print $2}' /proc/meminfo) / 1024 ))
DEFMEM=$(( MEMTOTAL_MB * 3 / 4 )); [ "$DEFMEM" -gt 4000 ] && DEFMEM=4000
MEM=${GPUALERT_LAB_MEM:-$DEFMEM}

SBIN=/usr/sbin
MUNGE_PIDFILE=/run/munge/munged.pid
# Shared between labs: which labs use the system munged, and whether a lab started it.
REG=/run/gpualert-lab
MUNGE_MARK=$REG/munged-started-by-lab
LOCK=$REG/lock

die() { echo "lab.sh: error: $*" >&2; exit 1; }
say() { echo "lab.sh: $*"; }
now() { date +%s%N; }                      # nanoseconds
since() { local c=$(( ($(now) - $1) / 10000000 )); printf '%d.%02d' $((c / 100)) $((c % 100)); }
older() { [ $(( $(now) - $1 )) -gt $(( $2 * 1000000000 )) ]; }   # older START SECONDS

CONF=$LAB/etc/slurm.conf
CTLD_PIDFILE=$LAB/run/slurmctld.pid
HOST=$(hostname -s)
node_name() { echo "ga${PORT}n$1"; }

valid_num() { case "$2" in ''|*[!0-9]*) die "$1 must be a number, got '$2'";; esac; }
valid_num GPUALERT_LAB_PORT "$PORT"
valid_num GPUALERT_LAB_CPUS "$CPUS"
valid_num GPUALERT_LAB_MEM "$MEM"
case "$NODES" in 1|2) ;; *) die "GPUALERT_LAB_NODES must be 1 or 2, got '$NODES'";; esac
case "$CGROUP" in 0|1) ;; *) die "GPUALERT_LAB_CGROUP must be 0 or 1, got '$CGROUP'";; esac
case "$MUNGE_MODE" in own|system) ;; *) die "GPUALERT_LAB_MUNGE must be own or system, got '$MUNGE_MODE'";; esac
# own: a munged for this lab only (system key, socket in the lab), so nothing
# another lab or person does to the system munged can break this one.
OWN_MUNGE=$LAB/munge     # not under run/: munged wants root- or munge-owned parents
OWN_SOCK=$OWN_MUNGE/munge.socket

# alive: exists and is not a zombie (PID 1 may be slow to reap daemons)
alive() {
    local st
    st=$(sed -n 's/^[0-9]* (.*) \([A-Za-z]\) .*/\1/p' "/proc/$1/stat" 2>/dev/null) || return 1
    [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}
pid_alive() { [ -s "$1" ] && alive "$(cat "$1")"; }

# -------------------------------------------------------------------- prereqs
check_prereqs() {
    local missing="" b
    [ "$(id -u)" = 0 ] || die "must run as root (daemons, useradd, cgroups); running as uid $(id -u)"
    for b in $SBIN/munged /usr/bin/munge /usr/bin/unmunge $SBIN/slurmctld $SBIN/slurmd \
             $SBIN/slurmstepd /usr/bin/srun /usr/bin/sbatch /usr/bin/scontrol \
             /usr/bin/squeue /usr/bin/scancel /usr/bin/sinfo; do
        [ -x "$b" ] || missing="$missing $b"
    done
    for b in runuser useradd flock; do
        command -v "$b" >/dev/null || missing="$missing $b"
    done
    [ -n "$missing" ] && die "missing binaries:$missing
  (Debian: apt-get install -y slurmctld slurmd slurm-client munge util-linux passwd)"
    getent passwd slurm >/dev/null || die "user 'slurm' does not exist (installed by the slurmd/slurmctld packages)"
    getent passwd munge >/dev/null || die "user 'munge' does not exist (installed by the munge package)"
    if [ "$CGROUP" = 1 ]; then
        for b in memory freezer cpuset devices; do
            [ -e /sys/fs/cgroup/$b/cgroup.procs ] || missing="$missing /sys/fs/cgroup/$b"
        done
        [ -n "$missing" ] && die "GPUALERT_LAB_CGROUP=1 needs cgroup v1 controllers, missing:$missing
  (use GPUALERT_LAB_CGROUP=0 for proctrack/linuxproc without cgroups)"
    fi
    return 0
}

port_busy() {
    if command -v ss >/dev/null; then ss -Htln "sport = :$1" 2>/dev/null | grep -q .
    else (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; fi
}

# -------------------------------------------------------------------- configs
write_configs() {
    local i n over=0 task constrain_cores
    [ "$CPUS" -gt "$NPROC" ] && over=1
    if [ "$CGROUP" = 1 ]; then
        # Claiming more CPUs than exist (config_overrides): cpuset/affinity
        # binding would name CPUs that are not there, so leave cores alone.
        if [ $over = 1 ]; then task=task/cgroup; constrain_cores=no
        else task=task/cgroup,task/affinity; constrain_cores=yes; fi
    fi
    {
        echo "# generated by tests/slurm/lab.sh -- a throwaway gpualert test cluster"
        echo "ClusterName=ga$PORT"
        echo "SlurmctldHost=$HOST(127.0.0.1)"
        echo "SlurmctldPort=$PORT"
        echo "SlurmdPort=$((PORT + 1))"
        echo "SlurmUser=slurm"
        echo "SlurmdUser=root"
        echo "AuthType=auth/munge"
        echo "CredType=cred/munge"
        [ "$MUNGE_MODE" = own ] && echo "AuthInfo=socket=$OWN_SOCK"
        echo "StateSaveLocation=$LAB/state"
        echo "SlurmdSpoolDir=$LAB/spool/%n"
        echo "SlurmctldPidFile=$CTLD_PIDFILE"
        echo "SlurmdPidFile=$LAB/run/slurmd-%n.pid"
        echo "SlurmctldLogFile=$LAB/log/slurmctld.log"
        echo "SlurmdLogFile=$LAB/log/slurmd-%n.log"
        echo "SlurmctldDebug=info"
        echo "SlurmdDebug=info"
        echo "PlugStackConfig=$LAB/etc/plugstack.conf"
        if [ "$CGROUP" = 1 ]; then
            echo "ProctrackType=proctrack/cgroup"
            echo "TaskPlugin=$task"
            echo "JobAcctGatherType=jobacct_gather/cgroup"
            echo "JobAcctGatherFrequency=task=5"
        else
            echo "ProctrackType=proctrack/linuxproc"
            echo "TaskPlugin=task/none"
            echo "JobAcctGatherType=jobacct_gather/linux"
            echo "JobAcctGatherParams=OverMemoryKill"
            echo "JobAcctGatherFrequency=task=1"
        fi
        [ $over = 1 ] && echo "SlurmdParameters=config_overrides"
        echo "SelectType=select/cons_tres"
        echo "SelectTypeParameters=CR_Core_Memory"
        echo "DefMemPerCPU=500"
        echo "MpiDefault=none"
        echo "SchedulerType=sched/backfill"
        echo "SchedulerParameters=batch_sched_delay=0"
        echo "AccountingStorageType=accounting_storage/none"
        echo "JobCompType=jobcomp/filetxt"
        echo "JobCompLoc=$LAB/log/jobcomp.txt"
        echo "ReturnToService=2"
        echo "SlurmdTimeout=$SLURMD_TIMEOUT"
        echo "KillWait=5"
        echo "OverTimeLimit=0"
        echo "MinJobAge=600"
        echo "InactiveLimit=0"
        echo "PreemptType=preempt/partition_prio"
        echo "PreemptMode=CANCEL"
        for i in $(seq 1 "$NODES"); do
            echo "NodeName=$(node_name "$i") NodeHostname=$HOST NodeAddr=127.0.0.1 Port=$((PORT + i)) CPUs=$CPUS RealMemory=$MEM State=UNKNOWN"
        done
        echo "PartitionName=low Nodes=ALL Default=YES MaxTime=INFINITE State=UP PriorityTier=1"
        echo "PartitionName=high Nodes=ALL MaxTime=INFINITE State=UP PriorityTier=10"
    } >"$CONF.tmp"
    mv "$CONF.tmp" "$CONF"
    cat >"$LAB/etc/cgroup.conf" <<EOF
# generated by tests/slurm/lab.sh
CgroupPlugin=cgroup/v1
CgroupMountpoint=/sys/fs/cgroup
ConstrainCores=${constrain_cores:-no}
ConstrainRAMSpace=yes
ConstrainSwapSpace=no
ConstrainDevices=no
EOF
    echo "include $LAB/etc/plugstack.conf.d/*.conf" >"$LAB/etc/plugstack.conf"
    cat >"$LAB/etc/lab.env" <<EOF
GPUALERT_LAB_PORT=$PORT
GPUALERT_LAB_NODES=$NODES
GPUALERT_LAB_CGROUP=$CGROUP
GPUALERT_LAB_USER=$LABUSER
GPUALERT_LAB_MUNGE=$MUNGE_MODE
EOF
    chmod 644 "$CONF" "$LAB/etc/cgroup.conf" "$LAB/etc/plugstack.conf"
}

# -------------------------------------------------------------------- munge
munge_works() { munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; }

munge_key() {
    if [ "$MUNGE_MODE" = own ] && [ "$MUNGE_KEY" != /etc/munge/munge.key ]; then
        [ -r "$MUNGE_KEY" ] || die "GPUALERT_LAB_MUNGE_KEY=$MUNGE_KEY is not readable"
        return 0
    fi
    if [ ! -s /etc/munge/munge.key ]; then
        say "creating /etc/munge/munge.key"
        install -d -o munge -g munge -m 0700 /etc/munge
        if command -v mungekey >/dev/null; then mungekey -c -k /etc/munge/munge.key
        elif command -v create-munge-key >/dev/null; then create-munge-key
        else dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none; fi
        chown munge:munge /etc/munge/munge.key; chmod 0600 /etc/munge/munge.key
    fi
}

own_munge_up() {
    local i=0
    install -d -o munge -g munge -m 0755 "$OWN_MUNGE"
    runuser -u munge -- $SBIN/munged --socket="$OWN_SOCK" --pid-file="$OWN_MUNGE/munged.pid" \
        --log-file="$OWN_MUNGE/munged.log" --seed-file="$OWN_MUNGE/munged.seed" \
        --key-file="$MUNGE_KEY" 9>&-
    until munge -S "$OWN_SOCK" -n </dev/null 2>/dev/null | unmunge -S "$OWN_SOCK" >/dev/null 2>&1; do
        i=$((i + 1))
        [ $i -gt 200 ] && die "the lab's munged does not answer after 10 s (see $OWN_MUNGE/munged.log)"
        sleep 0.05
    done
}

munge_up() {   # system munged; called with $LOCK held
    local t
    if ! munge_works; then
        install -d -o munge -g munge -m 0755 /run/munge
        # 9>&-: the daemon must not inherit (and so hold) the lock
        runuser -u munge -- $SBIN/munged 9>&-     # daemonizes; pid in $MUNGE_PIDFILE
        : >"$MUNGE_MARK"
        say "started munged (pid $(cat $MUNGE_PIDFILE 2>/dev/null || echo ?))"
    fi
    t=$(now)
    until munge_works; do
        older "$t" 10 && die "munged does not answer after 10 s (see /var/log/munge/munged.log)"
        sleep 0.05
    done
}

# Registrations: $REG/lab-<port> holds "<lab dir> <pid of the starting lab.sh> <port> <nodes>".
# A lab counts as alive while its slurmctld runs or its start is in progress.
reg_alive() {   # file
    local d p _po _n
    read -r d p _po _n 2>/dev/null <"$1" || return 1
    [ -n "$d" ] || return 1
    pid_alive "$d/run/slurmctld.pid" || { [ -n "$p" ] && alive "$p"; }
}

other_labs_alive() {
    local f
    for f in "$REG"/lab-*; do
        [ -e "$f" ] || continue
        [ "$f" = "$REG/lab-$PORT" ] && continue
        reg_alive "$f" && return 0
        rm -f "$f"     # stale registration of a lab that is gone
    done
    return 1
}

# Claim ports $PORT..$PORT+$NODES for this lab (called with $LOCK held, so two
# labs starting at the same moment cannot both take the same ports).
claim_ports() {
    local f d p po n i
    for f in "$REG"/lab-*; do
        [ -e "$f" ] || continue
        read -r d p po n 2>/dev/null <"$f" || continue
        [ "$d" = "$LAB" ] && continue
        reg_alive "$f" || { rm -f "$f"; continue; }
        if [ -n "$po" ] && [ $((po + ${n:-2})) -ge "$PORT" ] && [ "$po" -le $((PORT + NODES)) ]; then
            die "ports $PORT..$((PORT + NODES)) overlap those of the running lab in $d ($po..$((po + ${n:-2}))); choose another GPUALERT_LAB_PORT"
        fi
    done
    for i in $(seq 0 "$NODES"); do
        if port_busy $((PORT + i)); then
            die "TCP port $((PORT + i)) on this machine is in use; choose another GPUALERT_LAB_PORT (uses $PORT..$((PORT + NODES)))"
        fi
    done
    echo "$LAB $$ $PORT $NODES" >"$REG/lab-$PORT"
}

munge_down() {  # called with $LOCK held
    local d _r
    if read -r d _r 2>/dev/null <"$REG/lab-$PORT" && [ "$d" = "$LAB" ]; then rm -f "$REG/lab-$PORT"; fi
    [ "$MUNGE_MODE" = system ] || return 0   # this lab used its own munged
    [ -e "$MUNGE_MARK" ] || return 0          # a lab did not start it: not ours to stop
    other_labs_alive && return 0              # another lab still uses it; it stops it later
    if pid_alive $MUNGE_PIDFILE; then
        stop_pid "$(cat $MUNGE_PIDFILE)" munged
    fi
    rm -f "$MUNGE_MARK"
}

# -------------------------------------------------------------------- processes
# Stop one pid: SIGTERM, wait up to 15 s, then SIGKILL.
stop_pid() {
    local p=$1 what=$2 t i=0
    alive "$p" || return 0
    t=$(now)
    kill -TERM "$p" 2>/dev/null || return 0
    while alive "$p"; do
        i=$((i + 1))
        if [ $i -gt 150 ]; then
            say "$what (pid $p) ignored SIGTERM for 15 s: SIGKILL"
            kill -KILL "$p" 2>/dev/null || true
            sleep 0.2
            break
        fi
        sleep 0.1
    done
    say "stopped $what (pid $p) in $(since "$t") s"
}

# This lab's daemons and their slurmstepd processes hold the lab's log files
# open ($LAB/log/slurm*.log).  Job processes carry SLURM_CONF=$CONF and
# SLURM_JOB_ID in their environment (also those that escaped the job's process
# tracking, e.g. daemonized ones); with cgroups they are also found in the
# lab's cgroups.
lab_daemon_pids() {
    local e
    find /proc/[0-9]*/fd -maxdepth 1 -lname "$LAB/log/slurm*.log" 2>/dev/null | cut -d/ -f3
    for e in $(grep -lzxF "SLURM_CONF=$CONF" /proc/[0-9]*/environ 2>/dev/null); do
        grep -qz '^SLURM_JOB_ID=' "$e" 2>/dev/null && echo "$e" | cut -d/ -f3
    done
    return 0
}

lab_cgroup_roots() {
    local i c
    for i in $(seq 1 "$NODES"); do
        for c in /sys/fs/cgroup/*/slurm_"$(node_name "$i")"; do
            [ -d "$c" ] && echo "$c"
        done
    done
    return 0
}

lab_cgroup_pids() {
    local r
    for r in $(lab_cgroup_roots); do
        find "$r" -name cgroup.procs -exec cat {} + 2>/dev/null || true
    done | sort -u
}

# -------------------------------------------------------------------- start
# The probe job runs in $LAB/ready, not in the caller's directory: with
# gpualert loaded (its plugstack line survives a restart) the job writes its
# durable log into its working directory.
wait_ready() {
    local t0=$1 t err=$LAB/log/ready-srun.err
    t=$(now)
    until timeout 20 srun -Q --immediate=5 -N "$NODES" -p low \
        --chdir="$LAB/ready" true 2>"$err"; do
        if older "$t" "$READY_TIMEOUT"; then
            echo "lab.sh: error: 'srun -N $NODES true' did not succeed within ${READY_TIMEOUT} s" >&2
            echo "--- last srun error:" >&2; tail -n 5 "$err" >&2 || true
            for f in "$LAB"/log/slurmctld.log "$LAB"/log/slurmd-*.log "$OWN_MUNGE/munged.log"; do
                [ -e "$f" ] || continue
                echo "--- tail of $f:" >&2; tail -n 25 "$f" >&2
            done
            return 1
        fi
        sleep 0.2
    done
    say "srun -N $NODES true OK   +$(since "$t0") s"
}

do_start() {
    local t0 i n running=""
    t0=$(now)
    check_prereqs
    if pid_alive "$CTLD_PIDFILE"; then
        die "a lab is already running in $LAB (slurmctld pid $(cat "$CTLD_PIDFILE")); run 'lab.sh stop' first"
    fi
    for i in $(seq 1 "$NODES"); do
        if pid_alive "$LAB/run/slurmd-$(node_name "$i").pid"; then running="$running $(node_name "$i")"; fi
    done
    [ -n "$running" ] && die "slurmd for$running still running from an earlier lab in $LAB; run 'lab.sh stop' first"
    if pid_alive "$OWN_MUNGE/munged.pid"; then stop_pid "$(cat "$OWN_MUNGE/munged.pid")" "stale munged (lab)"; fi

    # test user
    if ! getent passwd "$LABUSER" >/dev/null; then
        useradd -m -s /bin/bash "$LABUSER"
        say "created user $LABUSER"
    fi

    # directories: a fresh state every start (job ids start at 1, start is fast)
    install -d -m 0755 "$LAB" "$LAB/etc" "$LAB/etc/plugstack.conf.d"
    rm -rf "$LAB/state" "$LAB/spool" "$LAB/log" "$LAB/run" "$LAB/ready" "$OWN_MUNGE"
    install -d -o slurm -g slurm -m 0755 "$LAB/state" "$LAB/log" "$LAB/run"
    install -d -m 0755 "$LAB/spool" "$LAB/ready"
    for i in $(seq 1 "$NODES"); do install -d -m 0755 "$LAB/spool/$(node_name "$i")"; done
    install -d -o "$LABUSER" -g "$(id -gn "$LABUSER")" -m 0755 "$LAB/jobs"
    for n in slurm "$LABUSER"; do
        runuser -u "$n" -- test -x "$LAB/etc" ||
            die "user $n cannot reach $LAB (a parent directory is not searchable); use another GPUALERT_LAB"
    done
    write_configs

    install -d -m 0755 "$REG"
    munge_key
    (
        flock 9
        claim_ports
        [ "$MUNGE_MODE" = system ] && munge_up
        true
    ) 9>"$LOCK"
    [ "$MUNGE_MODE" = own ] && own_munge_up
    say "munge ready             +$(since "$t0") s"

    export SLURM_CONF=$CONF
    $SBIN/slurmctld -f "$CONF" 9>&-   # daemonizes; runs as SlurmUser
    i=0
    until scontrol ping 2>/dev/null | grep -q 'is UP'; do
        i=$((i + 1))
        if [ $i -gt 300 ]; then
            tail -n 30 "$LAB/log/slurmctld.log" >&2 || true
            do_stop >/dev/null 2>&1 || true
            die "slurmctld did not come up within 15 s (log tail above)"
        fi
        sleep 0.05
    done
    say "slurmctld up            +$(since "$t0") s"
    for i in $(seq 1 "$NODES"); do
        $SBIN/slurmd -f "$CONF" -N "$(node_name "$i")"   # daemonizes
    done
    say "slurmd started ($(for i in $(seq 1 "$NODES"); do printf '%s ' "$(node_name "$i")"; done))+$(since "$t0") s"
    if ! wait_ready "$t0"; then
        do_stop >/dev/null 2>&1 || true
        exit 1
    fi
    say "lab ready in $(since "$t0") s: eval \"\$($0 env)\" to use it"
}

# -------------------------------------------------------------------- stop
do_stop() {
    local t0 f p i n left
    t0=$(now)
    [ "$(id -u)" = 0 ] || die "must run as root"
    [ -e "$CONF" ] || { say "no lab in $LAB (no $CONF)"; return 0; }
    export SLURM_CONF=$CONF
    if pid_alive "$CTLD_PIDFILE"; then
        if [ -n "$(squeue -h -o %A 2>/dev/null)" ]; then
            scancel --quiet $(squeue -h -o %A) 2>/dev/null || true
            # KillWait=5: tasks get SIGTERM, then SIGKILL 5 s later
            i=0
            while [ -n "$(squeue -h -o %A 2>/dev/null)" ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
            [ $i -ge 200 ] && say "jobs still listed after 20 s: $(squeue -h -o '%A:%T' 2>/dev/null | tr '\n' ' ')"
            say "cancelled jobs           +$(since "$t0") s"
        fi
    fi
    for f in "$LAB"/run/slurmd-*.pid; do
        [ -e "$f" ] || continue
        pid_alive "$f" && stop_pid "$(cat "$f")" "slurmd $(basename "$f" .pid | sed 's/^slurmd-//')"
        rm -f "$f"
    done
    if pid_alive "$CTLD_PIDFILE"; then stop_pid "$(cat "$CTLD_PIDFILE")" slurmctld; fi
    rm -f "$CTLD_PIDFILE"

    # Leftovers: slurmstepd (outlives slurmd by design) and job processes.
    left=$( { lab_daemon_pids; [ "$CGROUP" = 1 ] && lab_cgroup_pids; true; } | grep -vx "$$" | sort -u)
    if [ -n "$left" ]; then
        say "terminating leftover processes: $(echo $left)"
        kill -TERM $left 2>/dev/null || true
        for i in $(seq 1 50); do
            n=""; for p in $left; do alive "$p" && n="$n $p"; done
            [ -z "$n" ] && break
            sleep 0.1
        done
        [ -n "$n" ] && { say "SIGKILL:$n"; kill -KILL $n 2>/dev/null || true; sleep 0.2; }
    fi
    # Empty job cgroups left behind (e.g. by processes forked from spank_exit).
    for f in $(lab_cgroup_roots); do
        find "$f" -depth -type d -exec rmdir {} \; 2>/dev/null || true
        [ -d "$f" ] && say "could not remove cgroup $f (processes still inside?)"
    done

    if pid_alive "$OWN_MUNGE/munged.pid"; then stop_pid "$(cat "$OWN_MUNGE/munged.pid")" "munged (lab)"; fi
    if [ -d "$REG" ]; then
        ( flock 9; munge_down ) 9>"$LOCK"
    fi
    say "lab stopped in $(since "$t0") s"
}

# -------------------------------------------------------------------- status / env
do_status() {
    local f
    echo "lab: $LAB  port: $PORT  nodes: $NODES  cgroup: $CGROUP"
    for f in $MUNGE_PIDFILE "$OWN_MUNGE/munged.pid" "$CTLD_PIDFILE" "$LAB"/run/slurmd-*.pid; do
        [ -s "$f" ] || continue
        ps -o pid=,user=,etime=,cmd= -p "$(cat "$f")" || echo "(stale pid file $f)"
    done
    if pid_alive "$CTLD_PIDFILE"; then
        SLURM_CONF=$CONF sinfo
        SLURM_CONF=$CONF squeue
    else
        echo "slurmctld is not running"
        return 1
    fi
}

do_env() {
    echo "export SLURM_CONF=$CONF"
    echo "export GPUALERT_LAB=$LAB"
    echo "export GPUALERT_LAB_PORT=$PORT"
    echo "export GPUALERT_LAB_NODES=$NODES"
    echo "export GPUALERT_LAB_CGROUP=$CGROUP"
    echo "export GPUALERT_LAB_USER=$LABUSER"
    echo "export GPUALERT_LAB_MUNGE=$MUNGE_MODE"
    echo "export GPUALERT_LAB_JOBS=$LAB/jobs"
}

# gpualert SO SMTP_PORT [KEY = VALUE]...: load gpualert.so into the lab,
# as an admin would: the plugin (a new inode, never overwritten in place),
# gpualert.conf with a spool in the lab and mail to the owner at
# localhost through 127.0.0.1:SMTP_PORT (extra lines go to [mail]), and
# the plugstack line.  Removing that line turns the plugin off again.
do_gpualert() {
    local so=${1:?usage: $0 gpualert SO SMTP_PORT [KEY = VALUE]...}
    local port=${2:?usage: $0 gpualert SO SMTP_PORT [KEY = VALUE]...}
    shift 2
    rm -rf "$LAB/gaspool"
    install -d -m 0755 "$LAB/gaspool"
    install -m 0755 "$so" "$LAB/gpualert.so"
    {
        printf '[general]\ndefault_mode = log\nspool_dir = %s\n' "$LAB/gaspool"
        printf '[recipients]\nowner_domain = localhost\n'
        printf '[mail]\nsmtp_url = smtp://127.0.0.1:%s\nfrom = gpualert@localhost\n' "$port"
        for line in "$@"; do printf '%s\n' "$line"; done
    } >"$LAB/gpualert.conf"
    chmod 644 "$LAB/gpualert.conf"
    echo "optional $LAB/gpualert.so config=$LAB/gpualert.conf" \
        >"$LAB/etc/plugstack.conf.d/gpualert.conf"
}

case "${1:-}" in
    start)  do_start ;;
    stop)   do_stop ;;
    status) do_status ;;
    env)    do_env ;;
    gpualert) shift; do_gpualert "$@" ;;
    *) echo "usage: $0 start|stop|status|env|gpualert   (see tests/slurm/README.md)" >&2; exit 2 ;;
esac
