#!/bin/bash
# SPDX-License-Identifier: MIT
# tests/security/test-attacks.sh GPUALERT_SO GPUALERT_BIN [BASE_PORT]
#
# The trust boundary, attacked on a real Slurm lab with gpualert loaded:
# two unprivileged users, "gpa-attacker" and "gpa-victim", and a real SMTP
# server on loopback.  Each test passes only when the attack yields
# nothing: no mail of the victim's reaches the attacker, no report is
# merged, replaced or re-attributed, no signal reaches a process that is
# not the helper's, no output lands in a file the attacker prepared.
# Needs root, Debian's slurm packages, python3-aiosmtpd.  Prints TAP.
set -u
SO=$(realpath "$1"); BIN=$(realpath "$2"); BASE=${3:-18870}
HERE=$(cd "$(dirname "$0")" && pwd)
LABSH=$HERE/../slurm/lab.sh
. "$HERE/../slurm/lab-test.sh"
lab_test_needs

ROOT=$(mktemp -d /tmp/ga-sec.XXXXXX)
chmod 755 "$ROOT"
export GPUALERT_LAB=$ROOT/lab GPUALERT_LAB_PORT=$BASE GPUALERT_LAB_CPUS=8
SMTP_PORT=$((BASE + 5))
sink=
cleanup() {
    "$LABSH" stop >/dev/null 2>&1
    [ -n "$sink" ] && kill "$sink" 2>/dev/null
    [ -n "${KEEP:-}" ] || rm -rf "$ROOT"
}
trap cleanup EXIT
. "$HERE/../tap.sh"

for u in gpa-attacker gpa-victim; do
    id "$u" >/dev/null 2>&1 || useradd -m -s /bin/bash "$u"
done
lab_test_start
"$LABSH" gpualert "$SO" "$SMTP_PORT" '[capture]' 'keep = all' >/dev/null
L=$GPUALERT_LAB
SPOOL=$L/gaspool
lab_test_sink "$ROOT/mail"
# a shared, sticky project directory both users work in
SHARED=$ROOT/shared
install -d -m 1777 "$SHARED"
for u in gpa-attacker gpa-victim; do install -d -o $u -g $u -m 0755 "$ROOT/$u"; done

as() { local u=$1; shift; (cd "$ROOT/$u" && runuser -u "$u" -- "$@"); }
# Until no job is left, COMPLETING ones included, and every report is
# spooled: slurm_spank_exit forks the report process (gpualert-report)
# before the step can complete, and the report is in the spool when that
# process is gone.
wait_idle() {
    for i in $(seq 1 600); do
        [ -z "$(squeue -h -o %i)" ] && ! pgrep -x gpualert-report >/dev/null && return 0
        sleep 0.1
    done
    return 1
}
reports_of_uid() { grep -l "\"uid\":$(id -u $1)," $SPOOL/new/*.json 2>/dev/null; }

# ---------------------------------------------------------------- identity
# 1. An array id forged in the environment must not merge the attacker's
#    report into the victim's job, nor replace the victim's report.
vjob=$(as gpa-victim sbatch --parsable --gpualert=email -o victim.out --wrap 'echo victim-secret-data; exit 1')
wait_idle
as gpa-attacker env SLURM_ARRAY_JOB_ID="$vjob" SLURM_ARRAY_TASK_ID=9 \
    sbatch --parsable --gpualert=email -o a1.out --wrap 'echo attacker-one; exit 1' >"$ROOT/a1.jobid"
as gpa-attacker env SLURM_ARRAY_JOB_ID="$vjob" SLURM_ARRAY_TASK_ID=0 SLURM_JOB_ID="$vjob" \
    srun -J a1srun --gpualert=email bash -c 'echo attacker-two; exit 1' >/dev/null 2>&1
as gpa-attacker env SLURM_JOB_USER=gpa-victim \
    sbatch --parsable --gpualert=email -o a3.out --wrap 'echo attacker-three; exit 1' >"$ROOT/a3.jobid"
wait_idle
check "forged SLURM_ARRAY_*: no report of the attacker is keyed to the victim's job $vjob" \
    bash -c "! grep -l '\"uid\":$(id -u gpa-attacker),' $SPOOL/new/${vjob}[._]*.json 2>/dev/null | grep -q ."
check "forged SLURM_ARRAY_*: the victim's report is intact (its uid, its output)" python3 -c '
import json, sys, glob
r = [json.load(open(f)) for f in glob.glob(sys.argv[1] + "/new/" + sys.argv[2] + ".*.json")]
sys.exit(not (len(r) == 1 and r[0]["uid"] == int(sys.argv[3]) and "victim-secret-data" in json.dumps(r[0])))' \
    "$SPOOL" "$vjob" "$(id -u gpa-victim)"
check "forged SLURM_JOB_USER: the attacker's reports are the attacker's" python3 -c '
import json, sys
for f in sys.argv[2:]:
    r = json.load(open(f))
    if r["user"] != "gpa-attacker" or any("victim" in x for x in r["recipients"]):
        sys.exit(1)
sys.exit(len(sys.argv) < 4)' x $(reports_of_uid gpa-attacker)
# deliver everything: the victim's data reaches only the victim
"$BIN" send --once --now --config "$L/gpualert.conf" >"$ROOT/send.log" 2>&1
check "mail: something was delivered" bash -c "ls $ROOT/mail/*.eml >/dev/null 2>&1"
check "mail: no message to the attacker carries the victim's output" python3 -c '
import email, glob, sys
from email import policy
bad = 0
for f in glob.glob(sys.argv[1] + "/*.eml"):
    m = email.message_from_binary_file(open(f, "rb"), policy=policy.default)
    to = str(m["To"] or "") + str(m["Cc"] or "")
    text = open(f, "rb").read()
    body = b"".join(p.get_payload(decode=True) or b"" for p in m.walk() if not p.is_multipart())
    if "attacker" in to and (b"victim-secret-data" in body or b"victim-secret-data" in text):
        bad += 1
    if "victim" in to and "attacker" in to:
        bad += 1
sys.exit(bad)' "$ROOT/mail"
check "sent.log: one line per message, no forged line" bash -c \
    "! grep -v '^[^[:cntrl:]]*$' $SPOOL/sent.log 2>/dev/null | grep -q ."

# ------------------------------------------------------------- pid recycling
# 2. The job kills its capture helper and lets another user's process take
#    the pid (forced here with ns_last_pid): root must not signal it.
cat >"$ROOT/gpa-attacker/recycle.sh" <<'EOS'
#!/bin/bash
h=$(pgrep -u "$(id -u)" -x gpualert-helper | head -1)
echo "$h" >"$1/helper.pid"
kill -KILL "$h"
for i in $(seq 1 100); do [ -e "$1/victim.started" ] && break; sleep 0.1; done
echo done
EOS
chmod 755 "$ROOT/gpa-attacker/recycle.sh"
install -d -m 0777 "$ROOT/xchg"
( as gpa-attacker srun -J recycle --gpualert=log ./recycle.sh "$ROOT/xchg" >/dev/null 2>&1 ) &
srun_pid=$!
for i in $(seq 1 100); do [ -s "$ROOT/xchg/helper.pid" ] && break; sleep 0.1; done
hp=$(cat "$ROOT/xchg/helper.pid" 2>/dev/null)
vp=
if [ -n "$hp" ]; then
    for i in $(seq 1 50); do kill -0 "$hp" 2>/dev/null || break; sleep 0.05; done
    # the next pid the kernel hands out is the dead helper's
    echo $((hp - 1)) >/proc/sys/kernel/ns_last_pid
    # setpriv execs in place: no forked child takes the pid first
    setpriv --reuid=gpa-victim --regid=gpa-victim --clear-groups sleep 60 &
    for i in $(seq 1 100); do
        vp=$(pgrep -u "$(id -u gpa-victim)" -x sleep | head -1)
        [ -n "$vp" ] && break
        sleep 0.05
    done
fi
touch "$ROOT/xchg/victim.started"
wait "$srun_pid"
wait_idle   # the step's exit hook, which would signal the helper's pid, has run
if [ -n "$vp" ] && [ "$vp" = "$hp" ]; then
    check "recycled pid $vp (the helper's, now the victim's): not signalled by root" kill -0 "$vp"
else
    check "recycled pid: the victim's process (pid ${vp:-none}, helper ${hp:-none}) survives" \
        bash -c "[ -n '$vp' ] && kill -0 '$vp'"
fi
[ -n "$vp" ] && kill "$vp" 2>/dev/null

# ------------------------------------------------------------- planted logs
# 3. In a shared sticky directory the attacker prepares the next jobs' log
#    folders and files (mode 0777/0666, owned by the attacker).
next=$(( $(squeue -h -o %i -t all 2>/dev/null | sort -n | tail -1) + 0 ))
last=$(sacct -c -n -o JobID 2>/dev/null | tr -d ' ' | grep -E '^[0-9]+$' | sort -n | tail -1)
base=$(( ${last:-0} > next ? ${last:-0} : next ))
for j in $(seq $((base + 1)) $((base + 4))); do
    as gpa-attacker bash -c "mkdir -m 0777 $SHARED/gpualert-$j; chmod 0777 $SHARED/gpualert-$j
        for node in \$(hostname) $(scontrol show nodes -o | sed -n 's/^NodeName=\([^ ]*\).*/\1/p' | tr '\n' ' '); do
            for t in 0 1; do f=$SHARED/gpualert-$j/\$node.0.\$t.log; : >\$f; chmod 0666 \$f; done
        done"
done
(cd "$SHARED" && runuser -u gpa-victim -- srun -J planted --gpualert=log bash -c 'echo victim-private-output; exit 1' >/dev/null 2>&1)
wait_idle
check "planted log files: none of the attacker's files got the victim's output" \
    bash -c "! grep -rl victim-private-output $SHARED 2>/dev/null | xargs -r stat -c %U | grep -qv gpa-victim"
vlog=$(grep -rl victim-private-output $SHARED 2>/dev/null | head -1)
check "planted log files: the victim's log is a fresh file of the victim's, mode 0600 ($vlog)" \
    bash -c "[ -n '$vlog' ] && [ \"\$(stat -c %U:%a '$vlog')\" = gpa-victim:600 ]"
check "planted log files: the attacker cannot read it" \
    bash -c "[ -n '$vlog' ] && ! runuser -u gpa-attacker -- cat '$vlog' >/dev/null 2>&1"
rep=$(grep -l '"job_name":"planted"' $SPOOL/new/*.json | head -1)
check "planted log files: the report says a fresh name was used" grep -q 'fresh name' "${rep:-/dev/null}"

# ------------------------------------------------------ the job's own files
# 4. A batch job's output file is the record: gpualert opens it as the
#    user, so a job whose .out the user cannot read (mode 0200) is not
#    classified from it by root either.
as gpa-attacker sbatch --parsable --gpualert=log -o /etc/gpualert-attack.out --wrap 'echo x' >/dev/null 2>&1
wait_idle
check "an output path the user may not write is not created by gpualert" [ ! -e /etc/gpualert-attack.out ]

# ------------------------------------------------- libraries from the job
# 5. The report process (root) loads libpcre2-8 on its first rule.  A job
#    that plants a library of that name and points LD_LIBRARY_PATH and
#    LD_PRELOAD at it must not get its code run there: the planted
#    library's constructor leaves a file named after the uid that ran it,
#    and the report must still be classified with the real PCRE2.
if command -v cc >/dev/null; then
    install -d -o gpa-attacker -g gpa-attacker "$ROOT/gpa-attacker/lib"
    printf '%s\n' '#include <stdio.h>' '#include <unistd.h>' \
        '__attribute__((constructor)) static void planted(void) {' \
        '    char p[64]; snprintf(p, sizeof(p), "/tmp/ga-planted.%u", (unsigned)getuid());' \
        '    FILE *f = fopen(p, "w"); if (f) fclose(f); }' >"$ROOT/planted.c"
    rm -f /tmp/ga-planted.*
    cc -shared -fPIC -o "$ROOT/gpa-attacker/lib/libpcre2-8.so.0" "$ROOT/planted.c"
    chown gpa-attacker: "$ROOT/gpa-attacker/lib/libpcre2-8.so.0"
    as gpa-attacker env LD_LIBRARY_PATH="$ROOT/gpa-attacker/lib" \
        LD_PRELOAD="$ROOT/gpa-attacker/lib/libpcre2-8.so.0" \
        sbatch --parsable --gpualert=log -o planted.out \
        --wrap 'echo "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"; exit 1' \
        >"$ROOT/planted.jobid"
    wait_idle
    check "planted library: the job itself loaded it (the attack was live)" \
        [ -e "/tmp/ga-planted.$(id -u gpa-attacker)" ]
    check "planted library: no root process loaded it" [ ! -e /tmp/ga-planted.0 ]
    check "planted library: the report was classified with the real PCRE2 (cuda_oom)" \
        bash -c "grep -q '\"class\":\"cuda_oom\"' $SPOOL/new/$(cat "$ROOT/planted.jobid").*.json"
    rm -f /tmp/ga-planted.*
else
    check "# SKIP planted library: no C compiler to build one" true
fi

tap_done
