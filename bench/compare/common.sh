# Shared by run.sh and check.sh (sourced): waiting for a server's URL and starting the stand-in.
# Expects WORK, STACK, the PIDS array and die() from the script that sources it.

# The first line a server writes to FILE that names http://…/mcp (bounded wait).
wait_url() {
    local file=$1 pid=$2 i line
    for i in $(seq 1 400); do
        line=$(grep -m1 -o 'http://[0-9.:]*/mcp' "$file" 2>/dev/null || true)
        [ -n "$line" ] && { echo "$line"; return 0; }
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    die "no address from the server (log: $(head -c 500 "$file"))"
}

# Starts the stand-in on a port of its own choosing: its pid in STACK_PID, its base URL and
# default user's token in BASE_URL and TOKEN.
start_stack() {
    local i
    "$STACK" --port 0 </dev/null >"$WORK/stack.out" 2>/dev/null &
    STACK_PID=$!
    PIDS+=("$STACK_PID")
    for i in $(seq 1 400); do
        [ "$(wc -l <"$WORK/stack.out")" -ge 2 ] && break
        kill -0 "$STACK_PID" 2>/dev/null || die "the stand-in did not start"
        sleep 0.05
    done
    BASE_URL=$(sed -n 1p "$WORK/stack.out")
    TOKEN=$(sed -n 2p "$WORK/stack.out")
    [ -n "$TOKEN" ] || die "the stand-in printed no base URL and token"
}
