# Sourced by the scripts that start a local server in the background (azurite.sh, oidc.sh):
# running_pid prints the pid recorded in $pid_file when that process still runs, and fails
# otherwise (no file, not a number, or the process is gone).
running_pid() {
	local pid
	[[ -f $pid_file ]] || return 1
	pid=$(<"$pid_file")
	[[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 1
	echo "$pid"
}
