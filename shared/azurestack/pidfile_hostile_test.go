package azurestack_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Hostile: scripts/pidfile.sh's running_pid (azurite.sh and oidc.sh: start says "already
// running", stop kills it, azurite.sh its whole process group) trusts any live process whose
// pid is in the file. A stale pid file (the server died, the machine rebooted) whose pid was
// reused by another process names that process: start does not start the server, and stop
// kills the other process (kill -TERM -- -pid: its group). running_pid must fail for a pid
// that is not the server it started (check the command line, e.g. /proc/$pid/cmdline or
// `ps -o args=`, or keep the start time beside the pid).
func TestHostileStalePidFileNamingAnotherProcess(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	other := exec.Command("sleep", "30") // a process that is not a server the scripts started
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Process.Kill(); _, _ = other.Process.Wait() }()
	pidFile := filepath.Join(t.TempDir(), "azurite.pid")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(other.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs("../../scripts/pidfile.sh")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("bash", "-c", `pid_file="$1"; . "$2"; running_pid`, "bash", pidFile, script).Output()
	if err == nil {
		t.Fatalf("running_pid answered %q for a pid file naming an unrelated process (sleep %d): stop would kill it", strings.TrimSpace(string(out)), other.Process.Pid)
	}
	// The same process recorded by write_pid (its pid and start time) is the one running.
	out, err = exec.Command("bash", "-c", `pid_file="$1"; . "$2"; write_pid "$3"; running_pid`, "bash", pidFile, script, strconv.Itoa(other.Process.Pid)).Output()
	if err != nil || strings.TrimSpace(string(out)) != strconv.Itoa(other.Process.Pid) {
		t.Fatalf("running_pid after write_pid: %q %v, want %d", out, err, other.Process.Pid)
	}
	// A start time that is not the process's (the pid reused since) is not it.
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(other.Process.Pid)+" Thu Jan 1 00:00:00 1970\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("bash", "-c", `pid_file="$1"; . "$2"; running_pid`, "bash", pidFile, script).Output(); err == nil {
		t.Fatalf("running_pid answered %q for a pid recorded with another start time", strings.TrimSpace(string(out)))
	}
}
