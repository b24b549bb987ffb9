# shellcheck shell=bash
# The README's cluster recipes, run as the README writes them ("Running on
# many machines"): the Slurm array job on a one-node Slurm cluster started
# here (munged, slurmctld and slurmd as local processes with a generated
# slurm.conf, all stopped at the end, even on failure), and GNU parallel
# on the local host (`-S :`).  Either way `avtrace summary` over the
# shared directory prints exactly what `avtrace replay --all -j 1` prints.
# Skipped with the reason when the tools are not installed
# (`scripts/setup --test` installs them).  Run with tests/e2e/run.sh cluster.

# readme_recipe WHAT: the README's command for WHAT (slurm | parallel),
# with DIR and the hosts left as written.
readme_recipe() {
	local readme=$REPO/README.md cmd
	case $1 in
	slurm)
		cmd=$(awk '/^sbatch / { on = 1 } on { print; if ($0 !~ /\\$/) exit }' "$readme") ;;
	parallel)
		cmd=$(grep -E '^ls DIR/schedules .*\| parallel -S host1,host2 ' "$readme") ;;
	esac
	[ -n "$cmd" ] || fail "no $1 recipe in README.md (section 'Running on many machines')"
	printf '%s\n' "$cmd"
}

# prepare OUT: a recording of bank (short busy work, so no replay times
# out under load) with its predictions in OUT, and the
# table `avtrace replay --all -j 1` prints for a copy of it (in all.txt).
prepare() {
	local out=$1 st
	record "$out" "$REPO/examples/bin/bank" 1000
	expect_recorded "$out" 0
	avt_timed 60 predict -d "$out" >predict.out 2>&1 || fail "avtrace predict failed: $(tail -n 2 predict.out)"
	[ "$(find "$out/schedules" -name '*.sched' | wc -l)" -ge 3 ] || fail "too few schedules to spread"
	cp -r "$out" all
	avt_timed 60 replay -d all --all -j 1 >all.txt 2>all.err
	st=$?
	[ $st -le 1 ] || fail "avtrace replay --all exited $st: $(head -n 2 all.err)"
	sed 's/^/  | /' all.txt >&3
	# the avtrace of the recipes is the one under test
	mkdir -p bin
	ln -sf "$AVTRACE" bin/avtrace
	export PATH=$PWD/bin:$PATH
}

# same_summary OUT: `avtrace summary -d OUT` prints what replay --all did.
same_summary() {
	avt_timed 60 summary -d "$1" >summary.txt 2>summary.err
	sed 's/^/  | /' summary.txt >&3
	diff all.txt summary.txt >&3 ||
		fail "avtrace summary after the recipe differs from avtrace replay --all -j 1 (see log)"
	[ "$(find "$1/replays" -name '*.json' | wc -l)" -eq "$(find "$1/schedules" -name '*.sched' | wc -l)" ] ||
		fail "not every schedule has a replay result"
}

# limit: 90
t_cluster_gnu_parallel_recipe() {
	local cmd out=$PWD/shared
	command -v parallel >/dev/null 2>&1 || skip "GNU parallel is not installed (scripts/setup --test)"
	cmd=$(readme_recipe parallel) || exit
	prepare "$out"
	cmd=${cmd//DIR/$out}
	cmd=${cmd//host1,host2/:}
	echo "+ $cmd" >&3
	in_group bash -c "$cmd" >parallel.out 2>&1
	same_summary "$out"
}

# in_group CMD...: runs CMD in this test's process group and waits for it.
# Not under timeout(1), which would move it to a group of its own: the
# runner's timeout signals this group, so a hang ends here (CMD with it)
# and the EXIT trap still stops the cluster.
in_group() {
	"$@" &
	wait $!
}

# ---- a one-node Slurm cluster

SL=
SL_PIDS=()

# Stops every daemon this test started (by pid), waits for them, and
# removes their directory.  Runs on exit, also after a failure or a signal.
slurm_stop() {
	local p i alive
	[ ${#SL_PIDS[@]} -gt 0 ] || { [ -z "$SL" ] || rm -rf "$SL"; return 0; }
	kill -TERM "${SL_PIDS[@]}" 2>/dev/null
	for i in $(seq 1 30); do
		alive=0
		for p in "${SL_PIDS[@]}"; do
			kill -0 "$p" 2>/dev/null && alive=1
		done
		[ $alive = 0 ] && break
		sleep 0.1
	done
	[ $alive = 0 ] || kill -KILL "${SL_PIDS[@]}" 2>/dev/null
	wait "${SL_PIDS[@]}" 2>/dev/null
	SL_PIDS=()
	[ -z "$SL" ] || rm -rf "$SL"
}

# free_port: a TCP port nothing listens on (two in a row are asked for).
free_port() {
	local p i
	for i in $(seq 1 50); do
		p=$((20000 + (RANDOM % 20000) * 2))
		if ! (exec 9<>/dev/tcp/127.0.0.1/$p) 2>/dev/null &&
			! (exec 9<>/dev/tcp/127.0.0.1/$((p + 1))) 2>/dev/null; then
			echo "$p"
			return
		fi
	done
	fail "no free TCP port for slurmctld"
}

# slurm_start: munged, slurmctld and slurmd in the foreground of this
# test's process group (so the runner's timeout reaches them too), with
# every file in a directory of their own; waits until the node is idle.
slurm_start() {
	local host port i state
	for c in sbatch sinfo slurmctld slurmd munged; do
		command -v "$c" >/dev/null 2>&1 ||
			skip "Slurm is not installed ($c missing; scripts/setup --test installs slurm-wlm and munge)"
	done
	trap slurm_stop EXIT
	trap 'exit 143' TERM INT HUP
	# a short path: the munge socket's name must fit in sun_path
	SL=$(mktemp -d /tmp/avt-slurm.XXXXXX) || fail "mktemp failed"
	mkdir -p "$SL/munge" "$SL/state" "$SL/spool" "$SL/log"
	chmod 700 "$SL/munge"
	head -c 1024 /dev/urandom >"$SL/munge/munge.key"
	chmod 600 "$SL/munge/munge.key"
	munged --foreground --force --key-file="$SL/munge/munge.key" \
		--socket="$SL/munge/munge.sock" --pid-file="$SL/munge/munged.pid" \
		--log-file="$SL/log/munged.log" --seed-file="$SL/munge/seed" >/dev/null 2>&1 &
	SL_PIDS+=($!)
	for i in $(seq 1 50); do
		[ -S "$SL/munge/munge.sock" ] && break
		sleep 0.1
	done
	[ -S "$SL/munge/munge.sock" ] || fail "munged did not start: $(tail -n 2 "$SL/log/munged.log" 2>/dev/null)"
	host=$(hostname -s)
	port=$(free_port) || exit
	cat >"$SL/slurm.conf" <<EOF
ClusterName=avtrace
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SL/munge/munge.sock
StateSaveLocation=$SL/state
SlurmdSpoolDir=$SL/spool
SlurmctldPidFile=$SL/slurmctld.pid
SlurmdPidFile=$SL/slurmd.pid
SlurmctldLogFile=$SL/log/slurmctld.log
SlurmdLogFile=$SL/log/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
ReturnToService=2
MpiDefault=none
SwitchType=switch/none
# sbatch --wait polls every 2 s while this is at most 4 s
MinJobAge=4
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc)
PartitionName=avtrace Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
	export SLURM_CONF=$SL/slurm.conf
	echo "+ slurmctld -D; slurmd -D (SLURM_CONF=$SLURM_CONF)" >&3
	slurmctld -D -i -f "$SLURM_CONF" >"$SL/log/slurmctld.out" 2>&1 &
	SL_PIDS+=($!)
	slurmd -D -f "$SLURM_CONF" >"$SL/log/slurmd.out" 2>&1 &
	SL_PIDS+=($!)
	for i in $(seq 1 100); do
		state=$(sinfo -h -o %T 2>/dev/null)
		[ "$state" = idle ] && return 0
		sleep 0.2
	done
	fail "the Slurm node is not idle after 20 s (state '$state'): $(tail -n 2 "$SL/log/slurmctld.log" "$SL/log/slurmd.log" 2>/dev/null | tr '\n' ' ')"
}

# limit: 90
t_cluster_slurm_array_recipe() {
	local cmd out=$PWD/shared p st
	command -v sbatch >/dev/null 2>&1 || skip "Slurm is not installed (scripts/setup --test installs slurm-wlm and munge)"
	cmd=$(readme_recipe slurm) || exit
	prepare "$out"
	slurm_start
	cmd=${cmd//DIR/$out}
	echo "+ $cmd" >&3
	in_group bash -c "$cmd" >sbatch.out 2>&1
	st=$?
	sed 's/^/  | /' sbatch.out >&3
	case $st in 0 | 1 | 3) ;; *) fail "sbatch exited $st (the highest exit status of the tasks): $(tail -n 2 sbatch.out)" ;; esac
	expect_match "$(cat sbatch.out)" '^Submitted batch job [0-9]+' "sbatch's output"
	same_summary "$out"
	# every task ran on the cluster: one Slurm output file per schedule
	expect_eq "$(find . -maxdepth 1 -name 'slurm-*_*.out' | wc -l)" \
		"$(find "$out/schedules" -name '*.sched' | wc -l)" "array tasks"
	local pids=("${SL_PIDS[@]}")
	slurm_stop
	for p in "${pids[@]}"; do
		! kill -0 "$p" 2>/dev/null || fail "daemon $p still running after the cluster was stopped"
	done
}
