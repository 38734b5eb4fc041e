#!/usr/bin/env bash
# bench/run.sh: what supervision costs, against no supervision and against the floor.
#
# Usage (from anywhere in the repository):
#   bench/run.sh                            as the current user
#   BENCH_USER=hptest bench/run.sh          as root: build and prepare as root, measure as
#                                           hptest (setpriv); create it first with
#                                           `useradd -M -s /bin/sh hptest`
#
# Environment:
#   BENCH_ROUNDS=7       paired rounds (each runs every variant once, alternating)
#   BENCH_WARMUP=1       untimed rounds first (they also start the daemon)
#   BENCH_FLOOR_SYNC=1   also run floor-sync: the floor with SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#                        (Linux 6.6; hallpassd sets it too); 0 to skip it
#   BENCH_FLOOR_READ=1   also run floor-read: floor-sync plus the reads lite mode cannot skip
#                        (the path argument and the target's cwd); 0 to skip it
#   BENCH_STRICT=1       also run strict: hallpass --mode=strict --prompt=deny; 0 to skip it
#   BENCH_NO_BUILD=1     skip `cargo build --release` (use what target/release holds)
#   BENCH_KEEP=1         keep the scratch directory (raw times in times.tsv)
#
# What it does: builds the release binaries, copies hallpass, hallpassd and hp-floor to a
# scratch directory on tmpfs (/dev/shm/hallpass-bench-PID, so a concurrent rebuild cannot
# change them mid-run), creates 20,000 files of ~100 bytes (200 dirs x 100) once, untimed, as a
# tar and as a tree, and times two workloads from a project directory (the cwd):
#   untar: tar xf files.tar -C OUT       OUT fresh and empty, inside the project
#   walk:  find TREE -type f -exec cat {} + >/dev/null     read-only: the BPF filter decides
# each under the variants native (bare), floor (tests/src/bin/hp-floor.rs: the same BPF filter,
# every notification answered CONTINUE at once), hallpass (hallpass --prompt=deny), strict
# (hallpass --mode=strict --prompt=deny: the daemon performs each write itself) and
# floor-sync (the floor with SYNC_WAKE_UP, as hallpassd sets it).
# Variants alternate within each round; OUT is deleted between runs, untimed. It prints medians,
# ratios and the added-cost ratio (hallpass - native) / (floor - native), also against
# floor-sync. See bench/README.md.
set -euo pipefail
export LC_ALL=C

ROUNDS=${BENCH_ROUNDS:-7}
WARMUP=${BENCH_WARMUP:-1}
DIRS=200
PER_DIR=100
NFILES=$((DIRS * PER_DIR))

die() {
    echo "bench: $*" >&2
    exit 1
}
say() { echo "bench: $*" >&2; }

# The daemon of this run, if any: killed by its pid file, never by name.
kill_daemon() {
    local pidfile=$1/hallpass/hallpassd.pid pid
    [[ -f $pidfile ]] || return 0
    pid=$(<"$pidfile")
    [[ $pid =~ ^[0-9]+$ ]] && kill "$pid" 2>/dev/null || true
}

# Timestamps come from $EPOCHREALTIME (bash 5): no fork inside the timed interval.
[[ -n ${EPOCHREALTIME:-} ]] || die "bash 5 or later is needed (\$EPOCHREALTIME)"

# ---------------------------------------------------------------------------------------------
# Measurement phase: runs as the benchmarking user, in the prepared scratch directory.
measure() {
    local work=$BENCH_WORK
    local bin=$work/bin
    export HOME=$work/home XDG_RUNTIME_DIR=$work/run HALLPASSD=$bin/hallpassd
    trap 'kill_daemon "$XDG_RUNTIME_DIR"' EXIT
    cd "$work/project"

    local variants=(native floor hallpass)
    [[ ${BENCH_STRICT:-1} == 1 ]] && variants+=(strict)
    [[ ${BENCH_FLOOR_SYNC:-1} == 1 ]] && variants+=(floor-sync)
    [[ ${BENCH_FLOOR_SYNC:-1} == 1 && ${BENCH_FLOOR_READ:-1} == 1 ]] && variants+=(floor-read)
    local times=$work/times.tsv
    : >"$times"

    # run_one WORKLOAD VARIANT ROUND: times one run; ROUND 0 is a warm-up, not recorded.
    run_one() {
        local w=$1 v=$2 r=$3 out=out wrap=() sync=0 read=0 t0 t1 rc=0
        case $v in
            native) ;;
            floor) wrap=("$bin/hp-floor" --) ;;
            floor-sync) wrap=("$bin/hp-floor" --) sync=1 ;;
            floor-read) wrap=("$bin/hp-floor" --) sync=1 read=1 ;;
            hallpass) wrap=("$bin/hallpass" --prompt=deny --) ;;
            strict) wrap=("$bin/hallpass" --mode=strict --prompt=deny --) ;;
        esac
        case $w in
            untar)
                rm -rf "$out"
                mkdir "$out"
                t0=$EPOCHREALTIME
                HP_FLOOR_SYNC_WAKEUP=$sync HP_FLOOR_READ=$read "${wrap[@]}" tar xf "$work/data/files.tar" -C "$out" || rc=$?
                t1=$EPOCHREALTIME
                ;;
            walk)
                t0=$EPOCHREALTIME
                HP_FLOOR_SYNC_WAKEUP=$sync HP_FLOOR_READ=$read "${wrap[@]}" find "$work/data/tree" -type f -exec cat {} + >/dev/null || rc=$?
                t1=$EPOCHREALTIME
                ;;
        esac
        ((rc == 0)) || die "$w under $v failed with status $rc"
        if [[ $w == untar ]]; then
            local n
            n=$(find "$out" -type f | wc -l)
            ((n == NFILES)) || die "untar under $v extracted $n files, not $NFILES"
            rm -rf "$out"
        fi
        local dt
        dt=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')
        if ((r > 0)); then
            printf '%s\t%s\t%d\t%s\n' "$w" "$v" "$r" "$dt" >>"$times"
        fi
        say "$(printf '%-5s %-10s %s %8.3f s' "$w" "$v" "$([[ $r == 0 ]] && echo warm-up || echo "round $r")" "$dt")"
    }

    local w v r
    for w in untar walk; do
        for ((r = 1 - WARMUP; r <= ROUNDS; r++)); do
            for v in "${variants[@]}"; do
                run_one "$w" "$v" "$((r < 1 ? 0 : r))"
            done
        done
    done

    report "$times" "${variants[@]}"
}

# report TIMES VARIANT...: the table.
report() {
    local times=$1
    shift
    echo
    echo "hallpass benchmark: $NFILES files of ~100 bytes on tmpfs, $ROUNDS rounds (+$WARMUP warm-up)"
    echo "kernel $(uname -r), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
    echo "user $(id -un) (uid $(id -u)), hallpass ${BENCH_REV:-unknown}"
    echo
    awk -F'\t' -v nfiles="$NFILES" -v order="$*" '
    function median(key,   n, i, j, t, a) {
        n = split(all[key], a, " ")
        for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
        lo[key] = a[1]; hi[key] = a[n]
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    { all[$1 SUBSEP $2] = all[$1 SUBSEP $2] " " $4 }
    END {
        nv = split(order, vs, " ")
        printf "%-6s %-11s %10s %10s %10s %10s\n", "work", "variant", "median s", "min s", "max s", "x native"
        split("untar walk", ws, " ")
        for (wi = 1; wi <= 2; wi++) {
            w = ws[wi]
            for (vi = 1; vi <= nv; vi++) {
                k = w SUBSEP vs[vi]
                m[k] = median(k)
            }
            for (vi = 1; vi <= nv; vi++) {
                k = w SUBSEP vs[vi]
                printf "%-6s %-11s %10.3f %10.3f %10.3f %10.2f\n", w, vs[vi], m[k], lo[k], hi[k], m[k] / m[w SUBSEP "native"]
            }
        }
        n = m["untar" SUBSEP "native"]; f = m["untar" SUBSEP "floor"]; h = m["untar" SUBSEP "hallpass"]
        print ""
        printf "untar: floor/native %.2f, hallpass/native %.2f\n", f / n, h / n
        printf "untar: added cost per file: floor %.1f us, hallpass %.1f us", (f - n) / nfiles * 1e6, (h - n) / nfiles * 1e6
        if (("untar" SUBSEP "floor-sync") in m)
            printf ", floor-sync %.1f us", (m["untar" SUBSEP "floor-sync"] - n) / nfiles * 1e6
        if (("untar" SUBSEP "floor-read") in m)
            printf ", floor-read %.1f us", (m["untar" SUBSEP "floor-read"] - n) / nfiles * 1e6
        print ""
        if (f > n)
            printf "untar: added-cost ratio (hallpass - native) / (floor - native) = %.2f\n", (h - n) / (f - n)
        else
            print "untar: added-cost ratio undefined (floor not slower than native: too few rounds?)"
        if (("untar" SUBSEP "floor-sync") in m) {
            fs = m["untar" SUBSEP "floor-sync"]
            if (fs > n)
                printf "untar: added-cost ratio (hallpass - native) / (floor-sync - native) = %.2f\n", (h - n) / (fs - n)
        }
        if (("untar" SUBSEP "floor-read") in m) {
            fr = m["untar" SUBSEP "floor-read"]
            if (fr > n) {
                printf "untar: added-cost ratio (floor-read - native) / (floor-sync - native) = %.2f", (fr - n) / (fs - n)
                print " (reading the path and cwd alone)"
                printf "untar: added-cost ratio (hallpass - native) / (floor-read - native) = %.2f\n", (h - n) / (fr - n)
            }
        }
        print "       (bar: <= 1.25 against the cheaper floor; hallpassd sets SYNC_WAKE_UP when it can)"
        if (("untar" SUBSEP "strict") in m) {
            st = m["untar" SUBSEP "strict"]
            printf "untar: strict/native %.2f, strict/hallpass %.2f, added cost per file: strict %.1f us\n", st / n, st / h, (st - n) / nfiles * 1e6
        }
        printf "walk:  hallpass/native %.2f\n", m["walk" SUBSEP "hallpass"] / m["walk" SUBSEP "native"]
        if (("walk" SUBSEP "strict") in m)
            printf "walk:  strict/native %.2f\n", m["walk" SUBSEP "strict"] / m["walk" SUBSEP "native"]
    }' "$times"
    echo
    echo "reproduce: BENCH_ROUNDS=$ROUNDS${BENCH_USER:+ BENCH_USER=$BENCH_USER}${BENCH_FLOOR_SYNC:+ BENCH_FLOOR_SYNC=$BENCH_FLOOR_SYNC}${BENCH_STRICT:+ BENCH_STRICT=$BENCH_STRICT} bench/run.sh"
}

if [[ ${BENCH_PHASE:-} == measure ]]; then
    measure
    exit 0
fi

# ---------------------------------------------------------------------------------------------
# Preparation phase: build, copy the binaries, create the data set.
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "BENCH_ROUNDS must be a positive integer, not '$ROUNDS'"
[[ $WARMUP =~ ^[0-9]+$ ]] || die "BENCH_WARMUP must be a number, not '$WARMUP'"
[[ -d /dev/shm && -w /dev/shm ]] || die "/dev/shm is not a writable directory"

run_as=()
if [[ -n ${BENCH_USER:-} ]]; then
    [[ $(id -u) == 0 ]] || die "BENCH_USER needs root (to switch to $BENCH_USER)"
    uid=$(id -u "$BENCH_USER") || die "no user $BENCH_USER (useradd -M -s /bin/sh $BENCH_USER)"
    gid=$(id -g "$BENCH_USER")
    run_as=(setpriv --reuid="$uid" --regid="$gid" --init-groups)
fi

if [[ ${BENCH_NO_BUILD:-0} != 1 ]]; then
    say "building (cargo build --release)"
    (cd "$repo" && cargo build --release -p hallpass-cli -p hallpassd -p hallpass-tests) >&2
fi

work=/dev/shm/hallpass-bench-$$
cleanup() {
    kill_daemon "$work/run"
    if [[ ${BENCH_KEEP:-0} == 1 ]]; then
        say "kept $work"
    else
        rm -rf "$work"
    fi
}
trap cleanup EXIT
mkdir -p "$work"/{bin,data/tree,project,home,run}
chmod 700 "$work/run"
for b in hallpass hallpassd hp-floor; do
    [[ -x $repo/target/release/$b ]] || die "missing $repo/target/release/$b (build failed?)"
    cp "$repo/target/release/$b" "$work/bin/"
done
cp "${BASH_SOURCE[0]}" "$work/run.sh"

say "creating $NFILES files (untimed)"
pad=$(printf '%088d' 0)
for ((d = 0; d < DIRS; d++)); do
    dir=$work/data/tree/d$(printf '%03d' "$d")
    mkdir "$dir"
    for ((f = 0; f < PER_DIR; f++)); do
        printf '%s %04d %04d\n' "$pad" "$d" "$f" >"$dir/f$f"
    done
done
tar cf "$work/data/files.tar" -C "$work/data/tree" .

rev=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ $rev != unknown && -n $(git -C "$repo" status --porcelain 2>/dev/null) ]]; then
    rev+=" (+ uncommitted changes)"
fi

if ((${#run_as[@]})); then
    chown -R "$uid:$gid" "$work"
    chmod 755 "$work"
fi
# An unprivileged user needs nothing from the repository: the binaries and this script are in
# $work. The measurement runs with no tty on stdin, as in CI.
BENCH_PHASE=measure BENCH_WORK=$work BENCH_REV=$rev BENCH_ROUNDS=$ROUNDS BENCH_WARMUP=$WARMUP \
    "${run_as[@]}" bash "$work/run.sh" </dev/null
