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
#   BENCH_FLOOR_STRICT=1 with strict, also run floor-strict: floor-sync with strict mode's
#                        filter (HP_FLOOR_STRICT=1), which also sends the calls through a
#                        descriptor: strict mode's round trips alone; 0 to skip it
#   BENCH_SANDLOCK=/tmp/sandlockroot/bin/sandlock
#                        a peer, sandlock-cli 0.9 (Landlock + seccomp user notification), run as
#                        `sandlock run -r / -w PROJECT -w /dev/null -- CMD`; its column is left
#                        out when this file is missing (or BENCH_SANDLOCK is empty). Install:
#                        cargo install sandlock-cli --version 0.9.0 --locked --root /tmp/sandlockroot
#   BENCH_NO_BUILD=1     skip `cargo build --release` (use what target/release holds)
#   BENCH_BIN=DIR        take hallpass, hallpassd and hp-floor from DIR instead (no build): to
#                        measure a build kept from another commit
#   BENCH_BASE=DIR       also run `base`: hallpass --prompt=deny from the hallpass and hallpassd
#                        in DIR (another build, with a daemon of its own), paired with the
#                        others in every round: a before/after under the same load
#   BENCH_BASE_MODE=strict  run `base` in that mode (--mode=strict), to compare it with strict
#   BENCH_KEEP=1         keep the scratch directory (raw times in times.tsv)
#
# What it does: builds the release binaries, copies hallpass, hallpassd and hp-floor to a
# scratch directory on tmpfs (/dev/shm/hallpass-bench-PID, so a concurrent rebuild cannot
# change them mid-run), creates 20,000 files of ~100 bytes (200 dirs x 100) once, untimed, as a
# tar and as a tree, and times three workloads from a project directory (the cwd):
#   untar: tar xf files.tar -C OUT       OUT fresh and empty, inside the project
#   rm:    rm -rf OUT                    right after the untar, under the same variant
#   walk:  find TREE -type f -exec cat {} + >/dev/null     read-only: the BPF filter decides
# and `both` (untar + rm of the same run), each under the variants native (bare), floor
# (tests/src/bin/hp-floor.rs: the same BPF filter, every notification answered CONTINUE at
# once), hallpass (hallpass --prompt=deny), strict (hallpass --mode=strict --prompt=deny: the
# daemon performs each write itself), floor-sync (the floor with SYNC_WAKE_UP, as hallpassd
# sets it), floor-read (floor-sync plus the path and cwd reads), sandlock (a peer, when
# installed) and base (another build, with BENCH_BASE). Variants alternate within each round. It prints medians, ratios and the
# added-cost ratio (hallpass - native) / (floor - native), also against floor-sync, per phase.
# See bench/README.md.
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
    trap 'kill_daemon "$XDG_RUNTIME_DIR"; kill_daemon "$BENCH_WORK/run-base"' EXIT
    cd "$work/project"

    local variants=(native floor hallpass)
    [[ ${BENCH_STRICT:-1} == 1 ]] && variants+=(strict)
    [[ ${BENCH_FLOOR_SYNC:-1} == 1 ]] && variants+=(floor-sync)
    [[ ${BENCH_FLOOR_SYNC:-1} == 1 && ${BENCH_FLOOR_READ:-1} == 1 ]] && variants+=(floor-read)
    [[ ${BENCH_STRICT:-1} == 1 && ${BENCH_FLOOR_STRICT:-1} == 1 ]] && variants+=(floor-strict)
    [[ -x $bin/sandlock ]] && variants+=(sandlock)
    [[ -x $bin/base/hallpass ]] && variants+=(base)
    local times=$work/times.tsv
    : >"$times"

    # run_one WORKLOAD VARIANT ROUND: times one run; ROUND 0 is a warm-up, not recorded.
    run_one() {
        local w=$1 v=$2 r=$3 out=out wrap=() sync=0 read=0 strict=0 t0 t1 rc=0
        case $v in
            native) ;;
            floor) wrap=("$bin/hp-floor" --) ;;
            floor-sync) wrap=("$bin/hp-floor" --) sync=1 ;;
            floor-read) wrap=("$bin/hp-floor" --) sync=1 read=1 ;;
            floor-strict) wrap=("$bin/hp-floor" --) sync=1 strict=1 ;;
            hallpass) wrap=("$bin/hallpass" --prompt=deny --) ;;
            strict) wrap=("$bin/hallpass" --mode=strict --prompt=deny --) ;;
            sandlock) wrap=("$bin/sandlock" run -r / -w "$work/project" -w /dev/null --) ;;
            base) wrap=(env XDG_RUNTIME_DIR="$work/run-base" HALLPASSD="$bin/base/hallpassd" "$bin/base/hallpass" ${BENCH_BASE_MODE:+--mode=$BENCH_BASE_MODE} --prompt=deny --) ;;
        esac
        case $w in
            untar)
                rm -rf "$out"
                mkdir "$out"
                t0=$EPOCHREALTIME
                HP_FLOOR_SYNC_WAKEUP=$sync HP_FLOOR_READ=$read HP_FLOOR_STRICT=$strict "${wrap[@]}" tar xf "$work/data/files.tar" -C "$out" || rc=$?
                t1=$EPOCHREALTIME
                ;;
            walk)
                t0=$EPOCHREALTIME
                HP_FLOOR_SYNC_WAKEUP=$sync HP_FLOOR_READ=$read HP_FLOOR_STRICT=$strict "${wrap[@]}" find "$work/data/tree" -type f -exec cat {} + >/dev/null || rc=$?
                t1=$EPOCHREALTIME
                ;;
        esac
        ((rc == 0)) || die "$w under $v failed with status $rc"
        local dt rm_dt
        dt=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')
        if [[ $w == untar ]]; then
            local n
            n=$(find "$out" -type f | wc -l)
            ((n == NFILES)) || die "untar under $v extracted $n files, not $NFILES"
            # The rm phase: the tree just extracted, removed under the same variant.
            t0=$EPOCHREALTIME
            HP_FLOOR_SYNC_WAKEUP=$sync HP_FLOOR_READ=$read HP_FLOOR_STRICT=$strict "${wrap[@]}" rm -rf "$out" || rc=$?
            t1=$EPOCHREALTIME
            ((rc == 0)) || die "rm under $v failed with status $rc"
            [[ ! -e $out ]] || die "rm -rf under $v left $out behind"
            rm_dt=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')
        fi
        if ((r > 0)); then
            printf '%s\t%s\t%d\t%s\n' "$w" "$v" "$r" "$dt" >>"$times"
            if [[ $w == untar ]]; then
                printf '%s\t%s\t%d\t%s\n' rm "$v" "$r" "$rm_dt" >>"$times"
                printf '%s\t%s\t%d\t%s\n' both "$v" "$r" \
                    "$(awk -v a="$dt" -v b="$rm_dt" 'BEGIN { printf "%.6f", a + b }')" >>"$times"
            fi
        fi
        local when
        when=$([[ $r == 0 ]] && echo warm-up || echo "round $r")
        say "$(printf '%-5s %-10s %s %8.3f s' "$w" "$v" "$when" "$dt")"
        [[ $w == untar ]] && say "$(printf '%-5s %-10s %s %8.3f s' rm "$v" "$when" "$rm_dt")"
        return 0
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

# report TIMES VARIANT...: the tables.
report() {
    local times=$1
    shift
    echo
    echo "hallpass benchmark: $NFILES files of ~100 bytes on tmpfs, $ROUNDS rounds (+$WARMUP warm-up)"
    echo "kernel $(uname -r), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
    echo "user $(id -un) (uid $(id -u)), hallpass ${BENCH_REV:-unknown}, load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo
    awk -F'\t' -v nfiles="$NFILES" -v order="$*" '
    function median(key,   n, i, j, t, a) {
        n = split(all[key], a, " ")
        for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
        lo[key] = a[1]; hi[key] = a[n]
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    function has(w, v) { return (w SUBSEP v) in m }
    function t(w, v) { return m[w SUBSEP v] }
    # The added-cost ratio of variant v against floor f on phase w, or "-".
    function ratio(w, v, f,   n) {
        n = t(w, "native")
        if (!has(w, v) || !has(w, f) || t(w, f) <= n) return "-"
        return sprintf("%.2f", (t(w, v) - n) / (t(w, f) - n))
    }
    { all[$1 SUBSEP $2] = all[$1 SUBSEP $2] " " $4 }
    END {
        nv = split(order, vs, " ")
        nw = split("untar rm both walk", ws, " ")
        printf "%-6s %-11s %10s %10s %10s %10s\n", "work", "variant", "median s", "min s", "max s", "x native"
        for (wi = 1; wi <= nw; wi++) {
            w = ws[wi]
            for (vi = 1; vi <= nv; vi++) {
                k = w SUBSEP vs[vi]
                if (k in all) m[k] = median(k)
            }
            for (vi = 1; vi <= nv; vi++) {
                k = w SUBSEP vs[vi]
                if (k in m)
                    printf "%-6s %-11s %10.3f %10.3f %10.3f %10.2f\n", w, vs[vi], m[k], lo[k], hi[k], m[k] / t(w, "native")
            }
        }

        # The phases side by side, as slowdowns (x native), then as added cost per file.
        print ""
        printf "%-11s %8s %8s %8s %8s   %s\n", "x native", "untar", "rm", "both", "walk", "added cost per file (untar, rm)"
        for (vi = 1; vi <= nv; vi++) {
            v = vs[vi]
            printf "%-11s", v
            for (wi = 1; wi <= nw; wi++)
                printf " %8.2f", t(ws[wi], v) / t(ws[wi], "native")
            printf "   %.1f us, %.1f us\n", (t("untar", v) - t("untar", "native")) / nfiles * 1e6, (t("rm", v) - t("rm", "native")) / nfiles * 1e6
        }

        # Added-cost ratios: (variant - native) / (floor - native), per phase.
        print ""
        printf "%-46s %8s %8s %8s\n", "added-cost ratio", "untar", "rm", "both"
        np = split("hallpass floor-sync|hallpass floor|floor-read floor-sync|hallpass floor-read|base floor-sync|hallpass base|strict base|strict hallpass|floor-strict hallpass|strict floor-strict|sandlock hallpass|strict sandlock", pairs, "|")
        for (pi = 1; pi <= np; pi++) {
            split(pairs[pi], pv, " ")
            if (!has("untar", pv[1]) || !has("untar", pv[2])) continue
            printf "%-46s %8s %8s %8s\n", "(" pv[1] " - native) / (" pv[2] " - native)", ratio("untar", pv[1], pv[2]), ratio("rm", pv[1], pv[2]), ratio("both", pv[1], pv[2])
        }
        print "  bars (issue 12): hallpass within 2 x floor-sync on both; strict within 2 x hallpass on both;"
        print "  the walk within 1.05 x native. (floor-strict - native) / (hallpass - native) is the"
        print "  least strict / hallpass can be: strict mode'"'"'s round trips alone, against lite mode'"'"'s all"
    }' "$times"
    echo
    echo "reproduce: BENCH_ROUNDS=$ROUNDS${BENCH_USER:+ BENCH_USER=$BENCH_USER}${BENCH_FLOOR_SYNC:+ BENCH_FLOOR_SYNC=$BENCH_FLOOR_SYNC}${BENCH_FLOOR_READ:+ BENCH_FLOOR_READ=$BENCH_FLOOR_READ}${BENCH_STRICT:+ BENCH_STRICT=$BENCH_STRICT}${BENCH_FLOOR_STRICT:+ BENCH_FLOOR_STRICT=$BENCH_FLOOR_STRICT}${BENCH_BIN:+ BENCH_BIN=$BENCH_BIN}${BENCH_BASE:+ BENCH_BASE=$BENCH_BASE}${BENCH_BASE_MODE:+ BENCH_BASE_MODE=$BENCH_BASE_MODE} bench/run.sh"
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

bindir=${BENCH_BIN:-$repo/target/release}
if [[ -z ${BENCH_BIN:-} && ${BENCH_NO_BUILD:-0} != 1 ]]; then
    say "building (cargo build --release)"
    (cd "$repo" && cargo build --release -p hallpass-cli -p hallpassd -p hallpass-tests) >&2
fi

work=/dev/shm/hallpass-bench-$$
cleanup() {
    kill_daemon "$work/run"
    kill_daemon "$work/run-base"
    if [[ ${BENCH_KEEP:-0} == 1 ]]; then
        say "kept $work"
    else
        rm -rf "$work"
    fi
}
trap cleanup EXIT
mkdir -p "$work"/{bin,data/tree,project,home,run,run-base}
chmod 700 "$work/run" "$work/run-base"
for b in hallpass hallpassd hp-floor; do
    [[ -x $bindir/$b ]] || die "missing $bindir/$b (build failed?)"
    cp "$bindir/$b" "$work/bin/"
done
cp "${BASH_SOURCE[0]}" "$work/run.sh"
if [[ -n ${BENCH_BASE:-} ]]; then
    mkdir "$work/bin/base"
    for b in hallpass hallpassd; do
        [[ -x $BENCH_BASE/$b ]] || die "missing $BENCH_BASE/$b (BENCH_BASE)"
        cp "$BENCH_BASE/$b" "$work/bin/base/"
    done
fi
sandlock=${BENCH_SANDLOCK-/tmp/sandlockroot/bin/sandlock}
if [[ -n $sandlock && -x $sandlock ]]; then
    cp "$sandlock" "$work/bin/sandlock"
else
    say "no sandlock at '${sandlock}': its column is left out (cargo install sandlock-cli --version 0.9.0 --locked --root /tmp/sandlockroot)"
fi

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
[[ -n ${BENCH_BIN:-} ]] && rev="binaries from $BENCH_BIN"
[[ -n ${BENCH_BASE:-} ]] && rev+=", base from $BENCH_BASE"

if ((${#run_as[@]})); then
    chown -R "$uid:$gid" "$work"
    chmod 755 "$work"
fi
# An unprivileged user needs nothing from the repository: the binaries and this script are in
# $work. The measurement runs with no tty on stdin, as in CI.
BENCH_PHASE=measure BENCH_WORK=$work BENCH_REV=$rev BENCH_ROUNDS=$ROUNDS BENCH_WARMUP=$WARMUP \
    BENCH_BIN=${BENCH_BIN:-} BENCH_BASE=${BENCH_BASE:-} \
    "${run_as[@]}" bash "$work/run.sh" </dev/null
