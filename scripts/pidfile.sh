# Sourced by the scripts that start a local server in the background (azurite.sh, oidc.sh),
# which set $pid_file first.
#
# write_pid PID records PID in $pid_file with the process's start time (`ps -o lstart=`), and
# running_pid prints the pid recorded there when that same process still runs: it fails when
# there is no file, no number, no start time, the process is gone, or a process of another
# start time holds the pid (a stale file whose pid was reused after the server died or the
# machine restarted: stop must not kill that process).
proc_start() { ps -o lstart= -p "$1" 2>/dev/null | tr -s ' '; }

write_pid() { echo "$1 $(proc_start "$1")" >"$pid_file"; }

running_pid() {
	local pid started
	[[ -f $pid_file ]] || return 1
	read -r pid started <"$pid_file" || true
	[[ $pid =~ ^[0-9]+$ && -n $started ]] && kill -0 "$pid" 2>/dev/null || return 1
	[[ $(proc_start "$pid") == "$started" ]] || return 1
	echo "$pid"
}
