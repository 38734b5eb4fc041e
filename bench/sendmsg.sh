#!/bin/sh
# What a sendmsg costs under each mode: N (default 100,000) UDP sendmsg of 16 bytes to a
# socket on 127.0.0.1, natively, under lite mode (sends stay in the kernel) and under strict
# mode (each goes to the daemon, which sends it itself). Prints microseconds per call.
#   bench/sendmsg.sh [N]        HALLPASS=path/to/hallpass (default target/release/hallpass)
set -eu
N=${1:-100000}
HP=$(realpath "${HALLPASS:-$(dirname "$0")/../target/release/hallpass}")
PROG='
import socket, sys, time
n = int(sys.argv[1])
r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); r.bind(("127.0.0.1", 0))
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
to, data = r.getsockname(), [b"x" * 16]
t = time.perf_counter()
for _ in range(n):
    s.sendmsg(data, [], 0, to)
print("%.2f" % ((time.perf_counter() - t) / n * 1e6))
'
cd "$(mktemp -d)"
"$HP" --prompt=deny -- true   # the daemon, started
for round in 1 2 3; do
    native=$(python3 -c "$PROG" "$N")
    lite=$("$HP" --prompt=deny -- python3 -c "$PROG" "$N")
    strict=$("$HP" --mode=strict --prompt=deny -- python3 -c "$PROG" "$N")
    echo "round $round: native $native us, lite $lite us, strict $strict us per sendmsg"
done
