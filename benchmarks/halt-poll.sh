# Sourced by benchmarks/run.sh and otel.sh: while they measure, an idle vCPU polls for up to
# HALT_POLL_NS (default 200000, i.e. 200 µs, the default of a KVM host's own halt polling) before it
# halts, where the guest kernel's haltpoll idle driver allows it (root); the previous value comes
# back when the script exits. With polling off (guest_halt_poll_ns=0, as some sandboxes boot) a
# vCPU halts the moment it idles, and waking it again for a server's or the client's next message
# costs tens of microseconds: a contender whose server process happens to sit on the other vCPU runs
# 3-4 times slower for seconds at a time, at random, which no pairing of rounds cancels.
# HALT_POLL_NS=keep leaves the machine as it is. The measuring programs report the value in force.
halt_poll=/sys/module/haltpoll/parameters/guest_halt_poll_ns
if [[ "${HALT_POLL_NS:-200000}" != keep && -w "$halt_poll" ]]; then
  halt_poll_before="$(cat "$halt_poll")"
  trap 'echo "$halt_poll_before" > "$halt_poll"' EXIT
  echo "${HALT_POLL_NS:-200000}" > "$halt_poll"
  echo "benchmarks: guest_halt_poll_ns ${halt_poll_before} -> $(cat "$halt_poll") while measuring"
fi
