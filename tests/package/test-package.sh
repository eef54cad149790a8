#!/bin/bash
# SPDX-License-Identifier: MIT
# tests/package/test-package.sh [BASE_PORT]
#
# The Debian packages as an admin gets them: build them from a copy of the
# tree (dpkg-buildpackage -us -uc -b), lintian, install them on this
# machine, check the man pages, the conffiles, the service user, the spool
# and the unit; on a real Slurm lab, show that installing without enabling
# changes no job, then enable the INSTALLED plugin, run a failing
# --gpualert=email job and deliver it with the INSTALLED sender running as
# the service user to a real SMTP server; upgrade to a rebuilt version and
# check the site's edits are kept; purge.  Prints TAP.  Root only: it
# installs and purges packages on this machine.
set -u
BASE=${1:-18400}
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
LABSH=$SRC/tests/slurm/lab.sh
SINK=$SRC/tests/demo/mailsink.py
PKGS="gpualert gpualert-spank gpualert-common"
[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP needs root"; exit 77; }
for t in dpkg-buildpackage dh lintian scdoc slurmctld; do
	command -v "$t" >/dev/null || { echo "1..0 # SKIP $t not installed (tests/install-deps.sh)"; exit 77; }
done
/usr/bin/python3 -c 'import aiosmtpd' 2>/dev/null ||
	{ echo "1..0 # SKIP python3-aiosmtpd not installed"; exit 77; }
for p in $PKGS; do
	if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q installed; then
		echo "1..0 # SKIP package $p is installed on this machine; the test would purge it"
		exit 77
	fi
done

ROOT=$(mktemp -d /tmp/ga-pkg.XXXXXX)
chmod 755 "$ROOT"
L=$ROOT/lab
SMTP_PORT=$((BASE + 10))
MAIL=$ROOT/mail
sink=
cleanup() {
	[ -z "$sink" ] || kill "$sink" 2>/dev/null
	GPUALERT_LAB=$L "$LABSH" stop >/dev/null 2>&1
	DEBIAN_FRONTEND=noninteractive apt-get purge -y -q $PKGS >/dev/null 2>&1
	[ -n "${KEEP:-}" ] || rm -rf "$ROOT"
}
trap cleanup EXIT
. "$SRC/tests/tap.sh"
show() { sed 's/^/#   /' "$@" | tail -40; }

# 1. Build from a copy of the tree (tracked and new files, not build dirs).
copy_tree() {   # $1 = destination
	mkdir -p "$1"
	(cd "$SRC" && git ls-files -z -co --exclude-standard |
		while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
		tar --null -T - -cf -) | tar -C "$1" -xf -
}
build() {       # $1 = tree; the .debs land in its parent
	(cd "$1" && dpkg-buildpackage -us -uc -b) >"$1.build.log" 2>&1
}
copy_tree "$ROOT/v1/src"
if build "$ROOT/v1/src"; then ok "dpkg-buildpackage -us -uc -b builds the packages"
else nok "dpkg-buildpackage failed"; show "$ROOT/v1/src.build.log"; echo "1..$tap_n"; exit 1; fi
changes=$(ls "$ROOT"/v1/*.changes)
lintian "$changes" >"$ROOT/lintian.log" 2>&1
check "lintian: 0 errors" [ "$(grep -c '^E: ' "$ROOT/lintian.log")" = 0 ]
check "lintian: 0 warnings (the rest is overridden with a reason in debian/)" \
	[ "$(grep -c '^W: ' "$ROOT/lintian.log")" = 0 ]
grep -E '^[EW]: ' "$ROOT/lintian.log" | show /dev/stdin

# 2. Install.
debs() { ls "$1"/gpualert-common_*.deb "$1"/gpualert-spank_*.deb "$1"/gpualert_*.deb; }
# shellcheck disable=SC2046
if DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(debs "$ROOT/v1") \
	</dev/null >"$ROOT/install.log" 2>&1; then ok "apt-get install ./*.deb"
else nok "apt-get install failed"; show "$ROOT/install.log"; fi
for m in "1 gpualert" "5 gpualert.conf" "5 gpualert-rules" "8 gpualert-spank"; do
	# shellcheck disable=SC2086
	check "man page $m installed" bash -c "man -w $m >/dev/null 2>&1"
done
check "/etc/gpualert/gpualert.conf is a conffile" \
	bash -c "dpkg-query -W -f='\${Conffiles}' gpualert-common | grep -q ' /etc/gpualert/gpualert.conf '"
check "the plugstack snippet is a conffile" \
	bash -c "dpkg-query -W -f='\${Conffiles}' gpualert-spank | grep -q ' /etc/slurm/plugstack.conf.d/gpualert.conf '"
check "service user gpualert exists" bash -c "id gpualert >/dev/null"
check "spool created as 'install -d -o gpualert -g gpualert -m 0750'" \
	[ "$(stat -c '%U:%G %a' /var/spool/gpualert 2>/dev/null)" = "gpualert:gpualert 750" ]
check "the plugstack line is installed commented out" \
	bash -c "! grep -q '^[[:space:]]*optional' /etc/slurm/plugstack.conf.d/gpualert.conf"
unit=/lib/systemd/system/gpualert-send.service
check "unit: ExecStart is the installed command" grep -qx 'ExecStart=/usr/bin/gpualert send' "$unit"
if command -v systemd-analyze >/dev/null; then
	check "systemd-analyze verify passes" bash -c "systemd-analyze verify $unit >$ROOT/verify.log 2>&1"
	show "$ROOT/verify.log"
	score=$(systemd-analyze security --offline=true "$unit" 2>/dev/null |
		sed -n 's/.*Overall exposure level for .*: \([0-9.]*\).*/\1/p')
	check "systemd-analyze security: ${score:-?} (better than 5.8)" \
		awk -v s="${score:-99}" 'BEGIN { exit !(s < 5.8) }'
fi

# 3. A real lab that includes Debian's plugstack.conf.d, as slurm.conf does.
export GPUALERT_LAB=$L GPUALERT_LAB_PORT=$BASE
"$LABSH" start >"$ROOT/start.log" 2>&1 ||
	{ show "$ROOT/start.log"; echo "1..$tap_n"; exit 1; }
eval "$("$LABSH" env)"
link_plugstack() { cp /etc/slurm/plugstack.conf.d/gpualert.conf "$L/etc/plugstack.conf.d/gpualert.conf"; }
link_plugstack
cat >"$GPUALERT_LAB_JOBS/fail.sh" <<'JOB'
#!/bin/bash
/usr/bin/python3 -c '
print("epoch 0 step 1 loss 1.5", flush=True)
labels = {"cat": 0}
print(labels["horse"])
'
JOB
chown "$GPUALERT_LAB_USER" "$GPUALERT_LAB_JOBS/fail.sh"
run_job() {     # $1 = working directory (created), rest = sbatch options
	local wd=$1; shift
	install -d -o "$GPUALERT_LAB_USER" "$wd"
	runuser -u "$GPUALERT_LAB_USER" -- env SLURM_CONF="$SLURM_CONF" \
		sbatch --wait --parsable -D "$wd" -o "$wd/job.out" "$@" "$GPUALERT_LAB_JOBS/fail.sh" \
		>"$wd.sbatch" 2>&1
}
run_job "$ROOT/wd-disabled"
check "installed, not enabled: the job ran (its output is there)" grep -q "KeyError" "$ROOT/wd-disabled/job.out"
check "installed, not enabled: nothing but the job's output in its working directory" \
	[ "$(ls -A "$ROOT/wd-disabled")" = job.out ]
check "installed, not enabled: nothing spooled" [ -z "$(find /var/spool/gpualert -mindepth 1)" ]
check "installed, not enabled: --gpualert is not an option yet" \
	bash -c "! runuser -u $GPUALERT_LAB_USER -- env SLURM_CONF=$SLURM_CONF srun --gpualert=log true 2>/dev/null"

# 4. Enable, as gpualert-spank(8) says: owner_domain, the relay, the line.
# The line alone: --gpualert=email is refused at submission until
# owner_domain is set, with a message that says so.
sed -i 's/^#optional /optional /' /etc/slurm/plugstack.conf.d/gpualert.conf
link_plugstack
out=$(cd "$GPUALERT_LAB_JOBS" && runuser -u "$GPUALERT_LAB_USER" -- env SLURM_CONF="$SLURM_CONF" \
	srun --gpualert=email true 2>&1); rc=$?
check "no owner_domain: srun --gpualert=email refused (rc $rc)" [ "$rc" != 0 ]
check "... saying what to set" grep -q "set \[recipients\] owner_domain" <<<"$out"
sed -i -e 's/^owner_domain =.*/owner_domain = localhost/' \
	-e "s|^smtp_url =.*|smtp_url = smtp://127.0.0.1:$SMTP_PORT|" \
	-e 's/^quiet_period =.*/quiet_period = 0/' /etc/gpualert/gpualert.conf
mkdir -p "$MAIL"
/usr/bin/python3 "$SINK" "$SMTP_PORT" "$MAIL" >"$ROOT/sink.log" 2>&1 &
sink=$!
for _ in $(seq 1 40); do grep -q listening "$ROOT/sink.log" && break; sleep 0.25; done
run_job "$ROOT/wd-email" --gpualert=email
job=$(grep -o '^[0-9]*' "$ROOT/wd-email.sbatch" | head -1)
check "enabled: still nothing but the job's output in its working directory (the .out is the record)" \
	[ "$(ls -A "$ROOT/wd-email")" = job.out ]
for _ in $(seq 1 20); do ls /var/spool/gpualert/new/ 2>/dev/null | grep -q . && break; sleep 0.25; done
check "enabled: the installed plugin spooled the job's report" \
	bash -c "ls /var/spool/gpualert/new/ | grep -q ."
runuser -u gpualert -- gpualert send --once --now >"$ROOT/send.log" 2>&1
check "the installed sender, run as user gpualert, delivered it" grep -q "1 delivered" "$ROOT/send.log"
show "$ROOT/send.log"
# The sink stores a message before it answers 250: no wait needed.
check "one mail at the SMTP server" [ "$(ls "$MAIL" | grep -c '\.eml$')" = 1 ]
check "addressed to the job owner" grep -q "^To: $GPUALERT_LAB_USER@localhost" "$MAIL/001.eml"
check "with the verdict for job ${job:-?}" \
	bash -c "grep '^Subject:' '$MAIL/001.eml' | grep 'job ${job:-x} ' | grep -q code_error"

# An srun step (its output is a pipe): the installed plugin starts its
# capture helper as slurmstepd's child.
install -d -o "$GPUALERT_LAB_USER" "$ROOT/wd-srun"
(cd "$ROOT/wd-srun" && runuser -u "$GPUALERT_LAB_USER" -- env SLURM_CONF="$SLURM_CONF" \
	srun --gpualert=log bash -c 'echo started; sleep 2; echo finished' >"$ROOT/srun.out" 2>&1) &
srun_pid=$!
for _ in $(seq 1 200); do grep -qs started "$ROOT/srun.out" && break; sleep 0.05; done
hparent=
for p in $(pgrep -x gpualert-helper); do hparent=$(ps -o comm= -p "$(ps -o ppid= -p "$p" | tr -d ' ')") && [ -n "$hparent" ] && break; done
wait $srun_pid
check "srun step: its capture helper is slurmstepd's child (${hparent:-none})" \
	[ "$hparent" = slurmstepd ]
check "srun step: its output reached srun" grep -qx finished "$ROOT/srun.out"

# 5. Upgrade to a rebuilt, newer version: the site's edits stay.
echo "; site edit kept across upgrades" >>/etc/gpualert/gpualert.conf
copy_tree "$ROOT/v2/src"
v2=$(dpkg-parsechangelog -l "$ROOT/v2/src/debian/changelog" -S Version)+test1
{ printf 'gpualert (%s) unstable; urgency=medium\n\n  * Rebuilt for the upgrade test.\n\n -- gpualert tests <root@localhost>  %s\n\n' \
	"$v2" "$(date -R)"; cat "$ROOT/v2/src/debian/changelog"; } >"$ROOT/v2/changelog"
mv "$ROOT/v2/changelog" "$ROOT/v2/src/debian/changelog"
if DEB_BUILD_OPTIONS=nocheck build "$ROOT/v2/src"; then ok "rebuilt as $v2"
else nok "rebuild failed"; show "$ROOT/v2/src.build.log"; fi
# shellcheck disable=SC2046
DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(debs "$ROOT/v2") </dev/null >"$ROOT/upgrade.log" 2>&1
check "upgraded to $v2" [ "$(dpkg-query -W -f='${Version}' gpualert-common)" = "$v2" ]
check "upgrade kept the edited gpualert.conf" grep -q "^; site edit kept across upgrades" /etc/gpualert/gpualert.conf
check "upgrade kept owner_domain" grep -q "^owner_domain = localhost" /etc/gpualert/gpualert.conf
check "upgrade kept the enabled plugstack line" grep -q "^optional " /etc/slurm/plugstack.conf.d/gpualert.conf
check "no .dpkg-new/.dpkg-dist left (nothing to merge)" \
	bash -c "! ls /etc/gpualert/*.dpkg-* /etc/slurm/plugstack.conf.d/*.dpkg-* 2>/dev/null | grep -q ."

# 6. Purge.
"$LABSH" stop >/dev/null 2>&1
DEBIAN_FRONTEND=noninteractive apt-get purge -y -q $PKGS >"$ROOT/purge.log" 2>&1
check "purge removes the packages" bash -c "! dpkg-query -W -f='\${Status}\n' $PKGS 2>/dev/null | grep -q installed"
check "purge removes /etc/gpualert, the plugstack snippet, the spool" \
	bash -c "[ ! -e /etc/gpualert ] && [ ! -e /etc/slurm/plugstack.conf.d/gpualert.conf ] && [ ! -e /var/spool/gpualert ]"
tap_done
